package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

func brainCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "brain",
		Usage: "the brain's name: show it, or rename a brain that has no missions yet",
		Description: `A brain is named by git config m1nd.brain, else by its main worktree's
folder. Once it has missions the name is fixed: every letter carries it in
brain_ref, so a moved folder changes nothing and a git config naming
another brain is refused brain_mismatch.`,
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print the brain's name and where it comes from",
				ArgsUsage: " ",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					repo, err := inv.openRepo()
					if err != nil {
						return err
					}
					return runBrainShow(c.Context, inv, repo)
				},
			},
			{
				Name:      "rename",
				Usage:     "rename a brain that has no missions yet (sets git config m1nd.brain)",
				ArgsUsage: "NAME",
				Description: `Sets git config m1nd.brain to NAME while the brain has no missions. Once
it has some, the name is fixed (every letter carries it) and rename is
refused invalid_transition: there is no rename that keeps the letters.`,
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					name, err := oneArg(c, "the new name")
					if err != nil {
						return err
					}
					repo, err := inv.openRepo()
					if err != nil {
						return err
					}
					return runBrainRename(c.Context, inv, repo, name)
				},
			},
		},
	}
}

// brainReply is what brain show and brain rename answer.
type brainReply struct {
	OK    bool   `json:"ok"`
	Brain string `json:"brain"`
	Fixed bool   `json:"fixed"` // its missions carry the name
}

func runBrainShow(_ context.Context, inv *invocation, repo *gitstore.Repo) error {
	name, err := brain.DisplayName(repo)
	if err != nil {
		return err
	}
	_, fixed, err := brain.FixedName(repo)
	if err != nil {
		return err
	}
	return inv.reply(brainReply{OK: true, Brain: name, Fixed: fixed}, func(w io.Writer) error {
		how := "not fixed yet: no missions (m1nd brain rename NAME changes it)"
		if fixed {
			how = "fixed: its missions carry it"
		}
		fmt.Fprintf(w, "brain %s (%s)\n", name, how)
		return nil
	})
}

func runBrainRename(ctx context.Context, inv *invocation, repo *gitstore.Repo, name string) error {
	if problem := gates.DisplayNameProblem(name); problem != "" {
		return usagef("%q cannot name a brain: %s", name, problem)
	}
	if fixed, ok, err := brain.FixedName(repo); err != nil {
		return err
	} else if ok {
		return gates.Refusef(gates.InvalidTransition, "brain", "brain %q has missions, and every letter carries its name: it cannot be renamed; a brain named %s is a new repository", fixed, gates.Echo(name))
	}
	if _, err := gitstore.Git(ctx, repo.CommandDir(), "config", "m1nd.brain", name); err != nil {
		return err
	}
	return inv.reply(brainReply{OK: true, Brain: name}, func(w io.Writer) error {
		fmt.Fprintf(w, "brain renamed %s (git config m1nd.brain)\n", name)
		return nil
	})
}
