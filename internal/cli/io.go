package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/m1nd/m1nd/gates"
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

	// Now is the clock that stamps what the invocation writes (letters,
	// mail, memories, receipts' import time) and judges freshness by; nil
	// is the system clock. SystemIO leaves it nil and nothing in the CLI
	// reads a clock override from the environment: a clock is set only by
	// code that calls Main, such as the testscripts, so a production
	// binary can never be talked into backdating a letter.
	Now func() time.Time
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
	}
}

// now reads the invocation's clock: the one place the CLI asks the time.
func (inv *invocation) now() time.Time {
	if inv.io.Now != nil {
		return inv.io.Now()
	}
	return time.Now()
}

// printJSON writes v as one line of JSON on stdout.
func (inv *invocation) printJSON(v any) error {
	w := bufio.NewWriterSize(inv.io.Out, 64*1024)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return w.Flush()
}

// printf writes human-readable output on stdout.
func (inv *invocation) printf(format string, args ...any) {
	fmt.Fprintf(inv.io.Out, format, args...)
}

// interactive reports whether stdin and stdout are a terminal.
func (inv *invocation) interactive() bool {
	return inv.io.Interactive != nil && inv.io.Interactive()
}

// gesture asks the operator to type want at the terminal and returns the
// human-gesture origin when they did, "" otherwise. It is the CLI's half of
// a human gesture and never asks when not interactive: the law that
// refuses an empty origin is the other half.
func (inv *invocation) gesture(prompt, want string) string {
	if !inv.interactive() {
		return ""
	}
	fmt.Fprintf(inv.io.Out, "%s\nType %s to confirm: ", prompt, want)
	line, _ := bufio.NewReader(inv.io.In).ReadString('\n')
	if strings.TrimSpace(line) != want {
		return ""
	}
	return gates.OriginHumanUI
}
