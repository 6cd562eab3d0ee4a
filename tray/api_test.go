package tray

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t    testing.TB
	g    *gittest.Repo
	srv  *Server
	http *httptest.Server
	host string
	ids  map[string]string // a gesture's challenge (base64url) → the id options handed out with it
	// client keeps the page's cookies: its session, once it logged in.
	client *http.Client
	// runner is runner b1, approved at a terminal before any passkey: it
	// signs the merge_waits the fixture posts, as runnerd does.
	runner *pinstest.Runner
}

// fixtureGate is runner b1's approved gate: markup in it must reach the
// page as text.
const fixtureGate = "go test ./core/... && echo <ok>"

// newFixture serves a scanned brain named shop over a real loopback socket.
func newFixture(t testing.TB, readOnly bool) *fixture {
	t.Helper()
	g := gittest.Init(t, "shop")
	g.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "web/index.html": "<p>\n", "README.md": "x\n"})
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	srv := New(repo, "shop", readOnly)
	srv.Now = func() time.Time { return testNow }
	if _, err := srv.flows.Scan(context.Background(), brain.WriteRequest{Agent: "owner", Now: testNow}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	u, _ := url.Parse(hs.URL)
	srv.SetPort(u.Port())
	jar, _ := cookiejar.New(nil)
	return &fixture{t: t, g: g, srv: srv, http: hs, host: u.Host, runner: pinstest.Approve(t, repo, "b1", fixtureGate), client: &http.Client{Jar: jar}}
}

// missions are the fixture brain's mission chains, wired as ops.New wires
// them, for a test that writes letters as an agent or a runner would.
func (f *fixture) missions() *chain.Missions {
	store := &brain.Store{Repo: f.srv.repo, Brain: f.srv.flows.Name()}
	return &chain.Missions{Repo: f.srv.repo, Brain: store.Brain, Blocks: store, Gates: store, Work: ops.WorkBranches(f.srv.repo)}
}

