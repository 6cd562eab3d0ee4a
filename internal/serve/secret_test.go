package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureSecret(t *testing.T) {
	dir := t.TempDir()
	created, err := EnsureSecret(dir)
	if err != nil || !created {
		t.Fatalf("first: %v %v", created, err)
	}
	path := filepath.Join(dir, SecretFile)
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	first, err := LoadSecret(path)
	if err != nil || len(first) != 64 {
		t.Fatalf("load: %q %v", first, err)
	}
	if created, err := EnsureSecret(dir); err != nil || created {
		t.Fatalf("second: %v %v", created, err)
	}
	if again, _ := LoadSecret(path); again != first {
		t.Fatal("secret changed on the second run")
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
			dir := t.TempDir()
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			_, err := EnsureSecret(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}
