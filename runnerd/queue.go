package runnerd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// The landing queue (DESIGN §10): a mission waits in merge_wait with the
// commit its gate tested. It is ready while its branch is still at that
// commit and the commit holds its target's head: landing it is then a
// fast-forward of the target to exactly the tested commit. When the target
// moves (a landing, a push) or the branch does, runnerd re-gates it, in the
// order the missions came to wait: the target is merged into the branch
// (a conflict is recorded with its paths, and nothing is gated), the
// mission's gate runs on that commit in a worktree of its own, and a new
// merge_wait letter names it. A gate that fails on the merge is recorded
// with its output, and the mission waits, never ready, until its branch
// or its target moves again. What the queue found lives in the mission's
// side record (runs.QueueState), for the tray and `mission show`.

// QueueInterval is how often runnerd looks at the missions that wait.
const QueueInterval = time.Second

// queueWatch is how often the queue stats the refs it leans on (the
// mission refs, the branches, the side records: a few stats) to look again
// at once when one moved, rather than at the next interval: a landing that
// moves a target starts the re-gates behind it within this.
const queueWatch = 25 * time.Millisecond

// queueLoop looks at the waiting missions every interval, and whenever the
// refs it leans on move, until ctx ends.
func (d *Daemon) queueLoop(ctx context.Context, interval time.Duration) {
	watch := min(queueWatch, interval)
	t := time.NewTicker(watch)
	defer t.Stop()
	var seen string
	last := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stamp := d.queueStamp()
		if stamp == seen && time.Since(last) < interval {
			continue
		}
		// The stamp is read before the look: a move during the look shows
		// as a new stamp at the next tick.
		seen, last = stamp, time.Now()
		d.queueOnce(ctx)
	}
}

// queueStamp summarises the mission refs, the branches and the side
// records ("" when they cannot be read: the interval's look stands).
func (d *Daemon) queueStamp() string {
	missions, err := d.Repo.RefsFolderStamp(chain.MissionRefPrefix)
	if err != nil {
		return ""
	}
	queue, err := ops.QueueStamp(d.Repo)
	if err != nil {
		return ""
	}
	return missions.Join(queue).Key
}

// waiting is one mission in merge_wait with a work branch on this machine.
type waiting struct {
	head   *chain.Head
	side   *runs.Side
	tested string // the commit its gate tested
}

// queueOnce re-gates, in order, the first waiting mission whose gate no
// longer tested what would land; the others wait for the next look. It
// returns the mission it re-gated ("" for none).
func (d *Daemon) queueOnce(ctx context.Context) string {
	d.writeRecord()
	// One read of the heads serves the reviews and the queue.
	view, err := d.flows.HeadsIn(ctx, chain.PhaseMergeWait, chain.PhaseReview)
	if err != nil {
		if ctx.Err() == nil { // a daemon asked to stop has nothing to report
			d.Logf("queue: read the heads: %v", err)
		}
		return ""
	}
	d.reviewOnce(view.Missions)
	if d.proveOnce(ctx) {
		return ""
	}
	var queue []waiting
	for _, h := range view.Missions {
		if h.Phase != chain.PhaseMergeWait {
			continue
		}
		side, ok, err := runs.ReadSide(d.Repo.RuntimeDir(), h.MissionID)
		if err != nil || !ok || side.Target == "" || h.Letter.ReceiptCandidate == nil || h.Letter.RunnerID == nil {
			continue
		}
		if tested, _ := h.Letter.ReceiptCandidate.Evidence.Tested(); tested != "" {
			queue = append(queue, waiting{head: h, side: side, tested: tested})
		}
	}
	// In the order the missions came to wait: their gate's window.
	sort.SliceStable(queue, func(i, j int) bool {
		return queue[i].head.Letter.ReceiptCandidate.Evidence.EndedAt < queue[j].head.Letter.ReceiptCandidate.Evidence.EndedAt
	})
	for _, w := range queue {
		if ctx.Err() != nil {
			return ""
		}
		if d.needsRegate(ctx, w) {
			d.regate(ctx, w)
			return w.head.MissionID
		}
	}
	return ""
}

