package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/demo"
)

func demoCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "build a demo brain (a small git repository with missions) and show it",
		ArgsUsage: "[DIR]",
		Description: `Creates DIR (default: a new folder under the system temp dir) as a git
repository with a few files, opens two missions in it — one carried through
judging, executing, gate and merge_wait, one just opened — and prints what
to try next. Nothing outside DIR is touched.`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			inv.jsonOut = c.Bool("json")
			if c.NArg() > 1 {
				return usagef("too many arguments: want at most one DIR")
			}
			dir := c.Args().First()
			if dir == "" {
				parent, err := os.MkdirTemp("", "m1nd-demo-")
				if err != nil {
					return err
				}
				dir = filepath.Join(parent, "demo-brain")
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			res, err := demo.Build(c.Context, dir, time.Now())
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(res)
			}
			inv.printf("demo brain %q built in %s\n\n", res.Brain, res.Dir)
			inv.dir = res.Dir
			if err := printStatus(inv, false); err != nil {
				return err
			}
			inv.printf("\nTry:\n  cd %s\n  m1nd blocks\n  m1nd skeleton show\n  m1nd mission heads\n  m1nd mission log %s\n  git log refs/m1nd/missions/%s\n  git cat-file blob refs/m1nd/missions/%s:letter.json\n",
				res.Dir, res.Missions[0], res.Missions[0], res.Missions[0])
			return nil
		},
	}
}
