package fakemodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends body to path and returns the SSE events' names and data.
func post(t *testing.T, s *Server, path, body string) (names []string, data []map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			names = append(names, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data %q: %v", line, err)
			}
			data = append(data, d)
		}
	}
	return names, data
}

func TestMessagesStream(t *testing.T) {
	s := Start(t, Tool("Bash", map[string]any{"command": "echo hi"}))
	var seen []int
	s.OnTurn(func(n int, _ []byte) { seen = append(seen, n) })
	names, data := post(t, s, "/v1/messages", `{"stream":true,"tools":[{"name":"Bash"}],"messages":[]}`)
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if b := data[1]["content_block"].(map[string]any); b["type"] != "tool_use" || b["name"] != "Bash" {
		t.Errorf("content_block_start %v", b)
	}
	if d := data[2]["delta"].(map[string]any); d["partial_json"] != `{"command":"echo hi"}` {
		t.Errorf("delta %v", d)
	}
	if d := data[4]["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message_delta %v", d)
	}
	// The queue is empty: the default text ends the turn. A side call (no
	// tools) and a compaction take no scripted reply.
	_, data = post(t, s, "/v1/messages", `{"stream":true,"tools":[{"name":"Bash"}]}`)
	if d := data[2]["delta"].(map[string]any); d["text"] != "Done." {
		t.Errorf("default reply %v", d)
	}
	post(t, s, "/v1/messages", `{"stream":true}`)
	post(t, s, "/v1/messages", `{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"Your task is to create a detailed summary of the conversation so far"}]}`)
	kinds := []Kind{}
	for _, r := range s.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if got := len(s.Turns()); got != 2 || len(seen) != 2 || len(s.OfKind(KindCompact)) != 1 || len(s.OfKind(KindOther)) != 1 {
		t.Errorf("kinds %v, OnTurn saw %v", kinds, seen)
	}
}

func TestResponsesStream(t *testing.T) {
	s := Start(t, Tool("exec_command", map[string]any{"cmd": "echo hi"}), Text("bye"))
	names, data := post(t, s, "/v1/responses", `{"stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[]}`)
	want := "response.created response.output_item.added response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	item := data[2]["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["arguments"] != `{"cmd":"echo hi"}` {
		t.Errorf("item %v", item)
	}
	usage := data[3]["response"].(map[string]any)["usage"].(map[string]any)
	if usage["total_tokens"].(float64) != 110 {
		t.Errorf("usage %v", usage)
	}
	_, data = post(t, s, "/v1/responses", `{"stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[]}`)
	item = data[2]["item"].(map[string]any)
	if item["type"] != "message" || item["content"].([]any)[0].(map[string]any)["text"] != "bye" {
		t.Errorf("item %v", item)
	}
	if resp, err := http.Get(s.URL + "/nowhere"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %v %v", resp, err)
	}
	if !strings.Contains(s.Log(), "GET /nowhere other") {
		t.Errorf("log:\n%s", s.Log())
	}
}

// TestUsageAndHold: a reply's cache counts go out on the wire and are
// recorded with the request; a held turn waits for its release.
func TestUsageAndHold(t *testing.T) {
	r := Text("cached")
	r.InputTokens, r.CacheRead, r.CacheCreation = 7, 1000, 200
	s := Start(t, r, Text("held"))
	_, data := post(t, s, "/v1/messages", `{"stream":true,"tools":[{"name":"Bash"}]}`)
	u := data[0]["message"].(map[string]any)["usage"].(map[string]any)
	if u["input_tokens"] != 7.0 || u["cache_read_input_tokens"] != 1000.0 || u["cache_creation_input_tokens"] != 200.0 {
		t.Errorf("message_start usage %v", u)
	}
	if got := s.Turns()[0]; got.Usage != (Usage{InputTokens: 7, CacheRead: 1000, CacheCreation: 200, OutputTokens: 10}) || got.Prefix() != 1207 {
		t.Errorf("recorded usage %+v, prefix %d", got.Usage, got.Prefix())
	}
	h := s.Hold(2)
	done := make(chan []map[string]any)
	go func() {
		_, data := post(t, s, "/v1/responses", `{"stream":true,"tools":[{"name":"shell"}]}`)
		done <- data
	}()
	<-h.Reached()
	select {
	case <-done:
		t.Fatal("a held turn was answered before its release")
	case <-time.After(50 * time.Millisecond):
	}
	h.Release()
	data = <-done
	if u := data[3]["response"].(map[string]any)["usage"].(map[string]any); u["input_tokens"] != 100.0 {
		t.Errorf("response.completed usage %v", u)
	}
	if p := s.Turns()[1].Prefix(); p != 100 {
		t.Errorf("responses prefix %d, want 100", p)
	}
}
