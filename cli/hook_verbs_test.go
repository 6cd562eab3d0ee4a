package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A hook must never fail its host for m1nd's own mistakes: a bad flag, an
// unknown event or host, a bad budget or agent, a broken stdin, no
// repository. Each exits 0 with one line on stderr and nothing on stdout;
// only a deliberate block (PreCompact on Claude Code) exits 2.
func TestHookNeverFailsItsHost(t *testing.T) {
	r := newRepo(t)
	stop := `{"session_id":"s1","hook_event_name":"Stop","cwd":"` + r.Dir + `"}`
	nowhere := filepath.Join(t.TempDir(), "not-a-repo")
	for _, tt := range []struct {
		name, dir, in string
		args          []string
		stderr        string
	}{
		{"bad flag", r.Dir, stop, []string{"hook", "claude", "Stop", "--bad-flag"}, "m1nd hook claude: flag provided but not defined: -bad-flag; nothing done"},
		{"bad flag before the event", r.Dir, stop, []string{"hook", "codex", "--nope", "Stop"}, "m1nd hook codex: flag provided but not defined: -nope; nothing done"},
		{"budget not a number", r.Dir, stop, []string{"hook", "claude", "Stop", "--budget", "lots"}, `m1nd hook claude: invalid value "lots" for flag -budget`},
		{"budget without a value", r.Dir, stop, []string{"hook", "codex", "Stop", "--budget"}, `m1nd hook codex: invalid value "Stop" for flag -budget`}, // hoisted: it takes the event
		{"unknown event", r.Dir, stop, []string{"hook", "claude", "SubagentStop"}, `m1nd hook claude: event "SubagentStop" is not one m1nd answers; nothing done`},
		{"no event", r.Dir, stop, []string{"hook", "claude"}, "m1nd hook claude: want exactly one EVENT argument, got 0; nothing done"},
		{"two events", r.Dir, stop, []string{"hook", "codex", "Stop", "Stop"}, "m1nd hook codex: want exactly one EVENT argument, got 2; nothing done"},
		{"unknown host", r.Dir, stop, []string{"hook", "cursor", "Stop"}, `m1nd hook: unknown host "cursor" (want claude or codex); nothing done`},
		{"bad agent", r.Dir, stop, []string{"hook", "claude", "Stop", "--agent", "Not An Agent"}, `m1nd hook claude Stop: agent id "Not An Agent" (from --agent) is not valid`},
		{"bad stdin", r.Dir, "{", []string{"hook", "claude", "Stop"}, "m1nd hook claude Stop: hook input is not a JSON object: "},
		{"no repository", nowhere, `{"hook_event_name":"Stop"}`, []string{"hook", "claude", "Stop"}, "m1nd hook claude Stop: cannot change to "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := m1nd(t, tt.dir, tt.in, tt.args...)
			if res.code != 0 || res.out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and nothing on stdout", res.code, res.out, res.err)
			}
			if !strings.HasPrefix(res.err, tt.stderr) || strings.Count(res.err, "\n") != 1 {
				t.Fatalf("stderr %q, want one line starting %q", res.err, tt.stderr)
			}
		})
	}
	// The one deliberate block.
	pre := `{"session_id":"s1","hook_event_name":"PreCompact","trigger":"auto","cwd":"` + r.Dir + `"}`
	if res := m1nd(t, r.Dir, pre, "hook", "claude", "PreCompact", "--block-auto-compact"); res.code != 2 || res.out != "" {
		t.Fatalf("Claude PreCompact block: exit %d %q %q", res.code, res.out, res.err)
	}
	if res := m1nd(t, r.Dir, pre, "hook", "codex", "PreCompact", "--block-auto-compact"); res.code != 0 || !strings.Contains(res.out, `"continue":false`) {
		t.Fatalf("Codex PreCompact block: exit %d %q %q", res.code, res.out, res.err)
	}
	// A human's typo outside the hook form stays a usage error.
	if res := m1nd(t, r.Dir, "", "hook", "instal", "claude"); res.code != exitUsage {
		t.Fatalf("m1nd hook instal claude: exit %d", res.code)
	}
}
