package brain

import (
	"bytes"
	"fmt"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// StoreAt is the store as it stands at Head (a commit of refs/m1nd/store,
// ZeroHash for no store), read through Objects: what the laws check a
// landed letter against, in a repository or in a git hook's quarantine.
type StoreAt struct {
	Objects gitstore.Objects
	Head    gitstore.Hash
}

// CheckLanding is the landed law's foreign key (DESIGN §7): the store at
// version (no newer than the store's head) holds, for block, a receipt
// that a human gesture imported and whose evidence is the mission's
// merge_wait candidate, byte for byte in canonical form. Anything else is
// refused landed_law.
func (st StoreAt) CheckLanding(block string, version int64, candidate *gates.Receipt) error {
	refuse := func(format string, args ...any) error {
		return gates.Refusef(gates.LandedLaw, "receipt.store_version", format, args...)
	}
	if st.Head.IsZero() {
		return refuse("this brain has no store: a landing first imports the merge_wait candidate as a receipt (a human gesture), then names that store version")
	}
	c, err := st.commitAt(version)
	if err != nil {
		return err
	}
	if c == nil {
		return refuse("the letter names store v%d, which the store has not reached; name the version the receipt import replied with", version)
	}
	body, err := st.Objects.ReadFileInTree(c.Tree, blocksDir+"/"+block+".json")
	if err != nil {
		return refuse("store v%d has no block %s to hold the landed receipt", version, gates.Echo(block))
	}
	b, err := decodeBlock(block, body)
	if err != nil {
		return refuse("store v%d: %v", version, err)
	}
	want := chain.CanonicalJSON(candidate)
	for _, r := range b.Receipts {
		if r.StoreVersion <= version && landsCandidate(r, want) {
			return nil
		}
	}
	return refuse("store v%d holds no receipt for %s that a human imported with this mission's merge_wait candidate: a landing imports exactly that candidate first", version, block)
}

// commitAt is the store commit at version, nil when version is newer than
// the head. The laws make store_version count the commits, so only the
// head's store.json is read: the rest is a walk along first parents.
func (st StoreAt) commitAt(version int64) (*gitstore.Commit, error) {
	c, err := st.Objects.ReadCommit(st.Head)
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", st.Head, err)
	}
	body, err := st.Objects.ReadFileInTree(c.Tree, StoreFile)
	var head *Snapshot
	if err == nil {
		head, err = DecodeStoreDoc(body)
	}
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", st.Head, err)
	}
	if version < 1 || version > head.StoreVersion {
		return nil, nil
	}
	for v := head.StoreVersion; v > version; v-- {
		if len(c.Parents) == 0 {
			return nil, nil
		}
		h := c.Parents[0]
		if c, err = st.Objects.ReadCommit(h); err != nil {
			return nil, fmt.Errorf("store at %s: %w", h, err)
		}
	}
	return c, nil
}

// CheckLanding checks a landed letter against this brain's store as it
// stands now (see StoreAt.CheckLanding).
func (s *Store) CheckLanding(block string, version int64, candidate *gates.Receipt) error {
	head, _, err := s.Repo.ReadRef(StoreRef)
	if err != nil {
		return err
	}
	return StoreAt{Objects: s.Repo, Head: head}.CheckLanding(block, version, candidate)
}

// landsCandidate reports whether a stored receipt is a human's import of
// the candidate whose canonical bytes are want.
func landsCandidate(r StoredReceipt, want []byte) bool {
	if !gates.IsHumanOrigin(r.ImportedVia) {
		return false
	}
	got, _, err := DecodeReceipt(r.Receipt)
	return err == nil && bytes.Equal(chain.CanonicalJSON(got), want)
}

// LandingVersion finds the import that lands a mission's candidate: the
// store version at which a human imported it into block, which a landed
// letter names. ok is false when no such import is in the store now.
func (s *Store) LandingVersion(block string, candidate *gates.Receipt) (version int64, ok bool, err error) {
	snap, exists, err := s.Snapshot()
	if err != nil || !exists {
		return 0, false, err
	}
	b := snap.Block(block)
	if b == nil {
		return 0, false, nil
	}
	want := chain.CanonicalJSON(candidate)
	for _, r := range b.Receipts {
		if landsCandidate(r, want) {
			return r.StoreVersion, true, nil
		}
	}
	return 0, false, nil
}
