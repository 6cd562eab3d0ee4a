package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/session"
)

// sessionsOptions is what sessions runs on.
type sessionsOptions struct {
	IO   *IOStreams
	JSON bool
	All  bool
	Repo func() (*gitstore.Repo, error)
}

func newSessionsCmd(inv *invocation, runF func(context.Context, *sessionsOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the live Claude Code and Codex sessions the hooks recorded",
		Description: `Every hook event a session's m1nd hooks answer is noted in the runtime folder
($(git rev-parse --git-common-dir)/m1nd/sessions/<session id>.json, 0600,
never a ref): the agent, the client (claude or codex), the session id, its
transcript, its worktree, the client's process, and its state — mid-turn
(SessionStart, UserPromptSubmit, PostToolUse, a Stop that kept the turn
going) or idle (Stop) — with the time of its last event.

Liveness is checked, never read from the record: a session is live while a
process with its pid runs AND started when the recorded one did (a reused
pid is another process). Only live sessions are listed unless --all; dead
records older than a day are swept. Liveness reads /proc (Linux).`,
		Flags: []cli.Flag{
			jsonFlag,
			&cli.BoolFlag{Name: "all", Usage: "include the dead sessions not swept yet"},
		},
		Before: noArgs,
		Action: func(c *cli.Context) error {
			opts := &sessionsOptions{IO: inv.io, JSON: c.Bool("json"), All: c.Bool("all"), Repo: inv.openRepo}
			return runWith(c.Context, opts, runF, runSessions)
		},
	}
}

// sessionsReply is the --json answer.
type sessionsReply struct {
	OK       bool             `json:"ok"`
	Sessions []session.Listed `json:"sessions"`
}

// runSessions lists the registry, liveness checked now.
func runSessions(_ context.Context, opts *sessionsOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	now := opts.IO.now()
	listed, err := session.NewRegistry(repo.RuntimeDir()).List(now, opts.All)
	if err != nil {
		return err
	}
	reply := sessionsReply{OK: true, Sessions: listed}
	if reply.Sessions == nil {
		reply.Sessions = []session.Listed{}
	}
	return opts.IO.reply(opts.JSON, reply, func(w io.Writer) error {
		if len(listed) == 0 {
			if opts.All {
				fmt.Fprintln(w, "no sessions recorded (m1nd hook install claude|codex wires them in)")
			} else {
				fmt.Fprintln(w, "no live sessions (--all lists the dead ones not swept yet)")
			}
			return nil
		}
		fmt.Fprintf(w, "%-16s %-6s %-8s %-4s %-8s %-5s %-16s %-36s %s\n", "AGENT", "CLIENT", "STATE", "LIVE", "PID", "LAST", "EVENT", "SESSION", "WORKTREE")
		for _, s := range listed {
			live := "no"
			if s.Live {
				live = "yes"
			}
			fmt.Fprintf(w, "%-16s %-6s %-8s %-4s %-8d %-5s %-16s %-36s %s\n", clipText(s.Agent, 16), s.Client, s.State, live, s.PID,
				ago(now, s.LastEventAt), s.LastEvent, s.SessionID, s.Worktree)
		}
		return nil
	})
}

// ago is how long before now an RFC 3339 time was, as Ns/m/h/d.
func ago(now time.Time, at string) string {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
