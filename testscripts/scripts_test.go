// Package testscripts holds m1nd's end-to-end scenarios: *.txtar files run
// by rogpeppe/go-internal/testscript against the real m1nd binary, built
// once per test run, and the real git.
package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// binDir holds the m1nd binary built for this test run.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "m1nd-testscripts-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "m1nd"), "github.com/m1nd/m1nd/cmd/m1nd").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build m1nd: %v\n%s", err, out)
		return 1
	}
	binDir = dir
	return m.Run()
}

// setupGitEnv gives every scenario a hermetic git: no system or user
// config, a fixed identity, main as the default branch.
func setupGitEnv(env *testscript.Env) error {
	env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
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

// dependOnCLISources reads every Go source the m1nd binary is built from
// inside a test. This package cannot import cmd/m1nd (nothing can), so
// without it go test's cache would not notice a change there, or in a
// package only the binary uses, and would report a stale pass.
func dependOnCLISources(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "testdata" || d.Name() == "out"):
			return filepath.SkipDir
		case d.IsDir() || !(strings.HasSuffix(path, ".go") || d.Name() == "go.mod" || d.Name() == "go.sum"):
			return nil
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestScripts(t *testing.T) {
	dependOnCLISources(t)
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
