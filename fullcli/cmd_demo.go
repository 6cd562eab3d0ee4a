package fullcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	mcli "github.com/m1nd/m1nd/cli"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/demo"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/ops"
)

// demoOptions is what demo runs on.
type demoOptions struct {
	IO    *mcli.IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	Brain func() (*gitstore.Repo, string, error)
	// Chdir runs the rest of the invocation in the demo brain once it is
	// built: Flows and Brain open that brain, not the folder m1nd was
	// started in.
	Chdir   func(dir string)
	Dir     string // "" for a new folder under the system temp dir
	Addr    string
	AddrSet bool // --addr was given: a busy address is refused, never swapped for a free one
	NoServe bool
	Open    bool // open the tray in the default browser
}

// newDemoCmd parses demo; a test's runF sees the options instead of
// building a brain.
func newDemoCmd(inv *mcli.Invocation, runF func(context.Context, *demoOptions) error) *cli.Command {
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
			&cli.StringFlag{Name: "addr", Value: trayclient.DefaultAddr, Usage: "serve the tray on loopback `HOST:PORT` (a busy default falls back to a free port)"},
			&cli.BoolFlag{Name: "no-serve", Usage: "build the demo brain and stop"},
			&cli.BoolFlag{Name: "open", Usage: "open the tray in the default browser"},
			mcli.JSONFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 || (c.NArg() == 1 && c.String("dir") != "") {
				return mcli.Usagef("name the folder once: --dir DIR or DIR")
			}
			dir := c.String("dir")
			if dir == "" {
				dir = c.Args().First()
			}
			opts := &demoOptions{IO: inv.IO(), JSON: c.Bool("json"), Flows: inv.Flows, Brain: inv.OpenBrain, Chdir: inv.Chdir,
				Dir: dir, Addr: c.String("addr"), AddrSet: c.IsSet("addr"), NoServe: c.Bool("no-serve"), Open: c.Bool("open")}
			return mcli.RunWith(c.Context, opts, runF, runDemo)
		},
	}
}

// runDemo builds the demo brain, says what it holds and, unless told
// not to, serves its tray.
func runDemo(ctx context.Context, opts *demoOptions) error {
	dir, scratch, err := demoFolder(opts.Dir)
	if err != nil {
		return err
	}
	if scratch != "" && !opts.NoServe {
		// The demo's own scratch folder goes with the tray that shows it;
		// one asked for with --dir, or kept to explore (--no-serve), stays.
		defer func() {
			if os.RemoveAll(scratch) == nil {
				fmt.Fprintf(opts.IO.Err, "removed the demo brain in %s\n", dir)
			}
		}()
	}
	res, err := demo.Build(ctx, dir, opts.IO.Time())
	if err != nil {
		return err
	}
	opts.Chdir(res.Dir)
	if err := sayDemo(ctx, opts, res); err != nil {
		return err
	}
	if opts.NoServe {
		return nil
	}
	repo, name, err := opts.Brain()
	if err != nil {
		return err
	}
	ln, err := trayclient.Listen(opts.Addr)
	if err != nil && !opts.AddrSet {
		ln, err = trayclient.Listen("127.0.0.1:0") // the default port is taken (another owner?): any free port
	}
	if err != nil {
		return mcli.Usagef("%v", err)
	}
	return runOwner(ctx, opts.IO, repo, name, ln, false, opts.Open)
}

// demoFolder is the absolute folder the demo brain goes in: dir, else a
// new folder under the system temp dir, which is also returned as scratch
// (the demo made it, and removes it).
func demoFolder(dir string) (abs, scratch string, err error) {
	if dir == "" {
		if scratch, err = os.MkdirTemp("", "m1nd-demo-"); err != nil {
			return "", "", err
		}
		dir = filepath.Join(scratch, "demo-brain")
	}
	abs, err = filepath.Abs(dir)
	return abs, scratch, err
}

// sayDemo tells what was built: the brain's status and what to try next.
func sayDemo(ctx context.Context, opts *demoOptions, res *demo.Result) error {
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		fmt.Fprintf(w, "demo brain %q built in %s\n\n", res.Brain, res.Dir)
		if err := runStatus(ctx, &statusOptions{IO: opts.IO, Flows: opts.Flows}); err != nil {
			return err
		}
		mw := res.Missions["merge_wait"]
		m1nd, note := runningM1nd(res.Dir)
		fmt.Fprintf(w, "\nTry, in another terminal:\n  cd %s\n  %s blocks\n  %s mission heads\n  %s mission log %s\n  git log refs/m1nd/missions/%s\n", shellQuote(res.Dir), m1nd, m1nd, m1nd, mw, mw)
		if note != "" {
			fmt.Fprintf(w, "(%s)\n", note)
		}
		fmt.Fprintln(w)
		return nil
	})
}

// runningM1nd is how the demo's hint names this m1nd for a shell in the
// demo repository at dir: "m1nd" when it is the m1nd on PATH, else this
// binary's path, or, for a go run build (which disappears when it exits),
// go run from the module it was started in; note says why when it is not
// plain m1nd.
func runningM1nd(dir string) (cmd, note string) {
	self, err := mcli.ThisM1nd()
	if err != nil {
		return "m1nd", ""
	}
	onPath, _ := exec.LookPath(mcli.FrontName)
	cwd, _ := os.Getwd()
	return m1ndCommand(self, onPath, cwd, dir)
}

// m1ndCommand is runningM1nd for a given binary, m1nd on PATH ("" when
// none) and working directory.
func m1ndCommand(self, onPath, cwd, dir string) (cmd, note string) {
	self = mcli.Resolved(self)
	if onPath != "" && mcli.Resolved(onPath) == self {
		return "m1nd", ""
	}
	install := mcli.InstallCommand + " puts m1nd on your PATH (the static, fast build the README installs)"
	if mcli.GoRunBuild(self) {
		if mcli.InSourceFolder(cwd) {
			return fmt.Sprintf("go -C %s run ./cmd/m1nd -C %s", shellQuote(cwd), shellQuote(dir)),
				"m1nd is not installed: " + install
		}
		return "m1nd", "m1nd is not installed yet: from the m1nd source folder, " + install
	}
	if onPath == "" {
		return shellQuote(self), "this m1nd is not on your PATH"
	}
	return shellQuote(self), "the m1nd on your PATH, " + onPath + ", is another build"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
