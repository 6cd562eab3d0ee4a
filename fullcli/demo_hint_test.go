package fullcli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestM1ndCommand(t *testing.T) {
	tmp := t.TempDir()
	bin := func(path string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	installed := bin(filepath.Join(tmp, "go", "bin", "m1nd"))
	other := bin(filepath.Join(tmp, "my builds", "m1nd"))
	goRun := bin(filepath.Join(tmp, "go-build123", "b001", "exe", "m1nd"))
	src := filepath.Join(tmp, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module github.com/m1nd/m1nd\n\ngo 1.26.0\n"), 0o644)
	demoDir := filepath.Join(tmp, "demo-brain")

	tests := []struct {
		name, self, onPath, cwd string
		wantCmd, wantNote       string
	}{
		{"the m1nd on PATH", installed, installed, tmp, "m1nd", ""},
		{"not on PATH", other, "", tmp, "'" + other + "'", "this m1nd is not on your PATH"},
		{"another build on PATH", other, installed, tmp, "'" + other + "'", "the m1nd on your PATH, " + installed + ", is another build"},
		{"go run in the source folder", goRun, "", src, "go -C " + src + " run ./cmd/m1nd -C " + demoDir,
			"m1nd is not installed: CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/... puts m1nd on your PATH (the static, fast build the README installs)"},
		{"go run elsewhere", goRun, "", tmp, "m1nd",
			"m1nd is not installed yet: from the m1nd source folder, CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/... puts m1nd on your PATH (the static, fast build the README installs)"},
	}
	for _, tt := range tests {
		cmd, note := m1ndCommand(tt.self, tt.onPath, tt.cwd, demoDir)
		if cmd != tt.wantCmd || note != tt.wantNote {
			t.Errorf("%s: got %q (%q), want %q (%q)", tt.name, cmd, note, tt.wantCmd, tt.wantNote)
		}
	}
}
