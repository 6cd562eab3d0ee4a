package brain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// RatifyRequest asks to ratify blocks (all of them when BlockIDs is empty).
type RatifyRequest struct {
	WriteRequest
	BlockIDs []string
	Origin   string // ratified_via: the human gesture's origin
	Proof    *rules.Proof
	DryRun   bool // prepare only: the reply's Prepared is what the passkey signs
}

// RatifyResult reports a ratification.
type RatifyResult struct {
	MutationResult
	Ratified      []string `json:"ratified"`
	SkeletonState string   `json:"skeleton_state"`
}

// Ratify is the owner's gesture that makes candidate blocks the brain's
// own. Checks in order: the human origin (first), a store exists, the
// expected version, every target id exists, something is still candidate,
// no target still needs the owner's naming. The skeleton is ratified once
// no candidate block is left.
func (s *Store) Ratify(ctx context.Context, req RatifyRequest) (*RatifyResult, error) {
	now := req.at()
	res := &RatifyResult{}
	_, mres, err := s.mutate(ctx, mutation{
		op: StoreOpRatify, expected: req.ExpectedStoreVersion, needStore: true, agent: req.Agent, origin: req.Origin, gesture: rules.GestureRatify, proof: req.Proof, dryRun: req.DryRun, now: now,
		apply: func(next *Snapshot) (string, error) {
			targets, err := ratifyTargets(next, req.BlockIDs)
			if err != nil {
				return "", err
			}
			if len(targets) == 0 {
				return "", rules.Refusef(rules.SkeletonNotCandidate, "block_ids", "every block named is already ratified; nothing is left to ratify")
			}
			var unnamed []string
			for _, b := range targets {
				if b.CandidateMeta.NeedsOwnerNaming {
					unnamed = append(unnamed, b.BlockID)
				}
			}
			if len(unnamed) > 0 {
				return "", rules.Refusef(rules.NeedsOwnerNaming, "block_ids",
					"%s still %s a heuristic name; rename %s (m1nd skeleton edit) before ratifying",
					listIDs(unnamed), map[bool]string{true: "carries", false: "carry"}[len(unnamed) == 1], map[bool]string{true: "it", false: "them"}[len(unnamed) == 1])
			}
			for _, b := range targets {
				b.State = StateRatified
				res.Ratified = append(res.Ratified, b.BlockID)
			}
			sort.Strings(res.Ratified)
			if allRatified(next) {
				next.Skeleton.State = StateRatified
			}
			next.Skeleton.Ratification = &Ratification{
				Ratifier: req.Agent, RatifiedVia: req.Origin, RatifiedAt: now.UTC().Format(rules.WindowLayout),
				StoreVersion: next.StoreVersion, BlockIDs: res.Ratified,
			}
			res.SkeletonState = next.Skeleton.State
			return fmt.Sprintf("ratify %s (%s)", next.Skeleton.SkeletonID, rules.Count(len(targets), "block")), nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.MutationResult = *mres
	return res, nil
}

// ratifyTargets resolves the ids to ratify: unknown ids refuse before
// anything changes; blocks already ratified are skipped.
func ratifyTargets(snap *Snapshot, ids []string) ([]*Block, error) {
	var targets []*Block
	if len(ids) == 0 {
		for _, b := range snap.Blocks {
			if b.State != StateRatified {
				targets = append(targets, b)
			}
		}
		return targets, nil
	}
	seen := map[string]bool{}
	for _, id := range ids {
		b := snap.Block(id)
		if b == nil {
			return nil, rules.Refusef(rules.UnknownBlock, "block_ids", "this store has no block %s; nothing was ratified", rules.Echo(id))
		}
		if !seen[id] && b.State != StateRatified {
			targets = append(targets, b)
		}
		seen[id] = true
	}
	return targets, nil
}

func allRatified(snap *Snapshot) bool {
	for _, b := range snap.Blocks {
		if b.State != StateRatified {
			return false
		}
	}
	return len(snap.Blocks) > 0
}

func listIDs(ids []string) string {
	if len(ids) > 5 {
		return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return strings.Join(ids, ", ")
}
