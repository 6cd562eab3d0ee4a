package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/runnerd"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// The session keeper (runnerd's [[keeper]]) against the real clients: a
// letter for an agent with no live session resumes its last one.

// wantAllRead fails the test, saying what, unless bob has no unread
// letter.
func (r *clientRepo) wantAllRead(what string) {
	r.t.Helper()
	if out := r.m1nd("mail", "inbox", "--agent", "bob", "--unread"); !strings.Contains(out, " 0 unread") {
		r.t.Errorf("%s:\n%s", what, out)
	}
}

// sendLetter sends bob a letter from alice and returns its id.
func (r *clientRepo) sendLetter(text string) string {
	r.t.Helper()
	var sent struct {
		ID string `json:"id"`
	}
	out := r.m1nd("mail", "send", "--to", "bob", "--agent", "alice", "--what", text, "--json")
	if err := json.Unmarshal([]byte(out), &sent); err != nil || sent.ID == "" {
		r.t.Fatalf("mail send --json: %v\n%s", err, out)
	}
	return sent.ID
}

// syncBuffer is a bytes.Buffer a child process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runnerd starts `m1nd runnerd` in the repository with keeper pins
// (runners.toml) and env added to the repository's: the keeper hands its
// own environment to the clients it starts. It is stopped (SIGINT, then
// waited for) when the test ends; its log is the returned buffer.
func (r *clientRepo) runnerd(pins string, env []string) *syncBuffer {
	r.t.Helper()
	r.writePins(pins)
	log, _ := r.startRunnerd(env)
	return log
}

// writePins inits the brain and writes runnerd's configuration.
func (r *clientRepo) writePins(pins string) {
	r.t.Helper()
	r.m1nd("init")
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "m1nd", runners.ConfigFile), []byte(pins), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// startRunnerd starts `m1nd runnerd` with the pins already written; stop
// stops it (SIGINT, then waited for; once), as the test's end does.
func (r *clientRepo) startRunnerd(env []string) (log *syncBuffer, stop func()) {
	r.t.Helper()
	cmd := exec.Command(m1ndBin(r.t), "runnerd", "--addr", "127.0.0.1:0")
	cmd.Dir, cmd.Env = r.Dir, append(append([]string(nil), r.env...), env...)
	log = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				r.t.Errorf("runnerd did not stop on SIGINT:\n%s", log.String())
			}
		})
	}
	r.t.Cleanup(stop)
	return log, stop
}

// journal is the keeper's journal so far.
func (r *clientRepo) journal() []runners.Wake {
	data, _ := os.ReadFile(runners.JournalPath(filepath.Join(r.Dir, ".git", "m1nd")))
	var out []runners.Wake
	for _, line := range strings.Split(string(data), "\n") {
		var w runners.Wake
		if json.Unmarshal([]byte(line), &w) == nil {
			out = append(out, w)
		}
	}
	return out
}

