package runnerd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// A claim proven (DESIGN §10): an agent may post its own merge_wait,
// naming no runner; it is a claim, and nothing lands on it. A human who
// lands it asks runnerd (the side record's Prove) to run an approved
// runner's gate on exactly the tree the claim names. Green, runnerd posts
// the merge_wait that proves it, signed, naming the same commit and tree;
// the landing then proceeds as for any runner's mission (the human
// signs again, over the proven letter). Red, the mission ends failed,
// saying whose claim did not hold.

// writeRecord records this runnerd, with the runners whose gates it can
// sign now, for a landing of a claim to know; it writes only on change.
func (d *Daemon) writeRecord() {
	var provers []string
	for _, r := range runners.BuildRunners(d.config()) {
		if approved, err := d.approval(r); err == nil && approved != nil {
			provers = append(provers, r.ID)
		}
	}
	sort.Strings(provers)
	rec := runs.RunnerdRecord{PID: os.Getpid(), Addr: "127.0.0.1:" + d.port, Provers: provers, Contained: d.Contain.On(), Containment: d.Contain.Describe()}
	if d.record != nil && d.record.Addr == rec.Addr && slices.Equal(d.record.Provers, rec.Provers) {
		return
	}
	if err := runs.WriteRunnerd(d.Repo.RuntimeDir(), rec); err != nil {
		d.Logf("record %s: %v", runs.RunnerdFile, err)
		return
	}
	d.record = &rec
}

// proveOnce runs the approved gate of one claim a human asked to land,
// the oldest asked first, and reports whether it ran one.
func (d *Daemon) proveOnce(ctx context.Context) bool {
	sides, err := runs.ReadSides(d.Repo.RuntimeDir())
	if err != nil {
		return false
	}
	sort.SliceStable(sides, func(i, j int) bool {
		return sides[i].Prove != nil && (sides[j].Prove == nil || sides[i].Prove.At < sides[j].Prove.At)
	})
	for _, side := range sides {
		p := side.Prove
		if p == nil || p.Failed || ctx.Err() != nil {
			continue
		}
		head, err := d.flows.Current(side.MissionID)
		if err != nil || head.Letter.Phase != chain.PhaseMergeWait || head.HeadLetterID != p.Letter {
			continue // proven, failed or moved on since it was asked: nothing to run
		}
		d.prove(ctx, side, head)
		return true
	}
	return false
}