// needsRegate reports whether w's gate tested something other than what
// would land now, and no finding of the queue already stands for the
// branch and target as they are.
func (d *Daemon) needsRegate(ctx context.Context, w waiting) bool {
	branch, target, err := d.queueHeads(ctx, w.side)
	if err != nil {
		return false
	}
	if branch == w.tested {
		if holds, err := isAncestor(ctx, d.Repo.MainWorkTree(), target, branch); err == nil && holds {
			if w.side.Queue != nil { // ready again: the finding no longer holds
				w.side.Queue = nil
				d.writeSide(w.side)
			}
			return false
		}
	}
	q := w.side.Queue
	if q != nil && q.State != runs.QueueRegating && q.Branch == branch && q.TargetHead == target {
		return false // a conflict, a failed gate, no runner: already found for these heads
	}
	return true
}

// queueHeads are the heads of a waiting mission's branch and target.
func (d *Daemon) queueHeads(ctx context.Context, side *runs.Side) (branch, target string, err error) {
	main := d.Repo.MainWorkTree()
	if branch, err = gitOutput(ctx, main, "rev-parse", "--verify", "-q", "refs/heads/"+side.Branch); err != nil {
		return "", "", err
	}
	target, err = gitOutput(ctx, main, "rev-parse", "--verify", "-q", "refs/heads/"+side.Target)
	return branch, target, err
}

