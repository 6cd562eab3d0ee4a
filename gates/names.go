package gates

import "strings"

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
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
	}
	return ""
}
