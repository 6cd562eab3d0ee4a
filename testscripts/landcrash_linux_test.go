package testscripts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
	"github.com/m1nd/m1nd/testkit/pty"
)

// TestKillNineWhileLanding kills `m1nd land` with SIGKILL at random moments
// over its whole run (issue 14): the landing of a merge_wait mission into a
// branch checked out in the main worktree, in a linked worktree, or
// nowhere, as a fast-forward to the agent's commit or to the gated merge of
// a target that moved (runnerd's queue merged it into the branch). m1nd alone is killed,
// as kill -9 or the OOM killer would: the git it started runs on,
// orphaned, and is waited for (this test is its subreaper). After every kill the mission is either landed with its work
// on the target branch, or still at merge_wait and landable: `m1nd land`
// run again at the terminal finishes it (without a second gesture when the
// receipt was imported). git fsck is clean, m1nd verify finds no fault, no
// lock is left behind but m1nd's own (which its next writer clears), and
// every worktree holding a target is clean.
func TestKillNineWhileLanding(t *testing.T) {
	longtest.Need(t, "crash rounds")
	if testing.Short() {
		t.Skip("crash test")
	}
	landCrashRounds(t, crashRounds(60), func(round, pid int) { syscall.Kill(pid, syscall.SIGKILL) })
}

// TestInterruptWhileLanding stops `m1nd land` at random moments the ways a
// terminal and a service manager do: SIGTERM to m1nd, and SIGINT (Ctrl-C)
// or SIGHUP (the terminal closed) to its process group, the terminal's
// foreground group. m1nd cancels or dies; the git it runs must neither be
// killed half-way through moving the target (a dirty worktree and git's
// locks left behind, a landing nothing finishes) nor be taken for having
// answered (a landing "up-to-date" without its merge). The same
// invariants as TestKillNineWhileLanding hold after every stop.
func TestInterruptWhileLanding(t *testing.T) {
	longtest.Need(t, "crash rounds")
	if testing.Short() {
		t.Skip("crash test")
	}
	landCrashRounds(t, crashRounds(30), func(round, pid int) {
		switch round % 3 {
		case 0:
			syscall.Kill(pid, syscall.SIGTERM)
		case 1:
			syscall.Kill(-pid, syscall.SIGINT)
		case 2:
			syscall.Kill(-pid, syscall.SIGHUP)
		}
	})
}

// crashRounds is n, or a third of it under the race detector: there every
// m1nd is race-instrumented and a round takes a second or more, while the
// race detector has little to find in a process killed from outside. The
// full count runs in the plain `go test ./testscripts`.
func crashRounds(n int) int {
	if raceEnabled {
		return n / 3
	}
	return n
}

