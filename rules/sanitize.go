package rules

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
	if !utf8.ValidString(value) || hasUnsafeRune(value) {
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

// hasUnsafeRune reports a rune of isUnsafeRune.
func hasUnsafeRune(s string) bool {
	return strings.IndexFunc(s, isUnsafeRune) >= 0
}

// HasUnsafeText is the one rule for text that reaches a session, a
// terminal or the tray: it reports invalid UTF-8 and every rune of
// isUnsafeRune but new line and tab. Multi-line prose passes.
func HasUnsafeText(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && isUnsafeRune(r) }) >= 0
}

// isUnsafeRune: a rune that makes text read other than it shows, or hides
// text from the human who reads it while an agent still reads it: control
// characters (C0, DEL, C1 with NEL), line and paragraph separators, the
// bidirectional marks and overrides (with U+061C, the Arabic letter mark),
// zero-width characters and word joiners, the byte order mark, and the tag
// characters (U+E0000 block) that spell invisible ASCII.
func isUnsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case '\u202a' <= r && r <= '\u202e', '\u2066' <= r && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	case '\u200b' <= r && r <= '\u200d', '\u2060' <= r && r <= '\u2064', r == '\ufeff', r == '\u180e':
		return true
	case 0xe0000 <= r && r <= 0xe007f:
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
