package ops_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// landBrain is a scanned brain "shop" in a real repository, with no
// passkey: a landing's gesture is the terminal's.
type landBrain struct {
	t      *testing.T
	g      *gittest.Repo
	b      *ops.Flows
	now    time.Time
	runner *pinstest.Runner // runner b1, approved: it signs the merge_waits
}

func newLandBrain(t *testing.T) *landBrain {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	g, b := scannedShop(t, map[string]string{"core/a.go": "package core\n", "README.md": "x\n"}, now)
	lb := &landBrain{t: t, g: g, b: b, now: now, runner: pinstest.Approve(t, repoOf(b), "b1", "go test ./core/...")}
	return lb
}

// mission opens a mission on sb_shop_core; with mergeWait, it is at
// merge_wait with a receipt candidate, as runnerd leaves it.
func (lb *landBrain) mission(mergeWait bool) string {
	t := lb.t
	t.Helper()
	ctx := context.Background()
	opened, err := lb.b.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: lb.now})
	if err != nil {
		t.Fatal(err)
	}
	if !mergeWait {
		return opened.Mission.MissionID
	}
	head, err := lb.b.Current(opened.Mission.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	mw := chain.Next(head.Letter, head.HeadLetterID, lb.now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"gate://" + opened.Mission.MissionID}, Command: "go test ./core/...", Cwd: ".", ExitStatus: &exit,
			StartedAt: lb.now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: lb.now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	att := lb.runner.Sign(t, mw)
	if _, err := lb.b.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		t.Fatal(err)
	}
	return opened.Mission.MissionID
}

