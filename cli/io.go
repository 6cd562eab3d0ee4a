package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// IOStreams is where an invocation reads and writes. TTY detection lives
// here and nowhere else.
type IOStreams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	// Interactive reports whether both stdin and stdout are terminals: the
	// only setting in which the CLI may stamp a human gesture.
	Interactive func() bool

	// Terminal reports whether stdout, and stderr, are terminals: where
	// --color=auto colours (nil: neither is).
	Terminal func() (out, err bool)

	// colorOut and colorErr say whether what goes to stdout and stderr is
	// coloured: set once per invocation from --color, NO_COLOR and Terminal.
	colorOut, colorErr bool

	// Now is the clock that stamps what the invocation writes (letters,
	// mail, memories, receipts' import time) and judges freshness by; nil
	// is the system clock. SystemIO leaves it nil and nothing in the CLI
	// reads a clock override from the environment: a clock is set only by
	// code that calls Main, such as the testscripts, so a production
	// binary can never be talked into backdating a letter.
	Now func() time.Time

	// Kinds are the kinds the laws judge by, in the git hooks, verify and
	// sync; nil is laws.Shipped, every kind m1nd ships. Like Now, only code that
	// calls Main sets it (a test's own kind beside m1nd's).
	Kinds chain.Kinds
}

// SystemIO is the process's own stdin, stdout and stderr.
func SystemIO() *IOStreams {
	return &IOStreams{
		In:  os.Stdin,
		Out: os.Stdout,
		Err: os.Stderr,
		Interactive: func() bool {
			return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
		},
		Terminal: func() (bool, bool) {
			return term.IsTerminal(int(os.Stdout.Fd())), term.IsTerminal(int(os.Stderr.Fd()))
		},
	}
}

// setColor decides colour for both streams from the --color mode and the
// NO_COLOR and TERM variables.
func (s *IOStreams) setColor(mode, noColor, termName string) error {
	out, errTTY := false, false
	if s.Terminal != nil {
		out, errTTY = s.Terminal()
	}
	var err error
	if s.colorOut, err = colorOn(mode, noColor, termName, out); err != nil {
		return err
	}
	s.colorErr, _ = colorOn(mode, noColor, termName, errTTY)
	return nil
}

// Time reads the streams' clock: the one place the CLI asks the time.
func (s *IOStreams) Time() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Reply writes a verb's answer on stdout: v as one line of JSON when asJSON,
// else the human text that text writes. Every verb answers through it.
func (s *IOStreams) Reply(asJSON bool, v any, text func(w io.Writer) error) error {
	if asJSON {
		return s.printJSON(v)
	}
	return text(s.Out)
}

// printJSON writes the result v as one line of JSON on stdout, in the
// envelope every surface answers a success in (rules.Success: "ok" first).
func (s *IOStreams) printJSON(v any) error {
	b, err := rules.EncodeReply(rules.Success(v))
	if err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	if _, err := s.Out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// interactive reports whether stdin and stdout are a terminal.
func (s *IOStreams) interactive() bool {
	return s.Interactive != nil && s.Interactive()
}

// Gesture asks the operator to type want (the what it names: "mission
// id", "block id", …) at the terminal and returns the human-gesture origin
// when they did, "" when not interactive. It is the CLI's half of a human
// Gesture and never asks when not interactive: the law that refuses an
// empty origin is the other half. Text that is not want is refused
// human_gesture_required at once, saying what was typed and what was
// asked. A brain with a registered passkey is refused before anything is
// asked: its gestures are signed in the tray.
func (s *IOStreams) Gesture(judge func(gesture string) error, name, prompt, what, want string) (string, error) {
	if err := judge(name); err != nil {
		return "", err
	}
	if !s.interactive() {
		return "", nil
	}
	fmt.Fprintf(s.Out, "%s\nType %s to confirm: ", prompt, want)
	line, _ := bufio.NewReader(s.In).ReadString('\n')
	if typed := strings.TrimSpace(line); typed != want {
		said := "nothing"
		if typed != "" {
			said = "something else"
			if rules.Echo(typed) == typed { // a short plain word: safe to repeat
				said = typed
			}
		}
		return "", rules.Refusef(rules.HumanGestureRequired, rules.GestureField(name),
			"the confirmation did not match: you typed %s; the confirmation is the %s %s: nothing was written", said, what, want)
	}
	return rules.OriginHumanTTY, nil
}
