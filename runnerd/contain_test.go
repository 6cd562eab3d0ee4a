package runnerd

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/internal/contain"
	"github.com/m1nd/m1nd/internal/secret"
)

// TestMissionJailGrants: a mission's jail writes its worktree, the object
// store, its git admin folder, the work branches and its own records, and
// reads the git dir; nothing it is granted reaches the private folder,
// and a runner's write grant over the git dir's config, hooks or runtime
// folder is refused outright.
func TestMissionJailGrants(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, `true`, `true`, 30)
	r.d.Contain = &Containment{Self: "/bin/true", ABI: 7}
	wt := filepath.Join(t.TempDir(), "wt")
	r.g.Git("worktree", "add", "-q", "-b", "m1nd/msn_00000000000a", wt)
	runner := r.d.config().Runner("build-1")
	j, err := r.d.missionJail(ctx, runner, wt, "runnerd:build-1")
	if err != nil {
		t.Fatal(err)
	}
	common := r.d.Repo.CommonDir()
	for _, want := range []string{wt, wt + ".tmp", filepath.Join(common, "objects"), filepath.Join(common, "worktrees", "wt"), filepath.Join(common, "refs", "heads", "m1nd")} {
		if !slices.Contains(j.policy.Write, want) {
			t.Errorf("the jail does not write %s: %v", want, j.policy.Write)
		}
	}
	if !slices.Contains(j.policy.Read, common) {
		t.Errorf("the jail does not read the git dir: %v", j.policy.Read)
	}
	private := secret.PrivateDir(r.d.Repo)
	for _, g := range append(append([]string{}, j.policy.Read...), j.policy.Write...) {
		if contain.Covers(resolved(g), private) {
			t.Errorf("%s reaches the private folder %s", g, private)
		}
		for _, guarded := range []string{filepath.Join(common, "config"), filepath.Join(common, "hooks"), r.d.Repo.RuntimeDir()} {
			if slices.Contains(j.policy.Write, g) && contain.Covers(g, guarded) {
				t.Errorf("the write grant %s reaches %s", g, guarded)
			}
		}
	}
	// A runner asking to write the git dir is refused; one asking to read
	// the folder that holds the private one is left out of it.
	for _, bad := range []string{common, filepath.Dir(common), "/"} {
		greedy := *runner
		greedy.WritePaths = []string{bad}
		if _, err := r.d.missionJail(ctx, &greedy, wt, "runnerd:build-1"); err == nil || !strings.Contains(err.Error(), "may not be written by agents") {
			t.Errorf("write_paths %s: %v, want refused", bad, err)
		}
	}
	nosy := *runner
	nosy.ReadPaths = []string{filepath.Dir(private)}
	j, err = r.d.missionJail(ctx, &nosy, wt, "runnerd:build-1")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(j.policy.Read, filepath.Dir(private)) {
		t.Errorf("read_paths over the private folder was granted: %v", j.policy.Read)
	}
}

func TestCovers(t *testing.T) {
	for _, tt := range []struct {
		dir, path string
		want      bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/", "/a/b", true},
		{"/a/b", "/a", false},
		{"/a/bc", "/a/b", false},
		{"/a/b/", "/a/b/c", true},
	} {
		if got := contain.Covers(tt.dir, tt.path); got != tt.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tt.dir, tt.path, got, tt.want)
		}
	}
}

func TestWithGitConfig(t *testing.T) {
	env := withGitConfig([]string{"A=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=x.y", "GIT_CONFIG_VALUE_0=z"}, [][2]string{{"gc.auto", "0"}})
	want := []string{"A=1", "GIT_CONFIG_KEY_0=x.y", "GIT_CONFIG_VALUE_0=z", "GIT_CONFIG_KEY_1=gc.auto", "GIT_CONFIG_VALUE_1=0", "GIT_CONFIG_COUNT=2"}
	if !slices.Equal(env, want) {
		t.Fatalf("env %v, want %v", env, want)
	}
}