// awaitJournal waits until the journal holds n lines.
func (r *clientRepo) awaitJournal(n int, log *syncBuffer) []runners.Wake {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := r.journal()
		if len(j) >= n {
			return j
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the keeper's journal has %d lines, want %d: %+v\nrunnerd:\n%s", len(j), n, j, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tomlStrings is argv as a TOML array of basic strings.
func tomlStrings(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		b, _ := json.Marshal(a)
		q[i] = string(b)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// keeperResumes: bob's first session (run) ended; a letter comes for
// him; runnerd's keeper, pinned with start and resume, resumes that
// session with a wake naming the letter, because the decider, reading the
// transcript, finds its cache warm. The resumed request carries the first
// conversation and the wake; the letter, put in by bob's hooks, reaches
// the model exactly once; later ticks do not wake bob again. The woken
// client's output (its log) must contain done.
func keeperResumes(t *testing.T, r *clientRepo, srv *fakemodel.Server, run func(prompt string), client string, start, resume, env []string, done string) {
	t.Helper()
	run("do the first task")
	first := r.onlySession()
	id := r.sendLetter(letterMark)

	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = %q\nstart = %s\nresume = %s\ntimeout_secs = 120\n",
		client, tomlStrings(start...), tomlStrings(resume...))
	began := time.Now()
	log := r.runnerd(pins, env)
	j := r.awaitJournal(2, log)
	t.Logf("woke and exited in %s", time.Since(began).Round(time.Millisecond))
	woke, exited := j[0], j[1]
	if woke.Event != "woke" || woke.How != "resume" || woke.SessionID != first.SessionID ||
		len(woke.Items) != 1 || woke.Items[0] != "letter:"+id {
		t.Errorf("woke: %+v, want a resume of %s for letter:%s", woke, first.SessionID, id)
	}
	if woke.Decision == nil || woke.Decision.Action != session.ActionResume || woke.Decision.Inputs.Requests != 1 {
		t.Errorf("woke's decision: %+v, want %s on the 1 measured request", woke.Decision, session.ActionResume)
	}
	logText, _ := os.ReadFile(exited.Log)
	if exited.Event != "exited" || exited.Exit != 0 || exited.SessionID != first.SessionID || !bytes.Contains(logText, []byte(done)) {
		t.Errorf("exited: %+v\nclient log: %s", exited, logText)
	}

	turns := srv.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d model turns, want 2 (the first session, the resumed one):\n%s", len(turns), srv.Log())
	}
	resumed := turns[1].Body
	wake := "m1nd: work waits for bob: 1 letter (" + id + ")"
	for _, want := range []string{"do the first task", "First answer.", wake} {
		if !bytes.Contains(resumed, []byte(want)) {
			t.Errorf("the resumed request lacks %q:\n%s", want, clip(resumed))
		}
	}
	n := 0
	for _, q := range srv.Requests() {
		n += bytes.Count(q.Body, []byte(letterMark))
	}
	if i := bytes.Index(resumed, []byte(letterMark)); n != 1 || i < 0 {
		t.Errorf("the letter reached the model %d times, want 1, in the resumed turn:\n%s", n, srv.Log())
	} else {
		t.Logf("the letter in the resumed turn: …%s…", resumed[max(i-300, 0):i+len(letterMark)])
	}
	// The same session, resumed: the registry holds it alone, dead again.
	if s := r.onlySession(); s.SessionID != first.SessionID || s.Live {
		t.Errorf("registry after the wake: %+v", s)
	}

	// The keeper ticks every 2 s: two more ticks wake nobody.
	time.Sleep(2*runnerd.KeeperInterval + 500*time.Millisecond)
	if j := r.journal(); len(j) != 2 {
		t.Errorf("the keeper woke bob again: %+v", j[2:])
	}
	if n := len(srv.Turns()); n != 2 {
		t.Errorf("%d model turns after more ticks, want 2", n)
	}
}

func TestClaudeKeeperResumes(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	bin := clientBin(t, "claude", claudeVersion)
	srv := fakemodel.Start(t, fakemodel.Text("First answer."), fakemodel.Text("Woken and done."))
	run := func(prompt string) {
		if res, stderr, err := r.claude(srv, prompt); err != nil || res.IsError {
			t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
		}
	}
	keeperResumes(t, r, srv, run, session.HostClaude,
		append([]string{bin, "-p", "{wake}"}, claudeFlags...),
		append([]string{bin, "--resume", "{session_id}", "-p", "{wake}"}, claudeFlags...),
		r.claudeEnv(srv), `"result":"Woken and done."`)
}

// Codex resumes with `codex exec resume <id> <prompt>`; exec's own flags
// go before resume.
func TestCodexKeeperResumes(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	srv := fakemodel.Start(t, fakemodel.Text("First answer."), fakemodel.Text("Woken and done."))
	run := func(prompt string) {
		if stdout, stderr, err := r.codex(srv, "", prompt); err != nil || !strings.Contains(stdout, "First answer.") {
			t.Fatalf("codex exec: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
		}
	}
	exec := []string{bin, "exec", "--sandbox", "danger-full-access"}
	keeperResumes(t, r, srv, run, session.HostCodex,
		append(exec[:4:4], "{wake}"),
		append(exec[:4:4], "resume", "{session_id}", "{wake}"),
		r.codexEnv(filepath.Join(r.home, ".codex")), "Woken and done.")
}

// keeperRetriesAFailedTurn: a letter waits for bob; the keeper starts a
// session whose first model call fails (a model error the client does not
// retry, or a hang past timeout_secs), so the turn that was given the
// letter never answers it. The keeper journals the failure, gives the
// letter back and wakes bob again after its backoff; that session's
// request carries the letter exactly once, and it ends the work: no third
// wake.
func keeperRetriesAFailedTurn(t *testing.T, r *clientRepo, srv *fakemodel.Server, client string, start, env []string, timeout int) {
	t.Helper()
	id := r.sendLetter(letterMark)
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = %q\nstart = %s\ntimeout_secs = %d\nbackoff_secs = 1\n", client, tomlStrings(start...), timeout)
	log := r.runnerd(pins, env)
	j := r.awaitJournal(4, log)
	if j[0].Event != "woke" || j[1].Event != "failed" && (j[1].Event != "exited" || len(j[1].Waiting) != 1) || j[2].Event != "woke" || j[3].Event != "exited" || len(j[3].Waiting) != 0 {
		t.Fatalf("journal: %+v\nrunnerd:\n%s\nserver:\n%s", j, log.String(), srv.Log())
	}
	if len(j[1].Again) != 1 || j[1].Again[0] != "letter:"+id || j[1].Next == nil {
		t.Errorf("the failed wake's end: %+v, want letter:%s given back and a next wake", j[1], id)
	}
	if !strings.Contains(j[2].Items[0], id) {
		t.Errorf("the second wake was not for the letter: %+v", j[2])
	}
	turns := srv.Turns()
	if len(turns) < 2 {
		t.Fatalf("%d model turns, want the failed one and the next:\n%s", len(turns), srv.Log())
	}
	last := turns[len(turns)-1].Body
	if n := bytes.Count(last, []byte(letterMark)); n != 1 {
		t.Errorf("the second wake's request carries the letter %d times, want 1:\n%s", n, clip(last))
	}
	if !bytes.Contains(turns[0].Body, []byte(letterMark)) {
		t.Errorf("the failed turn was never given the letter:\n%s", clip(turns[0].Body))
	}
	time.Sleep(2*runnerd.KeeperInterval + 500*time.Millisecond)
	if j := r.journal(); len(j) != 4 {
		t.Errorf("the keeper woke bob again after the work was done: %+v", j[4:])
	}
}

func TestClaudeKeeperRetriesAFailedTurn(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	for _, tc := range []struct {
		name    string
		first   fakemodel.Reply
		hang    bool
		timeout int
	}{
		{"a model error", fakemodel.Error(500), false, 120},
		{"a hang", fakemodel.Text("never sent"), true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newClientRepo(t, "claude")
			bin := clientBin(t, "claude", claudeVersion)
			srv := fakemodel.Start(t, tc.first, fakemodel.Text("Read it, done."))
			if tc.hang {
				h := srv.Hold(1)
				t.Cleanup(h.Release)
			}
			// Claude Code retries a failed model call ten times by itself; a
			// model that keeps failing ends the turn the same way, later.
			env := append(r.claudeEnv(srv), "CLAUDE_CODE_MAX_RETRIES=0")
			keeperRetriesAFailedTurn(t, r, srv, session.HostClaude, append([]string{bin, "-p", "{wake}"}, claudeFlags...), env, tc.timeout)
		})
	}
}

func TestCodexKeeperRetriesAFailedTurn(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	for _, tc := range []struct {
		name    string
		first   fakemodel.Reply
		hang    bool
		timeout int
	}{
		{"a model error", fakemodel.Error(400), false, 120},
		{"a hang", fakemodel.Text("never sent"), true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newClientRepo(t, "codex")
			bin := clientBin(t, "codex", codexVersion)
			srv := fakemodel.Start(t, tc.first, fakemodel.Text("Read it, done."))
			if tc.hang {
				h := srv.Hold(1)
				t.Cleanup(h.Release)
			}
			home := r.codexHome(srv, "")
			r.trustCodexHooks(bin, home)
			keeperRetriesAFailedTurn(t, r, srv, session.HostCodex, []string{bin, "exec", "--sandbox", "danger-full-access", "{wake}"}, r.codexEnv(home), tc.timeout)
		})
	}
}

