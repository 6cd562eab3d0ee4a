package cli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
)

type statusReply struct {
	OK           bool           `json:"ok"`
	Brain        string         `json:"brain"`
	StoreVersion int64          `json:"store_version"`
	Skeleton     *skeletonState `json:"skeleton,omitempty"`
	Blocks       map[string]int `json:"blocks"`
	Missions     int            `json:"missions"`
	Phases       map[string]int `json:"phases"`
	LandingBell  *landingBell   `json:"landing_bell,omitempty"`
}

type skeletonState struct {
	SkeletonID string `json:"skeleton_id"`
	State      string `json:"state"`
}

type landingBell struct {
	MergeWait int `json:"merge_wait"`
}

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
			return printStatus(inv)
		},
	}
}

// printStatus prints the status of the repository the invocation names,
// as JSON when the verb was asked for --json.
func printStatus(inv *invocation) error {
	m, err := inv.missions()
	if err != nil {
		return err
	}
	s, err := inv.store()
	if err != nil {
		return err
	}
	snap, hasStore, err := s.Snapshot()
	if err != nil {
		return err
	}
	heads, err := m.Heads("")
	if err != nil {
		return err
	}
	reply := statusReply{OK: true, Brain: m.Brain, Blocks: map[string]int{}, Missions: len(heads.Missions), Phases: chain.PhaseCounts(heads.Missions)}
	if hasStore {
		reply.StoreVersion = snap.StoreVersion
		reply.Skeleton = &skeletonState{SkeletonID: snap.Skeleton.SkeletonID, State: snap.Skeleton.State}
		now := time.Now()
		for _, b := range snap.Blocks {
			reply.Blocks[string(b.Colour(now).Colour)]++
		}
	}
	if n := chain.LandingBell(heads.Missions); n > 0 {
		reply.LandingBell = &landingBell{MergeWait: n}
	}
	if inv.jsonOut {
		return inv.printJSON(reply)
	}
	inv.printf("brain    %s\n", reply.Brain)
	if !hasStore {
		inv.printf("store    none yet (m1nd skeleton scan creates it)\n")
	} else {
		inv.printf("store    version %d, skeleton %s %s\n", reply.StoreVersion, snap.Skeleton.SkeletonID, snap.Skeleton.State)
		inv.printf("blocks   %d\n", len(snap.Blocks))
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
