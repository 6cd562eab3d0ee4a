package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A runtime file that is not a regular file is refused at once with a
// lesson naming what it is: never read (a FIFO would block), never
// followed (a link could point anywhere, and an error must not quote its
// target's contents).
func TestReadRuntime(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("TARGET-CONTENTS"), 0o600)
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("ok"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(secret, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for _, tc := range []struct {
		name, path, kind string
		missing          bool
	}{
		{"a regular file", regular, "", false},
		{"a symbolic link", link, "symbolic link", false},
		{"a FIFO", fifo, "named pipe (FIFO)", false},
		{"a folder", sub, "folder", false},
		{"nothing", filepath.Join(dir, "none"), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadRuntime(tc.path, 1<<10)
			switch {
			case tc.missing:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("err %v, want not exist", err)
				}
			case tc.kind == "":
				if err != nil || string(data) != "ok" {
					t.Fatalf("%q, %v", data, err)
				}
			default:
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Kind != tc.kind || !errors.Is(err, ErrNotRegular) {
					t.Fatalf("err %v, want a %s refused", err, tc.kind)
				}
				if !strings.Contains(err.Error(), "remove it") || strings.Contains(err.Error(), "TARGET-CONTENTS") {
					t.Fatalf("lesson: %v", err)
				}
			}
		})
	}
}