// TestCodexKeeperSeesUntrustedHooks: with m1nd's hooks untrusted, `codex
// exec` runs none of them and exits 0: the letter never reaches the model.
// The keeper journals that the woken session ran no hook, says how to fix
// it, and gives up at once (issue 38: another wake would run none either).
func TestCodexKeeperSeesUntrustedHooks(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	srv := fakemodel.Start(t)
	home := r.codexHome(srv, "") // the project trusted, m1nd's hooks not
	id := r.sendLetter(letterMark)
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = \"codex\"\nstart = %s\ntimeout_secs = 60\nbackoff_secs = 1\n",
		tomlStrings(bin, "exec", "--sandbox", "danger-full-access", "{wake}"))
	log := r.runnerd(pins, r.codexEnv(home))
	j := r.awaitJournal(3, log) // one wake, its end, and the give-up
	woke, ended := j[0], j[1]
	if woke.Event != "woke" || ended.Event != "exited" || ended.Exit != 0 || len(ended.Waiting) != 1 || ended.Waiting[0] != "letter:"+id ||
		!strings.Contains(ended.Note, "ran none of m1nd's hooks") || !strings.Contains(ended.Note, "Trusting m1nd's hooks in Codex") {
		t.Fatalf("the wake: %+v, ended %+v", woke, ended)
	}
	if g := j[2]; g.Event != "gave_up" || len(g.Items) != 1 || g.Items[0] != "letter:"+id || !strings.Contains(g.Note, "would not help") {
		t.Fatalf("the give-up: %+v", g)
	}
	time.Sleep(3 * time.Second) // past the backoff: no second wake comes
	if j := r.journal(); len(j) != 3 {
		t.Fatalf("the keeper went on after giving up: %+v", j[3:])
	}
	if !strings.Contains(log.String(), "ran none of m1nd's hooks") || !strings.Contains(log.String(), "gave up waking bob for letter:"+id) {
		t.Errorf("runnerd's log does not say so:\n%s", log.String())
	}
	for _, q := range srv.Requests() {
		if bytes.Contains(q.Body, []byte(letterMark)) {
			t.Fatalf("the letter reached the model through untrusted hooks")
		}
	}
}

