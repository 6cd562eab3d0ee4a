package cli

import (
	"fmt"
	"strings"
)

// The --color modes.
const (
	colorAuto   = "auto"   // on a terminal, unless NO_COLOR is set (or TERM is dumb)
	colorAlways = "always" // also into a pipe, NO_COLOR or not: asked for by name
	colorNever  = "never"
)

// colorFlag is the global flag that sets colour; run lifts it from
// wherever it was typed, so it works after a verb too.
const colorFlag = "color"

// colorOn decides colour for a stream: mode as --color says, noColor the
// NO_COLOR variable (https://no-color.org: set and not empty turns colour
// off), term the TERM variable, tty whether the stream is a terminal.
func colorOn(mode, noColor, term string, tty bool) (bool, error) {
	switch mode {
	case colorAlways:
		return true, nil
	case colorNever:
		return false, nil
	case colorAuto, "":
		return tty && noColor == "" && term != "dumb", nil
	}
	return false, usagef("--color %q: want auto, always or never", mode)
}

// liftColor moves every --color flag (--color=WHEN or --color WHEN) to
// the front of args, where the app's own flag parses it; "--" ends the
// search.
func liftColor(args []string) []string {
	if len(args) < 2 {
		return args
	}
	var lifted, rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case a == "--"+colorFlag && i+1 < len(args):
			lifted = append(lifted, a+"="+args[i+1])
			i++
		case strings.HasPrefix(a, "--"+colorFlag+"="):
			lifted = append(lifted, a)
		default:
			rest = append(rest, a)
		}
	}
	out := append([]string{args[0]}, lifted...)
	return append(out, rest...)
}

// ANSI styles of what m1nd colours.
var (
	phaseStyle = map[string]string{
		"judging": "2", "executing": "36", "gate": "36", "review": "35",
		"merge_wait": "1;33", "landed": "32", "failed": "1;31", "archived": "2",
	}
	colourStyle = map[string]string{
		"broken": "1;31", "unknown": "2", "evidence-backed": "32", "needs-evidence": "33",
	}
)

// paint pads text to width, then wraps the text (not the padding) in the
// ANSI style when on: columns line up with colour or without.
func paint(on bool, style, text string, width int) string {
	padded := fmt.Sprintf("%-*s", width, text)
	if !on || style == "" {
		return padded
	}
	return "\x1b[" + style + "m" + text + "\x1b[0m" + padded[len(text):]
}
