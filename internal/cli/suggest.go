package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// unknownCommand is the usage error for a command name that is not one of
// cmds, naming the closest ones the way git does ("did you mean").
func unknownCommand(cmds []*cli.Command, name string) error {
	switch s := suggestCommands(cmds, name); len(s) {
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
	if typed == "" {
		return nil
	}
	best, out := -1, []string(nil)
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, name := range c.Names() {
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
	}
	return out
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