// prove runs runner p.Runner's approved gate on exactly the claim's
// commit, in a worktree of its own, and posts the proven merge_wait or
// the failed letter.
func (d *Daemon) prove(ctx context.Context, side *runs.Side, head *chain.Head) {
	p, id, main := side.Prove, side.MissionID, d.Repo.MainWorkTree()
	runner := d.config().Runner(p.Runner)
	if runner == nil || !runner.ProvesWork() {
		d.proveFailed(side, nil, fmt.Sprintf("runner %s is not pinned here as a build runner", rules.Echo(p.Runner)))
		return
	}
	if _, err := d.approval(runner); err != nil {
		d.proveFailed(side, nil, rules.OneLine(err.Error()))
		return
	}
	lock, _ := d.locks.LoadOrStore(runner.ID, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()

	p.Running = true
	d.writeSide(side)
	d.Logf("prove: running runner %s's approved gate on %s's claim (commit %.12s, tree %.12s)", runner.ID, id, p.Commit, p.Tree)
	wt := worktreePath(main, id) + ".gate"
	removeWorktree(ctx, main, wt)
	// Removed on every way out, a worktree add cut short by a stop too.
	defer removeWorktreeAfter(ctx, main, wt)
	if _, err := gitOutput(ctx, main, "worktree", "add", "-q", "--detach", wt, p.Commit); err != nil {
		d.Logf("prove: %s: worktree: %v", id, err)
		d.proveFailed(side, nil, "the claimed commit could not be checked out (runnerd's log says why)")
		return
	}
	if tree, _ := gitOutput(ctx, wt, "rev-parse", "HEAD^{tree}"); tree != p.Tree {
		d.proveFailed(side, nil, fmt.Sprintf("the claimed commit %.12s holds tree %.12s, not the claimed %.12s", p.Commit, tree, p.Tree))
		return
	}
	env := d.missionEnv(runner, id, head.Letter.BlockID)
	logPath := runs.SideLog(d.Repo.RuntimeDir(), id, runs.LogGate)
	j, release, err := d.jailFor(ctx, runner, wt)
	if err != nil {
		d.Logf("prove: %s: contain: %v", id, err)
		d.proveFailed(side, nil, "the gate could not be contained (runnerd's log says why), so it did not run")
		return
	}
	defer release()
	if runner.SetupCommand != "" {
		if res := d.runIn(ctx, j, wt, env, runner.Timeout(), logPath, nil, false, nil, "sh", "-c", runner.SetupCommand); res.failed() {
			d.proveFailed(side, nil, "setup failed: "+res.describe("setup"))
			return
		}
	}
	start := d.Now()
	gate := d.runIn(ctx, j, wt, env, runner.Timeout(), logPath, nil, false, nil, "sh", "-c", runner.GateCommand)
	started, ended := gateWindow(start, d.Now())
	if gate.stopped || ctx.Err() != nil {
		p.Running = false
		d.writeSide(side) // runnerd stops: the next one runs it again
		return
	}
	work := &settled{commit: p.Commit, tree: p.Tree}
	gateLine, why := gateOutcome(runner, gate)
	if why == "" {
		why = unchangedBy(ctx, wt, work)
	}
	if why != "" {
		d.proveFailed(side, gateLine, why)
		return
	}
	claimant := head.Letter.MissionID
	if a, ok := chain.AgentOf(d.headMessage(head)); ok {
		claimant = a
	}
	err = d.advance(ctx, runner, id, func(l *chain.Letter) {
		l.SetPhase(chain.PhaseMergeWait)
		l.Capability = runners.CapBuild
		l.Gate = gateLine
		l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: fmt.Sprintf("runner %s's approved gate passed on exactly the tree %s claimed (%.12s)", runner.ID, claimant, p.Tree)}
		l.ReceiptCandidate = d.candidate(runner, id, l.BlockID, gateLine, started, ended, gate.log, work)
	})
	if err != nil {
		d.Logf("prove: %s: could not post the proven merge_wait: %v", id, err)
		d.proveFailed(side, gateLine, "the gate passed, but its merge_wait could not be posted: "+rules.OneLine(err.Error()))
		return
	}
	side.Prove, side.RunnerID = nil, runner.ID
	d.writeSide(side)
	d.Logf("prove: %s's claim holds: runner %s's gate passed on %.12s", id, runner.ID, p.Commit)
}

// proveFailed ends a claim the approved gate did not prove: the side
// record says why (the views show it) and the mission ends failed, whose
// claim it was and what the gate said.
func (d *Daemon) proveFailed(side *runs.Side, gateLine *chain.Gate, why string) {
	p := side.Prove
	p.Running, p.Failed, p.Why = false, true, why
	if gateLine != nil && gateLine.ExitStatus != nil {
		exit := int(*gateLine.ExitStatus)
		p.Exit = &exit
	}
	d.writeSide(side)
	d.Logf("prove: %s's claim was not proven: %s", side.MissionID, why)
	runner := d.config().Runner(p.Runner)
	if runner == nil {
		return
	}
	if err := d.advance(d.life, runner, side.MissionID, func(l *chain.Letter) {
		l.SetPhase(chain.PhaseFailed)
		l.Gate, l.ReceiptCandidate = gateLine, nil
		l.Verdict = &chain.Verdict{Decision: "REJECT", Gist: fmt.Sprintf("the claimed gate did not hold: runner %s's approved gate on the claimed tree %.12s: %s", runner.ID, p.Tree, why)}
	}); err != nil {
		d.Logf("prove: %s: could not post failed: %v", side.MissionID, err)
	}
}

// headMessage is the commit message of a mission's head ("" when it does
// not read).
func (d *Daemon) headMessage(head *chain.Head) string {
	c, err := d.Repo.ReadCommit(head.Commit)
	if err != nil {
		return ""
	}
	return c.Message
}
