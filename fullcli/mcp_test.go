package fullcli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/fullcli"
	"github.com/m1nd/m1nd/mcpserver"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// run runs the whole CLI in process against dir and parses its --json
// reply, failing the test on a non-zero exit.
func run(t *testing.T, dir string, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	code := fullcli.Main(context.Background(), append([]string{"m1nd", "-C", dir}, args...),
		&cli.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Interactive: func() bool { return false }})
	if code != 0 {
		t.Fatalf("m1nd %v: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("m1nd %v: %v\n%s", args, err, out.String())
	}
	return m
}

// brainWithMission is a real repository with m1nd's brain and one mission
// opened on its core block, and that mission's id.
func brainWithMission(t *testing.T) (dir, id string) {
	gittest.SetEnv(t)
	t.Setenv("M1ND_AGENT", "a1")
	r := gittest.Init(t, "proj")
	r.CommitFiles("files", map[string]string{"core/core.go": "package core\n", "docs/readme.md": "# docs\n"})
	run(t, r.Dir, "init", "--json")
	run(t, r.Dir, "skeleton", "scan", "--json")
	for _, b := range run(t, r.Dir, "blocks", "--json")["blocks"].([]any) {
		if block := b.(map[string]any)["block_id"].(string); strings.HasSuffix(block, "_core") {
			return r.Dir, run(t, r.Dir, "mission", "new", "--block", block, "--json")["mission_id"].(string)
		}
	}
	t.Fatal("no core block")
	return "", ""
}

// TestMCPOverStdio runs m1nd mcp in process on pipes, as a host starts it,
// and drives it with the MCP SDK's client: the tools are listed, a read
// and a write go through, and the write is the agent's.
func TestMCPOverStdio(t *testing.T) {
	dir, id := brainWithMission(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		code := fullcli.Main(context.Background(), []string{"m1nd", "-C", dir, "mcp"},
			&cli.IOStreams{In: inR, Out: outW, Err: &errb, Interactive: func() bool { return false }})
		outW.Close()
		done <- code
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "m1nd-fullcli-tests", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		t.Fatalf("connect: %v (exit %d, stderr %q)", err, <-done, errb.String())
	}
	if info := cs.InitializeResult(); info == nil || info.ServerInfo == nil || info.ServerInfo.Name == "" {
		t.Fatalf("initialize result: %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	if len(tools.Tools) != len(mcpserver.ToolNames) || !names["mission_heads"] || !names["mail_send"] {
		t.Fatalf("tools/list: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mission_heads", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("mission_heads: %+v %v", res, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, id) {
		t.Fatalf("mission_heads lacks %s: %s", id, text)
	}
	sent, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mail_send", Arguments: map[string]any{"to": "b2", "what": "from mcp"}})
	if err != nil || sent.IsError {
		t.Fatalf("mail_send: %+v %v", sent, err)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("m1nd mcp exit %d, stderr %q", code, errb.String())
	}
	// The letter went in as a1, the agent the server acts as; the owner
	// reads b2's inbox.
	t.Setenv("M1ND_AGENT", "")
	in := run(t, dir, "mail", "inbox", "--agent", "b2", "--json")
	if in["unread"] != float64(1) {
		t.Fatalf("b2's inbox after mail_send over MCP: %v", in)
	}
	b, _ := json.Marshal(in)
	if !strings.Contains(string(b), "from mcp") || !strings.Contains(string(b), `"a1"`) {
		t.Fatalf("b2's inbox: %s", b)
	}
}