// regate merges w's target into its branch (when the branch does not hold
// it), gates that commit in a worktree of its own, and posts the
// merge_wait letter naming it; or records why not.
func (d *Daemon) regate(ctx context.Context, w waiting) {
	id, side := w.head.MissionID, w.side
	main := d.Repo.MainWorkTree()
	branch, target, err := d.queueHeads(ctx, side)
	if err != nil {
		return
	}
	r := &regating{w: w, main: main, branch: branch, target: target}
	if r.runner = d.regateRunner(r); r.runner == nil {
		return
	}
	lock, _ := d.locks.LoadOrStore(r.runner.ID, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()

	var ok bool
	if r.gated, ok = d.regateCommit(ctx, r); !ok {
		return
	}
	d.queueFound(r, &runs.QueueState{State: runs.QueueRegating, Commit: r.gated, Branch: r.gated})
	d.Logf("queue: re-gating %s at %.12s (%s at %.12s)", id, r.gated, side.Target, target)

	wt := worktreePath(main, id) + ".gate"
	removeWorktree(ctx, main, wt)
	// Removed on every way out, a worktree add cut short by a stop too.
	defer removeWorktreeAfter(ctx, main, wt)
	if _, err := gitOutput(ctx, main, "worktree", "add", "-q", "--detach", wt, r.gated); err != nil {
		d.Logf("queue: %s: worktree: %v", id, err)
		return
	}
	d.gateRegate(ctx, r, wt)
}

// regating is one re-gate under way: every finding is recorded against the
// heads the queue read when it began.
type regating struct {
	w              waiting
	main           string          // the main worktree, where git runs
	branch, target string          // the heads of the mission's branch and target
	runner         *runners.Runner // the mission's runner: it re-gates it
	gated          string          // the commit the re-gate tests
}

// queueFound records in the mission's side record what the queue found of
// it at r's heads, for the tray and `mission show`.
func (d *Daemon) queueFound(r *regating, q *runs.QueueState) {
	side := r.w.side
	q.Target, q.TargetHead, q.At = side.Target, r.target, chain.Timestamp(d.Now())
	if q.Branch == "" {
		q.Branch = r.branch
	}
	side.Queue = q
	d.writeSide(side)
}

// regateRunner is the runner that re-gates r: the one that ran the
// mission, pinned here as a build runner and approved. nil when there is
// none, recorded as no_runner with why.
func (d *Daemon) regateRunner(r *regating) *runners.Runner {
	letter := r.w.head.Letter
	runner := d.config().Runner(*letter.RunnerID)
	if runner == nil || !runner.ProvesWork() {
		d.queueFound(r, &runs.QueueState{State: runs.QueueNoRunner, Why: fmt.Sprintf("runner %s is not pinned as a build runner here: nothing can re-gate %s", rules.Echo(*letter.RunnerID), r.w.head.MissionID)})
		return nil
	}
	if _, err := d.approval(runner); err != nil {
		why := err.Error()
		if refusal, ok := rules.AsRefusal(err); ok {
			why = refusal.Lesson
		}
		d.queueFound(r, &runs.QueueState{State: runs.QueueNoRunner, Why: why})
		return nil
	}
	return runner
}

// regateCommit is the commit r's gate tests, and false when there is none:
// a merge that conflicts is recorded with its paths, any other failure
// goes to runnerd's log.
func (d *Daemon) regateCommit(ctx context.Context, r *regating) (string, bool) {
	id, side, main := r.w.head.MissionID, r.w.side, r.main
	// The commit to gate: the branch, holding the target, or the merge of
	// the two, made here and put on the branch.
	if holds, err := isAncestor(ctx, main, r.target, r.branch); err != nil {
		return "", false
	} else if holds {
		return r.branch, true
	}
	out, code, err := gitExit(ctx, main, "merge-tree", "--write-tree", "--name-only", "--no-messages", r.branch, r.target)
	lines := strings.Split(out, "\n")
	switch {
	case code == 1 && len(lines) > 1:
		d.queueFound(r, &runs.QueueState{State: runs.QueueConflict, Paths: lines[1:]})
		d.Logf("queue: %s conflicts with %s: %s", id, side.Target, strings.Join(lines[1:], ", "))
		return "", false
	case err != nil:
		d.Logf("queue: merge %s with %s: %v", id, side.Target, err)
		return "", false
	}
	gated, err := d.mergeCommit(ctx, r.runner, r.w, lines[0], r.branch, r.target)
	if err != nil {
		d.Logf("queue: %s: %v", id, err)
		return "", false
	}
	return gated, true
}

// gateRegate runs the mission's setup and gate on r's commit, checked out
// in wt, and records a failure; a green gate makes the mission ready
// again.
func (d *Daemon) gateRegate(ctx context.Context, r *regating, wt string) {
	id, runner := r.w.head.MissionID, r.runner
	env := d.missionEnv(runner, id, r.w.head.Letter.BlockID)
	logPath := runs.SideLog(d.Repo.RuntimeDir(), id, runs.LogRegate)
	j, release, err := d.jailFor(ctx, runner, wt)
	if err != nil {
		d.Logf("queue: %s: contain: %v", id, err)
		return
	}
	defer release()
	if runner.SetupCommand != "" {
		if res := d.runIn(ctx, j, wt, env, runner.Timeout(), logPath, nil, false, nil, "sh", "-c", runner.SetupCommand); res.failed() {
			exit := res.exit
			d.queueFound(r, &runs.QueueState{State: runs.QueueGateFailed, Branch: r.gated, Commit: r.gated, Exit: &exit, Why: "setup failed: " + res.describe("setup")})
			return
		}
	}
	start := d.Now()
	gate := d.runIn(ctx, j, wt, env, runner.Timeout(), logPath, nil, false, nil, "sh", "-c", runner.GateCommand)
	started, ended := gateWindow(start, d.Now())
	if gate.stopped || ctx.Err() != nil {
		return // runnerd stops: the next one re-gates it
	}
	tree, _ := gitOutput(ctx, wt, "rev-parse", "HEAD^{tree}")
	work := &settled{commit: r.gated, tree: tree}
	changed := unchangedBy(ctx, wt, work)
	// The gate's worktree goes before the mission is ready again: a
	// runnerd stopped right after the ready mark must leave none behind.
	removeWorktreeAfter(ctx, r.main, wt)
	if gate.err != nil || gate.timedOut || gate.exit != 0 || changed != "" {
		exit := gate.exit
		why := gate.describe("gate")
		if changed != "" {
			why = changed
		}
		d.queueFound(r, &runs.QueueState{State: runs.QueueGateFailed, Branch: r.gated, Commit: r.gated, Exit: &exit, Why: why})
		d.Logf("queue: the gate of %s failed on %.12s: %s", id, r.gated, why)
		return
	}
	d.readyAgain(ctx, r, gate, work, started, ended, logPath)
}

// readyAgain posts the merge_wait letter of r's green gate, naming the
// commit it tested, and clears the queue's finding: the mission is ready.
func (d *Daemon) readyAgain(ctx context.Context, r *regating, gate result, work *settled, started, ended time.Time, logPath string) {
	id, side, runner := r.w.head.MissionID, r.w.side, r.runner
	sum := sha256.Sum256(gate.log)
	exit := int64(0)
	gateLine := &chain.Gate{Command: runner.GateCommand, ExitStatus: &exit, ArtifactHash: "sha256:" + hex.EncodeToString(sum[:])}
	err := d.advance(ctx, runner, id, func(l *chain.Letter) {
		l.SetPhase(chain.PhaseMergeWait)
		l.Gate = gateLine
		l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: fmt.Sprintf("gate green on %.12s, which holds %s at %.12s", r.gated, side.Target, r.target)}
		l.ReceiptCandidate = d.candidate(runner, id, l.BlockID, gateLine, started, ended, gate.log, work)
	})
	if err != nil {
		d.Logf("queue: %s: could not post merge_wait: %v", id, err)
		return
	}
	// Gate logs are read as the mission's: the re-gate's is the gate's now.
	if err := os.Rename(logPath, runs.SideLog(d.Repo.RuntimeDir(), id, runs.LogGate)); err != nil {
		d.Logf("queue: %s: %v", id, err)
	}
	side.Queue = nil
	d.writeSide(side)
	d.Logf("queue: %s is ready again: gated at %.12s", id, r.gated)
}

