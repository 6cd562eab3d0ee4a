package runnerd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// packetFile is the packet's name inside a mission worktree.
const packetFile = "m1nd-mission-packet.md"

// worktreePath is where a mission's worktree goes: a sibling of the main
// worktree, <parent>/<repo>.m1nd/<mission_id>, never inside the repository.
func worktreePath(mainWorktree, missionID string) string {
	return filepath.Join(filepath.Dir(mainWorktree), filepath.Base(mainWorktree)+".m1nd", missionID)
}

// run carries one mission from executing to merge_wait or failed. Every
// path ends in a letter: never silence.
func (d *Daemon) run(ctx context.Context, runner *runners.Runner, missionID, blockID, packetMarkdown string) {
	side, why := d.addWorktree(ctx, runner, missionID)
	if why != "" {
		d.fail(ctx, runner, missionID, why, nil)
		return
	}
	if err := d.advance(ctx, runner, missionID, func(l *chain.Letter) { l.SetPhase(chain.PhaseExecuting) }); err != nil {
		d.Logf("mission %s: could not post executing: %v", missionID, err)
		return
	}
	// The mission view shows the ask: a copy stays beside the side record.
	if err := gitstore.WriteFileAtomic(runs.SidePacket(d.Repo.RuntimeDir(), missionID), []byte(packetMarkdown), 0o600); err != nil {
		d.Logf("mission %s: packet copy: %v", missionID, err)
	}
	d.round(ctx, runner, side, blockID, packetMarkdown, side.Base)
}

// round runs the agent on packet in the mission's worktree (its executing
// letter posted), gates what it committed since the commit since, and
// posts merge_wait or failed: the first round of a mission, and each
// round a review that requested changes starts (rerun).
func (d *Daemon) round(ctx context.Context, runner *runners.Runner, side *runs.Side, blockID, packetMarkdown, since string) {
	missionID := side.MissionID
	// From here on the worktree exists: a failure says what became of it.
	failTidy := func(gist string, gate *chain.Gate) { d.fail(ctx, runner, missionID, gist+d.tidy(ctx, side), gate) }
	packet, err := d.placePacket(missionID, side.Worktree, packetMarkdown)
	if err != nil {
		d.Logf("mission %s: %v", missionID, err)
		failTidy("packet write failed (runnerd's log says why)", nil)
		return
	}
	env := d.missionEnv(runner, missionID, blockID)
	j, release, err := d.jailFor(ctx, runner, side.Worktree)
	if err != nil {
		d.Logf("mission %s: contain: %v", missionID, err)
		failTidy("the agent could not be contained (runnerd's log says why), so it did not run", nil)
		return
	}
	defer release()
	if why := d.runAgent(ctx, runner, side, j, env, packet); why != "" {
		failTidy(why, nil)
		return
	}
	// The gate binds a commit: what it tests is one commit on the branch.
	work, why := d.settleWork(ctx, runner, side.Worktree, side.Branch, since, since != side.Base)
	if why != "" {
		failTidy(why, nil)
		return
	}
	if err := d.advance(ctx, runner, missionID, func(l *chain.Letter) { l.SetPhase(chain.PhaseGate) }); err != nil {
		d.Logf("mission %s: could not post gate: %v", missionID, err)
		return
	}
	start := d.Now()
	gate := d.runIn(ctx, j, side.Worktree, env, runner.Timeout(), runs.SideLog(d.Repo.RuntimeDir(), missionID, runs.LogGate), nil, false, nil, "sh", "-c", runner.GateCommand)
	started, ended := gateWindow(start, d.Now())
	gateLine, why := gateOutcome(runner, gate)
	if why == "" {
		why = unchangedBy(ctx, side.Worktree, work)
	}
	if why != "" {
		failTidy(why, gateLine)
		return
	}
	kept := d.tidy(ctx, side)
	if work.committed {
		kept = "; runnerd committed the work the agent left uncommitted" + kept
	}
	err = d.advance(ctx, runner, missionID, func(l *chain.Letter) {
		l.SetPhase(chain.PhaseMergeWait)
		l.Gate = gateLine
		l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: "gate green" + kept}
		l.ReceiptCandidate = d.candidate(runner, missionID, blockID, gateLine, started, ended, gate.log, work)
	})
	if err != nil {
		d.Logf("mission %s: could not post merge_wait: %v", missionID, err)
		if refusal, ok := rules.AsRefusal(err); ok && refusal.Code == rules.UnpinnedRunner {
			d.fail(ctx, runner, missionID, "the gate passed, but runner "+runner.ID+"'s pin is no longer the approved one, so runnerd signs nothing: approve it again and spawn anew", gateLine)
		}
	}
}

