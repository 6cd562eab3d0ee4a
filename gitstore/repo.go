package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotRepository is returned by Open when no git repository encloses the
// directory.
var ErrNotRepository = errors.New("not a git repository (or any parent up to /)")

// Repo is an open repository. Refs and objects always resolve in the common
// git dir, so a Repo opened from a linked worktree writes where git (and
// every other worktree) sees it. A Repo is safe for concurrent use.
type Repo struct {
	gitDir    string // this worktree's git dir (equals commonDir outside linked worktrees)
	commonDir string // where refs, objects and config live
	workTree  string // root of the worktree Open was called in; "" when bare

	// LockTimeout bounds how long UpdateRef waits for a held ref lock.
	LockTimeout time.Duration

	mu        sync.Mutex  // serialises catFile
	catFile   *CatFile    // git's own reader, for what the pack reader leaves to git; started on first use
	packFirst atomic.Bool // the last object read came from a pack
	packs     packReader  // m1nd's own lock-free pack reader (pack.go); git (catFile) is its fallback

	configOnce sync.Once
	config     gitConfig
	// perWorktree: config[0] is this worktree's config.worktree.
	perWorktree bool
	configErr   error
}

// Open discovers the repository enclosing dir, like git does: it walks up
// from dir looking for a .git directory or a .git file (a linked worktree or
// submodule), or for dir being a git dir itself. GIT_DIR, when set, wins.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", dir, err)
	}
	gitDir, workTree, err := discover(abs)
	if err != nil {
		return nil, err
	}
	commonDir, err := readCommonDir(gitDir)
	if err != nil {
		return nil, err
	}
	return &Repo{gitDir: gitDir, commonDir: commonDir, workTree: workTree, LockTimeout: DefaultLockTimeout}, nil
}

func discover(start string) (gitDir, workTree string, err error) {
	if env := os.Getenv("GIT_DIR"); env != "" {
		gd, err := filepath.Abs(env)
		if err != nil {
			return "", "", fmt.Errorf("GIT_DIR %s: %w", env, err)
		}
		if !isGitDir(gd) {
			return "", "", fmt.Errorf("GIT_DIR %s: %w", env, ErrNotRepository)
		}
		wt := os.Getenv("GIT_WORK_TREE")
		if wt == "" && filepath.Base(gd) == ".git" {
			wt = filepath.Dir(gd)
		}
		return gd, wt, nil
	}
	for dir := start; ; {
		dotGit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir() && isGitDir(dotGit):
			return dotGit, dir, nil
		case err == nil && fi.Mode().IsRegular():
			gd, err := readGitFile(dotGit)
			if err != nil {
				return "", "", err
			}
			return gd, dir, nil
		}
		if isGitDir(dir) {
			return dir, "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("open %s: %w", start, ErrNotRepository)
		}
		dir = parent
	}
}

// isGitDir applies git's own test: HEAD, objects/ and refs/ are present.
func isGitDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if fi, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !fi.IsDir() {
		// A linked worktree's git dir has no objects/ of its own.
		if _, err := os.Stat(filepath.Join(dir, "commondir")); err != nil {
			return false
		}
	}
	return true
}

// readGitFile follows a ".git" file ("gitdir: <path>").
func readGitFile(path string) (string, error) {
	b, err := ReadRegular(path, 64<<10)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	line := strings.TrimSpace(string(b))
	target, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file", path)
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	if !isGitDir(target) {
		return "", fmt.Errorf("%s points to %s: %w", path, target, ErrNotRepository)
	}
	return filepath.Clean(target), nil
}

func readCommonDir(gitDir string) (string, error) {
	if env := os.Getenv("GIT_COMMON_DIR"); env != "" {
		return filepath.Abs(env)
	}
	b, err := ReadRegular(filepath.Join(gitDir, "commondir"), 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("read commondir: %w", err)
	}
	cd := strings.TrimSpace(string(b))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitDir, cd)
	}
	return filepath.Clean(cd), nil
}

// Close releases mapped pack files and ends the git reader. It waits for
// reads in flight; reads after Close still work, through git (which a
// later Close ends again).
func (r *Repo) Close() error {
	r.closePacks()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.catFile == nil {
		return nil
	}
	err := r.catFile.Close()
	r.catFile = nil
	return err
}

