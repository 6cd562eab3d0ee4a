package secret

// The shared local secret that authenticates the runner daemon and the
// owner to each other on loopback. m1nd init makes it; runnerd and the
// owner read it.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
)

// SecretFile is the secret's name inside the private folder (PrivateDir).
const SecretFile = "runnerd.secret"

// EnsureSecret creates repo's runnerd secret (32 random bytes as 64 hex,
// mode 0600) in its private folder unless a valid one exists. created
// reports whether it wrote one. An existing secret that is a symlink,
// readable by others or malformed is refused, never silently replaced:
// the operator decides. A secret a release before kept in the runtime dir
// (where agents can read it) moves to the private folder.
func EnsureSecret(repo *gitstore.Repo) (created bool, err error) {
	path := SecretPath(repo)
	if missing, err := privateMissing(path, func() error { _, err := LoadSecret(path); return err }); !missing {
		return false, err
	}
	legacy := filepath.Join(repo.RuntimeDir(), SecretFile)
	if old, err := LoadSecret(legacy); err == nil {
		if err := writeNew(path, []byte(old+"\n")); err != nil {
			return false, err
		}
		return true, os.Remove(legacy)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return false, fmt.Errorf("generate secret: %w", err)
	}
	if err := writeNew(path, []byte(hex.EncodeToString(b[:])+"\n")); err != nil {
		return false, err
	}
	return true, nil
}

// LoadSecret reads and checks the secret file.
func LoadSecret(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("%s is a symlink; the secret must be a plain file", path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("%s has mode %04o; it must be 0600 (chmod 600 it)", path, fi.Mode().Perm())
	}
	b, err := gitstore.ReadRuntime(path, 64<<10)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
		return "", fmt.Errorf("%s is malformed: want 64 hex characters", path)
	}
	return s, nil
}
