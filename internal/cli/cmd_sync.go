package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitsync"
)

func syncCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "share refs/m1nd/ with a git remote: fetch, fast-forward, push, park what lost a race",
		ArgsUsage: "[REMOTE]",
		Description: `Fetches the remote's refs/m1nd/* into refs/m1nd-sync/REMOTE/*, then per ref:
takes what is new on the remote (after checking every new link), pushes what is
new here in one atomic push with a lease per ref, and when a mission (or the
store) was extended on both sides keeps the remote's chain and parks the local
letters after the fork under refs/m1nd/conflicts/ — reported as stale_head
with what to re-post. Nothing accepted locally is dropped. Put the laws on the
remote too: 'm1nd hooks install --bare' in the bare repository.`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("too many arguments: want at most one REMOTE")
			}
			remote := c.Args().First()
			if remote == "" {
				remote = "origin"
			}
			if !gitsync.ValidRemote(remote) {
				return usagef("%q is not a remote name (git remote -v lists them)", remote)
			}
			repo, err := inv.openRepo()
			if err != nil {
				return err
			}
			rep, err := gitsync.Sync(c.Context, repo, remote, inv.io.Err)
			if err != nil {
				return err
			}
			if inv.jsonOut {
				if err := inv.printJSON(rep); err != nil {
					return err
				}
			} else {
				inv.printf("sync with %s: %d unchanged, %s fast-forwarded, %s created, %s pushed\n", remote, rep.Unchanged,
					gates.Count(len(rep.FastForwarded), "ref"), gates.Count(len(rep.Created), "ref"), gates.Count(len(rep.Pushed), "ref"))
				for _, c := range rep.Conflicts {
					inv.printf("stale_head: %s\n", c.Lesson)
				}
				for _, f := range rep.RefusedRemote {
					inv.printf("refused from %s: %s\n", remote, f.Error())
				}
				if rep.PushError != "" {
					inv.printf("push refused (the remote moved, or its hook said no): %s\nrun m1nd sync again\n", rep.PushError)
				}
			}
			if !rep.OK {
				return exitStatus(exitRefused)
			}
			return nil
		},
	}
}