// keeperDeliversABacklog: 13 letters wait; one session takes what its
// budget holds, and the keeper wakes bob again, at once, while the rest
// wait, until every letter has reached the model and nothing waits.
func keeperDeliversABacklog(t *testing.T, r *clientRepo, srv *fakemodel.Server, client string, start, env []string) {
	t.Helper()
	var marks []string
	for i := 0; i < 13; i++ {
		marks = append(marks, fmt.Sprintf("BACKLOG-%02d: look at item %d of the ledger", i, i))
		r.sendLetter(marks[i])
	}
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = %q\nstart = %s\ntimeout_secs = 120\nbackoff_secs = 1\n", client, tomlStrings(start...))
	log := r.runnerd(pins, env)
	deadline := time.Now().Add(90 * time.Second)
	for {
		j := r.journal()
		if n := len(j); n >= 2 && j[n-1].Event == "exited" && len(j[n-1].Waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backlog was not delivered: %+v\nrunnerd:\n%s", j, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	j := r.journal()
	wakes := 0
	for _, w := range j {
		if w.Event == "woke" {
			wakes++
		}
		if w.Event == "gave_up" {
			t.Errorf("gave up: %+v", w)
		}
	}
	t.Logf("13 letters over %d wakes", wakes)
	// The budget binds: the first request carries some of the letters, not
	// all (the rest come at the next tool call, a Stop's continuation, or
	// the next wake).
	first := srv.Turns()[0].Body
	carried := 0
	for _, mark := range marks {
		if bytes.Contains(first, []byte(mark)) {
			carried++
		}
	}
	if carried == 0 || carried == len(marks) {
		t.Errorf("the first request carries %d of the %d letters, want some", carried, len(marks))
	}
	for _, mark := range marks {
		if first, _ := firstTurnWith(srv, mark); first == 0 {
			t.Errorf("%q never reached the model", mark)
		}
	}
	r.wantAllRead("letters still unread")
}

func TestClaudeKeeperDeliversABacklog(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	bin := clientBin(t, "claude", claudeVersion)
	srv := fakemodel.Start(t)
	keeperDeliversABacklog(t, r, srv, session.HostClaude, append([]string{bin, "-p", "{wake}"}, claudeFlags...), r.claudeEnv(srv))
}

func TestCodexKeeperDeliversABacklog(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	srv := fakemodel.Start(t)
	home := r.codexHome(srv, "")
	r.trustCodexHooks(bin, home)
	keeperDeliversABacklog(t, r, srv, session.HostCodex, []string{bin, "exec", "--sandbox", "danger-full-access", "{wake}"}, r.codexEnv(home))
}

// awaitEvent waits up to a minute for n journal lines of event.
func (r *clientRepo) awaitEvent(event string, n int, log *syncBuffer, srv *fakemodel.Server) []runners.Wake {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var got []runners.Wake
		for _, w := range r.journal() {
			if w.Event == event {
				got = append(got, w)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the journal has %d %q lines, want %d: %+v\nrunnerd:\n%s\nserver:\n%s", len(got), event, n, r.journal(), log.String(), srv.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// claudeStream is a kept Claude Code session: turns in on stdin, a
// result line out at the end of each.
func claudeStream(bin string) []string {
	return []string{bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"}
}

// firstTurnWith is the number of the first model turn whose request
// holds mark (0: none), and how many requests hold it in all.
func firstTurnWith(srv *fakemodel.Server, mark string) (first, holding int) {
	for _, q := range srv.Turns() {
		if bytes.Contains(q.Body, []byte(mark)) {
			if first == 0 {
				first = q.N
			}
			holding++
		}
	}
	return first, holding
}

// TestClaudeKeeperKeepsAStreamingSession: pinned with stream and
// floor = 1, bob's session outlives its first answer, and a second letter
// goes into the same process as a second turn: one start, two turns, each
// letter entering the conversation once (by the hooks).
func TestClaudeKeeperKeepsAStreamingSession(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	bin := clientBin(t, "claude", claudeVersion)
	srv := fakemodel.Start(t)
	const one, two = "STREAM-ONE: the build is red", "STREAM-TWO: and the docs are stale"
	r.sendLetter(one)
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = \"claude\"\nstream = %s\nfloor = 1\ntimeout_secs = 600\n", tomlStrings(claudeStream(bin)...))
	log := r.runnerd(pins, r.claudeEnv(srv))
	r.awaitEvent("turn_ended", 1, log, srv)
	// After its first answer the session is still there, idle and live.
	time.Sleep(runnerd.KeeperInterval + 500*time.Millisecond)
	if s := r.onlySession(); !s.Live {
		t.Fatalf("the kept session died after its first answer: %+v\nrunnerd:\n%s", s, log.String())
	}
	r.sendLetter(two)
	ended := r.awaitEvent("turn_ended", 2, log, srv)
	if n := len(r.awaitEvent("woke", 1, log, srv)); n != 1 {
		t.Errorf("%d starts for two letters, want one kept session", n)
	}
	if ended[0].SessionID == "" || ended[1].SessionID != ended[0].SessionID {
		t.Errorf("the two turns ran in sessions %q and %q, want one", ended[0].SessionID, ended[1].SessionID)
	}
	f1, _ := firstTurnWith(srv, one)
	f2, _ := firstTurnWith(srv, two)
	if f1 == 0 || f2 <= f1 {
		t.Fatalf("letters first reached the model at turns %d and %d, want the second later:\n%s", f1, f2, srv.Log())
	}
	// Each letter entered once: the request that first holds it holds it
	// once (later ones carry it as history).
	for _, q := range srv.Turns() {
		if q.N == f2 {
			if c := bytes.Count(q.Body, []byte(two)); c != 1 {
				t.Errorf("turn %d holds the second letter %d times, want 1", q.N, c)
			}
		}
	}
	if s := r.onlySession(); !s.Live || s.SessionID != ended[0].SessionID {
		t.Errorf("registry after two turns: %+v", s)
	}
	r.wantAllRead("letters still unread")
	r.wantSpent(srv, ended, f2, true)
}

// wantSpent: each of a kept session's two ended turns journals what it
// cost as the client reported it (with a price when priced), the second
// turn m1nd wrote (the first request holding the second letter, f2) ends
// with the account of the first, and m1nd sessions sums both.
func (r *clientRepo) wantSpent(srv *fakemodel.Server, ended []runners.Wake, f2 int, priced bool) {
	r.t.Helper()
	for i, e := range ended[:2] {
		if e.Usage == nil || e.Usage.Input+e.Usage.CacheRead+e.Usage.CacheWrite == 0 || e.Usage.Output == 0 || (e.Usage.CostUSD != nil) != priced {
			r.t.Errorf("turn %d journals usage %+v", i+1, e.Usage)
		}
	}
	for _, q := range srv.Turns() {
		if q.N == f2 && !bytes.Contains(q.Body, []byte("m1nd: this session so far, as your client reports it: 1 turn: ")) {
			r.t.Errorf("the second turn m1nd wrote carries no account of the first:\n%s", clip(q.Body))
		}
	}
	var sessions struct {
		Keeper []runners.KeeperAgent `json:"keeper"`
	}
	if err := json.Unmarshal([]byte(r.m1nd("sessions", "--json")), &sessions); err != nil {
		r.t.Fatal(err)
	}
	if len(sessions.Keeper) != 1 || sessions.Keeper[0].Spent == nil || sessions.Keeper[0].Spent.Turns != 2 {
		r.t.Errorf("m1nd sessions shows spent %+v, want 2 turns", sessions.Keeper)
	}
}

// TestClaudeKeeperRotationFlushesMemory: a kept session nearing its
// timeout_secs is asked to flush at a turn boundary; its agent writes a
// memory (the memory ref moves); the session ends gracefully and the
// floor starts a fresh one, whose first request carries that memory.
func TestClaudeKeeperRotationFlushesMemory(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	bin := clientBin(t, "claude", claudeVersion)
	const memo = "ROTATION-MEMO: the tray listens on 7420"
	srv := fakemodel.Start(t,
		fakemodel.Text("Noted."), // the first turn: the letter
		fakemodel.Tool("Bash", map[string]any{"command": "m1nd memory add --sort learned '" + memo + "'", "description": "flush"}),
		fakemodel.Text("done"),
	)
	r.sendLetter("ROTATE-LETTER: remember the port")
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = \"claude\"\nstream = %s\nfloor = 1\ntimeout_secs = 12\n", tomlStrings(claudeStream(bin)...))
	log := r.runnerd(pins, r.claudeEnv(srv))
	r.awaitEvent("turn_ended", 1, log, srv)
	flush := r.awaitEvent("flush", 1, log, srv)[0]
	if !strings.Contains(flush.Note, "rotation") {
		t.Errorf("flush: %+v, want a rotation", flush)
	}
	r.awaitEvent("flushed", 1, log, srv)
	ended := r.awaitEvent("ended", 1, log, srv)[0]
	if !strings.HasPrefix(ended.Note, "refreshed: rotation") || ended.Exit != 0 {
		t.Errorf("ended: %+v, want a graceful end after the flush", ended)
	}
	if out := r.Git("-C", r.Dir, "for-each-ref", "--format=%(refname)", "refs/m1nd/memory/"); !strings.Contains(out, "refs/m1nd/memory/bob") {
		t.Errorf("the memory ref did not move: %q", out)
	}
	if out := r.m1nd("memory", "recall", "--agent", "bob", "--query", "tray"); !strings.Contains(out, memo) {
		t.Fatalf("the flush wrote no memory:\n%s\nserver:\n%s", out, srv.Log())
	}
	r.awaitEvent("woke", 2, log, srv)
	r.awaitEvent("turn_ended", 2, log, srv) // the fresh session's first turn
	var fresh *fakemodel.Request
	for _, q := range srv.Turns() {
		if q.N == 4 { // 1: the letter; 2, 3: the flush and its tool call
			fresh = &q
		}
	}
	if fresh == nil {
		t.Fatalf("no fourth model turn:\n%s", srv.Log())
	}
	if !bytes.Contains(fresh.Body, []byte(memo)) || bytes.Contains(fresh.Body, []byte("Noted.")) {
		t.Errorf("the fresh session's first request lacks the flushed memory, or carries the old conversation:\n%s", clip(fresh.Body))
	}
}

// TestCodexKeeperKeepsAStreamingSession: Codex's long-lived session is
// `codex app-server` (JSON-RPC on stdio: one thread, a turn/start per
// wake). Pinned with stream and floor = 1, bob's thread outlives its
// first answer and takes a second letter as a second turn, in the same
// process.
func TestCodexKeeperKeepsAStreamingSession(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	srv := fakemodel.Start(t)
	home := r.codexHome(srv, "")
	r.trustCodexHooks(bin, home)
	const one, two = "STREAM-ONE: the build is red", "STREAM-TWO: and the docs are stale"
	r.sendLetter(one)
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = \"codex\"\nstream = %s\nfloor = 1\ntimeout_secs = 600\n",
		tomlStrings(bin, "app-server", "-c", `sandbox_mode="danger-full-access"`))
	log := r.runnerd(pins, r.codexEnv(home))
	first := r.awaitEvent("turn_ended", 1, log, srv)[0]
	if first.Exit != 0 {
		t.Fatalf("the first turn failed: %+v\nserver:\n%s", first, srv.Log())
	}
	time.Sleep(runnerd.KeeperInterval + 500*time.Millisecond)
	r.sendLetter(two)
	ended := r.awaitEvent("turn_ended", 2, log, srv)
	if n := len(r.awaitEvent("woke", 1, log, srv)); n != 1 {
		t.Errorf("%d starts for two letters, want one kept session", n)
	}
	if ended[0].SessionID == "" || ended[1].SessionID != ended[0].SessionID {
		t.Errorf("the two turns ran in threads %q and %q, want one", ended[0].SessionID, ended[1].SessionID)
	}
	f1, _ := firstTurnWith(srv, one)
	f2, _ := firstTurnWith(srv, two)
	if f1 == 0 || f2 <= f1 {
		t.Fatalf("letters first reached the model at turns %d and %d, want the second later:\n%s", f1, f2, srv.Log())
	}
	r.wantAllRead("letters still unread")
	r.wantSpent(srv, ended, f2, false)
}

// TestCodexKeeperRotationFlushesMemory: the kept Codex thread nearing its
// timeout_secs is asked to flush; its agent writes a memory with a shell
// command; the app-server ends gracefully and the floor starts a fresh
// one, whose first request carries that memory.
func TestCodexKeeperRotationFlushesMemory(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	const memo = "ROTATION-MEMO: the tray listens on 7420"
	srv := fakemodel.Start(t,
		fakemodel.Text("Noted."),
		// bash -lc: a login shell's profile resets PATH, so m1nd by its path.
		fakemodel.Tool("exec_command", map[string]any{"cmd": m1ndBin(t) + " memory add --sort learned '" + memo + "'"}),
		fakemodel.Text("done"),
	)
	home := r.codexHome(srv, "")
	r.trustCodexHooks(bin, home)
	r.sendLetter("ROTATE-LETTER: remember the port")
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = \"codex\"\nstream = %s\nfloor = 1\ntimeout_secs = 12\n",
		tomlStrings(bin, "app-server", "-c", `sandbox_mode="danger-full-access"`))
	log := r.runnerd(pins, r.codexEnv(home))
	r.awaitEvent("turn_ended", 1, log, srv)
	r.awaitEvent("flushed", 1, log, srv)
	ended := r.awaitEvent("ended", 1, log, srv)[0]
	if !strings.HasPrefix(ended.Note, "refreshed: rotation") {
		t.Errorf("ended: %+v, want a graceful end after the flush", ended)
	}
	if out := r.m1nd("memory", "recall", "--agent", "bob", "--query", "tray"); !strings.Contains(out, memo) {
		session, _ := os.ReadFile(ended.Log)
		t.Fatalf("the flush wrote no memory:\n%s\nthe session's log:\n%s\nserver:\n%s", out, session, srv.Log())
	}
	r.awaitEvent("woke", 2, log, srv)
	r.awaitEvent("turn_ended", 2, log, srv)
	var fresh *fakemodel.Request
	for _, q := range srv.Turns() {
		if q.N == 4 {
			fresh = &q
		}
	}
	if fresh == nil || !bytes.Contains(fresh.Body, []byte(memo)) || bytes.Contains(fresh.Body, []byte("Noted.")) {
		t.Fatalf("the fresh thread's first request lacks the flushed memory, or carries the old one:\n%s", srv.Log())
	}
}
