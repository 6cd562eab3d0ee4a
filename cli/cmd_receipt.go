package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

func receiptCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:        "receipt",
		Usage:       "import receipts into the brain store",
		Subcommands: []*cli.Command{newReceiptImportCmd(inv, nil)},
	}
}

// receiptImportOptions is what receipt import runs on.
type receiptImportOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Store func() (*ops.Flows, error)
	// ExpectedStoreVersion is the store version the caller read.
	ExpectedStoreVersion int64
	Block                string
	Receipt              string // a FILE (stdin is the terminal that confirms)
}

func newReceiptImportCmd(inv *Invocation, runF func(context.Context, *receiptImportOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "import a receipt into a block (a human gesture: asks at the terminal)",
		ArgsUsage: "RECEIPT.json",
		Description: `A receipt is evidence about one block:

   {"block_id":ID,"type":"test","emitter":{"kind":"verb","id":"…"},
    "scope":{"block_id":ID,"boundary_version":N,"contract_version":N},
    "evidence":{"artifact_hash":"sha256:…","evidence_refs":["…"],
                "command":"go test ./...","cwd":".","exit_status":0,
                "started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}

Checked in order: the store version you read, the block exists, the scope is
the block's current boundary and contract (else stale_scope), the evidence
contract of the type (every type: artifact_hash and evidence_refs; test also
command, cwd, exit_status and its window), and the window: UTC spelled as
above, started before ended, nothing in the future, at most 24 hours. The
receipt is kept exactly as written. Importing is a human gesture: it runs
only at an interactive terminal, asks you to type the block id, and only
while the brain has no registered passkey (then import in the tray).`,
		Flags: []cli.Flag{
			expectedVersionFlag,
			&cli.StringFlag{Name: "block", Usage: "the block `ID` the receipt proves (required)"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			path, err := OneArg(c, "receipt file")
			if err != nil {
				return err
			}
			if path == "-" {
				return Usagef("the receipt comes from a file: stdin is the terminal that confirms the import")
			}
			block := c.String("block")
			if block == "" {
				return Usagef("missing --block: name the block the receipt proves")
			}
			expected, err := expectedVersion(c, true)
			if err != nil {
				return err
			}
			opts := &receiptImportOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Store: inv.Flows,
				ExpectedStoreVersion: expected, Block: block, Receipt: path}
			return RunWith(c.Context, opts, runF, runReceiptImport)
		},
	}
}

// runReceiptImport asks for the gesture at the terminal and imports the
// receipt; without the gesture the store refuses it.
func runReceiptImport(ctx context.Context, opts *receiptImportOptions) error {
	s, req, err := openStoreWrite(opts.IO, opts.Agent, opts.Store, opts.ExpectedStoreVersion)
	if err != nil {
		return err
	}
	body, err := readDocument(opts.Receipt, nil, "receipt", rules.Refusef(rules.IncompleteEvidence, "receipt",
		"the receipt is larger than %d bytes", maxDocumentBytes))
	if err != nil {
		return err
	}
	block := opts.Block
	if err := s.CheckSound(ctx, brain.StoreRef); err != nil {
		return err
	}
	origin, err := opts.IO.Gesture(s.TerminalGesture, rules.GestureReceiptImport, fmt.Sprintf("Import the receipt in %s into %s at store v%d?", opts.Receipt, block, req.ExpectedStoreVersion), "block id", block)
	if err != nil {
		return err
	}
	res, err := s.ImportReceipt(ctx, brain.ImportRequest{WriteRequest: req, BlockID: block, Receipt: body, Origin: origin})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		fmt.Fprintf(w, "store v%d: receipt imported into %s (%s)\n", res.StoreVersion, res.BlockID, rules.Count(res.ReceiptCount, "receipt"))
		return nil
	})
}
