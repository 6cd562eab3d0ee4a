package brain

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/rules"

	"github.com/m1nd/m1nd/gitstore"
)

// WriteRequest is what every store write carries: the version the caller
// read, who writes, and when.
type WriteRequest struct {
	ExpectedStoreVersion int64
	Agent                string
	Now                  time.Time // zero means time.Now()
}

// at is when the write happens: Now, or the clock when it is zero.
func (r WriteRequest) at() time.Time {
	if r.Now.IsZero() {
		return time.Now()
	}
	return r.Now
}

// ErrNoHead means the main worktree's HEAD has no commit to scan.
var ErrNoHead = errors.New("HEAD has no commit yet; commit your files, then scan")

// headFiles lists the tracked files at the main worktree's HEAD.
func (s *Store) headFiles() (gitstore.Hash, []string, error) {
	head, ok, err := s.Repo.MainHead()
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	if !ok {
		return gitstore.ZeroHash, nil, ErrNoHead
	}

	files, err := s.Repo.ListFiles(head)
	return head, files, err
}

// ScanResult reports a scan.
type ScanResult struct {
	MutationResult
	SkeletonID string   `json:"skeleton_id"`
	Added      []string `json:"added,omitempty"`    // blocks added to a candidate skeleton
	Revision   int64    `json:"revision,omitempty"` // the candidate revision written for a ratified skeleton
	New        []string `json:"new,omitempty"`
	Gone       []string `json:"gone,omitempty"`
}

