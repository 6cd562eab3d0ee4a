package brain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
)

// StoreKind is the brain store: the one ref refs/m1nd/store, whose
// commits hold a tree (store.json and blocks/), each adding exactly 1 to
// store_version. A moved store is the writer's store_version_conflict.
var StoreKind = &chain.Kind{
	Name:       "store",
	Prefix:     StoreRef,
	Single:     true,
	ReadCommit: readStoreCommit,
	Follows:    storeFollows,
	Race:       chain.RaceStale,
}

func init() { chain.Register(StoreKind) }

// readStoreCommit decodes a whole store commit, as strictly as the store
// writes it: its tree holds store.json and blocks/ and nothing else,
// store.json is a snapshot of this schema, and every blocks/<id>.json is
// a valid block of that id whose receipts decode. Junk here would break
// every clone that synced it, so the laws refuse it (schema_mismatch).
func readStoreCommit(objs gitstore.Objects, c *gitstore.Commit) (any, error) {
	snap, err := decodeStoreTree(objs, c.Tree)
	if err != nil {
		return nil, gates.Refusef(gates.SchemaMismatch, "schema", "a store commit holds %s of %s: %v", StoreFile, StoreSchema, err)
	}
	return snap, nil
}

func decodeStoreTree(objs gitstore.Objects, tree gitstore.Hash) (*Snapshot, error) {
	entries, err := objs.TreeEntries(tree)
	if err != nil {
		return nil, err
	}
	var snap *Snapshot
	var blocks []gitstore.TreeEntry
	for _, e := range entries {
		switch {
		case e.Name == StoreFile && e.Mode == gitstore.ModeFile:
			body, err := objs.ReadBlob(e.Hash)
			if err != nil {
				return nil, err
			}
			if snap, err = DecodeStoreDoc(body); err != nil {
				return nil, err
			}
		case e.Name == blocksDir && e.Mode == gitstore.ModeTree:
			if blocks, err = objs.TreeEntries(e.Hash); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("the tree holds %s; a store commit holds %s and %s/ only", gates.Echo(e.Name), StoreFile, blocksDir)
		}
	}
	if snap == nil {
		return nil, gitstore.ErrNoSuchFile
	}
	if snap.StoreVersion < 1 || snap.Skeleton.SkeletonID == "" {
		return nil, fmt.Errorf("store_version %d and skeleton %q: a store starts at version 1 with a skeleton", snap.StoreVersion, gates.Echo(snap.Skeleton.SkeletonID))
	}
	for _, e := range blocks {
		id, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || !ValidBlockID(id) || e.Mode != gitstore.ModeFile {
			return nil, fmt.Errorf("%s/%s is not a block file", blocksDir, gates.Echo(e.Name))
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
			if _, _, err := DecodeReceipt(r.Receipt); err != nil || r.StoreVersion < 1 || r.StoreVersion > snap.StoreVersion {
				return nil, fmt.Errorf("%s/%s receipt %d is not an imported receipt of this store", blocksDir, e.Name, i)
			}
		}
		snap.Blocks = append(snap.Blocks, b)
	}
	return snap, nil
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
func storeFollows(prev, next *chain.Judged, env chain.Env) error {
	want := int64(1)
	var before map[string]bool
	wasRatified := map[string]bool{}
	if prev != nil {
		p := prev.Value.(*Snapshot)
		want = p.StoreVersion + 1
		before = receiptKeys(p)
		for _, b := range p.Blocks {
			wasRatified[b.BlockID] = b.State == StateRatified
		}
	}
	snap := next.Value.(*Snapshot)
	if v := snap.StoreVersion; v != want {
		return gates.Refusef(gates.StoreVersionConflict, "store_version", "each store commit adds exactly 1 to store_version: this one says %d, want %d", v, want)
	}
	op, seat, err := storeOpOf(next.Meta.Message)
	if err != nil {
		return err
	}
	agent, _ := chain.AgentOf(next.Meta.Message)
	move := storeMove{next: snap, op: op, seat: seat, agent: agent}
	if prev != nil {
		move.prev = prev.Value.(*Snapshot)
	}
	if err := move.checkOperation(); err != nil {
		return err
	}
	if prev != nil {
		if err := receiptsKept(prev.Value.(*Snapshot), snap); err != nil {
			return err
		}
		if err := scopesOnlyGrow(prev.Value.(*Snapshot), snap); err != nil {
			return err
		}
	}
	origin, _ := chain.TrailerValue(next.Meta.Message, gates.OriginTrailer)
	var gesture string // the human gesture this commit makes, if any
	for _, b := range snap.Blocks {
		if b.State != StateRatified || wasRatified[b.BlockID] {
			continue
		}
		r := snap.Skeleton.Ratification
		if r == nil || r.StoreVersion != snap.StoreVersion || !gates.IsHumanOrigin(r.RatifiedVia) || origin != r.RatifiedVia || !slices.Contains(r.BlockIDs, b.BlockID) {
			return gates.Refusef(gates.HumanGestureRequired, "ratified_via", "store v%d ratifies %s without a human ratification: blocks are ratified only by m1nd skeleton ratify or the tray, human gestures", snap.StoreVersion, b.BlockID)
		}
		gesture = gates.GestureRatify
	}
	var lands *Landing
	for _, b := range snap.Blocks {
		for _, r := range b.Receipts {
			if before[b.BlockID+" "+receiptKey(r)] {
				continue
			}
			human := gates.IsHumanOrigin(r.ImportedVia) && origin == r.ImportedVia
			if r.StoreVersion != snap.StoreVersion || !human || gesture == gates.GestureRatify {
				return gates.Refusef(gates.HumanGestureRequired, "imported_via", "store v%d adds a receipt to %s that no human import made: a receipt enters the store only by receipt import, a human gesture", snap.StoreVersion, b.BlockID)
			}
			gesture, lands = gates.GestureReceiptImport, r.Lands
			if lands != nil {
				if err := lands.Check(); err != nil {
					return err
				}
				gesture = gates.GestureLand
			}
		}
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
	return env.Gestures.CheckCommit(next, gesture, change)
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
				return gates.Refusef(gates.InvalidTransition, "receipts", "store v%d drops a receipt of %s (imported in v%d): evidence is never taken back, and a failing receipt stays until a newer one passes", next.StoreVersion, b.BlockID, r.StoreVersion)
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
			return gates.Refusef(gates.InvalidTransition, "boundary_version", "store v%d moves %s back to boundary v%d, contract v%d (it was at v%d, v%d): versions only grow, so a stale receipt never counts again", next.StoreVersion, b.BlockID, b.BoundaryVersion, b.ContractVersion, p.BoundaryVersion, p.ContractVersion)
		}
		if !slices.Equal(b.ReceiptContract.Required, p.ReceiptContract.Required) {
			return gates.Refusef(gates.InvalidTransition, "receipt_contract", "store v%d changes what %s's receipt contract requires: no verb does", next.StoreVersion, b.BlockID)
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
