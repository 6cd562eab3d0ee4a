package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/session"
)

// hookGroup is the hook command with the subcommands it is given: all of them
// (hookCommand), or the hot ones the small m1nd runs itself (front.go).
func hookGroup(inv *invocation, subs ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "agent-session hooks for Claude Code and Codex: letters dropped into a live session",
		Description: `Claude Code and Codex run these around a session's turns. Each reads the
host's hook JSON on stdin and answers JSON on stdout, exiting 0 whatever goes
wrong on m1nd's side (a bad flag, an unknown event, a broken repository: one
line on stderr, nothing injected). The one deliberate block is PreCompact
with --block-auto-compact, which 'm1nd hook install' puts there:

   SessionStart                 the agent's open missions and unread letters (≤ 4 KB)
   PostToolUse, PostToolBatch   letters that arrived since the last call, once each
   UserPromptSubmit             the same, between turns; after a compaction, the rehydration again
   Stop                         keeps the session going while letters wait
   PreCompact, PostCompact      marks the compaction; --block-auto-compact blocks an
                                automatic one (Claude: exit 2; Codex: {"continue":false})

Every event is also noted in the session registry ('m1nd sessions'). On
Claude Code, SessionStart appends "export M1ND_AGENT=…" to $CLAUDE_ENV_FILE
when the agent was named, so the session's own m1nd calls act as it.

Wire them in with 'm1nd hook install claude' (or codex). The agent is --agent,
else $M1ND_AGENT, else git config m1nd.agent (per worktree with
'git config --worktree'). With none of them set a hook injects nothing and
says so on stderr (exit 0): a session never speaks as owner, the human.`,
		Action:      hookGroupAction(inv),
		Subcommands: subs,
	}
}

// hookCommand is the hook command with every subcommand.
func hookCommand(inv *invocation) *cli.Command {
	return hookGroup(inv,
		newHookRunCmd(inv, session.HostClaude, nil),
		newHookRunCmd(inv, session.HostCodex, nil),
		hookInstallCommand(inv, true, nil),
		hookInstallCommand(inv, false, nil),
	)
}

// hookGroupAction is m1nd hook called with no subcommand it knows. "m1nd
// hook <host> <Event>" with a host m1nd does not know is a hook entry gone
// wrong: exit 0, or the host may read a block.
func hookGroupAction(inv *invocation) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() >= 2 && c.Args().Get(1) != "" && unicode.IsUpper(rune(c.Args().Get(1)[0])) {
			return hookNote(inv.io, fmt.Sprintf("m1nd hook: unknown host %q (want claude or codex); nothing done", gates.Clip(c.Args().First())))
		}
		return groupAction(inv)(c)
	}
}

// hookRunOptions is what hook claude and hook codex run on: one event of
// one host's session.
type hookRunOptions struct {
	IO    *IOStreams
	Agent func() (string, error)
	Flows func() (*ops.Brain, error)
	Repo  func() (*gitstore.Repo, error)
	// InDir moves the invocation to the session's folder unless -C named
	// one, before the agent and the brain are resolved: a host runs its
	// hooks wherever it was started.
	InDir            func(dir string)
	Host             string
	Event            string
	Budget           int
	BlockAutoCompact bool
}

// newHookRunCmd is hook claude or hook codex; a test's runF sees the
// options instead of running it. Nothing it is given exits non-zero but a
// deliberate block.
func newHookRunCmd(inv *invocation, host string, runF func(context.Context, *hookRunOptions) error) *cli.Command {
	return &cli.Command{
		Name:      host,
		Usage:     "answer one " + host + " hook event (JSON on stdin, JSON on stdout)",
		ArgsUsage: "EVENT",
		Flags: []cli.Flag{
			asAgentFlag,
			&cli.IntFlag{Name: "budget", Value: session.DefaultBudget, Usage: fmt.Sprintf("at most `BYTES` of context per call (at least %d)", session.MinBudget)},
			&cli.BoolFlag{Name: session.BlockFlag[2:], Usage: "PreCompact with trigger auto blocks the host's summary (Claude: exit 2; Codex: {\"continue\":false})"},
		},
		// A hook entry m1nd cannot parse is m1nd's mistake, never the
		// session's: a host reads exit 2 as "block" (Claude Code re-prompts
		// the model on a Stop that exits 2).
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return hookNote(inv.io, fmt.Sprintf("m1nd hook %s: %s; nothing done", host, gates.OneLine(err.Error())))
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return answerHook(inv.io, session.Result{Stderr: fmt.Sprintf("m1nd hook %s: want exactly one EVENT argument, got %d; nothing done", host, c.NArg())})
			}
			opts := &hookRunOptions{IO: inv.io, Agent: inv.agentOf(c), Flows: inv.flows, Repo: inv.openRepo,
				InDir: inv.defaultDir, Host: host, Event: c.Args().First(), Budget: c.Int("budget"), BlockAutoCompact: c.Bool(session.BlockFlag[2:])}
			return runWith(c.Context, opts, runF, runHookEvent)
		},
	}
}

