package testscripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// The real Claude Code and Codex CLIs, headless, against a scripted model
// server on loopback (testkit/fakemodel), with m1nd's session hooks
// installed by `m1nd hook install` in a real repository. .ci/clients.sh
// installs the pinned clients from npm into $M1ND_CLIENTS_DIR (default
// ~/.cache/m1nd-clients); without them these tests skip on a developer's
// machine and fail under CI (CI set).

// The pinned clients: request shapes and hook inputs below were read off
// these versions.
const (
	claudeVersion = "2.1.332"
	codexVersion  = "0.171.0"
)

// clientBin finds an agent client: in $M1ND_CLIENTS_DIR, the default
// cache folder, then PATH.
func clientBin(t *testing.T, name, version string) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("M1ND_CLIENTS_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "m1nd-clients"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "node_modules", ".bin", name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return checkVersion(t, p, version)
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return checkVersion(t, p, version)
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no %s: the client tests must run under CI (.ci/clients.sh installs it into $M1ND_CLIENTS_DIR)", name)
	}
	t.Skipf("no %s in $M1ND_CLIENTS_DIR, ~/.cache/m1nd-clients or PATH (.ci/clients.sh installs it); the client tests run in CI", name)
	return ""
}

// checkVersion logs a client that is not the pinned version: the tests
// may still pass, and a failure then says why it may not.
func checkVersion(t *testing.T, bin, want string) string {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	if !bytes.Contains(out, []byte(want)) {
		t.Logf("%s is %s; the tests were written against %s", bin, bytes.TrimSpace(out), want)
	}
	return bin
}

// clientRepo is a scratch repository whose sessions are agent bob's, with
// m1nd's hooks for host installed, and a home for the client.
type clientRepo struct {
	*gittest.Repo
	t    *testing.T
	home string   // HOME, and the client's config folder under it
	env  []string // git's hermetic env without any of the host's agent settings
}

func newClientRepo(t *testing.T, host string, install ...string) *clientRepo {
	t.Helper()
	r := &clientRepo{Repo: gittest.Init(t, "brain"), t: t, home: t.TempDir()}
	for _, kv := range gittest.Env(t) {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "M1ND_AGENT", strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE"),
			strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "CODEX_"):
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env, "HOME="+r.home)
	r.Git("-C", r.Dir, "config", "m1nd.agent", "bob")
	r.m1nd(append([]string{"hook", "install", host}, install...)...)
	return r
}

// m1nd runs the m1nd under test in the repository.
func (r *clientRepo) m1nd(args ...string) string {
	r.t.Helper()
	cmd := exec.Command(m1ndBin(r.t), args...)
	cmd.Dir, cmd.Env = r.Dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("m1nd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sendDuringTurn makes the server send bob a letter from alice while it
// serves agent turn n: the letter lands mid-turn, between tool calls.
func (r *clientRepo) sendDuringTurn(srv *fakemodel.Server, n int, text string) {
	srv.OnTurn(func(turn int, _ []byte) {
		if turn != n {
			return
		}
		cmd := exec.Command(m1ndBin(r.t), "mail", "send", "--to", "bob", "--agent", "alice", "--what", text)
		cmd.Dir, cmd.Env = r.Dir, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			r.t.Errorf("mail send during turn %d: %v\n%s", n, err, out)
		}
	})
}

// wantHook fails the test unless the host's settings file holds m1nd's
// hook command ending in command (an event and its flags).
func (r *clientRepo) wantHook(settings, command string) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.Dir, settings))
	if err != nil {
		r.t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(" "+command+`"`)) {
		r.t.Fatalf("%s has no m1nd hook %q:\n%s", settings, command, data)
	}
}

