package runnerd

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/runners"
)

// TestTheGateIsTheHumans: a build runner runs only as a human approved its
// pin with this runnerd's key: unapproved, /run is refused unpinned_runner
// and the log names the runner; approved at a terminal (before the first
// passkey) it runs, and its merge_wait is signed, naming the pin that
// proved it; that approval stands once a passkey is registered, but an
// agent's rewrite of the gate (`false || true`) is refused, and so is a
// terminal's approval made after the first key; a passkey's approval
// runs it again.
func TestTheGateIsTheHumans(t *testing.T) {
	ctx := context.Background()
	r := newRigUnapproved(t, `echo "// $M1ND_MISSION" >> core/a.go && git commit -qam work`, `grep -q msn_ core/a.go`, 30)
	var logged []string
	r.d.Logf = func(format string, args ...any) {
		logged = append(logged, strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
	run := func() (int, map[string]any) {
		status, out := r.post("/run", testSecret, wire.RunRequest{RunnerID: "build-1", PacketMarkdown: "# Mission packet — core\n", BlockID: "sb_shop_core", BrainRef: "shop"})
		r.d.running.Wait()
		return status, out
	}
	refused := func(label, words string) {
		t.Helper()
		status, out := run()
		if status != 403 || out["refused"] != "unpinned_runner" || !strings.Contains(out["lesson"].(string), words) {
			t.Fatalf("%s: /run answered %d %v", label, status, out)
		}
		if !strings.Contains(strings.Join(logged, "\n"), "refused /run for runner build-1") {
			t.Fatalf("%s: the log does not name the refused runner:\n%s", label, strings.Join(logged, "\n"))
		}
	}
	refused("no approval", "build-1 has no approved pin yet")

	// Approved at a terminal, before any passkey: it runs, and its
	// merge_wait names the approved pin and carries runnerd's signature.
	build := r.d.config().Runner("build-1")
	r.approve(rules.OriginHumanTTY, nil)
	status, out := run()
	if status != 200 {
		t.Fatalf("an approved pin: %d %v", status, out)
	}
	head, _ := r.d.flows.Current(out["mission_id"].(string))
	if head.Letter.Phase != chain.PhaseMergeWait || head.Letter.ReceiptCandidate.Evidence.EvidenceRefs[1] != runners.PinRef(build) {
		t.Fatalf("the approved run: %s, evidence %v", head.Letter.Phase, head.Letter.ReceiptCandidate.Evidence.EvidenceRefs)
	}
	c, _ := r.d.Repo.ReadCommit(head.Commit)
	att, signed, err := chain.AttestationOf(c.Message)
	if err != nil || !signed || att.Pins != 1 || att.Key != rules.RunnerKey(r.d.Key.Public().(ed25519.PublicKey)) {
		t.Fatalf("the merge_wait's attestation: %+v %v %v\n%s", att, signed, err, c.Message)
	}

	// A passkey is registered: the terminal's approval, made before it,
	// stands.
	key := rulestest.New(t, "es256")
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := brain.RegisterFirstKey(ctx, r.d.Repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "laptop", AddedAt: chain.Timestamp(now)}, now); err != nil {
		t.Fatal(err)
	}
	if status, out := run(); status != 200 {
		t.Fatalf("the approval made before the first key: %d %v", status, out)
	}

	// An agent rewrites the gate: the pin is no longer the approved one.
	rewritten := *build
	rewritten.GateCommand = "false || true"
	r.d.cfg.Store(&runners.Config{Runners: []*runners.Runner{&rewritten}})
	logged = nil
	refused("the gate rewritten", "pinned otherwise than a human approved")

	// An approval confirmed at a terminal after the first key is refused by
	// the laws, so approving by hand does not work either.
	p2, _, err := brain.PreparePins(ctx, r.d.Repo, []brain.ApprovedRunner{rewritten.Approval(r.publicKey())}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&brain.Store{Repo: r.d.Repo, Brain: r.d.Brain}).CommitPins(ctx, p2, rules.OriginHumanTTY, nil); err == nil {
		t.Fatal("an approval confirmed at a terminal after the first key was written")
	}

	// The human signs the new pin with the passkey: it runs.
	r.approve(rules.OriginHumanPasskey, key)
	if status, out := run(); status != 200 {
		t.Fatalf("the passkey's approval: %d %v", status, out)
	}
}
