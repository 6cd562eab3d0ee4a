package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/m1nd/m1nd/memory"
)

// TestKeeperFlushAskRidesTheNextToolCall: the keeper's ask, left while
// the session is mid-turn, reaches the model with the next hook that
// does (a tool call's), with its reason, once; a session that starts
// afresh owes none.
func TestKeeperFlushAskRidesTheNextToolCall(t *testing.T) {
	s := newSession(t, "bob", HostCodex)
	ctx := context.Background()
	rt := s.Flows.RuntimeDir()
	if err := AskFlush(rt, "bob", "  "); err == nil {
		t.Fatal("a flush ask without a reason was taken")
	}
	if err := AskFlush(rt, "../x", "cap"); err == nil {
		t.Fatal("a flush ask for a bad agent id was taken")
	}
	if err := AskFlush(rt, "bob", "timeout_secs (60) nears\nmid-turn"); err != nil {
		t.Fatal(err)
	}
	if !FlushOwed(rt, "bob") || FlushOwed(rt, "carol") {
		t.Fatal("the ask is not bob's alone")
	}
	text := contextOf(t, s.Handle(ctx, EventPostToolUse, &Input{}), EventPostToolUse)
	if text != FlushAskFor("timeout_secs (60) nears mid-turn") {
		t.Fatalf("the tool call carried %q", text)
	}
	if FlushOwed(rt, "bob") {
		t.Fatal("the ask is still owed once carried")
	}
	if res := s.Handle(ctx, EventPostToolUse, &Input{}); len(res.Stdout) != 0 {
		t.Fatalf("asked twice: %s", res.Stdout)
	}
	// A blocked compaction's ask keeps its own words.
	if err := s.setMark(flushMark, ""); err != nil {
		t.Fatal(err)
	}
	if text := contextOf(t, s.Handle(ctx, EventPostToolUse, &Input{}), EventPostToolUse); text != FlushAsk {
		t.Fatalf("the compaction's ask: %q", text)
	}
	// A fresh session owes none.
	if err := AskFlush(rt, "bob", "cap"); err != nil {
		t.Fatal(err)
	}
	s.Handle(ctx, EventSessionStart, &Input{Source: "startup"})
	if FlushOwed(rt, "bob") {
		t.Fatal("a fresh session owes the flush of the one before")
	}
	if err := AskFlush(rt, "bob", "cap"); err != nil {
		t.Fatal(err)
	}
	if err := ClearFlush(rt, "bob"); err != nil || FlushOwed(rt, "bob") {
		t.Fatalf("clear: %v", err)
	}
}

func TestInputsChanged(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "user"))
	t.Setenv("CODEX_HOME", filepath.Join(dir, "codexhome"))
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := func(id, sort, state string) *memory.Memory {
		return &memory.Memory{ID: id, Agent: "bob", Sort: sort, State: state}
	}
	write("CLAUDE.md", "be brief")
	start := &memory.View{Memories: []*memory.Memory{mem("m1", "decided", memory.StateInForce), mem("m2", "learned", memory.StateInForce), mem("x", "learned", memory.StateInForce)}}
	start.Memories[2].Agent = "carol"
	in := ReadInputs(HostClaude, dir, start, "bob")
	if !slices.Equal(in.Memories, []string{"m1", "m2"}) {
		t.Fatalf("the header's memories: %v", in.Memories)
	}
	grown := &memory.View{Memories: append(slices.Clone(start.Memories), mem("m3", "learned", memory.StateInForce))}
	for _, tc := range []struct {
		name string
		edit func()
		v    *memory.View
		want []string
	}{
		{"nothing changed", func() {}, start, nil},
		{"a memory written since is no change", func() {}, grown, nil},
		{"a listed memory resolved", func() {}, &memory.View{Memories: []*memory.Memory{mem("m1", "decided", "resolved"), mem("m2", "learned", memory.StateInForce)}}, []string{"memory"}},
		{"the instructions edited", func() { write("CLAUDE.md", "be thorough") }, start, []string{"CLAUDE.md"}},
		{"a settings file appears", func() { write(".claude/settings.json", `{"hooks":{}}`) }, start, []string{"CLAUDE.md", ".claude/settings.json"}},
		{"the user's settings appear", func() { write("user/settings.json", `{}`) }, start, []string{"CLAUDE.md", ".claude/settings.json", "user/settings.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit()
			if got := in.Changed(HostClaude, dir, tc.v); !slices.Equal(got, tc.want) {
				t.Fatalf("changed %v, want %v", got, tc.want)
			}
		})
	}
	// Codex reads AGENTS.md and its own home; a FIFO is read as absent,
	// never waited on.
	cx := ReadInputs(HostCodex, dir, start, "bob")
	write("AGENTS.md", "use tabs")
	if err := mkfifo(filepath.Join(dir, "AGENTS.override.md")); err != nil {
		t.Fatal(err)
	}
	got := cx.Changed(HostCodex, dir, start)
	if !slices.Equal(got, []string{"AGENTS.md"}) {
		t.Fatalf("codex: changed %v", got)
	}
	if files := InputFiles("gemini", dir); files != nil {
		t.Fatalf("an unknown client has inputs: %v", files)
	}
	if !strings.HasSuffix(InputFiles(HostCodex, dir)[2], filepath.Join("codexhome", "config.toml")) {
		t.Fatalf("codex's config: %v", InputFiles(HostCodex, dir))
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
