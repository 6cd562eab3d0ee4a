package runnerd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gates/gatestest"
	"github.com/m1nd/m1nd/internal/wire"
)

// TestTheGateIsTheHumans: while the brain has no passkey, runnerd runs its
// pins as the operator wrote them. Once it has one, a build runner runs
// only as a passkey approved its pin: unapproved, or rewritten by an agent
// (its gate made `false || true`), /run is refused unpinned_runner and the
// log names the runner; approved, the mission reaches merge_wait and its
// candidate names the pin that proved it.
func TestTheGateIsTheHumans(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, `echo "// $M1ND_MISSION" >> core/a.go && git commit -qam work`, `grep -q msn_ core/a.go`, 30)
	var logged []string
	r.d.Logf = func(format string, args ...any) {
		logged = append(logged, strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
	run := func() (int, map[string]any) {
		status, out := r.post("/run", testSecret, wire.RunRequest{RunnerID: "build-1", PacketMarkdown: "# Mission packet — core\n", BlockID: "sb_shop_core", BrainRef: "shop"})
		r.d.running.Wait()
		return status, out
	}
	if status, out := run(); status != 200 {
		t.Fatalf("no passkey yet: the operator's pin runs: %d %v", status, out)
	}
	key := gatestest.New(t, "es256")
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := brain.RegisterFirstKey(ctx, r.d.Repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "laptop", AddedAt: chain.Timestamp(now)}, now); err != nil {
		t.Fatal(err)
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
	refused("a passkey, no approval", "build-1 has no approved pin yet")

	// The human approves the pins, signed by the passkey.
	build := r.d.config().Runner("build-1")
	p, set, err := brain.PreparePins(r.d.Repo, []brain.ApprovedRunner{build.Approval()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.store.CommitPins(ctx, p, gates.OriginHumanPasskey, key.Assert(p.Challenge(), nil)); err != nil {
		t.Fatalf("the signed approval: %v", err)
	}
	if set.Version != 1 || !set.Approved("build-1", build.PinHash()) {
		t.Fatalf("approved %+v", set)
	}
	status, out := run()
	if status != 200 {
		t.Fatalf("an approved pin: %d %v", status, out)
	}
	head, _ := r.d.missions.Current(out["mission_id"].(string))
	if head.Letter.Phase != chain.PhaseMergeWait || head.Letter.ReceiptCandidate.Evidence.EvidenceRefs[1] != PinRef(build) {
		t.Fatalf("the approved run: %s, evidence %v", head.Letter.Phase, head.Letter.ReceiptCandidate.Evidence.EvidenceRefs)
	}

	// An agent rewrites the gate: the pin is no longer the approved one.
	rewritten := *build
	rewritten.GateCommand = "false || true"
	r.d.cfg.Store(&Config{Runners: []*Runner{&rewritten}})
	logged = nil
	refused("the gate rewritten", "pinned otherwise than a passkey approved")

	// An approval written without a proof is refused by the laws, so
	// approving by hand does not work either.
	p2, _, err := brain.PreparePins(r.d.Repo, []brain.ApprovedRunner{rewritten.Approval()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.store.CommitPins(ctx, p2, gates.OriginHumanTTY, nil); err == nil {
		t.Fatal("an approval confirmed at a terminal after the first key was written")
	}
}
