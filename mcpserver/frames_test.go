package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mcpserver"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestStdioAnswersABadFrameAndGoesOn: over the stdio transport, a line
// that is not JSON, JSON that is no JSON-RPC message, a message with no
// method or id, and a batch (empty or not) are each answered with one
// JSON-RPC error, and the session goes on to answer what follows.
func TestStdioAnswersABadFrameAndGoesOn(t *testing.T) {
	flows := openBrain(t)
	srv := &mcpserver.Server{Flows: flows, Agent: "bob", Poll: time.Hour, Version: "test"}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, mcpserver.Stdio(inR, outW)) }()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	replies := bufio.NewScanner(outR)
	replies.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() map[string]any {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: %v", replies.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
			t.Fatalf("reply %q: %v", replies.Text(), err)
		}
		return m
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{"not json at all", -32700, nil},
		{`{"jsonrpc":"2.0","id":5,"method":`, -32700, nil},
		{`42`, -32600, nil},
		{`{"jsonrpc":"1.0","id":6,"method":"tools/list"}`, -32600, 6.0},
		{`{"jsonrpc":"2.0"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, -32600, nil},
		// Batches: MCP 2025-06-18 dropped them; one error, and on.
		{`[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, nil},
		{`[]`, -32600, nil},
	} {
		send(tc.line)
		m := next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id {
			t.Errorf("%s: reply %v, want error %v with id %v", tc.line, m, tc.code, tc.id)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m := next()
	if m["id"] != 2.0 || m["result"] == nil || !strings.Contains(replies.Text(), "mission_show") {
		t.Fatalf("tools/list after the bad frames: %v", m)
	}
}

// TestStdioAnswersBeforeTheEndOfInput: a client that writes its requests
// and closes stdin at once gets every one answered before Run returns,
// every time.
func TestStdioAnswersBeforeTheEndOfInput(t *testing.T) {
	flows := openBrain(t)
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`
	for round := 0; round < 30; round++ {
		srv := &mcpserver.Server{Flows: flows, Agent: "bob", Poll: time.Hour, Version: "test"}
		in := init + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"mail_inbox","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"ping"}
`
		var out strings.Builder
		start := time.Now()
		if err := srv.Run(context.Background(), mcpserver.Stdio(strings.NewReader(in), &out)); err != nil && err != io.EOF {
			t.Logf("round %d: Run: %v", round, err)
		}
		answered := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
				answered[string(m.ID)] = true
			}
		}
		for _, id := range []string{"1", "2", `"three"`, "4"} {
			if !answered[id] {
				t.Fatalf("round %d: request %s unanswered at the end of input (after %v):\n%s", round, id, time.Since(start), out.String())
			}
		}
	}
}

// openBrain opens a fresh repository "brain" as m1nd's flows.
func openBrain(t *testing.T) *ops.Flows {
	t.Helper()
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return ops.New(repo, "brain")
}
