package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// Status is the brain at a glance (`m1nd status --json`, the tray's GET
// /api/status): its name, the store version and skeleton, blocks per
// colour, mission heads per phase and the landing bell.
type Status struct {
	OK           bool           `json:"ok"`
	Brain        string         `json:"brain"`
	StoreVersion int64          `json:"store_version"`          // 0 while there is no store
	Skeleton     *SkeletonState `json:"skeleton,omitempty"`     // absent while there is no store
	Blocks       map[string]int `json:"blocks"`                 // colour → blocks of that colour
	Missions     int            `json:"missions"`               // missions, one head each
	Phases       map[string]int `json:"phases"`                 // phase → heads in that phase
	LandingBell  *LandingBell   `json:"landing_bell,omitempty"` // absent, not null, when no head waits (DESIGN §4)
}

// SkeletonState names the store's skeleton and whether it is ratified.
type SkeletonState struct {
	SkeletonID string `json:"skeleton_id"`
	State      string `json:"state"`
}

// LandingBell counts the heads in merge_wait: gate green, waiting for a
// human to land the receipt.
type LandingBell struct {
	MergeWait int `json:"merge_wait"`
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

// Status reads the brain's status; colours are as of now.
func (b *Brain) Status(ctx context.Context, now time.Time) (*Status, error) {
	snap, hasStore, err := b.Store.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("status: read the store: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	heads, err := b.Missions.Heads(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("status: read the mission heads: %w", err)
	}
	st := &Status{OK: true, Brain: b.Name, Blocks: map[string]int{}, Missions: len(heads.Missions), Phases: chain.PhaseCounts(heads.Missions)}
	if hasStore {
		st.StoreVersion = snap.StoreVersion
		st.Skeleton = &SkeletonState{SkeletonID: snap.Skeleton.SkeletonID, State: snap.Skeleton.State}
		for _, blk := range snap.Blocks {
			st.Blocks[string(blk.Colour(now).Colour)]++
		}
	}
	if n := chain.LandingBell(heads.Missions); n > 0 {
		st.LandingBell = &LandingBell{MergeWait: n}
	}
	return st, nil
}