// Scan proposes blocks from the tracked files at HEAD: one candidate block
// per top-level directory and one for the files at the root. With no store
// it creates the store (version 1) with a candidate skeleton; on a
// candidate skeleton it adds blocks for what no block covers yet and
// leaves the owner's blocks alone; on a ratified skeleton it writes only a
// candidate revision beside the ratified blocks.
func (s *Store) Scan(ctx context.Context, req WriteRequest) (*ScanResult, error) {
	head, files, err := s.headFiles()
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	res := &ScanResult{}
	_, mres, err := s.mutate(ctx, mutation{
		op: StoreOpScan, expected: req.ExpectedStoreVersion, agent: req.Agent, now: req.at(),
		apply: func(next *Snapshot) (string, error) {
			slug := repoSlug(s.Brain)
			if next.Skeleton.SkeletonID == "" {
				next.Skeleton = Skeleton{SkeletonID: "sk_" + slug + "_candidate", Version: 1, State: StateCandidate}
			}
			res.SkeletonID = next.Skeleton.SkeletonID
			if next.Skeleton.State == StateRatified {
				return s.scanRevision(next, head, files, res)
			}
			unmapped := ownership(next.Blocks, files).Unmapped
			if len(next.Blocks) > 0 {
				// Files added at the root of a curated skeleton are the
				// owner's to place (assign_unmapped); new directories get
				// blocks of their own.
				unmapped = nestedOnly(unmapped)
			}
			proposed := heuristicBlocks(slug, unmapped, next.Block)
			if len(proposed) == 0 {
				return "", errUnchanged
			}
			for _, b := range proposed {
				// The scan's HEAD is the block's baseline: a file that
				// changes before the next reconcile is a boundary change.
				b.Fingerprint = fingerprint(b.resolve(files))
				next.Blocks = append(next.Blocks, b)
				res.Added = append(res.Added, b.BlockID)
			}
			sort.Strings(res.Added)
			if len(next.Blocks) > len(proposed) {
				next.Skeleton.Version++
			}
			return fmt.Sprintf("scan %s (%s)", next.Skeleton.SkeletonID, rules.Count(len(proposed), "new block")), nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.MutationResult = *mres
	return res, nil
}

// scanRevision records the full heuristic proposal for a ratified skeleton
// as a candidate revision; the ratified blocks are not touched.
func (s *Store) scanRevision(next *Snapshot, head gitstore.Hash, files []string, res *ScanResult) (string, error) {
	proposal := heuristicBlocks(repoSlug(s.Brain), files, func(string) *Block { return nil })
	rev := &CandidateRevision{Head: head.String(), Blocks: proposal}
	for _, b := range proposal {
		if next.Block(b.BlockID) == nil {
			rev.New = append(rev.New, b.BlockID)
		}
	}
	for _, b := range next.Blocks {
		if len(b.resolve(files)) == 0 {
			rev.Gone = append(rev.Gone, b.BlockID)
		}
	}
	if old := next.Revision; old != nil && reflect.DeepEqual(old.Blocks, rev.Blocks) &&
		reflect.DeepEqual(old.New, rev.New) && reflect.DeepEqual(old.Gone, rev.Gone) {
		res.Revision = old.Revision
		return "", errUnchanged
	}
	rev.Revision = 1
	if next.Revision != nil {
		rev.Revision = next.Revision.Revision + 1
	}
	next.Revision = rev
	res.Revision, res.New, res.Gone = rev.Revision, rev.New, rev.Gone
	return fmt.Sprintf("scan %s candidate revision %d (%d new, %d gone)", next.Skeleton.SkeletonID, rev.Revision, len(rev.New), len(rev.Gone)), nil
}

// heuristicBlocks proposes one block per top-level directory of files and
// one for root files; ids already taken (taken != nil) get a suffix.
func heuristicBlocks(slug string, files []string, taken func(string) *Block) []*Block {
	dirs, names := topLevel(files)
	var out []*Block
	used := map[string]bool{}
	isTaken := func(id string) bool { return used[id] || taken(id) != nil }
	for _, dir := range names {
		b := &Block{
			Kind: KindDirectory, State: StateCandidate, BoundaryVersion: 1, ContractVersion: 1,
			Sockets: []Socket{}, Receipts: []StoredReceipt{},
			ReceiptContract: ReceiptContract{Required: []string{"test"}},
			CandidateMeta:   CandidateMeta{NamedBy: NamedByHeuristic, NeedsOwnerNaming: true},
		}
		dirSlug := Slug(dir)
		if dir == "" {
			b.Kind, b.Name, b.Purpose, dirSlug = KindRoot, "root files", "files at the repository root (named by the scan)", "root"
			for _, f := range dirs[dir] {
				b.Membership = append(b.Membership, Member{Path: f, Role: RolePrimary})
			}
		} else {
			b.Name, b.Purpose = dir, fmt.Sprintf("files under %s/ (named by the scan)", dir)
			b.Membership = []Member{{Path: dir + "/", Role: RolePrimary}}
		}
		if dirSlug == "" {
			dirSlug = "dir"
		}
		b.BlockID = freeID("sb_"+slug+"_"+dirSlug, isTaken)
		used[b.BlockID] = true
		out = append(out, b)
	}
	return out
}

// ReconcileResult reports a reconcile.
type ReconcileResult struct {
	MutationResult
	Baselined []string `json:"baselined,omitempty"` // blocks whose first fingerprint was recorded
	Bumped    []string `json:"bumped,omitempty"`    // blocks whose boundary_version went up
	Unmapped  []string `json:"unmapped"`            // files at HEAD no block covers
	Contested []string `json:"contested"`           // files several blocks claim without sharing
}

// Reconcile re-resolves every block's membership at HEAD. The membership
// fingerprint is sha256 of the sorted resolved paths; when it changed the
// block's boundary_version goes up by one (receipts proved at the old
// boundary stop counting). The scan and every edit of a block's membership
// record its fingerprint at their HEAD; a block without one (a store
// written by an older m1nd or by hand) only gets its baseline recorded.
func (s *Store) Reconcile(ctx context.Context, req WriteRequest) (*ReconcileResult, error) {
	_, files, err := s.headFiles()
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	res := &ReconcileResult{Unmapped: []string{}, Contested: []string{}}
	_, mres, err := s.mutate(ctx, mutation{
		op: StoreOpReconcile, expected: req.ExpectedStoreVersion, needStore: true, agent: req.Agent, now: req.at(),
		apply: func(next *Snapshot) (string, error) {
			own := ownership(next.Blocks, files)
			res.Unmapped, res.Contested = nonNil(own.Unmapped), nonNil(own.Contested)
			for _, b := range next.Blocks {
				fp := fingerprint(b.resolve(files))
				switch b.Fingerprint {
				case fp:
					continue
				case "":
					res.Baselined = append(res.Baselined, b.BlockID)
				default:
					b.BoundaryVersion++
					res.Bumped = append(res.Bumped, b.BlockID)
				}
				b.Fingerprint = fp
			}
			if len(res.Baselined)+len(res.Bumped) == 0 {
				return "", errUnchanged
			}
			var parts []string
			if len(res.Bumped) > 0 {
				parts = append(parts, "bumped "+listIDs(res.Bumped))
			}
			if len(res.Baselined) > 0 {
				parts = append(parts, "baselined "+rules.Count(len(res.Baselined), "block"))
			}
			return "reconcile: " + strings.Join(parts, "; "), nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.MutationResult = *mres
	return res, nil
}

// Layout is the current ownership of the files at HEAD, for display.
func (s *Store) Layout(snap *Snapshot) (Ownership, error) {
	_, files, err := s.headFiles()
	if err != nil {
		return Ownership{}, err
	}
	return ownership(snap.Blocks, files), nil
}

func nestedOnly(files []string) []string {
	var out []string
	for _, f := range files {
		if strings.Contains(f, "/") {
			out = append(out, f)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
