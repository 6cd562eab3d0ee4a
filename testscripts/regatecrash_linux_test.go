package testscripts

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// TestKillNineWhileRegating kills runnerd with SIGKILL at random moments
// of its landing queue's re-gate (issue 25): a mission waits at
// merge_wait, main moves on under it, and runnerd merges main into the
// branch, gates the merge in a worktree of its own and posts merge_wait
// naming it. Only runnerd is killed; the gate it started runs on,
// orphaned, and is reaped. After every kill every ref is valid (git fsck,
// m1nd verify), the mission is still at merge_wait — never failed, never
// ready on a commit its gate did not pass — and the next runnerd finishes
// the re-gate: the mission is ready on a commit that holds main, and
// landing it moves main to exactly the tree that gate passed on.
func TestKillNineWhileRegating(t *testing.T) {
	longtest.Need(t, "crash rounds")
	if testing.Short() {
		t.Skip("crash test")
	}
	rounds := crashRounds(24)
	c := newLandCrash(t)
	c.runner = "b1"
	// The gate writes the trees it passed on beside the test: a folder
	// its pin grants, as the kernel contains it.
	record := filepath.Join(t.TempDir(), "gated-trees")
	gate := fmt.Sprintf(`sleep 0.1; t=$(git rev-parse 'HEAD^{tree}'); test -f README.md && echo "$t" >> %s`, record)
	cfg := fmt.Sprintf("[[runner]]\nid = \"b1\"\ncapability = \"build-runner\"\ncommand = [\"true\", \"{packet_file}\"]\ngate_command = %q\nworkspace_allowlist = [%q]\nwrite_paths = [%q]\n", gate, filepath.Dir(c.g.Dir), filepath.Dir(record))
	if err := os.WriteFile(filepath.Join(c.repo.RuntimeDir(), "runners.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := crashSeed(t)
	t.Logf("seed %d (replay the same kill delays: %s=%d go test ./testscripts -run %s)", seed, crashSeedEnv, seed, t.Name())
	rng := rand.New(rand.NewPCG(3, seed))
	main := c.targets[0]

	// How long a re-gate takes, from runnerd's start to the mission ready.
	var span time.Duration
	for i := range 2 {
		id := c.waitingBehindMain(main)
		t0 := time.Now()
		rd := c.runnerd()
		c.waitReady(id, rd, fmt.Sprintf("calibration %d", i))
		span += time.Since(t0) / 2
		rd.stop(syscall.SIGINT)
		c.landRegated(id, record, fmt.Sprintf("calibration %d", i))
	}
	t.Logf("a re-gate takes %v; kills spread over 0–%v", span, span)

	outcomes := map[string]int{}
	for round := 0; round < rounds; round++ {
		id := c.waitingBehindMain(main)
		delay := time.Duration(rng.Int64N(int64(span)))
		label := fmt.Sprintf("round %d (kill at %v)", round, delay)
		rd := c.runnerd()
		time.Sleep(delay)
		rd.stop(syscall.SIGKILL)
		reapOrphans(t)

		c.fsck(label)
		c.verify(label)
		head, err := c.m.Current(id)
		if err != nil {
			t.Fatal(err)
		}
		if head.Letter.Phase != chain.PhaseMergeWait {
			t.Fatalf("%s: %s is at %s after the kill", label, id, head.Letter.Phase)
		}
		outcome := "untouched"
		tested, _ := head.Letter.ReceiptCandidate.Evidence.Tested()
		switch {
		case c.ready(id):
			outcome = "finished"
		case c.g.Git("rev-parse", "refs/heads/m1nd/"+id) != tested:
			outcome = "merged, not gated"
		}
		outcomes[outcome]++
		if outcome == "finished" && !gatedTree(t, record, c.g.Git("rev-parse", tested+"^{tree}")) {
			t.Fatalf("%s: ready on %.12s, whose tree no gate passed", label, tested)
		}

		// The next runnerd finishes it; then it lands on a gated tree.
		rd = c.runnerd()
		c.waitReady(id, rd, label)
		rd.stop(syscall.SIGINT)
		c.fsck(label + " re-run")
		c.verify(label + " re-run")
		c.landRegated(id, record, label)
	}
	if out, err := c.g.TryGit("worktree", "list", "--porcelain"); err != nil || strings.Contains(out, ".gate") {
		t.Errorf("a re-gate's worktree is left: %v\n%s", err, out)
	}
	t.Logf("%d rounds, a kill each: %v (finished = ready before the kill; merged, not gated = the merge made and the gate cut short; untouched = killed before the merge)", rounds, outcomes)
}

// waitingBehindMain makes a mission at merge_wait on main's tip, then moves
// main on in its worktree: the mission's gate no longer tested what would
// land.
func (c *landCrash) waitingBehindMain(main *landTarget) string {
	t := c.t
	t.Helper()
	id := c.mission(main, false)
	name := fmt.Sprintf("main-%03d.txt", c.n)
	if err := os.WriteFile(filepath.Join(main.worktree, name), []byte("moved on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.g.Git("-C", main.worktree, "add", name)
	c.g.Git("-C", main.worktree, "commit", "-qm", "main moves on")
	if c.ready(id) {
		t.Fatalf("%s is ready with main moved on", id)
	}
	return id
}

// ready reports whether mission id's gate tested its branch's tip and that
// tip holds main.
func (c *landCrash) ready(id string) bool {
	head, err := c.m.Current(id)
	if err != nil || head.Letter.Phase != chain.PhaseMergeWait {
		return false
	}
	tested, _ := head.Letter.ReceiptCandidate.Evidence.Tested()
	if c.g.Git("rev-parse", "refs/heads/m1nd/"+id) != tested {
		return false
	}
	_, err = c.g.TryGit("merge-base", "--is-ancestor", "refs/heads/main", tested)
	return err == nil
}

// waitReady waits until mission id is ready, runnerd running.
func (c *landCrash) waitReady(id string, rd *daemonProc, label string) {
	t := c.t
	t.Helper()
	deadline := time.Now().Add(defaultWait)
	for !c.ready(id) {
		if time.Now().After(deadline) {
			side, _, _ := runs.ReadSide(c.repo.RuntimeDir(), id)
			rd.stop(syscall.SIGINT)
			t.Fatalf("%s: %s is not ready after %v (queue %+v); runnerd said:\n%s", label, id, defaultWait, side.Queue, rd.log.String())
		}
		time.Sleep(pollEvery)
	}
}

// landRegated lands mission id at the terminal and checks main's tree is
// one the gate passed on.
func (c *landCrash) landRegated(id, record, label string) {
	t := c.t
	t.Helper()
	if out, code := c.land(id, -1, nil); code != 0 {
		t.Fatalf("%s: landing the re-gated %s: exit %d\n%s", label, id, code, out)
	}
	c.check(id, label)
	if tree := c.g.Git("rev-parse", "main^{tree}"); !gatedTree(t, record, tree) {
		t.Fatalf("%s: main's tree %.12s is not one the gate passed on", label, tree)
	}
}

// gatedTree reports whether the gate recorded passing on tree.
func gatedTree(t *testing.T, record, tree string) bool {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == tree {
			return true
		}
	}
	return false
}

// daemonProc is a running m1nd runnerd and what it logs.
type daemonProc struct {
	t   *testing.T
	cmd *exec.Cmd
	log *syncBuffer // runnerd writes it while the test reads
}

// runnerd starts m1nd runnerd on loopback with a fast queue (no owner
// runs: it announces to nobody, and its queue works all the same).
func (c *landCrash) runnerd() *daemonProc {
	t := c.t
	t.Helper()
	cmd := exec.Command(c.bin, "runnerd", "--addr", "127.0.0.1:0", "--queue-interval", "20ms", "--announce-interval", "1h")
	cmd.Dir, cmd.Env = c.g.Dir, c.env
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{t: t, cmd: cmd, log: log}
	// Its first line comes once its signal handler is set: a SIGINT sent
	// before that is lost where the test runs in the background (a shell
	// starts background jobs with SIGINT ignored), and the stop would wait
	// for ever.
	deadline := time.Now().Add(defaultWait)
	for !strings.Contains(log.String(), "m1nd runnerd for brain") {
		if time.Now().After(deadline) {
			d.stop(syscall.SIGKILL)
			t.Fatalf("runnerd did not start in %v:\n%s", defaultWait, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return d
}

// stop signals runnerd alone (not the gate it runs) and waits for it; a
// runnerd still running defaultWait after the signal fails the test (and
// is killed) instead of holding it.
func (d *daemonProc) stop(sig syscall.Signal) {
	d.t.Helper()
	d.cmd.Process.Signal(sig)
	exited := make(chan struct{})
	go func() { d.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(defaultWait):
		d.cmd.Process.Kill()
		<-exited
		d.t.Errorf("runnerd still ran %v after %v; it said:\n%s", defaultWait, sig, d.log.String())
	}
}
