package rules

import (
	"fmt"
	"slices"
	"strings"
)

// MinAbbrev is the fewest characters an id may be typed with when it is
// abbreviated, as git's shortest abbreviation of a commit.
const MinAbbrev = 4

// Abbreviated is the one rule every surface that takes an abbreviated id
// follows, as git takes a commit by the start of its name: typed alone
// when it is one of ids, else every id that starts with typed when typed
// has at least MinAbbrev characters (sorted), else none. One match names
// the id; several are ambiguous (AmbiguousLesson).
func Abbreviated(typed string, ids []string) []string {
	if slices.Contains(ids, typed) {
		return []string{typed}
	}
	if len(typed) < MinAbbrev {
		return nil
	}
	var found []string
	for _, id := range ids {
		if strings.HasPrefix(id, typed) {
			found = append(found, id)
		}
	}
	slices.Sort(found)
	return found
}

// AmbiguousLesson says that typed starts several ids of what (at least
// two matches), naming the first few.
func AmbiguousLesson(what, typed string, matches []string) string {
	shown := matches
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(matches)-5))
	}
	return fmt.Sprintf("%q is ambiguous: %d %ss start with it (%s); type more of it", Echo(typed), len(matches), what, strings.Join(shown, ", "))
}
