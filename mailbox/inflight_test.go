package mailbox

import (
	"context"
	"fmt"
	"os"
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
				if err := b.Answered(ctx, "bob", "s1"); err != nil {
					t.Fatal(err)
				}
			}},
			{name: "s1 ends; nothing comes back", deliverTo: "s2", alive: []string{"s2"}, want: ""},
		}},
		{"a failed turn delivers again, once", []step{
			{name: "into s1", send: []string{"one"}, deliverTo: "s1", alive: []string{"s1"}, want: "one"},
			{name: "s1 died unanswered; s2 gets it again with the new", send: []string{"two"}, deliverTo: "s2", alive: []string{"s2"}, want: "one|two", again: 1},
			{name: "s2 died too: one is given up, two comes again", deliverTo: "s3", alive: []string{"s3"}, want: "two", again: 1, gaveUp: "one"},
			{name: "s3 answers", do: func(b *Mailbox) { b.Answered(ctx, "bob", "s3") }, alive: []string{"s3"}},
			{name: "nothing more", deliverTo: "s4", alive: []string{"s4"}, want: ""},
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
					d, err := b.Deliver(ctx, "bob", turn(st.deliverTo), all)
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
