package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/ops"
)

func skeletonCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "skeleton",
		Usage: "scan, reconcile, edit, ratify and show the brain's skeleton (refs/m1nd/store)",
		Description: `The skeleton is the brain's decomposition into system blocks, kept in the
brain store: one commit of refs/m1nd/store per change, store_version + 1 each
time. Read it with plain git:

   git log --oneline refs/m1nd/store
   git show refs/m1nd/store:store.json
   git show refs/m1nd/store:blocks/<block_id>.json

A new brain: scan (which also records each block's baseline), name the blocks
with an edit, then ratify at a terminal. After commits, reconcile notices the
blocks whose files changed.`,
		Subcommands: []*cli.Command{
			skeletonScanCommand(inv),
			skeletonReconcileCommand(inv),
			skeletonShowCommand(inv),
			skeletonEditCommand(inv),
			skeletonRatifyCommand(inv),
		},
	}
}

var expectedVersionFlag = &cli.Int64Flag{Name: "expected-store-version", Value: -1, Usage: "the store version `N` you read; refused store_version_conflict when the store moved"}

// storeWriter opens the store for a writing verb and builds the common
// part of its request: who writes and the version the caller read (the
// current one when --expected-store-version is not given and the verb does
// not require it).
func (inv *invocation) storeWriter(c *cli.Context, versionRequired bool) (*brain.Store, brain.WriteRequest, error) {
	req := brain.WriteRequest{ExpectedStoreVersion: c.Int64("expected-store-version"), Now: inv.now()}
	if req.ExpectedStoreVersion < 0 && versionRequired {
		return nil, req, usagef("missing --expected-store-version: give the store version you read (m1nd status shows it)")
	}
	agent, err := inv.agent(c)
	if err != nil {
		return nil, req, err
	}
	req.Agent = agent
	s, err := inv.store()
	if err != nil {
		return nil, req, err
	}
	if req.ExpectedStoreVersion < 0 {
		if req.ExpectedStoreVersion, _, err = brain.StoreVersion(s.Repo); err != nil {
			return nil, req, err
		}
	}
	return s, req, nil
}

func skeletonScanCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "scan",
		Usage: "propose candidate blocks from the files at HEAD",
		Description: `One candidate block per top-level directory with tracked files, plus one for
the files at the root; ids sb_<repo>_<dir>, heuristic names that the owner
still has to confirm. On a candidate skeleton a scan adds blocks only for new
directories; on a ratified skeleton it writes only a candidate revision and
leaves the ratified blocks alone.`,
		Flags: []cli.Flag{expectedVersionFlag, agentFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			s, req, err := inv.storeWriter(c, false)
			if err != nil {
				return err
			}
			res, err := s.Scan(c.Context, req)
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(res)
			}
			switch {
			case !res.Changed && res.StoreVersion == 0:
				inv.printf("no store written: HEAD has no tracked files to make blocks of\n")
			case !res.Changed:
				inv.printf("store v%d unchanged: the scan found nothing new\n", res.StoreVersion)
			case res.Revision > 0:
				inv.printf("%s\n", res.Subject)
				inv.printf("the skeleton is ratified: its blocks are unchanged; the proposal is candidate revision %d\n", res.Revision)
				for _, id := range res.New {
					inv.printf("  new   %s\n", id)
				}
				for _, id := range res.Gone {
					inv.printf("  gone  %s (no file left at HEAD)\n", id)
				}
			default:
				inv.printf("%s\n", res.Subject)
				for _, id := range res.Added {
					inv.printf("  + %s\n", id)
				}
				inv.printf("next: name the blocks (m1nd skeleton edit), then m1nd skeleton ratify; after commits, m1nd skeleton reconcile\n")
			}
			return nil
		},
	}
}

func skeletonReconcileCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "reconcile",
		Usage: "re-resolve block membership at HEAD; bump the boundary of blocks whose files changed",
		Description: `Each block's membership fingerprint is sha256 of its resolved member paths at
HEAD. When it changed, the block's boundary_version goes up by one and
receipts proved at the old boundary stop counting (the block needs evidence
again). The scan and every membership edit record a block's baseline, so the
first reconcile already compares. Files no block covers, and files several
blocks claim, are listed.`,
		Flags: []cli.Flag{expectedVersionFlag, agentFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			s, req, err := inv.storeWriter(c, false)
			if err != nil {
				return err
			}
			res, err := s.Reconcile(c.Context, req)
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(res)
			}
			if res.Changed {
				inv.printf("%s\n", res.Subject)
			} else {
				inv.printf("store v%d unchanged: every block covers the same files\n", res.StoreVersion)
			}
			for _, id := range res.Baselined {
				inv.printf("  baseline  %s\n", id)
			}
			for _, id := range res.Bumped {
				inv.printf("  bumped    %s (its receipts are stale until re-proved)\n", id)
			}
			printPaths(inv, "unmapped", res.Unmapped, "assign with an assign_unmapped op")
			printPaths(inv, "contested", res.Contested, "settle with a resolve_seam op")
			return nil
		},
	}
}

func printPaths(inv *invocation, label string, paths []string, hint string) {
	if len(paths) == 0 {
		return
	}
	inv.printf("%s (%s):\n", label, hint)
	for i, p := range paths {
		if i == 20 {
			inv.printf("  … and %d more (--json lists all)\n", len(paths)-20)
			break
		}
		inv.printf("  %s\n", p)
	}
}

type skeletonReply struct {
	OK           bool                     `json:"ok"`
	StoreVersion int64                    `json:"store_version"`
	Skeleton     brain.Skeleton           `json:"skeleton"`
	Revision     *brain.CandidateRevision `json:"candidate_revision,omitempty"`
	Blocks       []ops.BlockView          `json:"blocks"`
	Unmapped     []string                 `json:"unmapped"`
	Contested    []string                 `json:"contested"`
}

func skeletonShowCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "show the skeleton: its state, blocks and members, and what no block covers",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			s, snap, err := inv.snapshot()
			if err != nil {
				return err
			}
			layout, err := s.Layout(snap)
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(skeletonReply{OK: true, StoreVersion: snap.StoreVersion, Skeleton: snap.Skeleton, Revision: snap.Revision,
					Blocks: ops.ViewBlocks(snap.Blocks, inv.now()), Unmapped: nonNil(layout.Unmapped), Contested: nonNil(layout.Contested)})
			}
			sk := snap.Skeleton
			inv.printf("skeleton %s  %s  version %d  (store v%d)\n", sk.SkeletonID, sk.State, sk.Version, snap.StoreVersion)
			if r := sk.Ratification; r != nil {
				inv.printf("ratified by %s via %s at %s (store v%d)\n", r.Ratifier, r.RatifiedVia, r.RatifiedAt, r.StoreVersion)
			}
			for _, b := range snap.Blocks {
				naming := ""
				if b.CandidateMeta.NeedsOwnerNaming {
					naming = "  (needs owner naming)"
				}
				inv.printf("\n%s  %q  %s, boundary v%d, contract v%d%s\n", b.BlockID, b.Name, b.State, b.BoundaryVersion, b.ContractVersion, naming)
				if b.Purpose != "" {
					inv.printf("  %s\n", b.Purpose)
				}
				for _, m := range b.Membership {
					inv.printf("  %-9s %s\n", m.Role, m.Path)
				}
				for _, sk := range b.Sockets {
					inv.printf("  socket -> %s\n", sk.To)
				}
			}
			if rev := snap.Revision; rev != nil {
				inv.printf("\ncandidate revision %d (scanned %s): %d new, %d gone\n", rev.Revision, shortHash(rev.Head), len(rev.New), len(rev.Gone))
			}
			inv.printf("\n")
			printPaths(inv, "unmapped", layout.Unmapped, "assign with an assign_unmapped op")
			printPaths(inv, "contested", layout.Contested, "settle with a resolve_seam op")
			return nil
		},
	}
}

func skeletonEditCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "edit",
		Usage:     "apply a candidate_edit batch (a JSON array of ops) to a candidate skeleton",
		ArgsUsage: "OPS.json|-",
		Description: `The batch applies atomically: ops run on a copy in phase order (merges,
member ops, splits, renames); the first failure refuses the whole batch,
naming the op's index, and nothing is written. Ops:

   {"op":"rename","block_id":ID,"name":"…","purpose":"…"}
   {"op":"merge","into":ID,"block_ids":[ID,…]}
   {"op":"split","block_id":ID,"by":{"paths":[["core/*.go"],["core/deep/"]]}}
   {"op":"move_member","path":P,"from":ID,"to":ID}
   {"op":"resolve_seam","path":P,"resolution":"both"|"primary:ID"}
   {"op":"assign_unmapped","path":P,"block_id":ID}

--seat owner stores names verbatim; --seat runner (LLM output) passes every
name and purpose through the o5 sanitizer: one line of plain prose, name at
most 40 characters, purpose at most 120.`,
		Flags: []cli.Flag{
			expectedVersionFlag,
			&cli.StringFlag{Name: "seat", Value: brain.SeatOwner, Usage: "who proposes the edit: owner or runner"},
			agentFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("too many arguments: want one OPS file (or - for stdin)")
			}
			seat := c.String("seat")
			if seat != brain.SeatOwner && seat != brain.SeatRunner {
				return usagef("--seat %q: want owner or runner", seat)
			}
			s, req, err := inv.storeWriter(c, true)
			if err != nil {
				return err
			}
			ops, err := readDocument(c.Args().First(), inv.io.In, "ops", gates.Refusef(gates.CandidateEditRejected, "ops",
				"candidate_edit rejected: the ops file is larger than %d bytes", maxDocumentBytes))
			if err != nil {
				return err
			}
			res, err := s.Edit(c.Context, brain.EditRequest{WriteRequest: req, Seat: seat, Ops: ops})
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(res)
			}
			if !res.Changed {
				inv.printf("store v%d unchanged: the batch restates what the store already says\n", res.StoreVersion)
				return nil
			}
			inv.printf("%s\n", res.Subject)
			for _, id := range res.Blocks {
				inv.printf("  ~ %s\n", id)
			}
			for _, id := range res.Removed {
				inv.printf("  - %s\n", id)
			}
			return nil
		},
	}
}

func skeletonRatifyCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "ratify",
		Usage: "ratify candidate blocks (a human gesture: asks at the terminal)",
		Description: `Makes the candidate blocks (all of them, or those named with --block) the
brain's own. Refused needs_owner_naming while a block still carries its
heuristic name. This is a human gesture: it runs only at an interactive
terminal and asks you to type the skeleton id. Agents never ratify.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "block", Usage: "ratify only block `ID` (repeatable)"},
			expectedVersionFlag, agentFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			s, req, err := inv.storeWriter(c, false)
			if err != nil {
				return err
			}
			origin := ""
			if inv.interactive() {
				// Only a terminal session gets this far; reading the store
				// for the prompt is no check of the gesture.
				snap, ok, err := s.Snapshot()
				if err != nil {
					return err
				}
				if !ok {
					return gates.Refuse(gates.NoStore, "")
				}
				what := "every candidate block"
				if ids := c.StringSlice("block"); len(ids) > 0 {
					what = strings.Join(ids, ", ")
				}
				origin = inv.gesture(fmt.Sprintf("Ratify %s of %s at store v%d?", what, snap.Skeleton.SkeletonID, req.ExpectedStoreVersion), snap.Skeleton.SkeletonID)
			}
			res, err := s.Ratify(c.Context, brain.RatifyRequest{WriteRequest: req, BlockIDs: c.StringSlice("block"), Origin: origin})
			if err != nil {
				return err
			}
			if inv.jsonOut {
				return inv.printJSON(res)
			}
			inv.printf("%s\n", res.Subject)
			inv.printf("ratified %s; the skeleton is %s\n", strings.Join(res.Ratified, ", "), res.SkeletonState)
			return nil
		},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
