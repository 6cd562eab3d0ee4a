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
	return false, Usagef("--color %q: want auto, always or never", mode)
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

// phaseStyle is the ANSI style of a mission phase.
func phaseStyle(phase string) string {
	switch phase {
	case "judging", "archived":
		return "2"
	case "executing", "gate":
		return "36"
	case "review":
		return "35"
	case "merge_wait":
		return "1;33"
	case "landed":
		return "32"
	case "failed":
		return "1;31"
	}
	return ""
}

// colourStyle is the ANSI style of a block colour.
func colourStyle(colour string) string {
	switch colour {
	case "broken":
		return "1;31"
	case "unknown":
		return "2"
	case "evidence-backed":
		return "32"
	case "needs-evidence":
		return "33"
	}
	return ""
}

// paint pads text to width, then wraps the text (not the padding) in the
// ANSI style when on: columns line up with colour or without.
func paint(on bool, style, text string, width int) string {
	padded := fmt.Sprintf("%-*s", width, text)
	if !on || style == "" {
		return padded
	}
	return "\x1b[" + style + "m" + text + "\x1b[0m" + padded[len(text):]
}