// runHookEvent answers the event. A panic ends as any failure does, in
// one stderr line and exit 0.
func runHookEvent(ctx context.Context, opts *hookRunOptions) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = hookNote(opts.IO, fmt.Sprintf("m1nd hook %s: internal error: %v; nothing done", opts.Host, p))
		}
	}()
	return answerHook(opts.IO, runHook(ctx, opts))
}

// answerHook writes what the hook answers its host and exits with its
// status: 0, or 2 only for a deliberate block.
func answerHook(streams *IOStreams, res session.Result) error {
	if len(res.Stdout) > 0 {
		streams.Out.Write(append(res.Stdout, '\n'))
	}
	if res.Stderr != "" {
		fmt.Fprintln(streams.Err, res.Stderr)
	}
	return exitStatus(res.Exit)
}

// hookNote ends a hook that could not run as m1nd meant: one line on
// stderr, nothing on stdout, exit 0.
func hookNote(streams *IOStreams, note string) error {
	fmt.Fprintln(streams.Err, note)
	return exitStatus(0)
}

// runHook turns every failure into one stderr line: a hook must never
// break the agent's session.
func runHook(ctx context.Context, opts *hookRunOptions) session.Result {
	host, event := opts.Host, opts.Event
	fail := func(err error) session.Result { return session.Failure(host, event, err) }
	in, err := session.ReadInput(opts.IO.In)
	if err != nil {
		return fail(fmt.Errorf("%w; nothing injected", err))
	}
	if in.Cwd != "" {
		if fi, err := os.Stat(in.Cwd); err == nil && fi.IsDir() {
			opts.InDir(in.Cwd)
		}
	}
	agent, err := opts.Agent()
	if err != nil {
		return fail(err)
	}
	if agent == gates.HumanName {
		return session.Result{Stderr: noAgentNote(host, event)}
	}
	flows, err := opts.Flows()
	if err != nil {
		return fail(err)
	}
	s := &session.Session{Brain: flows, Agent: agent, Host: host, Budget: opts.Budget,
		BlockAutoCompact: opts.BlockAutoCompact, Registry: session.NewRegistry(flows.Repo.RuntimeDir()), Now: opts.IO.now()}
	if host == session.HostClaude && event == session.EventSessionStart && agent != gates.HumanName {
		s.EnvFile = os.Getenv("CLAUDE_ENV_FILE")
	}
	res := s.Handle(ctx, event, in)
	if err := noteSession(opts, in, agent, res); err != nil {
		res.Stderr = strings.TrimLeft(res.Stderr+"\n"+session.Failure(host, event, err).Stderr, "\n")
	}
	return res
}

// noAgentNote is what a hook says when no agent is set: it injects
// nothing rather than speak to the session as the human, whose letters and
// gestures are no agent's to act on.
func noAgentNote(host, event string) string {
	return fmt.Sprintf("m1nd hook %s %s: no agent is set, so nothing is injected; name the session's agent with --agent in the hook entry, M1ND_AGENT, or git config m1nd.agent", host, event)
}

// noteSession records the session in the runtime folder's registry (m1nd
// sessions lists it). A session the host did not name is not recorded.
func noteSession(opts *hookRunOptions, in *session.Input, agent string, res session.Result) error {
	if in.SessionID == "" || !session.Answers(opts.Event) {
		return nil
	}
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	state, _ := session.StateAfter(opts.Event, res)
	proc, err := session.HostProcess(os.Getppid())
	if err != nil {
		proc = session.Proc{} // recorded without a process: never listed live
	}
	return session.NewRegistry(repo.RuntimeDir()).Note(in, opts.Host, agent, opts.Event, state, proc, opts.IO.now())
}

