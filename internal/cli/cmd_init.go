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
	Flows func() (*ops.Brain, error)
	Hook  ops.HookInstaller // installs the reference-transaction hook
}

func newInitCmd(inv *invocation, runF func(context.Context, *initOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "prepare this repository for m1nd (idempotent)",
		Description: `Creates the runtime folder $(git rev-parse --git-common-dir)/m1nd (never a
ref, never pushed), the runner daemon's shared secret in it (mode 0600), and
the reference-transaction git hook that keeps raw git writes to refs/m1nd/
honest (an existing hook is kept and runs first). Running it again changes
nothing.`,
		Flags:  []cli.Flag{jsonFlag},
		Before: noArgs,
		Action: func(c *cli.Context) error {
			opts := &initOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.flows, Hook: refTransactionHook(hookCommandName())}
			return runWith(c.Context, opts, runF, runInit)
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
		return usagef("%v; fix or remove it, then run m1nd init again", err) // the operator's to repair
	}
	if err != nil {
		return err
	}
	return opts.IO.reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "brain %s\nruntime dir %s\n", reply.Brain, reply.RuntimeDir)
		if len(reply.Created) == 0 {
			fmt.Fprintf(w, "already initialised; nothing changed\n")
		}
		printIDs(w, "created %s\n", reply.Created)
		if strings.HasPrefix(reply.Registered, "adopted from ") {
			fmt.Fprintf(w, "brain %s %s (refs/m1nd/brain): every clone of it is this brain, whatever its folder\n", reply.Brain, reply.Registered)
		}
		if reply.Note != "" {
			fmt.Fprintf(opts.IO.Err, "note: %s\n", reply.Note)
		}
		return nil
	})
}

// refTransactionHook installs the reference-transaction hook that keeps
// raw git writes to refs/m1nd/ honest, run as command.
func refTransactionHook(command string) ops.HookInstaller {
	return func(repo *gitstore.Repo) ([]string, error) {
		return githook.SetGitHooks(githook.HooksDir(repo), []string{githook.GitHookReferenceTransaction}, true, command, nil)
	}
}
