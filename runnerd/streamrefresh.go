package runnerd

import (
	"context"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
)

// The refresh decider's triggers for a kept session (DESIGN §11; research
// §1.4, §1.5, §2.5), beside the fill and rental rules refreshDue reads:
//   - the idle end: with no floor, an idle session is kept while its cache
//     is warm (a letter then reads it warm) and ended at its deadline;
//   - the system-prompt inputs: a conversation keeps the prompt it started
//     with, so a changed input refreshes it at its next turn boundary;
//   - the cap mid-turn: near timeout_secs a working session is asked to
//     flush at its next tool call instead of being cut with nothing saved;
//   - the warm resume: a kept session that ended unrefreshed (runnerd
//     stopped, the client exited) is resumed when the decider says so
//     (keeper.resumable), never one a refresh ended.

// refreshedNote begins the note of a kept session a refresh ended: its
// successor starts from memory, never by resuming it.
const refreshedNote = "refreshed: "

// resumeFailedNote ends the note of a resumed kept session that ended
// before its first turn did: it is not resumed again.
const resumeFailedNote = "; its resume never finished a turn: the next session starts afresh"

// measure is the refresh decider's answer for s in state st, with the
// measure read from s's own transcript; nil when none can be read.
func (k *keeper) measure(s *stream, st session.State) *session.Decision {
	if s.session == "" {
		return nil
	}
	_, d := k.lastDecision(s.pin, st, func(id string) bool { return id != s.session })
	return d
}

// idleOver reports whether s, idle with nothing waiting and no floor, is
// past its idle deadline: the cache life its transcript shows less the
// margin, when ending it costs nothing a resume would not pay again.
// Without a measured request the 5-minute cache is assumed from the
// turn's end. The transcript is read again only once the deadline it gave
// has passed.
func (k *keeper) idleOver(s *stream, now time.Time) bool {
	if now.Before(s.idleUntil) {
		return false
	}
	d := k.measure(s, session.State{Live: true, Now: now})
	if d == nil || d.Inputs.Last.IsZero() { // no request with a time measured
		deadline := s.lastEnd.Add(session.ShortCacheTTL*time.Second - s.pin.Policy().CacheMargin)
		if now.Before(deadline) {
			s.idleUntil = deadline
			return false
		}
		s.ending = nil
		return true
	}
	if d.Action == session.ActionEnd {
		s.ending = d
		return true
	}
	s.idleUntil = d.CacheDeadline // warm until then: look again at it
	return false
}

// idleEndNote is why s ended idle.
func idleEndNote(s *stream, now time.Time) string {
	if d := s.ending; d != nil {
		return fmt.Sprintf("idle end: nothing waits, floor is 0, and the cache went cold at %s (the last request at %s, its cache %d s, less %s)",
			d.CacheDeadline.UTC().Format(time.TimeOnly), d.Inputs.Last.UTC().Format(time.TimeOnly), d.Inputs.CacheTTL, s.pin.Policy().CacheMargin)
	}
	return fmt.Sprintf("idle end: nothing waits, floor is 0, and %s passed since the last turn (no request measured: a 5-minute cache assumed)", now.Sub(s.lastEnd).Round(time.Second))
}

// readInputs reads what s's system prompt is built from, now.
func (k *keeper) readInputs(ctx context.Context, s *stream) session.Inputs {
	v, err := k.d.flows.Memories(ctx)
	if err != nil {
		k.d.Logf("keeper %s: the memory header: %v", s.pin.Agent, err)
		v = &memory.View{}
	}
	return session.ReadInputs(s.pin.Client, s.dir, v, s.pin.Agent)
}

// inputsChanged names the system-prompt inputs of s that changed since it
// opened.
func (k *keeper) inputsChanged(ctx context.Context, s *stream) []string {
	v, err := k.d.flows.Memories(ctx)
	if err != nil {
		k.d.Logf("keeper %s: the memory header: %v", s.pin.Agent, err)
		return nil
	}
	return s.inputs.Changed(s.pin.Client, s.dir, v)
}

// askFlush asks s, mid-turn near its cap, to flush at its next tool call
// or its Stop (the hooks carry the ask), so the turn is not cut with
// nothing saved. It is asked once per session.
func (k *keeper) askFlush(s *stream, why string) {
	s.askedFlush = true
	w := runners.Wake{At: k.d.Now(), Agent: s.pin.Agent, Event: "flush_asked", How: "stream", SessionID: s.session, Note: why}
	if err := session.AskFlush(k.d.Repo.RuntimeDir(), s.pin.Agent, why); err != nil {
		w.Error = rules.OneLine(err.Error())
	} else {
		s.flushAsked = why
	}
	k.journal(w)
}

// flushedMidTurn settles the turn a flush ask was left in, at its end,
// and reports whether s ended: when a hook carried the ask, the session
// flushed in that turn and ends now; when none did, the ask is taken back
// and the refresh asks it with a flush turn instead.
func (k *keeper) flushedMidTurn(ctx context.Context, s *stream) bool {
	why := s.flushAsked
	s.flushAsked = ""
	rt := k.d.Repo.RuntimeDir()
	if session.FlushOwed(rt, s.pin.Agent) {
		if err := session.ClearFlush(rt, s.pin.Agent); err != nil {
			k.d.Logf("keeper %s: take back the flush ask: %v", s.pin.Agent, err)
		}
		return false
	}
	k.closeStream(ctx, s, refreshedNote+why+" (the flush reached it mid-turn)")
	return true
}
