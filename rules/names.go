package rules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DisplayNameProblem says why name cannot be a brain's display name (the
// brain_ref every letter carries), or "" when it can: a bare, non-empty
// name, never a path (no /, \, ~, drive letter, control character).
func DisplayNameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "empty"
	case name == "." || name == "..":
		return "a path, not a name"
	case strings.ContainsAny(name, `/\~`):
		return "contains a path separator or ~"
	case len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z'):
		return "starts with a drive letter"
	}
	if HasControl(name) {
		return "contains a control character"
	}
	return ""
}

// HasControl reports whether s holds an ASCII control character (C0 or DEL):
// text that must stay on one line, or never reach a terminal raw.
func HasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// Clip makes submitted text safe to quote in a lesson: unsafe runes
// (control characters, bidirectional and invisible ones) become "?" and anything past 60 characters
// is cut, on a rune boundary.
func Clip(s string) string {
	s = Visible(s)
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}

// CutBytes cuts s to at most n bytes, on a character boundary.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Visible is s with every rune that reads other than it shows (control
// characters, bidirectional overrides, zero-width and tag characters:
// isUnsafeRune) made a '?', and nothing cut: text of any length that is
// safe to show.
func Visible(s string) string {
	return strings.Map(func(r rune) rune {
		if isUnsafeRune(r) {
			return '?'
		}
		return r
	}, s)
}

// Echo returns an id or path for a lesson when it is plain — letters,
// digits and . _ - / * ? [ ], at most 100 bytes — and a neutral stand-in
// otherwise. Lessons answering machine-proposed input (a runner's ops, an
// agent's letter) use it, so a refusal never carries markup, a link or an
// override back into the proposer's context.
func Echo(s string) string {
	if s == "" || len(s) > 100 {
		return "(a value not repeated here)"
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-/*?[]", r)) {
			return "(a value not repeated here)"
		}
	}
	return s
}

// IsToken reports whether s is a short lowercase token: first a lowercase
// letter (or a digit, when digitFirst), then up to max-1 characters that
// are lowercase letters, digits or one of extra. Ids and names that become ref names, file names or enum-like
// fields are checked with it (a hand-written check: regexps compiled at
// start-up would cost every CLI call).
func IsToken(s string, digitFirst bool, extra string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		lower, digit := 'a' <= c && c <= 'z', '0' <= c && c <= '9'
		switch {
		case i == 0 && !(lower || digit && digitFirst):
			return false
		case i > 0 && !(lower || digit || strings.IndexByte(extra, c) >= 0):
			return false
		}
	}
	return true
}

// IDRule is the shape of a runner's id, and of an agent id after its
// RunnerPrefix, as lessons spell it.
const IDRule = "[a-z0-9][a-z0-9._-]{0,63}"

// AgentIDRule is the agent-id rule as every lesson spells it (see
// ValidAgentID).
const AgentIDRule = IDRule + ", optionally after " + RunnerPrefix

// ValidID reports whether id has the shape of IDRule.
func ValidID(id string) bool { return IsToken(id, true, "._-", 64) }

// RunnerPrefix marks the agent ids a runner daemon speaks as: RunnerPrefix
// followed by the runner's id.
const RunnerPrefix = "runnerd:"

// ValidAgentID reports whether id is an agent id: AgentIDRule. Agent ids
// become ref names, file names and commit identities, so every writer is
// checked with this one rule.
func ValidAgentID(id string) bool {
	return ValidID(strings.TrimPrefix(id, RunnerPrefix))
}

// Count spells a number of things: "1 block", "3 blocks", "2 memories".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if l := len(word); l > 1 && word[l-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[l-2])) {
		return fmt.Sprintf("%d %sies", n, word[:l-1])
	}
	for _, end := range []string{"ch", "sh", "s", "x"} {
		if strings.HasSuffix(word, end) {
			return fmt.Sprintf("%d %ses", n, word)
		}
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// OneLine collapses every run of white space, new lines included, to one
// space: text bound for a one-line message.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
