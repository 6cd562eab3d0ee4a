package secret

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// What must stay secret from the agents runnerd spawns — the secret that
// authenticates runnerd to the owner, and the key runnerd signs its gates
// with — lives outside the git dir, in a private folder of its own: the
// git dir is readable by every agent (git needs it whole), and a sandbox
// grants folders, never "a folder but that file". The private folder is
// <parent>/<repo>.m1nd/.private (0700), beside the mission worktrees and
// outside every folder runnerd's sandbox opens to an agent (runnerd
// checks that at start); a bare repository, where runnerd spawns nothing,
// keeps it in its runtime dir.

// PrivateFolder is the private folder's name in <parent>/<repo>.m1nd.
const PrivateFolder = ".private"

// RunnerKeyFile is runnerd's signing key's name in the private folder.
const RunnerKeyFile = "runner.key"

// PrivateDir is repo's private folder (see above).
func PrivateDir(repo *gitstore.Repo) string {
	main := repo.MainWorkTree()
	if main == "" {
		return filepath.Join(repo.RuntimeDir(), "private")
	}
	// One folder however the repository is reached (through a link, by
	// another path): its real path names it.
	if real, err := filepath.EvalSymlinks(main); err == nil {
		main = real
	}
	return filepath.Join(filepath.Dir(main), filepath.Base(main)+".m1nd", PrivateFolder)
}

// SecretPath is where repo's runnerd secret lives.
func SecretPath(repo *gitstore.Repo) string { return filepath.Join(PrivateDir(repo), SecretFile) }

// RunnerKeyPath is where repo's runnerd signing key lives.
func RunnerKeyPath(repo *gitstore.Repo) string { return filepath.Join(PrivateDir(repo), RunnerKeyFile) }

// ensurePrivateDir makes the private folder, 0700; one that exists must be
// a folder only its owner may enter.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the private folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder; m1nd keeps runnerd's secret and key there", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s has mode %04o; it must be 0700: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// writeNew writes a new secret file, 0600, failing if one exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readPrivate reads a file of the private folder: a plain file (no link),
// readable by its owner only.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symlink; it must be a plain file", path)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s has mode %04o; it must be 0600 (chmod 600 it)", path, fi.Mode().Perm())
	}
	return gitstore.ReadRuntime(path, 64<<10)
}

// EnsureRunnerKey makes runnerd's signing key (an Ed25519 seed as 64 hex,
// mode 0600) unless a valid one exists; created reports whether it wrote
// one. An existing key that is a link, readable by others or malformed is
// refused, never replaced: a new key is a new runner identity, which the
// human approves anew.
func EnsureRunnerKey(repo *gitstore.Repo) (created bool, err error) {
	path := RunnerKeyPath(repo)
	if missing, err := privateMissing(path, func() error { _, err := LoadRunnerKey(repo); return err }); !missing {
		return false, err
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return false, fmt.Errorf("generate runnerd's key: %w", err)
	}
	if err := writeNew(path, []byte(hex.EncodeToString(seed)+"\n")); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil // another process made it meanwhile
		}
		return false, err
	}
	return true, nil
}

// privateMissing reports whether the private file at path is to be made:
// load, which reads it, finds none. Then the private folder is made ready
// for it. A file that stands, valid or not, is not to be made (err says
// why it does not load).
func privateMissing(path string, load func() error) (bool, error) {
	if err := load(); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := ensurePrivateDir(filepath.Dir(path)); err != nil {
		return false, err
	}
	return true, nil
}

// LoadRunnerKey reads runnerd's signing key.
func LoadRunnerKey(repo *gitstore.Repo) (ed25519.PrivateKey, error) {
	path := RunnerKeyPath(repo)
	b, err := readPrivate(path)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s is malformed: want 64 hex characters", path)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// RunnerPublicKey is the public half of runnerd's signing key, as the
// runner pins carry it (rules.RunnerKey), the key made when missing.
func RunnerPublicKey(repo *gitstore.Repo) (string, error) {
	if _, err := EnsureRunnerKey(repo); err != nil {
		return "", err
	}
	key, err := LoadRunnerKey(repo)
	if err != nil {
		return "", err
	}
	return rules.RunnerKey(key.Public().(ed25519.PublicKey)), nil
}
