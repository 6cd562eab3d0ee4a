package gates

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Naming limits of the o5 sanitizer, in characters.
const (
	MaxNameChars    = 40
	MaxPurposeChars = 120
)

// NamingProblem is the o5 sanitizer's verdict on one field: the field and the
// class of what is wrong, never the offending text. Its Error is
// "<field>: <class>".
type NamingProblem struct {
	Field string
	Class string
}

func (p *NamingProblem) Error() string { return p.Field + ": " + p.Class }

// SanitizeName checks a block name from a runner (at most 40 characters).
func SanitizeName(value string) error { return sanitize("name", value, MaxNameChars) }

// SanitizePurpose checks a block purpose from a runner (at most 120 characters).
func SanitizePurpose(value string) error { return sanitize("purpose", value, MaxPurposeChars) }

// sanitize is the o5 law for text an LLM proposes as a name or purpose: it
// must read as one line of plain prose. It validates and never rewrites;
// the first failing class wins and the input is never echoed, so a hostile
// value cannot smuggle itself into a log or a lesson.
func sanitize(field, value string, limit int) error {
	fail := func(class string) error { return &NamingProblem{Field: field, Class: class} }
	if !utf8.ValidString(value) || hasControlOrBidi(value) {
		return fail("control character")
	}
	collapsed := strings.Join(strings.Fields(value), " ")
	if collapsed == "" {
		return fail("empty after strip")
	}
	if utf8.RuneCountInString(collapsed) > limit {
		return fail(fmt.Sprintf("exceeds %d chars", limit))
	}
	lower := strings.ToLower(collapsed)
	switch {
	case strings.ContainsAny(collapsed, "<>"):
		return fail("HTML markup")
	case strings.Contains(collapsed, "](") || strings.Contains(collapsed, "![") ||
		strings.Contains(collapsed, "`") || strings.HasPrefix(collapsed, "#"):
		return fail("active Markdown")
	case strings.Contains(lower, "http://") || strings.Contains(lower, "https://") || strings.Contains(lower, "www."):
		return fail("URL")
	case strings.ContainsAny(collapsed, `/\`):
		return fail("path separator")
	case strings.Contains(collapsed, "~"):
		return fail("home-path tilde")
	case emailLike(collapsed):
		return fail("email-like")
	case tokenLike(collapsed):
		return fail("token-like string")
	}
	return nil
}

// hasControlOrBidi reports Unicode control characters (C0, DEL, C1, line
// and paragraph separators) and the bidirectional overrides that make text
// display other than it reads.
func hasControlOrBidi(s string) bool {
	return strings.IndexFunc(s, isControlOrBidi) >= 0
}

// HasUnsafeText reports text that must not reach a session or a terminal
// raw: invalid UTF-8, control characters other than new line and tab, and
// bidirectional overrides. Multi-line prose passes.
func HasUnsafeText(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && isControlOrBidi(r) }) >= 0
}

func isControlOrBidi(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case '\u202a' <= r && r <= '\u202e', '\u2066' <= r && r <= '\u2069', r == '\u200e', r == '\u200f':
		return true
	}
	return false
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// emailLike finds an @ with a letter or digit on both sides.
func emailLike(s string) bool {
	runes := []rune(s)
	for i, r := range runes {
		if r == '@' && i > 0 && i < len(runes)-1 && isAlnum(runes[i-1]) && isAlnum(runes[i+1]) {
			return true
		}
	}
	return false
}

func isTokenChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("+=_-", r)
}

func isHex(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F' }

// tokenLike finds what looks like a key or hash: a run of at least 24
// token characters holding a digit or ending in "=", or a run of at least
// 32 hex digits.
func tokenLike(s string) bool {
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return !isTokenChar(r) }) {
		if len(run) >= 24 && (strings.ContainsAny(run, "0123456789") || strings.HasSuffix(run, "=")) {
			return true
		}
	}
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return !isHex(r) }) {
		if len(run) >= 32 {
			return true
		}
	}
	return false
}
