// Command m1nd-full is the whole m1nd command line: every verb, the tray
// and the MCP server included. The small m1nd beside it hands it every
// verb it does not run itself.
package main

import (
	"fmt"
	"os"

	"github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/fullcli"
	"github.com/m1nd/m1nd/internal/contain"
)

func main() {
	// runnerd starts the commands it contains through its own binary
	// (contain.Verb): before anything else, that process restricts itself
	// and becomes the command.
	if code, ok := contain.Main(os.Args); ok {
		os.Exit(code)
	}
	if err := cli.CheckFrontBuild(); err != nil {
		fmt.Fprintln(os.Stderr, "m1nd: "+err.Error())
		os.Exit(1) // not the caller's usage: the install is one binary short of one build
	}
	cli.Process(fullcli.Main)
}