// run runs a client to its end, at most two minutes.
func (r *clientRepo) run(env []string, bin string, args ...string) (stdout, stderr string, err error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = r.Dir, append(append([]string(nil), r.env...), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err = cmd.Run()
	r.t.Logf("%s %s: %v in %s", filepath.Base(bin), args[0], err, time.Since(start).Round(time.Millisecond))
	return o.String(), e.String(), err
}

// claude runs `claude -p PROMPT` against srv, Bash allowed.
func (r *clientRepo) claude(srv *fakemodel.Server, prompt string) (result claudeResult, stderr string, err error) {
	r.t.Helper()
	bin := clientBin(r.t, "claude", claudeVersion)
	out, stderr, err := r.run(r.claudeEnv(srv), bin, append([]string{"-p", prompt}, claudeFlags...)...)
	if jerr := json.Unmarshal([]byte(out), &result); jerr != nil {
		r.t.Fatalf("claude -p printed no JSON result (%v): %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, jerr, out, stderr, srv.Log())
	}
	return result, stderr, err
}

// claudeFlags follow the prompt on every headless claude command line.
var claudeFlags = []string{"--allowedTools", "Bash", "--output-format", "json"}

// claudeEnv points Claude Code at srv, with a config folder of its own
// and no traffic but the model's.
func (r *clientRepo) claudeEnv(srv *fakemodel.Server) []string {
	return []string{
		"CLAUDE_CONFIG_DIR=" + filepath.Join(r.home, ".claude"),
		"ANTHROPIC_API_KEY=sk-ant-m1nd-test-dummy",
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

type claudeResult struct {
	Result         string `json:"result"`
	IsError        bool   `json:"is_error"`
	NumTurns       int    `json:"num_turns"`
	TerminalReason string `json:"terminal_reason"`
}

// codexHome writes CODEX_HOME's config.toml: the fake provider, the
// repository trusted, and extra settings.
func (r *clientRepo) codexHome(srv *fakemodel.Server, extra string) string {
	r.t.Helper()
	home := filepath.Join(r.home, ".codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		r.t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a TOML basic string
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
%s

[model_providers.fake]
name = "fakemodel"
base_url = %s
wire_api = "responses"
env_key = "M1ND_FAKE_API_KEY"

[projects.%s]
trust_level = "trusted"
`, extra, q(srv.URL+"/v1"), q(r.Dir))
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return home
}

func (r *clientRepo) codexEnv(home string) []string {
	return []string{"CODEX_HOME=" + home, "M1ND_FAKE_API_KEY=dummy"}
}

// trustCodexHooks trusts m1nd's project hooks the way Codex's /hooks
// screen does, without a terminal: `codex app-server` lists them with
// their current hash (JSON-RPC hooks/list), and each is recorded as
// [hooks.state."<key>"] trusted_hash in CODEX_HOME's config.toml. Codex
// 0.171.0 runs no untrusted project hook under `codex exec`, silently.
func (r *clientRepo) trustCodexHooks(bin, home string) {
	r.t.Helper()
	hooks := r.codexHooks(bin, home)
	var b strings.Builder
	for _, h := range hooks {
		if h.Source == "project" && strings.Contains(h.Command, " hook codex ") {
			k, _ := json.Marshal(h.Key)
			v, _ := json.Marshal(h.CurrentHash)
			fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", k, v)
		}
	}
	if b.Len() == 0 {
		r.t.Fatalf("codex app-server lists no m1nd hook: %+v", hooks)
	}
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		r.t.Fatal(err)
	}
	f.Close()
	for _, h := range r.codexHooks(bin, home) {
		if strings.Contains(h.Command, " hook codex ") && h.TrustStatus != "trusted" {
			r.t.Fatalf("m1nd's hook %s is %q after trusting it", h.Key, h.TrustStatus)
		}
	}
}

type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Source      string `json:"source"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexHooks asks `codex app-server` (JSON-RPC, a line per message on
// stdio) for the hooks it sees in the repository.
func (r *clientRepo) codexHooks(bin, home string) []codexHook {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir, cmd.Env = r.Dir, append(append([]string(nil), r.env...), r.codexEnv(home)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	out := bufio.NewScanner(outPipe)
	out.Buffer(nil, 16<<20)
	send := func(msg string) {
		if _, err := in.Write([]byte(msg + "\n")); err != nil {
			r.t.Fatalf("codex app-server: %v\n%s", err, stderr.String())
		}
	}
	await := func(id int) json.RawMessage {
		for out.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(out.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			if m.Error != nil {
				r.t.Fatalf("codex app-server request %d: %s", id, m.Error)
			}
			return m.Result
		}
		r.t.Fatalf("codex app-server ended before answering request %d: %v\n%s", id, out.Err(), stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"m1nd-tests","version":"1"}}}`)
	await(1)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	cwds, _ := json.Marshal([]string{r.Dir})
	send(`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":` + string(cwds) + `}}`)
	var list struct {
		Data []struct {
			Hooks []codexHook `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(await(2), &list); err != nil {
		r.t.Fatal(err)
	}
	var hooks []codexHook
	for _, d := range list.Data {
		hooks = append(hooks, d.Hooks...)
	}
	return hooks
}

// codex runs `codex exec PROMPT` against srv.
func (r *clientRepo) codex(srv *fakemodel.Server, configExtra, prompt string) (stdout, stderr string, err error) {
	r.t.Helper()
	bin := clientBin(r.t, "codex", codexVersion)
	home := r.codexHome(srv, configExtra)
	r.trustCodexHooks(bin, home)
	// The sandbox would need user namespaces a CI container may not have;
	// the model here is ours and runs only echo.
	return r.run(r.codexEnv(home), bin, "exec", "--sandbox", "danger-full-access", prompt)
}

// assertLetterOnce: the letter is absent from every model turn before
// turn n, present exactly once in turn n, and still exactly once (never
// delivered again) in every turn after it.
func assertLetterOnce(t *testing.T, srv *fakemodel.Server, mark string, n int) {
	t.Helper()
	turns := srv.Turns()
	if len(turns) < n {
		t.Fatalf("%d model turns, want at least %d:\n%s", len(turns), n, srv.Log())
	}
	for _, turn := range turns {
		want := 1
		if turn.N < n {
			want = 0
		}
		if got := bytes.Count(turn.Body, []byte(mark)); got != want {
			t.Errorf("turn %d shows the letter %d times, want %d", turn.N, got, want)
		}
	}
}

const letterMark = "LETTER-7f3a: the ledger gate is red, look at core"

func TestClaudeLetterMidTurn(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	srv := fakemodel.Start(t,
		fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
		fakemodel.Tool("Bash", map[string]any{"command": "echo second", "description": "second step"}),
		fakemodel.Text("All done."))
	r.sendDuringTurn(srv, 1, letterMark)
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError || res.Result != "All done." {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	assertLetterOnce(t, srv, letterMark, 2)
	turns := srv.Turns()
	if len(turns) != 3 {
		t.Errorf("%d model turns, want 3:\n%s", len(turns), srv.Log())
	}
	// SessionStart's rehydration reached the first turn; the letter came
	// through PostToolUse, framed as mail. Claude Code 2.1.332 shows hook
	// context to the model as a role "system" message naming the hook.
	if !bytes.Contains(turns[0].Body, []byte("m1nd: you are agent bob in brain brain (session startup)")) {
		t.Errorf("turn 1 lacks the SessionStart rehydration")
	}
	if !bytes.Contains(turns[1].Body, []byte(`hook additional context: m1nd mail for bob: 1 letter from other agents.`)) {
		t.Errorf("turn 2 lacks the letter framed as hook context:\n%s", clip(turns[1].Body))
	}
}

func TestCodexLetterMidTurn(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	srv := fakemodel.Start(t,
		fakemodel.Tool("exec_command", map[string]any{"cmd": "echo first"}),
		fakemodel.Tool("exec_command", map[string]any{"cmd": "echo second"}),
		fakemodel.Text("All done."))
	r.sendDuringTurn(srv, 1, letterMark)
	stdout, stderr, err := r.codex(srv, "", "do the task")
	if err != nil || !strings.Contains(stdout, "All done.") {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	turns := srv.Turns()
	if len(turns) != 3 {
		t.Errorf("%d model turns, want 3:\n%s", len(turns), srv.Log())
	}
	if !bytes.Contains(turns[0].Body, []byte(`"name":"exec_command"`)) {
		t.Fatalf("codex offers no exec_command tool; the scripted tool calls need another name:\n%s", clip(turns[0].Body))
	}
	assertLetterOnce(t, srv, letterMark, 2)
	// Codex 0.171.0 shows hook context as a "developer" message.
	if !bytes.Contains(turns[0].Body, []byte("m1nd: you are agent bob in brain brain (session startup)")) {
		t.Errorf("turn 1 lacks the SessionStart rehydration")
	}
	if !bytes.Contains(turns[1].Body, []byte(`"role":"developer","content":[{"type":"input_text","text":"m1nd mail for bob: 1 letter from other agents.`)) {
		t.Errorf("turn 2 lacks the letter as a developer message:\n%s", clip(turns[1].Body))
	}
}

// fullContext is what a reply claims the context holds, in tokens: past
// Claude Code's auto-compact threshold for its default model (a window of
// 1,000,000 tokens; 2.1.332 compacts from 977,000 on, measured here, and
// not at 976,000), and past the Codex limit set below.
const fullContext = 990_000

// codexCompactConfig makes Codex compact once a turn reports more than
// 50,000 tokens.
const codexCompactConfig = "model_context_window = 100000\nmodel_auto_compact_token_limit = 50000"

func TestClaudeAutoCompactRehydrates(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude", "--allow-auto-compact")
	full := fakemodel.Tool("Bash", map[string]any{"command": "echo full", "description": "fill the context"})
	full.InputTokens = fullContext
	srv := fakemodel.Start(t, full, fakemodel.Text("All done."))
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	if len(srv.OfKind(fakemodel.KindCompact)) == 0 {
		t.Fatalf("claude did not compact:\n%s", srv.Log())
	}
	// After the summary, SessionStart (source compact) rehydrates.
	turns := srv.Turns()
	last := turns[len(turns)-1]
	if !bytes.Contains(last.Body, []byte("m1nd: you are agent bob in brain brain (session compact)")) {
		t.Errorf("the turn after compaction lacks the rehydration:\n%s\n%s", srv.Log(), clip(last.Body))
	}
}

// m1nd hook install blocks automatic compaction by default (memory is the
// summary): its PreCompact, with --block-auto-compact, exits 2 on an automatic
// compaction: Claude Code 2.1.332 then sends no summary request and ends
// the headless run as an error, "Prompt is too long" (terminal_reason
// blocking_limit, exit 1): the session ends instead of being summarised,
// and the next session starts from m1nd's rehydration. Its blocking limit
// sits at the auto-compact threshold (measured from 977,000 to 990,000):
// there is no band where a blocked compaction lets the session go on.
func TestClaudeBlockAutoCompactEndsTheSession(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	r.wantHook(filepath.Join(".claude", "settings.json"), "PreCompact "+session.BlockFlag)
	full := fakemodel.Tool("Bash", map[string]any{"command": "echo full", "description": "fill the context"})
	full.InputTokens = fullContext
	srv := fakemodel.Start(t, full, fakemodel.Text("All done."))
	res, stderr, err := r.claude(srv, "do the task")
	if err == nil || !res.IsError {
		t.Errorf("claude -p succeeded (%+v); want the blocked compaction to end it", res)
	}
	if n := len(srv.OfKind(fakemodel.KindCompact)); n != 0 {
		t.Errorf("claude compacted %d times despite the block:\n%s", n, srv.Log())
	}
	if n := len(srv.Turns()); n != 1 {
		t.Errorf("%d model turns, want 1 (nothing after the blocked compaction):\n%s", n, srv.Log())
	}
	t.Logf("claude ended: %+v; stderr %q", res, stderr)
}

func TestCodexAutoCompactRehydrates(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex", "--allow-auto-compact")
	full := fakemodel.Tool("exec_command", map[string]any{"cmd": "echo full"})
	full.InputTokens = 60_000
	srv := fakemodel.Start(t, full, fakemodel.Text("All done."))
	stdout, stderr, err := r.codex(srv, codexCompactConfig, "do the task")
	if err != nil || !strings.Contains(stdout, "All done.") {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	if len(srv.OfKind(fakemodel.KindCompact)) == 0 {
		t.Fatalf("codex did not compact:\n%s", srv.Log())
	}
	turns := srv.Turns()
	last := turns[len(turns)-1]
	if !bytes.Contains(last.Body, []byte("m1nd: you are agent bob in brain brain (session compact)")) {
		t.Errorf("the turn after compaction lacks the rehydration:\n%s\n%s", srv.Log(), clip(last.Body))
	}
}

// Codex treats a PreCompact hook's non-zero exit as a failed hook and
// compacts anyway; {"continue":false}, what m1nd's Codex PreCompact
// answers an automatic compaction when blocking (the default install), is
// what stops it: the turn is interrupted and `codex exec` exits 1.
func TestCodexBlockAutoCompactStopsTheTurn(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	r.wantHook(filepath.Join(".codex", "hooks.json"), "PreCompact "+session.BlockFlag)
	full := fakemodel.Tool("exec_command", map[string]any{"cmd": "echo full"})
	full.InputTokens = 60_000
	srv := fakemodel.Start(t, full, fakemodel.Text("All done."))
	stdout, stderr, err := r.codex(srv, codexCompactConfig, "do the task")
	if err == nil {
		t.Errorf("codex exec succeeded; want the blocked compaction to stop the turn\nstdout: %s", stdout)
	}
	if n := len(srv.OfKind(fakemodel.KindCompact)); n != 0 {
		t.Errorf("codex compacted %d times despite the block:\n%s\nstderr: %s", n, srv.Log(), stderr)
	}
	if n := len(srv.Turns()); n != 1 {
		t.Errorf("%d model turns, want 1:\n%s", n, srv.Log())
	}
}

// clip shortens a request body for a failure message.
func clip(b []byte) string {
	const n = 3000
	if len(b) <= n {
		return string(b)
	}
	return string(b[len(b)-n:]) + " (last 3000 bytes)"
}

// A letter that lands during the model's last turn (no tool call after
// it) keeps the session going through the Stop hook.
//
// Claude Code 2.1.332 shows a Stop hook's block reason to the model twice
// in the next request: as a user message ("Stop hook feedback:" in a
// system-reminder) and as a system message ("Stop hook blocking error from
// command: …"). So on Claude the reason is only a short note that letters
// arrived and how to read them; the letter itself comes with the next
// tool call, through PostToolUse, once.
func TestClaudeStopDeliversALetter(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	srv := fakemodel.Start(t, fakemodel.Text("First answer."),
		fakemodel.Tool("Bash", map[string]any{"command": "true", "description": "read the mail"}),
		fakemodel.Text("All done."))
	r.sendDuringTurn(srv, 1, letterMark)
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError || res.Result != "All done." {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	turns := srv.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d model turns, want 3:\n%s", len(turns), srv.Log())
	}
	note := "m1nd: 1 letter for bob arrived (from alice). They are handed to you with your next tool call"
	if n := bytes.Count(turns[1].Body, []byte(note)); n != 2 {
		t.Errorf("turn 2 shows the Stop note %d times, want 2 (Claude Code shows a reason twice):\n%s", n, clip(turns[1].Body))
	}
	assertLetterOnce(t, srv, letterMark, 3)
}

func TestCodexStopDeliversALetter(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	srv := fakemodel.Start(t, fakemodel.Text("First answer."), fakemodel.Text("All done."))
	r.sendDuringTurn(srv, 1, letterMark)
	stdout, stderr, err := r.codex(srv, "", "do the task")
	if err != nil || !strings.Contains(stdout, "All done.") {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	assertLetterOnce(t, srv, letterMark, 2)
	if n := len(srv.Turns()); n != 2 {
		t.Errorf("%d model turns, want 2:\n%s", n, srv.Log())
	}
}

// A fresh Claude Code session's first request carries m1nd's rehydration
// (item 4): the follow-ups bob owes and those owed to him, what he
// learned and did, and the open shared document that names him.
func TestClaudeSessionStartRehydrates(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	r.m1nd("followup", "open", "--agent", "alice", "--owner", "bob", "REHYDRATE-owed: check the ledger rounding")
	r.m1nd("followup", "open", "--agent", "bob", "--owner", "carol", "REHYDRATE-owed-to: the release date")
	r.m1nd("memory", "add", "--agent", "bob", "--sort", "learned", "REHYDRATE-learned: the gate needs -race")
	r.m1nd("memory", "add", "--agent", "bob", "--sort", "did", "REHYDRATE-did: pinned the seed")
	r.m1nd("agent", "key", "create", "alice")
	r.m1nd("atlas", "publish", "--agent", "alice", "--kind", "agreement", "REHYDRATE-doc: bob reviews web/")
	srv := fakemodel.Start(t, fakemodel.Text("All done."))
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	first := srv.Turns()[0].Body
	for _, want := range []string{"Open follow-ups you owe (1)", "REHYDRATE-owed", "Open follow-ups owed to you (1)", "REHYDRATE-owed-to",
		"What you learned (1)", "REHYDRATE-learned", "What you did (1)", "REHYDRATE-did", "Open shared documents you are part of (1", "REHYDRATE-doc"} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the first request lacks %q:\n%s", want, clip(first))
		}
	}
}

// A follow-up opened for bob while his session works reaches it like a
// letter: in the next request, once (item 4).
func TestClaudeFollowupMidTurn(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	srv := fakemodel.Start(t,
		fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
		fakemodel.Tool("Bash", map[string]any{"command": "echo second", "description": "second step"}),
		fakemodel.Text("All done."))
	const brief = "FOLLOWUP-51c: say when the ledger fix ships"
	srv.OnTurn(func(turn int, _ []byte) {
		if turn == 1 {
			cmd := exec.Command(m1ndBin(t), "followup", "open", "--agent", "alice", "--owner", "bob", brief)
			cmd.Dir, cmd.Env = r.Dir, r.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("followup open during turn 1: %v\n%s", err, out)
			}
		}
	})
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	assertLetterOnce(t, srv, brief, 2)
}

// Claude Code's SessionStart hook writes M1ND_AGENT into CLAUDE_ENV_FILE
// (item 5): the agent's own m1nd calls in its Bash tool carry its name.
func TestClaudeToolsKnowTheAgent(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	srv := fakemodel.Start(t,
		fakemodel.Tool("Bash", map[string]any{"command": "echo AGENT-IS-$M1ND_AGENT", "description": "who am I"}),
		fakemodel.Text("All done."))
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	if turns := srv.Turns(); len(turns) < 2 || !bytes.Contains(turns[1].Body, []byte("AGENT-IS-bob")) {
		t.Fatalf("the tool did not see M1ND_AGENT=bob:\n%s", srv.Log())
	}
}

// A mistake in m1nd's own hook command (here a flag m1nd does not know on
// the Stop hook) never blocks Claude Code (item 5): it once exited 2,
// which Claude took as a block and re-prompted the model eight times.
func TestClaudeHookMistakeNeverBlocks(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	path := filepath.Join(r.Dir, ".claude", "settings.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(` Stop"`)) {
		t.Fatalf("no m1nd Stop hook:\n%s", data)
	}
	os.WriteFile(path, bytes.Replace(data, []byte(` Stop"`), []byte(` Stop --no-such-flag"`), 1), 0o644)
	srv := fakemodel.Start(t, fakemodel.Text("All done."), fakemodel.Text("Again?"))
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError || res.Result != "All done." {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	if n := len(srv.Turns()); n != 1 {
		t.Fatalf("%d model turns, want 1: the broken hook blocked the stop\n%s", n, srv.Log())
	}
}

// m1nd hook install claude --user writes $CLAUDE_CONFIG_DIR/settings.json
// when it is set (item 5), and Claude Code runs the hooks from there: a
// letter sent mid-turn reaches the next request, with no project settings.
func TestClaudeUserInstallHonoursConfigDir(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	if err := os.RemoveAll(filepath.Join(r.Dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(m1ndBin(t), "hook", "install", "claude", "--user")
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string(nil), r.env...), "CLAUDE_CONFIG_DIR="+filepath.Join(r.home, ".claude"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hook install --user: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.home, ".claude", "settings.json")); err != nil {
		t.Fatalf("no settings in CLAUDE_CONFIG_DIR: %v", err)
	}
	srv := fakemodel.Start(t,
		fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
		fakemodel.Text("All done."))
	r.sendDuringTurn(srv, 1, letterMark)
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	assertLetterOnce(t, srv, letterMark, 2)
}

// m1ndText is the text m1nd's hooks put into a model request: every
// string in the request's JSON from its first "m1nd: you are agent" or
// "m1nd: " line on, summed.
func m1ndText(t *testing.T, body []byte) (n int, parts []string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("the request is not JSON: %v", err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if i := strings.Index(x, "m1nd: "); i >= 0 {
				part := x[i:]
				// Claude Code puts a hook's context in the system prompt,
				// before its next section, or in a system reminder.
				for _, end := range []string{"</system-reminder>", "\n\n# "} {
					if j := strings.Index(part, end); j >= 0 {
						part = part[:j]
					}
				}
				n += len(part)
				parts = append(parts, part)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return n, parts
}

// TestClaudeFirstRequestUnderAHeavyState: 40 letters, 60 memories and 20
// follow-ups wait for bob; what m1nd puts into his session's first model
// request (SessionStart and UserPromptSubmit together) stays within 4 KB,
// names what it left out and how to read it, and prints no empty lane.
func TestClaudeFirstRequestUnderAHeavyState(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	for i := 0; i < 20; i++ {
		r.m1nd("followup", "open", "--agent", "alice", "--owner", "bob", fmt.Sprintf("HEAVY-owed-%02d: %s", i, strings.Repeat("check the ledger rounding ", 6)))
	}
	for i := 0; i < 60; i++ {
		r.m1nd("memory", "add", "--agent", "bob", "--sort", []string{"learned", "decided", "did"}[i%3], fmt.Sprintf("HEAVY-memory-%02d: %s", i, strings.Repeat("the gate needs -race ", 8)))
	}
	for i := 0; i < 40; i++ {
		r.sendLetter(fmt.Sprintf("HEAVY-letter-%02d: %s", i, strings.Repeat("look at the failing test ", 10)))
	}
	srv := fakemodel.Start(t, fakemodel.Text("All done."))
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	n, parts := m1ndText(t, srv.Turns()[0].Body)
	t.Logf("m1nd's text in the first request: %d bytes in %d parts", n, len(parts))
	if n == 0 || n > 4096 {
		t.Fatalf("m1nd put %d bytes into the first request, want 1..4096:\n%s", n, strings.Join(parts, "\n----\n"))
	}
	all := strings.Join(parts, "\n")
	for _, want := range []string{"Unread letters (", "letters more arrive at your next tool calls", "HEAVY-owed-", "HEAVY-memory-", "Not shown for lack of room", "m1nd mail inbox"} {
		if !strings.Contains(all, want) {
			t.Errorf("the first request's m1nd text lacks %q:\n%s", want, all)
		}
	}
	if regexp.MustCompile(`\(0[,)]`).MatchString(all) {
		t.Errorf("an empty lane:\n%s", all)
	}
}

// TestClaudeMCPOnlyAgentHearsOfALetter: a session with no m1nd hooks,
// only m1nd's MCP server, whose client neither sets a log level nor
// subscribes: a letter sent while it works is named in its next m1nd
// tool result (id, sender, class), which the model reads.
func TestClaudeMCPOnlyAgentHearsOfALetter(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	// The MCP server hook install registered in .mcp.json (claude -p starts
	// it without asking), and no hooks at all.
	if err := os.WriteFile(filepath.Join(r.Dir, ".claude", "settings.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.Start(t,
		fakemodel.Tool("mcp__m1nd__followup_list", map[string]any{}),
		fakemodel.Tool("mcp__m1nd__followup_list", map[string]any{}),
		fakemodel.Text("All done."))
	var id string
	srv.OnTurn(func(turn int, _ []byte) {
		if turn == 2 {
			id = r.sendLetter("MCP-ONLY: the build is red")
		}
	})
	bin := clientBin(t, "claude", claudeVersion)
	out, stderr, err := r.run(r.claudeEnv(srv), bin, "-p", "do the task", "--allowedTools", "mcp__m1nd__*", "--output-format", "json")
	if err != nil {
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, out, stderr, srv.Log())
	}
	turns := srv.Turns()
	if len(turns) < 3 {
		t.Fatalf("%d model turns, want 3:\n%s", len(turns), srv.Log())
	}
	note := "m1nd: 1 new letter for you since your last call: " + id + " from alice (note)"
	if !bytes.Contains(turns[2].Body, []byte(note)) {
		t.Fatalf("the tool result after the letter does not name it (%q):\n%s", note, clip(turns[2].Body))
	}
	if bytes.Contains(turns[1].Body, []byte(id)) {
		t.Errorf("the letter was named before it was sent")
	}
	if c := bytes.Count(turns[2].Body, []byte(note)); c != 1 {
		t.Errorf("the note appears %d times, want once", c)
	}
}

// TestCodexMCPOnlyAgentHearsOfALetter: Codex with m1nd's MCP server and
// no hooks: a letter sent while it works is named in its next m1nd tool
// result.
func TestCodexMCPOnlyAgentHearsOfALetter(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	if err := os.WriteFile(filepath.Join(r.Dir, ".codex", "hooks.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func() fakemodel.Reply {
		c := fakemodel.Tool("followup_list", map[string]any{})
		c.Tool.Namespace = "mcp__m1nd"
		return c
	}
	srv := fakemodel.Start(t, call(), call(), fakemodel.Text("All done."))
	var id string
	srv.OnTurn(func(turn int, _ []byte) {
		if turn == 2 {
			id = r.sendLetter("MCP-ONLY: the build is red")
		}
	})
	bin := clientBin(t, "codex", codexVersion)
	home := r.codexHome(srv, "") // the project trusted, so its MCP server starts
	stdout, stderr, err := r.run(r.codexEnv(home), bin, "exec", "--sandbox", "danger-full-access", "do the task")
	if err != nil {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	turns := srv.Turns()
	if len(turns) < 3 {
		t.Fatalf("%d model turns, want 3:\n%s", len(turns), srv.Log())
	}
	note := "m1nd: 1 new letter for you since your last call: " + id + " from alice (note)"
	if c := bytes.Count(turns[2].Body, []byte(note)); c != 1 {
		t.Fatalf("the tool result after the letter names it %d times, want once (%q):\n%s", c, note, clip(turns[2].Body))
	}
}
