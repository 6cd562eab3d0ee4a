package testscripts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// spyHooks adds, beside m1nd's hooks in a client's hook settings (the
// {"hooks":{EVENT:[{matcher,hooks:[…]}]}} both clients read), a hook per
// event that appends the event's name to log. The command mentions
// " hook codex " so trustCodexHooks trusts it with m1nd's.
func spyHooks(t *testing.T, settings, log string, events ...string) {
	t.Helper()
	doc := map[string]any{}
	if data, err := os.ReadFile(settings); err == nil {
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		doc["hooks"] = hooks
	}
	for _, ev := range events {
		cmd := fmt.Sprintf(`sh -c 'cat >/dev/null; echo %s >> %s' spy hook codex order`, ev, log)
		entry := map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 10}}}
		list, _ := hooks[ev].([]any)
		hooks[ev] = append(list, entry)
	}
	data, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(settings, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// orderLog is the events the spies logged and the model requests the
// server saw, in one order.
type orderLog struct {
	path string
	mu   sync.Mutex
}

func (o *orderLog) request(n int, _ []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, err := os.OpenFile(o.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "request%d\n", n)
		f.Close()
	}
}

func (o *orderLog) read(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(o.path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), " ")
}

// TestClientsHookOrder writes down what docs/mail.md says an ack rests
// on (issue 38): each client's real order of hook events around a tool
// batch and the model requests. Claude Code runs PostToolBatch after the
// batch's PostToolUse and before the next request; Codex has no batch
// hook; both run Stop only after the model answered with text.
func TestClientsHookOrder(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	t.Run("claude", func(t *testing.T) {
		r := newClientRepo(t, "claude")
		o := &orderLog{path: filepath.Join(t.TempDir(), "order")}
		spyHooks(t, filepath.Join(r.Dir, ".claude", "settings.json"), o.path,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolBatch", "Stop", "SubagentStop")
		srv := fakemodel.Start(t,
			fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
			fakemodel.Tool("Bash", map[string]any{"command": "echo second", "description": "second step"}),
			fakemodel.Text("All done."))
		srv.OnTurn(o.request)
		if res, stderr, err := r.claude(srv, "do the task"); err != nil || res.IsError {
			t.Fatalf("claude -p: %v %+v\nstderr: %s", err, res, stderr)
		}
		const want = "SessionStart UserPromptSubmit request1 PreToolUse PostToolUse PostToolBatch request2 PreToolUse PostToolUse PostToolBatch request3 Stop"
		if got := o.read(t); got != want {
			t.Fatalf("Claude Code's order:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("codex", func(t *testing.T) {
		r := newClientRepo(t, "codex")
		o := &orderLog{path: filepath.Join(t.TempDir(), "order")}
		spyHooks(t, filepath.Join(r.Dir, ".codex", "hooks.json"), o.path,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
		srv := fakemodel.Start(t,
			fakemodel.Tool("exec_command", map[string]any{"cmd": "echo first"}),
			fakemodel.Tool("exec_command", map[string]any{"cmd": "echo second"}),
			fakemodel.Text("All done."))
		srv.OnTurn(o.request)
		if stdout, stderr, err := r.codex(srv, "", "do the task"); err != nil || !strings.Contains(stdout, "All done.") {
			t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
		}
		const want = "SessionStart UserPromptSubmit request1 PreToolUse PostToolUse request2 PreToolUse PostToolUse request3 Stop"
		if got := o.read(t); got != want {
			t.Fatalf("Codex's order:\n got %s\nwant %s", got, want)
		}
	})
}
