package testscripts

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/gittest"
)

// stopWithin is how long a daemon may take to stop after SIGINT or SIGTERM
// (issue 37): what a service manager or a terminal waits before it kills.
// A bound on a hang, not a speed: a stop that works takes a fraction of it.
const stopWithin = 5 * time.Second

// TestRunnerdStopsMidQueue signals runnerd while its landing queue runs a
// re-gate whose gate would take a minute: runnerd stops within 5 s, takes
// the gate with it, leaves no gate worktree, and the mission still waits
// at merge_wait for the next runnerd.
func TestRunnerdStopsMidQueue(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			c := newLandCrash(t)
			c.runner = "b1"
			cfg := fmt.Sprintf("[[runner]]\nid = \"b1\"\ncapability = \"build-runner\"\ncommand = [\"true\", \"{packet_file}\"]\ngate_command = \"sleep 60\"\nworkspace_allowlist = [%q]\n", filepath.Dir(c.g.Dir))
			if err := os.WriteFile(filepath.Join(c.repo.RuntimeDir(), "runners.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			id := c.waitingBehindMain(c.targets[0])
			rd := c.runnerd()
			deadline := time.Now().Add(defaultWait)
			for !strings.Contains(rd.log.String(), "queue: re-gating "+id) {
				if time.Now().After(deadline) {
					rd.stop(syscall.SIGKILL)
					t.Fatalf("runnerd did not start re-gating %s in %v:\n%s", id, defaultWait, rd.log.String())
				}
				time.Sleep(pollEvery)
			}
			time.Sleep(300 * time.Millisecond) // the gate is under way
			start := time.Now()
			rd.cmd.Process.Signal(sig)
			exited := make(chan error, 1)
			go func() { exited <- rd.cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(stopWithin):
				rd.cmd.Process.Kill()
				<-exited
				t.Fatalf("runnerd still ran %v after %v; it said:\n%s", stopWithin, sig, rd.log.String())
			}
			t.Logf("runnerd stopped %v after %v", time.Since(start).Round(time.Millisecond), sig)
			reapOrphans(t) // the gate went with it: nothing is left to reap
			if out := c.g.Git("worktree", "list", "--porcelain"); strings.Contains(out, ".gate") {
				t.Errorf("the re-gate's worktree is left:\n%s", out)
			}
			head, err := c.m.Current(id)
			if err != nil {
				t.Fatal(err)
			}
			if head.Letter.Phase != "merge_wait" {
				t.Errorf("%s is at %s after the stop, want merge_wait", id, head.Letter.Phase)
			}
			c.fsck(sig.String())
			c.verify(sig.String())
		})
	}
}

// TestServeStopsWithAStreamOpen signals the owner while a tray tab holds
// its event stream open: the stream ends and the owner stops within 5 s.
func TestServeStopsWithAStreamOpen(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			g := gittest.Init(t, "shop")
			g.CommitFiles("files", map[string]string{"core/a.go": "package core\n"})
			bin, env := m1ndBin(t), gittest.Env(t)
			initCmd := exec.Command(bin, "init")
			initCmd.Dir, initCmd.Env = g.Dir, env
			if out, err := initCmd.CombinedOutput(); err != nil {
				t.Fatalf("m1nd init: %v\n%s", err, out)
			}
			cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
			cmd.Dir, cmd.Env = g.Dir, env
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			url := waitFor(t, out, regexp.MustCompile(`http://localhost:\d+/`))
			req, _ := http.NewRequest("GET", url+"api/events", nil)
			req.Header.Set("Origin", strings.TrimSuffix(url, "/"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				cmd.Process.Kill()
				t.Fatalf("the event stream: %v %v", err, resp)
			}
			defer resp.Body.Close()
			first := make([]byte, 64)
			if _, err := resp.Body.Read(first); err != nil {
				t.Fatalf("the event stream said nothing: %v", err)
			}
			start := time.Now()
			cmd.Process.Signal(sig)
			select {
			case <-exited:
			case <-time.After(stopWithin):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("m1nd serve still ran %v after %v with a stream open; it said:\n%s", stopWithin, sig, out.String())
			}
			t.Logf("m1nd serve stopped %v after %v", time.Since(start).Round(time.Millisecond), sig)
			if _, err := io.ReadAll(resp.Body); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Logf("the stream ended: %v", err)
			}
		})
	}
}

// waitFor waits until out holds a match of re, and returns it.
func waitFor(t *testing.T, out *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(defaultWait)
	for {
		if m := re.FindString(out.String()); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v:\n%s", re, defaultWait, out.String())
		}
		time.Sleep(pollEvery)
	}
}
