package tray

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// MaxBody caps every request body.
const MaxBody = 1 << 20

// Server is one brain's tray: the brain's flows (ops.Flows: its missions,
// store, mail and memory) answered over HTTP.
type Server struct {
	ReadOnly bool
	Pins     trayclient.Pins // runners.toml and runnerd.secret, as the operator set them: an announce proves liveness, never grants a capability
	// Now is the server's clock (tests set it); time.Now when nil.
	Now func() time.Time

	flows    *ops.Flows     // the brain, asked for every flow
	repo     *gitstore.Repo // its repository: the runtime folder, the keys and pins a gesture prepares
	host     string         // the loopback address it is bound to, which its Host may name
	port     string
	events   *hub
	runners  registry
	pins     pinState
	reg      registration             // the one-time code that registers the first passkey
	logins   *sessions                // the human's sessions, and the challenges to log in or make a passkey
	gestures pending[*pendingGesture] // prepared gestures waiting for their passkey signature, per session
	heads    headsMemo                // the encoded mission heads reply, while the refs stay still
}

// New builds the tray of the brain in repo.
func New(repo *gitstore.Repo, brainName string, readOnly bool) *Server {
	b := ops.New(repo, brainName)
	return &Server{
		flows:    b,
		repo:     repo,
		ReadOnly: readOnly,
		events:   newHub(repo, 250*time.Millisecond, b.QueueStamp),
		runners:  registry{seen: map[string]runnerSeen{}},
		logins:   newSessions(),
	}
}

// Serve answers on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.host, s.port = host, port
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: /api/events streams for as long as the tab is open.
	}
	srv.RegisterOnShutdown(s.events.close)
	return loopback.Run(ctx, srv, ln)
}

// SetPort tells a server that is not started by Serve (tests with
// httptest) which port its Host header must carry.
func (s *Server) SetPort(port string) { s.port = port }

// Handler is the owner's whole HTTP surface.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/mailbox", s.getMailbox)
	mux.HandleFunc("GET /api/system_blocks", s.getSystemBlocks)
	mux.HandleFunc("GET /api/status", s.getStatus)
	mux.HandleFunc("GET /api/missions/{id}", s.getMission)
	mux.HandleFunc("GET /api/policy", s.getPolicy)
	mux.HandleFunc("GET /api/packet", s.getPacket)
	mux.HandleFunc("GET /api/events", s.getEvents)
	mux.HandleFunc("POST /api/mission_post", s.write(s.postMission))
	mux.HandleFunc("POST /api/mission_new", s.write(s.postMissionNew))
	mux.HandleFunc("POST /api/missions/{id}/review", s.write(s.postReview))
	mux.HandleFunc("POST /api/gesture/options", s.write(s.postGestureOptions))
	mux.HandleFunc("POST /api/gesture/commit", s.write(s.postGestureCommit))
	mux.HandleFunc("POST /api/prove", s.write(s.postProve))
	mux.HandleFunc("POST /api/candidate_edit", s.write(s.postCandidateEdit))
	mux.HandleFunc("POST /api/naming", s.write(s.postNaming))
	mux.HandleFunc("POST /api/curate", s.write(s.postCurate))
	mux.HandleFunc("GET /api/passkeys", s.getPasskeys)
	mux.HandleFunc("POST /api/passkey/options", s.write(s.postPasskeyOptions))
	mux.HandleFunc("POST /api/passkey/register", s.write(s.postPasskeyRegister))
	mux.HandleFunc("POST /api/passkey/enrolment", s.write(s.postEnrolment))
	mux.HandleFunc("GET /api/session", s.getSession)
	mux.HandleFunc("POST /api/session/options", s.login(s.postLoginOptions))
	mux.HandleFunc("POST /api/session/login", s.login(s.postLogin))
	mux.HandleFunc("POST /api/session/logout", s.login(s.postLogout))
	mux.HandleFunc("GET /api/runner_pins", s.getRunnerPins)
	mux.HandleFunc("GET /api/keeper", s.getKeeper)
	mux.HandleFunc("POST "+wire.PathMissionSpawn, s.write(s.postSpawn))
	mux.HandleFunc("POST "+wire.PathAnnounce, s.postAnnounce)
	mux.HandleFunc("GET "+wire.PathRunnersStatus, s.getRunnerStatus)
	mux.Handle("GET /", staticHandler())
	return s.checkHost(mux)
}

// checkHost refuses a request whose Host is not this server's loopback
// name and port: a page on another origin that rebinds its DNS name to
// 127.0.0.1 still sends its own name.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil || port != s.port || !(host == "localhost" || host == "127.0.0.1" || host == "::1" || (host == s.host && s.host != "")) {
			loopback.WriteErr(w, loopback.Fail(http.StatusMisdirectedRequest, "bad_host", "this owner answers only "+trayclient.URL(s.host, s.port)+" (or 127.0.0.1); the request named another host"))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// write wraps a write endpoint: JSON content type, a same-origin or absent
// Origin, a capped body, and the read-only switch; h's answer is written
// as JSON, its error as loopback.WriteErr answers it.
func (s *Server) write(h func(r *http.Request, body []byte) (any, error)) http.HandlerFunc {
	return s.post(true, func(_ http.ResponseWriter, r *http.Request, body []byte) (any, error) { return h(r, body) })
}

// login wraps a session endpoint as write does, but a read-only owner
// takes it too: its page logs in for the live stream.
func (s *Server) login(h func(w http.ResponseWriter, r *http.Request, body []byte) (any, error)) http.HandlerFunc {
	return s.post(false, h)
}

// post is write and login: writes is whether the read-only switch
// refuses it; h may set headers of its own (a session's cookie).
func (s *Server) post(writes bool, h func(w http.ResponseWriter, r *http.Request, body []byte) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host {
			loopback.WriteErr(w, loopback.Fail(http.StatusForbidden, "bad_origin", "writes come from the tray's own page; this one came from "+rules.Clip(origin)))
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
			loopback.WriteErr(w, loopback.Fail(http.StatusUnsupportedMediaType, "bad_content_type", "writes are JSON: send Content-Type: application/json"))
			return
		}
		if writes && s.ReadOnly {
			loopback.WriteRefusal(w, rules.Refuse(rules.ReadOnlyOwner, ""))
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			loopback.WriteErr(w, loopback.Fail(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("a request body is at most %d bytes", MaxBody)))
			return
		}
		out, err := h(w, r, body)
		if err != nil {
			loopback.WriteErr(w, err)
			return
		}
		loopback.WriteJSON(w, http.StatusOK, out)
	}
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	return io.ReadAll(r.Body)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
