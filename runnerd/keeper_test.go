package runnerd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// fakeSessions is a session registry for the keeper's tests: whether bob
// is live, and his last session. When a woken session ends, the keeper
// asks whether it registered; read stands in for what its hooks did
// meanwhile (it delivers letters), and silent for a session that ran no
// hook at all.
type fakeSessions struct {
	live       bool
	id, script string
	running    map[string]bool
	silent     bool
	read       func()
}

func (f *fakeSessions) Live(string) (bool, error) { return f.live, nil }
func (f *fakeSessions) Last(string, string) (string, string, bool, error) {
	return f.id, f.script, f.id != "", nil
}
func (f *fakeSessions) Running(id string) bool       { return f.running[id] }
func (f *fakeSessions) Sweep(time.Time) (int, error) { return 0, nil }
func (f *fakeSessions) RegisteredSince(string, time.Time) (bool, error) {
	if f.silent {
		return false, nil
	}
	if f.read != nil {
		f.read()
	}
	return true, nil
}

type keeperRig struct {
	t     *testing.T
	d     *Daemon
	k     *keeper
	box   *mailbox.Mailbox
	calls string // the file the client script appends its arguments to
	clock time.Time
	regs  *fakeSessions
	mu    sync.Mutex // guards clock while a kept session's goroutine reads it
}

// advance moves the rig's clock on by d.
func (r *keeperRig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock = r.clock.Add(d)
}

// newKeeperRig pins bob to a client that is a shell script: it appends
// its arguments and M1ND_AGENT to a file and exits with $EXIT (in a file,
// so a test can change it).
func newKeeperRig(t *testing.T) *keeperRig {
	g := gittest.Init(t, "shop")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	dir := t.TempDir()
	r := &keeperRig{t: t, calls: filepath.Join(dir, "calls"), clock: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), regs: &fakeSessions{running: map[string]bool{}}}
	client := filepath.Join(dir, "client.sh")
	os.WriteFile(filepath.Join(dir, "exit"), []byte("0"), 0o644)
	os.WriteFile(client, []byte(fmt.Sprintf("#!/bin/sh\necho \"$M1ND_AGENT|$*\" >>%s\nexit $(cat %s)\n", r.calls, filepath.Join(dir, "exit"))), 0o755)
	pin := &runners.KeeperPin{Agent: "bob", Client: session.HostClaude, Start: []string{client, "start", "{wake}"}, Resume: []string{client, "resume", "{session_id}", "{wake}"}}
	if err := pin.Check(func(field, format string, args ...any) error { return fmt.Errorf(field+": "+format, args...) }); err != nil {
		t.Fatal(err)
	}
	r.d = &Daemon{Repo: repo, Brain: "shop", Config: &runners.Config{Keepers: []*runners.KeeperPin{pin}}, Sessions: r.regs, Now: func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.clock }}
	r.d.init()
	r.k = newKeeper(r.d)
	r.box = mailbox.New(repo, "shop")
	return r
}

func (r *keeperRig) send(what string) string {
	r.t.Helper()
	res, err := r.box.Send(context.Background(), &mailbox.Letter{TS: r.clock.Format(time.RFC3339), Agent: "alice", To: "bob", Class: mailbox.ClassNote, Brain: "shop", What: what})
	if err != nil {
		r.t.Fatal(err)
	}
	return res.ID
}

// tick runs the keeper once and waits for what it woke.
func (r *keeperRig) tick() []string {
	r.t.Helper()
	r.k.tick(context.Background())
	r.k.wg.Wait()
	data, _ := os.ReadFile(r.calls)
	os.Remove(r.calls)
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func (r *keeperRig) journal() []runners.Wake {
	data, _ := os.ReadFile(runners.JournalPath(r.d.Repo.RuntimeDir()))
	var out []runners.Wake
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var w runners.Wake
		if json.Unmarshal([]byte(line), &w) == nil {
			out = append(out, w)
		}
	}
	return out
}

// readAll is a woken session whose hooks deliver every letter waiting,
// and whose turn answers them.
func (r *keeperRig) readAll() {
	r.regs.read = func() {
		if _, err := r.box.Deliver(context.Background(), "bob", mailbox.Turn{}, mailbox.Budget{Letters: 100, Bytes: 1 << 20}); err != nil {
			r.t.Error(err)
		}
	}
}

