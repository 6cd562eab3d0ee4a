// Package testscripts holds m1nd's end-to-end scenarios: *.txtar files run
// by rogpeppe/go-internal/testscript against the m1nd CLI (the test binary
// itself, started as m1nd) and the real git.
package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/m1nd/m1nd/internal/cli"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The test binary is m1nd too: testscript puts a copy named m1nd first
	// on PATH, and a process started under that name runs the CLI in full
	// (git hooks, servers and daemons included). No separate build, and go
	// test's cache sees every source the CLI is made of.
	testscript.Main(m, map[string]func(){
		"m1nd": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := cli.Main(ctx, os.Args, cli.SystemIO())
			stop()
			os.Exit(code)
		},
	})
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
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"jsonobj": cmdJSONObj},
	})
}

// cmdJSONObj implements `[!] jsonobj FILE [KEY...]`: FILE (or stdout/stderr
// of the last command) holds exactly one JSON object, nothing before or
// after it but white space, with every KEY at its top level. Regexps can
// only say a line looks like JSON; this says it parses.
func cmdJSONObj(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: jsonobj FILE [KEY...]")
	}
	err := checkJSONObj([]byte(ts.ReadFile(args[0])), args[1:])
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("%s: unexpectedly one JSON object with keys %q", args[0], args[1:])
	}
}

func checkJSONObj(data []byte, keys []string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return fmt.Errorf("not a JSON object: null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("something after the object")
	}
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("no top-level key %q", k)
		}
	}
	return nil
}
