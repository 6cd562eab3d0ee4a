package fullcli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/runners"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/session"
)

// sessionsOptions is what sessions runs on.
type sessionsOptions struct {
	IO    *mcli.IOStreams
	JSON  bool
	All   bool
	Repo  func() (*gitstore.Repo, error)
	Flows func() (*ops.Flows, error) // what waits for each agent
}

func newSessionsCmd(inv *mcli.Invocation, runF func(context.Context, *sessionsOptions) error) *cli.Command {
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
records older than a day are swept. Liveness reads /proc (Linux).

Each session also shows what the refresh decider makes of it, read from
the client's own transcript: FILL is the last request's prefix against the
ceiling (3/4 of the model's context window), CACHE how long its prompt
cache stays warm (the last request plus 1 h or 5 min, less a minute), and
DECISION keep, resume_warm or end_and_rehydrate (--json gives the reason
and every input).

When runnerd keeps agents' sessions ([[keeper]] in runners.toml), a second
list shows, from the keeper's journal, each pinned agent's kept session
(stream) or woken one, its state, what the keeper does next (a wake after
its backoff, a tempo turn, the rotation), the items it gave up on and the
last thing to fix (a session that ran none of m1nd's hooks).`,
		Flags: []cli.Flag{
			mcli.JSONFlag,
			&cli.BoolFlag{Name: "all", Usage: "include the dead sessions not swept yet"},
		},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			opts := &sessionsOptions{IO: inv.IO(), JSON: c.Bool("json"), All: c.Bool("all"), Repo: inv.OpenRepo, Flows: inv.Flows}
			return mcli.RunWith(c.Context, opts, runF, runSessions)
		},
	}
}

// sessionsReply is the --json answer.
type sessionsReply struct {
	Sessions []session.View `json:"sessions"`
	// Keeper is what runnerd's keeper holds for each pinned agent, read
	// from its journal.
	Keeper []runners.KeeperAgent `json:"keeper,omitempty"`
	// KeeperProblem is why the keeper's pins could not be read.
	KeeperProblem string `json:"keeper_problem,omitempty"`
	// Runnerd is how the running runnerd contains what it spawns; absent
	// while none runs.
	Runnerd *runs.RunnerdRecord `json:"runnerd,omitempty"`
	// Undeliverable is, per agent, the letters given up after
	// mailbox.MaxAttempts failed turns: unread, and no hook hands them
	// over again.
	Undeliverable []agentUndeliverable `json:"undeliverable,omitempty"`
}

// agentUndeliverable is one agent's letters given up as undeliverable.
type agentUndeliverable struct {
	Agent   string             `json:"agent"`
	Letters []mailbox.InFlight `json:"letters"`
}

// undeliverable lists, per agent, the letters given up as undeliverable;
// a brain that cannot be opened has none to list.
func undeliverable(flows func() (*ops.Flows, error)) []agentUndeliverable {
	b, err := flows()
	if err != nil {
		return nil
	}
	all, err := b.InFlight()
	if err != nil {
		return nil
	}
	var out []agentUndeliverable
	for _, a := range all {
		if len(a.Undeliverable) > 0 {
			out = append(out, agentUndeliverable{Agent: a.Agent, Letters: a.Undeliverable})
		}
	}
	return out
}

