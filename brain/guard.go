package brain

import (
	"errors"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// CheckLetterBlock is post step 3 for mission letters (chain.BlockGuard):
// when the brain has a store, the letter's block_id must name one of its
// blocks or its skeleton (a skeleton-scoped mission anchors there), and a
// receipt candidate must name a block at the boundary and contract it
// claims. A brain with no store accepts. It reads only store.json and the
// named block files, never the whole store.
func (s *Store) CheckLetterBlock(blockID string, candidate *rules.Receipt) error {
	head, ok, err := s.Repo.ReadRef(StoreRef)
	if err != nil || !ok {
		return err
	}
	c, err := s.Repo.ReadCommit(head)
	if err != nil {
		return err
	}
	b, err := s.lookup(c.Tree, blockID, true)
	if err != nil {
		return err
	}
	if candidate == nil || candidate.BlockID == "" {
		return nil
	}
	if b == nil || candidate.BlockID != blockID { // else the block just read
		if b, err = s.lookup(c.Tree, candidate.BlockID, false); err != nil {
			if r, ok := rules.AsRefusal(err); ok {
				r.Field = "receipt_candidate.block_id"
			}
			return err
		}
	}
	if err := checkScope(b, candidate); err != nil {
		if r, ok := rules.AsRefusal(err); ok {
			r.Field = "receipt_candidate." + r.Field
		}
		return err
	}
	return nil
}

// lookup reads one block from the store tree; with skeletonOK the
// skeleton's own id is accepted too (and nil returned).
func (s *Store) lookup(tree gitstore.Hash, id string, skeletonOK bool) (*Block, error) {
	unknown := func() error {
		return rules.Refusef(rules.UnknownBlock, "block_id", "this brain has no block %s; use an id from `m1nd blocks`, the skeleton id, or mark a probe synthetic", rules.Echo(id))
	}
	if ValidBlockID(id) {
		body, err := s.Repo.ReadFileInTree(tree, blocksDir+"/"+id+".json")
		if errors.Is(err, gitstore.ErrNoSuchFile) {
			return nil, unknown()
		}
		if err != nil {
			return nil, err
		}
		return decodeBlock(id, body)
	}
	if skeletonOK && ValidSkeletonID(id) {
		snap, err := s.readStoreDoc(tree)
		if err != nil {
			return nil, err
		}
		if snap.Skeleton.SkeletonID == id {
			return nil, nil
		}
	}
	return nil, unknown()
}
