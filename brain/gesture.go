package brain

import (
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// The gestures, as their challenges name them.
const (
	GestureArchive       = chain.GestureArchive
	GestureReceiptImport = "receipt_import"
	GestureRatify        = "ratify"
)

// CheckGesture is the one rule every human gesture meets, before it is
// written and whenever its commit is judged. While the brain has no
// registered passkey (keys nil or empty), the terminal's human-tty (and
// the tray's former human-ui claim) stand. Once one is registered, only a
// proof by a registered key over exactly this change does: the gesture is
// made in the tray, whatever local git config says.
func CheckGesture(keys *KeySet, gesture string, change []byte, origin string, proof *gates.Proof) error {
	if keys == nil || len(keys.Keys) == 0 {
		switch origin {
		case gates.OriginHumanTTY, gates.OriginHumanUI:
			return nil
		case gates.OriginHumanPasskey:
			return gates.Refusef(gates.HumanGestureRequired, "proof", "a passkey proof, but this brain has no registered passkey: register one in the tray first")
		}
		return gates.Refusef(gates.HumanGestureRequired, "origin", "%s is a human gesture: confirm it at a terminal, or sign it in the tray with a registered passkey", gesture)
	}
	if origin != gates.OriginHumanPasskey || proof == nil {
		return gates.Refusef(gates.HumanGestureRequired, "proof", "this brain has a registered passkey, so %s is made in the tray and signed by it; a terminal confirmation no longer counts", gesture)
	}
	key, ok := keys.Key(proof.CredentialID)
	if !ok {
		return gates.Refusef(gates.HumanGestureRequired, "proof", "the proof was made by a passkey this brain has not registered")
	}
	return gates.VerifyProof(proof, key, gates.GestureChallenge(gesture, change))
}

// GestureOfCommit reads a gesture's origin and proof from its commit's
// trailers; a proof trailer that does not decode is refused.
func GestureOfCommit(message string) (origin string, proof *gates.Proof, err error) {
	origin, _ = chain.TrailerValue(message, gates.OriginTrailer)
	if value, ok := chain.TrailerValue(message, gates.ProofTrailer); ok {
		if proof, err = gates.DecodeProof(value); err != nil {
			return "", nil, err
		}
	}
	return origin, proof, nil
}

// StoreChange is what a store gesture's proof binds: the commit it builds
// on and the tree it writes, known before the commit is (the proof is
// recorded in the commit's message).
func StoreChange(parent, tree gitstore.Hash) []byte {
	return []byte(parent.String() + "\n" + tree.String())
}

// KeysAt judges gesture commits against the key set at Head (ZeroHash: no
// key registered), read through Objects once. With History, a chain is
// read from its root, and a gesture may be older than today's keys: a
// terminal gesture passes even when a key exists now (it cannot be told
// from one made before the first key), and a proof passes when any key the
// keys chain ever held made it (a key removed since proved what it signed
// while it was held). Hooks and sync judge new commits strictly: by
// today's keys only, so a removed key proves nothing new.
type KeysAt struct {
	Objects gitstore.Objects
	Head    gitstore.Hash
	History bool

	keys   *KeySet
	ever   *KeySet // History: every key the chain held, read on first need
	err    error
	loaded bool
}

// CheckCommit judges one gesture commit (chain.Gestures).
func (k *KeysAt) CheckCommit(gesture string, change []byte, message string) error {
	if !k.loaded {
		k.keys, k.err = ReadKeys(k.Objects, k.Head)
		k.loaded = true
	}
	if k.err != nil {
		return k.err
	}
	origin, proof, err := GestureOfCommit(message)
	if err != nil {
		return err
	}
	keys := k.keys
	switch {
	case k.History && proof == nil:
		keys = nil
	case k.History:
		if k.ever == nil {
			if k.ever, err = ReadKeysEverHeld(k.Objects, k.Head); err != nil {
				return err
			}
		}
		keys = k.ever
	}
	return CheckGesture(keys, gesture, change, origin, proof)
}

// TerminalGesture is nil while a terminal may make gesture in repo (no
// passkey is registered), and otherwise the refusal the terminal's gesture
// would meet: the CLI checks it before it asks, so nobody types a
// confirmation that cannot count.
func TerminalGesture(repo *gitstore.Repo, gesture string) error {
	keys, err := (&Store{Repo: repo}).Keys()
	if err != nil {
		return err
	}
	return CheckGesture(keys, gesture, nil, gates.OriginHumanTTY, nil)
}

// Keys reads the brain's registered passkeys now; nil when none.
func (s *Store) Keys() (*KeySet, error) {
	head, _, err := s.Repo.ReadRef(KeysRef)
	if err != nil {
		return nil, err
	}
	return ReadKeys(s.Repo, head)
}

// CheckGesture checks a gesture about to be written against the brain's
// passkeys now (see CheckGesture).
func (s *Store) CheckGesture(gesture string, change []byte, origin string, proof *gates.Proof) error {
	keys, err := s.Keys()
	if err != nil {
		return err
	}
	return CheckGesture(keys, gesture, change, origin, proof)
}
