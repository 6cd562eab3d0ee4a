package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// landOptions is what land runs on.
type landOptions struct {
	IO        *IOStreams
	JSON      bool
	Agent     func() (string, error)
	Flows     func() (*ops.Flows, error)
	MissionID string
	Into      string
}

func newLandCmd(inv *Invocation, runF func(context.Context, *landOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "land",
		Usage:     "land a merge_wait mission: import its receipt and merge its branch (a human gesture)",
		ArgsUsage: "MISSION_ID",
		Description: `Landing is one human gesture: the mission's receipt candidate is imported
into the store, its work branch m1nd/<mission_id> is merged into the branch
its worktree was cut from (or --into BRANCH), and the landed letter is posted.
The import names the mission, its merge_wait letter, the target and the exact
commits the prompt shows (the branch's head, the target's head, the tree the
target will hold); the confirmation binds all of them, and the landed letter
names that import. Another mission's import of the same candidate lands
nothing here.

The merge touches no working tree: a fast-forward when the target has not
moved, else a merge commit naming the mission and the receipt. Where the
target is checked out (your main worktree, usually), that worktree is
fast-forwarded, and only when it has no uncommitted changes. A conflict is
refused merge_conflict with the paths, a dirty worktree worktree_dirty; both
write nothing and the mission stays in merge_wait.

Each step is one compare-and-swap: if a landing is cut short, run it again
and it finishes what is left, as its import recorded it, without asking
again — for this mission only, and only while the target is where the
import saw it. At a terminal it asks you to type the block id, while the
brain has no registered passkey (then land in the tray). A mission or store
whose history breaks the laws is refused broken_history. Read the work
first: m1nd mission diff, m1nd mission gate.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "into", Usage: "merge into `BRANCH` instead of the branch recorded at spawn"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			opts := &landOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Flows: inv.Flows, MissionID: id, Into: c.String("into")}
			return RunWith(c.Context, opts, runF, runLand)
		},
	}
}

// runLand checks the landing (dry), asks for the gesture when the import
// is still to be made, and lands.
func runLand(ctx context.Context, opts *landOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	plan, err := b.PlanLanding(ctx, opts.MissionID, opts.Into)
	if _, claimed := ops.AsClaimedGate(err); claimed {
		return askProof(ctx, opts, b)
	}
	if err != nil {
		return err
	}
	origin := ""
	if !plan.AlreadyLanded && !plan.Resume {
		// The prompt says what the confirmation binds: the exact commits
		// and the store version, which the import records as shown.
		next, _, err := b.StoreVersion()
		if err != nil {
			return err
		}
		origin, err = opts.IO.Gesture(b.TerminalGesture, rules.GestureLand,
			fmt.Sprintf("Land %s?\nThis binds %s.", plan.MissionID, plan.Binds(next+1)), "block id", plan.BlockID)
		if err != nil {
			return err
		}
	}
	res, err := b.LandPlanned(ctx, plan, agent, origin, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		if res.AlreadyLanded {
			fmt.Fprintf(w, "%s is already landed (receipt in store v%d)\n", res.MissionID, res.StoreVersion)
			return nil
		}
		how := map[bool]string{true: "imported into", false: "already in"}[res.Imported]
		fmt.Fprintf(w, "landed %s: receipt %s %s at store v%d\n", res.MissionID, how, res.BlockID, res.StoreVersion)
		switch res.Merge {
		case ops.MergeNoBranch:
			fmt.Fprintf(w, "no branch %s here: nothing to merge\n", ops.WorkBranch(res.MissionID))
		case ops.MergeUpToDate:
			fmt.Fprintf(w, "%s already holds %s\n", res.Target, res.Branch)
		default:
			where := ""
			if res.Worktree {
				where = " (its worktree updated)"
			}
			fmt.Fprintf(w, "%s %s into %s: %s is now %.12s%s\n", res.Merge, res.Branch, res.Target, res.Target, res.Commit, where)
		}
		return nil
	})
}

// askProof is land's answer to a claim: runnerd is asked to run an
// approved runner's gate on exactly the claimed tree, and the human lands
// again once it is proven; with no runner to prove it, refused.
func askProof(ctx context.Context, opts *landOptions, b *ops.Flows) error {
	req, err := b.RequestProof(ctx, opts.MissionID, opts.Into, opts.IO.Time())
	if err != nil {
		return err
	}
	reply := struct {
		ID        string            `json:"id"`
		MissionID string            `json:"mission_id"`
		Landed    bool              `json:"landed"`
		Proving   *ops.ProofRequest `json:"proving"`
	}{req.MissionID, req.MissionID, false, req}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "not landed: %s's gate is %s\n", req.MissionID, req.Claim)
		asked := "asked runnerd to run"
		if req.Already {
			asked = "runnerd was already asked to run"
		}
		fmt.Fprintf(w, "%s runner %s's approved gate (%s) on exactly commit %.12s, tree %.12s\n", asked, req.Runner, req.Gate, req.Commit, req.Tree)
		fmt.Fprintf(w, "land again once it is proven: m1nd mission show %s says where it stands\n", req.MissionID)
		return nil
	})
}

// newMissionGateCmd parses mission gate; a test's runF sees the options
// instead of running it.
func newMissionGateCmd(inv *Invocation, runF func(context.Context, *runLogOptions) error) *cli.Command {
	return newRunLogCmd(inv, "gate", runs.LogGate, "print the output of a mission's gate, as the runner kept it",
		`Prints the gate command's output from the run's log on this machine, control
characters made visible and the machine's paths spelled <worktree>, <repo>
and ~. The letters carry only the log's hash (gate.artifact_hash). With
--regate, the output of the queue's gate on the merge with the target.`, runF)
}

// newMissionOutputCmd parses mission output; a test's runF sees the
// options instead of running it.
func newMissionOutputCmd(inv *Invocation, runF func(context.Context, *runLogOptions) error) *cli.Command {
	return newRunLogCmd(inv, "output", runs.LogAgent, "print the agent's own output, as the runner kept it",
		`Prints what the mission's agent wrote while it worked, from the run's log on
this machine: control characters made visible and the machine's paths
spelled <worktree>, <repo> and ~. Only the machine whose runner ran the
mission keeps it; no ref carries it.`, runF)
}

// runLogOptions is what mission gate and mission output run on.
type runLogOptions struct {
	IO        *IOStreams
	JSON      bool
	Flows     func() (*ops.Flows, error)
	MissionID string
	Log       string // the run log printed: runs.LogGate, runs.LogRegate or runs.LogAgent
}

// newRunLogCmd is a verb that prints one of a mission's run logs whole.
func newRunLogCmd(inv *Invocation, name, log, usage, description string, runF func(context.Context, *runLogOptions) error) *cli.Command {
	flags := []cli.Flag{JSONFlag}
	if log == runs.LogGate {
		flags = append(flags, &cli.BoolFlag{Name: "regate", Usage: "the queue's gate on the merge with the target, not the gate on the work"})
	}
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		ArgsUsage:   "MISSION_ID",
		Description: description,
		Flags:       flags,
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			which := log
			if c.Bool("regate") {
				which = runs.LogRegate
			}
			return RunWith(c.Context, &runLogOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, MissionID: id, Log: which}, runF, runRunLog)
		},
	}
}