// landCrashRounds lands a new mission in each round and stops the landing
// with stop (given m1nd's pid, also its process group) at a random moment,
// then checks what the stop left and finishes the landing.
func landCrashRounds(t *testing.T, rounds int, stop func(round, pid int)) {
	start := time.Now()
	c := newLandCrash(t)
	seed := crashSeed(t)
	t.Logf("seed %d (replay the same stop delays: %s=%d go test ./testscripts -run %s)", seed, crashSeedEnv, seed, t.Name())
	rng := rand.New(rand.NewPCG(2, seed))

	// How long a landing takes, whole process, so the stops spread over
	// all of it: the mean of two fast-forwards and two merge commits into
	// the main worktree.
	var span time.Duration
	for i := range 4 {
		id := c.mission(c.targets[0], i%2 == 1)
		t0 := time.Now()
		if out, code := c.land(id, -1, nil); code != 0 {
			t.Fatalf("calibration landing: exit %d\n%s", code, out)
		}
		span += time.Since(t0) / 4
		c.check(id, "calibration")
	}
	t.Logf("a landing takes %v; stops spread over 0–%v", span, span*5/4)

	states := map[string]int{}
	var lockNotes []string
	anonymousLocks := 0
	for round := 0; round < rounds; round++ {
		tg := c.targets[round%len(c.targets)]
		merge := round/len(c.targets)%2 == 1
		id := c.mission(tg, merge)
		delay := time.Duration(rng.Int64N(int64(span * 5 / 4)))
		label := fmt.Sprintf("round %d (%s, merge=%v, stop at %v)", round, tg.branch, merge, delay)
		out, code := c.land(id, delay, func(pid int) { stop(round, pid) })

		// What the stop left: checked before anything runs again. m1nd's
		// own ref locks (stamped with its dead pid) are cleared by the next
		// m1nd that reads or writes the ref; an m1nd lock never holds a ref
		// value, and any other lock is git's crash artefact, which only a
		// killed git leaves.
		var anonymous []string
		for _, l := range c.locks() {
			note := fmt.Sprintf("%s: %s (%s)", label, l.path, l.kind)
			lockNotes = append(lockNotes, note)
			switch l.kind {
			case "m1nd":
			case "anonymous":
				anonymous = append(anonymous, l.path)
				t.Errorf("%s: the stop left a lock holding a ref value under refs/m1nd: %s", label, l.path)
			default:
				t.Errorf("%s: the stop left git's lock behind: %s %q", label, l.path, l.content)
			}
		}
		c.fsck(label)
		c.verify(label)
		state := c.state(id, tg)
		if state == "landed" && code == 0 {
			state = "finished"
		}
		states[state]++
		switch state {
		case "landed", "finished":
			c.check(id, label)
			continue
		}
		// Still merge_wait: landable, and landing again finishes it.
		again, code2 := c.land(id, -1, nil)
		if code2 != 0 && len(anonymous) > 0 && strings.Contains(again, "locked by another writer") {
			anonymousLocks++
			t.Logf("%s: the kill left an anonymous lock %s; removing it as the message says", label, anonymous)
			for _, l := range anonymous {
				os.Remove(l)
			}
			again, code2 = c.land(id, -1, nil)
		}
		if code2 != 0 {
			t.Fatalf("%s: left at %s, the landing run again failed (exit %d):\n%s\nstopped run (exit %d):\n%s", label, state, code2, again, code, out)
		}
		if state != "untouched" && !strings.Contains(again, "receipt already in") {
			t.Errorf("%s: left at %s, the landing run again imported a second time:\n%s", label, state, again)
		}
		c.check(id, label)
		c.verify(label + " re-run")
		if l := c.locks(); len(l) > 0 {
			t.Errorf("%s: locks after the landing run again: %+v", label, l)
		}
	}
	c.fsck("end")
	t.Logf("%d rounds in %v: %v (finished = exit 0 before the stop; landed = stopped after the landed letter; "+
		"merged/imported/untouched = left at merge_wait after the merge / after the import / before it, then finished by the landing run again)",
		rounds, time.Since(start).Round(time.Millisecond), states)
	if anonymousLocks > rounds/10 {
		t.Errorf("%d of %d stops left an anonymous lock; the window should be a few syscalls wide", anonymousLocks, rounds)
	}
	if len(lockNotes) > 0 {
		t.Logf("locks left by stops:\n%s", strings.Join(lockNotes, "\n"))
	}
}

// landCrash is the brain the landing crash test lands missions in: shop,
// with main checked out in the main worktree, lnk in a linked worktree and
// rel nowhere.
type landCrash struct {
	t       *testing.T
	g       *gittest.Repo
	bin     string
	env     []string
	repo    *gitstore.Repo
	m       *chain.Missions
	targets []*landTarget
	n       int              // missions made
	runner  string           // the build runner missions name (runner_id), "" for none
	signer  *pinstest.Runner // runner b1, approved: it signs the merge_waits made here
}

// landTarget is a branch missions land in and the worktree that has it
// checked out ("" for none).
type landTarget struct {
	branch   string
	worktree string
}

