package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// waiting leaves a mission on block at merge_wait as runnerd does: its
// work branch m1nd/<id> cut from main in a worktree of its own, with one
// commit adding file, the side record naming main, and a merge_wait
// letter whose gate and receipt candidate name that commit. It returns
// the mission id and the worktree.
func waiting(t *testing.T, dir, block, file, body string) (id, wt string) {
	t.Helper()
	ctx := context.Background()
	g := gittest.Open(t, dir)
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	name, err := brain.DisplayName(repo)
	if err != nil {
		t.Fatal(err)
	}
	b := ops.New(repo, name)
	now := time.Now().UTC().Truncate(time.Second)
	opened, err := b.OpenMission(ctx, ops.MissionRequest{BlockID: block, Agent: "runnerd:b1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id = opened.Mission.MissionID
	base := g.Git("rev-parse", "refs/heads/main")
	wt = filepath.Join(t.TempDir(), "wt-"+id)
	g.Git("worktree", "add", "-q", "-b", ops.WorkBranch(id), wt, base)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(wt, file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, file), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	g.Git("-C", wt, "add", "-A")
	g.Git("-C", wt, "commit", "-qm", "agent: work of "+id)
	side := &runs.Side{MissionID: id, RunnerID: "b1", Worktree: wt, Branch: ops.WorkBranch(id), Base: base, Target: "main", Created: now.Format(time.RFC3339)}
	if err := runs.WriteSide(repo.RuntimeDir(), side); err != nil {
		t.Fatal(err)
	}
	head, err := b.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	branch := ops.WorkBranch(id)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: block, Type: "test", Scope: rules.Scope{BlockID: block, BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, Command: "go test ./core/...", Cwd: ".", ExitStatus: &exit,
			EvidenceRefs: []string{"gate://" + id, "commit:" + g.Git("rev-parse", branch), "tree:" + g.Git("rev-parse", branch+"^{tree}")},
			StartedAt:    now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	att := approvedRunner(t, repo).Sign(t, mw)
	if _, err := b.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		t.Fatal(err)
	}
	return id, wt
}

// approvedRunner approves runner b1 of the brain in repo afresh, its pin
// and a new key confirmed at a terminal (an earlier key retires, keeping
// what it signed): it signs the merge_waits the tests post, as runnerd
// does.
func approvedRunner(t *testing.T, repo *gitstore.Repo) *pinstest.Runner {
	t.Helper()
	return pinstest.Approve(t, repo, "b1", "go test ./core/...")
}

// refsState is every ref and the main worktree's HEAD and status: what a
// landing could write.
func refsState(t *testing.T, dir string) string {
	t.Helper()
	return gitOut(t, dir, "for-each-ref", "--format=%(refname) %(objectname)") + "\n" +
		gitOut(t, dir, "rev-parse", "HEAD") + "\n" + gitOut(t, dir, "status", "--porcelain")
}

func TestLandAMergeWaitMission(t *testing.T) {
	dir, block := scanned(t)
	must(t, dir, "", "hooks", "uninstall") // the hook would run an m1nd from PATH
	id, wt := waiting(t, dir, block, "core/a.go", "package core\n\nfunc A() {}\n")
	branch := "m1nd/" + id

	// The view: timeline, gate, work.
	shown := must(t, dir, "", "mission", "show", id).out
	contains(t, shown, "phase       merge_wait", "gate        go test ./core/... · exit 0", "proof       proven by runner b1 (key ", "receipt not landed",
		"\ntimeline\n", "  #1   judging", "  #2   merge_wait",
		"work        "+branch+": 1 commit, 1 file (+3 -0) since ", ", lands in main",
		"agent: work of "+id, "  core/a.go +3 -0", "queue       ready: ", "(m1nd mission diff "+id+" prints the diff)")
	view := jsonOf(t, must(t, dir, "", "mission", "show", id, "--json"))["view"].(map[string]any)
	if work := view["work"].(map[string]any); work["branch"] != branch || work["target"] != "main" {
		t.Fatalf("mission show --json view.work: %v", work)
	}

	diff := must(t, dir, "", "mission", "diff", id).out
	contains(t, diff, "diff --git a/core/a.go b/core/a.go", "+func A() {}")
	stat := must(t, dir, "", "mission", "diff", "--stat", id).out
	contains(t, stat, "core/a.go | 3 +++", "1 file changed")
	if strings.Contains(stat, "diff --git") {
		t.Fatalf("diff --stat printed the diff:\n%s", stat)
	}
	refused(t, m1nd(t, dir, "", "mission", "diff", "msn_000000000000"), "unknown_mission", false)

	// The worktree list names the mission, its phase and branch.
	wts := must(t, dir, "", "worktrees").out
	contains(t, wts, id, "merge_wait", "clean", branch+", 1 commit", wt)
	wj := jsonOf(t, must(t, dir, "", "worktrees", "--json"))
	if ws, _ := wj["worktrees"].([]any); wj["ok"] != true || len(ws) != 1 {
		t.Fatalf("worktrees --json: %v", wj)
	}

	// Not at a terminal: no gesture, nothing written, text or JSON.
	before := refsState(t, dir)
	refused(t, m1nd(t, dir, "", "land", id), "human_gesture_required", false)
	refused(t, m1nd(t, dir, "", "land", "--json", id), "human_gesture_required", true)
	// A wrong answer at the terminal is no gesture either.
	refused(t, m1ndTTY(t, dir, "sb_other\n", "land", id), "human_gesture_required", false)
	if after := refsState(t, dir); after != before {
		t.Fatalf("a refused landing wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	tip := gitOut(t, dir, "rev-parse", branch)
	landed := m1ndTTY(t, dir, block+"\n", "land", id)
	if landed.code != 0 {
		t.Fatalf("land at a terminal: exit %d\n%s%s", landed.code, landed.out, landed.err)
	}
	contains(t, landed.out, "Land "+id+"?", "This binds mission "+id+" (block "+block+")", "Type "+block+" to confirm",
		"landed "+id+": receipt imported into "+block+" at store v2",
		"fast-forward "+branch+" into main: main is now "+tip[:12]+" (its worktree updated)")
	if got := gitOut(t, dir, "rev-parse", "main"); got != tip {
		t.Fatalf("main at %s after the landing, want the branch tip %s", got, tip)
	}
	if body, err := os.ReadFile(filepath.Join(dir, "core/a.go")); err != nil || !strings.Contains(string(body), "func A() {}") {
		t.Fatalf("the main worktree was not updated: %q %v", body, err)
	}
	if got := gitOut(t, dir, "cat-file", "blob", "refs/m1nd/missions/"+id+":letter.json"); !strings.Contains(got, `"phase":"landed"`) {
		t.Fatalf("head letter after the landing: %s", got)
	}
	contains(t, must(t, dir, "", "mission", "show", id).out, "phase       landed", "receipt     ✓ store v2")

	// The block's receipt names the commit it tested; a later commit on
	// main that touches the block says so.
	contains(t, must(t, dir, "", "blocks").out, block, "tested "+tip[:12]+" · none of the block's files changed on the target since")
	gittest.Open(t, dir).CommitFiles("main: touch core", map[string]string{"core/core.go": "package core\n\n// touched\n"})
	contains(t, must(t, dir, "", "blocks").out, "tested "+tip[:12]+" · 1 of the block's files changed on the target since")

	// Landing again: nothing left to do, in text and JSON.
	contains(t, must(t, dir, "", "land", id).out, id+" is already landed (receipt in store v2)")
	again := jsonOf(t, must(t, dir, "", "land", "--json", id))
	if again["ok"] != true || again["already_landed"] != true || again["store_version"] != float64(2) {
		t.Fatalf("land --json a landed mission: %v", again)
	}

	// Prune: the clean worktree goes, then the merged branch of the
	// landed mission.
	pruned := must(t, dir, "", "worktrees", "prune").out
	contains(t, pruned, "removed 1 worktree", "  "+id, "deleted 1 branch of ended missions, merged into their targets")
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree %s is still there: %v", wt, err)
	}
	if out, err := execGit(dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output(); err == nil {
		t.Fatalf("%s still exists at %s", branch, out)
	}
	pj := jsonOf(t, must(t, dir, "", "worktrees", "prune", "--json"))
	if rm, _ := pj["removed"].([]any); pj["ok"] != true || len(rm) != 0 {
		t.Fatalf("prune again: %v", pj)
	}
	contains(t, must(t, dir, "", "worktrees").out, id, "removed")

	// Fold: the landed mission leaves the live refs for the archive.
	fold := must(t, dir, "", "mission", "fold", "--older-than", "0").out
	contains(t, fold, "folded 1 mission in 1 fold into "+chain.ArchiveRef+"; 1 live ref removed", "0 missions live, 1 mission in the archive")
	if out, err := execGit(dir, "rev-parse", "--verify", "-q", "refs/m1nd/missions/"+id).Output(); err == nil {
		t.Fatalf("the live ref of %s survived the fold: %s", id, out)
	}
	gitOut(t, dir, "rev-parse", "--verify", chain.ArchiveRef)
	contains(t, must(t, dir, "", "mission", "show", id).out, "folded      into "+chain.ArchiveRef, "phase       landed")
	fj := jsonOf(t, must(t, dir, "", "mission", "fold", "--older-than", "0", "--json"))
	if f, _ := fj["folded"].([]any); fj["ok"] != true || len(f) != 0 || fj["archived"] != float64(1) {
		t.Fatalf("fold again: %v", fj)
	}
	if res := m1nd(t, dir, "", "mission", "fold", "--older-than", "soon"); res.code != exitUsage || !strings.Contains(res.err, "--older-than") {
		t.Fatalf("fold --older-than soon: exit %d, stderr %q", res.code, res.err)
	}
}

func TestLandAConflictAndNoWorktrees(t *testing.T) {
	dir, block := scanned(t)
	must(t, dir, "", "hooks", "uninstall")
	contains(t, must(t, dir, "", "worktrees").out, "no mission worktrees")
	contains(t, must(t, dir, "", "worktrees", "prune").out, "removed 0 worktrees")

	id, _ := waiting(t, dir, block, "core/core.go", "package core\n\nfunc B() {}\n")
	g := gittest.Open(t, dir)
	g.CommitFiles("main: add C", map[string]string{"core/core.go": "package core\n\nfunc C() {}\n"})
	before := refsState(t, dir)
	res := m1ndTTY(t, dir, block+"\n", "land", id)
	refused(t, res, "merge_conflict", false)
	contains(t, res.err, "m1nd/"+id+" does not merge cleanly into main: core/core.go conflict")
	if after := refsState(t, dir); after != before {
		t.Fatalf("a conflicting landing wrote:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	contains(t, must(t, dir, "", "mission", "show", id).out, "phase       merge_wait")
	refused(t, m1nd(t, dir, "", "land", "--json", "msn_000000000000"), "unknown_mission", true)
}