// addWorktree makes a mission's worktree, on a new work branch at the main
// worktree's HEAD, and the side record that names them. It says why not
// ("" when made): the mission fails with that, and nothing is left to tidy.
func (d *Daemon) addWorktree(ctx context.Context, runner *runners.Runner, missionID string) (*runs.Side, string) {
	main := d.Repo.MainWorkTree()
	if main == "" {
		return nil, "no workspace: the brain is a bare repository"
	}
	wt := worktreePath(main, missionID)
	branch := ops.WorkBranch(missionID)
	base, err := gitOutput(ctx, main, "rev-parse", "HEAD")
	if err != nil {
		return nil, "not a git repo with a commit to start from"
	}
	// Details of a failure name host paths: they go to runnerd's log, and
	// the letter says what failed.
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		d.Logf("mission %s: %v", missionID, err)
		return nil, "worktree add failed: its folder could not be made (runnerd's log says why)"
	}
	if _, err := gitOutput(ctx, main, "worktree", "add", "-q", "-b", branch, wt, base); err != nil {
		d.Logf("mission %s: %v", missionID, err)
		return nil, "worktree add failed (runnerd's log says why)"
	}
	// The agent writes here: raw git writes to refs/m1nd/ meet the guard.
	if _, err := githook.Guard(ctx, d.Repo, wt, d.selfPath()); err != nil {
		d.Logf("mission %s: the worktree is not guarded: %v", missionID, err)
	}
	target, _ := gitOutput(ctx, main, "symbolic-ref", "-q", "--short", "HEAD")
	side := &runs.Side{MissionID: missionID, RunnerID: runner.ID, Worktree: wt, Branch: branch, Base: base, Target: target, Created: chain.Timestamp(d.Now())}
	if err := runs.WriteSide(d.Repo.RuntimeDir(), side); err != nil {
		d.Logf("mission %s: side record: %v", missionID, err)
	}
	return side, ""
}

// placePacket writes a round's packet into the mission's worktree, kept
// out of `git status`, and returns its path. Only the packet in the
// worktree is needed to run: a failed exclusion says so in the log.
func (d *Daemon) placePacket(missionID, wt, packetMarkdown string) (string, error) {
	if err := excludePacket(d.Repo.CommonDir()); err != nil {
		d.Logf("mission %s: info/exclude: %v", missionID, err)
	}
	packet := filepath.Join(wt, packetFile)
	return packet, os.WriteFile(packet, []byte(packetMarkdown), 0o644)
}

// missionEnv is what a mission's commands run with: the host's
// environment, and the agent, mission and block they run for.
func (d *Daemon) missionEnv(runner *runners.Runner, missionID, blockID string) []string {
	return append(os.Environ(), "M1ND_AGENT="+d.agent(runner), "M1ND_MISSION="+missionID, "M1ND_BLOCK="+blockID)
}

// runAgent runs the runner's setup and then its agent on the packet, in
// the mission's worktree, and says why the run failed ("" when the agent
// exited 0). While the agent runs its process group is in the side
// record, so a runnerd killed meanwhile can stop it when it restarts.
func (d *Daemon) runAgent(ctx context.Context, runner *runners.Runner, side *runs.Side, j *jail, env []string, packet string) string {
	rt, wt := d.Repo.RuntimeDir(), side.Worktree
	if runner.SetupCommand != "" {
		res := d.runIn(ctx, j, wt, env, runner.Timeout(), runs.SideLog(rt, side.MissionID, runs.LogSetup), nil, false, nil, "sh", "-c", runner.SetupCommand)
		if res.failed() {
			return "setup failed: " + res.describe("setup")
		}
	}
	argv := make([]string, len(runner.Command))
	for i, a := range runner.Command {
		argv[i] = strings.ReplaceAll(a, runners.PacketPlaceholder, packet)
	}
	agent := d.runIn(ctx, j, wt, env, runner.Timeout(), runs.SideLog(rt, side.MissionID, runs.LogAgent), nil, false, func(pid int) {
		side.AgentPGID = pid
		runs.WriteSide(rt, side)
	}, argv...)
	side.AgentPGID = 0
	runs.WriteSide(rt, side)
	switch {
	case agent.err != nil:
		return "agent could not run: " + startProblem(agent.err)
	case agent.stopped:
		return "runner stopped — agent killed"
	case agent.timedOut:
		return fmt.Sprintf("agent timed out after %s — killed", runner.Timeout())
	case agent.exit != 0:
		return fmt.Sprintf("agent exited %d", agent.exit)
	}
	return ""
}

