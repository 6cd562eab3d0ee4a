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
func streamRig(t *testing.T, floor, tempo, timeout int) (*keeperRig, *KeeperPin, string) {
	r := newKeeperRig(t)
	dir := t.TempDir()
	turns := filepath.Join(dir, "turns")
	client := filepath.Join(dir, "stream.sh")
	script := fmt.Sprintf(`#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1"}'
while IFS= read -r line; do
  printf '%%s\n' "$line" >>%s
  M1ND_TEST_DELIVER=%s %s -test.run=TestHelperDeliver >/dev/null 2>&1
  echo '{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"done"}'
done
echo "$$ stdin closed" >>%s
`, turns, r.d.Repo.WorkTree(), os.Args[0], turns)
	if err := os.WriteFile(client, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	pin := &KeeperPin{Agent: "bob", Client: session.HostClaude, Stream: []string{client}, Floor: floor, TempoSecs: tempo, TimeoutSecs: timeout}
	if err := checkKeeper(pin, func(field, format string, args ...any) error { return fmt.Errorf(field+": "+format, args...) }); err != nil {
		t.Fatal(err)
	}
	r.d.Config.Keepers = []*KeeperPin{pin}
	r.regs.running["s1"] = true
	return r, pin, turns
}

// awaitEvent waits for the journal to hold n lines of event.
func (r *keeperRig) awaitEvent(event string, n int) []Wake {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got []Wake
		for _, w := range r.journal() {
			if w.Event == event {
				got = append(got, w)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("journal has %d %q lines, want %d: %+v", len(got), event, n, r.journal())
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	if !strings.Contains(ended.Note, "refreshed: rotation") {
		t.Errorf("ended: %+v", ended)
	}
	got = readTurns(t, turns)
	if !strings.Contains(got[3], "save what you learned, decided and owe") || !strings.HasSuffix(got[4], "stdin closed") {
		t.Fatalf("flush and end: %q", got[3:])
	}
	r.k.tick(ctx)
	if n := len(r.awaitEvent("woke", 2)); n != 2 {
		t.Fatalf("%d starts after the rotation, want 2", n)
	}
}

// TestStreamWithoutAFloorEnds: with floor = 0 the kept session ends once
// nothing waits.
func TestStreamWithoutAFloorEnds(t *testing.T) {
	r, _, turns := streamRig(t, 0, 0, 400)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); r.k.wg.Wait() }()
	r.k.tick(ctx)
	if j := r.journal(); len(j) != 0 {
		t.Fatalf("a session with nothing waiting and no floor: %+v", j)
	}
	r.send("one thing")
	r.k.tick(ctx)
	ended := r.awaitEvent("ended", 1)[0]
	if ended.Note != "nothing waits and floor is 0" || len(ended.Waiting) != 0 {
		t.Fatalf("ended: %+v", ended)
	}
	if got := readTurns(t, turns); len(got) != 2 || !strings.HasSuffix(got[1], "stdin closed") {
		t.Fatalf("turns: %q", got)
	}
}
