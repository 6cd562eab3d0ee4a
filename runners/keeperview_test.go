package runners

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/gittest"
)

func TestKeeperAgents(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	next := at(90)
	stream := &KeeperPin{Agent: "bob", Client: "claude", Stream: []string{"claude"}, Floor: 1, TempoSecs: 60, TimeoutSecs: 400}
	wake := &KeeperPin{Agent: "bob", Client: "codex", Start: []string{"codex", "{wake}"}, TimeoutSecs: 100}
	for _, tc := range []struct {
		name    string
		pin     *KeeperPin
		lines   []Wake
		now     time.Time
		state   string
		next    string
		gaveUp  []string
		noteHas string
	}{
		{"nothing yet, floor 1", stream, nil, at(0), "none", "starts a kept session (floor 1)", nil, ""},
		{"nothing yet, one-shot", wake, nil, at(0), "none", "wakes bob when a letter or a follow-up waits", nil, ""},
		{"a kept session, idle", stream, []Wake{{At: at(0), Event: "woke", How: "stream"}, {At: at(1), Event: "turn", SessionID: "s1"}, {At: at(5), Event: "turn_ended", SessionID: "s1"}}, at(10),
			"idle", "writes the next letter in as a turn; a tempo turn at 12:01:05; a flush and a fresh session at 12:05:00", nil, ""},
		{"a kept session mid-turn", stream, []Wake{{At: at(0), Event: "woke", How: "stream"}, {At: at(1), Event: "turn", SessionID: "s1"}}, at(2), "mid-turn", "waits for the turn to end", nil, ""},
		{"a woken one-shot", wake, []Wake{{At: at(0), Event: "woke", How: "start"}}, at(2), "woken", "waits for the woken session to end (timeout_secs at 12:01:40)", nil, ""},
		{"backing off, then given up", wake, []Wake{{At: at(0), Event: "woke", How: "start"}, {At: at(30), Event: "exited", Next: &next, Note: "the woken session ran none of m1nd's hooks"},
			{At: at(30), Event: "gave_up", Items: []string{"letter:bbbbbbbbbbbb", "letter:aaaaaaaaaaaa"}, Note: "gave up waking bob"}}, at(40),
			"none", "wakes bob again after its backoff, at 12:01:30", []string{"letter:aaaaaaaaaaaa", "letter:bbbbbbbbbbbb"}, "ran none of m1nd's hooks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := keeperAgent(tc.pin, tc.lines, tc.now)
			if a.State != tc.state || a.Next != tc.next || !slices.Equal(a.GaveUp, tc.gaveUp) || !strings.Contains(a.Note, tc.noteHas) {
				t.Fatalf("got %+v\nwant state %q next %q gave up %v note ~%q", a, tc.state, tc.next, tc.gaveUp, tc.noteHas)
			}
		})
	}
}

// KeeperAgents reads the pins from the runtime folder's toml and
// the journal beside it; an agent without a pin is not listed.
func TestKeeperAgentsReadsTheRuntimeFolder(t *testing.T) {
	g := gittest.Init(t, "shop")
	runtime := filepath.Join(g.Dir, ".git", "m1nd")
	if err := os.MkdirAll(filepath.Join(runtime, "keeper"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runtime, ConfigFile), []byte("[[keeper]]\nagent = \"bob\"\nclient = \"claude\"\nstream = [\"claude\"]\nfloor = 1\n"), 0o600)
	os.WriteFile(JournalPath(runtime), []byte(`{"at":"2026-12-01T12:00:00Z","agent":"carol","event":"woke"}
{"at":"2026-12-01T12:00:00Z","agent":"bob","event":"woke","how":"stream"}
not json
{"at":"2026-12-01T12:00:01Z","agent":"bob","event":"turn_ended","session_id":"s1"}
`), 0o600)
	got, err := KeeperAgents(runtime, time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Agent != "bob" || got[0].State != "idle" || got[0].SessionID != "s1" || got[0].Mode != "stream" {
		t.Fatalf("got %+v", got)
	}
}
