package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// GitCmd is one run of the git CLI: what m1nd leaves to git itself
// (transport, worktrees, merges, status). Every git m1nd starts runs this
// one way: replace refs off (m1nd judges objects as they are), in a
// process group of its own (a Ctrl-C or a hang-up at the terminal reaches
// m1nd, which decides, not the git it waits for), and stopped on a
// cancelled context with SIGTERM, on which git removes its lock files
// (index.lock, <ref>.lock) — not the default SIGKILL, which leaves them for
// a human to delete.
type GitCmd struct {
	Dir    string
	Env    []string  // added to this process's environment
	Stdin  io.Reader // nil for none
	Stdout io.Writer // nil: captured and returned
}

// gitWaitDelay is how long a stopped git may take to clean up after its
// SIGTERM before it is killed: removing its lock files takes milliseconds,
// and a daemon's whole stop must fit in the 5 s a service manager waits.
const gitWaitDelay = 2 * time.Second

// Run runs git with args: its stdout (captured, also on failure) without
// its final new line, its exit code (-1 when git did not run: not found,
// or the context ended), and an error carrying git's stderr.
func (g GitCmd) Run(ctx context.Context, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.Dir
	cmd.Env = append(NoReplaceEnv(), g.Env...)
	cmd.Stdin = g.Stdin
	// The whole group: a hook git runs stops with it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = gitWaitDelay
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if g.Stdout != nil {
		cmd.Stdout = g.Stdout
	}
	err := cmd.Run()
	code := ExitCode(err)
	if err != nil {
		name := ""
		if len(args) > 0 {
			name = args[0]
		}
		err = fmt.Errorf("git %s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSuffix(out.String(), "\n"), code, err
}

// ExitCode is the exit status a process's Wait or Run error carries: 0
// for none, -1 when the process did not run or exit (not found, killed by
// a signal).
func ExitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// Git runs the git CLI in dir (GitCmd): its stdout, also on failure, and
// an error that carries git's stderr.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := GitCmd{Dir: dir}
	var out bytes.Buffer
	cmd.Stdout = &out
	_, _, err := cmd.Run(ctx, args...)
	return out.String(), err
}
