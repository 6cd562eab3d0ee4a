package cli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
)

// blockView is one block as `m1nd blocks` shows it.
type blockView struct {
	BlockID          string       `json:"block_id"`
	Name             string       `json:"name"`
	Purpose          string       `json:"purpose"`
	Kind             string       `json:"kind"`
	State            string       `json:"state"`
	BoundaryVersion  int64        `json:"boundary_version"`
	ContractVersion  int64        `json:"contract_version"`
	Required         []string     `json:"required"`
	Receipts         int          `json:"receipts"`
	NeedsOwnerNaming bool         `json:"needs_owner_naming"`
	Colour           brain.Colour `json:"colour"`
	Why              string       `json:"why"`
}

type blocksReply struct {
	OK           bool        `json:"ok"`
	StoreVersion int64       `json:"store_version"`
	SkeletonID   string      `json:"skeleton_id"`
	Blocks       []blockView `json:"blocks"`
}

func blocksCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "blocks",
		Usage: "list the brain's blocks with their colour and why",
		Description: `A block's colour comes from its receipts only, in this order: the newest
receipt of some type failed → broken; its contract requires no receipt type →
unknown; every required type has a fresh receipt at the block's current
boundary and contract → evidence-backed; otherwise → needs-evidence.
Mission letters never change a colour; a receipt import does.`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			_, snap, err := inv.snapshot()
			if err != nil {
				return err
			}
			reply := blocksReply{OK: true, StoreVersion: snap.StoreVersion, SkeletonID: snap.Skeleton.SkeletonID, Blocks: []blockView{}}
			now := time.Now()
			for _, b := range snap.Blocks {
				paint := b.Colour(now)
				reply.Blocks = append(reply.Blocks, blockView{
					BlockID: b.BlockID, Name: b.Name, Purpose: b.Purpose, Kind: b.Kind, State: b.State,
					BoundaryVersion: b.BoundaryVersion, ContractVersion: b.ContractVersion,
					Required: nonNil(b.ReceiptContract.Required), Receipts: len(b.Receipts),
					NeedsOwnerNaming: b.CandidateMeta.NeedsOwnerNaming, Colour: paint.Colour, Why: paint.Why,
				})
			}
			if inv.jsonOut {
				return inv.printJSON(reply)
			}
			inv.printf("store v%d, skeleton %s %s\n", snap.StoreVersion, snap.Skeleton.SkeletonID, snap.Skeleton.State)
			for _, b := range reply.Blocks {
				inv.printf("%-16s %-28s %-20s boundary v%d  %s\n", b.Colour, b.BlockID, clipText(b.Name, 20), b.BoundaryVersion, b.Why)
			}
			return nil
		},
	}
}

// clipText shortens s to n characters for a table column.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
