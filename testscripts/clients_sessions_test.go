package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// The session registry and the refresh decider against what the real
// clients write: the transcript each one keeps, found through the
// registry its hooks fill, measured by session.ReadTranscript.

// registry is the session registry the hooks write in the repository.
func (r *clientRepo) registry() *session.Registry {
	return session.NewRegistry(filepath.Join(r.Dir, ".git", "m1nd"))
}

// onlySession is the one session the registry holds, live or dead.
func (r *clientRepo) onlySession() session.Listed {
	r.t.Helper()
	listed, err := r.registry().List(time.Now(), true)
	if err != nil || len(listed) != 1 {
		r.t.Fatalf("registry: %v, %d sessions, want 1: %+v", err, len(listed), listed)
	}
	return listed[0]
}

// measure reads a session's transcript as the decider does.
func measure(t *testing.T, s session.Listed) session.Measure {
	t.Helper()
	f, err := os.Open(s.Transcript)
	if err != nil {
		t.Fatalf("the registry's transcript path: %v", err)
	}
	defer f.Close()
	m, err := session.ReadTranscript(s.Client, f)
	if err != nil {
		t.Fatalf("ReadTranscript(%s): %v", s.Client, err)
	}
	return m
}

// wantMeasure checks a measure against the usage the server reported for
// its model calls: one request each, the first and last prefixes, the
// rental between, and the last request's time inside the run.
func wantMeasure(t *testing.T, m session.Measure, srv *fakemodel.Server, from, to time.Time) {
	t.Helper()
	var calls []fakemodel.Request
	for _, q := range srv.Requests() {
		if q.Kind != fakemodel.KindOther || q.Usage != (fakemodel.Usage{}) {
			calls = append(calls, q)
		}
	}
	if len(calls) == 0 {
		t.Fatalf("no model call:\n%s", srv.Log())
	}
	first, last := int64(calls[0].Prefix()), int64(calls[len(calls)-1].Prefix())
	var rental int64
	for _, q := range calls[1:] {
		rental += max(int64(q.Prefix())-first, 0)
	}
	if m.Requests != len(calls) || m.First != first || m.Prefix != last || m.Rental != rental {
		t.Errorf("measure: %d requests, first %d, prefix %d, rental %d; the server reported %d, %d, %d, %d\n%s",
			m.Requests, m.First, m.Prefix, m.Rental, len(calls), first, last, rental, srv.Log())
	}
	if m.Last.Before(from.Add(-time.Second)) || m.Last.After(to.Add(time.Second)) {
		t.Errorf("last request at %s, outside the run %s–%s", m.Last, from, to)
	}
}

// requestModel is the model a request asked for.
func requestModel(t *testing.T, q fakemodel.Request) string {
	var in struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(q.Body, &in); err != nil || in.Model == "" {
		t.Fatalf("request names no model: %v", err)
	}
	return in.Model
}

