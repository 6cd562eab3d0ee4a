package runnerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
)

// TestHelperDeliver is not a test: the stream tests' scripted client runs
// the test binary with M1ND_TEST_DELIVER set to a repository, standing in
// for the hooks that hand the session bob's letters at a turn.
func TestHelperDeliver(t *testing.T) {
	dir := os.Getenv("M1ND_TEST_DELIVER")
	if dir == "" {
		t.Skip("the stream tests' hook stand-in")
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	if _, err := mailbox.New(repo, "shop").Deliver(context.Background(), "bob", mailbox.Turn{}, mailbox.Budget{Letters: 100, Bytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
}

// streamRig pins bob to a scripted streaming client: it names its
// session, and for each turn it reads, appends the turn to a file, runs
// the hooks' stand-in (delivering bob's letters) and ends the turn.
func streamRig(t *testing.T, floor, tempo, timeout int) (*keeperRig, *runners.KeeperPin, string) {
	return streamRigWith(t, floor, tempo, timeout, "")
}

// streamRigWith is streamRig with more for the client to do in each turn
// (a shell snippet run after the hooks' stand-in). The client writes its
// arguments to the file args beside turns.
func streamRigWith(t *testing.T, floor, tempo, timeout int, more string) (*keeperRig, *runners.KeeperPin, string) {
	r := newKeeperRig(t)
	dir := t.TempDir()
	turns := filepath.Join(dir, "turns")
	client := filepath.Join(dir, "stream.sh")
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >>%s
echo '{"type":"system","subtype":"init","session_id":"s1"}'
while IFS= read -r line; do
  printf '%%s\n' "$line" >>%s
  M1ND_TEST_DELIVER=%s %s -test.run=TestHelperDeliver >/dev/null 2>&1
  %s
  echo '{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"done"}'
done
echo "$$ stdin closed" >>%s
`, filepath.Join(dir, "args"), turns, r.d.Repo.WorkTree(), os.Args[0], more, turns)
	if err := os.WriteFile(client, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pin := &runners.KeeperPin{Agent: "bob", Client: session.HostClaude, Stream: []string{client}, Floor: floor, TempoSecs: tempo, TimeoutSecs: timeout}
	if err := pin.Check(func(field, format string, args ...any) error { return fmt.Errorf(field+": "+format, args...) }); err != nil {
		t.Fatal(err)
	}
	r.d.Config.Keepers = []*runners.KeeperPin{pin}
	r.regs.running["s1"] = true
	return r, pin, turns
}

// awaitEvent waits for the journal to hold n lines of event.
func (r *keeperRig) awaitEvent(event string, n int) []runners.Wake {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := eventsOf(r.journal(), event)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("journal has %d %q lines, want %d: %+v", len(got), event, n, r.journal())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tickUntil ticks the keeper as runnerd's loop would until the journal
// has n event lines: a session's end is journaled a moment before the
// keeper counts it as stopped, and a tick in between rightly waits.
func (r *keeperRig) tickUntil(ctx context.Context, event string, n int) []runners.Wake {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.k.tick(ctx)
		if got := eventsOf(r.journal(), event); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("journal has %d %q lines, want %d: %+v", countEvent(r.journal(), event), event, n, r.journal())
		}
		time.Sleep(streamPoll)
	}
}

func eventsOf(j []runners.Wake, event string) []runners.Wake {
	var got []runners.Wake
	for _, w := range j {
		if w.Event == event {
			got = append(got, w)
		}
	}
	return got
}

func readTurns(t *testing.T, path string) []string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// TestStreamKeepsOneSessionAcrossTurns: floor = 1 keeps bob's session
// after its first answer; a second letter goes into the same process as a
// second turn; the tempo wakes it when idle; nearing timeout_secs it is
// asked to flush, then ended gracefully (stdin closed) and started afresh.
func TestStreamKeepsOneSessionAcrossTurns(t *testing.T) {
	r, _, turns := streamRig(t, 1, 30, 400)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()

	first := r.send("the build is red")
	r.k.tick(ctx)
	r.awaitEvent("turn_ended", 1)
	if got := readTurns(t, turns); len(got) != 1 || !strings.Contains(got[0], `"type":"user"`) || !strings.Contains(got[0], "1 letter ("+first+")") {
		t.Fatalf("first turn: %q", got)
	}
	// Kept: the tick finds the agent's session running, starts nothing.
	r.k.tick(ctx)
	second := r.send("and the docs")
	r.awaitEvent("turn_ended", 2)
	got := readTurns(t, turns)
	if len(got) != 2 || !strings.Contains(got[1], second) || strings.Contains(got[1], first) {
		t.Fatalf("second turn: %q", got)
	}
	if n := len(r.awaitEvent("woke", 1)); n != 1 {
		t.Fatalf("%d starts for two letters, want one session", n)
	}
	// The tempo: 30 s idle by the rig's clock, one turn that asks nothing.
	r.advance(31 * time.Second)
	r.awaitEvent("tempo", 1)
	r.awaitEvent("turn_ended", 3)
	if got := readTurns(t, turns); !strings.Contains(got[2], "tempo") {
		t.Fatalf("tempo turn: %q", got[2])
	}
	// Nearing timeout_secs (400: rotation at 300 s), idle: a flush turn, then
	// stdin closed, and the floor starts a fresh session.
	r.advance(300 * time.Second)
	flush := r.awaitEvent("flush", 1)[0]
	if flush.Decision != nil && flush.Decision.Action == "" {
		t.Errorf("flush decision without an action: %+v", flush.Decision)
	}
	r.awaitEvent("flushed", 1)
	ended := r.awaitEvent("ended", 1)[0]
	if !strings.Contains(ended.Note, "refreshed: rotation") || !ended.NoResume {
		t.Errorf("ended: %+v", ended)
	}
	got = readTurns(t, turns)
	if !strings.Contains(got[3], "save what you learned, decided and owe") || !strings.HasSuffix(got[4], "stdin closed") {
		t.Fatalf("flush and end: %q", got[3:])
	}
	if n := len(r.tickUntil(ctx, "woke", 2)); n != 2 {
		t.Fatalf("%d starts after the rotation, want 2", n)
	}
}

// TestStreamWithoutAFloorEndsIdle: with floor = 0 the kept session stays
// while its cache is warm (a letter then goes into it), and ends at its
// idle deadline; with no request measured, 5 minutes less the margin
// after its last turn.
func TestStreamWithoutAFloorEndsIdle(t *testing.T) {
	r, _, turns := streamRig(t, 0, 0, 4000)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.k.tick(ctx)
	if j := r.journal(); len(j) != 0 {
		t.Fatalf("a session with nothing waiting and no floor: %+v", j)
	}
	r.send("one thing")
	r.k.tick(ctx)
	r.awaitEvent("turn_ended", 1)
	r.advance(3 * time.Minute)
	second := r.send("another")
	r.awaitEvent("turn_ended", 2)
	if got := readTurns(t, turns); len(got) != 2 || !strings.Contains(got[1], second) {
		t.Fatalf("the second letter did not go into the warm session: %q", got)
	}
	r.advance(3*time.Minute + 59*time.Second)
	time.Sleep(3 * streamPoll)
	if n := countEvent(r.journal(), "ended"); n != 0 {
		t.Fatalf("ended before its idle deadline: %+v", r.journal())
	}
	r.advance(2 * time.Second)
	ended := r.awaitEvent("ended", 1)[0]
	if !strings.HasPrefix(ended.Note, "idle end: nothing waits, floor is 0, and 4m1s passed since the last turn (no request measured") || len(ended.Waiting) != 0 {
		t.Fatalf("ended: %+v", ended)
	}
	if got := readTurns(t, turns); len(got) != 3 || !strings.HasSuffix(got[2], "stdin closed") {
		t.Fatalf("turns: %q", got)
	}
}

func countEvent(j []runners.Wake, event string) int {
	n := 0
	for _, w := range j {
		if w.Event == event {
			n++
		}
	}
	return n
}

// claudeTranscript writes a Claude Code transcript whose one request, at
// at, wrote the 5-minute cache.
func claudeTranscript(t *testing.T, at time.Time) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s1.jsonl")
	line := fmt.Sprintf(`{"type":"assistant","timestamp":%q,"message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"cache_creation_input_tokens":9000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":9000,"ephemeral_1h_input_tokens":0},"output_tokens":5}}}`+"\n", at.Format(time.RFC3339Nano))
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStreamIdleEndReadsTheCacheDeadline: the idle deadline is the last
// request's cache life (300 s) less cache_margin_secs, and the journal
// keeps the decision with its inputs.
func TestStreamIdleEndReadsTheCacheDeadline(t *testing.T) {
	r, pin, _ := streamRig(t, 0, 0, 4000)
	pin.CacheMarginSecs = 290
	r.regs.id, r.regs.script = "s1", claudeTranscript(t, r.clock)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.send("one thing")
	r.k.tick(ctx)
	r.awaitEvent("turn_ended", 1)
	r.advance(9 * time.Second)
	time.Sleep(3 * streamPoll)
	if n := countEvent(r.journal(), "ended"); n != 0 {
		t.Fatalf("ended before its idle deadline: %+v", r.journal())
	}
	r.advance(2 * time.Second)
	ended := r.awaitEvent("ended", 1)[0]
	d := ended.Decision
	if d == nil || d.Action != session.ActionEnd || !d.CacheDeadline.Equal(time.Date(2026, 12, 1, 12, 0, 10, 0, time.UTC)) || d.Inputs.CacheTTL != 300 {
		t.Fatalf("ended without the decision that ended it: %+v %+v", ended, d)
	}
	if want := "idle end: nothing waits, floor is 0, and the cache went cold at 12:00:10 (the last request at 12:00:00, its cache 300 s, less 4m50s)"; ended.Note != want {
		t.Fatalf("note %q\nwant %q", ended.Note, want)
	}
}

// TestStreamFlushesMidTurnNearItsCap: a turn still running at the
// rotation is asked to flush through the hooks (the mark a tool call's
// hook carries), is not cut, and the session ends when that turn does.
// When no hook carried the ask, it is taken back and a flush turn asks
// at the boundary instead.
func TestStreamFlushesMidTurnNearItsCap(t *testing.T) {
	for _, carried := range []bool{true, false} {
		t.Run(fmt.Sprintf("carried=%v", carried), func(t *testing.T) {
			mark := "" // set below: the rig's runtime folder is made with it
			r, pin, turns := streamRigWith(t, 1, 0, 400, `while [ ! -e "$MARK" ] && [ ! -e "$MARK.done" ]; do sleep 0.02; done; if [ "$CARRY" = 1 ]; then rm -f "$MARK"; fi; touch "$MARK.done"`)
			mark = filepath.Join(r.d.Repo.RuntimeDir(), "mail", "flush", "bob")
			carry := "0"
			if carried {
				carry = "1"
			}
			t.Setenv("MARK", mark)
			t.Setenv("CARRY", carry)
			_ = pin
			ctx, cancel := context.WithCancel(context.Background())
			defer func() { cancel(); r.k.wg.Wait() }()
			os.MkdirAll(filepath.Dir(mark), 0o700)
			os.WriteFile(mark+".done", nil, 0o600) // the floor's first turn does not wait
			r.k.tick(ctx)
			r.awaitEvent("turn_ended", 1)
			os.Remove(mark + ".done")
			r.send("a long job")
			r.awaitEvent("turn", 2)
			time.Sleep(3 * streamPoll)
			if n := countEvent(r.journal(), "flush_asked"); n != 0 {
				t.Fatalf("asked to flush before the rotation: %+v", r.journal())
			}
			r.advance(301 * time.Second) // rotation at 300 s, the cap at 400 s
			asked := r.awaitEvent("flush_asked", 1)[0]
			if !strings.HasPrefix(asked.Note, "rotation: the session is 5m1s old, timeout_secs is 400") || asked.SessionID != "s1" {
				t.Fatalf("flush_asked: %+v", asked)
			}
			r.awaitEvent("turn_ended", 2)
			if !carried {
				flush := r.awaitEvent("flush", 1)[0]
				if !strings.HasPrefix(flush.Note, "rotation") {
					t.Fatalf("flush turn: %+v", flush)
				}
				if session.FlushOwed(r.d.Repo.RuntimeDir(), "bob") {
					t.Fatal("the uncarried ask was not taken back")
				}
				r.awaitEvent("flushed", 1)
			}
			ended := r.awaitEvent("ended", 1)[0]
			want := "refreshed: rotation: the session is 5m1s old, timeout_secs is 400 (the flush reached it mid-turn)"
			if !carried {
				want = "refreshed: rotation: the session is 5m1s old, timeout_secs is 400"
			}
			if ended.Note != want || ended.Exit != 0 {
				t.Fatalf("ended: %+v\nwant note %q", ended, want)
			}
			if n := countEvent(r.journal(), "flush"); carried && n != 0 {
				t.Fatalf("a flush turn after the flush went in mid-turn: %+v", r.journal())
			}
			if got := readTurns(t, turns); !strings.HasSuffix(got[len(got)-1], "stdin closed") {
				t.Fatalf("not ended gracefully: %q", got)
			}
		})
	}
}

// TestStreamRefreshesWhenItsInputsChange: an edited CLAUDE.md in the
// session's folder refreshes the kept session at its next turn boundary:
// a flush turn naming the change, a graceful end, a fresh start.
func TestStreamRefreshesWhenItsInputsChange(t *testing.T) {
	r, _, _ := streamRig(t, 1, 0, 4000)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.k.tick(ctx)
	r.awaitEvent("turn_ended", 1)
	if err := os.WriteFile(filepath.Join(r.d.Repo.WorkTree(), "CLAUDE.md"), []byte("answer in French\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * streamPoll)
	if n := countEvent(r.journal(), "flush"); n != 0 {
		t.Fatalf("refreshed with nothing to do: %+v", r.journal())
	}
	r.send("a letter")
	flush := r.awaitEvent("flush", 1)[0]
	if flush.Note != "system-prompt inputs changed: CLAUDE.md" {
		t.Fatalf("flush: %+v", flush)
	}
	ended := r.awaitEvent("ended", 1)[0]
	if ended.Note != "refreshed: system-prompt inputs changed: CLAUDE.md" {
		t.Fatalf("ended: %+v", ended)
	}
	r.tickUntil(ctx, "woke", 2)
}

// TestStreamResumesWarmAndNeverARefreshedOne: a kept session opens by
// resuming the agent's last session when the decider finds it warm
// (Claude Code: --resume), but never one a refresh ended, even after
// runnerd restarts.
func TestStreamResumesWarmAndNeverARefreshedOne(t *testing.T) {
	r, pin, _ := streamRig(t, 0, 0, 4000)
	r.regs.id, r.regs.script = "s0", claudeTranscript(t, r.clock.Add(-time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.send("one thing")
	r.k.tick(ctx)
	woke := r.awaitEvent("woke", 1)[0]
	if woke.How != "stream-resume" || woke.SessionID != "s0" || woke.Decision == nil || woke.Decision.Action != session.ActionResume {
		t.Fatalf("woke: %+v", woke)
	}
	r.awaitEvent("turn_ended", 1)
	args, _ := os.ReadFile(filepath.Join(filepath.Dir(pin.Stream[0]), "args"))
	if strings.TrimSpace(string(args)) != "--resume s0" {
		t.Fatalf("the client was started with %q", args)
	}
	// A refreshed session, as the journal of an earlier runnerd says.
	r.k.journal(runners.Wake{At: r.clock, Agent: "bob", Event: "ended", How: "stream", SessionID: "s0", Note: refreshedNote + "rotation", NoResume: true})
	k := newKeeper(r.d)
	if id, d := k.resumable(pin, 1, r.clock); id != "" || d != nil {
		t.Fatalf("a refreshed session is resumed: %q %+v", id, d)
	}
	// Not when it runs, either.
	r.regs.running["s0"] = true
	if id, _ := r.k.resumable(pin, 1, r.clock); id != "" {
		t.Fatalf("a running session is resumed: %q", id)
	}
}

// TestStreamFailedResumeStartsAfresh: a resume whose client exits before
// a turn is done (the transcript is gone, say) is not tried again: the
// journal says so, and the next start is fresh, even for a new keeper.
func TestStreamFailedResumeStartsAfresh(t *testing.T) {
	r, pin, _ := streamRig(t, 0, 0, 4000)
	broken := filepath.Join(t.TempDir(), "broken.sh")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'No conversation found' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pin.Stream = []string{broken}
	r.regs.id, r.regs.script = "s0", claudeTranscript(t, r.clock.Add(-time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.send("one thing")
	r.k.tick(ctx)
	if woke := r.awaitEvent("woke", 1)[0]; woke.How != "stream-resume" {
		t.Fatalf("woke: %+v", woke)
	}
	ended := r.awaitEvent("ended", 1)[0]
	if !strings.HasSuffix(ended.Note, resumeFailedNote) || !ended.NoResume || ended.SessionID != "s0" {
		t.Fatalf("ended: %+v", ended)
	}
	for _, k := range []*keeper{r.k, newKeeper(r.d)} {
		if id, _ := k.resumable(pin, 1, r.clock); id != "" {
			t.Fatalf("a failed resume is tried again: %q", id)
		}
	}
}
