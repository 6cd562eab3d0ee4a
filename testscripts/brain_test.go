package testscripts

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// remoteBrain is a brain "shop" with m1nd's git hook installed, a scanned
// store, and a bare remote "origin" guarded by m1nd's pre-receive: what
// the tests of raw git writes against the laws start from.
type remoteBrain struct {
	t      *testing.T
	g      *gittest.Repo
	remote string
	config [][2]string // git config a clone of remote needs
	repo   *gitstore.Repo
	store  *brain.Store
	now    time.Time
	// runner is runner b1, its pin and runnerd key approved at a terminal
	// and pushed to the remote: it signs the merge_waits tests post, as
	// runnerd does, and the remote judges them by the same pins.
	runner *pinstest.Runner
}

func newRemoteBrain(t *testing.T) *remoteBrain {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "shop.git")
	bareRepo(t, remote, true)
	return newRemoteBrainAt(t, remote, nil)
}

// newRemoteBrainAt is a remoteBrain whose origin is url, a repository
// guarded by m1nd's pre-receive on some server; config is git config the
// clone needs to reach it (an ssh key).
func newRemoteBrainAt(t *testing.T, url string, config [][2]string) *remoteBrain {
	t.Helper()
	b := &remoteBrain{t: t, g: gittest.Init(t, "shop"), now: time.Now().UTC().Truncate(time.Second), remote: url, config: config}
	for _, kv := range config {
		b.g.Git("config", kv[0], kv[1])
	}
	b.g.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "README.md": "x\n"})
	if out, err := b.m1nd(b.g.Dir, "init"); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	// Agents write in this clone: it is guarded, as runnerd's worktrees are.
	if out, err := b.m1nd(b.g.Dir, "hooks", "install"); err != nil {
		t.Fatalf("m1nd hooks install: %v\n%s", err, out)
	}
	b.g.Git("remote", "add", "origin", url)
	repo, err := gitstore.Open(b.g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	b.repo, b.store = repo, &brain.Store{Repo: repo, Brain: "shop"}
	if _, err := b.store.Scan(context.Background(), brain.WriteRequest{Agent: "owner", Now: b.now}); err != nil {
		t.Fatal(err)
	}
	b.runner = pinstest.Approve(t, repo, "b1", "go test ./core/...")
	b.g.Git("push", "-q", "origin", brain.PinsRef+":"+brain.PinsRef)
	return b
}

// m1nd runs the m1nd on PATH in dir.
func (b *remoteBrain) m1nd(dir string, args ...string) (string, error) {
	cmd := exec.Command(m1ndBin(b.t), args...)
	cmd.Dir, cmd.Env = dir, gittest.Env(b.t)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
