package tray

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/m1nd/m1nd/gates"
)

// challengeTTL is how long a challenge the tray handed out (to register a
// passkey, or to sign a gesture) can be answered.
const challengeTTL = 5 * time.Minute

// Caps on what waits for a signature. A gesture's entry is never replaced
// and never pushed out by another: past a cap, new options are refused
// until entries are taken or expire, so a page (or an agent) asking over
// and over can neither grow the map nor touch what the human asked for.
const (
	maxPendingPerSubject = 8   // gestures about one mission (or the store, the keys, the pins)
	maxPending           = 256 // in all
)

// pending holds what each handed-out id is waiting for, each taken at most
// once and only until it expires.
type pending[T any] struct {
	mu      sync.Mutex
	entries map[string]pendingEntry[T]
}

type pendingEntry[T any] struct {
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

// put keeps value under a fresh id for the challenge's lifetime and
// returns the id; it refuses when subject, or the whole map, is full of
// entries that have not expired.
func (p *pending[T]) put(subject string, value T, now time.Time) (string, error) {
	id, err := newPendingID()
	if err != nil {
		return "", err
	}
	return id, p.putAt(id, subject, value, now)
}

// putAt keeps value under key, itself random (a registration's challenge),
// with put's caps.
func (p *pending[T]) putAt(id, subject string, value T, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, taken := p.entries[id]; taken {
		return gates.Refusef(gates.HumanGestureRequired, "gesture", "that id is handed out already: ask again")
	}
	if err := p.full(subject, now); err != nil {
		return err
	}
	if p.entries == nil {
		p.entries = map[string]pendingEntry[T]{}
	}
	p.entries[id] = pendingEntry[T]{subject: subject, value: value, expires: now.Add(challengeTTL)}
	return nil
}

// full drops expired entries and refuses when subject, or the whole map,
// holds as many as it may. The caller holds mu.
func (p *pending[T]) full(subject string, now time.Time) error {
	about := 0
	for k, e := range p.entries {
		switch {
		case !now.Before(e.expires):
			delete(p.entries, k)
		case e.subject == subject:
			about++
		}
	}
	if about >= maxPendingPerSubject || len(p.entries) >= maxPending {
		return gates.Refusef(gates.HumanGestureRequired, "gesture", "too many gestures wait for a signature (%s about %s): sign one or let them expire (%s), then ask again — if you did not ask for them, something else on this machine is asking", gates.Count(about, "gesture"), gates.Echo(subject), challengeTTL)
	}
	return nil
}

// room refuses, as put would, when subject (or the whole map) is full:
// asked before a gesture is prepared, so a flood is turned away cheaply.
func (p *pending[T]) room(subject string, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.full(subject, now)
}

// take removes id's entry; ok is false when it was never handed out, was
// taken already or has expired.
func (p *pending[T]) take(id string, now time.Time) (value T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, found := p.entries[id]
	delete(p.entries, id)
	if !found || !now.Before(e.expires) {
		var none T
		return none, false
	}
	return e.value, true
}
