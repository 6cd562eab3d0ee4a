package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
)

// Status is the brain at a glance (`m1nd status --json`, the tray's GET
// /api/status): its name, the store version and skeleton, blocks per
// colour, mission heads per phase and the landing bell.
type Status struct {
	Brain        string         `json:"brain"`
	StoreVersion int64          `json:"store_version"`          // 0 while there is no store
	Skeleton     *SkeletonState `json:"skeleton,omitempty"`     // absent while there is no store
	Blocks       map[string]int `json:"blocks"`                 // colour → blocks of that colour
	Missions     int            `json:"missions"`               // missions, one head each
	Phases       map[string]int `json:"phases"`                 // phase → heads in that phase
	LandingBell  *LandingBell   `json:"landing_bell,omitempty"` // absent, not null, when no head waits (DESIGN §4)
	Parked       []Parked       `json:"parked,omitempty"`       // history a sync parked, until it is re-posted and dropped
	// Broken lists the refs whose history breaks the laws (written past
	// the hooks): the store, the keys, the runner pins and mission heads.
	// Nothing proceeds on them; m1nd verify names each commit.
	Broken []*laws.RefFault `json:"broken,omitempty"`
}

// Parked is local history a sync parked when another clone extended the
// same ref first: it stays listed until the owner re-posts its letters and
// deletes the ref.
type Parked struct {
	Ref    string `json:"ref"`    // the parked ref, under refs/m1nd/conflicts/
	Of     string `json:"of"`     // the ref it forked from
	Commit string `json:"commit"` // the parked head
	Lesson string `json:"lesson"`
}

// ParkedConflicts lists the history sync parked in repo that is still
// there.
func ParkedConflicts(repo *gitstore.Repo) ([]Parked, error) {
	refs, err := repo.ListRefs(chain.ConflictsPrefix)
	if err != nil {
		return nil, err
	}
	out := []Parked{}
	for _, r := range refs {
		rest := strings.TrimPrefix(r.Name, chain.ConflictsPrefix)
		if i := strings.LastIndexByte(rest, '/'); i > 0 {
			rest = rest[:i]
		}
		of := chain.RefRoot + rest
		what := "re-post its letters"
		if id, ok := strings.CutPrefix(of, chain.MissionRefPrefix); ok {
			what = fmt.Sprintf("re-post its letters on the new head (m1nd mission next %s)", id)
		}
		out = append(out, Parked{Ref: r.Name, Of: of, Commit: r.Hash.String(),
			Lesson: fmt.Sprintf("a sync parked your commits on %s here, after another clone extended it first: %s, then drop it with git update-ref -d %s", of, what, r.Name)})
	}
	return out, nil
}

// SkeletonState names the store's skeleton and whether it is ratified.
type SkeletonState struct {
	SkeletonID string `json:"skeleton_id"`
	State      string `json:"state"`
}

// LandingBell counts the heads in merge_wait (waiting for a human to land
// the receipt) and, of those, the ones ready to land now — a human lands
// only what an approved runner's gate passed on as it would land
// (QueueView) — and the claims no approved runner proved yet.
type LandingBell struct {
	MergeWait int `json:"merge_wait"`
	Ready     int `json:"ready"`
	Claimed   int `json:"claimed,omitempty"`
}

// HasStore reports whether the brain has a store yet.
func (s *Status) HasStore() bool { return s.Skeleton != nil }

// BlockCount is how many blocks the store has.
func (s *Status) BlockCount() int {
	n := 0
	for _, c := range s.Blocks {
		n += c
	}
	return n
}

// landingBell is what waits to land among heads (nil: nothing in
// merge_wait): how many, how many are ready, how many a runnerd proves.
func (b *Flows) landingBell(ctx context.Context, heads []*chain.Head) (*LandingBell, error) {
	n := chain.LandingBell(heads)
	if n == 0 {
		return nil, nil
	}
	queue, err := b.Queue(ctx, heads)
	if err != nil {
		return nil, err
	}
	bell := &LandingBell{MergeWait: n, Ready: ReadyBell(heads, queue)}
	for _, q := range queue {
		if q.State == QueueClaimed || q.State == QueueProving {
			bell.Claimed++
		}
	}
	return bell, nil
}

// Status reads the brain's status; colours are as of now.
func (b *Flows) Status(ctx context.Context, now time.Time) (*Status, error) {
	snap, hasStore, err := b.store.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("status: read the store: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	heads, err := b.Heads(ctx, "", false) // counts by phase: no letter decoded
	if err != nil {
		return nil, fmt.Errorf("status: read the mission heads: %w", err)
	}
	st := &Status{Brain: b.Name(), Blocks: map[string]int{}, Missions: len(heads.Missions), Phases: chain.PhaseCounts(heads.Missions)}
	if st.Broken, err = b.Faults(ctx); err != nil {
		return nil, fmt.Errorf("status: judge the store and the keys: %w", err)
	}
	for _, h := range heads.Missions {
		if h.Fault != nil {
			st.Broken = append(st.Broken, &laws.RefFault{Ref: chain.MissionRefPrefix + h.MissionID, Commit: h.Fault.Commit, Code: h.Fault.Refused, Lesson: h.Fault.Lesson})
		}
	}
	if hasStore {
		for _, f := range st.Broken {
			if f.Ref == brain.StoreRef {
				if _, snap, err = b.lawfulStore(ctx, snap); err != nil {
					return nil, fmt.Errorf("status: %w", err)
				}
				break
			}
		}
	}
	if hasStore && snap != nil {
		st.StoreVersion = snap.StoreVersion
		st.Skeleton = &SkeletonState{SkeletonID: snap.Skeleton.SkeletonID, State: snap.Skeleton.State}
		for _, blk := range snap.Blocks {
			st.Blocks[string(blk.Colour(now).Colour)]++
		}
	}
	if st.LandingBell, err = b.landingBell(ctx, heads.Missions); err != nil {
		return nil, fmt.Errorf("status: the landing queue: %w", err)
	}
	if st.Parked, err = ParkedConflicts(b.repo); err != nil {
		return nil, fmt.Errorf("status: read the parked conflicts: %w", err)
	}
	if len(st.Parked) == 0 {
		st.Parked = nil
	}
	return st, nil
}
