package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

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
// goes on. Its writes and the SDK's go through one lock, a whole line
// each, so they never interleave.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{
		Reader: io.NopCloser(&frameFilter{in: bufio.NewReaderSize(in, 64<<10), reply: w}),
		Writer: w,
	}
}

// lockedWriter writes whole lines under one lock.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves the process's stdout open: closing a session never closes it.
func (l *lockedWriter) Close() error { return nil }

// frameFilter passes the lines of in that are JSON-RPC messages (or
// batches of them) and answers every other line on reply.
type frameFilter struct {
	in      *bufio.Reader
	reply   io.Writer
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
				f.pending = append(line, '\n')
			}
		}
		if err != nil {
			if len(f.pending) == 0 {
				return 0, err
			}
			break
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
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
// is a message (an object with "jsonrpc": "2.0" and a method or an id) or
// a batch, which the SDK reads.
func checkFrame(line []byte) []byte {
	if len(line) > MaxFrame {
		return rpcError(nil, -32700, fmt.Sprintf("parse error: a message longer than %d bytes", MaxFrame))
	}
	if !json.Valid(line) {
		return rpcError(nil, -32700, "parse error: the line is not JSON")
	}
	if line[0] == '[' {
		return nil // a batch: the SDK answers each member, or refuses it whole
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
