package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// StoreRef is the ref whose commits are the brain store's snapshots.
const StoreRef = chain.RefRoot + "store"

// StoreFile is the store document at the root of every store commit's
// tree; each block is a file under blocks/ beside it.
const StoreFile = "store.json"

const blocksDir = "blocks"

// Store is one brain's block store. Every mutation is one commit on
// StoreRef that adds exactly 1 to store_version, checked against the
// caller's expected version and moved by compare-and-swap: a writer that
// lost the race is refused store_version_conflict and nothing is applied.
type Store struct {
	Repo  *gitstore.Repo
	Brain string // the brain's display name; block ids are spelled after it
}

// StoreVersion returns the current store version, read from the newest
// snapshot (never by walking history). ok is false when the brain has no
// store yet.
func StoreVersion(repo *gitstore.Repo) (version int64, ok bool, err error) {
	snap, ok, err := (&Store{Repo: repo}).snapshot(false)
	if err != nil || !ok {
		return 0, ok, err
	}
	return snap.StoreVersion, true, nil
}

// Snapshot reads the current store; ok is false when there is none.
func (s *Store) Snapshot() (*Snapshot, bool, error) { return s.snapshot(true) }

// snapshot reads store.json and, when withBlocks, every block file.
func (s *Store) snapshot(withBlocks bool) (*Snapshot, bool, error) {
	head, ok, err := s.Repo.ReadRef(StoreRef)
	if err != nil || !ok {
		return nil, false, err
	}
	snap, err := s.readSnapshot(head, withBlocks)
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", StoreRef, head, err)
	}
	return snap, true, nil
}

// SnapshotAt reads the store as one of its commits holds it, blocks
// included: the last version the laws accept, when a later one breaks
// them.
func (s *Store) SnapshotAt(commit gitstore.Hash) (*Snapshot, error) {
	snap, err := s.readSnapshot(commit, true)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", StoreRef, commit, err)
	}
	return snap, nil
}

