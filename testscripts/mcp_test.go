package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/m1nd/m1nd/mcpserver"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// mcpText is a tool result's one text, and whether it is a tool error.
func mcpText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// The m1nd binary serves MCP on stdio, as Claude Code and Codex start it:
// as the agent git config m1nd.agent names, refusing to start without one.
func TestMcpStdio(t *testing.T) {
	g := gittest.Init(t, "brain")
	env := gittest.Env(t)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(m1ndBin(t), args...)
		cmd.Dir, cmd.Env = g.Dir, append(env, "M1ND_AGENT=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// No agent: a usage error saying how to set one, nothing served.
	out, err := run("mcp")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out, "m1nd mcp acts as an agent, and none is set here") {
		t.Fatalf("m1nd mcp without an agent: %v\n%s", err, out)
	}
	g.Git("-C", g.Dir, "config", "m1nd.agent", "bob")
	if out, err = run("mission", "new", "--block", "core", "--synthetic", "--agent", "alice", "--json"); err != nil {
		t.Fatalf("mission new: %v\n%s", err, out)
	}
	var opened struct {
		MissionID string `json:"mission_id"`
	}
	json.Unmarshal([]byte(out), &opened)

	cmd := exec.Command(m1ndBin(t), "mcp")
	cmd.Dir, cmd.Env = g.Dir, append(env, "M1ND_AGENT=")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "m1nd-tests", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(mcpserver.ToolNames) {
		t.Errorf("%d tools over stdio, want %d", len(tools.Tools), len(mcpserver.ToolNames))
	}
	draft, isErr := mcpText(t, cs, "mission_next", map[string]any{"mission_id": opened.MissionID, "phase": "executing"})
	if isErr {
		t.Fatalf("mission_next: %s", draft)
	}
	if posted, isErr := mcpText(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(draft)}); isErr || !strings.Contains(posted, `"mission_seq":2`) {
		t.Fatalf("mission_post: %s", posted)
	}
	var stale map[string]any
	json.Unmarshal([]byte(draft), &stale)
	stale["updated_at"] = "2026-01-01T00:00:00Z"
	if refused, isErr := mcpText(t, cs, "mission_post", map[string]any{"letter": stale}); !isErr || !strings.Contains(refused, `"refused":"stale_head"`) {
		t.Errorf("a stale post: %v %s", isErr, refused)
	}
	sent, isErr := mcpText(t, cs, "mail_send", map[string]any{"to": "alice", "what": "over stdio"})
	if isErr {
		t.Fatalf("mail_send: %s", sent)
	}
	if refs := g.Git("-C", g.Dir, "for-each-ref", "--format=%(refname)", "refs/m1nd/mail/"); refs != "refs/m1nd/mail/alice/bob" {
		t.Errorf("mail refs: %q", refs)
	}
	if inbox, _ := mcpText(t, cs, "mail_inbox", nil); !strings.Contains(inbox, `"agent":"bob"`) {
		t.Errorf("mail_inbox: %s", inbox)
	}
}

// mcpMark is the letter the model sends through m1nd's MCP tool.
const mcpMark = "MCP-LETTER-5c1e: sent through the m1nd MCP server"

// assertMcpLetter: the letter the tool sent is on bob's ref to alice, and
// the model's next request carries the tool's result.
func assertMcpLetter(t *testing.T, r *clientRepo, srv *fakemodel.Server) {
	t.Helper()
	refs := r.Git("-C", r.Dir, "for-each-ref", "--format=%(refname)", "refs/m1nd/mail/")
	if refs != "refs/m1nd/mail/alice/bob" {
		t.Fatalf("mail refs %q, want refs/m1nd/mail/alice/bob\nserver:\n%s", refs, srv.Log())
	}
	if what := r.Git("-C", r.Dir, "cat-file", "blob", "refs/m1nd/mail/alice/bob:mail.json"); !strings.Contains(what, mcpMark) {
		t.Errorf("the letter: %s", what)
	}
	turns := srv.Turns()
	if len(turns) < 2 {
		t.Fatalf("%d turns:\n%s", len(turns), srv.Log())
	}
	if !bytes.Contains(turns[1].Body, []byte(`\"ok\":true`)) || !bytes.Contains(turns[1].Body, []byte(`refs/m1nd/mail/alice/bob`)) {
		t.Errorf("turn 2 does not carry mail_send's result:\n%s", clip(turns[1].Body))
	}
}