// runRunLog prints the run log of a mission the brain has; the gate's
// reply also names the command and its exit status.
func runRunLog(_ context.Context, opts *runLogOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	id, which := opts.MissionID, opts.Log
	head, err := b.Current(id)
	if err != nil {
		return err
	}
	out, truncated, err := b.Output(id, which, 16<<20)
	if err != nil {
		return fmt.Errorf("mission %s: %w", id, err)
	}
	reply := struct {
		ID         string `json:"id"`
		MissionID  string `json:"mission_id"`
		Log        string `json:"log"`
		Command    string `json:"command,omitempty"`
		ExitStatus *int64 `json:"exit_status,omitempty"`
		ops.RunOutput
	}{ID: id, MissionID: id, Log: which, RunOutput: ops.RunOutput{Output: out, Truncated: truncated}}
	if g := head.Letter.Gate; g != nil && which == runs.LogGate {
		reply.Command, reply.ExitStatus = g.Command, g.ExitStatus
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		if truncated {
			fmt.Fprintln(w, "[… the start of the output is cut …]")
		}
		fmt.Fprint(w, out)
		if out != "" && !strings.HasSuffix(out, "\n") {
			fmt.Fprintln(w)
		}
		if out == "" {
			// Said aside, so that stdout stays exactly the log.
			fmt.Fprintf(opts.IO.Err, "m1nd: %s of %s printed nothing%s\n", logName(which), id, exitNote(reply.ExitStatus))
		}
		return nil
	})
}

// logName says whose output a run log is.
func logName(log string) string {
	switch log {
	case runs.LogGate:
		return "the gate"
	case runs.LogRegate:
		return "the queue's gate on the merge"
	}
	return "the agent"
}

// exitNote is ", and exited N" when the exit status is known.
func exitNote(exit *int64) string {
	if exit == nil {
		return ""
	}
	return fmt.Sprintf(", and exited %d", *exit)
}

// missionDiffOptions is what mission diff runs on.
type missionDiffOptions struct {
	IO        *IOStreams
	JSON      bool
	Flows     func() (*ops.Flows, error)
	MissionID string
	Stat      bool // the diffstat only
}

// newMissionDiffCmd parses mission diff; a test's runF sees the options
// instead of running it.
func newMissionDiffCmd(inv *Invocation, runF func(context.Context, *missionDiffOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "print a mission's work: the diff of m1nd/<mission_id> since its base",
		ArgsUsage: "MISSION_ID",
		Description: `Prints git's own diff of the mission's branch against the commit its worktree
started from, so it pipes into a pager or a viewer:

   m1nd mission diff ID | less
   m1nd mission diff ID | delta

--json replies {mission_id, branch, base, tip, stat, diff}: the commits
compared and git's text.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "stat", Usage: "print the diffstat only"}, JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			return RunWith(c.Context, &missionDiffOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, MissionID: id, Stat: c.Bool("stat")}, runF, runMissionDiff)
		},
	}
}

// runMissionDiff writes git's diff of the mission's work to stdout, for
// a pager; a mission the brain lacks is refused before git runs.
func runMissionDiff(ctx context.Context, opts *missionDiffOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	if _, err := b.Current(opts.MissionID); err != nil {
		return err
	}
	if !opts.JSON {
		_, _, err := b.Diff(ctx, opts.MissionID, opts.IO.Out, opts.Stat)
		return err
	}
	var diff strings.Builder
	base, tip, err := b.Diff(ctx, opts.MissionID, &diff, opts.Stat)
	if err != nil {
		return err
	}
	reply := struct {
		ID        string `json:"id"`
		MissionID string `json:"mission_id"`
		Branch    string `json:"branch"`
		Base      string `json:"base"`
		Tip       string `json:"tip"`
		Stat      bool   `json:"stat,omitempty"`
		Diff      string `json:"diff"`
	}{opts.MissionID, opts.MissionID, ops.WorkBranch(opts.MissionID), base, tip, opts.Stat, diff.String()}
	return opts.IO.Reply(true, reply, nil)
}
