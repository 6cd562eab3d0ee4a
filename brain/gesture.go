package brain

import (
	"context"
	"sync"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// StoreChange is what a store gesture's proof binds: the commit it builds
// on and the tree it writes, known before the commit is (the proof is
// recorded in the commit's message).
func StoreChange(parent, tree gitstore.Hash) []byte {
	return []byte(parent.String() + "\n" + tree.String())
}

// KeysAt is the one judge of a human gesture's commit, before it is
// written and wherever it is read (post, the tray, the git hooks, a
// remote's pre-receive, sync both ways, verify): against the key set at
// Head (ZeroHash: no key was ever registered), read through Objects once.
//
// While no key was ever registered, a terminal's confirmation (human-tty)
// stands. Once one is, a gesture stands only
//   - with a proof, by a key the set holds, over exactly this change; or
//   - with a proof by a key removed since, over exactly this change, on a
//     commit that the removal anchored (made before it); or
//   - confirmed at a terminal, on a commit that the first key's
//     registration anchored (made before it).
//
// No clock is trusted: "before" is "in the history the key set recorded
// when it changed". A commit being written (doc.Commit zero) is anchored
// nowhere.
type KeysAt struct {
	Objects gitstore.Objects
	Head    gitstore.Hash
	// Strict judges commits being written (a post, a git hook, a remote's
	// pre-receive): the tray's unsigned human-ui claim of before passkeys is
	// read in history only, never on a new commit.
	Strict bool
	// RequirePasskey refuses every terminal gesture, before the first key
	// too: a team's remote (hooks install --bare --require-passkey).
	RequirePasskey bool

	mu     sync.Mutex // the judge is shared by verify's parallel walks
	keys   *KeySet
	err    error
	loaded bool
	reach  anchorReach
}

// Keys is the key set the judge holds (nil: no key was ever registered).
func (k *KeysAt) Keys() (*KeySet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.loaded {
		k.keys, k.err = ReadKeys(k.Objects, k.Head)
		k.loaded = true
	}
	return k.keys, k.err
}

// CheckCommit judges one gesture commit (chain.Gestures): doc's message
// carries the origin and proof, over change.
func (k *KeysAt) CheckCommit(doc *chain.Doc, gesture string, change []byte) error {
	keys, err := k.Keys()
	if err != nil {
		return err
	}
	message := ""
	if doc.Meta != nil {
		message = doc.Meta.Message
	}
	origin, proof, err := chain.GestureOf(message)
	if err != nil {
		return err
	}
	if proof != nil || origin == rules.OriginHumanPasskey {
		return k.checkProof(keys, doc, gesture, change, origin, proof)
	}
	switch {
	case !rules.IsHumanOrigin(origin):
		return rules.Refusef(rules.HumanGestureRequired, rules.GestureField(gesture), "%s is a human gesture: confirm it at a terminal, or sign it in the tray with a registered passkey", gesture)
	case origin == rules.OriginHumanUI && k.Strict:
		return rules.Refusef(rules.HumanGestureRequired, "origin", "M1nd-Origin: %s was the tray's unsigned claim of before passkeys: no new commit carries it; sign %s in the tray", rules.OriginHumanUI, gesture)
	case k.RequirePasskey:
		return rules.Refusef(rules.HumanGestureRequired, "origin", "this remote takes human gestures signed by a passkey only (hooks install --bare --require-passkey): a terminal's confirmation of %s does not count here", gesture)
	case keys == nil:
		return nil
	}
	ok, err := k.anchored(keys.BeforeFirstKey, doc)
	if err != nil || ok {
		return err
	}
	if at, lacking := k.lacksAnchor(keys.BeforeFirstKey, doc); lacking {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "the first passkey keeps the terminal's confirmations up to %s at %.12s, a commit this clone does not hold, so it cannot tell whether this %s came before the key: take the history first (m1nd sync), then look again", doc.Ref, at, gesture)
	}
	return rules.Refusef(rules.HumanGestureRequired, "proof", "this brain has a registered passkey, so %s is made in the tray and signed by it: a terminal's confirmation made after the first key does not count", gesture)
}

