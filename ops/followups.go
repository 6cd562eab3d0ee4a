package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
)

// A follow-up is one agent's ask of another. When it closes, its asker
// is told with a letter carrying the result, so nobody polls the book to
// learn how an ask ended; the letter reaches the asker's session through
// its hooks like any other, and wakes it through the keeper.

// OpenFollowup records a brief owner owes opener, and writes the owner a
// letter naming it: a follow-up reaches the owner's live session like any
// letter (at its next tool call, once, through the delivery cursor), and
// wakes the owner through the keeper when no session is live. Nothing is
// written to oneself. The follow-up stands even when the letter cannot be
// written; the error then says so.
func (b *Flows) OpenFollowup(ctx context.Context, opener, owner, brief, mission string, now time.Time) (string, error) {
	id, err := b.book.OpenFollowup(ctx, opener, owner, brief, mission, now)
	if err != nil || opener == owner {
		return id, err
	}
	what := fmt.Sprintf(followupAnnounce+"%s (answer this letter, or m1nd followup resolve %s --recorded RESULT)", id, opener, brief, id)
	l := &mailbox.Letter{TS: chain.Timestamp(now), Agent: opener, To: owner, Class: mailbox.ClassAsk, Brain: b.Name(), What: rules.CutBytes(what, mailbox.MaxWhat)}
	if _, err := b.box.Send(ctx, l); err != nil {
		return id, fmt.Errorf("follow-up %s opened, but its owner %s was not told: %w", id, owner, err)
	}
	return id, nil
}

// followupAnnounce opens the letter that tells an owner of a follow-up;
// announcedFollowup reads the follow-up id back out of it.
const followupAnnounce = "follow-up %s opened for you by %s: "

// announcedFollowup is the follow-up a letter announces, when it is
// OpenFollowup's letter: the follow-up's id and its opener.
func announcedFollowup(l *mailbox.Letter) (id, opener string, ok bool) {
	var rest string
	if _, err := fmt.Sscanf(l.What, "follow-up %s opened for you by %s", &id, &rest); err != nil {
		return "", "", false
	}
	opener, ok = strings.CutSuffix(rest, ":")
	return id, opener, ok && opener == l.Agent && l.Class == mailbox.ClassAsk
}

// closeAnswered closes, as recorded with answer, each open follow-up that
// agent owes, no mission carries, and a letter in answered announced to
// agent from its opener. It returns the follow-ups it closed.
func (b *Flows) closeAnswered(ctx context.Context, agent string, answered []string, answer string, now time.Time) ([]string, error) {
	asked := map[string]string{} // follow-up id → the opener who announced it
	for _, letterID := range answered {
		s, _, matches, err := b.box.Find(ctx, letterID)
		if err != nil {
			return nil, fmt.Errorf("the letter %s answers: %w", letterID, err)
		}
		if len(matches) != 1 || s.Letter.To != agent {
			continue
		}
		if id, opener, ok := announcedFollowup(s.Letter); ok {
			asked[id] = opener
		}
	}
	if len(asked) == 0 {
		return nil, nil
	}
	v, err := b.book.View(ctx)
	if err != nil {
		return nil, err
	}
	var closed []string
	for _, f := range v.Followups {
		if opener, ok := asked[f.ID]; !ok || opener != f.Opener || f.Owner != agent || f.State != memory.StateOpen || f.Mission != "" {
			continue
		}
		if _, err := b.ResolveFollowup(ctx, agent, f.ID, memory.StateRecorded, rules.CutBytes(answer, memory.MaxResult), now); err != nil {
			return closed, fmt.Errorf("the answer was sent, but follow-up %s stays open: %w", f.ID, err)
		}
		closed = append(closed, f.ID)
	}
	return closed, nil
}

