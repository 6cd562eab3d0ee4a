package brain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// A brain's passkeys are trusted from their root: the first key set holds
// the one key whoever registered first chose (and the anchors of what a
// terminal confirmed before it), and every later set is proven by a key of
// the set before it. So what a person checks, to tell the team's key set
// from one an agent pushed first, is that first set: its fingerprint names
// the whole chain. A key's own fingerprint would not do: a set that copies
// the team's public key with anchors of its own would pass for the team's.

// FirstSet is the first key set on the keys chain at head: the root every
// later set was proven from.
func FirstSet(objs gitstore.Objects, head gitstore.Hash) (*KeySet, error) {
	root := head
	for {
		c, err := objs.ReadCommit(root)
		if err != nil {
			return nil, fmt.Errorf("%s at %s: %w", KeysRef, root, err)
		}
		if len(c.Parents) == 0 {
			break
		}
		root = c.Parents[0]
	}
	set, err := ReadKeys(objs, root)
	if err != nil {
		return nil, err
	}
	if len(set.Keys) == 0 {
		return nil, fmt.Errorf("%s: its first key set at %s holds no key", KeysRef, root)
	}
	return set, nil
}

// Fingerprint is how a person compares a key set across machines: the
// first 16 hex digits of the sha256 of its canonical bytes, in groups of
// four. Of a brain's first set, it names the brain's keys (brain keys,
// hooks install --bare --trust-key, sync --trust).
func (k *KeySet) Fingerprint() string { return keyFingerprint(k.Canonical()) }

// keyFingerprint is how m1nd shows a key or a key set to a person: the first
// 16 hex digits of the sha256 of data, in groups of four.
func keyFingerprint(data []byte) string {
	sum := sha256.Sum256(data)
	return grouped(hex.EncodeToString(sum[:8]))
}

// grouped is 16 hex digits in groups of four, as fingerprints are shown.
func grouped(h string) string { return h[0:4] + " " + h[4:8] + " " + h[8:12] + " " + h[12:16] }

// Named is how a lesson names the first set: its fingerprint and its key.
func (k *KeySet) Named() string {
	return "fingerprint " + k.Fingerprint() + ", its key " + k.Keys[0].Named()
}

// Named is how a lesson names p: its label and fingerprint, or the
// fingerprint alone when it has no label.
func (p Passkey) Named() string {
	if strings.TrimSpace(p.Label) == "" {
		return "fingerprint " + p.Fingerprint()
	}
	return rules.Echo(p.Label) + " (" + p.Fingerprint() + ")"
}

// ParseFingerprint reads a fingerprint as a person types it (16 hex
// digits, in groups of four or not, any case) and returns it as
// Fingerprint writes it.
func ParseFingerprint(s string) (string, error) {
	h := strings.ToLower(strings.Join(strings.Fields(s), ""))
	if len(h) != 16 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%q is not a key set fingerprint: 16 hex digits, as m1nd brain keys shows them (abcd 0123 4567 89ef)", s)
	}
	return grouped(h), nil
}
