package runnerd

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/runners"
)

// A review goes back to the agent (DESIGN §10): a review letter that
// requests changes (ops.Review) at the head of a mission one of this
// runnerd's runners worked on here starts a new round. runnerd runs the
// mission's pinned agent again in the same worktree and on the same branch
// (the worktree made again from the branch when it was tidied away), its
// packet the original ask followed by the review as the agent was sent it,
// and the mission goes review → executing → gate → merge_wait (or failed),
// each letter runnerd's, the gate on the new commit. A failed mission
// retried by a review goes the same way.

// MaxRounds caps the rounds of one mission: a review past it ends the
// mission failed rather than running the agent again, so no loop of
// reviews runs agents for ever.
const MaxRounds = 20

// packetReviewRule separates the ask from the review in a round's packet.
const packetReviewRule = "\n\n---\n\n"

// reviewOnce starts a round for every mission among heads that waits on a
// review that requests changes and that a runner of this runnerd worked
// on here.
func (d *Daemon) reviewOnce(heads []*chain.Head) {
	for _, h := range heads {
		l := h.Letter
		if h.Fault != nil || l.RunnerID == nil || !chain.RequestsChanges(l) {
			continue
		}
		runner := d.config().Runner(*l.RunnerID)
		if runner == nil || runner.Capability != runners.CapBuild {
			continue
		}
		side, ok, err := runs.ReadSide(d.Repo.RuntimeDir(), h.MissionID)
		if err != nil || !ok {
			continue // another machine's runner worked on it: its runnerd answers
		}
		if _, busy := d.rounds.LoadOrStore(h.MissionID, true); busy {
			continue
		}
		id, block := h.MissionID, l.BlockID
		d.runFor(runner, func() {
			defer d.rounds.Delete(id)
			d.rerun(d.life, runner, side, block)
		})
	}
}

// rerun runs the round a review started: the review as the agent was sent
// it, the worktree back on the branch, the executing letter, then the
// round (run.go). Every path ends in a letter.
func (d *Daemon) rerun(ctx context.Context, runner *runners.Runner, side *runs.Side, blockID string) {
	missionID := side.MissionID
	// Another round may have moved the head meanwhile: only a head that
	// still requests changes starts one.
	log, err := d.flows.Log(ctx, missionID)
	if err != nil || len(log) == 0 || !chain.RequestsChanges(log[len(log)-1].Decoded) {
		return
	}
	text, r, ok, err := d.flows.ReviewText(ctx, log[len(log)-1], d.agent(runner))
	switch {
	case err != nil:
		d.Logf("mission %s: read the review: %v", missionID, err)
		return // the next look tries again
	case !ok:
		d.fail(ctx, runner, missionID, "the review's letter to "+d.agent(runner)+" is not in this clone's mail (m1nd sync, then review again)", nil)
		return
	case r.Round >= MaxRounds:
		d.fail(ctx, runner, missionID, fmt.Sprintf("%d rounds were reviewed: runnerd runs no more (open a new mission)", r.Round), nil)
		return
	}
	if why := d.reopenWorktree(ctx, side); why != "" {
		d.fail(ctx, runner, missionID, why, nil)
		return
	}
	if err := d.advance(ctx, runner, missionID, func(l *chain.Letter) { l.SetPhase(chain.PhaseExecuting) }); err != nil {
		d.Logf("mission %s: could not post executing: %v", missionID, err)
		return
	}
	since := r.Commit
	if since == "" {
		since = side.Base
	}
	d.round(ctx, runner, side, blockID, packetOf(d.Repo.RuntimeDir(), missionID)+packetReviewRule+text, since)
}

// reopenWorktree puts the mission's worktree back on its branch for a new
// round: the one that is there when it is on the branch, else made again
// from the branch (the first round's tidy removed it). It says why not
// ("" when ready).
func (d *Daemon) reopenWorktree(ctx context.Context, side *runs.Side) string {
	if fi, err := os.Stat(side.Worktree); err == nil && fi.IsDir() {
		if head, err := gitOutput(ctx, side.Worktree, "symbolic-ref", "-q", "HEAD"); err != nil || head != "refs/heads/"+side.Branch {
			return "the mission's worktree is off " + side.Branch + ": runnerd works on the branch it gated"
		}
		return ""
	}
	main := d.Repo.MainWorkTree()
	if _, ok, err := d.flows.WorkTip(side.MissionID); err != nil || !ok {
		return "the work branch " + side.Branch + " is gone: there is no work to answer the review on"
	}
	// A worktree removed by hand leaves git's record of it behind.
	gitOutput(ctx, main, "worktree", "prune")
	if _, err := gitOutput(ctx, main, "worktree", "add", "-q", side.Worktree, side.Branch); err != nil {
		d.Logf("mission %s: %v", side.MissionID, err)
		return "worktree add failed (runnerd's log says why)"
	}
	if _, err := githook.Guard(ctx, d.Repo, side.Worktree, d.selfPath()); err != nil {
		d.Logf("mission %s: the worktree is not guarded: %v", side.MissionID, err)
	}
	side.Removed = false
	if err := runs.WriteSide(d.Repo.RuntimeDir(), side); err != nil {
		d.Logf("mission %s: side record: %v", side.MissionID, err)
	}
	return ""
}

// packetOf is the mission's first packet, its ask, as a round's packet
// begins with it.
func packetOf(runtimeDir, missionID string) string {
	data, err := keptPacket(runtimeDir, missionID)
	if err != nil {
		return "(the mission's ask is not kept on this machine: m1nd mission show " + missionID + ")"
	}
	return strings.TrimRight(string(data), "\n")
}
