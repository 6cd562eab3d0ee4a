package tray

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/rules"
)

// Once the brain has a passkey, the human's page holds a session: a
// passkey login (an assertion over a fresh challenge this owner made)
// sets a short-lived cookie, HttpOnly and SameSite=Strict, for this tray
// alone. Gesture options and commits, new-passkey options and the event
// stream need it, and what waits for a signature and the streams are
// counted per session: a local process without the authenticator can
// still read (every GET but the stream), but it can neither ask for the
// human's gestures nor use up what the human's page needs. Before the
// first key nothing needs a session: the tray is where that key is made.

// SessionTTL is how long a login lasts; the page asks for the passkey
// again after it.
const SessionTTL = time.Hour

const (
	maxSessions    = 16 // live sessions at once; a login past it drops the oldest
	sessionStreams = 8  // event streams one session holds at once (a page needs one)
	anonStreams    = 16 // event streams without a session, all of them together
	loginNonce     = 16 // bytes of a login challenge's nonce
	loginMAC       = 16 // bytes of its authentication code
)

// sessions are the human's logins, and the challenges a page answers to
// log in or to make a passkey. A challenge is made from a secret of this
// process and kept nowhere (its nonce, time and a MAC over both), so no
// flood of options can crowd out the human's; only a login challenge
// that logged in is remembered, until it expires, so it logs in once.
type sessions struct {
	mu     sync.Mutex
	secret []byte
	live   map[string]*loginSession // by the sha256 of the cookie's token
	used   map[string]time.Time     // nonces of challenges that logged in, until they expire
}

// loginSession is one login: the credential that made it, until when.
type loginSession struct {
	id         string // names the session in the caps; never the token
	credential string
	expires    time.Time
}

func newSessions() *sessions {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic("tray: no randomness for the session secret: " + err.Error())
	}
	return &sessions{secret: secret, live: map[string]*loginSession{}, used: map[string]time.Time{}}
}

// cookieName is this tray's session cookie: browsers send a localhost
// cookie to every port, so each tray names its own.
func (s *Server) cookieName() string { return "m1nd_session_" + s.port }

// challenge makes a challenge for purpose ("login", "create"): nonce,
// unix time, and a MAC over both, the purpose and this tray's port. It is
// kept nowhere, so asking for challenges over and over fills nothing.
func (ss *sessions) challenge(purpose, port string, now time.Time) ([]byte, error) {
	c := make([]byte, loginNonce+8, loginNonce+8+loginMAC)
	if _, err := rand.Read(c[:loginNonce]); err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint64(c[loginNonce:], uint64(now.Unix()))
	return append(c, ss.mac(purpose, port, c)...), nil
}

func (ss *sessions) mac(purpose, port string, body []byte) []byte {
	m := hmac.New(sha256.New, ss.secret)
	m.Write([]byte("m1nd-tray-challenge-v0\x00" + purpose + "\x00" + port + "\x00"))
	m.Write(body)
	return m.Sum(nil)[:loginMAC]
}

// fresh reports whether c is a challenge this tray made for purpose, not
// expired. A login's is also used once (start).
func (ss *sessions) fresh(purpose, port string, c []byte, now time.Time) bool {
	if len(c) != loginNonce+8+loginMAC || !hmac.Equal(c[loginNonce+8:], ss.mac(purpose, port, c[:loginNonce+8])) {
		return false
	}
	made := time.Unix(int64(binary.BigEndian.Uint64(c[loginNonce:])), 0)
	return !now.Before(made.Add(-time.Minute)) && now.Before(made.Add(challengeTTL))
}

