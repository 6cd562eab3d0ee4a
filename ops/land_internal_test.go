package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/gittest"
)

// gitBrain is the flows of a fresh repository, with git run in this
// process under the repository's hermetic environment.
func gitBrain(t *testing.T) (*Brain, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, "shop")
	for _, kv := range gittest.Env(t) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, v)
		}
	}
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