func (s *Store) readSnapshot(head gitstore.Hash, withBlocks bool) (*Snapshot, error) {
	c, err := s.Repo.ReadCommit(head)
	if err != nil {
		return nil, err
	}
	snap, err := s.readStoreDoc(c.Tree)
	if err != nil {
		return nil, err
	}
	snap.Commit = head
	if !withBlocks {
		return snap, nil
	}
	entries, err := s.blockEntries(c.Tree)
	if err != nil {
		return nil, err
	}
	snap.Blocks = make([]*Block, len(entries))
	errs := make([]error, len(entries))
	gitstore.Parallel(len(entries), func(i int) {
		body, err := s.Repo.ReadTyped(gitstore.BlobObject, entries[i].Hash)
		if err == nil {
			snap.Blocks[i], err = decodeBlock(strings.TrimSuffix(entries[i].Name, ".json"), body)
		}
		errs[i] = err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sortBlocks(snap)
	return snap, nil
}

// readStoreDoc decodes store.json of a store tree.
func (s *Store) readStoreDoc(tree gitstore.Hash) (*Snapshot, error) {
	body, err := s.Repo.ReadFileInTree(tree, StoreFile)
	if err == nil {
		var snap *Snapshot
		if snap, err = DecodeStoreDoc(body); err == nil {
			return snap, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", StoreFile, err)
}

// DecodeStoreDoc decodes the bytes of store.json, strictly (no unknown
// fields, nothing after it), as the store writes it: the snapshot without
// its blocks. Reads, the laws and the landing check all decode it here.
func DecodeStoreDoc(body []byte) (*Snapshot, error) {
	snap, err := decodeStrict[Snapshot](body)
	if err != nil {
		return nil, err
	}
	if snap.Schema != StoreSchema {
		return nil, fmt.Errorf("schema %q, this m1nd reads %q", snap.Schema, StoreSchema)
	}
	return snap, nil
}

func (s *Store) blockEntries(root gitstore.Hash) ([]gitstore.TreeEntry, error) {
	entries, err := s.Repo.TreeEntries(root)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name == blocksDir && e.Mode == gitstore.ModeTree {
			return s.Repo.TreeEntries(e.Hash)
		}
	}
	return nil, nil
}

// decodeBlock decodes blocks/<id>.json and checks it holds block id.
func decodeBlock(id string, body []byte) (*Block, error) {
	b, err := decodeStrict[Block](body)
	if err != nil {
		return nil, fmt.Errorf("%s/%s.json: %w", blocksDir, id, err)
	}
	if b.BlockID != id {
		return nil, fmt.Errorf("%s/%s.json holds block %q", blocksDir, id, b.BlockID)
	}
	// The file is indented for people reading it with git; a receipt is
	// handed out in the compact bytes it was imported as.
	for i, r := range b.Receipts {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Receipt); err != nil {
			return nil, fmt.Errorf("%s/%s.json receipt %d: %w", blocksDir, id, i, err)
		}
		b.Receipts[i].Receipt = buf.Bytes()
	}
	return b, nil
}

// mutation is one change to the store.
type mutation struct {
	op        StoreOp // what the commit says it is, checked by the laws
	seat      string  // candidate_edit: owner or runner
	expected  int64   // the store_version the caller read; 0 for "no store yet"
	needStore bool    // refuse no_store when there is none
	agent     string
	origin    string // the human gesture's origin, stamped as a trailer
	// gesture names a human gesture (rules.Gesture…): its origin is
	// checked before anything else, and its commit is prepared and judged
	// as a gesture's (chain.Prepared).
	gesture string
	lands   *Landing // a landing's import: what its proof binds besides the store change
	proof   *rules.Proof
	// dryRun prepares the gesture's commit and writes its objects, but moves
	// no ref: the result's Prepared is what a passkey signs.
	dryRun bool
	now    time.Time
	// apply changes the snapshot (a private copy, already at the new
	// store_version) and returns what the commit subject says after
	// "store vN: ", or errUnchanged.
	apply func(next *Snapshot) (subject string, err error)
}

// errUnchanged is returned by an apply that found nothing to change: no
// commit is written and the version stays.
var errUnchanged = errors.New("store unchanged")

// MutationResult is the outcome of a store write.
type MutationResult struct {
	StoreVersion int64  `json:"store_version"`
	Changed      bool   `json:"changed"`
	Subject      string `json:"subject,omitempty"`
	Commit       string `json:"commit,omitempty"`

	// Prepared is, for a gesture prepared with DryRun, the commit it will
	// write and what its proof binds.
	Prepared *chain.Prepared `json:"-"`
}

// mutate runs the store's OCC law around one change: read the head, check
// the expected version, apply the change to a copy, write the new snapshot
// and move the ref by compare-and-swap. A human gesture's commit is judged
// by the store's laws, its proof included, before the ref moves. A refusal
// or failure writes nothing the ref can reach.
func (s *Store) mutate(ctx context.Context, m mutation) (*Snapshot, *MutationResult, error) {
	if m.gesture != "" {
		if err := rules.RequireHumanOrigin(m.origin, rules.GestureField(m.gesture)); err != nil {
			return nil, nil, err
		}
	}
	if err := checkAuthor(m.agent); err != nil {
		return nil, nil, err
	}
	cur, ok, err := s.Snapshot()
	if err != nil {
		return nil, nil, err
	}
	var version int64
	if ok {
		version = cur.StoreVersion
	} else if m.needStore {
		return nil, nil, rules.Refuse(rules.NoStore, "")
	}
	if m.expected != version {
		return nil, nil, conflict(m.expected, version)
	}
	next := cur.clone()
	next.Schema = StoreSchema
	next.StoreVersion = version + 1
	subject, err := m.apply(next)
	if errors.Is(err, errUnchanged) {
		return cur, &MutationResult{StoreVersion: version}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	sortBlocks(next)
	parent := gitstore.ZeroHash
	if ok {
		parent = cur.Commit
	}
	tree, err := s.writeTree(next)
	if err != nil {
		return nil, nil, fmt.Errorf("store v%d: %s: %w", next.StoreVersion, subject, err)
	}
	meta, named := commitMeta(next.StoreVersion, m, subject)
	var commit gitstore.Hash
	if m.gesture == "" {
		commit, err = chain.Chain{Repo: s.Repo, Kind: StoreKind, Ref: StoreRef}.AppendTree(ctx, parent, tree, meta)
	} else {
		p := &chain.Prepared{Chain: chain.Chain{Repo: s.Repo, Kind: StoreKind, Ref: StoreRef}, Parent: parent, Tree: tree, Meta: meta, Gesture: m.gesture, Change: StoreChange(parent, tree)}
		if m.lands != nil {
			p.Change = LandChange(m.lands, parent, tree)
		}
		if m.dryRun {
			return next, &MutationResult{StoreVersion: next.StoreVersion, Prepared: p}, nil
		}
		commit, err = s.commitGesture(ctx, p, m.origin, m.proof)
	}
	if errors.Is(err, chain.ErrLostRace) {
		return nil, nil, rules.Refusef(rules.StoreVersionConflict, "expected_store_version",
			"another writer moved the store while this change was being written; read it again and resend")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store v%d: %s: %w", next.StoreVersion, subject, err)
	}
	next.Commit = commit
	return next, &MutationResult{StoreVersion: next.StoreVersion, Changed: true,
		Subject: named.Subject(), Commit: commit.String()}, nil
}

func conflict(expected, actual int64) error {
	if actual == 0 {
		return rules.Refusef(rules.StoreVersionConflict, "expected_store_version",
			"this brain has no store yet (version 0), not version %d", expected)
	}
	return rules.Refusef(rules.StoreVersionConflict, "expected_store_version",
		"the store is at version %d, not %d; read it again and resend with the new version", actual, expected)
}

// checkAuthor holds store writers to the agent id rule every other chain
// keeps: the id becomes the commit's identity.
func checkAuthor(agent string) error {
	if !rules.ValidAgentID(agent) {
		return fmt.Errorf("store write: %q is not an agent id (%s)", agent, rules.AgentIDRule)
	}
	return nil
}

// clone deep-copies a snapshot so a mutation can fail halfway through
// without touching what was read; nil clones to an empty store.
func (s *Snapshot) clone() *Snapshot {
	out := &Snapshot{}
	if s == nil {
		return out
	}
	b, err := encode(s)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	blocks, err2 := encode(s.Blocks)
	if err2 == nil {
		err2 = json.Unmarshal(blocks, &out.Blocks)
	}
	if err != nil || err2 != nil {
		panic(fmt.Sprintf("brain: snapshot does not round-trip through JSON: %v %v", err, err2))
	}
	return out
}

func sortBlocks(s *Snapshot) {
	sort.Slice(s.Blocks, func(i, j int) bool { return s.Blocks[i].BlockID < s.Blocks[j].BlockID })
	s.index()
}

// encode writes a document the way the store keeps it: indented, so `git
// show refs/m1nd/store:store.json` and `git diff` read well, and without
// HTML escaping, so a stored receipt keeps its bytes (a command's && is not
// re-spelled \u0026\u0026 on the way in or on any later write).
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// writeTree stores the snapshot's objects and returns its tree; nothing
// points at them until a commit does.
func (s *Store) writeTree(snap *Snapshot) (gitstore.Hash, error) {
	blockEntries := make([]gitstore.TreeEntry, 0, len(snap.Blocks))
	for _, b := range snap.Blocks {
		if !ValidBlockID(b.BlockID) {
			return gitstore.ZeroHash, fmt.Errorf("block id %q is not valid", b.BlockID)
		}
		body, err := encode(b)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		h, err := s.Repo.WriteBlob(body)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		blockEntries = append(blockEntries, gitstore.TreeEntry{Name: b.BlockID + ".json", Mode: gitstore.ModeFile, Hash: h})
	}
	root := make([]gitstore.TreeEntry, 0, 2)
	if len(blockEntries) > 0 {
		blocks, err := s.Repo.WriteTree(blockEntries)
		if err != nil {
			return gitstore.ZeroHash, err
		}
		root = append(root, gitstore.TreeEntry{Name: blocksDir, Mode: gitstore.ModeTree, Hash: blocks})
	}
	body, err := encode(snap)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	doc, err := s.Repo.WriteBlob(body)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	root = append(root, gitstore.TreeEntry{Name: StoreFile, Mode: gitstore.ModeFile, Hash: doc})
	return s.Repo.WriteTree(root)
}

// commitMeta is what names a store commit, and the name itself (its Doc);
// a gesture's origin and proof
// are added by its Prepared commit, any other origin here.
func commitMeta(version int64, m mutation, subject string) (chain.Commit, StoreCommit) {
	named := StoreCommit{Version: version, Op: m.op, Seat: m.seat, What: subject}
	if m.lands != nil {
		named.Mission = m.lands.MissionID
	}
	meta := chain.Commit{Agent: m.agent, When: m.now, Doc: named}
	if m.origin != "" && m.gesture == "" {
		meta.Origin = m.origin
	}
	return meta, named
}
