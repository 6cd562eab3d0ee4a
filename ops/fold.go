package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
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
	OK bool `json:"ok"`
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
func (b *Brain) Fold(ctx context.Context, req FoldRequest) (*FoldResult, error) {
	res := &FoldResult{OK: true, Folded: []string{}, Broken: []*laws.RefFault{}}
	archive := chain.Chain{Repo: b.Repo, Kind: chain.ArchiveKind, Ref: chain.ArchiveRef}
	archiveHead, next := gitstore.ZeroHash, int64(0)
	if last, ok, err := archive.Head(); err != nil {
		return nil, fmt.Errorf("fold: %w", err)
	} else if ok {
		f, err := chain.DecodeFold(last.Body)
		if err != nil {
			return nil, fmt.Errorf("fold: %s: %w", chain.ArchiveRef, err)
		}
		archiveHead, next = last.Commit, f.Fold+1
	}
	index, err := chain.ArchiveIndex(b.Repo, archiveHead)
	if err != nil {
		return nil, fmt.Errorf("fold: %w", err)
	}
	refs, err := b.Repo.ListRefs(chain.MissionRefPrefix)
	if err != nil {
		return nil, err
	}
	facts := make([]*foldFacts, len(refs))
	readErrs := make([]error, len(refs))
	gitstore.Parallel(len(refs), func(i int) {
		body, _, err := b.Repo.ReadFileAt(refs[i].Hash, chain.LetterFile)
		if err == nil {
			facts[i] = &foldFacts{}
			err = json.Unmarshal(body, facts[i])
		}
		readErrs[i] = err
	})
	judge, err := laws.ForRepo(b.Repo)
	if err != nil {
		return nil, err
	}
	cutoff := req.Now.Add(-req.OlderThan)
	var remove []gitstore.Ref
	var fold []chain.Folded
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
		f := facts[i]
		if f.Phase != chain.PhaseLanded && f.Phase != chain.PhaseArchived {
			continue
		}
		at, err := time.Parse(time.RFC3339, f.UpdatedAt)
		if err != nil || !at.Before(cutoff) {
			continue
		}
		if fault := judge.Check(b.Repo, laws.Update{New: r.Hash, Ref: r.Name}); fault != nil {
			res.Broken = append(res.Broken, fault)
			continue
		}
		fold = append(fold, chain.Folded{MissionID: id, Head: r.Hash.String(), Phase: f.Phase, BlockID: f.BlockID, UpdatedAt: f.UpdatedAt})
		remove = append(remove, r)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if next == 0 && len(fold) > 0 { // the archive opens with fold 0, a root
		h, err := archive.Append(ctx, gitstore.ZeroHash, (&chain.Fold{Schema: chain.ArchiveSchema, Folded: []chain.Folded{}}).Canonical(), chain.Commit{
			Agent: req.Agent, When: req.Now, Subject: "archive fold 0: the archive opens",
		})
		if errors.Is(err, chain.ErrLostRace) {
			return nil, gates.Refusef(gates.StaleHead, "archive", "another fold moved %s meanwhile: run m1nd mission fold again", chain.ArchiveRef)
		}
		if err != nil {
			return nil, fmt.Errorf("open the archive: %w", err)
		}
		archiveHead, next = h, 1
	}
	for start := 0; start < len(fold); start += chain.MaxFold {
		part := fold[start:min(start+chain.MaxFold, len(fold))]
		doc := &chain.Fold{Schema: chain.ArchiveSchema, Fold: next, Folded: part}
		keep := make([]gitstore.Hash, len(part))
		for i, m := range part {
			keep[i], _ = gitstore.ParseHash(m.Head)
		}
		h, err := archive.Append(ctx, archiveHead, doc.Canonical(), chain.Commit{
			Agent: req.Agent, When: req.Now,
			Subject: fmt.Sprintf("archive fold %d: %s", next, gates.Count(len(part), "finished mission")),
			Keep:    keep,
		})
		if errors.Is(err, chain.ErrLostRace) {
			return nil, gates.Refusef(gates.StaleHead, "archive", "another fold moved %s meanwhile: run m1nd mission fold again", chain.ArchiveRef)
		}
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", next, err)
		}
		archiveHead, next = h, next+1
		res.Folds++
		for _, m := range part {
			res.Folded = append(res.Folded, m.MissionID)
		}
	}
	notDeleted, err := b.Repo.DeleteRefs(ctx, remove)
	if err != nil {
		return nil, fmt.Errorf("the missions are folded; deleting their live refs: %w (m1nd mission fold again deletes them)", err)
	}
	res.Removed = len(remove) - len(notDeleted)
	res.Live = len(refs) - res.Removed
	res.Archived = len(index) + len(res.Folded)
	return res, nil
}
