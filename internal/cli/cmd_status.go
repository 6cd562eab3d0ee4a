package cli

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
)

func statusCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the brain, its store version, mission heads per phase and the landing bell",
		Description: `The landing bell counts missions whose head is merge_wait: work whose gate is
green and waits for a human to land its receipt. In --json it appears as
"landing_bell":{"merge_wait":N} only when N > 0.`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return printStatus(c.Context, inv)
		},
	}
}

// printStatus prints the status of the repository the invocation names,
// as JSON when the verb was asked for --json.
func printStatus(ctx context.Context, inv *invocation) error {
	flows, err := inv.flows()
	if err != nil {
		return err
	}
	reply, err := flows.Status(ctx, inv.now())
	if err != nil {
		return err
	}
	if inv.jsonOut {
		return inv.printJSON(reply)
	}
	inv.printf("brain    %s\n", reply.Brain)
	if !reply.HasStore() {
		inv.printf("store    none yet (m1nd skeleton scan creates it)\n")
	} else {
		inv.printf("store    version %d, skeleton %s %s\n", reply.StoreVersion, reply.Skeleton.SkeletonID, reply.Skeleton.State)
		inv.printf("blocks   %d\n", reply.BlockCount())
		for _, colour := range brain.Colours {
			if n := reply.Blocks[string(colour)]; n > 0 {
				inv.printf("  %-16s %d\n", colour, n)
			}
		}
	}
	inv.printf("missions %d\n", reply.Missions)
	for _, phase := range chain.Phases {
		if n := reply.Phases[phase]; n > 0 {
			inv.printf("  %-16s %d\n", phase, n)
		}
	}
	if reply.LandingBell != nil {
		inv.printf("landing bell: %s waiting in merge_wait (gate green, receipt not landed)\n", gates.Count(reply.LandingBell.MergeWait, "mission"))
	}
	return nil
}
