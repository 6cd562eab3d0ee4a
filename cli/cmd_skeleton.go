package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

func skeletonCommand(inv *Invocation) *cli.Command {
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
			newSkeletonScanCmd(inv, nil),
			newSkeletonReconcileCmd(inv, nil),
			newSkeletonShowCmd(inv, nil),
			newSkeletonEditCmd(inv, nil),
			newSkeletonRatifyCmd(inv, nil),
		},
	}
}

var expectedVersionFlag = &cli.Int64Flag{Name: "expected-store-version", Value: -1, Usage: "the store version `N` you read; refused store_version_conflict when the store moved"}

// expectedVersion reads --expected-store-version (-1 when not given).
func expectedVersion(c *cli.Context, required bool) (int64, error) {
	v := c.Int64("expected-store-version")
	if v < 0 && required {
		return v, Usagef("missing --expected-store-version: give the store version you read (m1nd status shows it)")
	}
	return v, nil
}

// openStoreWrite opens the store for a writing verb and builds the common
// part of its request: who writes and the version the caller read (the
// current one when expected is negative).
func openStoreWrite(streams *IOStreams, agentOf func() (string, error), open func() (*ops.Flows, error), expected int64) (*ops.Flows, brain.WriteRequest, error) {
	req := brain.WriteRequest{ExpectedStoreVersion: expected, Now: streams.Time()}
	agent, err := agentOf()
	if err != nil {
		return nil, req, err
	}
	req.Agent = agent
	s, err := open()
	if err != nil {
		return nil, req, err
	}
	if req.ExpectedStoreVersion < 0 {
		if req.ExpectedStoreVersion, _, err = s.StoreVersion(); err != nil {
			return nil, req, err
		}
	}
	return s, req, nil
}

// storeWriteOptions is what skeleton scan and skeleton reconcile run
// on: a store write as the acting agent, at the version the caller read.
type storeWriteOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Store func() (*ops.Flows, error)
	// ExpectedStoreVersion is the store version the caller read; negative
	// for the current one.
	ExpectedStoreVersion int64
}

// newStoreWriteOptions reads a store write's flags: --expected-store-version
// is optional, so nothing here is refused.
func newStoreWriteOptions(inv *Invocation, c *cli.Context) *storeWriteOptions {
	return &storeWriteOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Store: inv.Flows,
		ExpectedStoreVersion: c.Int64("expected-store-version")}
}

// newSkeletonScanCmd parses skeleton scan; a test's runF sees the options
// instead of running it.
func newSkeletonScanCmd(inv *Invocation, runF func(context.Context, *storeWriteOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "scan",
		Usage: "propose candidate blocks from the files at HEAD",
		Description: `One candidate block per top-level directory with tracked files, plus one for
the files at the root; ids sb_<repo>_<dir>, heuristic names that the owner
still has to confirm. On a candidate skeleton a scan adds blocks only for new
directories; on a ratified skeleton it writes only a candidate revision and
leaves the ratified blocks alone.`,
		Flags:  []cli.Flag{expectedVersionFlag, agentFlag, JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, newStoreWriteOptions(inv, c), runF, runSkeletonScan)
		},
	}
}

// runSkeletonScan proposes candidate blocks from the files at HEAD.
func runSkeletonScan(ctx context.Context, opts *storeWriteOptions) error {
	s, req, err := openStoreWrite(opts.IO, opts.Agent, opts.Store, opts.ExpectedStoreVersion)
	if err != nil {
		return err
	}
	res, err := s.Scan(ctx, req)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		switch {
		case !res.Changed && res.StoreVersion == 0:
			fmt.Fprintf(w, "no store written: HEAD has no tracked files to make blocks of\n")
		case !res.Changed:
			fmt.Fprintf(w, "store v%d unchanged: the scan found nothing new\n", res.StoreVersion)
		case res.Revision > 0:
			fmt.Fprintf(w, "%s\n", res.Subject)
			fmt.Fprintf(w, "the skeleton is ratified: its blocks are unchanged; the proposal is candidate revision %d\n", res.Revision)
			PrintIDs(w, "  new   %s\n", res.New)
			PrintIDs(w, "  gone  %s (no file left at HEAD)\n", res.Gone)
		default:
			fmt.Fprintf(w, "%s\n", res.Subject)
			PrintIDs(w, "  + %s\n", res.Added)
			fmt.Fprintf(w, "next: name the blocks (m1nd skeleton edit), then m1nd skeleton ratify; after commits, m1nd skeleton reconcile\n")
		}
		return nil
	})
}

