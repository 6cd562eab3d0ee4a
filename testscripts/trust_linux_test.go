package testscripts

// A newcomer's first sync at a terminal shows the remote's passkeys and
// asks for the first key's fingerprint, as ssh asks for a host's key
// (issue 40): nothing typed, or another fingerprint, holds the keys (exit
// 3, nothing taken); the fingerprint its owner reads out takes them.

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/gittest"
	"github.com/m1nd/m1nd/internal/pty"
)

// atPTY runs m1nd args in dir at a pseudo-terminal, types answer once it
// asks (its prompt ends "press Enter to hold them: "), and returns what
// the terminal showed and how m1nd exited.
func atPTY(t *testing.T, dir string, answer string, args ...string) (string, error) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer master.Close()
	// The shell waits a moment before it exits, so the last bytes reach
	// the reader before the terminal closes.
	cmd := exec.Command("sh", append([]string{"-c", `"$0" "$@"; rc=$?; sleep 0.1; exit $rc`, m1ndBin(t)}, args...)...)
	cmd.Dir, cmd.Env = dir, gittest.Env(t)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var (
		mu     sync.Mutex
		screen bytes.Buffer
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	asked := false
	deadline := time.After(time.Minute)
	for {
		select {
		case err := <-done:
			<-read
			out := strings.ReplaceAll(screen.String(), "\r\n", "\n")
			if !asked {
				t.Fatalf("m1nd %s never asked at the terminal; it showed:\n%s", strings.Join(args, " "), out)
			}
			return out, err
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("m1nd %s at a terminal: still running after a minute; it showed:\n%s", strings.Join(args, " "), screen.String())
		case <-time.After(20 * time.Millisecond):
		}
		mu.Lock()
		asks := strings.Contains(screen.String(), "press Enter to hold them: ")
		mu.Unlock()
		if asks && !asked {
			asked = true
			if _, err := master.Write([]byte(answer + "\n")); err != nil {
				t.Fatalf("type at the terminal: %v", err)
			}
		}
	}
}

func TestNewcomersSyncAsksForTheFirstKey(t *testing.T) {
	ctx := context.Background()
	r := newRemoteBrain(t)
	key := teamKey()
	if _, err := brain.RegisterFirstKey(ctx, r.repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "alice", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	fp := keySetFingerprint(t, r.repo)
	trustKeySet(t, r.remote, fp)
	if out, err := r.m1nd(r.g.Dir, "sync"); err != nil {
		t.Fatalf("the first person's sync: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "newcomer")
	r.g.Git("clone", "-q", r.remote, dir)
	if out, err := r.m1nd(dir, "init"); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	newcomer := gittest.Open(t, dir)
	for _, typed := range []string{"", "abcd abcd abcd abcd"} {
		out, err := atPTY(t, dir, typed, "sync")
		if exitCode(err) != 3 || !strings.Contains(out, "key set    "+fp+"  its first") || !strings.Contains(out, "with alice (") || !strings.Contains(out, "origin's passkeys are not trusted here yet") {
			t.Fatalf("answered %q: exit %d\n%s", typed, exitCode(err), out)
		}
		if got := newcomer.Git("for-each-ref", brain.KeysRef); got != "" {
			t.Fatalf("answered %q, the keys were taken: %s", typed, got)
		}
	}
	out, err := atPTY(t, dir, strings.ToUpper(strings.ReplaceAll(fp, " ", "")), "sync")
	if err != nil {
		t.Fatalf("answered the fingerprint: %v\n%s", err, out)
	}
	if got, want := newcomer.Git("rev-parse", brain.KeysRef), r.g.Git("rev-parse", brain.KeysRef); got != want {
		t.Fatalf("the newcomer's keys are %s, the remote's %s", got, want)
	}
}
