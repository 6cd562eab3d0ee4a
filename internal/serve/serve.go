// Package serve holds what m1nd's two loopback HTTP servers (the owner and
// the runner daemon) share: binding loopback only, serving until done,
// answering JSON, the shared secret, and the owner's record.
package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// Run serves srv on ln until ctx ends, then shuts it down, giving open
// requests a few seconds, and returns nil; a server that fails returns its
// error.
func Run(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		srv.Shutdown(shut)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Listen binds addr, refusing anything but a loopback address: m1nd's
// servers answer only this machine. who names the server in the error.
func Listen(addr, who string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--addr %q: %s binds only a loopback address (127.0.0.1, ::1 or localhost)", addr, who)
	}
	return net.Listen("tcp", addr)
}

// WriteJSON answers v as JSON with status, never cached, HTML left as is.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// SecretHeader carries the shared local secret between runnerd and the owner.
const SecretHeader = "x-runnerd-secret"

// SecretMatches compares a presented secret with the real one in constant
// time; an empty secret never matches.
func SecretMatches(secret, presented string) bool {
	return secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(presented)) == 1
}

// RecordFile is where a running owner records itself in the runtime dir.
const RecordFile = "serve.json"

// Record is what a running owner writes to RecordFile (0600): how the
// verbs and runnerd that talk to it find it.
type Record struct {
	Addr     string `json:"addr"`
	PID      int    `json:"pid"`
	Brain    string `json:"brain"`
	ReadOnly bool   `json:"read_only"`
}

// WriteRecord records a running owner; the returned func removes it.
func WriteRecord(runtimeDir string, rec Record) (remove func(), err error) {
	path := filepath.Join(runtimeDir, RecordFile)
	data, _ := json.Marshal(rec)
	if err := gitstore.WriteFileAtomic(path, data, 0o600); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// FindOwner returns the running owner's URL from its record, or "".
func FindOwner(runtimeDir string) string {
	data, err := os.ReadFile(filepath.Join(runtimeDir, RecordFile))
	if err != nil {
		return ""
	}
	var rec Record
	if json.Unmarshal(data, &rec) != nil || rec.Addr == "" {
		return ""
	}
	return "http://" + rec.Addr
}