func newLandCrash(t *testing.T) *landCrash {
	t.Helper()
	c := &landCrash{t: t, g: gittest.Init(t, "shop"), bin: m1ndBin(t), env: gittest.Env(t)}
	becomeSubreaper(t)
	c.g.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "README.md": "x\n"})
	if out, err := c.m1nd("init"); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	lnk := filepath.Join(filepath.Dir(c.g.Dir), "shop-lnk")
	c.g.Git("worktree", "add", "-q", "-b", "lnk", lnk)
	c.g.Git("branch", "rel")
	c.targets = []*landTarget{{"main", c.g.Dir}, {"lnk", lnk}, {"rel", ""}}
	repo, err := gitstore.Open(c.g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	c.repo = repo
	store := &brain.Store{Repo: repo, Brain: "shop"}
	if _, err := store.Scan(context.Background(), brain.WriteRequest{Agent: "owner", Now: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	c.m = &chain.Missions{Repo: repo, Brain: "shop", Blocks: store, Gates: store}
	return c
}

// gateSigner is runner b1, approved at a terminal: with the runnerd key of
// this repository and the pin of runners.toml when one is written (a real
// runnerd re-gates here, and signs as the missions made here do), else a
// key and a pin of the test's own.
func (c *landCrash) gateSigner() *pinstest.Runner {
	t := c.t
	t.Helper()
	if c.signer != nil {
		return c.signer
	}
	cfg, err := runners.LoadConfig(filepath.Join(c.repo.RuntimeDir(), runners.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Runner("b1")
	if r == nil {
		c.signer = pinstest.Approve(t, c.repo, "b1", "go test ./core/...")
		return c.signer
	}
	key, err := secret.LoadRunnerKey(c.repo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, set, err := brain.PreparePins(ctx, c.repo, []brain.ApprovedRunner{r.Approval(rules.RunnerKey(key.Public().(ed25519.PublicKey)))}, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&brain.Store{Repo: c.repo}).CommitPins(ctx, p, rules.OriginHumanTTY, nil); err != nil {
		t.Fatal(err)
	}
	c.signer = &pinstest.Runner{ID: "b1", Gate: r.GateCommand, Pin: r.PinHash(), Key: key, Version: set.Version}
	return c.signer
}

func (c *landCrash) m1nd(args ...string) (string, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Dir, cmd.Env = c.g.Dir, c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mission makes a merge_wait mission whose work branch m1nd/<id> adds one
// file on the target's tip, recorded (side record) to land in tg; with
// merge, the target then moves on by a commit of its own, so the landing
// is a merge commit.
func (c *landCrash) mission(tg *landTarget, merge bool) string {
	t := c.t
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	nm := chain.NewMission{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: now}
	if c.runner != "" {
		nm.Capability, nm.RunnerID = "build-runner", c.runner
	}
	opened, err := c.m.New(ctx, nm)
	if err != nil {
		t.Fatal(err)
	}
	id := opened.MissionID
	c.n++
	base := c.g.Git("rev-parse", "refs/heads/"+tg.branch)
	work := c.commitOn(base, fmt.Sprintf("work-%03d.txt", c.n), id+"\n", "agent: work of "+id)
	tested := work
	if merge {
		// The target moved on, and the queue merged it into the branch and
		// gated the merge: the landing fast-forwards the target to it.
		name := fmt.Sprintf("main-%03d.txt", c.n)
		if tg.worktree != "" {
			if err := os.WriteFile(filepath.Join(tg.worktree, name), []byte("moved on\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.g.Git("-C", tg.worktree, "add", name)
			c.g.Git("-C", tg.worktree, "commit", "-qm", "target moves on")
		} else {
			c.g.Git("update-ref", "refs/heads/"+tg.branch, c.commitOn(base, name, "moved on\n", "target moves on"), base)
		}
		moved := c.g.Git("rev-parse", "refs/heads/"+tg.branch)
		tree := strings.Fields(c.g.Git("merge-tree", "--write-tree", work, moved))[0]
		tested = c.g.Git("commit-tree", tree, "-p", work, "-p", moved, "-m", "Merge "+tg.branch+" into m1nd/"+id+" for its landing")
	}
	c.g.Git("update-ref", "refs/heads/m1nd/"+id, tested, strings.Repeat("0", 40))
	head, err := c.m.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	hash := "sha256:" + fmt.Sprintf("%064x", c.n)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"gate://" + id, "commit:" + tested, "tree:" + c.g.Git("rev-parse", tested+"^{tree}")}, Command: "go test ./core/...", Cwd: ".", ExitStatus: &exit,
			StartedAt: now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	att := c.gateSigner().Sign(t, mw)
	if _, err := c.m.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		t.Fatal(err)
	}
	side := &runs.Side{MissionID: id, RunnerID: "b1", Worktree: filepath.Join(filepath.Dir(c.g.Dir), "shop-"+id), Branch: "m1nd/" + id,
		Base: base, Target: tg.branch, Created: now.Format(time.RFC3339)}
	if err := runs.WriteSide(c.repo.RuntimeDir(), side); err != nil {
		t.Fatal(err)
	}
	return id
}

// commitOn writes, with git's plumbing, a commit on parent that adds the
// top-level file name; no worktree is touched.
func (c *landCrash) commitOn(parent, name, body, msg string) string {
	t := c.t
	t.Helper()
	run := func(stdin string, args ...string) string {
		cmd := c.g.Command(args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	blob := run(body, "hash-object", "-w", "--stdin")
	entries := run("", "ls-tree", parent)
	tree := run(entries+"\n100644 blob "+blob+"\t"+name+"\n", "mktree")
	return run("", "commit-tree", tree, "-p", parent, "-m", msg)
}

// land runs `m1nd land id` at a terminal that has the block id typed in
// advance. With after >= 0 it calls stop with m1nd's pid (m1nd leads its
// own process group) after that long; either way it returns once m1nd and
// every process it started are gone, with what the terminal showed and
// m1nd's exit code (-1 when a signal ended it).
func (c *landCrash) land(id string, after time.Duration, stop func(pid int)) (string, int) {
	t := c.t
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(c.bin, "land", id)
	cmd.Dir, cmd.Env = c.g.Dir, c.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Its own process group, as a terminal's foreground job, but no
	// session: m1nd has no controlling terminal whose hang-up would reach
	// the git it started when m1nd dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := master.Write([]byte("sb_shop_core\n")); err != nil {
		t.Fatalf("type at the pty: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&screen, master); close(read) }()
	if after >= 0 {
		time.Sleep(after)
		stop(cmd.Process.Pid)
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		t.Fatalf("m1nd land: %v", err)
	}
	reapOrphans(t)
	<-read
	return screen.String(), code
}

// reapOrphans waits until this process has no child left, reaping the
// orphans a killed m1nd left running (git, git's hooks): they are
// reparented here, a child subreaper (see newLandCrash). A process still
// exec'ing counts, as does the hook of a git that died first, which is
// reparented here in turn.
func reapOrphans(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	self := strconv.Itoa(os.Getpid())
	for {
		var left []string
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid …; comm may hold spaces and parens.
			i := bytes.LastIndexByte(stat, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(string(stat[i+1:]))
			if len(f) < 2 || f[1] != self {
				continue
			}
			if f[0] == "Z" {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			}
			left = append(left, string(stat[:i+1]))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running after 10s: %v", left)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// becomeSubreaper makes this process the one a killed m1nd's orphans are
// reparented to, until the test ends.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", e)
	}
	t.Cleanup(func() {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0)
		reapOrphans(t)
	})
}

// state is where the kill left the mission: "finished" (m1nd exited 0
// first) or "landed", else at merge_wait: "merged" (the target holds the
// work), "imported" (the receipt is in the store) or "untouched".
func (c *landCrash) state(id string, tg *landTarget) string {
	t := c.t
	t.Helper()
	head, err := c.m.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	switch head.Letter.Phase {
	case chain.PhaseLanded:
		return "landed"
	case chain.PhaseMergeWait:
	default:
		t.Fatalf("%s is at %s after the kill", id, head.Letter.Phase)
	}
	if c.holds(tg.branch, id) {
		return "merged"
	}
	store := &brain.Store{Repo: c.repo, Brain: "shop"}
	if _, ok, err := store.LandingImport(id, head.HeadLetterID, head.Letter.BlockID, head.Letter.ReceiptCandidate); err != nil {
		t.Fatal(err)
	} else if ok {
		return "imported"
	}
	return "untouched"
}

// holds reports whether branch holds the work of mission id.
func (c *landCrash) holds(branch, id string) bool {
	_, err := c.g.TryGit("merge-base", "--is-ancestor", "refs/heads/m1nd/"+id, "refs/heads/"+branch)
	return err == nil
}

// check asserts a landed mission: the landed letter, the work on its
// target, the receipt in the store, and every worktree clean.
func (c *landCrash) check(id, label string) {
	t := c.t
	t.Helper()
	head, err := c.m.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	if head.Letter.Phase != chain.PhaseLanded {
		t.Fatalf("%s: %s is at %s, not landed", label, id, head.Letter.Phase)
	}
	side, _, _ := runs.ReadSide(c.repo.RuntimeDir(), id)
	if !c.holds(side.Target, id) {
		t.Fatalf("%s: %s is landed but %s does not hold m1nd/%s", label, id, side.Target, id)
	}
	store := &brain.Store{Repo: c.repo, Brain: "shop"}
	r, ok, err := store.LandingImport(id, *head.Letter.PrevLetterID, head.Letter.BlockID, head.Letter.ReceiptCandidate)
	if err != nil || !ok || head.Letter.Receipt == nil || head.Letter.Receipt.StoreVersion != r.StoreVersion {
		t.Fatalf("%s: %s is landed, but its receipt is not the import made for it in the store (%+v, %v, %v)", label, id, r, ok, err)
	}
	for _, tg := range c.targets {
		if tg.worktree == "" {
			continue
		}
		if out := c.g.Git("-C", tg.worktree, "status", "--porcelain"); out != "" {
			t.Fatalf("%s: the worktree of %s is not clean:\n%s", label, tg.branch, out)
		}
	}
}

func (c *landCrash) fsck(label string) {
	t := c.t
	t.Helper()
	if out, err := c.g.TryGit("fsck", "--no-dangling", "--no-progress"); err != nil {
		t.Fatalf("%s: git fsck: %v\n%s", label, err, out)
	}
}

func (c *landCrash) verify(label string) {
	t := c.t
	t.Helper()
	out, err := c.m1nd("verify")
	if err != nil || !strings.Contains(out, " 0 faults") {
		t.Fatalf("%s: m1nd verify: %v\n%s", label, err, out)
	}
}

// lockFile is a lock file under the git dir and whose it is: "m1nd" (an
// m1nd lock, empty or stamped, that the next m1nd writer clears),
// "anonymous" (a ref value in a lock under refs/m1nd/, see
// anonymousLock) or "git".
type lockFile struct {
	path, kind string
	content    []byte
}

// locks lists the lock files under the repository's git dir (index, HEAD,
// refs, packed-refs, the worktrees', m1nd's runtime).
func (c *landCrash) locks() []lockFile {
	var out []lockFile
	gitDir := filepath.Join(c.g.Dir, ".git")
	filepath.WalkDir(gitDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(path, ".lock") {
			return nil
		}
		content, _ := os.ReadFile(path)
		l := lockFile{path: path, kind: "git", content: content}
		rel, _ := filepath.Rel(gitDir, path)
		ours := strings.HasPrefix(rel, filepath.Join("refs", "m1nd")+string(filepath.Separator)) || strings.HasPrefix(rel, "m1nd"+string(filepath.Separator))
		switch {
		case !ours:
		case len(content) == 0 || bytes.HasPrefix(content, []byte("m1nd-pid ")):
			l.kind = "m1nd"
		default:
			if _, err := gitstore.ParseHash(strings.TrimSpace(string(content))); err == nil {
				l.kind = "anonymous"
			}
		}
		out = append(out, l)
		return nil
	})
	return out
}
