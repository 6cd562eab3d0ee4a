package tray

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// challengeTTL is how long a challenge the tray handed out (to register a
// passkey, or to sign a gesture) can be answered.
const challengeTTL = 5 * time.Minute

// Caps on what waits for a signature. A gesture's entry is never replaced
// and never pushed out by another: past a cap, new options are refused
// until entries are taken or expire, so a page asking over and over can
// neither grow the map nor touch what another asked for. Once the brain
// has a key every entry belongs to a session (the human's login), and the
// caps count per session: no process without the authenticator asks.
const (
	maxPendingPerSubject = 8   // gestures of one session about one mission (or the store, the keys, the pins)
	maxPendingPerSession = 64  // gestures of one session
	maxPending           = 256 // in all
)

// pending holds what each handed-out id is waiting for, each taken at most
// once and only until it expires.
type pending[T any] struct {
	mu      sync.Mutex
	entries map[string]pendingEntry[T]
}

type pendingEntry[T any] struct {
	session string // the session that asked ("" before the brain's first key)
	subject string
	value   T
	expires time.Time
}

// newPendingID is a fresh random id (128 bits, base64url): the handle a
// gesture is committed by, never derived from what it binds.
func newPendingID() (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// put keeps value under a fresh id for the challenge's lifetime, for
// session, and returns the id; it refuses when the session's entries
// about subject, the session's, or the whole map are full of entries
// that have not expired.
func (p *pending[T]) put(session, subject string, value T, now time.Time) (string, error) {
	id, err := newPendingID()
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.full(session, subject, now); err != nil {
		return "", err
	}
	if p.entries == nil {
		p.entries = map[string]pendingEntry[T]{}
	}
	p.entries[id] = pendingEntry[T]{session: session, subject: subject, value: value, expires: now.Add(challengeTTL)}
	return id, nil
}

// full drops expired entries and refuses when session's entries about
// subject, session's, or the whole map hold as many as they may. The
// caller holds mu.
func (p *pending[T]) full(session, subject string, now time.Time) error {
	about, mine := 0, 0
	for k, e := range p.entries {
		switch {
		case !now.Before(e.expires):
			delete(p.entries, k)
		case e.session == session:
			mine++
			if e.subject == subject {
				about++
			}
		}
	}
	const what = "sign one or let them expire (%s), then ask again — if you did not ask for them, something else on this machine is asking"
	switch {
	case about >= maxPendingPerSubject:
		return rules.Refusef(rules.HumanGestureRequired, "gesture", "%s about %s wait for a signature, the most one subject may have: "+what, rules.Count(about, "gesture"), rules.Echo(subject), challengeTTL)
	case mine >= maxPendingPerSession:
		return rules.Refusef(rules.HumanGestureRequired, "gesture", "%s of this session wait for a signature, the most one session may have (%d about %s): "+what, rules.Count(mine, "gesture"), about, rules.Echo(subject), challengeTTL)
	case len(p.entries) >= maxPending:
		return rules.Refusef(rules.HumanGestureRequired, "gesture", "%s wait for a signature, the most the tray holds (%d about %s): "+what, rules.Count(len(p.entries), "gesture"), about, rules.Echo(subject), challengeTTL)
	}
	return nil
}

// room refuses, as put would, when session's entries about subject (or
// the session's, or the whole map) are full: asked before a gesture is
// prepared, so a flood is turned away cheaply.
func (p *pending[T]) room(session, subject string, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.full(session, subject, now)
}

// take removes id's entry when session asked for it; ok is false when it
// was never handed out, not to session, was taken already or has expired.
// An entry another session asked for stays for it.
func (p *pending[T]) take(session, id string, now time.Time) (value T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, found := p.entries[id]
	if !found || e.session != session {
		var none T
		return none, false
	}
	delete(p.entries, id)
	if !now.Before(e.expires) {
		var none T
		return none, false
	}
	return e.value, true
}