// work commits files on m1nd/<id>, cut from the tip of target in a worktree
// of its own, and writes the side record naming target, as runnerd does.
func (lb *landBrain) work(id, target string, files map[string]string) {
	t := lb.t
	t.Helper()
	base := lb.g.Git("rev-parse", "refs/heads/"+target)
	wt := filepath.Join(filepath.Dir(lb.g.Dir), "wt-"+id)
	lb.g.Git("worktree", "add", "-q", "-b", ops.WorkBranch(id), wt, base)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(wt, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lb.g.Git("-C", wt, "add", "-A")
	lb.g.Git("-C", wt, "commit", "-qm", "agent: work of "+id)
	side := &runs.Side{MissionID: id, RunnerID: "b1", Worktree: wt, Branch: ops.WorkBranch(id), Base: base, Target: target, Created: lb.now.Format(time.RFC3339)}
	if err := runs.WriteSide(lb.b.RuntimeDir(), side); err != nil {
		t.Fatal(err)
	}
	lb.gated(id)
}

// gated posts a merge_wait letter after id's head whose gate tested the
// tip of m1nd/<id>, as runnerd does after a gate (or a re-gate) passed.
func (lb *landBrain) gated(id string) {
	t := lb.t
	t.Helper()
	head, err := lb.b.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	branch := ops.WorkBranch(id)
	next := chain.Next(head.Letter, head.HeadLetterID, lb.now)
	next.Phase = chain.PhaseMergeWait
	cand := *next.ReceiptCandidate
	cand.Evidence.EvidenceRefs = []string{"gate://" + id, "commit:" + lb.g.Git("rev-parse", branch), "tree:" + lb.g.Git("rev-parse", branch+"^{tree}")}
	next.ReceiptCandidate = &cand
	att := lb.runner.Sign(t, next)
	if _, err := lb.b.Post(context.Background(), chain.PostRequest{Body: next.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		t.Fatal(err)
	}
}

// land lands id at the terminal (no passkey: the human-tty gesture).
func (lb *landBrain) land(id, into string) (*ops.LandResult, error) {
	return lb.b.Land(context.Background(), ops.LandRequest{MissionID: id, Into: into, Agent: "owner", Origin: rules.OriginHumanTTY, Now: lb.now})
}

// state is everything a landing could write: every ref, every worktree's
// HEAD and status.
func (lb *landBrain) state() string {
	t := lb.t
	t.Helper()
	var s strings.Builder
	s.WriteString(lb.g.Git("for-each-ref", "--format=%(refname) %(objectname)"))
	for _, line := range strings.Split(lb.g.Git("worktree", "list", "--porcelain"), "\n") {
		if wt, ok := strings.CutPrefix(line, "worktree "); ok {
			s.WriteString("\n" + wt + " " + lb.g.Git("-C", wt, "rev-parse", "HEAD") + "\n" + lb.g.Git("-C", wt, "status", "--porcelain"))
		}
	}
	return s.String()
}

// refused asserts that a landing of id is refused code with a lesson
// holding every one of lesson, and that it wrote nothing, dry or not.
func (lb *landBrain) refused(id, into string, code rules.Code, lesson ...string) {
	t := lb.t
	t.Helper()
	before := lb.state()
	for _, dry := range []bool{true, false} {
		var err error
		if dry {
			_, err = lb.b.PlanLanding(context.Background(), id, into)
		} else {
			_, err = lb.b.Land(context.Background(), ops.LandRequest{MissionID: id, Into: into, Agent: "owner", Origin: rules.OriginHumanTTY, Now: lb.now})
		}
		r, ok := rules.AsRefusal(err)
		if !ok || r.Code != code {
			t.Fatalf("land %s (dry run %v): got %v, want refused %s", id, dry, err, code)
		}
		for _, want := range lesson {
			if !strings.Contains(r.Lesson, want) {
				t.Errorf("land %s (dry run %v): the lesson %q does not name %q", id, dry, r.Lesson, want)
			}
		}
	}
	if after := lb.state(); after != before {
		t.Errorf("a refused landing wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestLandRefusesAConflict(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	lb.work(id, "main", map[string]string{"core/a.go": "package core\n\nfunc B() {}\n"})
	lb.g.CommitFiles("main: add C", map[string]string{"core/a.go": "package core\n\nfunc C() {}\n"})
	lb.refused(id, "", rules.MergeConflict, "core/a.go", "m1nd/"+id, "main")
	head, err := lb.b.Current(id)
	if err != nil || head.Letter.Phase != chain.PhaseMergeWait || head.Letter.ReceiptCandidate == nil {
		t.Fatalf("after a conflict the mission should wait with its candidate: %+v, %v", head, err)
	}
}

func TestLandRefusesADirtyWorktreeHoldingTheTarget(t *testing.T) {
	lb := newLandBrain(t)
	feature := filepath.Join(filepath.Dir(lb.g.Dir), "shop-feature")
	lb.g.Git("worktree", "add", "-q", "-b", "feature", feature)
	id := lb.mission(true)
	lb.work(id, "feature", map[string]string{"NOTE.md": "note\n"})
	if err := os.WriteFile(filepath.Join(feature, "README.md"), []byte("edited, not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lb.refused(id, "", rules.WorktreeDirty, "feature is checked out in "+feature, "1 uncommitted change")

	// An untracked file is no obstacle: cleaned, the landing goes through
	// and fast-forwards that worktree.
	lb.g.Git("-C", feature, "checkout", "README.md")
	if err := os.WriteFile(filepath.Join(feature, "scratch.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := lb.land(id, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge != ops.MergeFastForward || !res.Worktree || res.Target != "feature" {
		t.Errorf("got %+v, want a fast-forward of feature in its worktree", res)
	}
	if _, err := os.Stat(filepath.Join(feature, "NOTE.md")); err != nil {
		t.Errorf("the worktree of feature did not move: %v", err)
	}
}

func TestLandRefusesWithoutATarget(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	lb.work(id, "main", map[string]string{"NOTE.md": "note\n"})
	// Spawned from a detached HEAD: no target recorded.
	side, _, _ := runs.ReadSide(lb.b.RuntimeDir(), id)
	side.Target = ""
	if err := runs.WriteSide(lb.b.RuntimeDir(), side); err != nil {
		t.Fatal(err)
	}
	lb.refused(id, "", rules.InvalidTransition, "no target branch is recorded for "+id, "--into")
	// Not spawned here at all: no side record.
	if err := os.Remove(filepath.Join(runs.SideDir(lb.b.RuntimeDir()), id+".json")); err != nil {
		t.Fatal(err)
	}
	lb.refused(id, "", rules.InvalidTransition, "no target branch is recorded for "+id)
}

func TestLandRefusesABadInto(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	lb.work(id, "main", map[string]string{"NOTE.md": "note\n"})
	lb.refused(id, "release", rules.InvalidTransition, "no branch release")
	lb.refused(id, "m1nd/"+id, rules.InvalidTransition, "is not a branch a landing merges into")
	lb.refused(id, "two..dots", rules.InvalidTransition, "is not a branch a landing merges into")
	lb.refused(id, "-f", rules.InvalidTransition, "is not a branch a landing merges into")
}

func TestLandRefusesAMissionNotAtMergeWait(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(false)
	lb.refused(id, "main", rules.InvalidTransition, id+" is at judging")
}

// A mission carried by hand has no work branch here: the landing imports
// its receipt and posts landed, with nothing to merge.
func TestLandWithoutAWorkBranch(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	mainBefore := lb.g.Git("rev-parse", "main")
	plan, err := lb.b.PlanLanding(context.Background(), id, "")
	if err != nil || plan.Resume || plan.Merge != ops.MergeNoBranch || plan.Lands == nil || plan.Lands.MissionID != id || plan.Lands.Target != "" {
		t.Fatalf("the plan: %+v, %v; want a landing of %s with no branch", plan, err, id)
	}
	prepared, version, err := lb.b.PrepareLanding(context.Background(), plan, "owner", lb.now)
	if err != nil || prepared == nil || prepared.Gesture != rules.GestureLand || len(prepared.Change) == 0 {
		t.Fatalf("prepared: %+v, %v; want the landing's gesture", prepared, err)
	}
	dry := struct{ StoreVersion int64 }{version}
	res, err := lb.land(id, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Imported || res.Merge != ops.MergeNoBranch || res.LetterID == "" || res.Commit != "" || res.StoreVersion != dry.StoreVersion {
		t.Errorf("got %+v; want imported at v%d, no branch, a landed letter", res, dry.StoreVersion)
	}
	head, err := lb.b.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	if head.Letter.Phase != chain.PhaseLanded || head.Letter.Receipt == nil || head.Letter.Receipt.StoreVersion != res.StoreVersion || head.HeadLetterID != res.LetterID {
		t.Errorf("the head is %s with receipt %+v; want landed naming v%d", head.Letter.Phase, head.Letter.Receipt, res.StoreVersion)
	}
	mw, err := lb.b.Log(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	mwLetter := mw[len(mw)-2]
	if r, ok, err := storeOf(lb.b).LandingImport(id, mwLetter.LetterID, "sb_shop_core", mwLetter.Decoded.ReceiptCandidate); err != nil || !ok || r.StoreVersion != res.StoreVersion || r.Lands.MissionID != id {
		t.Errorf("the store holds the import for %s at %+v (%v, %v), want v%d", id, r, ok, err, res.StoreVersion)
	}
	if got := lb.g.Git("rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved to %s with nothing to merge", got)
	}
	again, err := lb.land(id, "")
	if err != nil || !again.AlreadyLanded || again.StoreVersion != res.StoreVersion {
		t.Errorf("landing again: %+v, %v; want already landed at v%d", again, err, res.StoreVersion)
	}
}

// Into a branch checked out nowhere, after it moved on: the gate tested a
// commit that does not hold the target's new tip, so the landing is
// refused stale_gate and nothing moves; once the merge of the two is gated
// (what runnerd's queue does: the merge commit on the branch, gated), the
// landing fast-forwards the target to exactly that commit.
func TestLandAfterTheTargetMovedLandsTheGatedMerge(t *testing.T) {
	lb := newLandBrain(t)
	lb.g.Git("branch", "release")
	id := lb.mission(true)
	lb.work(id, "release", map[string]string{"NOTE.md": "note\n"})
	// release moves on, in a worktree gone before the landing.
	tmp := filepath.Join(t.TempDir(), "release")
	lb.g.Git("worktree", "add", "-q", tmp, "release")
	if err := os.WriteFile(filepath.Join(tmp, "CHANGES"), []byte("1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lb.g.Git("-C", tmp, "add", "CHANGES")
	lb.g.Git("-C", tmp, "commit", "-qm", "release moves on")
	lb.g.Git("worktree", "remove", tmp)
	moved := lb.g.Git("rev-parse", "release")
	lb.refused(id, "", rules.StaleGate, "release moved since the gate of "+id, "the merge of the two is gated first")

	// The queue's re-gate: release merged into the branch, gated.
	wt := filepath.Join(filepath.Dir(lb.g.Dir), "wt-"+id)
	lb.g.Git("-C", wt, "merge", "-q", "--no-edit", "release")
	merged := lb.g.Git("rev-parse", "m1nd/"+id)
	lb.gated(id)
	mainBefore, status := lb.g.Git("rev-parse", "main"), lb.g.Git("status", "--porcelain")
	res, err := lb.land(id, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge != ops.MergeFastForward || res.Worktree || res.Commit != merged || lb.g.Git("rev-parse", "release") != merged {
		t.Fatalf("got %+v; want release fast-forwarded to the gated merge %s", res, merged)
	}
	if parents := lb.g.Git("log", "-1", "--format=%P", "release"); !strings.Contains(parents, moved) {
		t.Errorf("the landed merge's parents are %s, want one to be %s", parents, moved)
	}
	if lb.g.Git("rev-parse", "main") != mainBefore || lb.g.Git("status", "--porcelain") != status {
		t.Error("landing into release touched main or its worktree")
	}
}

// A commit on the branch after its gate: stale_gate naming both commits,
// nothing written.
func TestLandRefusesACommitAfterTheGate(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	lb.work(id, "main", map[string]string{"NOTE.md": "note\n"})
	tested := lb.g.Git("rev-parse", "m1nd/"+id)
	wt := filepath.Join(filepath.Dir(lb.g.Dir), "wt-"+id)
	if err := os.WriteFile(filepath.Join(wt, "LATE.md"), []byte("after the gate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lb.g.Git("-C", wt, "add", "LATE.md")
	lb.g.Git("-C", wt, "commit", "-qm", "after the gate")
	late := lb.g.Git("rev-parse", "m1nd/"+id)
	lb.refused(id, "", rules.StaleGate, "m1nd/"+id+" moved since its gate", "the gate tested "+tested[:12], "the branch is at "+late[:12])
}

// After a landing, the block view names the commit the receipt's gate
// tested and counts the block's files the target changed since: none at
// first; one once main edits core/a.go (README.md is not the block's).
func TestBlocksSayWhatAReceiptTested(t *testing.T) {
	lb := newLandBrain(t)
	id := lb.mission(true)
	lb.work(id, "main", map[string]string{"core/b.go": "package core\n"})
	tested := lb.g.Git("rev-parse", "m1nd/"+id)
	if _, err := lb.land(id, ""); err != nil {
		t.Fatal(err)
	}
	changed := func() ops.ReceiptTested {
		t.Helper()
		v, err := lb.b.Blocks(context.Background(), lb.now)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range v.Blocks {
			if b.BlockID == "sb_shop_core" && len(b.Tested) == len(b.Receipts) && len(b.Tested) > 0 {
				return b.Tested[len(b.Tested)-1]
			}
		}
		t.Fatalf("no receipt on sb_shop_core in %+v", v.Blocks)
		return ops.ReceiptTested{}
	}
	for _, step := range []struct {
		name  string
		files map[string]string
		want  int
	}{
		{"just landed", nil, 0},
		{"a file outside the block", map[string]string{"README.md": "y\n"}, 0},
		{"a block file", map[string]string{"core/a.go": "package core\n\nfunc A() {}\n"}, 1},
		{"another block file", map[string]string{"core/b.go": "package core\n\nfunc B() {}\n"}, 2},
	} {
		if step.files != nil {
			lb.g.CommitFiles("main: "+step.name, step.files)
		}
		got := changed()
		if got.Commit != tested || got.ChangedSince == nil || *got.ChangedSince != step.want || got.Against != lb.g.Git("rev-parse", "main") {
			n := -1
			if got.ChangedSince != nil {
				n = *got.ChangedSince
			}
			t.Errorf("%s: tested %s, %d changed against %s; want %s, %d against main", step.name, got.Commit, n, got.Against, tested, step.want)
		}
	}
}
