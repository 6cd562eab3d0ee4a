package ops_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// TestVerdictsAreKeptAndFollowTheStore: a head the laws refuse is marked
// in the heads view, the verdict is kept in the runtime folder and read
// back by the next call; when the store moves, a verdict that leaned on
// it is judged again — here a landed letter naming store v2, refused
// while the store has no v2, stands once v2 is the import made for it.
func TestVerdictsAreKeptAndFollowTheStore(t *testing.T) {
	ctx := context.Background()
	lb := newLandBrain(t)
	id := lb.mission(true)
	ref := chain.MissionRefPrefix + id
	faultOf := func(b *ops.Flows) *chain.HeadFault {
		t.Helper()
		view, err := b.Heads(ctx, "", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range view.Missions {
			if h.MissionID == id {
				return h.Fault
			}
		}
		t.Fatalf("no head for %s", id)
		return nil
	}
	if f := faultOf(lb.b); f != nil {
		t.Fatalf("a sound head is marked %+v", f)
	}
	head, err := lb.b.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	landed := chain.Next(head.Letter, head.HeadLetterID, lb.now)
	landed.SetPhase(chain.PhaseLanded)
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: 2}
	forged := lb.g.CommitFile(head.Commit.String(), chain.LetterFile, landed.Canonical(), id+" #3 landed sb_shop_core\n\nM1nd-Agent: owner\n")
	lb.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, forged, head.Commit.String())

	f := faultOf(lb.b)
	if f == nil || f.Refused != string(rules.LandedLaw) || f.Commit != forged {
		t.Fatalf("the forged landing is marked %+v", f)
	}
	kept, err := os.ReadFile(laws.VerdictsPath(lb.b.RuntimeDir()))
	if err != nil || !strings.Contains(string(kept), ref+" "+forged+" sp "+forged+" landed_law ") {
		t.Fatalf("the verdict is not kept (%v):\n%s", err, kept)
	}
	// A new invocation reads it back.
	again := ops.New(repoOf(lb.b), "shop")
	if f := faultOf(again); f == nil || f.Refused != string(rules.LandedLaw) {
		t.Fatalf("the kept verdict read back: %+v", f)
	}
	// The store reaches v2 with the import made for this mission's letter:
	// the verdict leaned on the store, and is judged again.
	if _, err := again.ImportReceipt(ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 1, Agent: "owner", Now: lb.now},
		BlockID:      "sb_shop_core", Receipt: chain.CanonicalJSON(head.Letter.ReceiptCandidate), Origin: rules.OriginHumanTTY,
		Lands: &brain.Landing{MissionID: id, LetterID: head.HeadLetterID},
	}); err != nil {
		t.Fatal(err)
	}
	if f := faultOf(ops.New(repoOf(lb.b), "shop")); f != nil {
		t.Fatalf("the landing, backed now, is still marked %+v", f)
	}
	if faults, _, err := laws.Verify(ctx, repoOf(lb.b), nil); err != nil || len(faults) != 0 {
		t.Fatalf("verify: %v %v", faults, err)
	}
}
