package ops

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// BlockView is one block with its colour and why: the block exactly as the
// store holds it (every field of brain.Block, receipts included), then
// what is derived from it. `m1nd blocks`, `m1nd skeleton show` and the
// tray's GET /api/system_blocks all answer this shape.
type BlockView struct {
	// ID is the block's id again, under the key every reply names its
	// object by (docs/commands.md, "JSON replies").
	ID string `json:"id"`
	*brain.Block
	Required         []string     `json:"required"`           // the receipt types the contract requires (receipt_contract.required)
	NeedsOwnerNaming bool         `json:"needs_owner_naming"` // candidate_meta.needs_owner_naming
	ReceiptCount     int          `json:"receipt_count"`      // len(receipts)
	Colour           brain.Colour `json:"colour"`
	Why              string       `json:"why"` // why it has that colour, in one line
	// ReceiptOrigin says how the newest receipt was imported: "passkey"
	// (a proven gesture) or "terminal" (the weaker mode); absent with none.
	ReceiptOrigin string `json:"receipt_origin,omitempty"`
	// Tested says, per receipt in order, the commit its gate tested and
	// how many of the block's files changed on its target since. It is
	// shown, and the colour law stays the seed's: boundaries, not diffs,
	// make a receipt stale.
	Tested []ReceiptTested `json:"tested"`
}

// ReceiptTested is what one receipt's gate tested, as the block view
// shows it.
type ReceiptTested struct {
	StoreVersion int64  `json:"store_version"`
	Commit       string `json:"commit,omitempty"` // the tested commit; absent when the receipt names none
	// ChangedSince is how many of the block's files differ between the
	// tested commit and its target's head (Against); absent when this
	// repository cannot tell (no such commit here).
	ChangedSince *int   `json:"changed_since,omitempty"`
	Against      string `json:"against,omitempty"`
}

// ReceiptOrigin is how a receipt's import was made, as people read it:
// "passkey", "terminal", or "tray claim" for the tray's unsigned imports
// of before.
func ReceiptOrigin(importedVia string) string {
	switch importedVia {
	case rules.OriginHumanPasskey:
		return "passkey"
	case rules.OriginHumanUI:
		return "tray claim"
	}
	return "terminal"
}

// ViewBlock is b's view, its colour as of now.
func ViewBlock(b *brain.Block, now time.Time) BlockView {
	paint := b.Colour(now)
	required := b.ReceiptContract.Required
	if required == nil {
		required = []string{}
	}
	v := BlockView{
		ID: b.BlockID, Block: b, Required: required, NeedsOwnerNaming: b.CandidateMeta.NeedsOwnerNaming,
		ReceiptCount: len(b.Receipts), Colour: paint.Colour, Why: paint.Why, Tested: []ReceiptTested{},
	}
	if n := len(b.Receipts); n > 0 {
		v.ReceiptOrigin = ReceiptOrigin(b.Receipts[n-1].ImportedVia)
	}
	return v
}

// ViewBlocks is the view of every block, in order; never nil.
func ViewBlocks(blocks []*brain.Block, now time.Time) []BlockView {
	out := make([]BlockView, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, ViewBlock(b, now))
	}
	return out
}

// BlocksView is the store's blocks with their colours: `m1nd blocks
// --json` and the tray's GET /api/system_blocks.
type BlocksView struct {
	ServedBrain  string          `json:"served_brain"`
	StoreVersion int64           `json:"store_version"`         // 0 while there is no store
	SkeletonID   string          `json:"skeleton_id,omitempty"` // absent while there is no store
	Skeleton     *brain.Skeleton `json:"skeleton"`              // null while there is no store
	Blocks       []BlockView     `json:"blocks"`
	// Broken is set when the store's history breaks the laws: the blocks
	// are then shown as the last version the laws accept holds them.
	Broken *StoreBreak `json:"store_broken,omitempty"`
}

// diffMemo remembers which files differ between two commits: a fact that
// never changes, asked of git once by a long-lived owner.
type diffMemo struct {
	mu    sync.Mutex
	known map[string][]string
}

// StoreBreak is a store whose history breaks the laws (written past the
// hooks): where, which law, and the version the view shows instead.
type StoreBreak struct {
	*laws.RefFault
	HeadVersion   int64 `json:"head_version"`   // the version the store's head claims
	LawfulVersion int64 `json:"lawful_version"` // the last version the laws accept; 0 for none
}

// HasStore reports whether the brain has a store yet.
func (v *BlocksView) HasStore() bool { return v.Skeleton != nil }

