package mailbox

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// whats is the texts of a delivery's letters, in order.
func whats(d *Delivery) string {
	var out []string
	for _, s := range d.Letters {
		out = append(out, s.Letter.What)
	}
	return strings.Join(out, "|")
}

// TestDeliveredIsNotAnswered walks letters through turns: answered by the
// session's next hook, delivered again once after a turn that failed, given
// up after a second, and never in two turns at once.
func TestDeliveredIsNotAnswered(t *testing.T) {
	ctx := context.Background()
	all := Budget{Letters: 100, Bytes: 1 << 20}
	alive := map[string]bool{}
	turn := func(session string) Turn {
		return Turn{Session: session, Alive: func(s string) bool { return alive[s] }, Now: t0}
	}
	type step struct {
		name      string
		send      []string         // letters sent before the step
		do        func(b *Mailbox) // instead of a delivery
		deliverTo string           // a delivery into this session's turn
		held      bool             // into a batch not sent yet (Turn.Held)
		alive     []string         // the sessions running during the step
		want      string           // the texts delivered, in order
		again     int              // how many of them were delivered again
		gaveUp    string           // the texts given up
		waiting   string           // Waiting after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"answered by the session's next hook", []step{
			{name: "into s1", send: []string{"one", "two"}, deliverTo: "s1", alive: []string{"s1"}, want: "one|two"},
			{name: "s1 answers", do: func(b *Mailbox) {
				if err := b.Answered(ctx, "bob", "s1", Responded); err != nil {
					t.Fatal(err)
				}
			}},
			{name: "s1 ends; nothing comes back", deliverTo: "s2", alive: []string{"s2"}, want: ""},
		}},
		{"a failed turn delivers again, until MaxAttempts", []step{
			{name: "into s1", send: []string{"one"}, deliverTo: "s1", alive: []string{"s1"}, want: "one"},
			{name: "s1 died unanswered; s2 gets it again with the new", send: []string{"two"}, deliverTo: "s2", alive: []string{"s2"}, want: "one|two", again: 1},
			{name: "s2 died too: both come again", deliverTo: "s3", alive: []string{"s3"}, want: "one|two", again: 2},
			{name: "s3 died: one is given up, two comes again", deliverTo: "s4", alive: []string{"s4"}, want: "two", again: 1, gaveUp: "one"},
			{name: "s4 answers", do: answered(ctx, t, "s4", Responded), alive: []string{"s4"}},
			{name: "nothing more: the given-up letter is no hook's", deliverTo: "s5", alive: []string{"s5"}, want: ""},
			{name: "it waits unread, undeliverable", do: func(b *Mailbox) {
				inbox, err := b.Inbox(ctx, "bob")
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range inbox {
					undeliverable := e.Letter.What == "one"
					if undeliverable != (e.Turn == TurnUndeliverable) || undeliverable == e.Read || undeliverable != (e.Fate == FateUndeliverable) ||
						undeliverable != strings.Contains(e.Reason, "delivered into 3 turns that all failed") {
						t.Fatalf("%s: read %v, turn %q, fate %q, reason %q", e.Letter.What, e.Read, e.Turn, e.Fate, e.Reason)
					}
				}
			}},
			{name: "marked read, it is settled", do: func(b *Mailbox) {
				if err := b.MarkRead(ctx, "bob"); err != nil {
					t.Fatal(err)
				}
				if fates := b.Fates(mustAll(t, b)); slices.Contains(slices.Collect(maps.Values(fates)), FateUndeliverable) {
					t.Fatalf("fates after mark read: %v", fates)
				}
			}},
		}},
		{"a batch's own hooks never answer what it holds", []step{
			{name: "PostToolUse of tool 1 hands one over", send: []string{"one"}, deliverTo: "s1", held: true, alive: []string{"s1"}, want: "one"},
			{name: "PostToolUse of tool 2, same batch", do: answered(ctx, t, "s1", Responded), alive: []string{"s1"}},
			{name: "PostToolBatch sends the batch", do: answered(ctx, t, "s1", BatchSent), alive: []string{"s1"}},
			{name: "the request failed and s1 died: one comes again", deliverTo: "s2", alive: []string{"s2"}, want: "one", again: 1},
		}},
		{"a later batch answers what an earlier one sent", []step{
			{name: "PostToolUse hands one over", send: []string{"one"}, deliverTo: "s1", held: true, alive: []string{"s1"}, want: "one"},
			{name: "PostToolBatch sends the batch", do: answered(ctx, t, "s1", BatchSent), alive: []string{"s1"}},
			{name: "a tool of the next batch ran", do: answered(ctx, t, "s1", Responded), alive: []string{"s1"}},
			{name: "s1 ends; nothing comes back", deliverTo: "s2", alive: []string{"s2"}, want: ""},
		}},
		{"a turn's Stop answers even what was never sent by a batch hook", []step{
			{name: "PostToolUse hands one over", send: []string{"one"}, deliverTo: "s1", held: true, alive: []string{"s1"}, want: "one"},
			{name: "Stop", do: answered(ctx, t, "s1", TurnEnded), alive: []string{"s1"}},
			{name: "s1 ends; nothing comes back", deliverTo: "s2", alive: []string{"s2"}, want: ""},
		}},
		{"a kept session's failed turns keep the letter, then give it up", []step{
			{name: "into s1", send: []string{"one"}, deliverTo: "s1", alive: []string{"s1"}, want: "one"},
			{name: "s1's turn failed, s1 runs on", alive: []string{"s1"}, do: failed(ctx, t, "s1", "one", "")},
			{name: "nothing comes again: s1's context holds it", deliverTo: "s1", alive: []string{"s1"}, want: ""},
			{name: "the retry failed too", alive: []string{"s1"}, do: failed(ctx, t, "s1", "one", "")},
			{name: "and the third", alive: []string{"s1"}, do: failed(ctx, t, "s1", "", "one")},
			{name: "given up: no session gets it", deliverTo: "s2", alive: []string{"s1", "s2"}, want: ""},
		}},
		{"a live session keeps its letters", []step{
			{name: "into s1", send: []string{"one"}, deliverTo: "s1", alive: []string{"s1"}, want: "one"},
			{name: "s1 still runs: s2 gets only the new", send: []string{"two"}, deliverTo: "s2", alive: []string{"s1", "s2"}, want: "two", waiting: ""},
		}},
		{"the keeper releases an ended session's letters", []step{
			{name: "into s1", send: []string{"one", "two"}, deliverTo: "s1", alive: []string{"s1"}, want: "one|two"},
			{name: "s1 exited", alive: []string{}, do: func(b *Mailbox) {
				again, gaveUp, err := b.Release(ctx, "bob", func(s string) bool { return alive[s] })
				if err != nil || len(again) != 2 || len(gaveUp) != 0 {
					t.Fatalf("release: %+v %+v %v", again, gaveUp, err)
				}
			}, waiting: "one|two"},
			{name: "the next session gets them, first", send: []string{"three"}, deliverTo: "s2", alive: []string{"s2"}, want: "one|two|three", again: 2},
		}},
		{"a reader's delivery needs no answer", []step{
			{name: "claimed for good", send: []string{"one"}, deliverTo: "", want: "one"},
			{name: "nothing comes back", deliverTo: "s1", alive: []string{"s1"}, want: ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newBox(t)
			n := 0
			for _, st := range tc.steps {
				for _, what := range st.send {
					n++
					send(t, b, letter("alice", "bob", "note", what, n))
				}
				clear(alive)
				for _, s := range st.alive {
					alive[s] = true
				}
				if st.do != nil {
					st.do(b)
				} else {
					tu := turn(st.deliverTo)
					tu.Held = st.held
					d, err := b.Deliver(ctx, "bob", tu, all)
					if err != nil {
						t.Fatalf("%s: %v", st.name, err)
					}
					var gave []string
					for _, g := range d.GaveUp {
						gave = append(gave, g.Letter.What)
					}
					if whats(d) != st.want || d.Again != st.again || strings.Join(gave, "|") != st.gaveUp {
						t.Fatalf("%s: delivered %q (%d again), gave up %q; want %q (%d again), gave up %q", st.name, whats(d), d.Again, gave, st.want, st.again, st.gaveUp)
					}
				}
				waiting, err := b.Waiting("bob")
				if err != nil {
					t.Fatal(err)
				}
				if got := whats(&Delivery{Letters: waiting}); got != st.waiting {
					t.Fatalf("%s: waiting %q, want %q", st.name, got, st.waiting)
				}
			}
		})
	}
}

