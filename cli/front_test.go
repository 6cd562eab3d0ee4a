package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestHotPicksOnlyTheSmallM1ndsVerbs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"m1nd", "mission", "post", "l.json"}, true},
		{[]string{"m1nd", "mission", "post"}, true}, // the letter on stdin
		{[]string{"m1nd", "-C", "dir", "mail", "inbox", "--unread"}, true},
		{[]string{"m1nd", "-C=dir", "mission", "next", "msn_0123456789ab"}, true},
		{[]string{"m1nd", "--C", "dir", "hook", "claude", "PostToolUse"}, true},
		{[]string{"m1nd", "hook", "codex", "Stop", "--agent", "a"}, true},
		{[]string{"m1nd", "hooks", "run", "reference-transaction", "prepared"}, true},
		{[]string{"m1nd", "mail", "send", "--to", "b", "--what", "x", "--", "-h"}, true}, // after --, an argument
		{[]string{"m1nd", "mission", "heads"}, false},
		{[]string{"m1nd", "mission"}, false},
		{[]string{"m1nd", "hook", "install", "claude"}, false},
		{[]string{"m1nd", "hooks", "install"}, false},
		{[]string{"m1nd", "serve"}, false},
		{[]string{"m1nd"}, false},
		{[]string{}, false},
		{[]string{"m1nd", "--help"}, false},
		{[]string{"m1nd", "--version"}, false},
		{[]string{"m1nd", "-C"}, false},
		{[]string{"m1nd", "mission", "post", "--help"}, false},
		{[]string{"m1nd", "mission", "post", "-h"}, false},
		{[]string{"m1nd", "mail", "inbox", "help"}, false},
		{[]string{"m1nd", "mail", "inbox", completionFlag}, false},
		{[]string{"m1nd", "mision", "post"}, false}, // a typo: m1nd-full suggests
	} {
		if got := hot(c.args) >= 0; got != c.want {
			t.Errorf("hot(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestHotVerbsAreMainsVerbs: each verb the small m1nd runs is built as
// Main builds it (name, flags, usage), so it parses and answers alike.
func TestHotVerbsAreMainsVerbs(t *testing.T) {
	inv := &Invocation{io: &IOStreams{}}
	find := func(cmds []*cli.Command, path [2]string) *cli.Command {
		for _, group := range cmds {
			if group.Name == path[0] {
				for _, leaf := range group.Subcommands {
					if leaf.Name == path[1] {
						return leaf
					}
				}
			}
		}
		return nil
	}
	full := allCommands(inv, wholeCLI(inv))
	for _, v := range hotVerbs {
		path := v.path
		f, m := find([]*cli.Command{v.make(inv)}, path), find(full, path)
		if f == nil || m == nil {
			t.Fatalf("%v: in the small m1nd %v, in Main %v", path, f != nil, m != nil)
		}
		if f.Usage != m.Usage || f.ArgsUsage != m.ArgsUsage || f.Description != m.Description || !reflect.DeepEqual(flagNames(f), flagNames(m)) {
			t.Errorf("%v differs between the small m1nd and Main", path)
		}
	}
	if n := len(hotVerbs); n != 7 {
		t.Errorf("%d hot verbs", n)
	}
}

func flagNames(c *cli.Command) []string {
	var names []string
	for _, f := range c.Flags {
		names = append(names, strings.Join(f.Names(), ","))
	}
	return names
}

// TestFrontHandsOverToFull builds the real pair and runs what the small
// m1nd does not: it reaches m1nd-full beside it (same exit status, same
// streams), and without one it says how to install it.
func TestFrontHandsOverToFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "github.com/m1nd/m1nd/cmd/...")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(path string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(context.Background(), path, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	front := filepath.Join(bin, FrontName)
	if code, out, _ := run(front, "--help"); code != 0 || !strings.Contains(out, "serve") || !strings.Contains(out, "mission") {
		t.Fatalf("m1nd --help through m1nd-full: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(front, "mision"); code != exitUsage || !strings.Contains(errOut, "mission") {
		t.Fatalf("a typo through m1nd-full: exit %d, stderr %q", code, errOut)
	}
	if code, out, _ := run(front, "version", "--json"); code != 0 || !strings.HasPrefix(out, `{"ok":true`) {
		t.Fatalf("version --json: exit %d\n%s", code, out)
	}
	// An m1nd-full of another build than the m1nd that hands it a verb
	// refuses to answer for it, saying to install both.
	other := exec.Command(filepath.Join(bin, FullName), "version")
	other.Env = append(os.Environ(), FrontBuildEnv+"=v0.0.1 (commit 000000000000)")
	if out, err := other.CombinedOutput(); exitCode(err) != exitInternal || !strings.Contains(string(out), "installed together ("+InstallCommand+")") {
		t.Fatalf("m1nd-full handed a verb by another build: %v\n%s", err, out)
	}
	// The small m1nd alone: a hot verb still runs, the rest says how to
	// install both.
	alone := filepath.Join(t.TempDir(), FrontName)
	if err := os.Link(front, alone); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(alone, "mission", "post", "/nonexistent"); code == exitInternal || strings.Contains(errOut, FullName) {
		t.Fatalf("a hot verb without m1nd-full: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(alone, "status"); code != exitInternal || !strings.Contains(errOut, InstallCommand) {
		t.Fatalf("status without m1nd-full: exit %d, stderr %q", code, errOut)
	}
	// It names the verb, not the folder -C gave.
	if _, _, errOut := run(alone, "-C", t.TempDir(), "mission", "show", "x"); !strings.HasPrefix(errOut, "m1nd: mission show is run by "+FullName) {
		t.Fatalf("a handed verb after -C: stderr %q", errOut)
	}
}

// exitCode is a finished command's exit status (0 for none).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}