func hookInstallCommand(inv *invocation, install bool, runF func(context.Context, *hookInstallOptions) error) *cli.Command {
	name, usage := "install", "merge m1nd's hooks and MCP server into the host's settings"
	if !install {
		name, usage = "uninstall", "remove m1nd's hooks and MCP server from the host's settings"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "claude|codex",
		Description: `Adds (or removes) one entry per event m1nd answers, leaving every other setting
and hook as it was; running it twice changes nothing. --user edits the user's
own settings ($CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json;
$CODEX_HOME/hooks.json or ~/.codex/hooks.json) instead of the project's.

It also registers m1nd's MCP server ('m1nd mcp', named m1nd) where the host
looks for one: Claude Code's .mcp.json (--user: ~/.claude.json, or
$CLAUDE_CONFIG_DIR/.claude.json), Codex's .codex/config.toml (--user:
$CODEX_HOME/config.toml or ~/.codex/config.toml) as [mcp_servers.m1nd].
Other servers and settings stay as they were; uninstall removes only m1nd's.
Claude Code asks once before it starts a project's .mcp.json servers.

A project's files are for the team to commit: they run m1nd as PATH finds
it, never this machine's path to it (an install warns when m1nd is not on
PATH here). --user files run this machine's m1nd by its path. m1nd status
says when the m1nd a registration runs cannot be found.

The PreCompact entry blocks automatic compaction (--block-auto-compact): the
session's memory is m1nd's, so a session that fills up is ended and started
afresh rather than summarised. --allow-auto-compact installs it without.

Codex runs project and user hooks only once they are trusted; install codex
prints how (docs/mail.md: "Trusting m1nd's hooks in Codex").`,
		Flags: installFlags(install),
		Action: func(c *cli.Context) error {
			host, err := oneArg(c, "host (claude or codex)")
			if err != nil {
				return err
			}
			if host != session.HostClaude && host != session.HostCodex {
				return usagef("unknown host %q: want claude or codex", host)
			}
			opts := &hookInstallOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.openRepo, Agent: inv.agentOf(c),
				Install: install, Host: host, User: c.Bool("user"), AllowAutoCompact: c.Bool("allow-auto-compact")}
			return runWith(c.Context, opts, runF, runHookInstall)
		},
	}
}

// hookInstallOptions is what hook install and hook uninstall run on.
type hookInstallOptions struct {
	IO               *IOStreams
	JSON             bool
	Repo             func() (*gitstore.Repo, error)
	Agent            func() (string, error)
	Install          bool // false: uninstall
	Host             string
	User             bool // the user's own settings, not the project's
	AllowAutoCompact bool
}

// runHookInstall merges m1nd's hooks and MCP server into the host's
// settings, or removes them.
func runHookInstall(ctx context.Context, opts *hookInstallOptions) error {
	root := ""
	var repo *gitstore.Repo
	if !opts.User {
		var err error
		if repo, err = opts.Repo(); err != nil {
			return err
		}
		if root = repo.WorkTree(); root == "" {
			return usagef("a bare repository has no project settings; use --user")
		}
	}
	path, err := session.SettingsPath(opts.Host, root, opts.User)
	if err != nil {
		return err
	}
	mcpPath, err := session.MCPConfigPath(opts.Host, root, opts.User)
	if err != nil {
		return err
	}
	command := opts.command()
	changed, mcpChanged, err := opts.apply(path, mcpPath, command)
	if err != nil {
		return err
	}
	reply := map[string]any{"path": path, "changed": changed || mcpChanged, "mcp_path": mcpPath}
	warnings := opts.warnings(command, root)
	guarded, warning := opts.guard(ctx, repo, root)
	if guarded != "" {
		reply["guard"] = guarded
	} else if warning != "" {
		warnings = append(warnings, warning)
	}
	if len(warnings) > 0 {
		reply["warning"] = strings.Join(warnings, "; ")
	}
	trust := ""
	if opts.Install && opts.Host == session.HostCodex {
		trust = session.CodexTrustHint(root)
		reply["trust"] = trust
	}
	return opts.IO.reply(opts.JSON, reply, func(w io.Writer) error {
		opts.say(w, path, mcpPath, changed, mcpChanged)
		if guarded != "" {
			fmt.Fprintf(w, "%s: guarded: git here runs m1nd's hooks folder %s, which refuses raw writes to refs/m1nd/ the laws forbid\n", root, guarded)
		}
		if trust != "" {
			fmt.Fprint(w, trust)
		}
		for _, warning := range warnings {
			fmt.Fprintln(opts.IO.Err, "warning: "+warning)
		}
		return nil
	})
}