// TestKeeperWakesOncePerLetter: a letter for bob with no live session
// starts one with a wake naming the letter; once the session read it,
// the letter never wakes him again (nor after runnerd restarts, from the
// journal); a live session is never woken; a new letter wakes him again.
func TestKeeperWakesOncePerLetter(t *testing.T) {
	r := newKeeperRig(t)
	r.readAll()
	if calls := r.tick(); calls != nil {
		t.Fatalf("woken with nothing waiting: %v", calls)
	}
	first := r.send("the build is red")
	calls := r.tick()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "bob|start m1nd: work waits for bob: 1 letter ("+first+")") {
		t.Fatalf("wake: %v", calls)
	}
	if calls := r.tick(); calls != nil {
		t.Fatalf("woken twice for one letter: %v", calls)
	}
	r.k = newKeeper(r.d) // runnerd restarts
	if calls := r.tick(); calls != nil {
		t.Fatalf("woken again after a restart: %v", calls)
	}
	r.regs.live = true
	r.send("and the docs")
	if calls := r.tick(); calls != nil {
		t.Fatalf("a live session was woken: %v", calls)
	}
	r.regs.live = false
	if calls := r.tick(); len(calls) != 1 || !strings.Contains(calls[0], "work waits for bob: 1 letter") {
		t.Fatalf("a new letter: %v", calls)
	}
	j := r.journal()
	if len(j) != 4 || j[0].Event != "woke" || j[1].Event != "exited" || j[0].Items[0] != "letter:"+first || j[2].Event != "woke" || len(j[1].Waiting) != 0 {
		t.Fatalf("journal: %+v", j)
	}
}

