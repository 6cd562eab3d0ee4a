package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// A new tool is one ops flow and one mapping line here, plus its test:
// tool() declares it, result() wraps the flow's reply in the envelope
// (ok first) or a refusal, and the server's middleware notes new letters
// on it like on every shipped tool. This test adds one the product does
// not ship and calls it through a real client.
func TestANewToolIsOneMappingLine(t *testing.T) {
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	s := &Server{Flows: ops.New(repo, "brain"), Agent: "bob", Poll: time.Hour, Version: "test"}
	type countIn struct {
		Phase string `json:"phase,omitempty"`
	}
	mcp.AddTool(s.MCP(), tool("mission_count", "Count the missions, optionally in one phase.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, any, error) {
			if err := ops.CheckPhase(in.Phase); err != nil { // the check the CLI's verb makes too
				return usage("%v", err)
			}
			view, err := s.Flows.Heads(ctx, in.Phase, false)
			if err != nil {
				return result(nil, err)
			}
			return result(struct {
				Count int `json:"count"` // the envelope puts "ok" first
			}{len(view.Missions)}, nil)
		})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); cancel(); <-done }()
	for _, tc := range []struct {
		args    map[string]any
		want    string
		isError bool
	}{
		{map[string]any{}, `{"ok":true,"count":0}`, false},
		{map[string]any{"phase": "merge_wait"}, `{"ok":true,"count":0}`, false},
		{map[string]any{"phase": "no_such_phase"}, "no_such_phase", true},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mission_count", Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != tc.isError || !tc.isError && !json.Valid([]byte(text)) || !strings.Contains(text, tc.want) {
			t.Errorf("mission_count %v = %s (error %v), want %s (error %v)", tc.args, text, res.IsError, tc.want, tc.isError)
		}
	}
}
