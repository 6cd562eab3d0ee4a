package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/rules"
	"github.com/urfave/cli/v2"
)

// Exit statuses (DESIGN §5).
const (
	exitOK       = 0
	exitInternal = 1
	exitUsage    = 2
	exitRefused  = 3
)

// Main runs one m1nd invocation (args[0] is the program name) with
// every verb of this package and more's (nil: none; m1nd-full passes its
// own, fullcli), and returns its exit status. Everything it
// touches comes in through its arguments, so tests drive it without a
// terminal.
func Main(ctx context.Context, args []string, io *IOStreams, more Verbs) int {
	inv := &Invocation{io: io}
	var extra []*cli.Command
	if more != nil {
		extra = more(inv)
	}
	app := newApp(inv, allCommands(inv, extra))
	// Only the whole CLI answers --version: the small m1nd hands it on.
	app.Version = ReadVersion().String()
	return inv.run(ctx, args, app)
}

// run runs args on app and maps the outcome to an exit status.
func (inv *Invocation) run(ctx context.Context, args []string, app *cli.App) int {
	args = liftColor(helpVerb(args))
	if completing(args) { // the flag stays last, where urfave/cli looks for it
		n := len(args) - 1
		args = append(hoistFlags(app, args[:n]), args[n])
	} else {
		args = hoistFlags(app, args)
	}
	err := app.RunContext(ctx, args)
	return inv.finish(err)
}

// helpVerb reads `m1nd help VERB [SUBVERB]` as `m1nd VERB [SUBVERB]
// --help`, the way git help and gh help answer; a verb it does not know
// is then reported with its did-you-mean.
func helpVerb(args []string) []string {
	if len(args) < 2 || args[1] != "help" {
		return args
	}
	out := append([]string{args[0]}, args[2:]...)
	return append(out, "--help")
}

// exitStatus ends a run with a given status and nothing more printed: a
// verb that has already said why (a hook, verify's list of faults).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a mistake in how m1nd was called: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func Usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// finish prints err the way DESIGN §5 says and maps it to an exit status.
func (inv *Invocation) finish(err error) int {
	if err == nil {
		return exitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	if r, ok := rules.AsRefusal(err); ok {
		if inv.jsonOut {
			inv.io.printJSON(r.Envelope())
		} else {
			fmt.Fprintf(inv.io.Err, "m1nd: refused: %s: %s\n", paint(inv.io.colorErr, "1;31", string(r.Code), 0), r.Lesson)
		}
		return exitRefused
	}
	if errors.Is(err, brain.ErrNoHead) { // the operator's to fix: commit first
		fmt.Fprintf(inv.io.Err, "m1nd: %v\n", err)
		return exitUsage
	}
	var usage *usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(inv.io.Err, "m1nd: %s\n", usage.msg)
		if inv.cmdPath != "" {
			fmt.Fprintf(inv.io.Err, "Run '%s --help' for usage.\n", inv.cmdPath)
		}
		return exitUsage
	}
	fmt.Fprintf(inv.io.Err, "m1nd: %v\n", err)
	return exitInternal
}
