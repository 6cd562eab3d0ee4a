package testscripts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
)

// TestPasskeyGesturesHoldOnTheRemote: once the brain has a registered
// passkey, a gesture counts only with its proof. A ratification signed by
// the key is written, passes the local hook and is accepted by a bare
// remote; the same store change written by raw git as a terminal gesture,
// with a tampered proof, with a proof by an unregistered key or with a
// proof of another change is refused by the local hook and by the remote,
// and m1nd verify names the one written past the hook.
func TestPasskeyGesturesHoldOnTheRemote(t *testing.T) {
	ctx := context.Background()
	b := newRemoteBrain(t)
	g, repo, store, now, run := b.g, b.repo, b.store, b.now, b.m1nd
	if _, err := store.Edit(ctx, brain.EditRequest{WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 1, Agent: "owner", Now: now}, Seat: brain.SeatOwner,
		Ops: []byte(`[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]`)}); err != nil {
		t.Fatal(err)
	}
	key := teamKey() // the first key the remote trusts
	// Registered as the tray does: what terminals confirmed before (the
	// runner pins the brain approved) stays anchored.
	if _, err := brain.RegisterFirstKey(ctx, repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, AddedAt: now.Format(time.RFC3339)}, now); err != nil {
		t.Fatal(err)
	}
	trustKeySet(t, b.remote, keySetFingerprint(t, repo)) // the remote's admin trusts it
	g.Git("push", "-q", "--atomic", "origin", brain.KeysRef+":"+brain.KeysRef, brain.StoreRef+":"+brain.StoreRef)
	v2 := g.Git("rev-parse", brain.StoreRef)

	// The signed ratification: prepared, signed over its change, written.
	ratify := brain.RatifyRequest{WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 2, Agent: "owner", Now: now}, BlockIDs: []string{"sb_shop_core"}, Origin: rules.OriginHumanPasskey}
	dry := ratify
	dry.DryRun = true
	prepared, err := store.Ratify(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	change := prepared.Prepared.Change
	signed := ratify
	signed.Proof = key.Assert(rules.GestureChallenge(rules.GestureRatify, change), nil)
	if _, err := store.Ratify(ctx, signed); err != nil {
		t.Fatalf("the signed ratification: %v", err)
	}
	v3 := g.Git("rev-parse", brain.StoreRef)
	tree := g.Git("rev-parse", v3+"^{tree}")

	// forge writes the same store change (v2 → that tree) with message.
	forge := func(message string) string {
		return strings.TrimSpace(g.Git("commit-tree", tree, "-p", v2, "-m", message))
	}
	trailers := func(origin string, p *rules.Proof) string {
		msg := "store v3: ratify sk_shop_candidate (1 block)\n\nM1nd-Store-Version: 3\nM1nd-Agent: owner\nM1nd-Origin: " + origin + "\n"
		if p != nil {
			msg += rules.ProofTrailer + ": " + rules.EncodeProof(p) + "\n"
		}
		return msg
	}
	tampered := key.Assert(rules.GestureChallenge(rules.GestureRatify, change), func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://localhost:1"; return ad })
	tampered.ClientDataJSON = signed.Proof.ClientDataJSON // the signature no longer covers it
	for label, message := range map[string]string{
		"a terminal gesture":         trailers(rules.OriginHumanTTY, nil),
		"a tampered proof":           trailers(rules.OriginHumanPasskey, tampered),
		"an unregistered key":        trailers(rules.OriginHumanPasskey, rulestest.New(t, "es256").Assert(rules.GestureChallenge(rules.GestureRatify, change), nil)),
		"a proof of another change":  trailers(rules.OriginHumanPasskey, key.Assert(rules.GestureChallenge(rules.GestureRatify, []byte("another change")), nil)),
		"a proof of another gesture": trailers(rules.OriginHumanPasskey, key.Assert(rules.GestureChallenge(rules.GestureReceiptImport, change), nil)),
	} {
		bad := forge(message)
		g.Git("-c", "core.hooksPath=/dev/null", "update-ref", brain.StoreRef, v2, v3)
		out, err := g.TryGit("update-ref", brain.StoreRef, bad, v2)
		if err == nil || !strings.Contains(out, "human_gesture_required") {
			t.Errorf("%s: the local hook let it through: %v\n%s", label, err, out)
		}
		g.Git("-c", "core.hooksPath=/dev/null", "update-ref", brain.StoreRef, bad, v2)
		if out, err := g.TryGit("push", "origin", brain.StoreRef+":"+brain.StoreRef); err == nil || !strings.Contains(out, "human_gesture_required") {
			t.Errorf("%s: the remote took it: %v\n%s", label, err, out)
		}
		// verify reads history leniently for terminal gestures (it cannot
		// order them against the key); the hooks above judged strictly.
		if label != "a terminal gesture" {
			out, err = run(g.Dir, "verify")
			if exitCode(err) != 3 || !strings.Contains(out, bad[:12]) {
				t.Errorf("%s: verify (exit %d) did not name %s:\n%s", label, exitCode(err), bad[:12], out)
			}
		}
		g.Git("-c", "core.hooksPath=/dev/null", "update-ref", brain.StoreRef, v3, bad)
	}
	if got := g.Git("rev-parse", brain.StoreRef); got != v3 {
		t.Fatalf("the store is at %s, want the signed %s", got, v3)
	}
	if out, err := g.TryGit("push", "origin", brain.StoreRef+":"+brain.StoreRef); err != nil {
		t.Fatalf("the remote refused the signed ratification: %v\n%s", err, out)
	}
	if out, err := run(g.Dir, "verify"); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}
