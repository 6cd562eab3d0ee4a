package brain

import (
	"encoding/json"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// StoreSchema names the store document format.
const StoreSchema = "m1nd-system-block-store-v0"

// Skeleton and block states.
const (
	StateCandidate = "candidate"
	StateRatified  = "ratified"
)

// Member roles. A primary member belongs to its block alone; a shared one
// may also belong to other blocks that share it; an excluded entry carves a
// path out of the block's other entries.
const (
	RolePrimary  = "primary"
	RoleShared   = "shared"
	RoleExcluded = "excluded"
)

// Block kinds the scan gives.
const (
	KindDirectory = "directory"
	KindRoot      = "root"
)

// Who named a block.
const (
	NamedByHeuristic = "heuristic"
	SeatOwner        = "owner"
	SeatRunner       = "runner"
)

// Snapshot is the brain store at one store version: the skeleton and its
// blocks. On disk it is one commit of refs/m1nd/store whose tree holds
// store.json (this struct without the blocks) and blocks/<block_id>.json,
// so reading the current store never walks history and a mutation rewrites
// only what changed.
type Snapshot struct {
	Schema       string             `json:"schema"`
	StoreVersion int64              `json:"store_version"`
	Skeleton     Skeleton           `json:"skeleton"`
	Revision     *CandidateRevision `json:"candidate_revision,omitempty"`

	Blocks []*Block       `json:"-"` // sorted by block id
	Commit gitstore.Hash  `json:"-"` // the store commit this snapshot was read from
	byID   map[string]int `json:"-"`
}

// Skeleton is the brain's decomposition into blocks, candidate until the
// owner ratifies it.
type Skeleton struct {
	SkeletonID   string        `json:"skeleton_id"`
	Version      int64         `json:"version"`
	State        string        `json:"state"`
	Ratification *Ratification `json:"ratification,omitempty"`
}

// Ratification records the human gesture that ratified blocks.
type Ratification struct {
	Ratifier     string   `json:"ratifier"`
	RatifiedVia  string   `json:"ratified_via"`
	RatifiedAt   string   `json:"ratified_at"`
	StoreVersion int64    `json:"store_version"`
	BlockIDs     []string `json:"block_ids"`
}

// CandidateRevision is what a scan proposes for a ratified skeleton: the
// ratified blocks stay as they are until the owner acts on it.
type CandidateRevision struct {
	Revision int64    `json:"revision"`
	Head     string   `json:"head"` // the commit scanned
	Blocks   []*Block `json:"blocks"`
	New      []string `json:"new,omitempty"`  // proposed blocks the store lacks
	Gone     []string `json:"gone,omitempty"` // store blocks with no file left at HEAD
}

// Block is one system block: a named part of the repository with its
// members, its connections and the receipts that prove it.
type Block struct {
	BlockID         string          `json:"block_id"`
	Name            string          `json:"name"`
	Purpose         string          `json:"purpose"`
	Kind            string          `json:"kind"`
	State           string          `json:"state"`
	BoundaryVersion int64           `json:"boundary_version"`
	ContractVersion int64           `json:"contract_version"`
	Membership      []Member        `json:"membership"`
	Fingerprint     string          `json:"membership_fingerprint,omitempty"`
	Sockets         []Socket        `json:"sockets"`
	ReceiptContract ReceiptContract `json:"receipt_contract"`
	Receipts        []StoredReceipt `json:"receipts"`
	CandidateMeta   CandidateMeta   `json:"candidate_meta"`
}

// Member is one membership entry: a file path, a directory ("core/"), or a
// glob ("core/*.go", "docs/**").
type Member struct {
	Path string `json:"path"`
	Role string `json:"role"`
}

// Socket is a connection from a block to another block.
type Socket struct {
	To   string `json:"to"`
	Note string `json:"note,omitempty"`
}

// ReceiptContract names the receipt types a block needs to be evidence-backed.
type ReceiptContract struct {
	Required []string `json:"required"`
}

// CandidateMeta says who named a candidate block and whether the owner
// still has to.
type CandidateMeta struct {
	NamedBy          string `json:"named_by"`
	NeedsOwnerNaming bool   `json:"needs_owner_naming"`
}

// StoredReceipt is an imported receipt: the candidate exactly as submitted
// and the import that accepted it.
type StoredReceipt struct {
	Receipt      json.RawMessage `json:"receipt"`
	StoreVersion int64           `json:"store_version"`
	ImportedBy   string          `json:"imported_by"`
	ImportedVia  string          `json:"imported_via"`
	ImportedAt   string          `json:"imported_at"`
	// Lands names the mission a landing's import lands, and the commits
	// its human saw; absent for an import that lands no mission.
	Lands *Landing `json:"lands,omitempty"`
}

// ValidBlockID reports whether id can name a block: sb_ then lowercase
// letters, digits and underscores. Block ids become file names in the
// store's tree, so nothing else is let through.
func ValidBlockID(id string) bool {
	rest, ok := strings.CutPrefix(id, "sb_")
	return ok && rules.IsToken(rest, true, "_", 96)
}

// ValidSkeletonID reports whether id can name a skeleton.
func ValidSkeletonID(id string) bool {
	rest, ok := strings.CutPrefix(id, "sk_")
	return ok && rules.IsToken(rest, true, "_", 96)
}

// Block returns the block with id, or nil.
func (s *Snapshot) Block(id string) *Block {
	if s.byID == nil {
		s.index()
	}
	if i, ok := s.byID[id]; ok {
		return s.Blocks[i]
	}
	return nil
}

func (s *Snapshot) index() {
	s.byID = make(map[string]int, len(s.Blocks))
	for i, b := range s.Blocks {
		s.byID[b.BlockID] = i
	}
}
