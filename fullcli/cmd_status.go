package fullcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/session/hostconfig"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitsync"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// statusOptions is what status runs on.
type statusOptions struct {
	IO    *mcli.IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
}

func newStatusCmd(inv *mcli.Invocation, runF func(context.Context, *statusOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the brain, its store version, mission heads per phase and the landing bell",
		Description: `The landing bell counts missions whose head is merge_wait: work whose gate is
green and waits for a human to land its receipt, and of those the ones ready
to land now (their gate tested exactly what the landing puts on the target;
m1nd mission show says where each other one stands). In --json it appears as
"landing_bell":{"merge_wait":N,"ready":R} only when N > 0.`,
		Flags:  []cli.Flag{mcli.JSONFlag},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			opts := &statusOptions{IO: inv.IO(), JSON: c.Bool("json"), Flows: inv.Flows}
			return mcli.RunWith(c.Context, opts, runF, runStatus)
		},
	}
}

// runStatus prints the brain's status, as JSON when asked.
func runStatus(ctx context.Context, opts *statusOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	st, err := flows.Status(ctx, opts.IO.Time())
	if err != nil {
		return err
	}
	held, err := gitsync.HeldBack(flows.RuntimeDir())
	if err != nil {
		return err
	}
	reply := statusReply{Status: st, SyncHeld: held, Registrations: hostconfig.Registrations(flows.WorkTree())}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "brain    %s\n", reply.Brain)
		if !reply.HasStore() {
			fmt.Fprintf(w, "store    none yet (m1nd skeleton scan creates it)\n")
		} else {
			fmt.Fprintf(w, "store    version %d, skeleton %s %s\n", reply.StoreVersion, reply.Skeleton.SkeletonID, reply.Skeleton.State)
			fmt.Fprintf(w, "blocks   %d\n", reply.BlockCount())
			for _, colour := range brain.Colours {
				if n := reply.Blocks[string(colour)]; n > 0 {
					fmt.Fprintf(w, "  %-16s %d\n", colour, n)
				}
			}
		}
		fmt.Fprintf(w, "missions %d\n", reply.Missions)
		for _, phase := range chain.Phases {
			if n := reply.Phases[phase]; n > 0 {
				fmt.Fprintf(w, "  %-16s %d\n", phase, n)
			}
		}
		if n := reply.Phases[chain.BrokenPhase]; n > 0 {
			fmt.Fprintf(w, "  %-16s %d (below: BROKEN)\n", chain.BrokenPhase, n)
		}
		if reply.LandingBell != nil {
			bell := reply.LandingBell
			claimed := ""
			if bell.Claimed > 0 {
				claimed = fmt.Sprintf(", %d an agent's claim no approved runner proved yet", bell.Claimed)
			}
			fmt.Fprintf(w, "landing bell: %s waiting in merge_wait (receipt not landed), %d ready to land%s\n", rules.Count(bell.MergeWait, "mission"), bell.Ready, claimed)
		}
		for _, p := range reply.Parked {
			fmt.Fprintf(w, "parked   %s: %s\n", p.Ref, p.Lesson)
		}
		for _, f := range reply.Broken {
			fmt.Fprintf(w, "BROKEN   %s — its history breaks the laws: nothing proceeds on it (m1nd verify)\n", f.Error())
		}
		printHeld(w, reply.SyncHeld)
		printUnfound(w, reply.Registrations)
		return nil
	})
}

// statusReply is the status, with what the last syncs held back.
type statusReply struct {
	*ops.Status
	// SyncHeld lists the refs the last sync with each remote did not
	// carry, until a sync finds them resolved.
	SyncHeld []gitsync.HeldRef `json:"sync_held,omitempty"`
	// Registrations are the hosts' hooks and MCP servers that run m1nd
	// (this project's and the user's), each with the m1nd it finds.
	Registrations []hostconfig.Registration `json:"registrations,omitempty"`
}

// printUnfound names every registration whose m1nd cannot be found: each
// of its hook calls fails, and the agent's session runs without m1nd.
func printUnfound(w io.Writer, regs []hostconfig.Registration) {
	for _, r := range regs {
		if r.Found != "" {
			continue
		}
		what := "hooks run"
		if r.Kind == hostconfig.KindMCP {
			what = "MCP server runs"
		}
		where := "which is not there"
		if !strings.Contains(r.Command, "/") {
			where = "not found on PATH"
		}
		fmt.Fprintf(w, "MISSING  %s: its %s %s %s, %s: install m1nd (README: Install), or run m1nd hook install %s again\n", r.Path, r.Host, what, r.Command, where, r.Host)
	}
}

// printHeld lists what sync holds back, each with why and what to do.
func printHeld(w io.Writer, held []gitsync.HeldRef) {
	for _, h := range held {
		switch h.Side {
		case "remote":
			repair := fmt.Sprintf("; m1nd sync --repair %s replaces it with this clone's", h.Ref)
			if h.Ref == brain.KeysRef {
				repair = "" // a remote's keys are never replaced by a push
			}
			fmt.Fprintf(w, "held     %s: %s's is not taken, and not pushed over (%s: %s)%s\n", h.Ref, h.Remote, h.Code, h.Lesson, repair)
		default:
			fmt.Fprintf(w, "held     %s: this clone's history breaks the laws, not pushed to %s (%s: %s)\n", h.Ref, h.Remote, h.Code, h.Lesson)
		}
	}
}
