package githook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
)

// Where the reference-transaction guard runs. Git starts a
// reference-transaction hook for every transaction of every worktree that
// sees it, twice for each loose ref pack-refs prunes (git 2.39), m1nd's
// refs or not: a hook in the repository's shared hooks folder made a
// human's pack-refs, branch -D or fetch tens of times slower. So the
// guard lives where agents write, and only there: in m1nd's own hooks
// folder (GuardDir), which a guarded worktree names as its core.hooksPath
// in its own config (extensions.worktreeConfig). The worktrees runnerd
// makes are guarded, and a worktree where `m1nd hook install` or `m1nd
// hooks install` ran; every other worktree runs git as if m1nd were not
// installed, and what it writes under refs/m1nd/ is judged by the readers,
// sync, verify and a guarded remote, which judge every ref anyway.
//
// A guarded worktree still runs the repository's own hooks: GuardDir
// holds, beside the guard, a wrapper for each hook of the shared hooks
// folder that execs it under its own path, and the guard runs the shared
// reference-transaction hook first.

// GuardDir is m1nd's own hooks folder in repo's runtime folder: the
// core.hooksPath of the worktrees m1nd guards.
func GuardDir(repo *gitstore.Repo) string { return filepath.Join(repo.RuntimeDir(), "hooks") }

// SharedHooksDir is where git looks for hooks in a worktree that names
// none of its own: core.hooksPath of the repository's or the user's
// config (relative to the worktree root, or to the repository when bare),
// or the common dir's hooks.
func SharedHooksDir(repo *gitstore.Repo) string {
	p, ok := repo.SharedConfigValue("core", "hooksPath")
	return hooksPathOr(repo, p, ok)
}

// gitHookNames are the hooks git runs (githooks(5)): the ones a guarded
// worktree forwards to the shared folder.
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change",
}

// wrapperScript runs the shared folder's hook name (at target) in a
// guarded worktree, exec'd so its $0 is its own path.
func wrapperScript(name, target string) string {
	return fmt.Sprintf(`#!/bin/sh
%s: in a worktree m1nd guards, the repository's own %s hook runs as anywhere else.
hook=%s
[ -x "$hook" ] || exit 0
exec "$hook" "$@"
`, hookMarker, name, shellQuote(target))
}

// sharedWord is the shell word for the shared folder's hook name, seen
// from GuardDir: relative when the shared folder is the common dir's
// hooks (the repository may move), else the path.
func sharedWord(repo *gitstore.Repo, shared, name string) string {
	if shared == filepath.Join(repo.CommonDir(), "hooks") {
		return `"${0%/*}/../../hooks/` + name + `"`
	}
	return shellQuote(filepath.Join(shared, name))
}