// newSkeletonReconcileCmd parses skeleton reconcile; a test's runF sees
// the options instead of running it.
func newSkeletonReconcileCmd(inv *Invocation, runF func(context.Context, *storeWriteOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "reconcile",
		Usage: "re-resolve block membership at HEAD; bump the boundary of blocks whose files changed",
		Description: `Each block's membership fingerprint is sha256 of its resolved member paths at
HEAD. When it changed, the block's boundary_version goes up by one and
receipts proved at the old boundary stop counting (the block needs evidence
again). The scan and every membership edit record a block's baseline, so the
first reconcile already compares. Files no block covers, and files several
blocks claim, are listed.`,
		Flags:  []cli.Flag{expectedVersionFlag, agentFlag, JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, newStoreWriteOptions(inv, c), runF, runSkeletonReconcile)
		},
	}
}

// runSkeletonReconcile re-resolves every block's members at HEAD.
func runSkeletonReconcile(ctx context.Context, opts *storeWriteOptions) error {
	s, req, err := openStoreWrite(opts.IO, opts.Agent, opts.Store, opts.ExpectedStoreVersion)
	if err != nil {
		return err
	}
	res, err := s.Reconcile(ctx, req)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		if res.Changed {
			fmt.Fprintf(w, "%s\n", res.Subject)
		} else {
			fmt.Fprintf(w, "store v%d unchanged: every block covers the same files\n", res.StoreVersion)
		}
		PrintIDs(w, "  baseline  %s\n", res.Baselined)
		PrintIDs(w, "  bumped    %s (its receipts are stale until re-proved)\n", res.Bumped)
		printLayout(w, res.Unmapped, res.Contested)
		return nil
	})
}

// PrintIDs prints one line per id, formatted by format.
func PrintIDs(w io.Writer, format string, ids []string) {
	for _, id := range ids {
		fmt.Fprintf(w, format, id)
	}
}

// printLayout prints the files no block covers and those several claim.
func printLayout(w io.Writer, unmapped, contested []string) {
	printPaths(w, "unmapped", unmapped, "assign with an assign_unmapped op")
	printPaths(w, "contested", contested, "settle with a resolve_seam op")
}

func printPaths(w io.Writer, label string, paths []string, hint string) {
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(w, "%s (%s):\n", label, hint)
	for i, p := range paths {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more (--json lists all)\n", len(paths)-20)
			break
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}

type skeletonReply struct {
	StoreVersion int64                    `json:"store_version"`
	Skeleton     brain.Skeleton           `json:"skeleton"`
	Revision     *brain.CandidateRevision `json:"candidate_revision,omitempty"`
	Blocks       []ops.BlockView          `json:"blocks"`
	Unmapped     []string                 `json:"unmapped"`
	Contested    []string                 `json:"contested"`
}

// skeletonShowOptions is what skeleton show runs on.
type skeletonShowOptions struct {
	IO       *IOStreams
	JSON     bool
	Snapshot func() (*ops.Flows, *brain.Snapshot, error)
}

// newSkeletonShowCmd parses skeleton show; a test's runF sees the options
// instead of running it.
func newSkeletonShowCmd(inv *Invocation, runF func(context.Context, *skeletonShowOptions) error) *cli.Command {
	return &cli.Command{
		Name:   "show",
		Usage:  "show the skeleton: its state, blocks and members, and what no block covers",
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &skeletonShowOptions{IO: inv.io, JSON: c.Bool("json"), Snapshot: inv.snapshot}, runF, runSkeletonShow)
		},
	}
}

