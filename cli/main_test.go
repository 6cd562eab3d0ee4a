package cli_test

import (
	"os"
	"testing"

	"github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/fullcli"
)

// TestMain runs this package's tests on the whole command line: cli's
// verbs and m1nd-full's.
func TestMain(m *testing.M) {
	cli.SetWholeCLI(fullcli.Verbs)
	os.Exit(m.Run())
}
