package brain

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// KeysRef is the ref whose commits are the brain's registered passkeys:
// the public half of what proves a human gesture. Each commit holds the
// whole set in keys.json.
const KeysRef = "refs/m1nd/keys"

// KeysFile is the one file in a keys commit's tree.
const KeysFile = "keys.json"

// KeysSchema names the key set's format.
const KeysSchema = "m1nd-passkeys-v0"

// KeySet is the brain's registered passkeys at one version.
type KeySet struct {
	Schema  string    `json:"schema"`
	Version int64     `json:"version"`
	Keys    []Passkey `json:"keys"`
}

// Passkey is one registered credential.
type Passkey struct {
	CredentialID string `json:"credential_id"` // base64url
	PublicKey    string `json:"public_key"`    // PKIX DER, base64url
	Label        string `json:"label,omitempty"`
	AddedAt      string `json:"added_at"`
}

// Canonical returns the key set's canonical bytes.
func (k *KeySet) Canonical() []byte { return chain.CanonicalJSON(k) }

// Key returns the registered key of a credential.
func (k *KeySet) Key(credentialID string) (gates.PublicKey, bool) {
	for _, p := range k.Keys {
		if p.CredentialID == credentialID {
			return gates.PublicKey{CredentialID: p.CredentialID, PKIX: p.PublicKey}, true
		}
	}
	return gates.PublicKey{}, false
}

// KeysKind is the passkey ref. The first key set holds one key, registered
// in the tray with the one-time code `m1nd serve` prints (the laws cannot
// see that code: whoever writes the first set is trusted, so register a key
// before letting agents loose). Every later set is a proven gesture: its
// commit carries a proof by a key of the set before it, over the new set;
// and it holds at least one key, so a brain that had a passkey keeps one.
var KeysKind = &chain.Kind{
	Name:    "keys",
	Prefix:  KeysRef,
	Single:  true,
	File:    KeysFile,
	Decode:  func(body []byte) (any, error) { return DecodeKeySet(body) },
	Follows: keysFollow,
	Race:    chain.RaceStale,
}

func init() { chain.Register(KeysKind) }

// KeysGesture names the gesture that changes the key set, in challenges.
const KeysGesture = "keys"

// DecodeKeySet reads a stored key set: its canonical bytes, of this schema,
// each key a credential id and a public key m1nd can verify with, no
// credential twice.
func DecodeKeySet(body []byte) (*KeySet, error) {
	k, err := chain.DecodeAs[KeySet](body, KeysFile)
	if err != nil {
		return nil, err
	}
	invalid := func(format string, args ...any) error {
		return gates.Refusef(gates.InvalidLetter, "keys", format, args...)
	}
	if k.Schema != KeysSchema {
		return nil, gates.Refusef(gates.SchemaMismatch, "schema", "%s is not %q", KeysFile, KeysSchema)
	}
	seen := map[string]bool{}
	for _, p := range k.Keys {
		id, err := base64.RawURLEncoding.DecodeString(p.CredentialID)
		if err != nil || len(id) == 0 || len(id) > 1023 || seen[p.CredentialID] {
			return nil, invalid("a key's credential_id is base64url, at most 1023 bytes, once")
		}
		seen[p.CredentialID] = true
		der, err := base64.RawURLEncoding.DecodeString(p.PublicKey)
		if err != nil {
			return nil, invalid("a key's public_key is base64url PKIX")
		}
		if _, err := x509.ParsePKIXPublicKey(der); err != nil {
			return nil, invalid("a key's public_key is not a public key m1nd can verify with")
		}
		if _, err := time.Parse(time.RFC3339, p.AddedAt); err != nil || gates.HasUnsafeText(p.Label) || len(p.Label) > 100 {
			return nil, invalid("a key has added_at (RFC 3339) and a short plain label")
		}
	}
	return k, nil
}

// keysFollow: versions count up from 1; the first set registers one key;
// every later set keeps at least one and is proven by a key of the set
// before it (KeysFollow).
func keysFollow(prev, next *chain.Judged, _ chain.Env) error {
	k := next.Value.(*KeySet)
	if prev == nil {
		if k.Version != 1 || len(k.Keys) != 1 {
			return gates.Refusef(gates.InvalidLetter, "keys", "the first key set is version 1 with the one key its registration proved")
		}
		return nil
	}
	return KeysFollow(prev.Value.(*KeySet), k, next.Body, next.Meta.Message)
}

// ErrLastKey refuses a key set after the first that holds no key: with
// none, CheckGesture would take a terminal's word again.
var ErrLastKey = gates.Refusef(gates.InvalidTransition, "keys", "a brain that had a passkey keeps one: add the new passkey before removing the old (with none, the terminal would silently land work again)")

// KeysFollow is the law of a key set after the first, whose commit message
// is message and canonical bytes body: its version adds 1, it holds at
// least one key, and the commit carries a proof, by a key of before, of
// gesture KeysGesture over body. The tray checks a change with it before
// writing; the laws judge the commit with it.
func KeysFollow(before, next *KeySet, body []byte, message string) error {
	if next.Version != before.Version+1 {
		return gates.Refusef(gates.InvalidLetter, "version", "each key set adds 1 to version: this one says %d, want %d", next.Version, before.Version+1)
	}
	if len(next.Keys) == 0 {
		return ErrLastKey
	}
	return checkProofBy(before, message, KeysGesture, body)
}

// checkProofBy checks that a commit message carries a proof, by a key of
// keys, of gesture over change.
func checkProofBy(keys *KeySet, message, gesture string, change []byte) error {
	value, ok := chain.TrailerValue(message, gates.ProofTrailer)
	if !ok {
		return gates.Refusef(gates.HumanGestureRequired, "proof", "this change is a human gesture: its commit carries %s, a passkey's assertion over it", gates.ProofTrailer)
	}
	p, err := gates.DecodeProof(value)
	if err != nil {
		return err
	}
	key, ok := keys.Key(p.CredentialID)
	if !ok {
		return gates.Refusef(gates.HumanGestureRequired, "proof", "the proof was made by a passkey this brain has not registered")
	}
	return gates.VerifyProof(p, key, gates.GestureChallenge(gesture, change))
}

// ReadKeysEverHeld reads every key the keys chain at head ever held, as
// one set (the newest registration of a credential wins); nil when no key
// was ever registered.
func ReadKeysEverHeld(objs gitstore.Objects, head gitstore.Hash) (*KeySet, error) {
	var all *KeySet
	seen := map[string]bool{}
	for h := head; !h.IsZero(); {
		c, err := objs.ReadCommit(h)
		if err != nil {
			return nil, fmt.Errorf("%s at %s: %w", KeysRef, h, err)
		}
		set, err := ReadKeys(objs, h)
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = &KeySet{Schema: set.Schema, Version: set.Version}
		}
		for _, p := range set.Keys {
			if !seen[p.CredentialID] {
				seen[p.CredentialID] = true
				all.Keys = append(all.Keys, p)
			}
		}
		h = gitstore.ZeroHash
		if len(c.Parents) > 0 {
			h = c.Parents[0]
		}
	}
	return all, nil
}

// ReadKeys reads the key set at the keys ref's head through objs; nil when
// no key was ever registered.
func ReadKeys(objs gitstore.Objects, head gitstore.Hash) (*KeySet, error) {
	if head.IsZero() {
		return nil, nil
	}
	c, err := objs.ReadCommit(head)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", KeysRef, head, err)
	}
	body, err := objs.ReadFileInTree(c.Tree, KeysFile)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", KeysRef, head, err)
	}
	return DecodeKeySet(body)
}
