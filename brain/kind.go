package brain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// StoreKind is the brain store: the one ref refs/m1nd/store, whose
// commits hold a tree (store.json and blocks/), each adding exactly 1 to
// store_version. A moved store is the writer's store_version_conflict.
var StoreKind = chain.Define(chain.Spec[*Snapshot, StoreCommit]{
	Shape: chain.Shape{
		Name:   "store",
		Prefix: StoreRef,
		Single: true,
		Race:   chain.RaceStale,
	},
	ReadCommit: readStoreCommit,
	Describe:   func(c StoreCommit) (string, []chain.Trailer) { return c.Subject(), c.trailers() },
	Follows:    storeFollows,
})

// StoreCommit is what names a store commit (StoreKind's Commit.Doc): the
// version it writes, the one operation it is, and its writer's words.
type StoreCommit struct {
	Version int64
	Op      StoreOp
	Seat    string // candidate_edit: owner or runner
	Mission string // a landing's import: the mission it lands
	What    string // what the change does, in its writer's words
}

// Subject is what `git log` shows for the commit.
func (c StoreCommit) Subject() string { return fmt.Sprintf("store v%d: %s", c.Version, c.What) }

// trailers are what the laws read (readStoreMove): the version, the
// operation, and a candidate edit's seat or a landing's mission.
func (c StoreCommit) trailers() []chain.Trailer {
	t := []chain.Trailer{{Key: "M1nd-Store-Version", Value: strconv.FormatInt(c.Version, 10)}, {Key: StoreOpTrailer, Value: string(c.Op)}}
	if c.Seat != "" {
		t = append(t, chain.Trailer{Key: SeatTrailer, Value: c.Seat})
	}
	if c.Mission != "" {
		t = append(t, chain.Trailer{Key: "M1nd-Mission", Value: c.Mission})
	}
	return t
}

// readStoreCommit decodes a whole store commit, as strictly as the store
// writes it: its tree holds store.json and blocks/ and nothing else,
// store.json is a snapshot of this schema, and every blocks/<id>.json is
// a valid block of that id whose receipts decode. Junk here would break
// every clone that synced it, so the laws refuse it (schema_mismatch).
func readStoreCommit(objs gitstore.Objects, c *gitstore.Commit) (*Snapshot, error) {
	snap, err := decodeStoreTree(objs, c.Tree)
	if err != nil {
		return nil, rules.Refusef(rules.SchemaMismatch, "schema", "a store commit holds %s of %s: %v", StoreFile, StoreSchema, err)
	}
	return snap, nil
}

// decodeStoreTree decodes a store commit's tree: store.json first, then
// every block file against the version it names.
func decodeStoreTree(objs gitstore.Objects, tree gitstore.Hash) (*Snapshot, error) {
	entries, err := objs.TreeEntries(tree)
	if err != nil {
		return nil, err
	}
	snap, blocks, err := readStoreEntries(objs, entries)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, gitstore.ErrNoSuchFile
	}
	if snap.StoreVersion < 1 || snap.Skeleton.SkeletonID == "" {
		return nil, fmt.Errorf("store_version %d and skeleton %q: a store starts at version 1 with a skeleton", snap.StoreVersion, rules.Echo(snap.Skeleton.SkeletonID))
	}
	for _, e := range blocks {
		b, err := decodeStoreBlock(objs, e, snap.StoreVersion)
		if err != nil {
			return nil, err
		}
		snap.Blocks = append(snap.Blocks, b)
	}
	return snap, nil
}

// readStoreEntries reads the top of a store tree: the decoded store.json
// (nil when the tree has none) and the entries of blocks/. Any other
// entry is refused.
func readStoreEntries(objs gitstore.Objects, entries []gitstore.TreeEntry) (snap *Snapshot, blocks []gitstore.TreeEntry, err error) {
	for _, e := range entries {
		switch {
		case e.Name == StoreFile && e.Mode == gitstore.ModeFile:
			body, err := objs.ReadBlob(e.Hash)
			if err != nil {
				return nil, nil, err
			}
			if snap, err = DecodeStoreDoc(body); err != nil {
				return nil, nil, err
			}
		case e.Name == blocksDir && e.Mode == gitstore.ModeTree:
			if blocks, err = objs.TreeEntries(e.Hash); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("the tree holds %s; a store commit holds %s and %s/ only", rules.Echo(e.Name), StoreFile, blocksDir)
		}
	}
	return snap, blocks, nil
}

