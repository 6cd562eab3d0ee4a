package gitstore

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSharedMode(t *testing.T) {
	for _, tt := range []struct {
		value string
		mode  fs.FileMode
		want  fs.FileMode
	}{
		{"", 0o444, 0o444},
		{"umask", 0o400, 0o400},
		{"group", 0o400, 0o440},
		{"true", 0o444, 0o444},
		{"group", 0o644, 0o664},
		{"all", 0o600, 0o664},
		{"everybody", 0o400, 0o444},
		{"0640", 0o444, 0o440},
		{"0640", 0o666, 0o640},
		{"group", fs.ModeDir | 0o755, fs.ModeDir | fs.ModeSetgid | 0o775},
		{"group", fs.ModeDir | 0o700, fs.ModeDir | fs.ModeSetgid | 0o770},
	} {
		if got := sharedMode(sharedPerm(tt.value, tt.value != ""), tt.mode); got != tt.want {
			t.Errorf("%q on %v: %v, want %v", tt.value, tt.mode, got, tt.want)
		}
	}
}

// TestObjectAndRefModesAreGits: under every umask and sharing setting, the
// loose objects, object folders and ref files m1nd writes get exactly the
// modes git gives its own, so another user of a shared repository reads
// them as git's. Each case runs in a child process (the umask is the
// process's).
func TestObjectAndRefModesAreGits(t *testing.T) {
	if os.Getenv("M1ND_MODES_CHILD") != "" {
		writeForModes(t)
		return
	}
	for _, umask := range []string{"002", "022", "077"} {
		for _, shared := range []string{"", "group", "all", "0640"} {
			t.Run(fmt.Sprintf("umask %s shared %q", umask, shared), func(t *testing.T) {
				dir := t.TempDir()
				run := func(args ...string) string {
					t.Helper()
					cmd := exec.Command("sh", append([]string{"-c", "umask " + umask + " && exec \"$@\"", "sh"}, args...)...)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "M1ND_MODES_CHILD=1", "M1ND_MODES_DIR="+dir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("%v: %v\n%s", args, err, out)
					}
					return strings.TrimSpace(string(out))
				}
				run("git", "init", "-q")
				if shared != "" {
					run("git", "config", "core.sharedRepository", shared)
				}
				// git's object and its fresh folder, then m1nd's.
				gitObj := run("git", "hash-object", "-w", "--stdin", "--path", "x") // empty blob
				run(os.Args[0], "-test.run=^TestObjectAndRefModesAreGits$")
				m1ndObj, _ := os.ReadFile(filepath.Join(dir, "m1nd-object"))
				run("git", "update-ref", "refs/other/by-git", gitObj)
				mode := func(p string) fs.FileMode {
					fi, err := os.Stat(filepath.Join(dir, ".git", p))
					if err != nil {
						t.Fatal(err)
					}
					return fi.Mode()
				}
				obj := func(h string) string { return filepath.Join("objects", h[:2], h[2:]) }
				m := strings.TrimSpace(string(m1ndObj))
				if g, w := mode(obj(m)), mode(obj(gitObj)); g != w {
					t.Errorf("m1nd's object is %v, git's %v", g, w)
				}
				if g, w := mode(filepath.Dir(obj(m))), mode(filepath.Dir(obj(gitObj))); g != w {
					t.Errorf("m1nd's object folder is %v, git's %v", g, w)
				}
				if g, w := mode("refs/m1nd/x/y"), mode("refs/other/by-git"); g != w {
					t.Errorf("m1nd's ref is %v, git's %v", g, w)
				}
				if g, w := mode("refs/m1nd/x"), mode("refs/other"); shared != "" && g&^fs.ModeSetgid != w&^fs.ModeSetgid {
					t.Errorf("m1nd's ref folder is %v, git's %v", g, w)
				}
			})
		}
	}
}

// writeForModes is the child: it writes a blob whose folder git has not
// made and a ref in a folder of its own, and names the blob.
func writeForModes(t *testing.T) {
	dir := os.Getenv("M1ND_MODES_DIR")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var h Hash
	for i := 0; ; i++ {
		if h, err = r.WriteBlob([]byte(fmt.Sprintf("m1nd %d", i))); err != nil {
			t.Fatal(err)
		}
		if h.String()[:2] != "e6" { // not the empty blob's folder, which git made
			break
		}
	}
	if err := r.UpdateRef(t.Context(), "refs/m1nd/x/y", ZeroHash, h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m1nd-object"), []byte(h.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPackedRefLookup: one ref read from packed-refs without the map is
// the value git itself reads, for every ref and for none, also on the
// last line when the file ends without a new line.
func TestPackedRefLookup(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "one")
	git("tag", "-a", "-m", "t", "a") // a peeled line follows it
	names := []string{"refs/m1nd/missions/msn_000000000001", "refs/m1nd/missions/msn_000000000002", "refs/m1nd/missions/msn_0000000000020"}
	for i, n := range names {
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprint(i))
		git("update-ref", n, "HEAD")
	}
	git("pack-refs", "--all")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range append(names, "refs/tags/a") {
		h, ok, err := r.ReadRef(n)
		if err != nil || !ok || h.String() != git("rev-parse", n) {
			t.Errorf("%s: %s %v %v, git says %s", n, h, ok, err, git("rev-parse", n))
		}
	}
	for _, n := range []string{"refs/m1nd/missions/msn_00000000000", "refs/m1nd/missions/msn_000000000003"} {
		if h, ok, err := r.ReadRef(n); ok || err != nil {
			t.Errorf("%s: %s %v %v, want none", n, h, ok, err)
		}
	}
	git("tag", "-d", "a") // the last line is a mission's again
	packed := filepath.Join(dir, ".git", "packed-refs")
	data, _ := os.ReadFile(packed)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	last := strings.Fields(lines[len(lines)-1])[1]
	want := git("rev-parse", last)
	os.WriteFile(packed, []byte(strings.TrimRight(string(data), "\n")), 0o644)
	if h, ok, err := r.ReadRef(last); err != nil || !ok || h.String() != want {
		t.Errorf("the last line without its new line: %s %v %v", h, ok, err)
	}
}
