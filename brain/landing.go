package brain

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Landing is what the import of a landing names (DESIGN §7): the mission
// it lands, the merge_wait letter whose candidate it imports, and the
// exact commits the human saw — the branch that lands and its head, the
// target branch and its head, and the tree the target will hold. It is
// stored with the receipt, in the store commit the landing's proof binds,
// and the landed letter names that import by its store version: another
// mission's import never lands this one.
type Landing struct {
	MissionID  string `json:"mission_id"`
	LetterID   string `json:"letter_id"`
	Target     string `json:"target,omitempty"`      // the branch the work lands in; absent with no work branch
	BranchHead string `json:"branch_head,omitempty"` // m1nd/<mission_id> as the human saw it
	TargetHead string `json:"target_head,omitempty"` // the target as the human saw it
	Tree       string `json:"tree,omitempty"`        // the tree the target holds once landed
}

// Check refuses a landing record that does not name a mission, a letter
// and, when it names a target, a branch and three objects.
func (l *Landing) Check() error {
	bad := func(format string, args ...any) error {
		return rules.Refusef(rules.LandedLaw, "lands", "a landing's import names "+format, args...)
	}
	if !chain.ValidMissionID(l.MissionID) || !chain.ValidLetterID(l.LetterID) {
		return bad("the mission it lands and its merge_wait letter")
	}
	if l.Target == "" {
		if l.BranchHead != "" || l.TargetHead != "" || l.Tree != "" {
			return bad("its commits only with the target they land in")
		}
		return nil
	}
	if !gitstore.ValidRefName("refs/heads/"+l.Target) || strings.HasPrefix(l.Target, "m1nd/") {
		return bad("a target branch (not m1nd/…)")
	}
	for _, h := range []string{l.BranchHead, l.TargetHead, l.Tree} {
		if _, err := gitstore.ParseHash(h); err != nil {
			return bad("the branch's head, the target's head and the tree it lands, 40 hex each")
		}
	}
	return nil
}

// LandChange is what a landing's proof binds: the landing record (mission,
// letter, target, the exact commits) and the store change of its import.
func LandChange(l *Landing, parent, tree gitstore.Hash) []byte {
	return append(append(chain.CanonicalJSON(l), '\n'), StoreChange(parent, tree)...)
}

// StoreAt is the store as it stands at Head (a commit of refs/m1nd/store,
// ZeroHash for no store), read through Objects: what the laws check a
// landed letter against, in a repository or in a git hook's quarantine.
type StoreAt struct {
	Objects gitstore.Objects
	Head    gitstore.Hash

	index *storeIndex // NewStoreAt: the commits by version, read once
}

// storeIndex is the store's commits by version, walked once from a head
// for a judge that checks many landings (verify, the views).
type storeIndex struct {
	once    sync.Once
	commits []*gitstore.Commit // commits[v-1] is store v
	err     error
}

// NewStoreAt is the store at head for many landing checks: its commits are
// read once, on the first check, and shared (safe for parallel checks).
func NewStoreAt(objs gitstore.Objects, head gitstore.Hash) *StoreAt {
	return &StoreAt{Objects: objs, Head: head, index: &storeIndex{}}
}

// CheckLanding is the landed law's foreign key (DESIGN §7): the store at
// the claim's version (no newer than the store's head) holds, for its
// block, the receipt imported at exactly that version, by a human gesture,
// for this mission and this merge_wait letter, whose evidence is the
// letter's candidate byte for byte. Anything else is refused landed_law.
func (st StoreAt) CheckLanding(claim chain.LandingClaim) error {
	refuse := func(format string, args ...any) error {
		return rules.Refusef(rules.LandedLaw, "receipt.store_version", format, args...)
	}
	version, block := claim.StoreVersion, claim.BlockID
	if st.Head.IsZero() {
		return refuse("this brain has no store: a landing first imports the merge_wait candidate as a receipt (a human gesture), then names that store version")
	}
	c, err := st.commitAt(version)
	if err != nil {
		return err
	}
	if c == nil {
		return refuse("the letter names store v%d, which the store has not reached; name the version the landing's import replied with", version)
	}
	body, err := st.Objects.ReadFileInTree(c.Tree, blocksDir+"/"+block+".json")
	if err != nil {
		return refuse("store v%d has no block %s to hold the landed receipt", version, rules.Echo(block))
	}
	b, err := decodeBlock(block, body)
	if err != nil {
		return refuse("store v%d: %v", version, err)
	}
	want := chain.CanonicalJSON(claim.Candidate)
	borrowed := ""
	for _, r := range b.Receipts {
		if r.StoreVersion != version || !landsCandidate(r, want) {
			continue
		}
		switch {
		case r.Lands == nil:
			borrowed = "an import that lands no mission (m1nd receipt import)"
		case r.Lands.MissionID != claim.MissionID:
			borrowed = "mission " + r.Lands.MissionID + "'s import"
		case r.Lands.LetterID != claim.LetterID:
			borrowed = "an import of another merge_wait letter of " + claim.MissionID
		default:
			return nil
		}
	}
	if borrowed != "" {
		return refuse("store v%d holds the same candidate, but as %s: another mission's import never lands this one; land %s itself (m1nd land, or the tray)", version, borrowed, claim.MissionID)
	}
	return refuse("store v%d holds no receipt for %s that a human imported for %s with its merge_wait candidate: a landing imports exactly that candidate, for that mission, and names that store version", version, block, claim.MissionID)
}

