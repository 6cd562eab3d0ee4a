package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/internal/serve"
)

type initReply struct {
	OK         bool     `json:"ok"`
	Brain      string   `json:"brain"`
	RuntimeDir string   `json:"runtime_dir"`
	Created    []string `json:"created"`
}

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
			repo, name, err := inv.brain()
			if err != nil {
				return err
			}
			reply := initReply{OK: true, Brain: name, RuntimeDir: repo.RuntimeDir(), Created: []string{}}
			made, err := repo.EnsureRuntimeDir()
			if err != nil {
				return err
			}
			if made {
				reply.Created = append(reply.Created, repo.RuntimeDir())
			}
			if made, err := serve.EnsureSecret(repo.RuntimeDir()); err != nil {
				return usagef("%v; fix or remove it, then run m1nd init again", err) // the operator's to repair
			} else if made {
				reply.Created = append(reply.Created, serve.SecretFile)
			}
			installed, err := githook.SetGitHooks(githook.HooksDir(repo), []string{githook.GitHookReferenceTransaction}, true, hookCommandName())
			if err != nil {
				return err
			}
			reply.Created = append(reply.Created, installed...)
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
