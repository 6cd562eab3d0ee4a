package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
)

// initOptions is what init runs on.
type initOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	Hook  ops.HookInstaller // writes m1nd's hooks folder
}

func newInitCmd(inv *Invocation, runF func(context.Context, *initOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "prepare this repository for m1nd (idempotent)",
		Description: `Creates the runtime folder $(git rev-parse --git-common-dir)/m1nd (never a
ref, never pushed), the runner daemon's shared secret in it (mode 0600), and
m1nd's hooks folder in it: the guard against raw git writes to refs/m1nd/
that the worktrees where agents write run (m1nd hooks install, m1nd hook
install, runnerd's worktrees). It installs no hook where git runs it for
everyone: a reference-transaction hook an earlier m1nd put in the shared
hooks folder is taken out (an existing hook it chained goes back). Running
it again changes nothing.`,
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &initOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, Hook: guardFolder(HookCommandName())}
			return RunWith(c.Context, opts, runF, runInit)
		},
	}
}

// runInit prepares the repository: runtime dir, secret, git hook.
func runInit(ctx context.Context, opts *initOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	reply, err := flows.Init(ctx, opts.Hook)
	var bad *ops.SecretError
	if errors.As(err, &bad) {
		return Usagef("%v; fix or remove it, then run m1nd init again", err) // the operator's to repair
	}
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "brain %s\nruntime dir %s\n", reply.Brain, reply.RuntimeDir)
		if len(reply.Created) == 0 && len(reply.Removed) == 0 {
			fmt.Fprintf(w, "already initialised; nothing changed\n")
		}
		PrintIDs(w, "created %s\n", reply.Created)
		PrintIDs(w, "removed %s (git runs no m1nd hook outside the worktrees m1nd guards)\n", reply.Removed)
		if strings.HasPrefix(reply.Registered, "adopted from ") {
			fmt.Fprintf(w, "brain %s %s (refs/m1nd/brain): every clone of it is this brain, whatever its folder\n", reply.Brain, reply.Registered)
		}
		if reply.Note != "" {
			fmt.Fprintf(opts.IO.Err, "note: %s\n", reply.Note)
		}
		return nil
	})
}

// guardFolder writes m1nd's hooks folder, the guard the worktrees
// m1nd guards run (calling command), and takes the reference-transaction
// hook an earlier m1nd installed out of the shared hooks folder, where
// every worktree paid for it.
func guardFolder(command string) ops.HookInstaller {
	return func(repo *gitstore.Repo) ([]string, []string, error) {
		removed, err := githook.RemoveShared(repo)
		if err != nil {
			return nil, removed, err
		}
		written, err := githook.SyncGuardDir(repo, command)
		return written, removed, err
	}
}
