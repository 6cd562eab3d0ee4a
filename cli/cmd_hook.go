package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/session"
)

// hookGroup is the hook command with the subcommands it is given: all of them
// (hookCommand), or the hot ones the small m1nd runs itself (front.go).
func hookGroup(inv *Invocation, subs ...*cli.Command) *cli.Command {
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

// hookCommand is the hook command with the subcommands the small m1nd
// links (m1nd-full adds install and uninstall: fullcli).
func hookCommand(inv *Invocation) *cli.Command {
	return hookGroup(inv,
		newHookRunCmd(inv, session.HostClaude, nil),
		newHookRunCmd(inv, session.HostCodex, nil),
	)
}

// hookGroupAction is m1nd hook called with no subcommand it knows. "m1nd
// hook <host> <Event>" with a host m1nd does not know is a hook entry gone
// wrong: exit 0, or the host may read a block.
func hookGroupAction(inv *Invocation) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() >= 2 && c.Args().Get(1) != "" && unicode.IsUpper(rune(c.Args().Get(1)[0])) {
			return hookNote(inv.io, fmt.Sprintf("m1nd hook: unknown host %q (want claude or codex); nothing done", rules.Clip(c.Args().First())))
		}
		return groupAction(inv)(c)
	}
}

// hookRunOptions is what hook claude and hook codex run on: one event of
// one host's session.
type hookRunOptions struct {
	IO    *IOStreams
	Agent func() (string, error)
	Flows func() (*ops.Flows, error)
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
func newHookRunCmd(inv *Invocation, host string, runF func(context.Context, *hookRunOptions) error) *cli.Command {
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
			return hookNote(inv.io, fmt.Sprintf("m1nd hook %s: %s; nothing done", host, rules.OneLine(err.Error())))
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return answerHook(inv.io, session.Result{Stderr: fmt.Sprintf("m1nd hook %s: want exactly one EVENT argument, got %d; nothing done", host, c.NArg())})
			}
			opts := &hookRunOptions{IO: inv.io, Agent: inv.AgentOf(c), Flows: inv.Flows, Repo: inv.OpenRepo,
				InDir: inv.defaultDir, Host: host, Event: c.Args().First(), Budget: c.Int("budget"), BlockAutoCompact: c.Bool(session.BlockFlag[2:])}
			return RunWith(c.Context, opts, runF, runHookEvent)
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
	if agent == rules.HumanName {
		return session.Result{Stderr: noAgentNote(host, event)}
	}
	flows, err := opts.Flows()
	if err != nil {
		return fail(err)
	}
	s := &session.Session{Flows: flows, Agent: agent, Host: host, Budget: opts.Budget,
		BlockAutoCompact: opts.BlockAutoCompact, Registry: session.NewRegistry(flows.RuntimeDir()), Now: opts.IO.Time()}
	if host == session.HostClaude && event == session.EventSessionStart && agent != rules.HumanName {
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
	return session.NewRegistry(repo.RuntimeDir()).Note(in, opts.Host, agent, opts.Event, state, proc, opts.IO.Time())
}

// HookCommandName is how a hook runs m1nd: by this binary's absolute path,
// so git run with another PATH (env -i, a cron job, an IDE) still finds
// it; `m1nd init` writes it again after m1nd moved. A go run or go test
// build, which disappears, is named by name instead.
func HookCommandName() string {
	self, err := ThisM1nd()
	// A binary go test or go run built lives in a temporary folder: the
	// hook names m1nd on PATH, where the tests put it.
	if err != nil || GoRunBuild(self) {
		return FrontName
	}
	return self
}
