package cli

import (
	"strings"
	"unicode"

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
		return Usagef("unknown command %q", name)
	case 1:
		return Usagef("unknown command %q; did you mean %q?", name, s[0])
	default:
		return Usagef("unknown command %q; did you mean one of %s?", name, strings.Join(s, ", "))
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

// guessedVerbs are the verbs a name people type may mean, for the names
// m1nd calls otherwise (`mission list` for `mission heads`): the first of
// them a group has is suggested.
func guessedVerbs(typed string) []string {
	switch typed {
	case "list", "ls":
		return []string{"heads", "inbox", "list", "show"}
	case "get":
		return []string{"show", "recall"}
	case "view":
		return []string{"show", "heads"}
	case "cat":
		return []string{"show"}
	case "read":
		return []string{"show", "inbox", "recall"}
	case "info":
		return []string{"show", "status"}
	case "create":
		return []string{"new", "open", "add", "publish", "create"}
	case "open":
		return []string{"new", "open"}
	case "rm", "remove", "delete":
		return []string{"prune", "resolve", "uninstall"}
	case "close":
		return []string{"resolve", "archive"}
	case "history":
		return []string{"log"}
	case "merge":
		return []string{"land"}
	case "start":
		return []string{"serve", "runnerd"}
	case "run":
		return []string{"spawn", "serve"}
	}
	return nil
}

// guessedVerb is the verb of cmds a guessed name may mean ("" for none).
func guessedVerb(cmds []*cli.Command, typed string) string {
	for _, want := range guessedVerbs(typed) {
		for _, c := range cmds {
			if !c.Hidden && c.Name == want {
				return want
			}
		}
	}
	return ""
}

// flagNotDefined is the flag the flag package's error names when it does
// not know it ("flag provided but not defined: -name"), else "".
func flagNotDefined(msg string) string {
	rest, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	name := strings.TrimLeft(rest, "-")
	if !ok || name == "" || strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return ""
	}
	return name
}

// flagUsage is the usage error for err, a flag-parsing error of a command
// with flags: an unknown flag names the closest ones ("did you mean").
func flagUsage(flags []cli.Flag, err error) error {
	typed := flagNotDefined(err.Error())
	if typed == "" {
		return Usagef("%v", err)
	}
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
		return Usagef("unknown flag %s", dashed(typed))
	case 1:
		return Usagef("unknown flag %s; did you mean %s?", dashed(typed), out[0])
	default:
		return Usagef("unknown flag %s; did you mean one of %s?", dashed(typed), strings.Join(out, ", "))
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
