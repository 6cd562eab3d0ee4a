package ops

import (
	"context"
	"sort"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/mailbox"
)

// The flows an agent's session hooks run (package session): mail handed
// into a live session once, its fate as the session answers, the missions
// the agent holds. Each is asked of the brain, never of a kind directly.

// RuntimeDir is the brain's runtime folder ($(git rev-parse
// --git-common-dir)/m1nd): host-local state, never in a ref.
func (b *Flows) RuntimeDir() string { return b.repo.RuntimeDir() }

// WorkTree is the folder of the worktree the brain was opened from.
func (b *Flows) WorkTree() string { return b.repo.WorkTree() }

// Deliver hands agent's waiting letters to the session's turn, within
// budget, each exactly once (mailbox.Mailbox.Deliver).
func (b *Flows) Deliver(ctx context.Context, agent string, turn mailbox.Turn, budget mailbox.Budget) (*mailbox.Delivery, error) {
	return b.box.Deliver(ctx, agent, turn, budget)
}

// Answered records how far session has answered the letters delivered to
// it (mailbox.Mailbox.Answered).
func (b *Flows) Answered(ctx context.Context, agent, session string, p mailbox.Progress) error {
	return b.box.Answered(ctx, agent, session, p)
}

// Unread is agent's letters not yet delivered to any session.
func (b *Flows) Unread(agent string) ([]mailbox.Stored, error) { return b.box.Waiting(agent) }

// Pending is how many of agent's letters wait for delivery.
func (b *Flows) Pending(agent string) (int, error) { return b.box.Pending(agent) }

// AgentMissions are the heads not yet landed, archived or failed whose
// newest letter agent wrote (or whose runner it is), newest first.
func (b *Flows) AgentMissions(ctx context.Context, agent string) ([]*chain.Head, error) {
	view, err := b.missions.Heads(ctx, "")
	if err != nil {
		return nil, err
	}
	author, err := chain.AgentRefName(agent)
	if err != nil {
		return nil, err
	}
	var out []*chain.Head
	for _, h := range view.Missions {
		switch h.Letter.Phase {
		case chain.PhaseLanded, chain.PhaseArchived, chain.PhaseFailed:
			continue
		}
		if r := h.Letter.RunnerID; r != nil && chain.RunnerAgent(*r) == agent {
			out = append(out, h)
			continue
		}
		c, err := b.repo.ReadCommit(h.Commit)
		if err != nil {
			return nil, err
		}
		if c.Author.Name == author {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Letter.UpdatedAt > out[j].Letter.UpdatedAt })
	return out, nil
}