// do sends a request and decodes the JSON reply.
func (f *fixture) do(method, path, body string, header map[string]string) (int, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if len(data) == 0 && resp.StatusCode == http.StatusUnauthorized {
		return resp.StatusCode, nil // a bare 401, as runner endpoints answer
	}
	if err := json.Unmarshal(data, &out); err != nil {
		f.t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, out
}

func judging(id string) *chain.Letter {
	ts := chain.Timestamp(testNow)
	return &chain.Letter{Schema: chain.LetterSchema, MissionID: id, MissionSeq: 1, BlockID: "sb_shop_core", BrainRef: "shop",
		Seat: "hand", Capability: "build-runner", Phase: "judging", StartedAt: ts, UpdatedAt: ts}
}

func TestEveryStatusAndRefusal(t *testing.T) {
	f := newFixture(t, false)
	post := func(l *chain.Letter, extra string) string {
		return fmt.Sprintf(`{"agent_id":"owner","letter":%s%s}`, l.Canonical(), extra)
	}
	first := judging("msn_0000000000aa")
	for _, tt := range []struct {
		label  string
		method string
		path   string
		body   string
		header map[string]string
		status int
		code   string // refused or error
	}{
		{"heads", "GET", "/api/mailbox?brain=shop&kind=mission", "", nil, 200, ""},
		{"another brain", "GET", "/api/mailbox?brain=other&kind=mission", "", nil, 422, "brain_mismatch"},
		{"mail letters", "GET", "/api/mailbox", "", nil, 200, ""},
		{"blocks", "GET", "/api/system_blocks", "", nil, 200, ""},
		{"status", "GET", "/api/status?brain=shop", "", nil, 200, ""},
		{"status of another brain", "GET", "/api/status?brain=other", "", nil, 422, "brain_mismatch"},
		{"policy", "GET", "/api/policy", "", nil, 200, ""},
		{"packet", "GET", "/api/packet?block_id=sb_shop_core&ask=refuse+negatives", "", nil, 200, ""},
		{"packet of no block", "GET", "/api/packet?block_id=sb_shop_nope", "", nil, 422, "unknown_block"},
		{"post", "POST", "/api/mission_post", post(first, ""), nil, 200, ""},
		{"post again: deduped", "POST", "/api/mission_post", post(first, ""), nil, 200, ""},
		{"stale head", "POST", "/api/mission_post", post(func() *chain.Letter { l := judging("msn_0000000000aa"); l.Phase = "executing"; return l }(), ""), nil, 409, "stale_head"},
		{"unknown block", "POST", "/api/mission_post", post(func() *chain.Letter { l := judging("msn_0000000000bb"); l.BlockID = "sb_shop_nope"; return l }(), ""), nil, 422, "unknown_block"},
		{"archive without the gesture", "POST", "/api/mission_post", post(func() *chain.Letter { l := judging("msn_0000000000cc"); l.Phase = "archived"; return l }(), ""), nil, 403, "human_gesture_required"},
		{"unknown request field", "POST", "/api/mission_post", `{"agent_id":"owner","letter":{},"extra":1}`, nil, 422, "invalid_letter"},
		{"bad agent", "POST", "/api/mission_post", `{"agent_id":"Owner!","letter":{}}`, nil, 422, "invalid_letter"},
		{"a review claiming the human's name", "POST", "/api/missions/msn_0123456789ab/review", `{"decision":"CHANGE","body":"x","agent_id":"owner"}`, nil, 422, "invalid_letter"},
		{"a gesture with no passkey registered", "POST", "/api/gesture/options", `{"gesture":"receipt_import","expected_store_version":1,"block_id":"sb_shop_core","receipt":{}}`, nil, 403, "human_gesture_required"},
		{"a gesture that is not JSON, no passkey: the gate speaks first", "POST", "/api/gesture/options", `{"garbage`, nil, 403, "human_gesture_required"},
		{"a signature for no gesture", "POST", "/api/gesture/commit", `{"gesture_id":"AAAA","credential":{}}`, nil, 403, "human_gesture_required"},
		{"an origin claimed in a body", "POST", "/api/mission_post", `{"agent_id":"owner","letter":{},"archived_via":"human-ui"}`, nil, 422, "invalid_letter"},
		{"runner edit, hostile", "POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"runner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"a/b"}]}`, nil, 422, "candidate_edit_rejected"},
		{"owner edit", "POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"owner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]}`, nil, 200, ""},
		{"edit at an old version", "POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"owner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"Core 2"}]}`, nil, 409, "store_version_conflict"},
		{"another host", "GET", "/api/policy", "", map[string]string{"Host": "evil.example:" + f.srv.port}, 421, "bad_host"},
		{"another port", "GET", "/api/policy", "", map[string]string{"Host": "127.0.0.1:1"}, 421, "bad_host"},
		{"localhost is fine", "GET", "/api/policy", "", map[string]string{"Host": "localhost:" + f.srv.port}, 200, ""},
		{"[::1] is fine", "GET", "/api/policy", "", map[string]string{"Host": "[::1]:" + f.srv.port}, 200, ""},
		{"a write from another origin", "POST", "/api/mission_post", post(first, ""), map[string]string{"Origin": "http://evil.example"}, 403, "bad_origin"},
		{"a write from the tray's origin", "POST", "/api/mission_post", post(first, ""), map[string]string{"Origin": "http://" + f.host}, 200, ""},
		{"a write that is not JSON", "POST", "/api/mission_post", post(first, ""), map[string]string{"Content-Type": "text/plain"}, 415, "bad_content_type"},
		{"a body over 1 MiB", "POST", "/api/mission_post", `{"agent_id":"owner","letter":"` + strings.Repeat("x", MaxBody) + `"}`, nil, 413, "body_too_large"},
	} {
		status, out := f.do(tt.method, tt.path, tt.body, tt.header)
		code, _ := out["refused"].(string)
		if code == "" {
			code, _ = out["error"].(string)
		}
		if status != tt.status || code != tt.code {
			t.Errorf("%s: %d %v, want %d %q", tt.label, status, out, tt.status, tt.code)
		}
		if status >= 400 && out["lesson"] == "" {
			t.Errorf("%s: no lesson", tt.label)
		}
	}
}

// Direct mode refuses what the delivery would refuse before it opens the
// mission: a refused compose leaves no mission behind.
func TestComposeDirectRefusesBeforeOpening(t *testing.T) {
	f := newFixture(t, false)
	for _, tt := range []struct{ label, body string }{
		{"to oneself", `{"block_id":"sb_shop_core","agent_id":"owner","packet_markdown":"# go","deliver_to":"owner"}`},
		{"not an agent", `{"block_id":"sb_shop_core","agent_id":"owner","packet_markdown":"# go","deliver_to":"Bob Smith"}`},
		{"an escape byte", `{"block_id":"sb_shop_core","agent_id":"owner","packet_markdown":"# go\u001b[31m","deliver_to":"bob"}`},
		{"too long", `{"block_id":"sb_shop_core","agent_id":"owner","packet_markdown":"` + strings.Repeat("x", 16<<10+1) + `","deliver_to":"bob"}`},
	} {
		status, out := f.do("POST", "/api/mission_new", tt.body, nil)
		if status != 422 || out["refused"] != string(rules.InvalidLetter) || out["field"] != "deliver_to" ||
			!strings.HasPrefix(out["lesson"].(string), "the packet cannot be delivered: ") {
			t.Errorf("%s: %d %v", tt.label, status, out)
		}
	}
	if refs := f.g.Git("for-each-ref", "refs/m1nd/missions/", "refs/m1nd/mail/"); refs != "" {
		t.Fatalf("a refused compose wrote %s", refs)
	}
	status, out := f.do("POST", "/api/mission_new", `{"block_id":"sb_shop_core","agent_id":"owner","packet_markdown":"# go","deliver_to":"bob"}`, nil)
	if status != 200 || out["delivered"] == nil {
		t.Fatalf("a deliverable compose: %d %v", status, out)
	}
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	f := newFixture(t, true)
	for _, path := range []string{"/api/mission_post", "/api/mission_new", "/api/gesture/options", "/api/gesture/commit", "/api/candidate_edit"} {
		status, out := f.do("POST", path, `{}`, nil)
		if status != 403 || out["refused"] != string(rules.ReadOnlyOwner) {
			t.Errorf("%s: %d %v", path, status, out)
		}
	}
	_, policy := f.do("GET", "/api/policy", "", nil)
	modes := policy["modes"].(map[string]any)
	if modes["clipboard"].(map[string]any)["available"] != true || modes["direct"].(map[string]any)["available"] != false ||
		!strings.Contains(modes["direct"].(map[string]any)["why"].(string), "read-only") {
		t.Fatalf("policy on a read-only owner: %v", modes)
	}
	if refs := f.g.Git("for-each-ref", "refs/m1nd/missions/"); refs != "" {
		t.Fatalf("a read-only owner wrote %s", refs)
	}
}

// Events name the refs that moved, also when plain git moved them.
func TestEventsSeePlainGitWrites(t *testing.T) {
	f := newFixture(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.srv.events.interval = 20 * time.Millisecond
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// The stream opens once the watcher has its first listing.
	deadline := time.After(5 * time.Second)
	for opened := false; !opened; {
		select {
		case line := <-lines:
			opened = line == ": m1nd owner events"
		case <-deadline:
			t.Fatal("the event stream never opened")
		}
	}
	f.g.Git("update-ref", "refs/m1nd/missions/msn_00000000beef", f.g.Git("rev-parse", "HEAD"))
	for {
		select {
		case line := <-lines:
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, "refs/m1nd/missions/msn_00000000beef") {
				return
			}
		case <-deadline:
			t.Fatal("no event for a ref moved by git")
		}
	}
}

// A queue event tells the page that the landing queue's view moved with
// no m1nd ref moving: a finding runnerd's queue recorded (a side record),
// a branch that moved.
func TestEventsTellTheQueue(t *testing.T) {
	f := newFixture(t, false)
	h := f.srv.events
	h.interval = 5 * time.Millisecond
	ch, _ := h.subscribe("", MaxStreams)
	defer h.unsubscribe(ch)
	heard := func(what string) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case moved := <-ch:
				if len(moved) == 0 {
					return
				}
			case <-deadline:
				t.Fatalf("no queue event after %s", what)
			}
		}
	}
	if err := runs.WriteSide(f.srv.repo.RuntimeDir(), &runs.Side{MissionID: "msn_00000000beef", Target: "main", Queue: &runs.QueueState{State: runs.QueueConflict, Paths: []string{"core/a.go"}}}); err != nil {
		t.Fatal(err)
	}
	heard("a side record")
	f.g.Git("branch", "m1nd/msn_00000000beef")
	heard("a work branch")
}

// The watcher runs only while a tab listens.
func TestEventsWatchOnlyWhileSubscribed(t *testing.T) {
	f := newFixture(t, false)
	h := f.srv.events
	h.interval = 5 * time.Millisecond
	running := func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.stop != nil }
	if running() {
		t.Fatal("the watcher runs with nobody listening")
	}
	a, _ := h.subscribe("", MaxStreams)
	b, _ := h.subscribe("", MaxStreams)
	f.g.Git("update-ref", "refs/m1nd/missions/msn_00000000cafe", f.g.Git("rev-parse", "HEAD"))
	for _, ch := range []chan []string{a, b} {
		select {
		case moved := <-ch:
			if strings.Join(moved, ",") != "refs/m1nd/missions/msn_00000000cafe" {
				t.Fatalf("moved %v", moved)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a subscriber heard nothing")
		}
	}
	h.unsubscribe(a)
	if !running() {
		t.Fatal("the watcher stopped while b still listens")
	}
	h.unsubscribe(b)
	if running() {
		t.Fatal("the watcher still runs after the last subscriber left")
	}
}

// TestEventStreamsAreCapped: past MaxStreams an owner answers 503 with
// a lesson instead of holding one more stream; a freed one is served.
func TestEventStreamsAreCapped(t *testing.T) {
	f := newFixture(t, false)
	h := f.srv.events
	var held []chan []string
	for range MaxStreams {
		ch, ok := h.subscribe("", MaxStreams)
		if !ok {
			t.Fatalf("stream %d refused under the cap", len(held)+1)
		}
		held = append(held, ch)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/events", nil)
	req.Host = "localhost:" + f.srv.port
	f.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"error":"too_many_streams"`) || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("stream %d: %d %s", MaxStreams+1, rec.Code, rec.Body)
	}
	h.unsubscribe(held[0])
	if _, ok := h.subscribe("", MaxStreams); !ok {
		t.Fatal("a freed stream is not served again")
	}
}

