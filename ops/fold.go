package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// DefaultFoldAge is how long a mission stays finished before `m1nd
// mission fold` folds it by default: long enough that nobody still reads
// it every day.
const DefaultFoldAge = 30 * 24 * time.Hour

// FoldRequest asks to fold the finished missions whose last letter is
// older than OlderThan into the archive (chain.ArchiveRef).
type FoldRequest struct {
	OlderThan time.Duration
	Agent     string // who writes the fold commits
	Now       time.Time
}

// FoldResult is what Fold did.
type FoldResult struct {
	// Folded are the missions folded now; Folds how many fold commits
	// hold them.
	Folded []string `json:"folded"`
	Folds  int      `json:"folds"`
	// Removed counts the live refs deleted: the missions folded now, and
	// any folded before whose live ref a fold cut short left behind.
	Removed int `json:"removed"`
	// Broken are finished missions not folded because their history
	// breaks the laws (m1nd verify names them): nothing folds broken.
	Broken []*laws.RefFault `json:"broken"`
	// Live is how many live mission refs remain; Archived how many
	// missions the archive holds.
	Live     int `json:"live"`
	Archived int `json:"archived"`
}

// foldFacts are the head letter's fields a fold lists.
type foldFacts struct {
	MissionID string `json:"mission_id"`
	Phase     string `json:"phase"`
	BlockID   string `json:"block_id"`
	UpdatedAt string `json:"updated_at"`
}

// Fold folds every finished mission (landed or archived) whose last letter
// is older than req.OlderThan into the archive, at most chain.MaxFold per
// fold commit, then deletes their live refs, each at exactly the head
// folded. Each chain is judged first: a broken one is listed, not folded.
// A fold that another fold beat to the archive's head is refused
// stale_head (run it again); a kill between the fold commit and the
// deletions leaves live refs the archive folds at the same head, which
// every reader takes as one mission and the next fold deletes.
func (b *Flows) Fold(ctx context.Context, req FoldRequest) (*FoldResult, error) {
	res := &FoldResult{Folded: []string{}, Broken: []*laws.RefFault{}}
	archive := &folder{chain: chain.Chain{Repo: b.repo, Kind: chain.ArchiveKind, Ref: chain.ArchiveRef}, req: req}
	if err := archive.readTip(); err != nil {
		return nil, err
	}
	index, err := chain.ArchiveIndex(b.repo, archive.head)
	if err != nil {
		return nil, fmt.Errorf("fold: %w", err)
	}
	refs, err := b.repo.ListRefs(chain.MissionRefPrefix)
	if err != nil {
		return nil, err
	}
	fold, remove, err := b.foldable(refs, index, req.Now.Add(-req.OlderThan), res)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := archive.write(ctx, fold, res); err != nil {
		return nil, err
	}
	notDeleted, err := b.repo.DeleteRefs(ctx, remove)
	if err != nil {
		return nil, fmt.Errorf("the missions are folded; deleting their live refs: %w (m1nd mission fold again deletes them)", err)
	}
	res.Removed = len(remove) - len(notDeleted)
	res.Live = len(refs) - res.Removed
	res.Archived = len(index) + len(res.Folded)
	return res, nil
}