func (k *KeysAt) checkProof(keys *KeySet, doc *chain.Doc, gesture string, change []byte, origin string, proof *rules.Proof) error {
	switch {
	case origin != rules.OriginHumanPasskey || proof == nil:
		return rules.Refusef(rules.HumanGestureRequired, "proof", "a passkey's proof rides with M1nd-Origin: %s, and only with it", rules.OriginHumanPasskey)
	case keys == nil:
		return rules.Refusef(rules.HumanGestureRequired, "proof", "a passkey proof, but this brain has no registered passkey: register one in the tray first")
	}
	challenge := rules.GestureChallenge(gesture, change)
	if key, held := keys.Key(proof.CredentialID); held {
		return rules.VerifyProof(proof, key, challenge)
	}
	removed, ok := keys.RemovedKey(proof.CredentialID)
	if !ok {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "the proof was made by a passkey this brain has not registered")
	}
	if err := rules.VerifyProof(proof, rules.PublicKey{CredentialID: removed.CredentialID, PKIX: removed.PublicKey}, challenge); err != nil {
		return err
	}
	ok, err := k.anchored(removed.Anchors, doc)
	if err != nil || ok {
		return err
	}
	if at, lacking := k.lacksAnchor(removed.Anchors, doc); lacking {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "the proof was made by passkey %s, removed in key set v%d, which keeps what it signed up to %s at %.12s; this clone does not hold that commit, so it cannot tell whether this one came before the removal: take the history first (m1nd sync), then look again", rules.Echo(removed.Label), removed.RemovedIn, doc.Ref, at)
	}
	return rules.Refusef(rules.HumanGestureRequired, "proof", "the proof was made by passkey %s, removed in key set v%d: a removed key proves nothing made after its removal", rules.Echo(removed.Label), removed.RemovedIn)
}

// lacksAnchor reports whether anchors name doc's ref at a commit this
// side does not hold: then "made after" cannot be told from "not fetched
// yet", and a refusal must say which.
func (k *KeysAt) lacksAnchor(anchors Anchors, doc *chain.Doc) (string, bool) {
	at, ok := anchors[doc.Ref]
	if !ok {
		return "", false
	}
	h, err := gitstore.ParseHash(at)
	if err != nil {
		return "", false
	}
	_, err = k.Objects.ReadCommit(h)
	return at, err != nil
}

// anchored reports whether doc's commit is at or below its ref's anchor
// in anchors.
func (k *KeysAt) anchored(anchors Anchors, doc *chain.Doc) (bool, error) {
	return k.reach.anchored(k.Objects, anchors, doc)
}

// TerminalGesture is nil while a terminal may make gesture in repo (no
// passkey is registered), and otherwise the refusal the terminal's gesture
// would meet: the CLI checks it before it asks, so nobody types a
// confirmation that cannot count.
func TerminalGesture(repo *gitstore.Repo, gesture string) error {
	return (&Store{Repo: repo}).CheckCommit(GestureDoc("", rules.OriginHumanTTY, nil), gesture, nil)
}

// GestureDoc is a gesture commit about to be written on ref, as the judge
// reads it: its origin and proof trailers, no commit yet.
func GestureDoc(ref, origin string, proof *rules.Proof) *chain.Doc {
	return &chain.Doc{Ref: ref, Meta: &gitstore.Commit{Message: chain.GestureMessage(origin, proof)}}
}

// Keys reads the brain's registered passkeys now; nil when none.
func (s *Store) Keys() (*KeySet, error) {
	head, _, err := s.Repo.ReadRef(KeysRef)
	if err != nil {
		return nil, err
	}
	return ReadKeys(s.Repo, head)
}

// Judge is the gesture judge of commits written now: strict, against the
// brain's keys as they stand.
func (s *Store) Judge() (*KeysAt, error) {
	head, _, err := s.Repo.ReadRef(KeysRef)
	if err != nil {
		return nil, err
	}
	return &KeysAt{Objects: s.Repo, Head: head, Strict: true}, nil
}

// CheckCommit checks a gesture about to be written against the brain's
// passkeys now (chain.Gestures, see KeysAt).
func (s *Store) CheckCommit(doc *chain.Doc, gesture string, change []byte) error {
	judge, err := s.Judge()
	if err != nil {
		return err
	}
	return judge.CheckCommit(doc, gesture, change)
}

// Env is what this brain's own writes are judged with, as the laws judge
// them: the store and the keys as they stand now.
func (s *Store) Env() (chain.Env, error) {
	storeHead, _, err := s.Repo.ReadRef(StoreRef)
	if err != nil {
		return chain.Env{}, err
	}
	judge, err := s.Judge()
	if err != nil {
		return chain.Env{}, err
	}
	return chain.Env{RuntimeDir: s.Repo.RuntimeDir(), Landings: StoreAt{Objects: s.Repo, Head: storeHead}, Gestures: judge}, nil
}

// commitGesture writes a prepared gesture with its origin and proof,
// judged by the laws as the brain stands now.
func (s *Store) commitGesture(ctx context.Context, p *chain.Prepared, origin string, proof *rules.Proof) (gitstore.Hash, error) {
	env, err := s.Env()
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return p.Commit(ctx, origin, proof, env)
}
