package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/testkit/gittest"
)

// result is what one in-process invocation of m1nd did.
type result struct {
	code     int
	out, err string
}

// hermetic sets, for the test, the environment gittest gives git (the CLI
// runs the real git binary for some verbs) and the writing agent.
func hermetic(t *testing.T, agent string) {
	t.Helper()
	gittest.SetEnv(t)
	t.Setenv("M1ND_AGENT", agent)
}

// newRepo makes a real repository with two top-level directories and a
// root file, so that a skeleton scan proposes blocks.
func newRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	hermetic(t, "a1")
	r := gittest.Init(t, "proj")
	r.CommitFiles("files", map[string]string{
		"core/core.go":   "package core\n",
		"docs/readme.md": "# docs\n",
		"main.go":        "package main\n",
	})
	return r
}

// m1nd runs the CLI in-process against dir with stdin in.
func m1nd(t *testing.T, dir, in string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"m1nd", "-C", dir}, args...)
	code := Main(context.Background(), full, &IOStreams{In: strings.NewReader(in), Out: &out, Err: &errb, Interactive: func() bool { return false }}, wholeCLI)
	return result{code: code, out: out.String(), err: errb.String()}
}

// must runs m1nd and fails the test unless it exits 0.
func must(t *testing.T, dir, in string, args ...string) result {
	t.Helper()
	r := m1nd(t, dir, in, args...)
	if r.code != 0 {
		t.Fatalf("m1nd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.out, r.err)
	}
	return r
}

// jsonOf parses one JSON document from stdout.
func jsonOf(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.out), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.out)
	}
	return m
}

// refused checks a refusal: exit 3, and the §5 envelope on stdout when
// asJSON, else the one stderr line.
func refused(t *testing.T, r result, code string, asJSON bool) map[string]any {
	t.Helper()
	if r.code != exitRefused {
		t.Fatalf("exit %d, want 3 (refused %s)\nstdout: %s\nstderr: %s", r.code, code, r.out, r.err)
	}
	if !asJSON {
		if !strings.HasPrefix(r.err, "m1nd: refused: "+code+": ") {
			t.Fatalf("stderr %q, want m1nd: refused: %s: …", r.err, code)
		}
		return nil
	}
	env := jsonOf(t, r)
	if env["ok"] != false || env["refused"] != code || env["lesson"] == "" || env["lesson"] == nil {
		t.Fatalf("envelope %v, want ok:false refused:%s with a lesson", env, code)
	}
	return env
}

func contains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

func TestInitIdempotentAndStatus(t *testing.T) {
	r := newRepo(t)
	first := jsonOf(t, must(t, r.Dir, "", "init", "--json"))
	if first["brain"] == "" || first["runtime_dir"] == nil {
		t.Fatalf("init reply %v", first)
	}
	if created, _ := first["created"].([]any); len(created) == 0 {
		t.Fatalf("first init created nothing: %v", first)
	}
	rt := first["runtime_dir"].(string)
	if fi, err := os.Stat(rt); err != nil || !fi.IsDir() {
		t.Fatalf("runtime dir %s: %v", rt, err)
	}
	again := must(t, r.Dir, "", "init")
	contains(t, again.out, "already initialised; nothing changed")

	st := jsonOf(t, must(t, r.Dir, "", "status", "--json"))
	if st["store_version"] != float64(0) || st["missions"] != float64(0) {
		t.Fatalf("status of a new brain: %v", st)
	}
	text := must(t, r.Dir, "", "status")
	contains(t, text.out, "brain ", "store    none yet", "missions 0")
}

// execGit prepares git in dir; the environment is the test's (hermetic).
func execGit(dir string, args ...string) *exec.Cmd {
	return exec.Command("git", append([]string{"-C", dir}, args...)...)
}