// commitAt is the store commit at version, nil when version is newer than
// the head. The laws make store_version count the commits, so only the
// head's store.json is read: the rest is a walk along first parents (read
// once for every check when the StoreAt was made by NewStoreAt).
func (st StoreAt) commitAt(version int64) (*gitstore.Commit, error) {
	if st.index != nil {
		st.index.once.Do(func() { st.index.commits, st.index.err = st.walk(1) })
		if st.index.err != nil {
			return nil, st.index.err
		}
		if version < 1 || version > int64(len(st.index.commits)) {
			return nil, nil
		}
		return st.index.commits[version-1], nil
	}
	commits, err := st.walk(version)
	if err != nil || version < 1 || version > int64(len(commits)) {
		return nil, err
	}
	return commits[version-1], nil
}

// walk reads the store's commits from the head back to version down (at
// least 1), indexed by version: commits[v-1] is store v, nil below down.
// A chain shorter than its versions leaves the missing ones nil (the laws
// refuse that store; they read as not reached).
func (st StoreAt) walk(down int64) ([]*gitstore.Commit, error) {
	head, err := st.Objects.ReadCommit(st.Head)
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", st.Head, err)
	}
	body, err := st.Objects.ReadFileInTree(head.Tree, StoreFile)
	var snap *Snapshot
	if err == nil {
		snap, err = DecodeStoreDoc(body)
	}
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", st.Head, err)
	}
	if snap.StoreVersion < 1 {
		return nil, nil
	}
	down = max(down, 1)
	commits := make([]*gitstore.Commit, snap.StoreVersion)
	for v, c := snap.StoreVersion, head; ; v-- {
		commits[v-1] = c
		if v <= down || len(c.Parents) == 0 {
			return commits, nil
		}
		h := c.Parents[0]
		if c, err = st.Objects.ReadCommit(h); err != nil {
			return nil, fmt.Errorf("store at %s: %w", h, err)
		}
	}
}

// CheckLanding checks a landed letter against this brain's store as it
// stands now (see StoreAt.CheckLanding).
func (s *Store) CheckLanding(claim chain.LandingClaim) error {
	head, _, err := s.Repo.ReadRef(StoreRef)
	if err != nil {
		return err
	}
	return StoreAt{Objects: s.Repo, Head: head}.CheckLanding(claim)
}

// landsCandidate reports whether a stored receipt is a human's import of
// the candidate whose canonical bytes are want.
func landsCandidate(r StoredReceipt, want []byte) bool {
	if !rules.IsHumanOrigin(r.ImportedVia) {
		return false
	}
	got, _, err := DecodeReceipt(r.Receipt)
	return err == nil && bytes.Equal(chain.CanonicalJSON(got), want)
}

// LandingImport finds the import made to land a mission's merge_wait
// letter: the newest receipt in block, of the letter's candidate, whose
// landing names the mission and the letter. ok is false when the store
// holds none: another mission's import of the same candidate is never one.
func (s *Store) LandingImport(missionID, letterID, block string, candidate *rules.Receipt) (r *StoredReceipt, ok bool, err error) {
	snap, exists, err := s.Snapshot()
	if err != nil || !exists {
		return nil, false, err
	}
	b := snap.Block(block)
	if b == nil {
		return nil, false, nil
	}
	want := chain.CanonicalJSON(candidate)
	for i := len(b.Receipts) - 1; i >= 0; i-- {
		r := b.Receipts[i]
		if r.Lands != nil && r.Lands.MissionID == missionID && r.Lands.LetterID == letterID && landsCandidate(r, want) {
			return &r, true, nil
		}
	}
	return nil, false, nil
}

// GatedTrees is what a protected target may hold (hooks install --bare
// --protect): the trees the gates of its landings tested, as the store at
// head records them — of every receipt a human imported to land a mission
// into target, the tree its candidate names (tree:…), with the landings
// that name it. The head's blocks are read, not the store's history: a
// receipt a later skeleton edit dropped no longer vouches for its tree.
// Whose gate proved each landing is the caller's to judge (the merge_wait
// letter the landing names carries its runner's signature).
func GatedTrees(objs gitstore.Objects, head gitstore.Hash, target string) (map[string][]Landing, error) {
	trees := map[string][]Landing{}
	if head.IsZero() {
		return trees, nil
	}
	c, err := objs.ReadCommit(head)
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", head, err)
	}
	top, err := objs.TreeEntries(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("store at %s: %w", head, err)
	}
	for _, e := range top {
		if e.Name != blocksDir || e.Mode != gitstore.ModeTree {
			continue
		}
		files, err := objs.TreeEntries(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("store at %s: %w", head, err)
		}
		for _, f := range files {
			id, ok := strings.CutSuffix(f.Name, ".json")
			if !ok {
				continue
			}
			body, err := objs.ReadBlob(f.Hash)
			if err != nil {
				return nil, fmt.Errorf("store at %s: %s: %w", head, f.Name, err)
			}
			b, err := decodeBlock(id, body)
			if err != nil {
				return nil, fmt.Errorf("store at %s: %w", head, err)
			}
			for _, r := range b.Receipts {
				if r.Lands == nil || r.Lands.Target != target || !rules.IsHumanOrigin(r.ImportedVia) {
					continue
				}
				if rc, _, err := DecodeReceipt(r.Receipt); err == nil {
					if _, tree := rc.Evidence.Tested(); tree != "" {
						trees[tree] = append(trees[tree], *r.Lands)
					}
				}
			}
		}
	}
	return trees, nil
}
