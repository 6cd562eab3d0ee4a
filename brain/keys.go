package brain

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// KeysRef is the ref whose commits are the brain's registered passkeys:
// the public half of what proves a human gesture. Each commit holds the
// whole set in keys.json.
const KeysRef = chain.RefRoot + "keys"

// KeysFile is the one file in a keys commit's tree.
const KeysFile = "keys.json"

// KeysSchema names the key set's format.
const KeysSchema = "m1nd-passkeys-v0"

// KeySet is the brain's registered passkeys at one version, and what the
// laws need to judge gestures made before its keys changed, without a
// clock:
//
//   - BeforeFirstKey anchors the gestures made at a terminal before the
//     first key was registered (written with the first set, carried
//     unchanged): a terminal gesture stands only at or below an anchor.
//   - Removed keeps every key taken out of the set, with the anchors of
//     what it proved while it was held: its proof stands only at or below
//     one of them, so a removed key proves nothing made after its removal.
type KeySet struct {
	Schema         string       `json:"schema"`
	Version        int64        `json:"version"`
	Keys           []Passkey    `json:"keys"`
	Removed        []RemovedKey `json:"removed,omitempty"`
	BeforeFirstKey Anchors      `json:"before_first_key,omitempty"`
}

// Passkey is one registered credential.
type Passkey struct {
	CredentialID string `json:"credential_id"` // base64url
	PublicKey    string `json:"public_key"`    // PKIX DER, base64url
	Label        string `json:"label,omitempty"`
	AddedAt      string `json:"added_at"`
}

// RemovedKey is a credential the set held once: what it proved while it
// was held stands (Anchors), nothing it signs now does.
type RemovedKey struct {
	Passkey
	RemovedIn int64   `json:"removed_in"` // the key set version that removed it
	Anchors   Anchors `json:"anchors,omitempty"`
}

// Anchors are the heads, at one moment of the brain, of the chains that
// carry gestures (ref → commit, 40 hex): a gesture commit is anchored
// when it is that commit or one of its first-parent ancestors, so it was
// made before that moment.
type Anchors map[string]string

// Canonical returns the key set's canonical bytes.
func (k *KeySet) Canonical() []byte { return chain.CanonicalJSON(k) }

// Key returns the registered key of a credential.
func (k *KeySet) Key(credentialID string) (rules.PublicKey, bool) {
	for _, p := range k.Keys {
		if p.CredentialID == credentialID {
			return rules.PublicKey{CredentialID: p.CredentialID, PKIX: p.PublicKey}, true
		}
	}
	return rules.PublicKey{}, false
}

// RemovedKey returns the record of a credential the set no longer holds.
func (k *KeySet) RemovedKey(credentialID string) (*RemovedKey, bool) {
	for i := range k.Removed {
		if k.Removed[i].CredentialID == credentialID {
			return &k.Removed[i], true
		}
	}
	return nil, false
}

// Fingerprint is how a person compares a passkey across machines: the
// first 16 hex digits of the sha256 of its public key, in groups of four.
func (p Passkey) Fingerprint() string { return keyFingerprint([]byte(p.PublicKey)) }

// KeysKind is the passkey ref. The first key set holds one key, registered
// in the tray with the one-time code `m1nd serve` prints (the laws cannot
// see that code: whoever writes the first set is trusted, per clone, so
// register a key before letting agents loose). Every later set is a proven
// gesture: its commit carries a proof by a key of the set before it, over
// the new set; it changes the keys and nothing else, keeps every removed
// key on record, and holds at least one key.
var KeysKind = chain.Define(chain.Spec[*KeySet, KeysCommit]{
	Shape: chain.Shape{
		Name:   "keys",
		Prefix: KeysRef,
		Single: true,
		File:   KeysFile,
		Race:   chain.RaceStale,
	},
	Decode: DecodeKeySet,
	Describe: func(k KeysCommit) (string, []chain.Trailer) {
		subject := fmt.Sprintf("keys v%d: %s %s", k.Set.Version, k.Verb, k.Label)
		if k.Verb == KeysRegister {
			return subject, []chain.Trailer{{Key: "M1nd-Registered-Via", Value: "one-time code"}}
		}
		return subject, nil
	},
	Follows: keysFollow,
})

// KeysCommit is what names a keys commit (KeysKind's Commit.Doc): the set
// it writes and what it does to which key.
type KeysCommit struct {
	Set   *KeySet
	Verb  string // KeysRegister, KeysAdd or KeysRemove
	Label string // the key's label
}

// What a keys commit does to its key.
const (
	KeysRegister = "register" // the first key, with the one-time code
	KeysAdd      = "add"
	KeysRemove   = "remove"
)

// DecodeKeySet reads a stored key set: its canonical bytes, of this schema,
// each key a credential id and a public key m1nd can verify with, no
// credential twice (held or removed), anchors that name m1nd refs and
// commits.
func DecodeKeySet(body []byte) (*KeySet, error) {
	k, err := chain.DecodeAs[KeySet](body, KeysFile)
	if err != nil {
		return nil, err
	}
	if k.Schema != KeysSchema {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "%s is not %q", KeysFile, KeysSchema)
	}
	seen := map[string]bool{}
	for _, p := range k.Keys {
		if err := checkPasskey(p, seen); err != nil {
			return nil, err
		}
	}
	for _, r := range k.Removed {
		if err := checkPasskey(r.Passkey, seen); err != nil {
			return nil, err
		}
		if r.RemovedIn < 2 || r.RemovedIn > k.Version {
			return nil, invalidKeys("a removed key names the key set version that removed it")
		}
		if err := r.Anchors.check(); err != nil {
			return nil, err
		}
	}
	if err := k.BeforeFirstKey.check(); err != nil {
		return nil, err
	}
	return k, nil
}

