package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestValidSessionID(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"5f0e2c1a-9b7d-4c1e-8a2b-3c4d5e6f7a8b", true},
		{"019a7c3e-thread", true},
		{"a", true},
		{"", false},
		{"../etc/passwd", false},
		{"a/b", false},
		{"a..b", false},
		{".hidden", false},
		{"-flag", false},
		{"with space", false},
		{"nul\x00", false},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
	} {
		if got := ValidSessionID(tt.id); got != tt.ok {
			t.Errorf("ValidSessionID(%q) = %v, want %v", tt.id, got, tt.ok)
		}
	}
}

func TestParseStat(t *testing.T) {
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	for _, tt := range []struct {
		line  string
		want  Stat
		valid bool
	}{
		{"4242 (claude) S 4100 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 11 0 987654 1 2 3", Stat{"claude", 'S', 4100, 987654}, true},
		{"77 (tmux: server) (x) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0", Stat{"tmux: server) (x", 'R', 1, 55}, true},
		{"1 () S 0" + tail, Stat{"", 'S', 0, 0}, true},
		{"9 (codex) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0", Stat{"codex", 'Z', 1, 77}, true},
		{"no parentheses S 1" + tail, Stat{}, false},
		{"1 (x) S 1 2 3", Stat{}, false},
		{"1 (x) S -4" + tail, Stat{}, false},
		{"1 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -9", Stat{}, false},
		{"1 )x( S 1" + tail, Stat{}, false},
	} {
		got, err := ParseStat([]byte(tt.line))
		if (err == nil) != tt.valid || (tt.valid && got != tt.want) {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v (valid %v)", tt.line, got, err, tt.want, tt.valid)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (claude) S 4100 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 11 0 987654 1 2 3"))
	f.Add([]byte("1 ((sd-pam)) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStat(data)
		if err != nil {
			return
		}
		if st.PPID < 0 || strings.Count(string(data), st.Comm) == 0 {
			t.Fatalf("ParseStat(%q) = %+v", data, st)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"session_id":"s1","client":"claude","agent":"bob","state":"idle","last_event":"Stop","last_event_at":"2026-12-01T10:00:00Z","pid":42,"pid_start":7}`))
	f.Add([]byte(`{"session_id":"../x","client":"codex","state":"mid-turn","last_event_at":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := DecodeRecord(data)
		if err != nil {
			return
		}
		if !ValidSessionID(rec.SessionID) || rec.PID < 0 || (rec.State != StateIdle && rec.State != StateMidTurn) {
			t.Fatalf("DecodeRecord(%q) accepted %+v", data, rec)
		}
		again, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeRecord(again); err != nil {
			t.Fatalf("a decoded record does not decode again: %v\n%s", err, again)
		}
	})
}

func TestStateAfter(t *testing.T) {
	block := Result{Stdout: []byte(`{"decision":"block"}`)}
	for _, tt := range []struct {
		event string
		res   Result
		state string
		ok    bool
	}{
		{EventSessionStart, Result{}, StateMidTurn, true},
		{EventUserPromptSubmit, Result{}, StateMidTurn, true},
		{EventPostToolUse, Result{}, StateMidTurn, true},
		{EventPostToolBatch, Result{}, StateMidTurn, true},
		{EventStop, Result{}, StateIdle, true},
		{EventStop, block, StateMidTurn, true}, // letters keep the turn going
		{EventPreCompact, Result{}, "", false},
		{EventPostCompact, Result{}, "", false},
	} {
		if state, ok := StateAfter(tt.event, tt.res); state != tt.state || ok != tt.ok {
			t.Errorf("StateAfter(%s) = %q %v, want %q %v", tt.event, state, ok, tt.state, tt.ok)
		}
	}
}

// startChild starts a process this test owns and returns it with its Proc.
func startChild(t *testing.T, name string, args ...string) (*exec.Cmd, Proc) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	st, err := ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	return cmd, Proc{PID: cmd.Process.Pid, Start: st.Start, Command: st.Comm}
}

