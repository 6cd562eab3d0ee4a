package gitstore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gitList is what git 2.39 itself reads from a config file: `git config
// -f FILE --list -z` (a name and its value per entry; a name alone for a
// variable without =), or the line git's refusal names.
func gitList(t testing.TB, data []byte) (list string, badLine string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "-f", path, "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		m := regexp.MustCompile(`bad config line (\d+) in file`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("git config --list on %q: %v: %s", data, err, stderr.String())
		}
		return "", m[1]
	}
	return string(out), ""
}

// ourList is parseConfig's reading in gitList's form.
func ourList(data []byte) (list string, badLine string) {
	f, err := parseConfig(data)
	if err != nil {
		return "", strings.TrimPrefix(err.Error(), "bad config line ")
	}
	var b strings.Builder
	for _, v := range f.vars {
		name := v.key
		if v.base != "" {
			name = v.base + "." + v.key
		}
		b.WriteString(name)
		if !v.noValue {
			b.WriteString("\n" + v.value)
		}
		b.WriteByte(0)
	}
	return b.String(), ""
}

// configCases are config files with what is hard in git's syntax.
var configCases = []string{
	"",
	"[core]\n\tbare = false\n\trepositoryformatversion = 0\n",
	"\ufeff[core]\nbare = true\n",
	"[core]\n\tbare\n",
	"x = 1\n[core]\n",
	"[core] bare = yes\n",
	"[core]\nbare # c\n",
	"[core]\nbare=true # c\nk = v ; c\n",
	"[a.b \"c\"]\nk=1\n",
	"[Core \"X\"]\nk=1\n",
	"[Core.X]\nK=1\n",
	"[core \"a\\\"b\\\\c\\d\"]\nk=1\n",
	"[core \"a\nb\"]\n",
	"[core \"a\"\n",
	"[core\n",
	"[core",
	"[]\n",
	"[ \"x\"]\nk=1\n",
	"[core \"\"]\nk=1\n",
	"[co_re]\n",
	"[core]\nk = a \\\n  b\n",
	"[core]\nk = \"a\"  \"b\" \n",
	"[core]\nk = \"  padded  \"\n",
	"[core]\nk = a\\",
	"[core]\nk\r\nj = v\r\n",
	"[core]\nk = a\rb\n",
	"[core]\nk = a\\tb\\nc\\bd\\\\e\\\"f\n",
	"[core]\nk = \\q\n",
	"[core]\nk = \"unclosed\n",
	"[core]\n1k = v\n",
	"[core]\n-k = v\n",
	"[core]\nk-2 = v\n",
	"[core]\nk v\n",
	"[core]\nk =\n",
	"[core]\nk =   \n",
	"[core]\nk = \"#not a comment\" # a comment\n",
	"[core]\nk = a;b\n",
	"\n\n  \t\n[m1nd]\n\tagent = alice\n[m1nd]\n\tagent = bob\n",
	"# comment\n; comment\n[m1nd] # here\n\tbrain = shop\n",
	"[include]\n\tpath = other\n",
	"[core]\n\tk = multi \\\n line \\\n value\n",
	"[core]\n\tk = v\\\n",
	"[core]\v\f\n\tk\t=\tv\tw\t\n",
	"[remote \"origin\"]\n\turl = ../shop.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	"[core]\nk = \x00\n",
	"[core]\nk = é\n",
}

// TestParseConfigReadsAsGitDoes compares parseConfig with git itself on
// every case: the same variables, names and values in the same order, or
// a refusal of the same line.
func TestParseConfigReadsAsGitDoes(t *testing.T) {
	for _, c := range configCases {
		wantList, wantBad := gitList(t, []byte(c))
		gotList, gotBad := ourList([]byte(c))
		if gotList != wantList || gotBad != wantBad {
			t.Errorf("%q:\n got  %q (bad line %q)\n git  %q (bad line %q)", c, gotList, gotBad, wantList, wantBad)
		}
	}
}

// TestConfigLast: a key's value is its last setting in the section with no
// subsection, names compared as git compares them.
func TestConfigLast(t *testing.T) {
	f, err := parseConfig([]byte("[M1nd]\n\tAgent = alice\n[m1nd \"x\"]\n\tagent = carol\n[m1nd.y]\n\tagent = dan\n[m1nd]\n\tagent = bob\n\tflag\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		section, key, want string
		ok                 bool
	}{
		{"m1nd", "agent", "bob", true},
		{"M1ND", "AGENT", "bob", true},
		{"m1nd", "flag", "", true},
		{"m1nd", "brain", "", false},
		{"core", "agent", "", false},
	} {
		v, ok := f.lastVar(tt.section, tt.key)
		got := v.value
		if got != tt.want || ok != tt.ok {
			t.Errorf("lastVar(%s, %s) = %q %v, want %q %v", tt.section, tt.key, got, ok, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct {
		file string
		on   bool
	}{
		{"[extensions]\n\tworktreeConfig = true\n", true},
		{"[extensions]\n\tworktreeConfig\n", true},
		{"[extensions]\n\tworktreeConfig = Yes\n", true},
		{"[extensions]\n\tworktreeConfig =\n", false},
		{"[extensions]\n\tworktreeConfig = false\n", false},
		{"[core]\n", false},
	} {
		f, err := parseConfig([]byte(tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := worktreeConfigOn(f); got != tt.on {
			t.Errorf("%q: worktreeConfigOn = %v, want %v", tt.file, got, tt.on)
		}
	}
}

// FuzzParseConfig holds parseConfig to git itself: for any file, the same
// variables or a refusal of the same line.
func FuzzParseConfig(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("no git")
	}
	for _, c := range configCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 || bytes.IndexByte(data, 0) >= 0 {
			return // a NUL ends git's C strings wherever it falls: no config has one
		}
		wantList, wantBad := gitList(t, data)
		gotList, gotBad := ourList(data)
		if gotList != wantList || gotBad != wantBad {
			t.Fatalf("%q:\n got  %q (bad line %q)\n git  %q (bad line %q)", data, gotList, gotBad, wantList, wantBad)
		}
	})
}