// GitDir is the git dir of the worktree the repository was opened in.
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git dir shared by all worktrees (`git rev-parse --git-common-dir`).
func (r *Repo) CommonDir() string { return r.commonDir }

// WorkTree is the root of the worktree the repository was opened in, or ""
// for a bare repository.
func (r *Repo) WorkTree() string { return r.workTree }

// RemoteDir is the folder git commands that reach a remote run in: the
// worktree, so a remote named by a relative path (git remote add origin
// ../shop.git) resolves as the user's own git resolves it; the common dir
// of a bare repository.
func (r *Repo) RemoteDir() string {
	if r.workTree != "" {
		return r.workTree
	}
	return r.commonDir
}

// MainWorkTree is the root of the repository's main worktree, also when the
// repository was opened from a linked worktree; "" for a bare repository.
func (r *Repo) MainWorkTree() string {
	if wt, ok := r.ConfigValue("core", "worktree"); ok && wt != "" {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(r.commonDir, wt)
		}
		return filepath.Clean(wt)
	}
	if r.ConfigTrue("core", "bare") {
		return ""
	}
	if filepath.Base(r.commonDir) == ".git" {
		return filepath.Dir(r.commonDir)
	}
	return ""
}

// CommandDir is where the git CLI runs on this repository: the main
// worktree, or the repository itself when it is bare (git finds it from
// either, also for a repository opened from a linked worktree).
func (r *Repo) CommandDir() string {
	if main := r.MainWorkTree(); main != "" {
		return main
	}
	return filepath.Clean(r.commonDir)
}

// RuntimeDir is m1nd's private folder inside the common git dir: never a ref,
// never pushed.
func (r *Repo) RuntimeDir() string { return filepath.Join(r.commonDir, "m1nd") }

// EnsureRuntimeDir creates the runtime folder (mode 0700) if it is missing
// and reports whether it did.
func (r *Repo) EnsureRuntimeDir() (bool, error) {
	dir := r.RuntimeDir()
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return false, fmt.Errorf("%s exists and is not a folder", dir)
		}
		return false, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return false, fmt.Errorf("create runtime dir: %w", err)
	}
	return true, nil
}

// InitWithCommit creates a repository at dir with git itself (`git init`),
// then commits whatever files dir holds, as "m1nd <m1nd@localhost>" unless
// the environment names an identity.
func InitWithCommit(ctx context.Context, dir, message string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=m1nd", "-c", "user.email=m1nd@localhost", "commit", "-q", "--allow-empty", "-m", message},
	} {
		if _, err := Git(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// NoReplaceEnv is the environment of the git processes m1nd reads through:
// this process's, with replace refs ignored. `git replace` can make plain
// git show a forged letter in place of a real one; m1nd reads, judges and
// verifies the objects as they are (its own readers never apply replace
// refs either), and verify reports the replacement.
func NoReplaceEnv() []string {
	return append(os.Environ(), "GIT_NO_REPLACE_OBJECTS=1")
}

// WorktreeAdminDir is the admin folder of the linked worktree wt of the
// repository whose common dir is common (common/worktrees/<name>), read
// from wt's ".git" file without running git. It is refused unless that
// folder lies directly in common/worktrees and names wt back (its gitdir
// file): a ".git" file rewritten inside the worktree cannot point
// elsewhere in the repository.
func WorktreeAdminDir(common, wt string) (string, error) {
	gitFile := filepath.Join(wt, ".git")
	admin, err := readGitFile(gitFile)
	if err != nil {
		return "", err
	}
	if realPath(filepath.Dir(admin)) != realPath(filepath.Join(common, "worktrees")) {
		return "", fmt.Errorf("%s points to %s, not to a worktree's folder of %s", gitFile, admin, common)
	}
	back, err := ReadRegular(filepath.Join(admin, "gitdir"), 64<<10)
	if err != nil {
		return "", fmt.Errorf("worktree %s: %w", wt, err)
	}
	if realPath(strings.TrimSpace(string(back))) != realPath(gitFile) {
		return "", fmt.Errorf("%s belongs to another worktree than %s", admin, wt)
	}
	return admin, nil
}

// realPath is path with its symbolic links resolved, or cleaned when it
// cannot be.
func realPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}