// gateOutcome is the gate line a letter carries for a gate that ended as
// res, and why the gate failed ("" when it passed). A gate that did not
// run to its end has no exit status: its line names none.
func gateOutcome(runner *runners.Runner, res result) (*chain.Gate, string) {
	sum := sha256.Sum256(res.log)
	artifact := "sha256:" + hex.EncodeToString(sum[:])
	noExit := &chain.Gate{Command: runner.GateCommand, ArtifactHash: artifact} // the gate never exited on its own
	switch {
	case res.err != nil:
		return noExit, "gate could not run: " + startProblem(res.err)
	case res.stopped:
		return noExit, "runner stopped — gate killed"
	case res.timedOut:
		return noExit, fmt.Sprintf("gate timed out after %s — killed", runner.Timeout())
	}
	exit := int64(res.exit)
	gateLine := &chain.Gate{Command: runner.GateCommand, ExitStatus: &exit, ArtifactHash: artifact}
	if res.exit != 0 {
		return gateLine, fmt.Sprintf("gate exited %d", res.exit)
	}
	return gateLine, ""
}

// candidate is the complete receipt candidate of a green gate, scoped from
// a fresh store snapshot, naming the runner's pin and the commit and tree
// the gate tested.
func (d *Daemon) candidate(runner *runners.Runner, missionID, blockID string, g *chain.Gate, started, ended time.Time, log []byte, work *settled) *rules.Receipt {
	boundary, contract := int64(1), int64(1)
	if snap, ok, err := d.flows.Snapshot(); err == nil && ok {
		if b := snap.Block(blockID); b != nil {
			boundary, contract = b.BoundaryVersion, b.ContractVersion
		}
	}
	return &rules.Receipt{
		BlockID: blockID, Type: "test", Emitter: &rules.Emitter{Kind: "runnerd", ID: runner.ID},
		Scope: rules.Scope{BlockID: blockID, BoundaryVersion: boundary, ContractVersion: contract},
		Evidence: rules.Evidence{
			ArtifactHash: g.ArtifactHash, EvidenceRefs: append([]string{"gate://" + missionID, runners.PinRef(runner)}, work.testedRefs()...),
			Command: g.Command, Cwd: ".", ExitStatus: g.ExitStatus,
			StartedAt: started.Format(rules.WindowLayout), EndedAt: ended.Format(rules.WindowLayout),
			Excerpt: excerpt(log, 12),
		},
	}
}

// fail ends a mission in its failed letter: REJECT saying why, and the
// gate line when the gate ran.
func (d *Daemon) fail(ctx context.Context, runner *runners.Runner, missionID, gist string, gate *chain.Gate) {
	if err := d.advance(ctx, runner, missionID, func(l *chain.Letter) {
		l.SetPhase(chain.PhaseFailed)
		l.Gate = gate
		l.Verdict = &chain.Verdict{Decision: "REJECT", Gist: gist}
	}); err != nil {
		d.Logf("mission %s: could not post failed (%s): %v", missionID, gist, err)
	}
}

// advance posts the next letter of a mission: its head moved one step on
// and changed by edit. A head that moved under the run (someone else
// posted) is the run's stale_head: it stops, never retries silently.
func (d *Daemon) advance(ctx context.Context, runner *runners.Runner, missionID string, edit func(l *chain.Letter)) error {
	// A stopping daemon still writes the letter that ends the mission.
	ctx, cancel := lingering(ctx, 10*time.Second)
	defer cancel()
	head, err := d.flows.Current(missionID)
	if err != nil {
		return err
	}
	next := chain.Next(head.Letter, head.HeadLetterID, d.Now())
	next.RunnerID = &runner.ID
	edit(next)
	req := chain.PostRequest{Body: next.Canonical(), Agent: d.agent(runner)}
	if next.Phase == chain.PhaseMergeWait {
		// What the approved gate passed on is signed under the pins as they
		// stand now: a pin changed during the run signs nothing.
		approved, err := d.approval(runner)
		if err != nil {
			return err
		}
		if req.Attestation, err = d.attest(runner, approved, next); err != nil {
			return err
		}
	}
	_, err = d.flows.Post(ctx, req)
	return err
}