// Claude Code 2.1.332 writes each assistant content block as its own
// JSONL line ("type":"assistant", message.id, message.model,
// message.usage with input_tokens, cache_creation_input_tokens,
// cache_read_input_tokens and cache_creation.ephemeral_{1h,5m}_input_tokens
// zeroed when the server sent no breakdown), the message's usage repeated
// on each: a reply of text and a tool call is one request, not two.
func TestClaudeTranscriptMeasure(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	first := fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"})
	first.Text = "Looking first."
	first.InputTokens, first.CacheCreation = 50, 3000
	last := fakemodel.Text("All done.")
	last.InputTokens, last.CacheRead, last.CacheCreation = 20, 3000, 400
	srv := fakemodel.Start(t, first, last)
	from := time.Now()
	res, stderr, err := r.claude(srv, "do the task")
	to := time.Now()
	if err != nil || res.IsError || res.Result != "All done." {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	s := r.onlySession()
	if s.Client != session.HostClaude || s.Agent != "bob" || s.Live || s.Transcript == "" {
		t.Fatalf("registry: %+v", s)
	}
	data, _ := os.ReadFile(s.Transcript)
	if n := bytes.Count(data, []byte(`"id":"msg_fake0001"`)); n != 2 {
		t.Errorf("the text-and-tool reply is on %d transcript lines, want 2 (one per block)", n)
	}
	m := measure(t, s)
	wantMeasure(t, m, srv, from, to)
	if want := requestModel(t, srv.Turns()[0]); m.Model != want || m.CacheTTL != 300 || m.Window != 0 {
		t.Errorf("measure: model %q (want %q), cache ttl %d (want 300), window %d (want 0: Claude's transcript names none)", m.Model, want, m.CacheTTL, m.Window)
	}
	// Dead, warm, a letter waiting: the decider resumes it.
	if d := session.Assess(s, 1, time.Now()); d.Action != session.ActionResume {
		t.Errorf("decision %s (%s), want %s", d.Action, d.Reason, session.ActionResume)
	}
}

// Codex 0.171.0's rollout has an event_msg token_count line after each
// model call: payload.info.last_token_usage.input_tokens (cached ones
// included, as the Responses API counts them) and model_context_window:
// 95% of the configured window, the share Codex lets a session use (its
// default window, 272,000, shows as 258,400). (It also writes token_usage_record lines with
// the response id and the same usage; ReadTranscript skips them.)
func TestCodexTranscriptMeasure(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	first := fakemodel.Tool("exec_command", map[string]any{"cmd": "echo first"})
	first.InputTokens = 3050
	last := fakemodel.Text("All done.")
	last.InputTokens, last.CacheRead = 3420, 3000
	srv := fakemodel.Start(t, first, last)
	from := time.Now()
	stdout, stderr, err := r.codex(srv, "model_context_window = 100000", "do the task")
	to := time.Now()
	if err != nil || !strings.Contains(stdout, "All done.") {
		t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	s := r.onlySession()
	if s.Client != session.HostCodex || s.Agent != "bob" || s.Live || s.Transcript == "" {
		t.Fatalf("registry: %+v", s)
	}
	m := measure(t, s)
	wantMeasure(t, m, srv, from, to)
	if m.Model != "fake-model" || m.Window != 95000 {
		t.Errorf("measure: model %q (want fake-model), window %d (want 95000, 95%% of the configured 100000)", m.Model, m.Window)
	}
	if d := session.Assess(s, 1, time.Now()); d.Action != session.ActionResume {
		t.Errorf("decision %s (%s), want %s", d.Action, d.Reason, session.ActionResume)
	}
}

// started is a client running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// start starts a client in the repository, killed if it outlives two
// minutes or the test.
func (r *clientRepo) start(env []string, bin string, args ...string) *started {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s := &started{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan error, 1)}
	s.cmd.Dir, s.cmd.Env = r.Dir, append(append([]string(nil), r.env...), env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		cancel()
		r.t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait(); cancel() }()
	r.t.Cleanup(func() { cancel(); <-s.done; s.done <- nil })
	return s
}

// wait waits for the client's end.
func (s *started) wait() error {
	err := <-s.done
	s.done <- err
	return err
}

// sessionsJSON is `m1nd sessions --json [--all]`.
type sessionsJSON struct {
	OK       bool `json:"ok"`
	Sessions []struct {
		session.Listed
		Waiting int              `json:"waiting"`
		Refresh session.Decision `json:"refresh"`
	} `json:"sessions"`
}

func (r *clientRepo) sessions(args ...string) sessionsJSON {
	r.t.Helper()
	out := r.m1nd(append([]string{"sessions", "--json"}, args...)...)
	var got sessionsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || !got.OK {
		r.t.Fatalf("m1nd sessions --json: %v\n%s", err, out)
	}
	return got
}

// TestSessionsClaudeAndCodexLive: a Claude session (agent bob) and a
// Codex session (agent alice) in one repository, each held by its model
// server mid-turn (after a tool call, its second request unanswered):
// `m1nd sessions` lists both live and mid-turn, the decider keeping them;
// once released and ended, none is live and --all lists both dead.
func TestSessionsClaudeAndCodexLive(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	r.m1nd("hook", "install", "codex")
	claude := clientBin(t, "claude", claudeVersion)
	codex := clientBin(t, "codex", codexVersion)
	srvC := fakemodel.Start(t, fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}), fakemodel.Text("Claude done."))
	srvX := fakemodel.Start(t, fakemodel.Tool("exec_command", map[string]any{"cmd": "echo first"}), fakemodel.Text("Codex done."))
	holdC, holdX := srvC.Hold(2), srvX.Hold(2)
	home := r.codexHome(srvX, "")
	r.trustCodexHooks(codex, home)

	began := time.Now()
	c := r.start(r.claudeEnv(srvC), claude, append([]string{"-p", "do the task"}, claudeFlags...)...)
	x := r.start(append(r.codexEnv(home), "M1ND_AGENT=alice"), codex, "exec", "--sandbox", "danger-full-access", "do the task")
	for name, h := range map[string]*fakemodel.Hold{"claude": holdC, "codex": holdX} {
		select {
		case <-h.Reached():
		case <-time.After(60 * time.Second):
			t.Fatalf("%s never made its second request\nclaude: %s\ncodex: %s\n%s\n%s", name, c.stderr.String(), x.stderr.String(), srvC.Log(), srvX.Log())
		}
	}
	t.Logf("both held mid-turn after %s", time.Since(began).Round(time.Millisecond))

	// The last hook before the second request: Claude Code 2.1.332 fires
	// PostToolBatch after PostToolUse, Codex 0.171.0 PostToolUse alone.
	lastBeforeTurn2 := map[string]string{session.HostClaude: session.EventPostToolBatch, session.HostCodex: session.EventPostToolUse}
	live := r.sessions()
	want := map[string]string{session.HostClaude: "bob", session.HostCodex: "alice"}
	if len(live.Sessions) != 2 {
		t.Fatalf("m1nd sessions lists %d live sessions, want 2: %+v", len(live.Sessions), live.Sessions)
	}
	for _, s := range live.Sessions {
		if want[s.Client] != s.Agent || !s.Live || s.State != session.StateMidTurn || s.LastEvent != lastBeforeTurn2[s.Client] ||
			s.Refresh.Action != session.ActionKeep || s.Refresh.Inputs.Requests != 1 {
			t.Errorf("live session: %+v", s)
		}
		delete(want, s.Client)
	}
	t.Logf("m1nd sessions, both held mid-turn:\n%s", r.m1nd("sessions"))

	holdC.Release()
	holdX.Release()
	if err := c.wait(); err != nil || !strings.Contains(c.stdout.String(), "Claude done.") {
		t.Errorf("claude -p: %v\nstdout: %s\nstderr: %s", err, c.stdout.String(), c.stderr.String())
	}
	if err := x.wait(); err != nil || !strings.Contains(x.stdout.String(), "Codex done.") {
		t.Errorf("codex exec: %v\nstdout: %s\nstderr: %s", err, x.stdout.String(), x.stderr.String())
	}
	if got := r.sessions(); len(got.Sessions) != 0 {
		t.Errorf("live sessions after both ended: %+v", got.Sessions)
	}
	all := r.sessions("--all")
	if len(all.Sessions) != 2 {
		t.Fatalf("m1nd sessions --all lists %d, want 2: %+v", len(all.Sessions), all.Sessions)
	}
	for _, s := range all.Sessions {
		if s.Live || s.State != session.StateIdle || s.Refresh.Inputs.Requests != 2 {
			t.Errorf("ended session: %+v", s)
		}
	}
}