// TestKeeperWakesAgainWhileTheLettersWait: delivered is not answered. A
// session that exits 0 having read nothing is woken again after a backoff
// that doubles, and after maxWakes the letter is given up, journaled and
// never woken for again; a session that reads part of a backlog is woken
// again at once for the rest; letters a session took into a turn it never
// answered come back and wake it again; a session that ran no hook is
// named with how to fix it.
func TestKeeperWakesAgainWhileTheLettersWait(t *testing.T) {
	t.Run("read nothing", func(t *testing.T) {
		r := newKeeperRig(t)
		id := r.send("the build is red")
		for i, wait := range []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute} {
			r.clock = r.clock.Add(wait - time.Second)
			if i > 0 {
				if calls := r.tick(); calls != nil {
					t.Fatalf("wake %d came inside its backoff of %v: %v", i+1, wait, calls)
				}
			}
			r.clock = r.clock.Add(time.Second)
			if calls := r.tick(); len(calls) != 1 {
				t.Fatalf("wake %d after %v: %v", i+1, wait, calls)
			}
		}
		r.clock = r.clock.Add(24 * time.Hour)
		if calls := r.tick(); calls != nil {
			t.Fatalf("woken after giving up: %v", calls)
		}
		r.k = newKeeper(r.d)
		if calls := r.tick(); calls != nil {
			t.Fatalf("woken after giving up and a restart: %v", calls)
		}
		j := r.journal()
		last := j[len(j)-1]
		if last.Event != "gave_up" || len(last.Items) != 1 || last.Items[0] != "letter:"+id || !strings.Contains(last.Note, "woken 4 times, still waiting") {
			t.Fatalf("the journal ends %+v", last)
		}
		if e := j[1]; e.Event != "exited" || len(e.Waiting) != 1 || e.Next == nil || !e.Next.Equal(e.At.Add(30*time.Second)) {
			t.Fatalf("the first end: %+v", e)
		}
		r.send("a new one")
		if calls := r.tick(); len(calls) != 1 || strings.Contains(calls[0], id) {
			t.Fatalf("a new letter after a give-up: %v", calls)
		}
	})
	t.Run("part of a backlog", func(t *testing.T) {
		r := newKeeperRig(t)
		for i := 0; i < 5; i++ {
			r.send(fmt.Sprintf("letter %d", i))
		}
		r.regs.read = func() {
			r.box.Deliver(context.Background(), "bob", mailbox.Turn{}, mailbox.Budget{Letters: 2, Bytes: 1 << 20})
		}
		var wakes []string
		for i := 0; i < 5; i++ {
			calls := r.tick()
			if len(calls) == 0 {
				break
			}
			wakes = append(wakes, calls...)
		}
		if len(wakes) != 3 || !strings.Contains(wakes[0], "5 letters") || !strings.Contains(wakes[1], "3 letters") || !strings.Contains(wakes[2], "1 letter (") {
			t.Fatalf("wakes over a backlog of 5, 2 read each: %v", wakes)
		}
		if n, _ := r.box.Pending("bob"); n != 0 {
			t.Fatalf("%d letters left", n)
		}
	})
	t.Run("an unanswered turn", func(t *testing.T) {
		r := newKeeperRig(t)
		id := r.send("rerun the gate")
		// The session's hook put the letter into its turn; then the client
		// died (a model error) before the turn answered.
		r.regs.read = func() {
			r.box.Deliver(context.Background(), "bob", mailbox.Turn{Session: "s1", Alive: func(string) bool { return true }}, mailbox.Budget{Letters: 10, Bytes: 1 << 20})
		}
		if calls := r.tick(); len(calls) != 1 {
			t.Fatalf("first wake: %v", calls)
		}
		j := r.journal()
		if e := j[len(j)-1]; e.Event != "exited" || len(e.Again) != 1 || e.Again[0] != "letter:"+id || len(e.Waiting) != 1 {
			t.Fatalf("the end of the failed turn: %+v", e)
		}
		r.readAll()
		r.clock = r.clock.Add(30 * time.Second)
		if calls := r.tick(); len(calls) != 1 || !strings.Contains(calls[0], id) {
			t.Fatalf("the letter did not wake bob again: %v", calls)
		}
		if n, _ := r.box.Pending("bob"); n != 0 {
			t.Fatalf("%d letters left", n)
		}
	})
	t.Run("no hook ran", func(t *testing.T) {
		r := newKeeperRig(t)
		r.regs.silent = true
		r.send("hello")
		r.tick()
		j := r.journal()
		if len(j) != 3 {
			t.Fatalf("want woke, exited, gave_up: %+v", j)
		}
		if e := j[1]; e.Event != "exited" || !strings.Contains(e.Note, "ran none of m1nd's hooks") {
			t.Fatalf("the end of a session that ran no hook: %+v", e)
		}
		if g := j[2]; g.Event != "gave_up" || len(g.Items) != 1 || !strings.Contains(g.Note, "would not help") {
			t.Fatalf("the give-up, at once: %+v", g)
		}
		r.clock = r.clock.Add(time.Hour)
		if calls := r.tick(); calls != nil {
			t.Fatalf("woken again for what a hookless session never saw: %v", calls)
		}
	})
	t.Run("three failed turns", func(t *testing.T) {
		r := newKeeperRig(t)
		id := r.send("rerun the gate")
		// Every woken session's hook takes the letter into its turn, and
		// every client dies before the model answers.
		n := 0
		r.regs.read = func() {
			n++
			r.box.Deliver(context.Background(), "bob", mailbox.Turn{Session: fmt.Sprintf("s%d", n), Alive: func(string) bool { return true }}, mailbox.Budget{Letters: 10, Bytes: 1 << 20})
		}
		for wake := 1; wake <= mailbox.MaxAttempts; wake++ {
			if calls := r.tick(); len(calls) != 1 || !strings.Contains(calls[0], id) {
				t.Fatalf("wake %d: %v", wake, calls)
			}
			r.clock = r.clock.Add(time.Hour)
		}
		if calls := r.tick(); calls != nil {
			t.Fatalf("woken past %d failed turns: %v", mailbox.MaxAttempts, calls)
		}
		var gave []runners.Wake
		for _, w := range r.journal() {
			if w.Event == "gave_up" {
				gave = append(gave, w)
			}
		}
		if len(gave) != 1 || len(gave[0].Items) != 1 || gave[0].Items[0] != "letter:"+id || !strings.Contains(gave[0].Note, "undeliverable: delivered into 3 turns that all failed") {
			t.Fatalf("want one gave_up for letter:%s, undeliverable: %+v", id, gave)
		}
		inbox, err := r.box.Inbox(context.Background(), "bob")
		if err != nil || len(inbox) != 1 || inbox[0].Read || inbox[0].Turn != mailbox.TurnUndeliverable || inbox[0].Fate != mailbox.FateUndeliverable {
			t.Fatalf("the letter is not unread and undeliverable: %+v %v", inbox, err)
		}
	})
}

// TestKeeperBacksOffAFailedWake: a client that fails is no wake: the
// letter waits, and the next try comes after a backoff that doubles.
func TestKeeperBacksOffAFailedWake(t *testing.T) {
	r := newKeeperRig(t)
	os.WriteFile(filepath.Join(filepath.Dir(r.calls), "exit"), []byte("3"), 0o644)
	r.send("hello")
	if calls := r.tick(); len(calls) != 1 {
		t.Fatalf("first wake: %v", calls)
	}
	r.clock = r.clock.Add(29 * time.Second)
	if calls := r.tick(); calls != nil {
		t.Fatalf("retried inside the backoff: %v", calls)
	}
	r.clock = r.clock.Add(2 * time.Second)
	if calls := r.tick(); len(calls) != 1 {
		t.Fatalf("retry after 30 s: %v", calls)
	}
	r.clock = r.clock.Add(31 * time.Second)
	if calls := r.tick(); calls != nil {
		t.Fatalf("the second backoff did not double: %v", calls)
	}
	os.WriteFile(filepath.Join(filepath.Dir(r.calls), "exit"), []byte("0"), 0o644)
	r.readAll() // the session that works reads its letter
	r.clock = r.clock.Add(30 * time.Second)
	if calls := r.tick(); len(calls) != 1 {
		t.Fatalf("retry after 60 s: %v", calls)
	}
	if calls := r.tick(); calls != nil {
		t.Fatalf("woken again after a wake that worked: %v", calls)
	}
	j := r.journal()
	if last := j[len(j)-1]; last.Event != "exited" || len(last.Waiting) != 0 || j[1].Event != "failed" || j[1].Exit != 3 {
		t.Fatalf("journal: %+v", j)
	}
}

