// Package longtest is the one switch of m1nd's long test suites: the crash
// rounds, a fault at every syscall, the real agent clients, the real git
// forges and the tray in a real browser. Together they take longer than
// the rest of `go test ./...` twice over and need tools a newcomer's
// machine may not have, so they run only when asked: M1ND_LONG=1, which
// .ci/run sets.
package longtest

import (
	"os"
	"testing"
)

// Env names the switch: set to 1, the long suites run.
const Env = "M1ND_LONG"

// On reports whether the long suites run (Env is 1).
func On() bool {
	return os.Getenv(Env) == "1"
}

// Need skips t unless the long suites run, naming what t is and the switch
// that runs it.
func Need(t testing.TB, what string) {
	t.Helper()
	if !On() {
		t.Skipf("%s: a long suite; %s=1 go test ./... runs it (.ci/run does)", what, Env)
	}
}
