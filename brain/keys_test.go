package brain

import (
	"errors"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gates/gatestest"
	"github.com/m1nd/m1nd/gitstore"
)

// TestKeysFollow: a key set after the first adds 1 to version, keeps at
// least one key, and is proven by a key of the set before it over its own
// bytes: the law the tray checks before writing and the laws judge with.
func TestKeysFollow(t *testing.T) {
	alice, bob := gatestest.New(t, "es256"), gatestest.New(t, "ed25519")
	set := func(version int64, keys ...*gatestest.Authenticator) *KeySet {
		k := &KeySet{Schema: KeysSchema, Version: version, Keys: []Passkey{}}
		for _, a := range keys {
			k.Keys = append(k.Keys, Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, AddedAt: "2026-12-01T10:00:00Z"})
		}
		return k
	}
	proven := func(by *gatestest.Authenticator, over *KeySet) string {
		p := by.Assert(gates.GestureChallenge(KeysGesture, over.Canonical()), nil)
		return "keys\n\n" + gates.ProofTrailer + ": " + gates.EncodeProof(p) + "\n"
	}
	one, two := set(1, alice), set(2, alice, bob)
	for _, tt := range []struct {
		label   string
		before  *KeySet
		next    *KeySet
		message string
		code    gates.Code // "" = allowed
	}{
		{"a key added, proven", one, two, proven(alice, two), ""},
		{"a key removed, proven by the key removed", two, set(3, bob), proven(alice, set(3, bob)), ""},
		{"a key removed, proven by the key kept", two, set(3, alice), proven(bob, set(3, alice)), ""},
		{"the last key removed, proven", one, set(2), proven(alice, set(2)), gates.InvalidTransition},
		{"every key removed, proven", two, set(3), proven(alice, set(3)), gates.InvalidTransition},
		{"the last key removed, no proof", one, set(2), "keys\n", gates.InvalidTransition},
		{"a key added, no proof", one, two, "keys\n", gates.HumanGestureRequired},
		{"a key added, proven by the key it adds", one, two, proven(bob, two), gates.HumanGestureRequired},
		{"a proof over another set", one, two, proven(alice, set(2, bob)), gates.HumanGestureRequired},
		{"a version skipped", one, set(3, alice, bob), proven(alice, set(3, alice, bob)), gates.InvalidLetter},
	} {
		body := tt.next.Canonical()
		for name, err := range map[string]error{
			"KeysFollow": KeysFollow(tt.before, tt.next, body, tt.message),
			"the kind's law": KeysKind.Follows(
				&chain.Judged{Doc: chain.Doc{Ref: KeysRef, Body: tt.before.Canonical()}, Value: tt.before},
				&chain.Judged{Doc: chain.Doc{Ref: KeysRef, Body: body, Meta: &gitstore.Commit{Message: tt.message}}, Value: tt.next},
				chain.Env{}),
		} {
			var r *gates.Refusal
			switch {
			case tt.code == "" && err != nil:
				t.Errorf("%s: %s refused %v", tt.label, name, err)
			case tt.code != "" && (!errors.As(err, &r) || r.Code != tt.code):
				t.Errorf("%s: %s said %v, want %s", tt.label, name, err, tt.code)
			}
		}
	}
	if ErrLastKey.Lesson != "a brain that had a passkey keeps one: add the new passkey before removing the old (with none, the terminal would silently land work again)" {
		t.Fatalf("the last key's lesson: %q", ErrLastKey.Lesson)
	}
}
