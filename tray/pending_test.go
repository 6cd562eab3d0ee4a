package tray

import (
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// A gesture waits under an id of its own, is taken once and only before it
// expires, and is never replaced or pushed out: past a cap, what asks is
// refused, and the entries already handed out stay.
func TestPendingTakesOnceUntilExpiry(t *testing.T) {
	var p pending[int]
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a, err := p.put("", "msn_a", 1, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.put("", "msn_a", 1, t0)
	if err != nil || a == b || len(a) < 22 {
		t.Fatalf("two gestures alike got ids %q and %q (%v): each has its own random id", a, b, err)
	}
	if v, ok := p.take("", a, t0.Add(time.Minute)); !ok || v != 1 {
		t.Fatalf("take a: %v %v", v, ok)
	}
	if _, ok := p.take("", a, t0.Add(time.Minute)); ok {
		t.Fatal("a was taken twice")
	}
	if _, ok := p.take("", b, t0.Add(challengeTTL)); ok {
		t.Fatal("b was taken after it expired")
	}
	if _, ok := p.take("", "never", t0); ok {
		t.Fatal("an id never handed out was taken")
	}
	// The human's gesture about msn_b, then a flood about msn_a: the flood
	// is refused past its cap, and the human's gesture stays.
	human, err := p.put("", "msn_b", 2, t0)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := range 3 * maxPendingPerSubject {
		if _, err := p.put("", "msn_a", 3, t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
			if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.HumanGestureRequired {
				t.Fatalf("a refused put: %v", err)
			}
			refused++
		}
	}
	if refused != 2*maxPendingPerSubject {
		t.Fatalf("%d puts about msn_a refused, want %d past the cap of %d", refused, 2*maxPendingPerSubject, maxPendingPerSubject)
	}
	if v, ok := p.take("", human, t0.Add(time.Minute)); !ok || v != 2 {
		t.Fatalf("the human's gesture after the flood: %v %v", v, ok)
	}
	// Expired entries make room again.
	if _, err := p.put("", "msn_a", 3, t0.Add(challengeTTL)); err != nil {
		t.Fatalf("a put once the flood expired: %v", err)
	}
	// The whole map is capped too, each session's gestures under it, and
	// each cap says which one it is.
	var q pending[int]
	for i := range maxPending {
		session := string(rune('a' + i/maxPendingPerSession))
		if _, err := q.put(session, string(rune('a'+i%26))+string(rune('a'+(i/26)%26)), i, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.put("a", "zz", 0, t0); err == nil || !strings.Contains(err.Error(), "the most one session may have") {
		t.Fatalf("a put past a session's cap: %v", err)
	}
	if _, err := q.put("z", "zz", 0, t0); err == nil || len(q.entries) != maxPending || !strings.Contains(err.Error(), "256 gestures wait for a signature, the most the tray holds (0 about zz)") {
		t.Fatalf("a put past the whole cap: %v, %d entries", err, len(q.entries))
	}
}

// Once the brain has a key, each entry is its session's: another session
// (an agent's, were it to log in) neither takes it nor fills its caps.
func TestPendingIsPerSession(t *testing.T) {
	var p pending[int]
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for range maxPendingPerSubject {
		if _, err := p.put("agent", "msn_a", 1, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.put("agent", "msn_a", 1, t0); err == nil || !strings.Contains(err.Error(), "8 gestures about msn_a wait for a signature, the most one subject may have") {
		t.Fatalf("the agent's ninth: %v", err)
	}
	mine, err := p.put("human", "msn_a", 2, t0)
	if err != nil {
		t.Fatalf("the human's gesture about the same mission: %v", err)
	}
	if _, ok := p.take("agent", mine, t0); ok {
		t.Fatal("another session took the human's gesture")
	}
	if v, ok := p.take("human", mine, t0); !ok || v != 2 {
		t.Fatalf("the human's own take: %v %v", v, ok)
	}
}