// ResolveFollowup closes a follow-up (recorded with its result, or
// withdrawn with why) and writes its opener the outcome, unless the
// opener closed it. The follow-up is closed even when the letter cannot
// be written; the error then says so.
func (b *Flows) ResolveFollowup(ctx context.Context, agent, id, as, text string, now time.Time) (string, error) {
	v, err := b.book.View(ctx)
	if err != nil {
		return "", err
	}
	var f *memory.Followup
	for _, x := range v.Followups {
		if x.ID == id {
			f = x
		}
	}
	eventID, err := b.book.ResolveFollowup(ctx, agent, id, as, text, now)
	if err != nil || f == nil {
		return eventID, err
	}
	closed := *f
	closed.State, closed.Result, closed.ResolvedBy = as, text, agent
	return eventID, b.tellOpener(ctx, &closed, agent, now)
}

// FollowupResolution reads how a follow-up is resolved from the two ways a
// caller gives it, recorded with its result or withdrawn with why: ok is
// false unless exactly one is given. The CLI and MCP both ask it.
func FollowupResolution(recorded, withdrawn string) (as, text string, ok bool) {
	if (recorded == "") == (withdrawn == "") {
		return "", "", false
	}
	if withdrawn != "" {
		return memory.StateWithdrawn, withdrawn, true
	}
	return memory.StateRecorded, recorded, true
}

// CloseEndedFollowups closes the follow-ups whose mission ended
// (memory.Book.CloseEnded) and writes each opener its result, from the
// owner who did the mission.
func (b *Flows) CloseEndedFollowups(ctx context.Context, now time.Time) (*memory.View, []string, error) {
	v, closed, err := b.book.CloseEnded(ctx, b.missions, now)
	if err != nil {
		return v, closed, err
	}
	for _, id := range closed {
		for _, f := range v.Followups {
			if f.ID == id {
				if err := b.tellOpener(ctx, f, f.Owner, now); err != nil {
					return v, closed, err
				}
			}
		}
	}
	return v, closed, nil
}

// tellOpener writes f's opener, from writer, how f closed. Nothing is
// written when the opener closed it (a letter to oneself reaches no one).
func (b *Flows) tellOpener(ctx context.Context, f *memory.Followup, writer string, now time.Time) error {
	if writer == f.Opener {
		return nil
	}
	what := fmt.Sprintf("follow-up %s (%q) closed %s by %s", f.ID, rules.CutBytes(f.Brief, 200), f.State, writer)
	if f.Result != "" {
		what += ": " + f.Result
	}
	l := &mailbox.Letter{TS: chain.Timestamp(now), Agent: writer, To: f.Opener, Class: mailbox.ClassNote, Brain: b.Name(), What: rules.CutBytes(what, mailbox.MaxWhat)}
	if _, err := b.box.Send(ctx, l); err != nil {
		return fmt.Errorf("follow-up %s closed, but its opener %s was not told: %w", f.ID, f.Opener, err)
	}
	return nil
}

// WaitingItems lists what waits for agent, claiming nothing: the letters
// its hooks would hand a session ("letter:<id>"), then the open
// follow-ups it owes ("followup:<id>").
func (b *Flows) WaitingItems(ctx context.Context, agent string) ([]string, error) {
	letters, err := b.box.Waiting(agent)
	if err != nil {
		return nil, fmt.Errorf("letters for %s: %w", agent, err)
	}
	var items []string
	for _, l := range letters {
		items = append(items, "letter:"+l.ID)
	}
	v, err := b.book.View(ctx)
	if err != nil {
		return nil, fmt.Errorf("follow-ups of %s: %w", agent, err)
	}
	for _, f := range v.Followups {
		if f.Owner == agent && f.State == memory.StateOpen {
			items = append(items, "followup:"+f.ID)
		}
	}
	return items, nil
}

// Waiting counts what waits for agent (WaitingItems).
func (b *Flows) Waiting(ctx context.Context, agent string) (int, error) {
	items, err := b.WaitingItems(ctx, agent)
	return len(items), err
}
