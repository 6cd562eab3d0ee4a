// Package testscripts holds m1nd's end-to-end scenarios: *.txtar files run
// by rogpeppe/go-internal/testscript against the m1nd CLI (the test binary
// itself, started as m1nd) and the real git.
package testscripts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/fullcli"
	"github.com/m1nd/m1nd/internal/contain"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The test binary is m1nd too: testscript puts copies named m1nd and
	// m1nd-full first on PATH. m1nd is the small front (cli.Front): it
	// runs the hot verbs and hands every other one to m1nd-full, the whole
	// CLI (git hooks, servers and daemons included), as the installed pair
	// does. No separate build, and go test's cache sees every source the
	// CLI is made of.
	// Under -race every m1nd process is race-checked too, and the race
	// runtime sleeps a second before each exit by default
	// (atexit_sleep_ms) to let other threads report: hundreds of calls
	// would each wait it out. Processes started from here wait none.
	os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	testscript.Main(m, map[string]func(){
		cli.FrontName: func() { os.Exit(m1ndMain(cli.Front)) },
		cli.FullName: func() {
			if code, ok := contain.Main(os.Args); ok { // runnerd's contained commands, as cmd/m1nd-full
				os.Exit(code)
			}
			os.Exit(m1ndMain(func(ctx context.Context, args []string, io *cli.IOStreams) int {
				return fullcli.Main(ctx, args, io)
			}))
		},
		"jsonval": func() { os.Exit(jsonvalMain()) },
	})
}

// testNowEnv names the test-only clock: an RFC 3339 time that every m1nd
// started by a scenario stamps its letters, mail and memories with, frozen
// (a script moves it on with `env M1ND_TEST_NOW=...`). Empty or unset is
// the system clock. Only this test binary reads it: the CLI itself never
// takes its clock from the environment (cli.IOStreams.Now).
const testNowEnv = "M1ND_TEST_NOW"

// m1ndMain is an m1nd the scenarios run: main, the small front or the
// whole CLI, on the process's streams, with the test clock when the
// script set one.
func m1ndMain(main func(context.Context, []string, *cli.IOStreams) int) int {
	streams := cli.SystemIO()
	kinds, err := testKinds()
	if err != nil {
		fmt.Fprintf(os.Stderr, "m1nd (test binary): %v\n", err)
		return 2
	}
	streams.Kinds = kinds
	if v := os.Getenv(testNowEnv); v != "" {
		now, err := time.Parse(time.RFC3339, v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "m1nd (test binary): %s=%q is not an RFC 3339 time: %v\n", testNowEnv, v, err)
			return 2
		}
		streams.Now = func() time.Time { return now }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return main(ctx, os.Args, streams)
}

// m1ndBin is the m1nd that testscript put on PATH, for the Go tests that
// start it themselves.
func m1ndBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("m1nd")
	if err != nil {
		t.Fatalf("m1nd is not on PATH: %v", err)
	}
	return bin
}

// setupGitEnv gives every scenario a hermetic git: no system or user
// config, a fixed identity, main as the default branch.
func setupGitEnv(env *testscript.Env) error {
	global := filepath.Join(env.WorkDir, ".gitconfig-global")
	if err := os.WriteFile(global, []byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":   global,
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Test Operator",
		"GIT_AUTHOR_EMAIL":    "operator@example.com",
		"GIT_COMMITTER_NAME":  "Test Operator",
		"GIT_COMMITTER_EMAIL": "operator@example.com",
		"GIT_AUTHOR_DATE":     "2026-07-09T12:00:00Z",
		"GIT_COMMITTER_DATE":  "2026-07-09T12:00:00Z",
		"M1ND_AGENT":          "",
		"TZ":                  "UTC",
		"NO_COLOR":            "1",                 // scripts read a terminal's text; cli_habits turns colour on
		"GORACE":              os.Getenv("GORACE"), // see TestMain
	} {
		env.Setenv(k, v)
	}
	return nil
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 ".",
		Setup:               setupGitEnv,
		RequireExplicitExec: true,
		Cmds:                scriptCmds,
		Condition:           scriptCondition,
	})
}

// scriptCondition answers the scenarios' own conditions: [landlock], the
// kernel offers the Landlock runnerd contains agents with (under CI it
// must: a missing one fails the scenario, never skips it).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "landlock":
		_, why := contain.Probe()
		if why != "" && os.Getenv("CI") != "" {
			return false, fmt.Errorf("CI runs the containment scenarios, and %s", why)
		}
		return why == "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
