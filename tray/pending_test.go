package tray

import (
	"fmt"
	"testing"
	"time"
)

// A challenge is taken once, only before it expires, and a full map drops
// the entry that expires first.
func TestPendingTakesOnceUntilExpiry(t *testing.T) {
	var p pending[int]
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p.put("a", 1, t0)
	if v, ok := p.take("a", t0.Add(time.Minute)); !ok || v != 1 {
		t.Fatalf("take a: %v %v", v, ok)
	}
	if _, ok := p.take("a", t0.Add(time.Minute)); ok {
		t.Fatal("a was taken twice")
	}
	p.put("b", 2, t0)
	if _, ok := p.take("b", t0.Add(challengeTTL)); ok {
		t.Fatal("b was taken after it expired")
	}
	if _, ok := p.take("never", t0); ok {
		t.Fatal("a challenge never handed out was taken")
	}
	for i := range maxPending + 1 {
		p.put(fmt.Sprint("c", i), i, t0.Add(time.Duration(i)*time.Second))
	}
	if len(p.entries) != maxPending {
		t.Fatalf("%d entries, want at most %d", len(p.entries), maxPending)
	}
	if _, ok := p.take("c0", t0.Add(time.Minute)); ok {
		t.Fatal("the oldest challenge was kept over the cap")
	}
	if v, ok := p.take(fmt.Sprint("c", maxPending), t0.Add(time.Minute)); !ok || v != maxPending {
		t.Fatalf("the newest challenge: %v %v", v, ok)
	}
}
