package loopback

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// ShutdownGrace is how long open requests get once a server is asked to
// stop: a daemon's whole stop stays inside the 5 s a service manager or a
// terminal waits before it kills.
const ShutdownGrace = 2 * time.Second

// Run serves srv on ln until ctx ends, then shuts it down, giving open
// requests ShutdownGrace, closes what is still open, and returns nil; a
// server that fails returns its error.
func Run(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		if srv.Shutdown(shut) != nil {
			srv.Close() // a stream that outlived the grace is cut
		}
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

// WriteJSON answers v with status, never cached, encoded as every surface
// answers (rules.EncodeReply: HTML left as is, a map's "ok" first); a
// success (2xx) is a result, wrapped once in the envelope (rules.Success).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if status >= 200 && status < 300 {
		v = rules.Success(v)
	}
	b, err := rules.EncodeReply(v)
	if err != nil {
		b = []byte(`{"ok":false,"error":"internal","lesson":"the answer did not encode"}`)
	}
	w.Write(append(b, '\n'))
}

// WriteEncoded answers JSON that is already encoded (as WriteJSON would
// have), never cached.
func WriteEncoded(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// Failure is an answer that is not a refusal of the law — a request for
// another host, a transport failure behind a proxy, an internal error —
// with its own status: {"ok":false,"error":code,"lesson":…}.
type Failure struct {
	Status int    `json:"-"`
	OK     bool   `json:"ok"`
	Code   string `json:"error"`
	Lesson string `json:"lesson"`
}

// EnvelopeOK is false: a failure says so itself.
func (f Failure) EnvelopeOK() bool { return f.OK }

// Fail builds a Failure answered with status.
func Fail(status int, code, lesson string) *Failure {
	return &Failure{Status: status, Code: code, Lesson: lesson}
}

func (f *Failure) Error() string { return f.Code + ": " + f.Lesson }

// WriteRefusal answers a refusal: its status (rules.HTTPStatus) and the
// envelope {"ok":false,"refused",…} (DESIGN §5).
func WriteRefusal(w http.ResponseWriter, r *rules.Refusal) {
	WriteJSON(w, rules.HTTPStatus(r.Code), r.Envelope())
}

// WriteErr answers err: a refusal as WriteRefusal, a Failure with its
// status, anything else as an internal failure (500).
func WriteErr(w http.ResponseWriter, err error) {
	if r, ok := rules.AsRefusal(err); ok {
		WriteRefusal(w, r)
		return
	}
	var f *Failure
	if errors.As(err, &f) {
		WriteJSON(w, f.Status, f)
		return
	}
	WriteJSON(w, http.StatusInternalServerError, Fail(http.StatusInternalServerError, "internal", err.Error()))
}

// ReadRefusal reads a refusal envelope back from a reply body, so a proxy
// answers the refusal it was given (or a CLI prints it); ok is false for
// anything else.
func ReadRefusal(body []byte) (*rules.Refusal, bool) {
	var env struct {
		OK      *bool  `json:"ok"`
		Refused string `json:"refused"`
		Field   string `json:"field"`
		Lesson  string `json:"lesson"`
	}
	if json.Unmarshal(body, &env) != nil || env.OK == nil || *env.OK || !rules.Known(rules.Code(env.Refused)) {
		return nil, false
	}
	if env.Lesson == "" {
		env.Lesson = rules.Lesson(rules.Code(env.Refused))
	}
	return &rules.Refusal{Code: rules.Code(env.Refused), Field: env.Field, Lesson: env.Lesson}, true
}

// SecretHeader carries the shared local secret between runnerd and the owner.
const SecretHeader = "x-runnerd-secret"

// SecretMatches compares a presented secret with the real one in constant
// time; an empty secret never matches.
func SecretMatches(secret, presented string) bool {
	return secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(presented)) == 1
}
