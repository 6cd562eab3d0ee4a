package secret

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// repoAt is a real repository named shop in a fresh folder, opened.
func repoAt(t *testing.T) *gitstore.Repo {
	t.Helper()
	g := gittest.Init(t, "shop")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}

func TestEnsureSecret(t *testing.T) {
	repo := repoAt(t)
	created, err := EnsureSecret(repo)
	if err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	path := SecretPath(repo)
	// Outside the git dir, which every agent can read: beside the mission
	// worktrees, in a folder only its owner enters.
	if want := filepath.Join(filepath.Dir(repo.MainWorkTree()), "shop.m1nd", ".private", SecretFile); path != want {
		t.Fatalf("secret at %s, want %s", path, want)
	}
	if strings.HasPrefix(path, repo.CommonDir()) {
		t.Fatalf("the secret is in the git dir: %s", path)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("private folder mode %o", di.Mode().Perm())
	}
	first, err := LoadSecret(path)
	if err != nil || len(first) != 64 {
		t.Fatalf("load: %q %v", first, err)
	}
	if created, err := EnsureSecret(repo); err != nil || created {
		t.Fatalf("second: %v %v", created, err)
	}
	if again, _ := LoadSecret(path); again != first {
		t.Fatal("secret changed on the second run")
	}
}

func TestEnsureSecretMovesTheOldOne(t *testing.T) {
	repo := repoAt(t)
	if _, err := repo.EnsureRuntimeDir(); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(repo.RuntimeDir(), SecretFile)
	want := strings.Repeat("ab", 32)
	if err := os.WriteFile(old, []byte(want+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if created, err := EnsureSecret(repo); err != nil || !created {
		t.Fatalf("move: %v %v", created, err)
	}
	if got, err := LoadSecret(SecretPath(repo)); err != nil || got != want {
		t.Fatalf("moved secret %q %v, want %q", got, err, want)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the old secret is still in the runtime dir: %v", err)
	}
}

func TestSecretRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string) error
		want  string
	}{
		{"group readable", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, SecretFile), []byte(strings.Repeat("a", 64)), 0o640)
		}, "0600"},
		{"malformed", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, SecretFile), []byte("short"), 0o600)
		}, "malformed"},
		{"symlink", func(dir string) error {
			target := filepath.Join(dir, "elsewhere")
			os.WriteFile(target, []byte(strings.Repeat("a", 64)), 0o600)
			return os.Symlink(target, filepath.Join(dir, SecretFile))
		}, "symlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := repoAt(t)
			dir := PrivateDir(repo)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			_, err := EnsureSecret(repo)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestRunnerKey(t *testing.T) {
	repo := repoAt(t)
	pub, err := RunnerPublicKey(repo) // made when missing
	if err != nil {
		t.Fatal(err)
	}
	key, err := LoadRunnerKey(repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules.RunnerKey(key.Public().(ed25519.PublicKey)); got != pub {
		t.Fatalf("public key %s, loaded %s", pub, got)
	}
	if fi, _ := os.Stat(RunnerKeyPath(repo)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %o", fi.Mode().Perm())
	}
	if created, err := EnsureRunnerKey(repo); err != nil || created {
		t.Fatalf("a second ensure made a new key: %v %v", created, err)
	}
	if again, _ := RunnerPublicKey(repo); again != pub {
		t.Fatal("the key changed")
	}
	if err := os.Chmod(RunnerKeyPath(repo), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureRunnerKey(repo); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("a key readable by others: %v", err)
	}
}
