package ops

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// gitBrain is the flows of a fresh repository, with git run in this
// process under the repository's hermetic environment.
func gitBrain(t *testing.T) (*Flows, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, "shop")
	gittest.SetEnv(t)
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return New(repo, "shop"), g
}

// isAncestor takes git's own answer only: a git that did not run (here,
// a context done, as after Ctrl-C or SIGTERM) is an error. It once
// answered yes, and a landing cut short between its checks landed the
// mission "up-to-date" without merging its work.
func TestIsAncestorOnlyGitsAnswer(t *testing.T) {
	b, g := gitBrain(t)
	root := g.Git("rev-parse", "HEAD")
	next := g.CommitFiles("next", map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	if yes, err := b.isAncestor(ctx, root, next); !yes || err != nil {
		t.Errorf("root is an ancestor of next: got %v, %v", yes, err)
	}
	if yes, err := b.isAncestor(ctx, next, root); yes || err != nil {
		t.Errorf("next is not an ancestor of root: got %v, %v", yes, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for _, pair := range [][2]string{{root, next}, {next, root}} {
		if yes, err := b.isAncestor(done, pair[0], pair[1]); yes || err == nil {
			t.Errorf("git never ran, yet isAncestor(%.7s, %.7s) = %v, %v", pair[0], pair[1], yes, err)
		}
	}
	if yes, err := b.isAncestor(ctx, root, strings.Repeat("e", 40)); yes || err == nil {
		t.Errorf("an unknown commit: got %v, %v; want an error", yes, err)
	}
}

// The check that a worktree is clean only reads: git status there takes
// no index.lock and so never rewrites the index it refreshes. (Holding
// that lock, it failed the owner's own `git commit` in the worktree, and
// a landing stopped mid-check left index.lock behind.)
func TestCleanWorktreeTakesNoIndexLock(t *testing.T) {
	b, g := gitBrain(t)
	g.CommitFiles("files", map[string]string{"a.txt": "a\n"})
	// Same content, older stat: a refreshing status would rewrite the index.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(g.Dir, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(g.Dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cleanWorktree(context.Background(), g.Dir, "main"); err != nil {
		t.Fatalf("a clean worktree: %v", err)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(before, after) {
		t.Fatal("checking the worktree rewrote its index: git status took index.lock")
	}
	// The same status with optional locks does rewrite it: the check above
	// can tell.
	g.Git("status", "--porcelain")
	if after, _ := os.ReadFile(index); bytes.Equal(before, after) {
		t.Fatal("git status did not refresh the index: the test proves nothing")
	}
}