// TestStreamsAndGesturesAreTheHumansOnceKeyed: once the brain has a key,
// a process without the authenticator can neither ask for a gesture nor
// take the human's live view: its streams share a few slots, it gets no
// gesture options, and the human, logged in with the passkey, still has
// both after the flood.
func TestStreamsAndGesturesAreTheHumansOnceKeyed(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	f.logout() // the agent: no cookie
	mw, _ := f.mergeWait()
	archive := fmt.Sprintf(`{"gesture":"archive","mission_id":%q}`, mw.MissionID)
	if status, out := f.do("POST", "/api/gesture/options", archive, nil); status != http.StatusForbidden || out["field"] != "session" {
		t.Fatalf("options without a session: %d %v", status, out)
	}
	if status, out := f.do("GET", "/api/session", "", nil); status != 200 || out["needed"] != true || out["logged_in"] != false {
		t.Fatalf("the agent's session: %d %v", status, out)
	}
	// A flood of streams without a session fills their own slots only.
	stream := func(cookie string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/events", nil)
		req.Host = "localhost:" + f.srv.port
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		done := make(chan struct{})
		go func() { f.srv.Handler().ServeHTTP(rec, req.WithContext(ctx)); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		return rec
	}
	for range anonStreams {
		stream("")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.srv.events.mu.Lock()
		n := len(f.srv.events.subs)
		f.srv.events.mu.Unlock()
		if n == anonStreams || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/events", nil)
	req.Host = "localhost:" + f.srv.port
	f.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "log in with the brain's passkey") {
		t.Fatalf("a stream past the slots without a session: %d %s", rec.Code, rec.Body)
	}
	// The human logs in: a gesture's options, and a stream of their own.
	f.login(a)
	if status, out, _ := f.gestureOptions(archive); status != 200 {
		t.Fatalf("the human's options after the flood: %d %v", status, out)
	}
	u, _ := url.Parse(f.http.URL)
	var cookie string
	for _, c := range f.client.Jar.Cookies(u) {
		cookie = c.Name + "=" + c.Value
	}
	if !strings.HasPrefix(cookie, "m1nd_session_"+f.srv.port+"=") {
		t.Fatalf("the session's cookie: %q", cookie)
	}
	stream(cookie)
	deadline = time.Now().Add(5 * time.Second)
	for {
		f.srv.events.mu.Lock()
		n := len(f.srv.events.subs)
		f.srv.events.mu.Unlock()
		if n == anonStreams+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the human's stream was not served: %d streams", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLoginHoldsOnlyForThisTraysFreshChallenge: a login is an assertion
// by a registered key over a challenge this tray made, on its own page,
// once; the cookie is HttpOnly, SameSite=Strict and named for this tray.
func TestLoginHoldsOnlyForThisTraysFreshChallenge(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	f.logout()
	stranger := rulestest.New(t, "es256")
	stranger.Origin = a.Origin
	if status, out := f.tryLogin(stranger, nil); status == 200 || !strings.Contains(fmt.Sprint(out["lesson"]), "not one of this brain's") {
		t.Fatalf("an unregistered key logged in: %d %v", status, out)
	}
	if status, out := f.tryLogin(a, func(cd map[string]any, ad []byte) []byte { cd["origin"] = "http://localhost:1"; return ad }); status == 200 {
		t.Fatalf("a login made on another page: %d %v", status, out)
	}
	if status, out := f.tryLogin(a, func(cd map[string]any, ad []byte) []byte { cd["challenge"] = "AAAA"; return ad }); status == 200 {
		t.Fatalf("a login over a challenge the tray did not make: %d %v", status, out)
	}
	if status, out := f.tryLogin(a, func(_ map[string]any, ad []byte) []byte { ad[32] &^= 0x01; return ad }); status == 200 {
		t.Fatalf("a login with no user present: %d %v", status, out)
	}
	// A good login, and its assertion sent again: one session.
	status, opts := f.do("POST", "/api/session/options", "{}", nil)
	if status != 200 {
		t.Fatal(opts)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(opts["publicKey"].(map[string]any)["challenge"].(string))
	p := a.Assert(raw, nil)
	body, _ := json.Marshal(map[string]any{"credential": map[string]any{"id": p.CredentialID, "response": map[string]any{
		"authenticatorData": p.AuthenticatorData, "clientDataJSON": p.ClientDataJSON, "signature": p.Signature}}})
	req, _ := http.NewRequest("POST", f.http.URL+"/api/session/login", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var set *http.Cookie
	for _, c := range resp.Cookies() {
		set = c
	}
	if resp.StatusCode != 200 || set == nil || set.Name != "m1nd_session_"+f.srv.port || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.MaxAge != int(SessionTTL/time.Second) {
		t.Fatalf("login: %d, cookie %+v", resp.StatusCode, set)
	}
	if status, out := f.do("POST", "/api/session/login", string(body), nil); status == 200 {
		t.Fatalf("the same assertion logged in twice: %v", out)
	}
}

// TestOwnerBoundElsewhereAnswersItsOwnURL: an owner on another loopback
// address prints that address and answers a Host naming it.
func TestOwnerBoundElsewhereAnswersItsOwnURL(t *testing.T) {
	f := newFixture(t, false)
	f.srv.host = "127.0.0.2"
	for host, want := range map[string]int{"127.0.0.2:" + f.srv.port: 200, "localhost:" + f.srv.port: 200, "127.0.0.3:" + f.srv.port: http.StatusMisdirectedRequest} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/status", nil)
		req.Host = host
		f.srv.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

// Runners: an announce proves liveness for pinned ids only; spawn is
// offered only with a live pinned build-runner and is proxied to runnerd.
func TestRunnerAnnounceStatusAndSpawn(t *testing.T) {
	f := newFixture(t, false)
	secret := strings.Repeat("ab", 32)
	f.srv.Pins = trayclient.Pins{Secret: secret, Capabilities: map[string]string{"build-1": "build-runner", "namer": "naming-runner"}}
	// A fake runnerd that records what the owner proxies to it.
	var got map[string]any
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/run" || r.Header.Get("x-runnerd-secret") != secret {
			w.WriteHeader(401)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"mission_id":"msn_00000000feed","accepted":true,"runner_id":"build-1"}`))
	}))
	defer runner.Close()
	ru, _ := url.Parse(runner.URL)

	_, policy := f.do("GET", "/api/policy", "", nil)
	if spawn := policy["modes"].(map[string]any)["spawn"].(map[string]any); spawn["available"] != false || !strings.Contains(spawn["why"].(string), "no live pinned build-runner") {
		t.Fatalf("spawn before any announce: %v", spawn)
	}
	status, _ := f.do("POST", "/api/mission_spawn", `{"runner_id":"build-1","block_id":"sb_shop_core","packet_markdown":"x"}`, nil)
	if status != 403 {
		t.Fatalf("spawn to a silent runner: %d", status)
	}
	announce := fmt.Sprintf(`{"runner_ids":["build-1","ghost"],"port":%q,"boot_challenge":"c0ffee"}`, ru.Port())
	if status, _ := f.do("POST", "/api/runnerd/announce", announce, map[string]string{"x-runnerd-secret": "wrong"}); status != 401 {
		t.Fatalf("announce with a wrong secret: %d", status)
	}
	status, out := f.do("POST", "/api/runnerd/announce", announce, map[string]string{"x-runnerd-secret": secret})
	if status != 200 || out["echo"] != "c0ffee" || fmt.Sprint(out["registered"]) != "[build-1]" {
		t.Fatalf("announce: %d %v", status, out)
	}
	_, st := f.do("GET", "/api/runnerd/status", "", nil)
	runners := st["runners"].([]any)
	if len(runners) != 2 || runners[0].(map[string]any)["runner_id"] != "build-1" || runners[0].(map[string]any)["lost"] != false ||
		runners[1].(map[string]any)["lost"] != true {
		t.Fatalf("status: %v", runners)
	}
	_, policy = f.do("GET", "/api/policy", "", nil)
	if spawn := policy["modes"].(map[string]any)["spawn"].(map[string]any); spawn["available"] != true || fmt.Sprint(policy["build_runners"]) != "[build-1]" {
		t.Fatalf("spawn after an announce: %v", policy)
	}
	status, out = f.do("POST", "/api/mission_spawn", `{"runner_id":"build-1","block_id":"sb_shop_core","packet_markdown":"# p"}`, nil)
	if status != 200 || out["accepted"] != true || got["brain_ref"] != "shop" || got["block_id"] != "sb_shop_core" {
		t.Fatalf("spawn: %d %v, runnerd got %v", status, out, got)
	}
	status, out = f.do("POST", "/api/mission_spawn", `{"runner_id":"ghost","block_id":"sb_shop_core","packet_markdown":"# p"}`, nil)
	if status != 403 || out["refused"] != "unpinned_runner" {
		t.Fatalf("spawn to an unpinned runner: %d %v", status, out)
	}
	// 90 s of silence and the runner is lost again.
	f.srv.Now = func() time.Time { return testNow.Add(91 * time.Second) }
	_, st = f.do("GET", "/api/runnerd/status", "", nil)
	if st["runners"].([]any)[0].(map[string]any)["lost"] != true {
		t.Fatal("a runner silent for 91 s is not lost")
	}
}

// The agent a gesture names is who it is recorded as; none named means
// owner; a named id that is not an agent id is refused, never replaced by
// owner.
func TestGestureAgentIsRefusedNotReplaced(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	storeAt := func() string { return f.g.Git("rev-parse", "refs/m1nd/store") }
	agentOf := func() string {
		return f.g.Git("log", "-1", "--format=%(trailers:key=M1nd-Agent,valueonly)", "refs/m1nd/store")
	}
	status, out := f.do("POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"owner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"Core"},{"op":"rename","block_id":"sb_shop_web","name":"Web"}]}`, nil)
	if status != 200 || agentOf() != "owner" {
		t.Fatalf("owner edit: %d %v, agent %q", status, out, agentOf())
	}
	before := storeAt()
	for _, body := range []string{
		`{"gesture":"ratify","expected_store_version":2,"block_ids":["sb_shop_core"],"agent_id":"Owner!"}`,
		`{"gesture":"ratify","expected_store_version":2,"block_ids":["sb_shop_core"],"agent_id":"runnerd:"}`,
		`{"gesture":"receipt_import","expected_store_version":2,"block_id":"sb_shop_core","receipt":{},"agent_id":"a b"}`,
	} {
		status, out, _ := f.gestureOptions(body)
		if status != 422 || out["refused"] != "invalid_letter" || out["field"] != "agent_id" || out["lesson"] == "" {
			t.Errorf("%s: %d %v, want 422 invalid_letter on agent_id", body, status, out)
		}
	}
	if storeAt() != before {
		t.Fatal("a refused gesture wrote the store")
	}
	status, out = f.signed(a, `{"gesture":"ratify","expected_store_version":2,"block_ids":["sb_shop_core"]}`)
	if status != 200 || agentOf() != "owner" {
		t.Fatalf("ratify naming nobody: %d %v, agent %q", status, out, agentOf())
	}
	status, out = f.signed(a, `{"gesture":"ratify","expected_store_version":3,"block_ids":["sb_shop_web"],"agent_id":"alice"}`)
	if status != 200 || agentOf() != "alice" {
		t.Fatalf("ratify by alice: %d %v, agent %q", status, out, agentOf())
	}
	status, out = f.do("POST", "/api/candidate_edit", `{"expected_store_version":4,"by":"runner","ops":[{"op":"rename","block_id":"sb_shop_root","name":"Root"}]}`, nil)
	if status != 200 || agentOf() != "runner" {
		t.Fatalf("runner edit: %d %v, agent %q", status, out, agentOf())
	}
}