// decodeStoreBlock decodes one entry of blocks/: a file named for a valid
// block id, holding that block, whose every receipt decodes and was
// imported at a version of this store, no later than version.
func decodeStoreBlock(objs gitstore.Objects, e gitstore.TreeEntry, version int64) (*Block, error) {
	id, ok := strings.CutSuffix(e.Name, ".json")
	if !ok || !ValidBlockID(id) || e.Mode != gitstore.ModeFile {
		return nil, fmt.Errorf("%s/%s is not a block file", blocksDir, rules.Echo(e.Name))
	}
	body, err := objs.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	b, err := decodeBlock(id, body)
	if err != nil {
		return nil, err
	}
	for i, r := range b.Receipts {
		if _, _, err := DecodeReceipt(r.Receipt); err != nil || r.StoreVersion < 1 || r.StoreVersion > version {
			return nil, fmt.Errorf("%s/%s receipt %d is not an imported receipt of this store", blocksDir, e.Name, i)
		}
	}
	return b, nil
}

// decodeStrict decodes one JSON object of type T with no unknown fields
// and nothing after it.
func decodeStrict[T any](body []byte) (*T, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	v := new(T)
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("not a %T document: %v", *v, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one JSON document")
	}
	return v, nil
}

// storeFollows: each store commit adds exactly 1 to store_version, the
// first being version 1; what only a human makes was made by a human
// gesture in this very commit: a receipt that was not in the store before
// records this version and a human origin, a block that became ratified is
// named by this version's ratification, made by a human, and the commit
// carries that origin's trailer.
func storeFollows(prev, next *chain.Decoded[*Snapshot], env chain.Env) error {
	var p *Snapshot // nil for the first commit
	if prev != nil {
		p = prev.Value
	}
	snap := next.Value
	if err := checkStoreMove(p, snap, next.Meta.Message); err != nil {
		return err
	}
	origin := chain.OriginOf(next.Meta.Message)
	gesture, err := ratifyGesture(p, snap, origin)
	if err != nil {
		return err
	}
	gesture, lands, err := newReceiptsGesture(p, snap, origin, gesture)
	if err != nil {
		return err
	}
	if gesture == "" || env.Gestures == nil {
		return nil
	}
	parent := gitstore.ZeroHash
	if len(next.Meta.Parents) > 0 {
		parent = next.Meta.Parents[0]
	}
	change := StoreChange(parent, next.Meta.Tree)
	if lands != nil {
		change = LandChange(lands, parent, next.Meta.Tree)
	}
	return env.Gestures.CheckCommit(&next.Doc, gesture, change)
}

// checkStoreMove holds the move from prev (nil for the first commit) to
// next to the laws that need no gesture: one version on, a legal
// operation for the message's verb and seat, receipts kept and scopes
// that only grow.
func checkStoreMove(prev, next *Snapshot, message string) error {
	want := int64(1)
	if prev != nil {
		want = prev.StoreVersion + 1
	}
	if v := next.StoreVersion; v != want {
		return rules.Refusef(rules.StoreVersionConflict, "store_version", "each store commit adds exactly 1 to store_version: this one says %d, want %d", v, want)
	}
	op, seat, err := storeOpOf(message)
	if err != nil {
		return err
	}
	agent, _ := chain.AgentOf(message)
	move := storeMove{prev: prev, next: next, op: op, seat: seat, agent: agent}
	if err := move.checkOperation(); err != nil {
		return err
	}
	if prev == nil {
		return nil
	}
	if err := receiptsKept(prev, next); err != nil {
		return err
	}
	return scopesOnlyGrow(prev, next)
}

// ratifyGesture: a block that became ratified in next is named by this
// version's ratification, made by a human, and the commit carries that
// origin's trailer. It says GestureRatify when some block did, and ""
// when none did.
func ratifyGesture(prev, next *Snapshot, origin string) (string, error) {
	wasRatified := map[string]bool{}
	if prev != nil {
		for _, b := range prev.Blocks {
			wasRatified[b.BlockID] = b.State == StateRatified
		}
	}
	var gesture string // the human gesture this commit makes, if any
	for _, b := range next.Blocks {
		if b.State != StateRatified || wasRatified[b.BlockID] {
			continue
		}
		r := next.Skeleton.Ratification
		if r == nil || r.StoreVersion != next.StoreVersion || !rules.IsHumanOrigin(r.RatifiedVia) || origin != r.RatifiedVia || !slices.Contains(r.BlockIDs, b.BlockID) {
			return "", rules.Refusef(rules.HumanGestureRequired, "ratified_via", "store v%d ratifies %s without a human ratification: blocks are ratified only by m1nd skeleton ratify or the tray, human gestures", next.StoreVersion, b.BlockID)
		}
		gesture = rules.GestureRatify
	}
	return gesture, nil
}

