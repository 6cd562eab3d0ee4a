package brain

import (
	"context"
	"errors"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// The brain's passkeys change in three ways, each written here once and
// used by the tray (and any verb after it): the first key is registered
// (RegisterFirstKey: trusted as whoever wrote it, per clone), a key is
// added or a key is removed (PrepareAddKey, PrepareRemoveKey: a gesture
// signed by a key the set holds, committed with KeyChange.Commit).

// KeyChange is a prepared change of the brain's passkeys: the set it
// builds on, the set it writes, and the one commit that writes it.
type KeyChange struct {
	Before     *KeySet
	Next       *KeySet
	Prepared   *chain.Prepared // gesture keys, over Next's canonical bytes
	Credential string          // the credential added or removed
	Label      string
	Removing   bool
}

// ErrKeyRaced is the refusal of a key change whose set moved while it was
// being signed: nothing was written.
var ErrKeyRaced = &rules.Refusal{Code: rules.StaleHead, Lesson: "the brain's passkeys changed while this change was being made: look again and make it again"}

// RegisterFirstKey writes the brain's first key set: key alone, and the
// anchors of what terminals confirmed before it (the gestures that keep
// standing once the terminal no longer counts). The one-time code that
// allows it is the caller's to check; a set that already exists is
// stale_head, nothing written.
func RegisterFirstKey(ctx context.Context, repo *gitstore.Repo, key Passkey, now time.Time) (*KeySet, error) {
	head, _, err := repo.ReadRef(KeysRef)
	if err != nil {
		return nil, err
	}
	if !head.IsZero() {
		return nil, ErrKeyRaced
	}
	anchors, err := AnchorsNow(ctx, repo, func(origin string, proof *rules.Proof) bool {
		return proof == nil && rules.IsHumanOrigin(origin)
	})
	if err != nil {
		return nil, err
	}
	set := &KeySet{Schema: KeysSchema, Version: 1, Keys: []Passkey{key}, BeforeFirstKey: anchors}
	if _, err := DecodeKeySet(set.Canonical()); err != nil {
		return nil, err
	}
	c := chain.Chain{Repo: repo, Kind: KeysKind, Ref: KeysRef}
	_, err = c.Append(ctx, gitstore.ZeroHash, set.Canonical(), chain.Commit{
		Agent: rules.HumanName, When: now.UTC(), Doc: KeysCommit{Set: set, Verb: KeysRegister, Label: key.Label},
	})
	if errors.Is(err, chain.ErrLostRace) {
		return nil, ErrKeyRaced
	}
	if err != nil {
		return nil, err
	}
	return set, nil
}

// currentKeys reads the key set a change builds on; a brain with none has
// no key to sign a change with.
func currentKeys(repo *gitstore.Repo) (gitstore.Hash, *KeySet, error) {
	head, _, err := repo.ReadRef(KeysRef)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	before, err := ReadKeys(repo, head)
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	if before == nil || len(before.Keys) == 0 {
		return gitstore.ZeroHash, nil, rules.Refusef(rules.HumanGestureRequired, "proof", "register a passkey first (m1nd serve prints a one-time code): a key change is signed by a key the brain holds")
	}
	return head, before, nil
}

// PrepareAddKey prepares the key set with key added, to be signed by a key
// the brain holds. A credential the brain holds or held is refused.
func PrepareAddKey(repo *gitstore.Repo, key Passkey, now time.Time) (*KeyChange, error) {
	head, before, err := currentKeys(repo)
	if err != nil {
		return nil, err
	}
	_, held := before.Key(key.CredentialID)
	_, removed := before.RemovedKey(key.CredentialID)
	if held || removed {
		return nil, rules.Refusef(rules.InvalidLetter, "credential", "this passkey is registered already, or was removed (a removed key never comes back): add one made by another authenticator")
	}
	next := before.clone()
	next.Version++
	next.Keys = append(next.Keys, key)
	return prepareKeys(repo, head, before, next, now, key.CredentialID, key.Label, false)
}

// PrepareRemoveKey prepares the key set without credentialID, which is
// kept on record with the anchors of what it proved while it was held:
// the store's head and the archives it signed. The last key is never
// removed (ErrLastKey).
func PrepareRemoveKey(ctx context.Context, repo *gitstore.Repo, credentialID string, now time.Time) (*KeyChange, error) {
	head, before, err := currentKeys(repo)
	if err != nil {
		return nil, err
	}
	next := before.clone()
	next.Version++
	next.Keys = next.Keys[:0]
	var gone *Passkey
	for _, p := range before.Keys {
		if p.CredentialID == credentialID {
			gone = &p
			continue
		}
		next.Keys = append(next.Keys, p)
	}
	if gone == nil {
		return nil, rules.Refusef(rules.InvalidLetter, "remove", "remove names a credential id this brain does not hold")
	}
	if len(next.Keys) == 0 {
		return nil, ErrLastKey
	}
	anchors, err := AnchorsNow(ctx, repo, func(_ string, proof *rules.Proof) bool {
		return proof != nil && proof.CredentialID == credentialID
	})
	if err != nil {
		return nil, err
	}
	next.Removed = append(next.Removed, RemovedKey{Passkey: *gone, RemovedIn: next.Version, Anchors: anchors})
	return prepareKeys(repo, head, before, next, now, credentialID, gone.Label, true)
}

func prepareKeys(repo *gitstore.Repo, head gitstore.Hash, before, next *KeySet, now time.Time, id, label string, removing bool) (*KeyChange, error) {
	body := next.Canonical()
	if _, err := DecodeKeySet(body); err != nil {
		return nil, err
	}
	blob, err := repo.WriteBlob(body)
	if err != nil {
		return nil, err
	}
	tree, err := repo.WriteTree([]gitstore.TreeEntry{{Name: KeysFile, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return nil, err
	}
	verb := KeysAdd
	if removing {
		verb = KeysRemove
	}
	p := &chain.Prepared{
		Chain: chain.Chain{Repo: repo, Kind: KeysKind, Ref: KeysRef}, Parent: head, Tree: tree, Gesture: rules.GestureKeys, Change: body,
		Meta: chain.Commit{Agent: rules.HumanName, When: now.UTC(), Doc: KeysCommit{Set: next, Verb: verb, Label: label}},
	}
	return &KeyChange{Before: before, Next: next, Prepared: p, Credential: id, Label: label, Removing: removing}, nil
}

// Commit writes the key change with the passkey's proof, once the law that
// judges every keys commit holds (KeysFollow: a key of the set before,
// over exactly the set written). A set that moved meanwhile is ErrKeyRaced.
func (c *KeyChange) Commit(ctx context.Context, proof *rules.Proof) (gitstore.Hash, error) {
	h, err := c.Prepared.Commit(ctx, rules.OriginHumanPasskey, proof, chain.Env{})
	if errors.Is(err, chain.ErrLostRace) {
		return gitstore.ZeroHash, ErrKeyRaced
	}
	return h, err
}

func (k *KeySet) clone() *KeySet {
	out := *k
	out.Keys = append([]Passkey{}, k.Keys...)
	out.Removed = append([]RemovedKey(nil), k.Removed...)
	return &out
}

// AnchorsNow is the brain's gesture-carrying history as it stands: the
// heads of the store and of the runner pins (a chain of gestures, each
// anchored with all before it), and each mission, live or folded, whose
// archived head (archived is terminal, so an archive is a head) was made
// in a way by accepts. What a key change records, so the laws tell what came before it
// without a clock.
func AnchorsNow(ctx context.Context, repo *gitstore.Repo, by func(origin string, proof *rules.Proof) bool) (Anchors, error) {
	anchors := Anchors{}
	for _, ref := range []string{StoreRef, PinsRef} {
		h, ok, err := repo.ReadRef(ref)
		if err != nil {
			return nil, err
		}
		if ok {
			anchors[ref] = h.String()
		}
	}
	heads, err := (&chain.Missions{Repo: repo}).HeadsRaw(ctx, chain.PhaseArchived)
	if err != nil {
		return nil, err
	}
	archived := map[string]gitstore.Hash{}
	for _, h := range heads.Missions {
		archived[h.MissionID] = h.Commit
	}
	// A folded mission is anchored as a live one.
	if err := addFolded(repo, archived, func(m chain.Folded) bool { return m.Phase == chain.PhaseArchived }); err != nil {
		return nil, err
	}
	for id, head := range archived {
		c, err := repo.ReadCommit(head)
		if err != nil {
			return nil, err
		}
		origin, proof, err := chain.GestureOf(c.Message)
		if err == nil && by(origin, proof) {
			anchors[chain.MissionRefPrefix+id] = head.String()
		}
	}
	if len(anchors) == 0 {
		return nil, nil
	}
	return anchors, nil
}