// SyncGuardDir writes GuardDir: the reference-transaction guard calling
// command, and a wrapper for each hook the shared folder holds now; a
// wrapper whose hook went is removed. It returns the paths it changed.
func SyncGuardDir(repo *gitstore.Repo, command string) ([]string, error) {
	dir, shared := GuardDir(repo), SharedHooksDir(repo)
	if filepath.Clean(dir) == filepath.Clean(shared) {
		return nil, &HooksPathError{fmt.Sprintf("core.hooksPath of the repository is m1nd's own hooks folder %s: give it back its own (git config --unset core.hooksPath)", dir)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	want := map[string]string{GitHookReferenceTransaction: hookScript(GitHookReferenceTransaction, command, sharedWord(repo, shared, GitHookReferenceTransaction))}
	for _, name := range gitHookNames {
		if fi, err := os.Stat(filepath.Join(shared, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			want[name] = wrapperScript(name, filepath.Join(shared, name))
		}
	}
	var changed []string
	for _, name := range append([]string{GitHookReferenceTransaction}, gitHookNames...) {
		path := filepath.Join(dir, name)
		old, err := gitstore.ReadRegular(path, 1<<20)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return changed, err
		}
		script, ok := want[name]
		switch {
		case ok && string(old) == script:
		case ok:
			if err := gitstore.WriteFileAtomic(path, []byte(script), 0o755); err != nil {
				return changed, err
			}
			changed = append(changed, path)
		case err == nil && strings.Contains(string(old), hookMarker):
			if err := os.Remove(path); err != nil {
				return changed, err
			}
			changed = append(changed, path)
		}
	}
	return changed, nil
}

// Guard makes the worktree at worktree one m1nd guards: GuardDir written
// (SyncGuardDir), extensions.worktreeConfig on, and the worktree's own
// core.hooksPath naming GuardDir. A worktree that names a hooks folder of
// its own is refused: the guard would silence its hooks. It also takes
// m1nd's reference-transaction hook out of the shared folder, where an
// earlier m1nd put it (RemoveShared). It returns what it changed: paths it
// wrote, "removed PATH" for what it took out, and the config it set.
func Guard(ctx context.Context, repo *gitstore.Repo, worktree, command string) ([]string, error) {
	removed, err := RemoveShared(repo)
	changed := make([]string, len(removed))
	for i, p := range removed {
		changed[i] = RemovedPrefix + p
	}
	if err != nil {
		return changed, err
	}
	synced, err := SyncGuardDir(repo, command)
	changed = append(changed, synced...)
	if err != nil {
		return changed, err
	}
	git := gitstore.GitCmd{Dir: worktree}
	dir := guardPath(repo, worktree)
	if v, _, _ := git.Run(ctx, "config", "--get", "extensions.worktreeConfig"); v != "true" {
		if _, _, err := git.Run(ctx, "config", "extensions.worktreeConfig", "true"); err != nil {
			return changed, fmt.Errorf("guard %s: %w", worktree, err)
		}
		changed = append(changed, "extensions.worktreeConfig=true")
	}
	own, code, err := git.Run(ctx, "config", "--worktree", "--get", "core.hooksPath")
	switch {
	case code == 1: // unset
	case err != nil:
		return changed, fmt.Errorf("guard %s: %w", worktree, err)
	case namesGuard(repo, worktree, own):
		return changed, nil
	default:
		return changed, &HooksPathError{fmt.Sprintf("guard %s: its own config names the hooks folder %s (core.hooksPath); m1nd's guard would silence those hooks: unset it (git config --worktree --unset core.hooksPath) or leave this worktree unguarded", worktree, own)}
	}
	if _, _, err := git.Run(ctx, "config", "--worktree", "core.hooksPath", dir); err != nil {
		return changed, fmt.Errorf("guard %s: %w", worktree, err)
	}
	return append(changed, worktree+": core.hooksPath="+dir), nil
}

// HooksPathError is a hooks folder m1nd will not take over: the
// operator's to settle, as its message says (a usage error, not m1nd's
// failure).
type HooksPathError struct{ Msg string }

func (e *HooksPathError) Error() string { return e.Msg }

// RemovedPrefix begins an entry of Guard's changes that names what it
// took out.
const RemovedPrefix = "removed "

// Unguard takes m1nd's guard out of the worktree at worktree: its own
// core.hooksPath, when it names GuardDir. It reports whether it did.
func Unguard(ctx context.Context, repo *gitstore.Repo, worktree string) (bool, error) {
	git := gitstore.GitCmd{Dir: worktree}
	own, code, err := git.Run(ctx, "config", "--worktree", "--get", "core.hooksPath")
	if code == 1 || (err == nil && !namesGuard(repo, worktree, own)) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("unguard %s: %w", worktree, err)
	}
	if _, _, err := git.Run(ctx, "config", "--worktree", "--unset", "core.hooksPath"); err != nil {
		return false, fmt.Errorf("unguard %s: %w", worktree, err)
	}
	return true, nil
}

// namesGuard reports whether own, the core.hooksPath of the worktree at
// worktree, names GuardDir: as Guard writes it, or by its path.
func namesGuard(repo *gitstore.Repo, worktree, own string) bool {
	return own == guardPath(repo, worktree) || own == GuardDir(repo)
}

// guardPath is how worktree's config names GuardDir: relative to the
// worktree's root, as git reads it, so a repository moved or copied whole
// keeps its guard; the path when no relative one reaches it.
func guardPath(repo *gitstore.Repo, worktree string) string {
	dir := GuardDir(repo)
	if rel, err := filepath.Rel(worktree, dir); err == nil {
		return rel
	}
	return dir
}

// RemoveShared takes m1nd's reference-transaction hook out of the shared
// hooks folder, where m1nd once installed it (every worktree paid for it),
// putting back a hook it chained. It returns the paths it changed.
func RemoveShared(repo *gitstore.Repo) ([]string, error) {
	return SetGitHooks(SharedHooksDir(repo), []string{GitHookReferenceTransaction}, false, "", nil)
}