func TestRegistryRecordsAndChecksLiveness(t *testing.T) {
	reg := NewRegistry(t.TempDir())
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	child, proc := startChild(t, "sleep", "60")
	if !Alive(proc) {
		t.Fatalf("a running child is not alive: %+v", proc)
	}
	if Alive(Proc{PID: proc.PID, Start: proc.Start + 1}) {
		t.Fatal("a pid with another start time was taken for the same process")
	}
	in := &Input{SessionID: "sess-1", TranscriptPath: "/t/sess-1.jsonl", Cwd: "/wt/a"}
	if err := reg.Note(in, HostClaude, "bob", EventSessionStart, StateMidTurn, proc, now); err != nil {
		t.Fatal(err)
	}
	// A compaction event keeps the state; Stop makes the session idle.
	if err := reg.Note(&Input{SessionID: "sess-1"}, HostClaude, "bob", EventPreCompact, "", Proc{}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	rec, err := reg.Read("sess-1")
	if err != nil || rec.State != StateMidTurn || rec.Transcript != "/t/sess-1.jsonl" || rec.Worktree != "/wt/a" || rec.Proc != proc ||
		rec.StartedAt != "2026-12-01T10:00:00Z" || rec.LastEventAt != "2026-12-01T10:01:00Z" || rec.LastEvent != EventPreCompact {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if err := reg.Note(&Input{SessionID: "sess-1"}, HostClaude, "bob", EventStop, StateIdle, proc, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(reg.Dir, "sess-1.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file: %v %v", fi.Mode(), err)
	}
	if err := reg.Note(&Input{SessionID: "../escape"}, HostCodex, "bob", EventStop, StateIdle, proc, now); err == nil {
		t.Fatal("an unsafe session id was recorded")
	}
	listed, err := reg.List(now.Add(3*time.Minute), false)
	if err != nil || len(listed) != 1 || !listed[0].Live || listed[0].State != StateIdle {
		t.Fatalf("live list: %+v %v", listed, err)
	}

	child.Process.Kill()
	child.Wait()
	if Alive(proc) {
		t.Fatal("a killed (and reaped) child is still alive")
	}
	if listed, _ := reg.List(now.Add(3*time.Minute), false); len(listed) != 0 {
		t.Fatalf("a dead session listed as live: %+v", listed)
	}
	listed, _ = reg.List(now.Add(3*time.Minute), true)
	if len(listed) != 1 || listed[0].Live {
		t.Fatalf("--all: %+v", listed)
	}
	// A day later the dead record is swept; a live one of the same age is not.
	_, other := startChild(t, "sleep", "60")
	if err := reg.Note(&Input{SessionID: "sess-2"}, HostCodex, "carol", EventStop, StateIdle, other, now); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(reg.Dir, "junk.json"), []byte("{"), 0o600)
	old := now.Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(reg.Dir, "junk.json"), old, old)
	listed, _ = reg.List(now.Add(25*time.Hour), true)
	if len(listed) != 1 || listed[0].SessionID != "sess-2" || !listed[0].Live {
		t.Fatalf("after a day: %+v", listed)
	}
	// Listing removes nothing; Sweep removes what is due.
	if _, err := os.Stat(filepath.Join(reg.Dir, "sess-1.json")); err != nil {
		t.Fatalf("List removed a record: %v", err)
	}
	if n, err := reg.Sweep(now.Add(25 * time.Hour)); err != nil || n != 2 {
		t.Fatalf("Sweep removed %d (%v), want sess-1.json and junk.json", n, err)
	}
	for _, gone := range []string{"sess-1.json", "junk.json"} {
		if _, err := os.Stat(filepath.Join(reg.Dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s not swept: %v", gone, err)
		}
	}
}

// The host is the first ancestor that is not a shell: a hook run through
// "sh -c" names the process that ran the shell.
func TestHostProcessSkipsShells(t *testing.T) {
	self, err := ReadStat(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	// "; :" keeps sh from exec-ing sleep in its place.
	_, sh := startChild(t, "sh", "-c", "sleep 60; :")
	got, err := HostProcess(sh.PID)
	if err != nil || got.PID != os.Getpid() || got.Start != self.Start {
		t.Fatalf("HostProcess through sh = %+v, %v; want pid %d", got, err, os.Getpid())
	}
	_, sleeper := startChild(t, "sleep", "60")
	if got, err := HostProcess(sleeper.PID); err != nil || got != sleeper {
		t.Fatalf("HostProcess of a non-shell = %+v, %v; want %+v", got, err, sleeper)
	}
	if _, err := HostProcess(-1); err == nil {
		t.Fatal("a host process for pid -1")
	}
}

// TestRegistryAsTheKeepersView: the keeper asks whether an agent has a
// live session (checked, never read) and for its last one on a client,
// live or not; Assess reads that session's transcript for the decider.
func TestRegistryAsTheKeepersView(t *testing.T) {
	reg := NewRegistry(t.TempDir())
	now := time.Now().UTC()
	child, proc := startChild(t, "sleep", "60")
	transcript := filepath.Join(t.TempDir(), "s-new.jsonl")
	os.WriteFile(transcript, []byte(claudeAssistant("m1", now.Add(-3*time.Minute), 10, 30000, 0, 30000)+"\n"), 0o600)
	for _, s := range []struct {
		id, client string
		at         time.Time
		transcript string
	}{
		{"s-old", HostClaude, now.Add(-time.Hour), "/gone.jsonl"},
		{"s-codex", HostCodex, now.Add(-time.Minute), ""},
		{"s-new", HostClaude, now.Add(-2 * time.Minute), transcript},
	} {
		if err := reg.Note(&Input{SessionID: s.id, TranscriptPath: s.transcript}, s.client, "bob", EventStop, StateIdle, proc, s.at); err != nil {
			t.Fatal(err)
		}
	}
	if live, err := reg.Live("bob"); err != nil || !live {
		t.Fatalf("bob live: %v %v", live, err)
	}
	if live, _ := reg.Live("carol"); live {
		t.Fatal("carol has no session")
	}
	id, path, ok, err := reg.Last("bob", HostClaude)
	if err != nil || !ok || id != "s-new" || path != transcript {
		t.Fatalf("last claude session: %q %q %v %v", id, path, ok, err)
	}
	listed, _ := reg.List(now, false)
	for _, l := range listed {
		if l.SessionID != "s-new" {
			continue
		}
		d := Assess(l, 2, now)
		if d.Action != ActionKeep || d.Inputs.Prefix != 30010 || d.Inputs.CacheTTL != 3600 || !d.Inputs.Live || d.Inputs.Waiting != 2 {
			t.Fatalf("assess: %+v", d)
		}
	}
	child.Process.Kill()
	child.Wait()
	if live, _ := reg.Live("bob"); live {
		t.Fatal("bob's sessions died with their process")
	}
	if id, _, ok, _ := reg.Last("bob", HostClaude); !ok || id != "s-new" {
		t.Fatalf("the last session outlives its process: %q %v", id, ok)
	}
}

// FuzzValidSessionID holds the hand-written check to the pattern it
// stands for.
func FuzzValidSessionID(f *testing.F) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	for _, s := range []string{"5f0e2c1a-9b7d", "a..b", ".x", "-x", "a_b.c-d", strings.Repeat("a", 129), "é", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := ValidSessionID(id), pattern.MatchString(id) && !strings.Contains(id, ".."); got != want {
			t.Fatalf("ValidSessionID(%q) = %v, want %v", id, got, want)
		}
	})
}

// TestAliveSeesAZombieAsDead: a child that exited but is not reaped yet
// still has its /proc entry; it no longer runs.
func TestAliveSeesAZombieAsDead(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var st Stat
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if st, err = ReadStat(pid); err != nil {
			t.Fatal(err)
		}
		if st.State == 'Z' || time.Now().After(deadline) {
			break
		}
	}
	if st.State != 'Z' {
		t.Fatalf("the unreaped child is in state %c", st.State)
	}
	if Alive(Proc{PID: pid, Start: st.Start}) {
		t.Error("a zombie counts as alive")
	}
	cmd.Wait()
}