// TestKeeperResumesAWarmSession: with a last session whose transcript
// the refresh decider reads as warm, bob's session is resumed; cold and
// larger than a rebuild, a fresh one starts; an owed follow-up wakes him
// too.
func TestKeeperResumesAWarmSession(t *testing.T) {
	r := newKeeperRig(t)
	r.readAll()
	transcript := filepath.Join(t.TempDir(), "s1.jsonl")
	line := func(id string, at time.Time, input int64) string {
		return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"message":{"id":%q,"model":"claude-sonnet-4-5","usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":1}}}}`, at.Format(time.RFC3339), id, input)
	}
	os.WriteFile(transcript, []byte(line("m1", r.clock.Add(-10*time.Minute), 20000)+"\n"+line("m2", r.clock.Add(-5*time.Minute), 30000)+"\n"), 0o644)
	r.regs.id, r.regs.script = "s1", transcript
	r.send("warm")
	if calls := r.tick(); len(calls) != 1 || !strings.HasPrefix(calls[0], "bob|resume s1 m1nd: work waits") {
		t.Fatalf("warm: %v", calls)
	}
	r.clock = r.clock.Add(2 * time.Hour)
	r.send("cold")
	if _, err := (&memory.Book{Repo: r.d.Repo}).OpenFollowup(context.Background(), "alice", "bob", "check the release notes", "", r.clock); err != nil {
		t.Fatal(err)
	}
	calls := r.tick()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "bob|start m1nd: work waits for bob: 1 letter") || !strings.Contains(calls[0], "; 1 follow-up you owe") {
		t.Fatalf("cold: %v", calls)
	}
	j := r.journal()
	if d := j[len(j)-2].Decision; d == nil || d.Action != session.ActionRehydrate {
		t.Fatalf("the cold wake's decision: %+v", j[len(j)-2])
	}
}

func TestCheckKeeper(t *testing.T) {
	for _, tc := range []struct {
		pin   runners.KeeperPin
		field string
	}{
		{runners.KeeperPin{Agent: "Bob", Client: "claude", Start: []string{"claude", "-p", "{wake}"}}, "agent"},
		{runners.KeeperPin{Agent: "bob", Client: "gemini", Start: []string{"x", "{wake}"}}, "client"},
		{runners.KeeperPin{Agent: "bob", Client: "codex"}, "start"},
		{runners.KeeperPin{Agent: "bob", Client: "codex", Start: []string{"codex", "exec"}}, "start"},
		{runners.KeeperPin{Agent: "bob", Client: "codex", Start: []string{"codex", "{wake}"}, Resume: []string{"codex", "resume", "{wake}"}}, "resume"},
		{runners.KeeperPin{Agent: "bob", Client: "codex", Start: []string{"codex", "{wake}"}, Worktree: "rel/path"}, "worktree"},
		{runners.KeeperPin{Agent: "bob", Client: "codex", Start: []string{"codex", "{wake}"}, BackoffSecs: -1}, "backoff_secs"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Start: []string{"claude", "-p", "{wake}"}, Resume: []string{"claude", "-p", "{wake}", "--resume", "{session_id}"}}, ""},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude", "-p", "--input-format", "stream-json"}, Floor: 1, TempoSecs: 600}, ""},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude", "-p", "{wake}"}}, "stream"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude"}, Floor: 2}, "floor"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Start: []string{"claude", "-p", "{wake}"}, Floor: 1}, "floor"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Start: []string{"claude", "-p", "{wake}"}, TempoSecs: 60}, "tempo_secs"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude"}, CacheMarginSecs: 290}, ""},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude"}, CacheMarginSecs: 300}, "cache_margin_secs"},
		{runners.KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude"}, CacheMarginSecs: -1}, "cache_margin_secs"},
	} {
		var got string
		err := tc.pin.Check(func(field, format string, args ...any) error { got = field; return fmt.Errorf(format, args...) })
		if got != tc.field || (tc.field == "") != (err == nil) {
			t.Errorf("%+v: field %q (%v), want %q", tc.pin, got, err, tc.field)
		}
	}
}
