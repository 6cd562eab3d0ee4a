package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the hermetic environment every git call here runs with: no user
// or system config, a fixed identity, main as the default branch.
func Env(t testing.TB) []string {
	t.Helper()
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+global,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"NO_COLOR=1", // tests read m1nd's text, a terminal's too
	)
}

// SetEnv puts Env's git settings in the test's own environment, for code
// that runs git or reads git's config in this process (t.Setenv: restored
// when the test ends).
func SetEnv(t *testing.T) {
	t.Helper()
	for _, kv := range Env(t) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, v)
		}
	}
}

// Repo is a repository made for one test.
type Repo struct {
	t   testing.TB
	Dir string // the main worktree's root
	env []string
}

// Init makes a new repository in a folder named name under a fresh temp
// dir, with one commit on main so that worktrees can be added.
func Init(t testing.TB, name string) *Repo {
	t.Helper()
	r := &Repo{t: t, Dir: filepath.Join(t.TempDir(), name), env: Env(t)}
	r.Git("init", "-q", r.Dir)
	r.Git("-C", r.Dir, "commit", "-q", "--allow-empty", "-m", "root")
	return r
}

// Open is the repository (or bare repository) at dir, made elsewhere: a
// clone, a remote.
func Open(t testing.TB, dir string) *Repo {
	return &Repo{t: t, Dir: dir, env: Env(t)}
}

// Git runs git in the repository and returns its trimmed stdout, failing
// the test on a non-zero exit.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	out, err := r.TryGit(args...)
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitStdin runs git in the repository with stdin as its input and returns
// its trimmed stdout, failing the test on a non-zero exit.
func (r *Repo) GitStdin(stdin string, args ...string) string {
	r.t.Helper()
	out, err := r.gitStdin([]byte(stdin), args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// TryGit runs git in the repository and returns its output and error.
func (r *Repo) TryGit(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	if _, err := os.Stat(r.Dir); err == nil {
		cmd.Dir = r.Dir
	}
	cmd.Env = r.env
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(out) + string(ee.Stderr)), err
	}
	return strings.TrimSpace(string(out)), err
}

// Command prepares git with the repository's environment, for callers
// that need to start processes concurrently.
func (r *Repo) Command(args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = r.env
	return cmd
}

// CommitFiles writes files (slash paths relative to the worktree root) and
// commits them all with message, returning the new HEAD.
func (r *Repo) CommitFiles(message string, files map[string]string) string {
	r.t.Helper()
	for name, body := range files {
		path := filepath.Join(r.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.Git("add", "-A")
	r.Git("commit", "-q", "-m", message)
	return r.Git("rev-parse", "HEAD")
}

// CommitFile writes, with git's own plumbing, a commit on parent ("" for
// none) whose tree holds exactly one file, name = body: what a raw git
// write looks like, past every m1nd law. It returns the commit.
func (r *Repo) CommitFile(parent, name string, body []byte, message string) string {
	r.t.Helper()
	h, err := r.TryCommitFile(parent, name, body, message)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// TryCommitFile is CommitFile reporting a failure instead of failing the
// test, so any goroutine may call it.
func (r *Repo) TryCommitFile(parent, name string, body []byte, message string) (string, error) {
	blob, err := r.gitStdin(body, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	tree, err := r.gitStdin([]byte("100644 blob "+blob+"\t"+name+"\n"), "mktree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return r.gitStdin(nil, args...)
}

func (r *Repo) gitStdin(stdin []byte, args ...string) (string, error) {
	cmd := r.Command(args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}
