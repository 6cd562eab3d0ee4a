package tray

import (
	"sync"
	"time"
)

// challengeTTL is how long a challenge the tray handed out (to register a
// passkey, or to sign a gesture) can be answered.
const challengeTTL = 5 * time.Minute

// maxPending caps the challenges outstanding at once: a page that asks
// over and over pushes out the oldest, never grows the map.
const maxPending = 16

// pending holds what each handed-out challenge is waiting for, each one
// taken at most once and only until it expires.
type pending[T any] struct {
	mu      sync.Mutex
	entries map[string]pendingEntry[T]
}

type pendingEntry[T any] struct {
	value   T
	expires time.Time
}

// put keeps value for challenge, dropping expired entries and, when full,
// the one that expires first.
func (p *pending[T]) put(challenge string, value T, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries == nil {
		p.entries = map[string]pendingEntry[T]{}
	}
	oldest, oldestAt := "", time.Time{}
	for c, e := range p.entries {
		if !now.Before(e.expires) {
			delete(p.entries, c)
		} else if oldest == "" || e.expires.Before(oldestAt) {
			oldest, oldestAt = c, e.expires
		}
	}
	if len(p.entries) >= maxPending {
		delete(p.entries, oldest)
	}
	p.entries[challenge] = pendingEntry[T]{value: value, expires: now.Add(challengeTTL)}
}

// take removes challenge's entry; ok is false when it was never handed
// out, was taken already or has expired.
func (p *pending[T]) take(challenge string, now time.Time) (value T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, found := p.entries[challenge]
	delete(p.entries, challenge)
	if !found || !now.Before(e.expires) {
		var none T
		return none, false
	}
	return e.value, true
}
