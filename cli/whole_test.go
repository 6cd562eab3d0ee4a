package cli

import "github.com/urfave/cli/v2"

// wholeCLI is m1nd-full's own verbs (fullcli.Verbs): this
// package's tests run the command line whole, as m1nd-full does. cli
// cannot import fullcli, which imports cli, so the external test package
// hands them in before any test runs (TestMain, main_test.go).
var wholeCLI Verbs

// wholeCommands is every verb of the whole command line.
func wholeCommands() []*cli.Command {
	inv := &Invocation{io: &IOStreams{}}
	return allCommands(inv, wholeCLI(inv))
}