// tidy removes the mission's worktree only when nothing in it would be
// lost (removeIfClean); the branch keeps the agent's commits. It returns
// what the letter should say about it.
func (d *Daemon) tidy(ctx context.Context, side *runs.Side) string {
	ctx, cancel := lingering(ctx, 0)
	defer cancel()
	outcome := removeIfClean(ctx, d.Repo, side)
	if outcome == worktreeGone {
		return fmt.Sprintf("; %s holds the work; the worktree is gone", side.Branch)
	}
	// The branch outlives its worktree: its commits are counted from the
	// main worktree.
	commits, _ := gitOutput(ctx, d.Repo.MainWorkTree(), "rev-list", "--count", side.Base+".."+side.Branch)
	what := fmt.Sprintf("%s on %s", rules.Count(atoi(commits), "commit"), side.Branch)
	switch outcome {
	case worktreeDirty:
		return "; " + what + "; worktree kept: uncommitted changes (m1nd worktrees)"
	case worktreeKept:
		return "; " + what + "; worktree kept (m1nd worktrees)"
	}
	return "; " + what + "; worktree removed"
}

// recover posts failed "runner restarted" for every mission this runnerd's
// runners left executing or at the gate: a restarted daemon cannot finish
// them, and a silent head would look alive forever.
func (d *Daemon) recover(ctx context.Context) {
	sides, err := runs.ReadSides(d.Repo.RuntimeDir())
	if err != nil {
		return
	}
	for _, s := range sides {
		runner := d.config().Runner(s.RunnerID)
		if runner == nil {
			continue
		}
		head, err := d.flows.Current(s.MissionID)
		if err != nil || (head.Letter.Phase != chain.PhaseExecuting && head.Letter.Phase != chain.PhaseGate) {
			continue
		}
		stopOrphan(s)
		d.fail(ctx, runner, s.MissionID, "runner restarted"+d.tidy(ctx, s), nil)
	}
}

// stopOrphan kills the process group a killed runnerd left running in a
// mission's worktree — checked by the group leader's working directory, so
// a reused pid is never hit.
func stopOrphan(s *runs.Side) {
	if s.AgentPGID <= 0 {
		return
	}
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(s.AgentPGID), "cwd"))
	if err != nil {
		return
	}
	wt, err := filepath.EvalSymlinks(s.Worktree)
	if err != nil || (cwd != wt && !strings.HasPrefix(cwd, wt+string(filepath.Separator))) {
		return
	}
	syscall.Kill(-s.AgentPGID, syscall.SIGKILL)
}

// result is how a process ended.
type result struct {
	exit     int
	timedOut bool
	stopped  bool  // the daemon stopped: killed
	err      error // could not start
	log      []byte
}

// startProblem says why a command could not start without naming a host
// path: letters carry no absolute paths.
func startProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		return "command not found"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return "it could not start"
}

// failed reports whether a command did not exit 0: it could not start,
// was killed, or exited non-zero.
func (r result) failed() bool {
	return r.err != nil || r.timedOut || r.stopped || r.exit != 0
}

func (r result) describe(what string) string {
	switch {
	case r.err != nil:
		return what + " could not run: " + startProblem(r.err)
	case r.stopped:
		return what + " killed: the runner stopped"
	case r.timedOut:
		return what + " timed out — killed"
	}
	return fmt.Sprintf("%s exited %d", what, r.exit)
}

// runProcess runs a command in its own process group, stdout and stderr
// together into one log (kept at logPath), killing the whole group when
// the limit passes; with stdin and, for answers read off stdout, the
// choice to keep stderr out of the log.
func runProcess(ctx context.Context, dir string, env []string, limit time.Duration, logPath string, stdin io.Reader, stdoutOnly bool, started func(pid int), name string, args ...string) result {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if stdoutOnly {
		cmd.Stderr = nil
	}
	if err := cmd.Start(); err != nil {
		return result{err: err}
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	res := result{}
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		res.timedOut = true
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		res.stopped = true
	}
	res.exit = gitstore.ExitCode(err) // a process killed by a signal is -1: never a pass
	res.log = log.Bytes()
	if logPath != "" {
		gitstore.WriteFileAtomic(logPath, res.log, 0o600)
	}
	return res
}

// excerpt is the last n non-empty lines of a log, printable and bounded.
func excerpt(log []byte, n int) []string {
	var lines []string
	for _, l := range strings.Split(string(log), "\n") {
		l = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, strings.TrimRight(l, "\r"))
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > 200 {
			l = l[:200]
		}
		lines = append(lines, strings.ToValidUTF8(l, "?"))
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// excludePacket keeps the packet file out of `git status` in every worktree.
func excludePacket(commonDir string) error {
	path := filepath.Join(commonDir, "info", "exclude")
	data, err := gitstore.ReadRegular(path, 1<<20)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "/"+packetFile {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, []byte("# m1nd: mission packets are not part of the work\n/"+packetFile+"\n")...)
	return gitstore.WriteFileAtomic(path, data, 0o644)
}

// gitOutput runs the git CLI (worktrees are the git CLI's job).
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := gitstore.Git(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
