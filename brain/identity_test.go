package brain

import (
	"path/filepath"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

func TestDisplayName(t *testing.T) {
	g := gittest.Init(t, "Repo-B1")
	wt := filepath.Join(filepath.Dir(g.Dir), "feature-wt")
	g.Git("worktree", "add", "-q", wt)
	bare := filepath.Join(filepath.Dir(g.Dir), "Shared.git")
	g.Git("clone", "-q", "--bare", g.Dir, bare)

	name := func(dir string) (string, error) {
		r, err := gitstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return DisplayName(r)
	}
	for _, tt := range []struct{ label, dir, want string }{
		{"main worktree", g.Dir, "Repo-B1"},
		{"linked worktree names the main one", wt, "Repo-B1"},
		{"bare repository", bare, "Shared"},
	} {
		if got, err := name(tt.dir); err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.label, got, err, tt.want)
		}
	}
	g.Git("config", "m1nd.brain", "Other")
	if got, _ := name(wt); got != "Other" {
		t.Errorf("config override: %q", got)
	}
	g.Git("config", "m1nd.brain", "C:evil")
	if _, err := name(g.Dir); err == nil {
		t.Error("a drive-letter brain name was accepted")
	}
}