// runSkeletonShow shows the skeleton and what no block covers.
func runSkeletonShow(_ context.Context, opts *skeletonShowOptions) error {
	s, snap, err := opts.Snapshot()
	if err != nil {
		return err
	}
	layout, err := s.Layout(snap)
	if err != nil {
		return err
	}
	reply := skeletonReply{StoreVersion: snap.StoreVersion, Skeleton: snap.Skeleton, Revision: snap.Revision,
		Blocks: ops.ViewBlocks(snap.Blocks, opts.IO.Time()), Unmapped: nonNil(layout.Unmapped), Contested: nonNil(layout.Contested)}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		printSkeleton(w, snap)
		printLayout(w, layout.Unmapped, layout.Contested)
		return nil
	})
}

// printSkeleton prints the skeleton's state and its blocks with their members.
func printSkeleton(w io.Writer, snap *brain.Snapshot) {
	sk := snap.Skeleton
	fmt.Fprintf(w, "skeleton %s  %s  version %d  (store v%d)\n", sk.SkeletonID, sk.State, sk.Version, snap.StoreVersion)
	if r := sk.Ratification; r != nil {
		fmt.Fprintf(w, "ratified by %s via %s at %s (store v%d)\n", r.Ratifier, r.RatifiedVia, r.RatifiedAt, r.StoreVersion)
	}
	for _, b := range snap.Blocks {
		naming := ""
		if b.CandidateMeta.NeedsOwnerNaming {
			naming = "  (needs owner naming)"
		}
		fmt.Fprintf(w, "\n%s  %q  %s, boundary v%d, contract v%d%s\n", b.BlockID, b.Name, b.State, b.BoundaryVersion, b.ContractVersion, naming)
		if b.Purpose != "" {
			fmt.Fprintf(w, "  %s\n", b.Purpose)
		}
		for _, m := range b.Membership {
			fmt.Fprintf(w, "  %-9s %s\n", m.Role, m.Path)
		}
		for _, sk := range b.Sockets {
			fmt.Fprintf(w, "  socket -> %s\n", sk.To)
		}
	}
	if rev := snap.Revision; rev != nil {
		fmt.Fprintf(w, "\ncandidate revision %d (scanned %s): %d new, %d gone\n", rev.Revision, shortHash(rev.Head), len(rev.New), len(rev.Gone))
	}
	fmt.Fprintf(w, "\n")
}

// skeletonEditOptions is what skeleton edit runs on.
type skeletonEditOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Store func() (*ops.Flows, error)
	// ExpectedStoreVersion is the store version the caller read.
	ExpectedStoreVersion int64
	Seat                 string // brain.SeatOwner or brain.SeatRunner
	Ops                  string // a FILE, or "" or - for stdin
}

func newSkeletonEditCmd(inv *Invocation, runF func(context.Context, *skeletonEditOptions) error) *cli.Command {
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
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return Usagef("too many arguments: want one OPS file (or - for stdin)")
			}
			seat := c.String("seat")
			if seat != brain.SeatOwner && seat != brain.SeatRunner {
				return Usagef("--seat %q: want owner or runner", seat)
			}
			expected, err := expectedVersion(c, true)
			if err != nil {
				return err
			}
			opts := &skeletonEditOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Store: inv.Flows,
				ExpectedStoreVersion: expected, Seat: seat, Ops: c.Args().First()}
			return RunWith(c.Context, opts, runF, runSkeletonEdit)
		},
	}
}

// runSkeletonEdit applies the batch of ops, all or nothing.
func runSkeletonEdit(ctx context.Context, opts *skeletonEditOptions) error {
	s, req, err := openStoreWrite(opts.IO, opts.Agent, opts.Store, opts.ExpectedStoreVersion)
	if err != nil {
		return err
	}
	ops, err := readDocument(opts.Ops, opts.IO.In, "ops", rules.Refusef(rules.CandidateEditRejected, "ops",
		"candidate_edit rejected: the ops file is larger than %d bytes", maxDocumentBytes))
	if err != nil {
		return err
	}
	res, err := s.Edit(ctx, brain.EditRequest{WriteRequest: req, Seat: opts.Seat, Ops: ops})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		if !res.Changed {
			fmt.Fprintf(w, "store v%d unchanged: the batch restates what the store already says\n", res.StoreVersion)
			return nil
		}
		fmt.Fprintf(w, "%s\n", res.Subject)
		PrintIDs(w, "  ~ %s\n", res.Blocks)
		PrintIDs(w, "  - %s\n", res.Removed)
		return nil
	})
}

