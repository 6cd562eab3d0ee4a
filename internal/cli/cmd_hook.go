package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/session"
)

func hookCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "agent-session hooks for Claude Code and Codex: letters dropped into a live session",
		Description: `Claude Code and Codex run these between tool calls. Each reads the host's hook
JSON on stdin and answers JSON on stdout, always exiting 0 (a hook never
breaks the agent's session):

   SessionStart                 the agent's open missions and unread letters (≤ 4 KB)
   PostToolUse, PostToolBatch   letters that arrived since the last call, once each
   UserPromptSubmit             the same; after a compaction, the rehydration again
   Stop                         keeps the session going while letters wait
   PreCompact, PostCompact      marks the compaction (--block-auto-compact blocks auto)

Wire them in with 'm1nd hook install claude' (or codex). The agent is --agent,
else $M1ND_AGENT, else git config m1nd.agent (per worktree with
'git config --worktree'), else owner.`,
		Subcommands: []*cli.Command{
			hookRunCommand(inv, session.HostClaude),
			hookRunCommand(inv, session.HostCodex),
			hookInstallCommand(inv, true),
			hookInstallCommand(inv, false),
		},
	}
}

func hookRunCommand(inv *invocation, host string) *cli.Command {
	return &cli.Command{
		Name:      host,
		Usage:     "answer one " + host + " hook event (JSON on stdin, JSON on stdout)",
		ArgsUsage: "EVENT",
		Flags: []cli.Flag{
			asAgentFlag,
			&cli.IntFlag{Name: "budget", Value: session.DefaultBudget, Usage: fmt.Sprintf("at most `BYTES` of context per call (at least %d)", session.MinBudget)},
			&cli.BoolFlag{Name: "block-auto-compact", Usage: "PreCompact with trigger auto exits 2, blocking the host's summary"},
		},
		Action: func(c *cli.Context) error {
			// Even a misconfigured hook entry must not break the session:
			// a host may read exit 2 as "block".
			var res session.Result
			if c.NArg() != 1 {
				res.Stderr = fmt.Sprintf("m1nd hook %s: want exactly one EVENT argument, got %d; nothing done", host, c.NArg())
			} else {
				res = runHook(inv, c, host, c.Args().First())
			}
			if len(res.Stdout) > 0 {
				inv.io.Out.Write(append(res.Stdout, '\n'))
			}
			if res.Stderr != "" {
				fmt.Fprintln(inv.io.Err, res.Stderr)
			}
			if res.Exit != 0 {
				return exitStatus(res.Exit)
			}
			return nil
		},
	}
}

// runHook turns every failure into one stderr line: a hook must never
// break the agent's session.
func runHook(inv *invocation, c *cli.Context, host, event string) session.Result {
	fail := func(err error) session.Result { return session.Failure(host, event, err) }
	in, err := session.ReadInput(inv.io.In)
	if err != nil {
		return fail(fmt.Errorf("%w; nothing injected", err))
	}
	if in.Cwd != "" && inv.dir == "" {
		if fi, err := os.Stat(in.Cwd); err == nil && fi.IsDir() {
			inv.dir = in.Cwd
		}
	}
	box, agent, err := openAs(inv.agentOf(c), inv.mailbox)
	if err != nil {
		return fail(err)
	}
	m, err := inv.missions()
	if err != nil {
		return fail(err)
	}
	book, err := inv.book()
	if err != nil {
		return fail(err)
	}
	s := &session.Session{Box: box, Missions: m, Book: book, Agent: agent, Host: host, Budget: c.Int("budget"),
		BlockAutoCompact: c.Bool("block-auto-compact"), Now: inv.now()}
	return s.Handle(c.Context, event, in)
}

func hookInstallCommand(inv *invocation, install bool) *cli.Command {
	name, usage := "install", "merge m1nd's hooks into .claude/settings.json or .codex/hooks.json"
	if !install {
		name, usage = "uninstall", "remove m1nd's hooks from .claude/settings.json or .codex/hooks.json"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "claude|codex",
		Description: `Adds (or removes) one entry per event m1nd answers, leaving every other setting
and hook as it was; running it twice changes nothing. --user edits the user's
own settings (~/.claude/settings.json, ~/.codex/hooks.json) instead of the
project's.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "user", Usage: "edit the user's settings, not the project's"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			host, err := oneArg(c, "host (claude or codex)")
			if err != nil {
				return err
			}
			if host != session.HostClaude && host != session.HostCodex {
				return usagef("unknown host %q: want claude or codex", host)
			}
			root := ""
			if !c.Bool("user") {
				repo, err := inv.openRepo()
				if err != nil {
					return err
				}
				if root = repo.WorkTree(); root == "" {
					return usagef("a bare repository has no project settings; use --user")
				}
			}
			path, err := session.SettingsPath(host, root, c.Bool("user"))
			if err != nil {
				return err
			}
			var changed bool
			if install {
				changed, err = session.Install(path, host, hookCommandName())
			} else {
				changed, err = session.Uninstall(path, host)
			}
			if err != nil {
				return err
			}
			return inv.reply(map[string]any{"ok": true, "path": path, "changed": changed}, func(w io.Writer) error {
				switch {
				case !changed:
					fmt.Fprintf(w, "%s: nothing to change\n", path)
				case install:
					fmt.Fprintf(w, "%s: m1nd's %s hooks installed\n", path, host)
				default:
					fmt.Fprintf(w, "%s: m1nd's %s hooks removed\n", path, host)
				}
				return nil
			})
		},
	}
}

// hookCommandName is how a hook runs m1nd: by this binary's absolute path,
// so git run with another PATH (env -i, a cron job, an IDE) still finds
// it; `m1nd init` writes it again after m1nd moved. A go run or go test
// build, which disappears, is named by name instead.
func hookCommandName() string {
	self, err := os.Executable()
	if err != nil {
		return "m1nd"
	}
	self, _ = filepath.EvalSymlinks(self)
	// A binary go test or go run built lives in a temporary folder: the
	// hook names m1nd on PATH, where the tests put it.
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		return "m1nd"
	}
	return self
}
