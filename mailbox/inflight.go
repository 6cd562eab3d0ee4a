package mailbox

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// Delivered is not answered (seed §1.2). A letter a hook puts into a
// session's turn is in flight until the model has answered a request that
// held it: a hook that only follows a model response answers it (a tool of
// a later batch, the turn's Stop), never a sibling hook of the batch that
// took it — Claude Code runs PostToolBatch after the batch's PostToolUse
// hooks and before the request, so letters a PostToolUse hands over are
// held until that PostToolBatch sends them (docs/mail.md, "Delivered is
// not answered", writes down both clients' order). A turn that fails —
// its client exits without answering, is killed, or hangs past its time —
// answers nothing: its letters are delivered again to the next turn of any
// session of the agent. A letter that went into MaxAttempts turns that all failed is
// given up, never silently: it stays unread, undeliverable with the
// reason (`m1nd mail inbox`, `m1nd mail fates`, `m1nd sessions`), and no
// hook hands it over again until the agent reads it or marks it read.
//
// The record lives beside the delivery cursor, in the runtime dir, and is
// written under the cursor's lock, before the cursor moves: a delivery cut
// short between the two writes delivers its letters again, never loses
// them.

// MaxAttempts is how many turns a letter is delivered into before it is
// given up as undeliverable: the first, and twice again after failed ones.
const MaxAttempts = 3

// InFlight is one letter delivered into a turn that has not answered yet,
// or, with no session, one waiting to be delivered again.
type InFlight struct {
	Stored
	Commit  string `json:"commit"`
	Session string `json:"session,omitempty"` // the session whose turn has it; "" when it waits again
	Attempt int    `json:"attempt"`           // the turns it went into, this one included
	At      string `json:"at"`                // when it went into the turn (RFC 3339)
	// Held says the letter waits in a tool batch its client has not sent
	// to the model yet: no event of that batch answers it.
	Held bool `json:"held,omitempty"`
	// Reason says why an undeliverable letter was given up.
	Reason string `json:"reason,omitempty"`
}

// inflight is an agent's letters in flight and waiting again.
type inflight struct {
	Turns []InFlight `json:"turns"` // in a session's turn, unanswered
	Again []InFlight `json:"again"` // released by a failed turn, delivered next
	// Undeliverable went into MaxAttempts turns that all failed: unread,
	// handed to no session again until read or marked read.
	Undeliverable []InFlight `json:"undeliverable,omitempty"`

	dropped []Dropped // entries no mail ref holds, left out as read
}

// readInflight reads agent's letters in flight as the mail refs hold
// them: each entry's letter is read again from the commit it names, and
// an entry no mail ref for agent holds is dropped (in.dropped says which).
func readInflight(repo *gitstore.Repo, agent string) (*inflight, error) {
	in := &inflight{}
	if err := readAgentJSON(repo, inflightFile, agent, "letters in flight", "remove the file: what was in flight is then taken as answered", in); err != nil {
		return nil, err
	}
	if len(in.Turns)+len(in.Again)+len(in.Undeliverable) == 0 {
		return in, nil
	}
	dropped, err := in.verify(repo, agent)
	if err != nil {
		return nil, fmt.Errorf("letters in flight for %s: %w", agent, err)
	}
	in.dropped = dropped
	return in, nil
}

