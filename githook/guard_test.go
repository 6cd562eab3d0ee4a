package githook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardOnlyWhereAgentsWrite: after Guard of one linked worktree, a raw
// write to refs/m1nd/ there starts m1nd (the spy), and the same write from
// the main worktree and from another linked one starts nothing of m1nd's;
// the repository's own hooks run in the guarded worktree as anywhere
// else, each under its own path, those added later once the folder is
// synced again, and a wrapper goes with the hook it ran. Unguard gives
// the worktree git's own hooks back.
func TestGuardOnlyWhereAgentsWrite(t *testing.T) {
	r := newChainRig(t)
	ctx := context.Background()
	work := t.TempDir()
	spyLog := filepath.Join(work, "m1nd.log")
	spy := filepath.Join(work, "m1nd-spy")
	os.WriteFile(spy, []byte("#!/bin/sh\necho \"$*\" >>"+spyLog+"\ncat >/dev/null\n"), 0o755)
	hooks := filepath.Join(r.repo.CommonDir(), "hooks")
	os.MkdirAll(hooks, 0o755)
	ownLog := filepath.Join(work, "own.log")
	os.WriteFile(filepath.Join(hooks, "post-commit"), []byte("#!/bin/sh\necho \"post-commit $0\" >>"+ownLog+"\n"), 0o755)
	os.WriteFile(filepath.Join(hooks, "helper.sh"), []byte("#!/bin/sh\n"), 0o755) // not a hook git runs
	agent, other := filepath.Join(work, "agent"), filepath.Join(work, "other")
	r.g.Git("worktree", "add", "-q", "--detach", agent)
	r.g.Git("worktree", "add", "-q", "--detach", other)
	changed, err := Guard(ctx, r.repo, agent, spy)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(agent, GuardDir(r.repo))
	if got := strings.Join(changed, "\n"); !strings.Contains(got, "extensions.worktreeConfig=true") || !strings.Contains(got, agent+": core.hooksPath="+rel) || !strings.HasPrefix(rel, "../") {
		t.Fatalf("changed:\n%s", got)
	}
	if again, err := Guard(ctx, r.repo, agent, spy); err != nil || len(again) != 0 {
		t.Fatalf("guarding again changed %v (%v)", again, err)
	}
	if _, err := os.Stat(filepath.Join(GuardDir(r.repo), "helper.sh")); err == nil {
		t.Fatal("a file that is no hook was forwarded")
	}
	head := r.g.Git("rev-parse", "HEAD")
	for i, dir := range []string{r.g.Dir, other, agent} {
		os.Remove(spyLog)
		r.g.Git("-C", dir, "update-ref", "refs/m1nd/missions/msn_00000000000"+string(rune('1'+i)), head)
		log, _ := os.ReadFile(spyLog)
		if guarded := dir == agent; guarded != strings.Contains(string(log), "hooks run reference-transaction prepared") {
			t.Fatalf("a write from %s started m1nd: %q (guarded: %v)", dir, log, guarded)
		}
	}
	r.g.Git("-C", agent, "commit", "-q", "--allow-empty", "-m", "x")
	if log, _ := os.ReadFile(ownLog); string(log) != "post-commit "+filepath.Join(hooks, "post-commit")+"\n" {
		t.Fatalf("the repository's own hook in the guarded worktree: %q", log)
	}
	// A hook added later runs once the folder is synced; one removed goes.
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\necho pre-commit >>"+ownLog+"\n"), 0o755)
	os.Remove(filepath.Join(hooks, "post-commit"))
	if _, err := SyncGuardDir(r.repo, spy); err != nil {
		t.Fatal(err)
	}
	os.Remove(ownLog)
	r.g.Git("-C", agent, "commit", "-q", "--allow-empty", "-m", "y")
	if log, _ := os.ReadFile(ownLog); string(log) != "pre-commit\n" {
		t.Fatalf("after the sync: %q", log)
	}
	if _, err := os.Stat(filepath.Join(GuardDir(r.repo), "post-commit")); err == nil {
		t.Fatal("the wrapper of a removed hook stayed")
	}
	// Unguarded: git's own hooks, no m1nd.
	if did, err := Unguard(ctx, r.repo, agent); err != nil || !did {
		t.Fatalf("unguard: %v %v", did, err)
	}
	os.Remove(spyLog)
	r.g.Git("-C", agent, "update-ref", "refs/m1nd/missions/msn_0000000000ff", head)
	if log, _ := os.ReadFile(spyLog); len(log) != 0 {
		t.Fatalf("an unguarded worktree started m1nd: %q", log)
	}
	if did, err := Unguard(ctx, r.repo, agent); err != nil || did {
		t.Fatalf("unguard again: %v %v", did, err)
	}
}

// TestGuardRefusesAWorktreesOwnHooks: a worktree whose own config names a
// hooks folder is not guarded (its hooks would go silent), and says how.
func TestGuardRefusesAWorktreesOwnHooks(t *testing.T) {
	r := newChainRig(t)
	r.g.Git("config", "extensions.worktreeConfig", "true")
	r.g.Git("config", "--worktree", "core.hooksPath", "my-hooks")
	_, err := Guard(context.Background(), r.repo, r.g.Dir, "m1nd")
	var hp *HooksPathError
	if !errors.As(err, &hp) || !strings.Contains(err.Error(), "git config --worktree --unset core.hooksPath") {
		t.Fatalf("guard over the worktree's own hooks: %v", err)
	}
	if v := r.g.Git("config", "--worktree", "core.hooksPath"); v != "my-hooks" {
		t.Fatalf("its hooksPath became %q", v)
	}
}

// TestGuardTakesTheSharedHookOut: a repository where an earlier m1nd put
// its reference-transaction hook in the shared folder, chaining the
// user's, gets the user's hook back there, byte for byte, under its name;
// the guard runs it first.
func TestGuardTakesTheSharedHookOut(t *testing.T) {
	r := newChainRig(t)
	hooks := filepath.Join(r.repo.CommonDir(), "hooks")
	os.MkdirAll(hooks, 0o755)
	own := "#!/bin/sh\ncat >/dev/null\n"
	os.WriteFile(filepath.Join(hooks, GitHookReferenceTransaction), []byte(olderHookScript), 0o755)
	os.WriteFile(filepath.Join(hooks, GitHookReferenceTransaction+legacyChainedSuffix), []byte(own), 0o755)
	changed, err := Guard(context.Background(), r.repo, r.g.Dir, "m1nd")
	if err != nil || !strings.Contains(strings.Join(changed, "\n"), filepath.Join(hooks, GitHookReferenceTransaction)) {
		t.Fatalf("guard: %v %v", changed, err)
	}
	if data, _ := os.ReadFile(filepath.Join(hooks, GitHookReferenceTransaction)); string(data) != own {
		t.Fatalf("the user's hook is not back:\n%s", data)
	}
	guard, _ := os.ReadFile(filepath.Join(GuardDir(r.repo), GitHookReferenceTransaction))
	if !strings.Contains(string(guard), `chained="${0%/*}/../../hooks/reference-transaction"`) {
		t.Fatalf("the guard does not run the user's hook first:\n%s", guard)
	}
	if hp := r.g.Git("config", "--worktree", "core.hooksPath"); hp != ".git/m1nd/hooks" {
		t.Fatalf("the worktree's own core.hooksPath is %q", hp)
	}
}
