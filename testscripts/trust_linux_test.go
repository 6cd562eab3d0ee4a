package testscripts

// A newcomer's first sync at a terminal shows the remote's passkeys and
// asks for the first key's fingerprint, as ssh asks for a host's key
// (issue 40): nothing typed, or another fingerprint, holds the keys (exit
// 3, nothing taken); the fingerprint its owner reads out takes them.

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// syncAtPTY runs m1nd sync in dir at a pseudo-terminal and types answer
// once it asks (its prompt ends "press Enter to hold them: "); it returns
// what the terminal showed and how m1nd exited.
func syncAtPTY(t *testing.T, dir, answer string) (string, error) {
	t.Helper()
	// The shell waits a moment before it exits, so the last bytes reach
	// the reader before the terminal closes.
	cmd := exec.Command("sh", "-c", `"$0" sync; rc=$?; sleep 0.1; exit $rc`, m1ndBin(t))
	cmd.Dir, cmd.Env = dir, gittest.Env(t)
	out, asked, err := atPTY(t, cmd, time.Minute, func(screen string) []string {
		if strings.Contains(screen, "press Enter to hold them: ") {
			return []string{answer}
		}
		return nil
	})
	if asked == 0 {
		t.Fatalf("m1nd sync never asked at the terminal; it showed:\n%s", out)
	}
	return out, err
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
		out, err := syncAtPTY(t, dir, typed)
		if exitCode(err) != 3 || !strings.Contains(out, "key set    "+fp+"  its first") || !strings.Contains(out, "with alice (") || !strings.Contains(out, "origin's passkeys are not trusted here yet") {
			t.Fatalf("answered %q: exit %d\n%s", typed, exitCode(err), out)
		}
		if got := newcomer.Git("for-each-ref", brain.KeysRef); got != "" {
			t.Fatalf("answered %q, the keys were taken: %s", typed, got)
		}
	}
	out, err := syncAtPTY(t, dir, strings.ToUpper(strings.ReplaceAll(fp, " ", "")))
	if err != nil {
		t.Fatalf("answered the fingerprint: %v\n%s", err, out)
	}
	if got, want := newcomer.Git("rev-parse", brain.KeysRef), r.g.Git("rev-parse", brain.KeysRef); got != want {
		t.Fatalf("the newcomer's keys are %s, the remote's %s", got, want)
	}
}
