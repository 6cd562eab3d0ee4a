package brain

import (
	"errors"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gates/gatestest"
	"github.com/m1nd/m1nd/gitstore"
)

// TestKeysFollow: a key set after the first adds 1 to version, keeps at
// least one key, keeps every removed key on record (with the anchors of
// what it proved), keeps the first key's anchors, and is proven by a key
// of the set before it over its own bytes: the law the tray checks before
// writing and the laws judge with.
func TestKeysFollow(t *testing.T) {
	alice, bob, carol := gatestest.New(t, "es256"), gatestest.New(t, "ed25519"), gatestest.New(t, "es256")
	passkey := func(a *gatestest.Authenticator) Passkey {
		return Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, AddedAt: "2026-12-01T10:00:00Z"}
	}
	set := func(version int64, keys ...*gatestest.Authenticator) *KeySet {
		k := &KeySet{Schema: KeysSchema, Version: version, Keys: []Passkey{}}
		for _, a := range keys {
			k.Keys = append(k.Keys, passkey(a))
		}
		return k
	}
	// without is before less gone, on record as removed at before's next version.
	without := func(before *KeySet, gone *gatestest.Authenticator) *KeySet {
		next := set(before.Version + 1)
		next.Removed = append(next.Removed, before.Removed...)
		next.BeforeFirstKey = before.BeforeFirstKey
		for _, p := range before.Keys {
			if p.CredentialID == gone.ID {
				next.Removed = append(next.Removed, RemovedKey{Passkey: p, RemovedIn: next.Version, Anchors: Anchors{StoreRef: strings.Repeat("a", 40)}})
			} else {
				next.Keys = append(next.Keys, p)
			}
		}
		return next
	}
	proven := func(by *gatestest.Authenticator, over *KeySet) string {
		p := by.Assert(gates.GestureChallenge(gates.GestureKeys, over.Canonical()), nil)
		return "keys\n\n" + gates.ProofTrailer + ": " + gates.EncodeProof(p) + "\n"
	}
	one, two := set(1, alice), set(2, alice, bob)
	dropped := set(3, bob) // alice gone, not on record
	twoAnchored := set(2, alice, bob)
	twoAnchored.BeforeFirstKey = Anchors{StoreRef: strings.Repeat("b", 40)}
	oneAnchored := set(1, alice)
	oneAnchored.BeforeFirstKey = twoAnchored.BeforeFirstKey
	noBob := without(two, bob)
	withCarol := without(two, bob)
	withCarol.Version = 4
	withCarol.Keys = append(withCarol.Keys, passkey(carol))
	back := set(4, bob, alice) // bob removed at v3, added again at v4
	back.Removed = noBob.Removed
	back.Keys = []Passkey{passkey(alice), passkey(bob)}
	for _, tt := range []struct {
		label   string
		before  *KeySet
		next    *KeySet
		message string
		code    gates.Code // "" = allowed
	}{
		{"a key added, proven", one, two, proven(alice, two), ""},
		{"a key removed, proven by the key removed", two, without(two, alice), proven(alice, without(two, alice)), ""},
		{"a key removed, proven by the key kept", two, without(two, alice), proven(bob, without(two, alice)), ""},
		{"a key added after one was removed", noBob, withCarol, proven(alice, withCarol), ""},
		{"a removed key added back", noBob, back, proven(alice, back), gates.InvalidLetter},
		{"a key removed off the record", two, dropped, proven(alice, dropped), gates.InvalidLetter},
		{"the first key's anchors changed", oneAnchored, two, proven(alice, two), gates.InvalidLetter},
		{"the first key's anchors kept", oneAnchored, twoAnchored, proven(alice, twoAnchored), ""},
		{"the last key removed, proven", one, without(one, alice), proven(alice, without(one, alice)), gates.InvalidTransition},
		{"every key removed, proven", two, without(without(two, alice), bob), proven(alice, without(without(two, alice), bob)), gates.InvalidLetter},
		{"the last key removed, no proof", one, without(one, alice), "keys\n", gates.InvalidTransition},
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
