package brain

import (
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/gates"

	"github.com/m1nd/m1nd/gitstore"
)

// A brain's passkeys are trusted from their root: the first key set holds
// the one key whoever registered first chose, and every later set is
// proven by a key of the set before it. So the key a person checks, to
// tell the team's key set from one an agent pushed first, is that first
// key: its fingerprint names the whole chain. A later set may hold any
// public key (a key of the set before signs it in, not the new key), so a
// current key's fingerprint proves nothing about where the chain began.

// FirstKey is the key of the first key set on the keys chain at head: the
// root every later set was proven from.
func FirstKey(objs gitstore.Objects, head gitstore.Hash) (Passkey, error) {
	root := head
	for {
		c, err := objs.ReadCommit(root)
		if err != nil {
			return Passkey{}, fmt.Errorf("%s at %s: %w", KeysRef, root, err)
		}
		if len(c.Parents) == 0 {
			break
		}
		root = c.Parents[0]
	}
	set, err := ReadKeys(objs, root)
	if err != nil {
		return Passkey{}, err
	}
	if len(set.Keys) == 0 {
		return Passkey{}, fmt.Errorf("%s: its first key set at %s holds no key", KeysRef, root)
	}
	return set.Keys[0], nil
}

// Named is how a lesson names p: its label and fingerprint, or the
// fingerprint alone when it has no label.
func (p Passkey) Named() string {
	if strings.TrimSpace(p.Label) == "" {
		return "fingerprint " + p.Fingerprint()
	}
	return gates.Echo(p.Label) + ", fingerprint " + p.Fingerprint()
}

// ParseFingerprint reads a passkey fingerprint as a person types it (16
// hex digits, in groups of four or not, any case) and returns it as
// Passkey.Fingerprint writes it.
func ParseFingerprint(s string) (string, error) {
	h := strings.ToLower(strings.Join(strings.Fields(s), ""))
	if len(h) != 16 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%q is not a passkey fingerprint: 16 hex digits, as the tray and m1nd sync show them (abcd 0123 4567 89ef)", s)
	}
	return h[0:4] + " " + h[4:8] + " " + h[8:12] + " " + h[12:16], nil
}
