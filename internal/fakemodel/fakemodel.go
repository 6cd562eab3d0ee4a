// Package fakemodel is a scripted model server for tests that drive the
// real Claude Code and Codex CLIs headless. It listens on 127.0.0.1:0 and
// speaks just enough of two wire protocols:
//
//   - the Anthropic Messages API as Claude Code calls it (POST /v1/messages,
//     streamed as server-sent events: message_start, content_block_start,
//     content_block_delta, content_block_stop, message_delta with usage,
//     message_stop), with POST /v1/messages/count_tokens answered too;
//   - the OpenAI Responses API as Codex calls it (POST /v1/responses,
//     streamed: response.created, response.output_item.added and .done,
//     response.completed with usage).
//
// A test scripts the agent's turns as a queue of Replies (text, or a tool
// call the client then runs), and every request is recorded, body and all,
// so the test can assert what the model was shown. A request offering no
// tools (a side call) gets a short text, and a compaction request (the
// client summarising its context) a short summary; neither touches the
// queue. Any other path is logged and answered 404. Claude Code 2.1.332
// (claude -p, nonessential traffic off) and Codex 0.171.0 (codex exec)
// call only POST /v1/messages and POST /v1/responses. Used by tests only.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted model turn: a tool call when Tool is set, else
// Text. When the queue is empty a turn gets the text "Done.", and a
// compaction request a short <summary>.
type Reply struct {
	Text string
	Tool *ToolCall
	// Usage overrides the input token count the reply reports (0: a small
	// made-up count). A large count makes a client think its context is
	// full, which is how a test makes it compact.
	InputTokens int
}

// ToolCall asks the client to run one of its tools.
type ToolCall struct {
	Name  string         // Claude: "Bash"; Codex: "shell" or "exec_command", whatever the request offers
	Input map[string]any // the tool's arguments
}

// Text is a reply that ends the turn with text.
func Text(s string) Reply { return Reply{Text: s} }

// Tool is a reply that calls a tool.
func Tool(name string, input map[string]any) Reply {
	return Reply{Tool: &ToolCall{Name: name, Input: input}}
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Kind         Kind
	N            int // the turn's number, from 1, when Kind is KindTurn
}

// Kind sorts the requests a client makes.
type Kind string

const (
	// KindTurn is an agent turn: it takes the next scripted reply.
	KindTurn Kind = "turn"
	// KindCompact asks the model to summarise the conversation (the
	// client is compacting its context); answered with a short summary.
	KindCompact Kind = "compact"
	// KindOther is anything else (side calls, token counts, model lists).
	KindOther Kind = "other"
)

// Compaction prompts, as the pinned clients word them: Claude Code keeps
// its tools in the summary request, so the prompt is what tells.
var compactionMarks = [][]byte{
	[]byte("create a detailed summary of the conversation"), // Claude Code 2.1.332
	[]byte("CONTEXT CHECKPOINT COMPACTION"),                 // Codex 0.171.0
}

func isCompaction(body []byte) bool {
	for _, m := range compactionMarks {
		if bytes.Contains(body, m) {
			return true
		}
	}
	return false
}

// Server is the fake model server.
type Server struct {
	URL string // http://127.0.0.1:PORT, no trailing slash

	t  testing.TB
	hs *http.Server
	ln net.Listener

	mu       sync.Mutex
	queue    []Reply
	requests []Request
	turns    int
	onTurn   func(n int, body []byte)
	dflt     Reply // the reply when the queue is empty
	summary  Reply // the answer to a compaction request
}

// Start starts a server on 127.0.0.1:0, stopped when the test ends.
func Start(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), t: t, ln: ln, queue: replies, dflt: Text("Done."),
		summary: Text("<analysis>fake</analysis>\n<summary>fakemodel summary: the task was started.</summary>")}
	s.hs = &http.Server{Handler: s}
	go s.hs.Serve(ln)
	t.Cleanup(func() { s.hs.Close() })
	return s
}