// mergeCommit writes the merge of the target (at target) into the work
// branch (at branch) as tree, by the mission's runner, and moves the
// branch to it by compare-and-swap (in its worktree, when one is kept).
func (d *Daemon) mergeCommit(ctx context.Context, runner *runners.Runner, w waiting, tree, branch, target string) (string, error) {
	id, side := w.head.MissionID, w.side
	sig, err := chain.Signature(d.agent(runner), d.Now())
	if err != nil {
		return "", err
	}
	env := []string{"GIT_AUTHOR_NAME=" + sig.Name, "GIT_AUTHOR_EMAIL=" + sig.Email, "GIT_COMMITTER_NAME=" + sig.Name, "GIT_COMMITTER_EMAIL=" + sig.Email}
	msg := fmt.Sprintf("Merge %s into %s for its landing\n\n%s\n\nrunnerd merged the target into the mission's branch so that its gate\nruns on exactly what the landing puts on %s.\n\nM1nd-Mission: %s\n",
		side.Target, side.Branch, askOf(d.Repo.RuntimeDir(), id), side.Target, id)
	main := d.Repo.MainWorkTree()
	commit, err := gitEnv(ctx, main, env, "commit-tree", tree, "-p", branch, "-p", target, "-m", msg)
	if err != nil {
		return "", err
	}
	if kept := side.Worktree; kept != "" && !side.Removed {
		if _, err := os.Stat(kept); err == nil {
			if _, err := gitOutput(ctx, kept, "merge", "--ff-only", "-q", commit); err != nil {
				return "", fmt.Errorf("fast-forward the kept worktree to the merge: %w", err)
			}
			return commit, nil
		}
	}
	if _, err := gitOutput(ctx, main, "update-ref", "-m", "m1nd queue: merge "+side.Target, "refs/heads/"+side.Branch, commit, branch); err != nil {
		return "", fmt.Errorf("move %s to the merge: %w", side.Branch, err)
	}
	return commit, nil
}

// askOf is the first line of a mission's ask (its packet's "What should
// change?"), "" when none is kept here.
func askOf(runtimeDir, missionID string) string {
	data, err := keptPacket(runtimeDir, missionID)
	if err != nil {
		return ""
	}
	return brain.AskLine(data)
}

// keptPacket is a mission's first packet, its ask, as runnerd keeps it
// beside the side record.
func keptPacket(runtimeDir, missionID string) ([]byte, error) {
	return gitstore.ReadRuntime(runs.SidePacket(runtimeDir, missionID), 1<<20)
}

// removeWorktree removes a re-gate's worktree and what it left, whatever
// state it is in.
func removeWorktree(ctx context.Context, main, wt string) {
	gitOutput(ctx, main, "worktree", "remove", "--force", wt)
	os.RemoveAll(wt)
	gitOutput(ctx, main, "worktree", "prune")
}

// removeWorktreeAfter removes a worktree even when ctx was cancelled: a
// stopping runnerd leaves none behind, within its grace.
func removeWorktreeAfter(ctx context.Context, main, wt string) {
	ctx, cancel := lingering(ctx, 0)
	defer cancel()
	removeWorktree(ctx, main, wt)
}

// writeSide records a side record, saying so in the log when it cannot.
func (d *Daemon) writeSide(side *runs.Side) {
	if err := runs.WriteSide(d.Repo.RuntimeDir(), side); err != nil {
		d.Logf("mission %s: side record: %v", side.MissionID, err)
	}
}

// isAncestor reports whether commit a is an ancestor of (or is) c.
func isAncestor(ctx context.Context, dir, a, c string) (bool, error) {
	_, code, err := gitExit(ctx, dir, "merge-base", "--is-ancestor", a, c)
	switch {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	}
	return false, err
}

// gitExit runs git in dir: its output, exit code and error.
func gitExit(ctx context.Context, dir string, args ...string) (string, int, error) {
	return gitstore.GitCmd{Dir: dir}.Run(ctx, args...)
}