// Blocks reads the store's blocks and paints them as of now. A brain with
// no store yet has a view with no skeleton and no blocks: a surface that
// needs a store refuses no_store itself.
func (b *Flows) Blocks(ctx context.Context, now time.Time) (*BlocksView, error) {
	v := &BlocksView{ServedBrain: b.Name(), Blocks: []BlockView{}}
	snap, ok, err := b.store.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("blocks: read the store: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !ok {
		return v, nil
	}
	if v.Broken, snap, err = b.lawfulStore(ctx, snap); err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	if snap == nil { // no version the laws accept
		return v, nil
	}
	v.StoreVersion, v.SkeletonID, v.Skeleton = snap.StoreVersion, snap.Skeleton.SkeletonID, &snap.Skeleton
	v.Blocks = ViewBlocks(snap.Blocks, now)
	if err := b.markTested(ctx, v.Blocks); err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	return v, nil
}

// markTested fills in what each receipt's gate tested and how many of its
// block's files changed on the target since: the branch its landing moved,
// or the main line for a receipt that landed none. One git diff per tested
// commit and target head, remembered while both stay put.
func (b *Flows) markTested(ctx context.Context, blocks []BlockView) error {
	heads := map[string]string{} // target ("" for the main line) → its head, "" when it has none
	headOf := func(target string) (string, error) {
		if h, ok := heads[target]; ok {
			return h, nil
		}
		var h gitstore.Hash
		var ok bool
		var err error
		if target == "" {
			h, ok, err = b.repo.MainHead()
		} else {
			h, ok, err = b.repo.ReadRef("refs/heads/" + target)
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", cmp.Or(target, "HEAD"), err)
		}
		heads[target] = ""
		if ok {
			heads[target] = h.String()
		}
		return heads[target], nil
	}
	for i := range blocks {
		for _, r := range blocks[i].Receipts {
			t := ReceiptTested{StoreVersion: r.StoreVersion}
			if rc, _, err := brain.DecodeReceipt(r.Receipt); err == nil {
				t.Commit, _ = rc.Evidence.Tested()
			}
			target := ""
			if r.Lands != nil {
				target = r.Lands.Target
			}
			head, err := headOf(target)
			if err != nil {
				return err
			}
			if t.Commit != "" && head != "" {
				if changed, ok := b.changedSince(ctx, t.Commit, head); ok {
					n := 0
					for _, f := range changed {
						if blocks[i].Block.Covers(f) {
							n++
						}
					}
					t.ChangedSince, t.Against = &n, head
				}
			}
			blocks[i].Tested = append(blocks[i].Tested, t)
		}
	}
	return nil
}

// changedSince lists the files that differ between commits a and c; ok is
// false when git cannot tell (a commit this repository lacks).
func (b *Flows) changedSince(ctx context.Context, a, c string) ([]string, bool) {
	key := a + " " + c
	b.diffs.mu.Lock()
	files, ok := b.diffs.known[key]
	b.diffs.mu.Unlock()
	if ok {
		return files, true
	}
	out, _, err := b.gitRun(ctx, nil, "diff", "--name-only", "--no-renames", a, c, "--")
	if err != nil {
		return nil, false
	}
	if out != "" {
		files = strings.Split(out, "\n")
	}
	b.diffs.mu.Lock()
	if b.diffs.known == nil || len(b.diffs.known) > 1024 {
		b.diffs.known = map[string][]string{}
	}
	b.diffs.known[key] = files
	b.diffs.mu.Unlock()
	return files, true
}

// lawfulStore judges the store at snap (its head): nil when the laws
// accept it, and otherwise the break, with the snapshot of the last
// version they accept (nil for none).
func (b *Flows) lawfulStore(ctx context.Context, snap *brain.Snapshot) (*StoreBreak, *brain.Snapshot, error) {
	v := b.Verdicts()
	faults, err := v.Judge([]string{brain.StoreRef}, []gitstore.Hash{snap.Commit})
	if err != nil {
		return nil, nil, err
	}
	v.Save()
	f := faults[0]
	if f == nil {
		return nil, snap, ctx.Err()
	}
	brk := &StoreBreak{RefFault: f, HeadVersion: snap.StoreVersion}
	bad, err := gitstore.ParseHash(f.Commit)
	if err != nil {
		return brk, nil, nil
	}
	c, err := b.repo.ReadCommit(bad)
	if err != nil || len(c.Parents) == 0 {
		return brk, nil, nil
	}
	lawful, err := b.store.SnapshotAt(c.Parents[0])
	if err != nil {
		return brk, nil, nil
	}
	brk.LawfulVersion = lawful.StoreVersion
	return brk, lawful, nil
}
