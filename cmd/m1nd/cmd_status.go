package main

import (
	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
)

type statusReply struct {
	OK           bool           `json:"ok"`
	Brain        string         `json:"brain"`
	StoreVersion int64          `json:"store_version"`
	Missions     int            `json:"missions"`
	Phases       map[string]int `json:"phases"`
	LandingBell  *landingBell   `json:"landing_bell,omitempty"`
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
			return printStatus(inv, c.Bool("json"))
		},
	}
}

// printStatus prints the status of the repository the invocation names.
func printStatus(inv *invocation, asJSON bool) error {
	inv.jsonOut = asJSON
	m, err := inv.missions()
	if err != nil {
		return err
	}
	version, _, err := brain.StoreVersion(m.Repo)
	if err != nil {
		return err
	}
	heads, err := m.Heads("")
	if err != nil {
		return err
	}
	reply := statusReply{OK: true, Brain: m.Brain, StoreVersion: version, Missions: len(heads.Missions), Phases: chain.PhaseCounts(heads.Missions)}
	if n := chain.LandingBell(heads.Missions); n > 0 {
		reply.LandingBell = &landingBell{MergeWait: n}
	}
	if asJSON {
		return inv.printJSON(reply)
	}
	inv.printf("brain    %s\n", reply.Brain)
	if version == 0 {
		inv.printf("store    none yet\n")
	} else {
		inv.printf("store    version %d\n", version)
	}
	inv.printf("missions %d\n", reply.Missions)
	for _, phase := range chain.Phases {
		if n := reply.Phases[phase]; n > 0 {
			inv.printf("  %-10s %d\n", phase, n)
		}
	}
	if reply.LandingBell != nil {
		inv.printf("landing bell: %s waiting in merge_wait (gate green, receipt not landed)\n", plural(reply.LandingBell.MergeWait, "mission"))
	}
	return nil
}
