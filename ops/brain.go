package ops

import (
	"sync"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
)

// Flows is one brain as the flows see it: its repository, its display
// name, and the kinds the flows read and write.
type Flows struct {
	repo     *gitstore.Repo
	missions *chain.Missions  // mission chains, guarded by Store
	store    *brain.Store     // the block store
	box      *mailbox.Mailbox // mail
	book     *memory.Book     // memories and follow-ups

	verdictsOnce sync.Once
	verdicts     *laws.Verdicts // the laws' verdicts on the refs, read once (Verdicts)
	ancestry     ancestry       // which commit holds which, asked of git once
	diffs        diffMemo       // which files differ between two commits, asked of git once
	titles       titleMemo      // each packet's ask line, read once
}

// Name is the brain's display name (brain.DisplayName), as New was given
// it: the one name its parts share (the store spells block ids after it,
// missions and mail refuse letters that name another).
func (b *Flows) Name() string { return b.store.Brain }

// New opens the flows of the brain named name in repo.
func New(repo *gitstore.Repo, name string) *Flows {
	store := &brain.Store{Repo: repo, Brain: name}
	b := &Flows{
		repo:     repo,
		missions: &chain.Missions{Repo: repo, Brain: name, Blocks: store, Gates: store},
		store:    store,
		box:      mailbox.New(repo, name),
		book:     &memory.Book{Repo: repo},
	}
	b.missions.Work = WorkBranches(repo)
	return b
}

// WorkBranches answers the post law's question of the work branches
// (chain.WorkGuard) from repo's refs: every writer of letters here asks it.
func WorkBranches(repo *gitstore.Repo) chain.WorkGuard { return workBranches{repo} }

// workBranches answers the post law's question of the work branches
// (chain.WorkGuard) from the repository's refs.
type workBranches struct{ repo *gitstore.Repo }

func (w workBranches) OnWorkBranch(missionID, commit string) (on, has bool, err error) {
	tip, has, err := w.repo.ReadRef("refs/heads/" + WorkBranch(missionID))
	if err != nil || !has {
		return false, has, err
	}
	want, err := gitstore.ParseHash(commit)
	if err != nil {
		return false, true, nil
	}
	err = w.repo.WalkFirstParent(tip, func(h gitstore.Hash, _ *gitstore.Commit) error {
		if h == want {
			on = true
			return gitstore.ErrStopWalk
		}
		return nil
	})
	return on, true, err
}