// skeletonRatifyOptions is what skeleton ratify runs on.
type skeletonRatifyOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Store func() (*ops.Flows, error)
	// ExpectedStoreVersion is the store version the caller read; negative
	// for the current one.
	ExpectedStoreVersion int64
	Blocks               []string // nil: every candidate block
}

// newSkeletonRatifyCmd parses skeleton ratify; a test's runF sees the
// options instead of running it.
func newSkeletonRatifyCmd(inv *Invocation, runF func(context.Context, *skeletonRatifyOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "ratify",
		Usage: "ratify candidate blocks (a human gesture: asks at the terminal)",
		Description: `Makes the candidate blocks (all of them, or those named with --block) the
brain's own. Refused needs_owner_naming while a block still carries its
heuristic name. This is a human gesture: it runs only at an interactive
terminal, asks you to type the skeleton id, and only while the brain has no
registered passkey (then ratify in the tray). Agents never ratify.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "block", Usage: "ratify only block `ID` (repeatable)"},
			expectedVersionFlag, agentFlag, JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &skeletonRatifyOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Store: inv.Flows,
				ExpectedStoreVersion: c.Int64("expected-store-version"), Blocks: c.StringSlice("block")}
			return RunWith(c.Context, opts, runF, runSkeletonRatify)
		},
	}
}

// runSkeletonRatify asks for the gesture at the terminal and ratifies;
// without the gesture the store refuses it.
func runSkeletonRatify(ctx context.Context, opts *skeletonRatifyOptions) error {
	s, req, err := openStoreWrite(opts.IO, opts.Agent, opts.Store, opts.ExpectedStoreVersion)
	if err != nil {
		return err
	}
	if err := s.TerminalGesture(rules.GestureRatify); err != nil {
		return err
	}
	if err := s.CheckSound(ctx, brain.StoreRef); err != nil {
		return err
	}
	origin := ""
	if opts.IO.interactive() {
		// At a terminal every law but the gesture is asked first, so
		// nobody types a confirmation for a ratify refused anyway (a
		// block that still needs its name, an id the store lacks).
		// Without one the gate still comes first (DESIGN §7).
		if _, err := s.Ratify(ctx, brain.RatifyRequest{WriteRequest: req, BlockIDs: opts.Blocks, Origin: rules.OriginHumanTTY, DryRun: true}); err != nil {
			return err
		}
		// Only a terminal session gets this far; reading the store
		// for the prompt is no check of the gesture.
		snap, ok, err := s.Snapshot()
		if err != nil {
			return err
		}
		if !ok {
			return rules.Refuse(rules.NoStore, "")
		}
		what := "every candidate block"
		if ids := opts.Blocks; len(ids) > 0 {
			what = strings.Join(ids, ", ")
		}
		origin, err = opts.IO.Gesture(s.TerminalGesture, rules.GestureRatify, fmt.Sprintf("Ratify %s of %s at store v%d?", what, snap.Skeleton.SkeletonID, req.ExpectedStoreVersion), "skeleton id", snap.Skeleton.SkeletonID)
		if err != nil {
			return err
		}
	}
	res, err := s.Ratify(ctx, brain.RatifyRequest{WriteRequest: req, BlockIDs: opts.Blocks, Origin: origin})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		fmt.Fprintf(w, "%s\n", res.Subject)
		fmt.Fprintf(w, "ratified %s; the skeleton is %s\n", strings.Join(res.Ratified, ", "), res.SkeletonState)
		return nil
	})
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
