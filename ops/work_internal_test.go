package ops

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/m1nd/m1nd/internal/runs"
)

func TestParseNumstat(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []FileChange
	}{
		{"empty", "", []FileChange{}},
		{"plain", "3\t1\tcore/a.go\x0010\t0\tREADME.md\x00",
			[]FileChange{{"core/a.go", 3, 1}, {"README.md", 10, 0}}},
		{"binary", "-\t-\tlogo.png\x001\t0\ta.go\x00",
			[]FileChange{{"logo.png", -1, -1}, {"a.go", 1, 0}}},
		{"rename", "0\t0\t\x00old/a.go\x00new/a.go\x002\t2\tb.go\x00",
			[]FileChange{{"old/a.go → new/a.go", 0, 0}, {"b.go", 2, 2}}},
		{"rename with changes, binary", "-\t-\t\x00a.bin\x00b.bin\x00",
			[]FileChange{{"a.bin → b.bin", -1, -1}}},
		{"path with tab and spaces", "1\t1\ta b\tc.txt\x00",
			[]FileChange{{"a b\tc.txt", 1, 1}}},
		{"no final NUL", "1\t2\tx.go", []FileChange{{"x.go", 1, 2}}},
		{"junk between", "warning\x001\t2\tx.go\x00", []FileChange{{"x.go", 1, 2}}},
		{"cut before the name", "1\t2\t", []FileChange{}},
		{"rename cut before its names", "1\t1\tx\x000\t0\t\x00", []FileChange{{"x", 1, 1}}},
		{"rename cut after its first name", "0\t0\t\x00a\x00", []FileChange{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseNumstat(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseNumstat(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzParseNumstat: whatever git (or a broken pipe) prints, the parser
// does not panic and names every file it counts.
func FuzzParseNumstat(f *testing.F) {
	for _, s := range []string{"", "3\t1\tcore/a.go\x00", "-\t-\tlogo.png\x00", "0\t0\t\x00old\x00new\x00", "1\t2\t", "1\t2\t\x00a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, fc := range parseNumstat(in) {
			if fc.Path == "" {
				t.Fatalf("parseNumstat(%q) counts a file with no path: %+v", in, fc)
			}
		}
	})
}

func TestPrintable(t *testing.T) {
	b, g := gitBrain(t)
	parent := filepath.Dir(g.Dir) // …/shop's folder: the home here
	t.Setenv("HOME", parent)
	const id = "msn_0123456789ab"
	// The worktree lives in a sibling folder whose name starts with the
	// repository's: its path has the repository's path as a prefix.
	wt := g.Dir + ".worktrees/" + id
	if err := runs.WriteSide(b.repo.RuntimeDir(), &runs.Side{MissionID: id, Worktree: wt, Branch: WorkBranch(id)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, in, want string
	}{
		{"plain", "ok\n", "ok\n"},
		{"tab and new line kept", "a\tb\nc\n", "a\tb\nc\n"},
		{"ANSI colour", "\x1b[32mok\x1b[0m", "␛[32mok␛[0m"},
		{"cursor moves", "\x1b[2J\x1b[H\r", "␛[2J␛[H␍"},
		{"NUL and bell", "a\x00b\x07", "a␀b␇"},
		{"DEL", "x\x7fy", "x␡y"},
		{"C1 CSI", "a\u009b31mb", "a\uFFFD31mb"},
		{"C1 NEL", "a\u0085b", "a\uFFFDb"},
		{"bidi override", "user\u202Etxt.exe", "user\uFFFDtxt.exe"},
		{"bidi isolate", "\u2066x\u2069", "\uFFFDx\uFFFD"},
		{"line separator", "a\u2028b", "a\uFFFDb"},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"multibyte kept", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"worktree, not repo", "in " + wt + "/core/a.go", "in <worktree>/core/a.go"},
		{"repo", "at " + g.Dir + "/core", "at <repo>/core"},
		{"home", "cache " + parent + "/.cache/go", "cache ~/.cache/go"},
		{"all three", wt + " " + g.Dir + " " + parent, "<worktree> <repo> ~"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := b.Printable(id, []byte(tt.in))
			if got != tt.want {
				t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Printable(%q) = %q: not UTF-8", tt.in, got)
			}
		})
	}
	// A mission this machine never ran: no worktree to name, the rest is.
	if got := b.Printable("msn_ffffffffffff", []byte(wt)); got != "<repo>.worktrees/"+id {
		t.Errorf("no side record: got %q", got)
	}
}

func TestReadTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name, body string
		limit      int64
		want       string
		cut        bool
	}{
		{"under the limit", "one\ntwo\n", 64, "one\ntwo\n", false},
		{"at the limit", "one\ntwo\n", 8, "one\ntwo\n", false},
		{"empty", "", 8, "", false},
		{"cut at a line", "first line\nsecond\nthird\n", 10, "third\n", true},
		{"cut inside a line, next line whole", "aaaa\nbbbb\ncccc\n", 12, "bbbb\ncccc\n", true},
		// 10 bytes of "日本語ok" end: 語 is cut in its middle, no new line
		// to start at: the tail starts at the next whole rune.
		{"cut inside a rune", "日本語日本語ok", 7, "語ok", true},
		{"cut inside a rune, then a line", "日本\n語\nok", 6, "ok", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, cut, err := readTail(write(strings.ReplaceAll(tt.name, " ", "_"), tt.body), tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || cut != tt.cut {
				t.Errorf("readTail(%q, %d) = %q, %v; want %q, %v", tt.body, tt.limit, got, cut, tt.want, tt.cut)
			}
			if !utf8.Valid(got) {
				t.Errorf("readTail(%q, %d) = %q: starts inside a rune", tt.body, tt.limit, got)
			}
		})
	}
	if _, _, err := readTail(filepath.Join(dir, "missing"), 8); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}
