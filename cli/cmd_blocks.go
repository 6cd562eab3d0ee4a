package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// blocksOptions is what blocks runs on.
type blocksOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
}

// newBlocksCmd parses blocks; a test's runF sees the options instead of
// running it.
func newBlocksCmd(inv *Invocation, runF func(context.Context, *blocksOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "blocks",
		Usage: "list the brain's blocks with their colour and why",
		Description: `A block's colour comes from its receipts only, in this order: the newest
receipt of some type failed → broken; its contract requires no receipt type →
unknown; every required type has a fresh receipt at the block's current
boundary and contract → evidence-backed; otherwise → needs-evidence.
Mission letters never change a colour; a receipt import does.`,
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &blocksOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows}, runF, runBlocks)
		},
	}
}

// runBlocks lists the blocks with their colour; a brain with no store is
// refused no_store, unless its history is broken, which it says instead.
func runBlocks(ctx context.Context, opts *blocksOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	reply, err := flows.Blocks(ctx, opts.IO.Time())
	if err != nil {
		return err
	}
	if !reply.HasStore() && reply.Broken == nil {
		return rules.Refuse(rules.NoStore, "")
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		if brk := reply.Broken; brk != nil {
			fmt.Fprintf(w, "BROKEN   %s (store v%d): %s: %s\n", brk.Error(), brk.HeadVersion, brk.Code, "the store's history breaks the laws; nothing lands on it until it is put right (m1nd verify)")
			if !reply.HasStore() {
				fmt.Fprintf(w, "no version of the store keeps the laws: no blocks to show\n")
				return nil
			}
			fmt.Fprintf(w, "shown as store v%d, the last version the laws accept\n", brk.LawfulVersion)
		}
		fmt.Fprintf(w, "store v%d, skeleton %s %s\n", reply.StoreVersion, reply.Skeleton.SkeletonID, reply.Skeleton.State)
		for _, b := range reply.Blocks {
			origin := ""
			switch b.ReceiptOrigin {
			case "passkey":
				origin = " · imported with a passkey"
			case "terminal":
				origin = " · imported at a terminal"
			case "tray claim":
				origin = " · imported by an unsigned tray claim"
			}
			fmt.Fprintf(w, "%s %-28s %-20s boundary v%d  %s%s\n", paint(opts.IO.colorOut, colourStyle(string(b.Colour)), string(b.Colour), 16), b.BlockID, ClipText(b.Name, 20), b.BoundaryVersion, b.Why, origin)
			if n := len(b.Tested); n > 0 {
				if line := testedLine(b.Tested[n-1]); line != "" {
					fmt.Fprintf(w, "%-16s %s\n", "", line)
				}
			}
		}
		return nil
	})
}

// testedLine says what a block's newest receipt tested and how much of
// the block moved on its target since; "" when the receipt names no
// tested commit.
func testedLine(t ops.ReceiptTested) string {
	if t.Commit == "" {
		return ""
	}
	line := "tested " + shortHash(t.Commit)
	switch {
	case t.ChangedSince == nil:
		line += " (not in this clone: changes since unknown)"
	case *t.ChangedSince == 0:
		line += " · none of the block's files changed on the target since"
	case *t.ChangedSince == 1:
		line += " · 1 of the block's files changed on the target since"
	default:
		line += fmt.Sprintf(" · %d of the block's files changed on the target since", *t.ChangedSince)
	}
	return line
}

// ClipText shortens s to n characters for a table column.
func ClipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