// runSessions lists the registry, liveness checked now.
func runSessions(ctx context.Context, opts *sessionsOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	now := opts.IO.Time()
	views, err := session.Views(ctx, repo.RuntimeDir(), opts.Flows, now, opts.All)
	if err != nil {
		return err
	}
	// A runners.toml runnerd would refuse is no reason to hide the
	// sessions: the list says what is wrong with it instead.
	keeper, err := runners.KeeperAgents(repo.RuntimeDir(), now)
	reply := sessionsReply{Sessions: views, Keeper: keeper, Undeliverable: undeliverable(opts.Flows)}
	if err != nil {
		reply.KeeperProblem = rules.OneLine(err.Error())
	}
	if rec, live := runs.ReadRunnerd(repo.RuntimeDir()); live {
		reply.Runnerd = &rec
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		defer printUndeliverable(w, reply.Undeliverable)
		defer printKeeper(w, keeper, reply.KeeperProblem)
		if rec := reply.Runnerd; rec != nil {
			defer fmt.Fprintf(w, "\nrunnerd (pid %d): %s\n", rec.PID, rec.Containment)
		}
		if len(views) == 0 {
			if opts.All {
				fmt.Fprintln(w, "no sessions recorded (m1nd hook install claude|codex wires them in)")
			} else {
				fmt.Fprintln(w, "no live sessions (--all lists the dead ones not swept yet)")
			}
			return nil
		}
		fmt.Fprintf(w, "%-16s %-6s %-8s %-4s %-8s %-5s %-16s %-5s %-6s %-17s %-36s %s\n", "AGENT", "CLIENT", "STATE", "LIVE", "PID", "LAST", "EVENT", "FILL", "CACHE", "DECISION", "SESSION", "WORKTREE")
		for _, v := range reply.Sessions {
			live := "no"
			if v.Live {
				live = "yes"
			}
			fill, cache := "-", "-"
			if v.Refresh.Inputs.Requests > 0 {
				fill = fmt.Sprintf("%.0f%%", 100*v.Refresh.Fill())
				cache = "cold"
				if left := v.Refresh.CacheDeadline.Sub(now); left > 0 {
					cache = shortDuration(left)
				}
			}
			fmt.Fprintf(w, "%-16s %-6s %-8s %-4s %-8d %-5s %-16s %-5s %-6s %-17s %-36s %s\n", mcli.ClipText(v.Agent, 16), v.Client, v.State, live, v.PID,
				ago(now, v.LastEventAt), v.LastEvent, fill, cache, v.Refresh.Action, v.SessionID, v.Worktree)
		}
		return nil
	})
}

// printKeeper prints what the keeper holds for each pinned agent, and
// what it does next.
func printKeeper(w io.Writer, keeper []runners.KeeperAgent, problem string) {
	if problem != "" {
		fmt.Fprintf(w, "\nkeeper: %s\n", problem)
	}
	if len(keeper) == 0 {
		return
	}
	fmt.Fprintln(w, "\nkeeper (runnerd's [[keeper]] pins, from its journal):")
	for _, a := range keeper {
		id := a.SessionID
		if id == "" {
			id = "-"
		}
		fmt.Fprintf(w, "  %-16s %-6s %-6s %-8s %-36s next: %s\n", mcli.ClipText(a.Agent, 16), a.Client, a.Mode, a.State, id, a.Next)
		if a.Spent != nil {
			fmt.Fprintf(w, "  spent (the client's report): %s\n", a.Spent)
		}
		if len(a.GaveUp) > 0 {
			fmt.Fprintf(w, "  ! gave up waking %s for %s (m1nd mail inbox --agent %s reads them)\n", a.Agent, strings.Join(a.GaveUp, ", "), a.Agent)
		}
		if a.Note != "" {
			fmt.Fprintf(w, "  ! %s\n", a.Note)
		}
	}
}

// printUndeliverable names the letters given up as undeliverable, with
// why and what the human or the sender can do.
func printUndeliverable(w io.Writer, agents []agentUndeliverable) {
	for _, a := range agents {
		for _, f := range a.Letters {
			fmt.Fprintf(w, "! letter %s to %s is undeliverable: %s (m1nd mail show %s reads it; m1nd mail inbox --agent %s --mark-read settles it)\n", f.ID, a.Agent, f.Reason, f.ID, a.Agent)
		}
	}
}

// ago is how long before now an RFC 3339 time was, as Ns/m/h/d.
func ago(now time.Time, at string) string {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return "?"
	}
	return shortDuration(now.Sub(t))
}

// shortDuration is d as Ns, Nm, Nh or Nd.
func shortDuration(d time.Duration) string {
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
