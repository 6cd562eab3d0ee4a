package runnerd

import (
	"context"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
)

// TestTheQueueRegatesWhatWouldLand: a mission waits, ready, its gate
// having tested its branch's tip. main moves on: the queue merges main
// into the branch, gates the merge and posts a merge_wait letter naming
// it, which holds main — ready again, nothing else written. A change on
// main that conflicts is recorded with its path and gates nothing; a gate
// that fails on the merge is recorded with its exit, and the mission stays
// unready; and a ready mission is left alone.
func TestTheQueueRegatesWhatWouldLand(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, `echo "// $M1ND_MISSION" >> core/a.go && git commit -qam work`, `grep -q msn_ core/a.go && ! grep -q broken web/index.html`, 30)
	head := r.spawn()
	id := head.MissionID
	if head.Letter.Phase != chain.PhaseMergeWait {
		t.Fatalf("the run ended %s", head.Letter.Phase)
	}
	if got := r.d.queueOnce(ctx); got != "" {
		t.Fatalf("the queue re-gated %s, which is ready", got)
	}

	// main moves on, elsewhere: re-gated on the merge.
	r.g.CommitFiles("main: a new page", map[string]string{"web/new.html": "<p>new</p>\n"})
	mainTip := r.g.Git("rev-parse", "main")
	if got := r.d.queueOnce(ctx); got != id {
		t.Fatalf("the queue re-gated %q, want %s", got, id)
	}
	head, _ = r.d.flows.Current(id)
	tested, _ := head.Letter.ReceiptCandidate.Evidence.Tested()
	branch := r.g.Git("rev-parse", "m1nd/"+id)
	if head.Letter.Phase != chain.PhaseMergeWait || tested != branch || !strings.Contains(head.Letter.Verdict.Gist, "gate green on "+branch[:12]+", which holds main at "+mainTip[:12]) {
		t.Fatalf("after the re-gate: %s %+v, tested %s, branch %s", head.Letter.Phase, head.Letter.Verdict, tested, branch)
	}
	if parents := r.g.Git("log", "-1", "--format=%P", branch); !strings.Contains(parents, mainTip) {
		t.Fatalf("the re-gated commit's parents %s lack main's %s", parents, mainTip)
	}
	if msg := r.g.Git("log", "-1", "--format=%s", branch); msg != "Merge main into m1nd/"+id+" for its landing" {
		t.Fatalf("the merge says %q", msg)
	}
	if side, _, _ := runs.ReadSide(r.d.Repo.RuntimeDir(), id); side.Queue != nil {
		t.Fatalf("a ready mission keeps a finding: %+v", side.Queue)
	}
	if got := r.d.queueOnce(ctx); got != "" {
		t.Fatalf("the queue re-gated %s again", got)
	}
	letters := phases(t, r.d, id)

	// A conflict with main: recorded, nothing gated or posted.
	r.g.CommitFiles("main: core changes", map[string]string{"core/a.go": "package core\n\n// main's own\n"})
	if got := r.d.queueOnce(ctx); got != id {
		t.Fatalf("the queue looked at %q, want %s", got, id)
	}
	side, _, _ := runs.ReadSide(r.d.Repo.RuntimeDir(), id)
	if side.Queue == nil || side.Queue.State != runs.QueueConflict || strings.Join(side.Queue.Paths, ",") != "core/a.go" {
		t.Fatalf("the conflict is recorded as %+v", side.Queue)
	}
	if got := phases(t, r.d, id); got != letters {
		t.Fatalf("a conflict posted letters: %s, was %s", got, letters)
	}
	if got := r.d.queueOnce(ctx); got != "" {
		t.Fatalf("the queue looked at the conflict again: %q", got)
	}

	// Main is put back and breaks the gate instead: the gate fails on the
	// merge, recorded with its exit.
	r.g.CommitFiles("main: core back, web broken", map[string]string{"core/a.go": r.g.Git("show", mainTip+":core/a.go") + "\n", "web/index.html": "broken\n"})
	if got := r.d.queueOnce(ctx); got != id {
		t.Fatalf("the queue looked at %q, want %s", got, id)
	}
	side, _, _ = runs.ReadSide(r.d.Repo.RuntimeDir(), id)
	if side.Queue == nil || side.Queue.State != runs.QueueGateFailed || side.Queue.Exit == nil || *side.Queue.Exit != 1 {
		t.Fatalf("the failed gate is recorded as %+v", side.Queue)
	}
	if head, _ := r.d.flows.Current(id); head.Letter.Phase != chain.PhaseMergeWait {
		t.Fatalf("a failed re-gate left the mission %s", head.Letter.Phase)
	}
}