func writeInflight(repo *gitstore.Repo, agent string, in *inflight) error {
	if len(in.Turns)+len(in.Again)+len(in.Undeliverable) == 0 {
		return writeAgentJSON(repo, inflightFile, agent, nil)
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return writeAgentJSON(repo, inflightFile, agent, data)
}

// Turn is the session turn a delivery goes into.
type Turn struct {
	// Session is the session whose turn takes the letters; they are in
	// flight until it answers (Answered). "" claims them for good: a
	// reader that shows them whole (m1nd mail inbox) needs no answer.
	Session string
	// Alive reports whether another session's client still runs; a turn
	// of one that does not answered nothing, and its letters are
	// delivered again. nil: every session is taken as alive.
	Alive func(session string) bool
	Now   time.Time
	// Held says the letters taken now wait in a tool batch the client
	// sends to the model only after more hooks of that batch ran (Claude
	// Code's PostToolUse): they count as sent at BatchSent.
	Held bool
}

// release moves the letters in flight in the turns of sessions that no
// longer run (not alive, and not turn's own) to the letters delivered
// next, or gives them up after MaxAttempts; it reports whether anything
// moved, and what was given up.
func (in *inflight) release(turn Turn) (moved bool, gaveUp []InFlight) {
	if turn.Alive == nil {
		return false, nil
	}
	kept := in.Turns[:0]
	for _, f := range in.Turns {
		if f.Session == turn.Session || turn.Alive(f.Session) {
			kept = append(kept, f)
			continue
		}
		moved = true
		if f.Attempt >= MaxAttempts {
			gaveUp = append(gaveUp, in.giveUp(f, fmt.Sprintf("(session %s, from %s) ended without an answer", f.Session, f.At)))
			continue
		}
		f.Session, f.Held = "", false
		if !in.waitsAgain(f.ID) {
			in.Again = append(in.Again, f)
		}
	}
	in.Turns = kept
	sort.SliceStable(in.Again, func(i, j int) bool { return older(in.Again[i].Stored, in.Again[j].Stored) })
	return moved, gaveUp
}

// giveUp moves f, which went into MaxAttempts turns that all failed, to
// the letters given up as undeliverable; last says how its last turn
// ended. It returns the entry as recorded.
func (in *inflight) giveUp(f InFlight, last string) InFlight {
	f.Reason = fmt.Sprintf("delivered into %d turns that all failed; the last %s", f.Attempt, last)
	f.Session, f.Held = "", false
	in.Undeliverable = append(in.Undeliverable, f)
	return f
}

func (in *inflight) waitsAgain(id string) bool {
	for _, f := range in.Again {
		if f.ID == id {
			return true
		}
	}
	return false
}

// inTurn reports whether letter id is in flight in some turn.
func (in *inflight) inTurn(id string) bool {
	for _, f := range in.Turns {
		if f.ID == id {
			return true
		}
	}
	return false
}

// Progress is how far a session's turn got, as one hook event proves it.
type Progress int

const (
	// Responded: the model answered every request sent before this event
	// (a tool of a later batch ran): the letters sent with them are
	// answered; those held in a batch not sent yet are not.
	Responded Progress = iota
	// BatchSent is Responded, and then the letters held in the batch go
	// to the model (Claude Code's PostToolBatch, the batch's last hook).
	BatchSent
	// TurnEnded: the turn completed (its Stop): everything it was given
	// is answered.
	TurnEnded
)

// Answered records what session's hook event p proves: the letters the
// model has answered leave the record, and at BatchSent those held in the
// batch count as sent (the next event that proves a response answers
// them).
func (b *Mailbox) Answered(ctx context.Context, agent, session string, p Progress) error {
	if session == "" {
		return nil
	}
	return b.editInflight(ctx, agent, "answered",
		func(in *inflight) bool { return in.holds(session) },
		func(in *inflight) bool { return in.progress(session, p) })
}

// editInflight changes agent's in-flight record under the cursor's lock:
// need is asked of the record read without the lock (most calls find
// nothing to do and lock nothing), then edit of the record read again
// under it, which is written when edit reports a change. what names the
// change in errors.
func (b *Mailbox) editInflight(ctx context.Context, agent, what string, need, edit func(in *inflight) bool) error {
	in, err := readInflight(b.Repo, agent)
	if err != nil || !need(in) {
		return err
	}
	_, unlock, err := b.lockCursor(ctx, agent)
	if err != nil {
		return err
	}
	defer unlock()
	if in, err = readInflight(b.Repo, agent); err != nil {
		return err
	}
	if !edit(in) {
		return nil
	}
	if err := writeInflight(b.Repo, agent, in); err != nil {
		return fmt.Errorf("%s for %s: %w", what, agent, err)
	}
	return nil
}

// progress applies p to session's letters in flight and reports whether
// the record changed.
func (in *inflight) progress(session string, p Progress) bool {
	changed := false
	kept := in.Turns[:0]
	for _, f := range in.Turns {
		switch {
		case f.Session != session:
		case p == TurnEnded || !f.Held:
			changed = true
			continue // answered
		case p == BatchSent:
			f.Held, changed = false, true
		}
		kept = append(kept, f)
	}
	in.Turns = kept
	return changed
}

// Failed records that session's turn failed while its client still runs
// (a kept session: the client keeps the failed turn's prompt, and the
// letters in it, in its context). Its letters stay in flight in that
// session, each one turn more — the retry that follows answers them
// without carrying them again — and a letter that went into MaxAttempts
// turns is given up as undeliverable, why saying how the last one failed.
// It returns the letters kept for the retry, and those given up.
func (b *Mailbox) Failed(ctx context.Context, agent, session, why string) (kept, gaveUp []InFlight, err error) {
	if session == "" {
		return nil, nil, nil
	}
	err = b.editInflight(ctx, agent, "failed turn",
		func(in *inflight) bool { return in.holds(session) },
		func(in *inflight) bool {
			kept, gaveUp = in.fail(session, why)
			return true
		})
	return kept, gaveUp, err
}

// fail counts a failed turn of session against each of its letters in
// flight: kept for the retry, or given up as undeliverable once they went
// into MaxAttempts turns.
func (in *inflight) fail(session, why string) (kept, gaveUp []InFlight) {
	turns := in.Turns[:0]
	for _, f := range in.Turns {
		switch {
		case f.Session != session:
		case f.Attempt >= MaxAttempts:
			gaveUp = append(gaveUp, in.giveUp(f, fmt.Sprintf("(session %s) failed: %s", session, why)))
			continue
		default:
			f.Attempt++
			f.Held = false
			kept = append(kept, f)
		}
		turns = append(turns, f)
	}
	in.Turns = turns
	return kept, gaveUp
}

// others reports whether a session other than turn's has letters in
// flight: a delivery must then ask whether it still runs.
func (in *inflight) others(turn Turn) bool {
	if turn.Alive == nil {
		return false
	}
	for _, f := range in.Turns {
		if f.Session != turn.Session {
			return true
		}
	}
	return false
}

// has reports whether letter id is in flight, waits again or was given
// up: no delivery takes it as new.
func (in *inflight) has(id string) bool {
	return in.inTurn(id) || in.waitsAgain(id) || in.undeliverable(id) != nil
}

// undeliverable is letter id's entry among those given up, or nil.
func (in *inflight) undeliverable(id string) *InFlight {
	for i := range in.Undeliverable {
		if in.Undeliverable[i].ID == id {
			return &in.Undeliverable[i]
		}
	}
	return nil
}

func (in *inflight) holds(session string) bool {
	for _, f := range in.Turns {
		if f.Session == session {
			return true
		}
	}
	return false
}

// Release gives the letters in flight in the turns of sessions that no
// longer run (alive says which do) back for delivery, once; a letter
// already delivered again is given up. It returns what it gave back and
// what it gave up. The keeper calls it when a session it woke ended, so
// that what that session never answered waits again.
func (b *Mailbox) Release(ctx context.Context, agent string, alive func(session string) bool) (again, gaveUp []InFlight, err error) {
	err = b.editInflight(ctx, agent, "release",
		func(in *inflight) bool { return len(in.Turns) > 0 },
		func(in *inflight) bool {
			before := map[string]bool{}
			for _, f := range in.Again {
				before[f.ID] = true
			}
			var moved bool
			moved, gaveUp = in.release(Turn{Alive: alive})
			for _, f := range in.Again {
				if !before[f.ID] {
					again = append(again, f)
				}
			}
			return moved
		})
	return again, gaveUp, err
}

// InFlightOf lists agent's letters in flight in a turn and those waiting
// to be delivered again, as recorded (no liveness checked).
func (b *Mailbox) InFlightOf(agent string) (turns, again []InFlight, err error) {
	in, err := readInflight(b.Repo, agent)
	if err != nil {
		return nil, nil, err
	}
	return in.Turns, in.Again, nil
}

// AgentInFlight is one agent's letters in flight, waiting again and
// given up as undeliverable.
type AgentInFlight struct {
	Agent         string     `json:"agent"`
	Turns         []InFlight `json:"in_turn"`
	Again         []InFlight `json:"again"`
	Undeliverable []InFlight `json:"undeliverable,omitempty"`
}

// AllInFlight lists, per agent, the letters in flight in a turn and those
// waiting to be delivered again (m1nd mail fates shows them).
func (b *Mailbox) AllInFlight() ([]AgentInFlight, error) {
	agents, err := recordAgents(b.Repo, inflightFile)
	if err != nil {
		return nil, err
	}
	var out []AgentInFlight
	for _, agent := range agents {
		in, err := readInflight(b.Repo, agent)
		if err != nil {
			return nil, err
		}
		if len(in.Turns)+len(in.Again)+len(in.Undeliverable) > 0 {
			out = append(out, AgentInFlight{Agent: agent, Turns: in.Turns, Again: in.Again, Undeliverable: in.Undeliverable})
		}
	}
	return out, nil
}
