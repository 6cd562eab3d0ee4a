package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrame is the longest line the stdio transport reads as one message.
const MaxFrame = 16 << 20

// Stdio is the MCP transport on a process's stdin and stdout that
// survives a bad frame. The SDK's own ends the session at the first line
// that is not a JSON-RPC message (a client's stray debug print, a torn
// write): here such a line is answered as JSON-RPC says, a parse error
// (-32700) for what is not JSON, an invalid request (-32600, with its id
// when it has one) for JSON that is no JSON-RPC message, and the session
// goes on. A batch line is refused with one error (MCP 2025-06-18 dropped
// batches). Its writes and the SDK's go through one lock, a whole line
// each, so they never interleave. At the end of input it waits, at most
// AnswerWait, until every request it read is answered: a client that
// writes a request and closes stdin at once still gets its answer.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	open := &openRequests{ids: map[string]bool{}}
	w := &lockedWriter{w: out, open: open}
	return &mcp.IOTransport{
		Reader: io.NopCloser(&frameFilter{in: bufio.NewReaderSize(in, 64<<10), reply: w, open: open}),
		Writer: w,
	}
}

// AnswerWait bounds how long the end of input waits for the answers to
// the requests read before it.
const AnswerWait = 30 * time.Second

// openRequests are the ids of the requests read and not answered yet.
type openRequests struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (o *openRequests) set(id json.RawMessage, open bool) {
	var v any // the id as a value: a response may spell it otherwise
	if len(id) == 0 || json.Unmarshal(id, &v) != nil || v == nil {
		return
	}
	key, _ := json.Marshal(v)
	o.mu.Lock()
	defer o.mu.Unlock()
	if open {
		o.ids[string(key)] = true
	} else {
		delete(o.ids, string(key))
	}
}

func (o *openRequests) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ids)
}

// wait returns once no request is open, or after limit.
func (o *openRequests) wait(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for o.count() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// lockedWriter writes whole lines under one lock, and closes the open
// request each response answers.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open *openRequests
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if msg := peek(p); msg.Method == nil && err == nil {
		l.open.set(msg.ID, false) // a response: its request is answered
	}
	return n, err
}

// Close leaves the process's stdout open: closing a session never closes it.
func (l *lockedWriter) Close() error { return nil }

// frameFilter passes the lines of in that are JSON-RPC messages and
// answers every other line on reply; it notes the requests it passes in
// open, and a client's cancel of one.
type frameFilter struct {
	in      *bufio.Reader
	reply   io.Writer
	open    *openRequests
	pending []byte
}

func (f *frameFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.line()
		if len(line) > 0 {
			if answer := checkFrame(line); answer != nil {
				if _, werr := f.reply.Write(answer); werr != nil {
					return 0, werr
				}
			} else {
				f.note(line)
				f.pending = append(line, '\n')
			}
		}
		if err != nil {
			if len(f.pending) == 0 {
				f.open.wait(AnswerWait)
				return 0, err
			}
			break
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// note records a request the SDK will answer, or forgets one the client
// cancelled (the SDK answers a cancelled request with nothing).
func (f *frameFilter) note(line []byte) {
	msg := peek(line)
	switch {
	case msg.Method == nil:
	case *msg.Method == "notifications/cancelled":
		var c struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &c) == nil {
			f.open.set(c.Params.RequestID, false)
		}
	default:
		f.open.set(msg.ID, true)
	}
}

// frameHead is what peek reads of a message: its id and method.
type frameHead struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// peek reads a JSON-RPC line's id and method; a line that is not one
// object gives neither.
func peek(line []byte) frameHead {
	var h frameHead
	if json.Unmarshal(bytes.TrimSpace(line), &h) != nil {
		return frameHead{}
	}
	return h
}

// line reads one line without its end; a line longer than MaxFrame is
// read to its end and returned cut, which checkFrame answers as too long.
func (f *frameFilter) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.in.ReadSlice('\n')
		if len(line)+len(chunk) <= MaxFrame+1 {
			line = append(line, chunk...)
		} else if len(line) <= MaxFrame {
			line = append(line, chunk[:MaxFrame+1-len(line)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), err
	}
}

// checkFrame returns the JSON-RPC error that answers line, or nil when it
// is a message (an object with "jsonrpc": "2.0" and a method or an id),
// which the SDK reads. A batch, empty or not, is refused whole: the SDK
// would end the session on one.
func checkFrame(line []byte) []byte {
	if len(line) > MaxFrame {
		return rpcError(nil, -32700, fmt.Sprintf("parse error: a message longer than %d bytes", MaxFrame))
	}
	if !json.Valid(line) {
		return rpcError(nil, -32700, "parse error: the line is not JSON")
	}
	if line[0] == '[' {
		return rpcError(nil, -32600, "invalid request: JSON-RPC batches are not supported (MCP 2025-06-18 dropped them); send each message on a line of its own")
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if line[0] != '{' || json.Unmarshal(line, &msg) != nil {
		return rpcError(nil, -32600, "invalid request: a JSON-RPC message is an object")
	}
	id := msg.ID
	if len(id) > 0 && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' {
		id = nil // an id is a string or a number
	}
	if msg.JSONRPC != "2.0" || (msg.Method == nil && len(msg.ID) == 0) || len(msg.ID) > 0 && id == nil {
		return rpcError(id, -32600, `invalid request: a JSON-RPC message has "jsonrpc": "2.0" and a method or an id`)
	}
	return nil
}

// rpcErrorReply is a JSON-RPC error response.
type rpcErrorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorObject  `json:"error"`
}

type rpcErrorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func rpcError(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcErrorObject{Code: code, Message: message}})
	return append(out, '\n')
}
