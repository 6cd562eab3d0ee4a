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
// Text; on the Messages API a reply with both is a text block then a
// tool_use block (Claude Code writes each block as its own transcript
// line, the message's usage repeated). When the queue is empty a turn gets the text "Done.", and a
// compaction request a short <summary>.
type Reply struct {
	Text string
	Tool *ToolCall
	// Usage overrides the input token count the reply reports (0: a small
	// made-up count). A large count makes a client think its context is
	// full, which is how a test makes it compact.
	InputTokens int
	// CacheRead and CacheCreation are the prompt-cache tokens the reply
	// reports besides InputTokens: Anthropic's cache_read_input_tokens
	// and cache_creation_input_tokens (input_tokens then counts only the
	// uncached rest); the Responses API has no creation count, and its
	// cached_tokens (CacheRead) are part of input_tokens there.
	CacheRead, CacheCreation int
	// Status, when set, is an HTTP error the server answers the turn with
	// instead (the request is still recorded as the turn): 400 is an error
	// neither client retries.
	Status int
}

// Error is a reply that fails the turn with an HTTP error status.
func Error(status int) Reply { return Reply{Status: status} }

// ToolCall asks the client to run one of its tools.
type ToolCall struct {
	Name  string         // Claude: "Bash"; Codex: "shell" or "exec_command", whatever the request offers
	Input map[string]any // the tool's arguments
	// Namespace is the Responses API namespace the tool is offered in:
	// Codex offers an MCP server's tools as {"type":"namespace","name":
	// "mcp__<server>","tools":[…]}, and a call names both.
	Namespace string
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
	// Usage is what the server reported for a model call (turn, compaction
	// or side call); zero for the rest.
	Usage Usage
}

// Usage is the token usage a reply reported, as the wire carried it.
type Usage struct {
	InputTokens   int // Anthropic: uncached input; Responses: all input, cached included
	CacheRead     int // cache_read_input_tokens / input_tokens_details.cached_tokens
	CacheCreation int // cache_creation_input_tokens (Anthropic only)
	OutputTokens  int
}

// Prefix is what a model call sent in all, cached or not, by the usage
// the server reported: what the client's transcript should say the
// request held.
func (r Request) Prefix() int {
	if strings.HasSuffix(strings.TrimSuffix(r.Path, "/"), "/responses") {
		return r.Usage.InputTokens
	}
	return r.Usage.InputTokens + r.Usage.CacheRead + r.Usage.CacheCreation
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
	holds    map[int]*Hold
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

// Hold is a held agent turn: the server has the request and answers it
// only once the test releases it.
type Hold struct {
	reached, released chan struct{}
	once              sync.Once
}

// Reached is closed once the held turn's request has arrived.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release lets the server answer the held turn; idempotent.
func (h *Hold) Release() { h.once.Do(func() { close(h.released) }) }

// Hold makes the server hold agent turn n (from 1) before answering it,
// the client waiting mid-request, until the test calls Release; the test's
// end releases it too. A held turn runs OnTurn first.
func (s *Server) Hold(n int) *Hold {
	h := &Hold{reached: make(chan struct{}), released: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == nil {
		s.holds = map[int]*Hold{}
	}
	s.holds[n] = h
	s.t.Cleanup(h.Release)
	return h
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
		if reply.Status != 0 {
			writeError(w, reply.Status, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": "fakemodel: a scripted error"}})
			return
		}
		s.anthropic(w, in.Stream, in.Model, reply, req.N)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		reply := s.take(&req, kindOf(body, len(in.Tools) > 0))
		if reply.Status != 0 {
			writeError(w, reply.Status, map[string]any{"error": map[string]any{"type": "invalid_request_error", "code": "invalid_request_error", "message": "fakemodel: a scripted error"}})
			return
		}
		s.responses(w, in.Model, reply, req.N)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		s.record(req)
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		s.record(req)
		http.Error(w, `{"error":{"type":"not_found_error","message":"fakemodel: no such endpoint"}}`, http.StatusNotFound)
	}
}

// writeError answers an HTTP error with a provider's error body.
func writeError(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
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
		reply := Text("OK")
		if kind == KindCompact {
			reply = s.summary
		}
		req.Usage = usageOf(reply)
		s.requests = append(s.requests, *req)
		s.mu.Unlock()
		return reply
	}
	s.turns++
	req.N = s.turns
	reply := s.dflt
	if len(s.queue) > 0 {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	req.Usage = usageOf(reply)
	s.requests = append(s.requests, *req)
	hook, hold := s.onTurn, s.holds[req.N]
	s.mu.Unlock()
	if hook != nil {
		hook(req.N, req.Body)
	}
	if hold != nil {
		close(hold.reached)
		<-hold.released
	}
	return reply
}

// usageOf is the usage the server reports for a reply.
func usageOf(r Reply) Usage {
	in := r.InputTokens
	if in <= 0 {
		in = 100
	}
	return Usage{InputTokens: in, CacheRead: r.CacheRead, CacheCreation: r.CacheCreation, OutputTokens: 10}
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
	u := usageOf(r)
	usage := map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "cache_creation_input_tokens": u.CacheCreation, "cache_read_input_tokens": u.CacheRead}
	if !stream {
		content := []any{block}
		if r.Tool != nil && r.Text != "" {
			content = []any{map[string]any{"type": "text", "text": r.Text}, block}
		}
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": 1,
			"cache_creation_input_tokens": u.CacheCreation, "cache_read_input_tokens": u.CacheRead}}})
	if r.Tool != nil && r.Text == "" {
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
	if r.Tool != nil && r.Text != "" {
		args, _ := json.Marshal(r.Tool.Input)
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 1,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": r.Tool.Name, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	}
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens}})
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
		if r.Tool.Namespace != "" {
			item["namespace"] = r.Tool.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake%04d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}}
	}
	u := usageOf(r)
	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "model": model, "status": "in_progress", "output": []any{}}})
	e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "object": "response", "model": model,
		"status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
			"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": u.InputTokens + u.OutputTokens}}})
	e.flush()
}
