package cli

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
)

func initCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "prepare this repository for m1nd (idempotent)",
		Description: `Creates the runtime folder $(git rev-parse --git-common-dir)/m1nd (never a
ref, never pushed), the runner daemon's shared secret in it (mode 0600), and
the reference-transaction git hook that keeps raw git writes to refs/m1nd/
honest (an existing hook is kept and runs first). Running it again changes
nothing.`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			flows, err := inv.flows()
			if err != nil {
				return err
			}
			reply, err := flows.Init(c.Context, refTransactionHook(hookCommandName()))
			var bad *ops.SecretError
			if errors.As(err, &bad) {
				return usagef("%v; fix or remove it, then run m1nd init again", err) // the operator's to repair
			}
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(reply)
			}
			inv.printf("brain %s\nruntime dir %s\n", reply.Brain, reply.RuntimeDir)
			if len(reply.Created) == 0 {
				inv.printf("already initialised; nothing changed\n")
			}
			for _, p := range reply.Created {
				inv.printf("created %s\n", p)
			}
			return nil
		},
	}
}

// refTransactionHook installs the reference-transaction hook that keeps
// raw git writes to refs/m1nd/ honest, run as command.
func refTransactionHook(command string) ops.HookInstaller {
	return func(repo *gitstore.Repo) ([]string, error) {
		return githook.SetGitHooks(githook.HooksDir(repo), []string{githook.GitHookReferenceTransaction}, true, command)
	}
}