// Claude Code starts the server from the project's .mcp.json that hook
// install wrote (claude -p asks no consent for it) and runs an MCP tool
// only when allowed: --allowedTools mcp__m1nd__mail_send.
func TestClaudeMcpMailSend(t *testing.T) {
	r := newClientRepo(t, "claude")
	srv := fakemodel.Start(t,
		fakemodel.Tool("mcp__m1nd__mail_send", map[string]any{"to": "alice", "what": mcpMark}),
		fakemodel.Text("All done."))
	bin := clientBin(t, "claude", claudeVersion)
	out, stderr, err := r.run(r.claudeEnv(srv), bin, "-p", "tell alice", "--allowedTools", "mcp__m1nd__mail_send", "--output-format", "json")
	var res claudeResult
	if jerr := json.Unmarshal([]byte(out), &res); jerr != nil || err != nil || res.IsError {
		t.Fatalf("claude -p: %v %v %+v\nstdout: %s\nstderr: %s\nserver:\n%s", err, jerr, res, out, stderr, srv.Log())
	}
	// Claude Code 2.1.332 defers MCP tools: turn 1 names them in a list
	// (searchable through its ToolSearch tool) rather than sending their
	// schemas, and a call by name still runs.
	if turns := srv.Turns(); len(turns) == 0 || !bytes.Contains(turns[0].Body, []byte(`\nmcp__m1nd__mail_send\n`)) {
		t.Fatalf("claude does not list mcp__m1nd__mail_send:\n%s\nstderr: %s", srv.Log(), stderr)
	}
	assertMcpLetter(t, r, srv)
}

// Codex starts the server from the project's .codex/config.toml that hook
// install wrote (a trusted project's config is read); codex exec with its
// default approval (never) runs the tool without asking.
func TestCodexMcpMailSend(t *testing.T) {
	r := newClientRepo(t, "codex")
	call := fakemodel.Tool("mail_send", map[string]any{"to": "alice", "what": mcpMark})
	call.Tool.Namespace = "mcp__m1nd"
	srv := fakemodel.Start(t, call,
		fakemodel.Text("All done."))
	stdout, stderr, err := r.codex(srv, "", "tell alice")
	if err != nil || !strings.Contains(stdout, "All done.") {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	// Codex 0.171.0 offers an MCP server's tools in a Responses API
	// namespace, {"type":"namespace","name":"mcp__m1nd","tools":[…]}, and
	// a call names the namespace and the tool.
	if turns := srv.Turns(); len(turns) == 0 || !bytes.Contains(turns[0].Body, []byte(`{"type":"namespace","name":"mcp__m1nd"`)) {
		t.Fatalf("codex offers no mcp__m1nd namespace:\n%s", srv.Log())
	}
	assertMcpLetter(t, r, srv)
}

// TestMcpStdioHoldsItsPromises runs the real `m1nd mcp` on piped stdin
// (issue 38): a batch line after initialize, empty or not, is refused
// with one JSON-RPC error and the server goes on; requests followed at
// once by the end of stdin are all answered before it exits 0, every
// time.
func TestMcpStdioHoldsItsPromises(t *testing.T) {
	g := gittest.Init(t, "brain")
	env := append(gittest.Env(t), "M1ND_AGENT=bob")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`
	serve := func(input string) map[string]map[string]any {
		t.Helper()
		cmd := exec.Command(m1ndBin(t), "mcp")
		cmd.Dir, cmd.Env = g.Dir, env
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("m1nd mcp: %v\n%s", err, out)
		}
		replies := map[string]map[string]any{} // by id; "null" for the errors without one
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("a reply line that is not JSON: %q", line)
			}
			id, _ := json.Marshal(m["id"])
			if _, twice := replies[string(id)]; twice && string(id) != "null" {
				t.Fatalf("id %s answered twice:\n%s", id, out)
			}
			replies[string(id)] = m
		}
		return replies
	}
	for _, batch := range []string{`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, `[]`} {
		replies := serve(initialize + batch + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
		refusal, _ := replies["null"]["error"].(map[string]any)
		if refusal == nil || refusal["code"] != -32600.0 || !strings.Contains(refusal["message"].(string), "batches are not supported") {
			t.Errorf("batch %s: refusal %v", batch, replies["null"])
		}
		if replies["2"]["result"] == nil {
			t.Errorf("batch %s: the request after it went unanswered: %v", batch, replies)
		}
		if _, ok := replies["7"]; ok {
			t.Errorf("batch %s: a member was answered as well as refused", batch)
		}
	}
	for round := 0; round < 10; round++ {
		replies := serve(initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mail_inbox","arguments":{}}}
{"jsonrpc":"2.0","id":3,"method":"ping"}
`)
		for _, id := range []string{"1", "2", "3"} {
			if replies[id]["result"] == nil {
				t.Fatalf("round %d: request %s unanswered at the end of stdin: %v", round, id, replies)
			}
		}
	}
}