// OnTurn makes f run before the server answers agent turn n (from 1),
// with the request's body: a test does things "while the model thinks"
// there. f runs on the server's goroutine; the client waits for it.
func (s *Server) OnTurn(f func(n int, body []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onTurn = f
}

// Push appends replies to the queue.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests is every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Turns is the agent-turn requests so far, in order.
func (s *Server) Turns() []Request { return s.OfKind(KindTurn) }

// OfKind is the requests of one kind so far, in order.
func (s *Server) OfKind(k Kind) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// Log is one line per request: method, path, turn number, body size; for
// a test's failure message.
func (s *Server) Log() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "%s %s %s", r.Method, r.Path, r.Kind)
		if r.Kind == KindTurn {
			fmt.Fprintf(&b, " %d", r.N)
		}
		fmt.Fprintf(&b, " %dB\n", len(r.Body))
	}
	return b.String()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Kind: KindOther}
	path := strings.TrimSuffix(r.URL.Path, "/")
	var in struct {
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
		Model  string            `json:"model"`
	}
	json.Unmarshal(body, &in)
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		s.record(req)
		writeJSON(w, map[string]any{"input_tokens": len(body) / 4})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		reply := s.take(&req, kindOf(body, len(in.Tools) > 0))
		s.anthropic(w, in.Stream, in.Model, reply, req.N)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		reply := s.take(&req, kindOf(body, len(in.Tools) > 0))
		s.responses(w, in.Model, reply, req.N)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		s.record(req)
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		s.record(req)
		http.Error(w, `{"error":{"type":"not_found_error","message":"fakemodel: no such endpoint"}}`, http.StatusNotFound)
	}
}

func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
}

// kindOf sorts a model call: a compaction, an agent turn (it offers
// tools), or a side call.
func kindOf(body []byte, tools bool) Kind {
	switch {
	case isCompaction(body):
		return KindCompact
	case tools:
		return KindTurn
	}
	return KindOther
}

// take records req as kind and picks its reply: for an agent turn the
// next scripted one (running OnTurn first, outside the lock).
func (s *Server) take(req *Request, kind Kind) Reply {
	s.mu.Lock()
	req.Kind = kind
	if kind != KindTurn {
		s.requests = append(s.requests, *req)
		reply := Text("OK")
		if kind == KindCompact {
			reply = s.summary
		}
		s.mu.Unlock()
		return reply
	}
	s.turns++
	req.N = s.turns
	reply := s.dflt
	if len(s.queue) > 0 {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	s.requests = append(s.requests, *req)
	hook := s.onTurn
	s.mu.Unlock()
	if hook != nil {
		hook(req.N, req.Body)
	}
	return reply
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

type sse struct {
	w http.ResponseWriter
	b bytes.Buffer
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	return &sse{w: w}
}

func (e *sse) event(name string, data any) {
	j, _ := json.Marshal(data)
	fmt.Fprintf(&e.b, "event: %s\ndata: %s\n\n", name, j)
}

func (e *sse) flush() {
	e.w.Write(e.b.Bytes())
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func inputTokens(r Reply) int {
	if r.InputTokens > 0 {
		return r.InputTokens
	}
	return 100
}

// anthropic answers a Messages API call, streamed or not.
func (s *Server) anthropic(w http.ResponseWriter, stream bool, model string, r Reply, n int) {
	if model == "" {
		model = "claude-fake"
	}
	id := fmt.Sprintf("msg_fake%04d", n)
	var block map[string]any
	stop := "end_turn"
	if r.Tool != nil {
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake%04d", n), "name": r.Tool.Name, "input": r.Tool.Input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": r.Text}
	}
	usage := map[string]any{"input_tokens": inputTokens(r), "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": inputTokens(r), "output_tokens": 1,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	if r.Tool != nil {
		args, _ := json.Marshal(r.Tool.Input)
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": r.Tool.Name, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": r.Text}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	e.flush()
}

// responses answers a Responses API call, always streamed (Codex streams).
func (s *Server) responses(w http.ResponseWriter, model string, r Reply, n int) {
	id := fmt.Sprintf("resp_fake%04d", n)
	var item map[string]any
	if r.Tool != nil {
		args, _ := json.Marshal(r.Tool.Input)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake%04d", n), "call_id": fmt.Sprintf("call_fake%04d", n),
			"name": r.Tool.Name, "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake%04d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}}
	}
	in := inputTokens(r)
	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}})
	e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "object": "response", "model": model,
		"status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + 10}}})
	e.flush()
}
