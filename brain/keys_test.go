package brain

import (
	"errors"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestKeysFollow: a key set after the first adds 1 to version, keeps at
// least one key, keeps every removed key on record (with the anchors of
// what it proved), keeps the first key's anchors, and is proven by a key
// of the set before it over its own bytes: the law the tray checks before
// writing and the laws judge with.
func TestKeysFollow(t *testing.T) {
	alice, bob, carol := rulestest.New(t, "es256"), rulestest.New(t, "ed25519"), rulestest.New(t, "es256")
	passkey := func(a *rulestest.Authenticator) Passkey {
		return Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, AddedAt: "2026-12-01T10:00:00Z"}
	}
	set := func(version int64, keys ...*rulestest.Authenticator) *KeySet {
		k := &KeySet{Schema: KeysSchema, Version: version, Keys: []Passkey{}}
		for _, a := range keys {
			k.Keys = append(k.Keys, passkey(a))
		}
		return k
	}
	// without is before less gone, on record as removed at before's next version.
	without := func(before *KeySet, gone *rulestest.Authenticator) *KeySet {
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
	proven := func(by *rulestest.Authenticator, over *KeySet) string {
		p := by.Assert(rules.GestureChallenge(rules.GestureKeys, over.Canonical()), nil)
		return "keys\n\n" + rules.ProofTrailer + ": " + rules.EncodeProof(p) + "\n"
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
		code    rules.Code // "" = allowed
	}{
		{"a key added, proven", one, two, proven(alice, two), ""},
		{"a key removed, proven by the key removed", two, without(two, alice), proven(alice, without(two, alice)), ""},
		{"a key removed, proven by the key kept", two, without(two, alice), proven(bob, without(two, alice)), ""},
		{"a key added after one was removed", noBob, withCarol, proven(alice, withCarol), ""},
		{"a removed key added back", noBob, back, proven(alice, back), rules.InvalidLetter},
		{"a key removed off the record", two, dropped, proven(alice, dropped), rules.InvalidLetter},
		{"the first key's anchors changed", oneAnchored, two, proven(alice, two), rules.InvalidLetter},
		{"the first key's anchors kept", oneAnchored, twoAnchored, proven(alice, twoAnchored), ""},
		{"the last key removed, proven", one, without(one, alice), proven(alice, without(one, alice)), rules.InvalidTransition},
		{"every key removed, proven", two, without(without(two, alice), bob), proven(alice, without(without(two, alice), bob)), rules.InvalidLetter},
		{"the last key removed, no proof", one, without(one, alice), "keys\n", rules.InvalidTransition},
		{"a key added, no proof", one, two, "keys\n", rules.HumanGestureRequired},
		{"a key added, proven by the key it adds", one, two, proven(bob, two), rules.HumanGestureRequired},
		{"a proof over another set", one, two, proven(alice, set(2, bob)), rules.HumanGestureRequired},
		{"a version skipped", one, set(3, alice, bob), proven(alice, set(3, alice, bob)), rules.InvalidLetter},
	} {
		body := tt.next.Canonical()
		for name, err := range map[string]error{
			"KeysFollow": KeysFollow(tt.before, tt.next, body, tt.message),
			"the kind's law": KeysKind.Follows(
				&chain.Judged{Doc: chain.Doc{Ref: KeysRef, Body: tt.before.Canonical()}, Value: tt.before},
				&chain.Judged{Doc: chain.Doc{Ref: KeysRef, Body: body, Meta: &gitstore.Commit{Message: tt.message}}, Value: tt.next},
				chain.Env{}),
		} {
			var r *rules.Refusal
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

// TestRemovedKeyLessonSaysWhatIsKnown: a proof by a removed key over a
// commit the removal does not anchor is refused saying it was made after
// the removal, but when this side does not hold the commit the removal
// anchors, it says so: it cannot tell "after" from "not fetched yet".
func TestRemovedKeyLessonSaysWhatIsKnown(t *testing.T) {
	g := gittest.Init(t, "shop")
	g.CommitFiles("one", map[string]string{"a": "1\n"})
	first := strings.TrimSpace(g.Git("rev-parse", "HEAD"))
	g.CommitFiles("two", map[string]string{"a": "2\n"})
	second := strings.TrimSpace(g.Git("rev-parse", "HEAD"))
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	removed, kept := rulestest.New(t, "es256"), rulestest.New(t, "ed25519")
	ref := chain.MissionRefPrefix + "msn_0123456789ab"
	gesture, change := rules.GestureArchive, []byte("the archived letter")
	proof := removed.Assert(rules.GestureChallenge(gesture, change), nil)
	judge := func(anchor, commit string) error {
		t.Helper()
		set := &KeySet{Schema: KeysSchema, Version: 3, Keys: []Passkey{{CredentialID: kept.ID, PublicKey: kept.Key.PKIX, AddedAt: "2026-12-01T00:00:00Z"}},
			Removed: []RemovedKey{{Passkey: Passkey{CredentialID: removed.ID, PublicKey: removed.Key.PKIX, AddedAt: "2026-11-30T00:00:00Z"}, RemovedIn: 3, Anchors: Anchors{ref: anchor}}}}
		blob, err := repo.WriteBlob(set.Canonical())
		if err != nil {
			t.Fatal(err)
		}
		tree, err := repo.WriteTree([]gitstore.TreeEntry{{Name: KeysFile, Mode: gitstore.ModeFile, Hash: blob}})
		if err != nil {
			t.Fatal(err)
		}
		sig := gitstore.Signature{Name: "m1nd", Email: "m1nd@localhost"}
		head, err := repo.WriteCommit(&gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "keys v3"})
		if err != nil {
			t.Fatal(err)
		}
		h, _ := gitstore.ParseHash(commit)
		doc := &chain.Doc{Ref: ref, Commit: h, Meta: &gitstore.Commit{Message: chain.GestureMessage(rules.OriginHumanPasskey, proof)}}
		return (&KeysAt{Objects: repo, Head: head}).CheckCommit(doc, gesture, change)
	}
	if err := judge(second, first); err != nil {
		t.Fatalf("a proof below the removal's anchor: %v", err)
	}
	if err := judge(first, second); err == nil || !strings.Contains(err.Error(), "a removed key proves nothing made after its removal") {
		t.Fatalf("a proof above the anchor: %v", err)
	}
	missing := strings.Repeat("ab", 20)
	if err := judge(missing, first); err == nil || !strings.Contains(err.Error(), "this clone does not hold that commit, so it cannot tell whether this one came before the removal") || strings.Contains(err.Error(), "made after") {
		t.Fatalf("a proof judged where the anchor is not held: %v", err)
	}
}