// warnings are what an install says on stderr about the sessions it
// wires in: no agent set, or an m1nd the host will not find.
func (opts *hookInstallOptions) warnings(command, root string) []string {
	if !opts.Install {
		return nil
	}
	var out []string
	if id, err := opts.Agent(); err == nil && id == gates.HumanName {
		out = append(out, noAgentWarning)
	}
	if session.Locate(command, root) == "" {
		out = append(out, fmt.Sprintf("%s is not on PATH here, so the host will not find the m1nd its hooks name until it is (README: Install)", command))
	}
	return out
}

// guard guards the worktree at root of repo, where an agent's session
// now writes, on install into its project settings; it returns the
// guard's folder, or why it could not.
func (opts *hookInstallOptions) guard(ctx context.Context, repo *gitstore.Repo, root string) (guard, warning string) {
	if !opts.Install || repo == nil {
		return "", ""
	}
	if _, err := githook.Guard(ctx, repo, root, hookCommandName()); err != nil {
		return "", "this worktree is not guarded against raw git writes to refs/m1nd/: " + gates.OneLine(err.Error())
	}
	return githook.GuardDir(repo), ""
}

// command is how the host runs m1nd. A project's settings are committed
// and run on every teammate's machine, so they name m1nd as PATH finds it;
// the user's own settings name this machine's m1nd by its path, as git's
// hooks do (hookCommandName).
func (opts *hookInstallOptions) command() string {
	if opts.User {
		return hookCommandName()
	}
	return FrontName
}

// apply installs (or removes) the hooks at path, then the MCP server at
// mcpPath, each running command, and reports what changed.
func (opts *hookInstallOptions) apply(path, mcpPath, command string) (changed, mcpChanged bool, err error) {
	if opts.Install {
		if changed, err = session.Install(path, opts.Host, command, !opts.AllowAutoCompact); err == nil {
			mcpChanged, err = session.InstallMCP(mcpPath, opts.Host, command)
		}
		return changed, mcpChanged, err
	}
	if changed, err = session.Uninstall(path, opts.Host); err == nil {
		mcpChanged, err = session.UninstallMCP(mcpPath, opts.Host)
	}
	return changed, mcpChanged, err
}

// say is the text reply: what changed in each file.
func (opts *hookInstallOptions) say(w io.Writer, path, mcpPath string, changed, mcpChanged bool) {
	switch {
	case !changed:
		fmt.Fprintf(w, "%s: nothing to change\n", path)
	case opts.Install:
		fmt.Fprintf(w, "%s: m1nd's %s hooks installed\n", path, opts.Host)
	default:
		fmt.Fprintf(w, "%s: m1nd's %s hooks removed\n", path, opts.Host)
	}
	switch {
	case mcpChanged && opts.Install:
		fmt.Fprintf(w, "%s: m1nd's MCP server registered (m1nd mcp)\n", mcpPath)
	case mcpChanged:
		fmt.Fprintf(w, "%s: m1nd's MCP server removed\n", mcpPath)
	}
}

// noAgentWarning is what hook install says when the sessions it wires in
// would have no agent.
const noAgentWarning = "no agent is set here, so the hooks will inject nothing and m1nd mcp will not start: set M1ND_AGENT for the session, or git config m1nd.agent ID (per worktree with git config --worktree)"

func installFlags(install bool) []cli.Flag {
	flags := []cli.Flag{&cli.BoolFlag{Name: "user", Usage: "edit the user's settings, not the project's"}, jsonFlag}
	if install {
		flags = append(flags, &cli.BoolFlag{Name: "allow-auto-compact", Usage: "install PreCompact without " + session.BlockFlag + ": let the host summarise a full session"})
	}
	return flags
}

// hookCommandName is how a hook runs m1nd: by this binary's absolute path,
// so git run with another PATH (env -i, a cron job, an IDE) still finds
// it; `m1nd init` writes it again after m1nd moved. A go run or go test
// build, which disappears, is named by name instead.
func hookCommandName() string {
	self, err := thisM1nd()
	// A binary go test or go run built lives in a temporary folder: the
	// hook names m1nd on PATH, where the tests put it.
	if err != nil || goRunBuild(self) {
		return FrontName
	}
	return self
}