// failed is a step that records s's turn failing in a session that runs
// on, and checks which letters it kept for the retry and gave up.
func failed(ctx context.Context, t *testing.T, session, kept, gaveUp string) func(b *Mailbox) {
	return func(b *Mailbox) {
		t.Helper()
		k, g, err := b.Failed(ctx, "bob", session, "a 500")
		if err != nil {
			t.Fatal(err)
		}
		if got := whats(&Delivery{Letters: stored(k)}); got != kept {
			t.Fatalf("kept %q, want %q", got, kept)
		}
		if got := whats(&Delivery{Letters: stored(g)}); got != gaveUp {
			t.Fatalf("gave up %q, want %q", got, gaveUp)
		}
	}
}

func stored(fs []InFlight) []Stored {
	var out []Stored
	for _, f := range fs {
		out = append(out, f.Stored)
	}
	return out
}

// mustAll is every letter in the box.
func mustAll(t *testing.T, b *Mailbox) []Stored {
	t.Helper()
	all, err := b.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// answered is a step that records session's hook event p.
func answered(ctx context.Context, t *testing.T, session string, p Progress) func(b *Mailbox) {
	return func(b *Mailbox) {
		t.Helper()
		if err := b.Answered(ctx, "bob", session, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInFlightCutShort: a delivery cut short after recording its turn but
// before moving the cursor leaves the letter in flight and after the
// cursor; it is never put into a second turn while the first holds it,
// and comes back once that session is gone.
func TestInFlightCutShort(t *testing.T) {
	ctx := context.Background()
	b, _ := newBox(t)
	send(t, b, letter("alice", "bob", "note", "one", 1))
	path, _ := cursorPath(b.Repo, "bob")
	before, _ := os.ReadFile(path) // absent: nothing delivered yet
	d, err := b.Deliver(ctx, "bob", Turn{Session: "s1"}, Budget{Letters: 10, Bytes: 1 << 20})
	if err != nil || whats(d) != "one" {
		t.Fatalf("%q %v", whats(d), err)
	}
	if before == nil {
		os.Remove(path) // the cursor never moved
	} else {
		os.WriteFile(path, before, 0o600)
	}
	running := true
	alive := func(s string) bool { return s == "s1" && running }
	if d, _ := b.Deliver(ctx, "bob", Turn{Session: "s2", Alive: alive}, Budget{Letters: 10, Bytes: 1 << 20}); whats(d) != "" {
		t.Fatalf("a letter in flight went into a second turn: %q", whats(d))
	}
	running = false
	if d, _ := b.Deliver(ctx, "bob", Turn{Session: "s2", Alive: alive}, Budget{Letters: 10, Bytes: 1 << 20}); whats(d) != "one" || d.Again != 1 {
		t.Fatalf("after s1 ended: %q (%d again)", whats(d), d.Again)
	}
}

// Concurrent turns of several sessions each take different letters.
func TestConcurrentTurnsTakeEachLetterOnce(t *testing.T) {
	b, _ := newBox(t)
	for i := 0; i < 40; i++ {
		send(t, b, letter("alice", "bob", "note", fmt.Sprintf("l%02d", i), i))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			box := &Mailbox{Repo: b.Repo, Brain: "brain"}
			for i := 0; i < 10; i++ {
				d, err := box.Deliver(context.Background(), "bob", Turn{Session: fmt.Sprintf("s%d", w), Alive: func(string) bool { return true }}, Budget{Letters: 3, Bytes: 1 << 20})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, s := range d.Letters {
					seen[s.Letter.What]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Fatalf("%d distinct letters delivered, want 40", len(seen))
	}
	for what, n := range seen {
		if n != 1 {
			t.Errorf("%s went into %d turns", what, n)
		}
	}
}