// newReceiptsGesture: a receipt that was not in prev records this
// version and a human origin the commit carries, and comes in no commit
// that ratifies. It says the gesture the commit makes, given the one
// ratifyGesture found, and the mission the last new receipt lands, if
// any: such a receipt is a land, checked as one.
func newReceiptsGesture(prev, next *Snapshot, origin, gesture string) (string, *Landing, error) {
	var before map[string]bool
	if prev != nil {
		before = receiptKeys(prev)
	}
	var lands *Landing
	for _, b := range next.Blocks {
		for _, r := range b.Receipts {
			if before[b.BlockID+" "+receiptKey(r)] {
				continue
			}
			human := rules.IsHumanOrigin(r.ImportedVia) && origin == r.ImportedVia
			if r.StoreVersion != next.StoreVersion || !human || gesture == rules.GestureRatify {
				return "", nil, rules.Refusef(rules.HumanGestureRequired, "imported_via", "store v%d adds a receipt to %s that no human import made: a receipt enters the store only by receipt import, a human gesture", next.StoreVersion, b.BlockID)
			}
			gesture, lands = rules.GestureReceiptImport, r.Lands
			if lands != nil {
				if err := lands.Check(); err != nil {
					return "", nil, err
				}
				gesture = rules.GestureLand
			}
		}
	}
	return gesture, lands, nil
}

// receiptsKept: evidence is never taken back. A block that is still in
// the store keeps every receipt it had; receipts leave only with their
// block (a merge or a split replaces the blocks it touches).
func receiptsKept(prev, next *Snapshot) error {
	now := map[string]map[string]bool{}
	for _, b := range next.Blocks {
		now[b.BlockID] = map[string]bool{}
		for _, r := range b.Receipts {
			now[b.BlockID][receiptKey(r)] = true
		}
	}
	for _, b := range prev.Blocks {
		kept, still := now[b.BlockID]
		if !still {
			continue
		}
		for _, r := range b.Receipts {
			if !kept[receiptKey(r)] {
				return rules.Refusef(rules.InvalidTransition, "receipts", "store v%d drops a receipt of %s (imported in v%d): evidence is never taken back, and a failing receipt stays until a newer one passes", next.StoreVersion, b.BlockID, r.StoreVersion)
			}
		}
	}
	return nil
}

// scopesOnlyGrow: what a receipt is judged against never moves back. A
// block that is still in the store keeps its receipt contract (no verb
// changes it), and its boundary and contract versions never go down:
// rewinding them would make a stale receipt count again.
func scopesOnlyGrow(prev, next *Snapshot) error {
	for _, p := range prev.Blocks {
		b := next.Block(p.BlockID)
		if b == nil {
			continue
		}
		if b.BoundaryVersion < p.BoundaryVersion || b.ContractVersion < p.ContractVersion {
			return rules.Refusef(rules.InvalidTransition, "boundary_version", "store v%d moves %s back to boundary v%d, contract v%d (it was at v%d, v%d): versions only grow, so a stale receipt never counts again", next.StoreVersion, b.BlockID, b.BoundaryVersion, b.ContractVersion, p.BoundaryVersion, p.ContractVersion)
		}
		if !slices.Equal(b.ReceiptContract.Required, p.ReceiptContract.Required) {
			return rules.Refusef(rules.InvalidTransition, "receipt_contract", "store v%d changes what %s's receipt contract requires: no verb does", next.StoreVersion, b.BlockID)
		}
	}
	return nil
}

// receiptKeys names every receipt of a snapshot with its block.
func receiptKeys(s *Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, b := range s.Blocks {
		for _, r := range b.Receipts {
			out[b.BlockID+" "+receiptKey(r)] = true
		}
	}
	return out
}

// receiptKey names an imported receipt within its block: the whole record
// (the version that imported it, its bytes, who imported it how, and the
// mission it lands), so a record changed after its import is a receipt
// taken back and another added without a gesture. A receipt never moves
// between blocks (a merge or a split leaves the new blocks without
// receipts), so one found on a block that did not hold it is new, and
// needs its gesture.
func receiptKey(r StoredReceipt) string {
	return string(chain.CanonicalJSON(r))
}
