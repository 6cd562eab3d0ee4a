package cli

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// unknownCommand is the usage error for a command name that is not one of
// cmds, naming the closest ones the way git does ("did you mean").
func unknownCommand(cmds []*cli.Command, name string) error {
	s := suggestCommands(cmds, name)
	if guess := guessedVerb(cmds, name); len(s) == 0 && guess != "" {
		s = []string{guess}
	}
	switch len(s) {
	case 0:
		return usagef("unknown command %q", name)
	case 1:
		return usagef("unknown command %q; did you mean %q?", name, s[0])
	default:
		return usagef("unknown command %q; did you mean one of %s?", name, strings.Join(s, ", "))
	}
}

// suggestCommands returns the visible commands whose name is within a
// small edit distance of typed (a swapped pair of letters counts as one
// edit), or starts with it, closest first.
func suggestCommands(cmds []*cli.Command, typed string) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return closest(typed, names)
}

// closest returns the names within a small edit distance of typed (a
// swapped pair of letters counts as one edit), or that start with it,
// closest first: the ones at the least distance found.
func closest(typed string, names []string) []string {
	if typed == "" {
		return nil
	}
	best, out := -1, []string(nil)
	for _, name := range names {
		d := editDistance(typed, name)
		if d > maxEdits(name) && !(len(typed) >= 2 && strings.HasPrefix(name, typed)) {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{name}
		case d == best:
			out = append(out, name)
		}
	}
	return out
}

// guessedVerbs are the names people type for verbs m1nd calls otherwise
// (`mission list` for `mission heads`), each with the verbs it may mean:
// the first of them a group has is suggested.
var guessedVerbs = map[string][]string{
	"list":    {"heads", "inbox", "list", "show"},
	"ls":      {"heads", "inbox", "list", "show"},
	"get":     {"show", "recall"},
	"view":    {"show", "heads"},
	"cat":     {"show"},
	"read":    {"show", "inbox", "recall"},
	"info":    {"show", "status"},
	"create":  {"new", "open", "add", "publish", "create"},
	"open":    {"new", "open"},
	"rm":      {"prune", "resolve", "uninstall"},
	"remove":  {"prune", "resolve", "uninstall"},
	"delete":  {"prune", "resolve", "uninstall"},
	"close":   {"resolve", "archive"},
	"history": {"log"},
	"merge":   {"land"},
	"start":   {"serve", "runnerd"},
	"run":     {"spawn", "serve"},
}

// guessedVerb is the verb of cmds a guessed name may mean ("" for none).
func guessedVerb(cmds []*cli.Command, typed string) string {
	for _, want := range guessedVerbs[typed] {
		for _, c := range cmds {
			if !c.Hidden && c.Name == want {
				return want
			}
		}
	}
	return ""
}

// flagNotDefined is how the flag package names a flag it does not know.
var flagNotDefined = regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`)

// flagUsage is the usage error for err, a flag-parsing error of a command
// with flags: an unknown flag names the closest ones ("did you mean").
func flagUsage(flags []cli.Flag, err error) error {
	m := flagNotDefined.FindStringSubmatch(err.Error())
	if m == nil {
		return usagef("%v", err)
	}
	typed := m[1]
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	var out []string
	for _, name := range closest(typed, names) {
		out = append(out, dashed(name))
	}
	switch len(out) {
	case 0:
		return usagef("unknown flag %s", dashed(typed))
	case 1:
		return usagef("unknown flag %s; did you mean %s?", dashed(typed), out[0])
	default:
		return usagef("unknown flag %s; did you mean one of %s?", dashed(typed), strings.Join(out, ", "))
	}
}

// dashed is a flag's name as typed: -C, --json.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// maxEdits is how far a typo may be from name: one edit for short names,
// two from five letters on.
func maxEdits(name string) int {
	if len(name) < 5 {
		return 1
	}
	return 2
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent letters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
