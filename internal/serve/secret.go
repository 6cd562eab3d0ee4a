package serve

// The shared local secret that authenticates the runner daemon and the
// owner to each other on loopback. m1nd init makes it; runnerd and the
// owner read it.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
)

// SecretFile is the secret's name inside the runtime dir.
const SecretFile = "runnerd.secret"

// EnsureSecret creates the secret (32 random bytes as 64 hex, mode 0600)
// unless a valid one exists. created reports whether it wrote one. An
// existing secret that is a symlink, readable by others or malformed is
// refused, never silently replaced: the operator decides.
func EnsureSecret(runtimeDir string) (created bool, err error) {
	path := filepath.Join(runtimeDir, SecretFile)
	if _, err := LoadSecret(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return false, fmt.Errorf("generate secret: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(b[:]) + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(path)
		return false, fmt.Errorf("write %s: %w", path, err)
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