func invalidKeys(format string, args ...any) error {
	return rules.Refusef(rules.InvalidLetter, "keys", format, args...)
}

func checkPasskey(p Passkey, seen map[string]bool) error {
	id, err := base64.RawURLEncoding.DecodeString(p.CredentialID)
	if err != nil || len(id) == 0 || len(id) > 1023 || seen[p.CredentialID] {
		return invalidKeys("a key's credential_id is base64url, at most 1023 bytes, once (held or removed)")
	}
	seen[p.CredentialID] = true
	der, err := base64.RawURLEncoding.DecodeString(p.PublicKey)
	if err != nil {
		return invalidKeys("a key's public_key is base64url PKIX")
	}
	if _, err := rules.ParsePublicKey(der); err != nil {
		return invalidKeys("a key's public_key is not a public key m1nd can verify with")
	}
	if _, err := time.Parse(time.RFC3339, p.AddedAt); err != nil || rules.HasUnsafeText(p.Label) || len(p.Label) > 100 {
		return invalidKeys("a key has added_at (RFC 3339) and a short plain label")
	}
	return nil
}

// check refuses anchors that do not name an m1nd ref and a commit.
func (a Anchors) check() error {
	for ref, commit := range a {
		if _, err := gitstore.ParseHash(commit); err != nil || !strings.HasPrefix(ref, chain.RefRoot) || !gitstore.ValidRefName(ref) {
			return invalidKeys("an anchor names an m1nd ref and the commit (40 hex) it stood at")
		}
	}
	return nil
}

// keysFollow: versions count up from 1; the first set registers one key;
// every later set is KeysFollow.
func keysFollow(prev, next *chain.Decoded[*KeySet], _ chain.Env) error {
	k := next.Value
	if prev == nil {
		if k.Version != 1 || len(k.Keys) != 1 || len(k.Removed) != 0 {
			return invalidKeys("the first key set is version 1 with the one key its registration proved")
		}
		return nil
	}
	return KeysFollow(prev.Value, k, next.Body, next.Meta.Message)
}

// ErrLastKey refuses a key set after the first that holds no key: with
// none, a terminal's word would count again.
var ErrLastKey = &rules.Refusal{Code: rules.InvalidTransition, Field: "keys", Lesson: "a brain that had a passkey keeps one: add the new passkey before removing the old (with none, the terminal would silently land work again)"}

// KeysFollow is the law of a key set after the first, whose commit message
// is message and canonical bytes body: its version adds 1; it keeps the
// anchors of the first key and every removed key on record; a key leaves
// the set only into Removed, at this version, and a removed key never comes
// back; it holds at least one key; and the commit carries a proof, by a key
// of before, of gesture keys over body. The laws judge a keys commit with
// it, and the tray checks a change with it before writing.
func KeysFollow(before, next *KeySet, body []byte, message string) error {
	if next.Version != before.Version+1 {
		return rules.Refusef(rules.InvalidLetter, "version", "each key set adds 1 to version: this one says %d, want %d", next.Version, before.Version+1)
	}
	if !bytes.Equal(chain.CanonicalJSON(next.BeforeFirstKey), chain.CanonicalJSON(before.BeforeFirstKey)) {
		return invalidKeys("before_first_key is written with the first key and never changes")
	}
	switch shrunk, changed := keptAsWritten(before.Removed, next.Removed); {
	case shrunk:
		return invalidKeys("a removed key stays on record: what it proved while it was held is judged by it")
	case changed:
		return invalidKeys("a removed key stays on record as it was removed")
	}
	for _, r := range next.Removed[len(before.Removed):] {
		held := slices.ContainsFunc(before.Keys, func(p Passkey) bool { return p == r.Passkey })
		if !held || r.RemovedIn != next.Version {
			return invalidKeys("a key is removed from the set that held it, at the version that removes it")
		}
	}
	for _, p := range next.Keys {
		if _, removed := next.RemovedKey(p.CredentialID); removed {
			return invalidKeys("a removed key never comes back: add a passkey made anew")
		}
	}
	for _, p := range before.Keys {
		kept := slices.Contains(next.Keys, p)
		_, removed := next.RemovedKey(p.CredentialID)
		if !kept && !removed {
			return invalidKeys("a key leaves the set only as a removed key, kept on record")
		}
	}
	if len(next.Keys) == 0 {
		return ErrLastKey
	}
	return checkProofBy(before, message, rules.GestureKeys, body)
}

// checkProofBy checks that a commit message carries a proof, by a key of
// keys, of gesture over change.
func checkProofBy(keys *KeySet, message, gesture string, change []byte) error {
	value, ok := chain.TrailerValue(message, rules.ProofTrailer)
	if !ok {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "this change is a human gesture: its commit carries %s, a passkey's assertion over it", rules.ProofTrailer)
	}
	p, err := rules.DecodeProof(value)
	if err != nil {
		return err
	}
	key, ok := keys.Key(p.CredentialID)
	if !ok {
		return rules.Refusef(rules.HumanGestureRequired, "proof", "the proof was made by a passkey this key set does not hold")
	}
	return rules.VerifyProof(p, key, rules.GestureChallenge(gesture, change))
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

// keptAsWritten checks that next, an append-only record's new version,
// keeps every entry of before as it was written: shrunk when it holds
// fewer, changed when one of before's entries reads otherwise.
func keptAsWritten[T any](before, next []T) (shrunk, changed bool) {
	if len(next) < len(before) {
		return true, false
	}
	for i, r := range before {
		if !bytes.Equal(chain.CanonicalJSON(r), chain.CanonicalJSON(next[i])) {
			return false, true
		}
	}
	return false, false
}