// foldable chooses, among the live mission refs, what to fold (finished
// before cutoff, and keeping the laws: a broken chain goes to res.Broken)
// and which live refs to remove: those folded now, and those a fold cut
// short left behind at the head the archive holds.
func (b *Flows) foldable(refs []gitstore.Ref, index map[string]chain.Folded, cutoff time.Time, res *FoldResult) (fold []chain.Folded, remove []gitstore.Ref, err error) {
	facts := make([]*foldFacts, len(refs))
	readErrs := make([]error, len(refs))
	gitstore.Parallel(len(refs), func(i int) {
		body, _, err := b.repo.ReadFileAt(refs[i].Hash, chain.LetterFile)
		if err == nil {
			facts[i] = &foldFacts{}
			err = json.Unmarshal(body, facts[i])
		}
		readErrs[i] = err
	})
	judge, err := laws.ForRepo(b.repo)
	if err != nil {
		return nil, nil, err
	}
	for i, r := range refs {
		id := strings.TrimPrefix(r.Name, chain.MissionRefPrefix)
		if !chain.ValidMissionID(id) || readErrs[i] != nil {
			continue // verify names what does not read; nothing folds it
		}
		if m, done := index[id]; done {
			if m.Head == r.Hash.String() {
				remove = append(remove, r) // folded, its live ref left behind
			}
			continue
		}
		if f := facts[i]; !f.finishedBefore(cutoff) {
			continue
		}
		if fault := judge.Check(b.repo, laws.Update{New: r.Hash, Ref: r.Name}); fault != nil {
			res.Broken = append(res.Broken, fault)
			continue
		}
		f := facts[i]
		fold = append(fold, chain.Folded{MissionID: id, Head: r.Hash.String(), Phase: f.Phase, BlockID: f.BlockID, UpdatedAt: f.UpdatedAt})
		remove = append(remove, r)
	}
	return fold, remove, nil
}

// finishedBefore reports whether the head letter is landed or archived,
// and was written before cutoff.
func (f *foldFacts) finishedBefore(cutoff time.Time) bool {
	if !chain.Finished(f.Phase) {
		return false
	}
	at, err := time.Parse(time.RFC3339, f.UpdatedAt)
	return err == nil && at.Before(cutoff)
}

// folder writes fold commits on the archive: head is its tip, next the
// number of the fold to write.
type folder struct {
	chain chain.Chain
	req   FoldRequest
	head  gitstore.Hash
	next  int64
}

// readTip reads the archive's head and the number of the next fold.
func (a *folder) readTip() error {
	last, ok, err := a.chain.Head()
	if err != nil {
		return fmt.Errorf("fold: %w", err)
	}
	if !ok {
		return nil
	}
	f, err := chain.DecodeFold(last.Body)
	if err != nil {
		return fmt.Errorf("fold: %s: %w", chain.ArchiveRef, err)
	}
	a.head, a.next = last.Commit, f.Fold+1
	return nil
}

// write folds fold into the archive, at most chain.MaxFold missions per
// commit; the archive opens with fold 0, a root.
func (a *folder) write(ctx context.Context, fold []chain.Folded, res *FoldResult) error {
	if a.next == 0 && len(fold) > 0 {
		opening := &chain.Fold{Schema: chain.ArchiveSchema, Folded: []chain.Folded{}}
		if err := a.append(ctx, opening, nil, "open the archive"); err != nil {
			return err
		}
	}
	for start := 0; start < len(fold); start += chain.MaxFold {
		part := fold[start:min(start+chain.MaxFold, len(fold))]
		keep := make([]gitstore.Hash, len(part))
		for i, m := range part {
			keep[i], _ = gitstore.ParseHash(m.Head)
		}
		n := a.next
		doc := &chain.Fold{Schema: chain.ArchiveSchema, Fold: n, Folded: part}
		if err := a.append(ctx, doc, keep, fmt.Sprintf("fold %d", n)); err != nil {
			return err
		}
		res.Folds++
		for _, m := range part {
			res.Folded = append(res.Folded, m.MissionID)
		}
	}
	return nil
}

// append writes one fold commit on the archive's head; a head another
// fold moved meanwhile is the caller's stale_head, never a retry. Other
// errors are wrapped with what.
func (a *folder) append(ctx context.Context, doc *chain.Fold, keep []gitstore.Hash, what string) error {
	h, err := a.chain.Append(ctx, a.head, doc.Canonical(), chain.Commit{Agent: a.req.Agent, When: a.req.Now, Doc: doc, Keep: keep})
	if errors.Is(err, chain.ErrLostRace) {
		return rules.Refusef(rules.StaleHead, "archive", "another fold moved %s meanwhile: run m1nd mission fold again", chain.ArchiveRef)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	a.head, a.next = h, a.next+1
	return nil
}
