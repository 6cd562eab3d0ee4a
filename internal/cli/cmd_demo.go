package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/demo"
	"github.com/m1nd/m1nd/tray"
)

func demoCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "build a demo brain and open its tray: the main command to try m1nd",
		ArgsUsage: "[DIR]",
		Description: `Creates DIR (--dir, or a new folder under the system temp dir) as a git
repository with a few files, scans its skeleton, posts one mission in every
phase (one waits in merge_wait: the landing bell rings), then serves the tray
on loopback and prints its URL and a one-time code. Open it, register a
passkey with the code, open the merge_wait mission to read its work, and
land it with "land…" (your authenticator signs it; the agent's commit lands
on main). Ctrl-C stops the server; the demo repository stays.
Nothing outside DIR is touched.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "build the demo brain in `DIR` (must not exist)"},
			&cli.StringFlag{Name: "addr", Value: tray.DefaultAddr, Usage: "serve the tray on loopback `HOST:PORT` (a busy default falls back to a free port)"},
			&cli.BoolFlag{Name: "no-serve", Usage: "build the demo brain and stop"},
			&cli.BoolFlag{Name: "open", Usage: "open the tray in the default browser"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 || (c.NArg() == 1 && c.String("dir") != "") {
				return usagef("name the folder once: --dir DIR or DIR")
			}
			dir := c.String("dir")
			if dir == "" {
				dir = c.Args().First()
			}
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
			res, err := demo.Build(c.Context, dir, inv.now())
			if err != nil {
				return err
			}
			inv.dir = res.Dir
			err = inv.reply(struct {
				OK bool `json:"ok"`
				*demo.Result
			}{true, res}, func(w io.Writer) error {
				fmt.Fprintf(w, "demo brain %q built in %s\n\n", res.Brain, res.Dir)
				if err := runStatus(c.Context, &statusOptions{IO: inv.io, Flows: inv.flows}); err != nil {
					return err
				}
				mw := res.Missions["merge_wait"]
				fmt.Fprintf(w, "\nTry, in another terminal:\n  cd %s\n  m1nd blocks\n  m1nd mission heads\n  m1nd mission log %s\n  git log refs/m1nd/missions/%s\n\n", res.Dir, mw, mw)
				return nil
			})
			if err != nil {
				return err
			}
			if c.Bool("no-serve") {
				return nil
			}
			repo, name, err := inv.brain()
			if err != nil {
				return err
			}
			ln, err := tray.Listen(c.String("addr"))
			if err != nil && !c.IsSet("addr") {
				ln, err = tray.Listen("127.0.0.1:0") // the default port is taken (another owner?): any free port
			}
			if err != nil {
				return usagef("%v", err)
			}
			return runOwner(c.Context, inv, repo, name, ln, false, c.Bool("open"))
		},
	}
}
