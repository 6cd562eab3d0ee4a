package rules

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Each class of the o5 law has at least one value it refuses and one near
// miss it lets through.
var sanitizeCases = []struct {
	field, value string
	class        string // "" = passes
}{
	{"name", "Ledger core", ""},
	{"name", "Ledger\x00core", "control character"},
	{"name", "Ledger\ncore", "control character"},
	{"name", "Ledger\u202ecore", "control character"},
	{"name", "Ledger \u00e9t\u00e9", ""},
	{"name", "   \t", "control character"},
	{"name", "    ", "empty after strip"},
	{"name", "  Ledger   core  ", ""},
	{"name", strings.Repeat("ledger ", 6)[:40], ""},
	{"name", strings.Repeat("ledger ", 6)[:41], "exceeds 40 chars"},
	{"name", strings.Repeat("é", 40), ""},
	{"purpose", strings.Repeat("a ", 60), ""},
	{"purpose", strings.Repeat("ab ", 41), "exceeds 120 chars"},
	{"name", "a <b> tag", "HTML markup"},
	{"name", "less than 3", ""},
	{"name", "[x](y)", "active Markdown"},
	{"name", "![img", "active Markdown"},
	{"name", "run `rm`", "active Markdown"},
	{"name", "# Heading", "active Markdown"},
	{"name", "Issue #4", ""},
	{"name", "see https://x.io", "URL"},
	{"name", "see HTTP://x.io", "URL"},
	{"name", "www.example", "URL"},
	{"name", "web client", ""},
	{"name", "src/core", "path separator"},
	{"name", `src\core`, "path separator"},
	{"name", "core or cli", ""},
	{"name", "~ home", "home-path tilde"},
	{"name", "ops@corp", "email-like"},
	{"name", "ops @ corp", ""},
	{"name", "@handle", ""},
	{"purpose", "key AKIA1234567890ABCDEFGHIJ", "token-like string"},
	{"purpose", "ends in padding abcdefghijklmnopqrstuvwx=", "token-like string"},
	{"purpose", "hash deadbeefdeadbeefdeadbeefdeadbeef", "token-like string"},
	{"purpose", "the internationalization_of_messages", ""},
	{"purpose", "version 2 of the ledger", ""},
}

func TestSanitizer(t *testing.T) {
	for _, tt := range sanitizeCases {
		check := SanitizeName
		if tt.field == "purpose" {
			check = SanitizePurpose
		}
		err := check(tt.value)
		if tt.class == "" {
			if err != nil {
				t.Errorf("%s %q refused: %v", tt.field, tt.value, err)
			}
			continue
		}
		want := tt.field + ": " + tt.class
		if err == nil || err.Error() != want {
			t.Errorf("%s %q: got %v, want %q", tt.field, tt.value, err, want)
		}
	}
}

// Every class has a refused and a passing case in the table.
func TestSanitizerTableCoversEveryClass(t *testing.T) {
	classes := []string{"control character", "empty after strip", "exceeds", "HTML markup", "active Markdown",
		"URL", "path separator", "home-path tilde", "email-like", "token-like string"}
	for _, class := range classes {
		found := false
		for _, tt := range sanitizeCases {
			found = found || strings.HasPrefix(tt.class, class)
		}
		if !found {
			t.Errorf("no refused case for %q", class)
		}
	}
}

// A refusal never carries the refused text.
func TestSanitizerNeverEchoes(t *testing.T) {
	for _, tt := range sanitizeCases {
		if tt.class == "" {
			continue
		}
		err := sanitize(tt.field, tt.value, 40)
		if err == nil {
			continue
		}
		if v := strings.TrimSpace(tt.value); len(v) > 2 && strings.Contains(err.Error(), v) {
			t.Errorf("refusal %q echoes the input %q", err, tt.value)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, tt := range sanitizeCases {
		f.Add(tt.value)
	}
	f.Fuzz(func(t *testing.T, value string) {
		err := SanitizeName(value)
		if err == nil {
			// What passes is one line of bounded plain text.
			if !utf8.ValidString(value) || HasControl(value) || strings.ContainsAny(value, "<>/\\`~") ||
				utf8.RuneCountInString(strings.Join(strings.Fields(value), " ")) > MaxNameChars {
				t.Fatalf("accepted %q", value)
			}
			return
		}
		p, ok := err.(*NamingProblem)
		if !ok || p.Field != "name" {
			t.Fatalf("refusal %T %v", err, err)
		}
		if len(value) >= 8 && strings.Contains(err.Error(), value) {
			t.Fatalf("refusal echoes input: %v", err)
		}
	})
}

func TestEchoRepeatsOnlyPlainIDs(t *testing.T) {
	for in, want := range map[string]string{
		"sb_shop_core":                 "sb_shop_core",
		"core/deep/*.go":               "core/deep/*.go",
		"see https://evil.example/x":   "(a value not repeated here)",
		"<img src=x onerror=alert(1)>": "(a value not repeated here)",
		"sb_x\u202e":                   "(a value not repeated here)",
		"":                             "(a value not repeated here)",
		strings.Repeat("a", 101):       "(a value not repeated here)",
	} {
		if got := Echo(in); got != want {
			t.Errorf("Echo(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Clip("a\u202eb\u0085c"); got != "a?b?c" {
		t.Errorf("Clip = %q", got)
	}
}

// TestUnsafeTextIsOneRule: every class of rune that hides text from the
// human, or makes it read other than it shows, is unsafe wherever text
// reaches a session, a terminal or the tray; prose with new lines, tabs
// and ordinary non-ASCII passes.
func TestUnsafeTextIsOneRule(t *testing.T) {
	for _, tt := range []struct {
		label string
		text  string
		bad   bool
	}{
		{"prose", "Fix the ledger.\n\tThen the docs — naïve café, 日本語, emoji 🙂", false},
		{"invalid UTF-8", "a\xffb", true},
		{"NUL", "a\x00b", true},
		{"escape", "\x1b[31mred", true},
		{"DEL", "a\x7fb", true},
		{"NEL", "a\u0085b", true},
		{"line separator", "a\u2028b", true},
		{"paragraph separator", "a\u2029b", true},
		{"bidi override", "a\u202eb", true},
		{"bidi isolate", "a\u2067b", true},
		{"left-to-right mark", "a\u200eb", true},
		{"Arabic letter mark", "a\u061cb", true},
		{"zero-width space", "a\u200bb", true},
		{"zero-width joiner", "a\u200db", true},
		{"word joiner", "a\u2060b", true},
		{"byte order mark", "\ufeffa", true},
		{"Mongolian vowel separator", "a\u180eb", true},
		{"tag character", "a\U000E0041\U000E0042b", true},
		{"cancel tag", "a\U000E007Fb", true},
	} {
		if got := HasUnsafeText(tt.text); got != tt.bad {
			t.Errorf("%s: HasUnsafeText = %v, want %v", tt.label, got, tt.bad)
		}
		if tt.bad && strings.ContainsAny(Clip(tt.text), "\u200b\u2060\ufeff\u061c\U000E0041") {
			t.Errorf("%s: Clip kept the hidden rune: %q", tt.label, Clip(tt.text))
		}
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		word string
		want string
	}{
		{1, "branch", "1 branch"},
		{2, "branch", "2 branches"},
		{0, "commit", "0 commits"},
		{3, "entry", "3 entries"},
		{2, "key", "2 keys"},
		{2, "box", "2 boxes"},
		{2, "pass", "2 passes"},
		{2, "wish", "2 wishes"},
	} {
		if got := Count(tc.n, tc.word); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.word, got, tc.want)
		}
	}
}