// start records a login by credential for the challenge c and returns
// the cookie's token; false when c logged in meanwhile.
func (ss *sessions) start(c []byte, credential string, now time.Time) (token string, ok bool) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false
	}
	id := make([]byte, 9)
	if _, err := rand.Read(id); err != nil {
		return "", false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, until := range ss.used {
		if !now.Before(until) {
			delete(ss.used, k)
		}
	}
	if _, used := ss.used[string(c[:loginNonce])]; used {
		return "", false
	}
	ss.used[string(c[:loginNonce])] = now.Add(challengeTTL + time.Minute)
	ss.sweep(now)
	if len(ss.live) >= maxSessions {
		var oldest string
		for k, l := range ss.live {
			if oldest == "" || l.expires.Before(ss.live[oldest].expires) {
				oldest = k
			}
		}
		delete(ss.live, oldest)
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	ss.live[tokenKey(token)] = &loginSession{id: base64.RawURLEncoding.EncodeToString(id), credential: credential, expires: now.Add(SessionTTL)}
	return token, true
}

// sweep drops expired sessions. The caller holds mu.
func (ss *sessions) sweep(now time.Time) {
	for k, l := range ss.live {
		if !now.Before(l.expires) {
			delete(ss.live, k)
		}
	}
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// of is the live session the request's cookie names, nil for none.
func (ss *sessions) of(r *http.Request, name string, now time.Time) *loginSession {
	c, err := r.Cookie(name)
	if err != nil || c.Value == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.sweep(now)
	l := ss.live[tokenKey(c.Value)]
	if l == nil {
		return nil
	}
	copied := *l
	return &copied
}

// end drops the session the request's cookie names.
func (ss *sessions) end(r *http.Request, name string) {
	if c, err := r.Cookie(name); err == nil {
		ss.mu.Lock()
		delete(ss.live, tokenKey(c.Value))
		ss.mu.Unlock()
	}
}

// errNoSession is the refusal of what needs the human's session.
var errNoSession = rules.Refusef(rules.HumanGestureRequired, "session",
	"log in with the brain's passkey first (the tray's Log in button): once the brain has a key, only the human's session asks for a gesture")

// keyed reports whether the brain has a registered passkey: from then on
// gestures and the stream need a session.
func (s *Server) keyed() (*brain.KeySet, bool, error) {
	keys, err := s.flows.Keys()
	if err != nil {
		return nil, false, err
	}
	return keys, keys != nil && len(keys.Keys) > 0, nil
}

// sessionOf is the request's session where keys (the brain's, read once by
// the caller) hold one: "" and no error before the first key (today's
// rules: nothing to log in with), errNoSession when there is none.
func (s *Server) sessionOf(r *http.Request, keys *brain.KeySet) (string, error) {
	if keys == nil || len(keys.Keys) == 0 {
		return "", nil
	}
	l := s.live(r, keys)
	if l == nil {
		return "", errNoSession
	}
	return l.id, nil
}

// live is the request's session while the key that logged in is still
// one of the brain's (a removed key's sessions end with it); nil for none.
func (s *Server) live(r *http.Request, keys *brain.KeySet) *loginSession {
	l := s.logins.of(r, s.cookieName(), s.now())
	if l == nil || keys == nil {
		return nil
	}
	if _, held := keys.Key(l.credential); !held {
		return nil
	}
	return l
}

// sessionReply is GET /api/session: whether the page must log in, and
// whether it is.
type sessionReply struct {
	Needed    bool   `json:"needed"` // the brain has a key
	LoggedIn  bool   `json:"logged_in"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

// getSession answers whether this page holds a session.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	keys, keyed, err := s.keyed()
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	reply := sessionReply{Needed: keyed}
	if l := s.live(r, keys); keyed && l != nil {
		reply.LoggedIn, reply.ExpiresAt = true, l.expires.UTC().Format(time.RFC3339)
	}
	loopback.WriteJSON(w, http.StatusOK, reply)
}

// postLoginOptions hands out a login challenge and the brain's keys for
// navigator.credentials.get. It keeps nothing: a flood of it costs the
// human nothing.
func (s *Server) postLoginOptions(_ http.ResponseWriter, _ *http.Request, _ []byte) (any, error) {
	keys, keyed, err := s.keyed()
	if err != nil {
		return nil, err
	}
	if !keyed {
		return nil, rules.Refusef(rules.HumanGestureRequired, "session", "this brain has no passkey yet: register one (m1nd serve prints a one-time code); there is nothing to log in with")
	}
	c, err := s.logins.challenge("login", s.port, s.now())
	if err != nil {
		return nil, err
	}
	var reply gestureOptions
	reply.Gesture = "login"
	reply.Binds = []string{"a session of this tray at http://" + rules.RelyingParty + ":" + s.port + " for " + SessionTTL.String()}
	reply.PublicKey.Challenge = base64.RawURLEncoding.EncodeToString(c)
	reply.PublicKey.RPID = rules.RelyingParty
	reply.PublicKey.UserVerification = "preferred"
	reply.PublicKey.Timeout = challengeTTL.Milliseconds()
	for _, k := range keys.Keys {
		reply.PublicKey.AllowCredentials = append(reply.PublicKey.AllowCredentials, allowedCredential{Type: "public-key", ID: k.CredentialID})
	}
	return reply, nil
}

// loginRequest is POST /api/session/login: the browser's assertion over
// a login challenge, as a gesture commit carries one.
type loginRequest struct {
	Credential assertion `json:"credential"`
}

// postLogin starts a session for an assertion over a login challenge of
// this tray, by a registered key, made on this tray's page with the user
// present, and sets its cookie.
func (s *Server) postLogin(w http.ResponseWriter, r *http.Request, body []byte) (any, error) {
	keys, keyed, err := s.keyed()
	if err != nil {
		return nil, err
	}
	if !keyed {
		return nil, rules.Refusef(rules.HumanGestureRequired, "session", "this brain has no passkey yet: there is nothing to log in with")
	}
	var req loginRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	proof := req.Credential.proof()
	if origin, err := rules.ProofOrigin(proof); err != nil || origin != "http://"+rules.RelyingParty+":"+s.port {
		return nil, rules.Refusef(rules.HumanGestureRequired, "credential", "the passkey was asked on another page, not this tray (http://%s:%s)", rules.RelyingParty, s.port)
	}
	challenge, err := rules.ProofChallenge(proof)
	now := s.now()
	if err != nil || !s.logins.fresh("login", s.port, challenge, now) {
		return nil, rules.Refusef(rules.HumanGestureRequired, "credential", "the passkey answered a login challenge this tray did not make, or one that expired or was used: log in again")
	}
	key, ok := keys.Key(proof.CredentialID)
	if !ok {
		return nil, rules.Refusef(rules.HumanGestureRequired, "credential", "that passkey is not one of this brain's")
	}
	if err := rules.VerifyProof(proof, key, challenge); err != nil {
		return nil, err
	}
	token, ok := s.logins.start(challenge, proof.CredentialID, now)
	if !ok {
		return nil, rules.Refusef(rules.HumanGestureRequired, "credential", "that login challenge was used already: log in again")
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: token, Path: "/", MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return sessionReply{Needed: true, LoggedIn: true, ExpiresAt: now.Add(SessionTTL).UTC().Format(time.RFC3339)}, nil
}

// postLogout ends the page's session.
func (s *Server) postLogout(w http.ResponseWriter, r *http.Request, _ []byte) (any, error) {
	s.logins.end(r, s.cookieName())
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return map[string]bool{"logged_in": false}, nil
}
