package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// The refresh decider's triggers for a kept session, against the real
// clients (DESIGN §11; research §1.4, §1.5, §2.5): the idle end, the warm
// resume, the flush near the cap reaching a session mid-turn, and a
// change of the session's system-prompt inputs. Each is seen in the
// keeper's journal and in the requests the fake model received.

// keptClient is one client as a kept session runs it.
type keptClient struct {
	name    string
	stream  []string // the pin's stream command
	env     []string // runnerd's environment for it
	shell   func(cmd string) fakemodel.Reply
	prompts string // the instruction file it reads in the session's folder
}

// keptClients are Claude Code and Codex, each with its own repository and
// fake model (a test pushes the replies it scripts).
func keptClients() map[string]func(t *testing.T) (*clientRepo, *fakemodel.Server, keptClient) {
	return map[string]func(t *testing.T) (*clientRepo, *fakemodel.Server, keptClient){
		"claude": func(t *testing.T) (*clientRepo, *fakemodel.Server, keptClient) {
			r := newClientRepo(t, "claude")
			bin := clientBin(t, "claude", claudeVersion)
			shell := func(cmd string) fakemodel.Reply {
				return fakemodel.Tool("Bash", map[string]any{"command": cmd, "description": "m1nd test", "timeout": 120000})
			}
			srv := fakemodel.Start(t)
			return r, srv, keptClient{name: "claude", stream: claudeStream(bin), env: r.claudeEnv(srv), shell: shell, prompts: "CLAUDE.md"}
		},
		"codex": func(t *testing.T) (*clientRepo, *fakemodel.Server, keptClient) {
			r := newClientRepo(t, "codex")
			bin := clientBin(t, "codex", codexVersion)
			// A login shell's profile resets PATH: m1nd by its path.
			shell := func(cmd string) fakemodel.Reply {
				cmd = strings.ReplaceAll(cmd, "m1nd ", m1ndBin(t)+" ")
				return fakemodel.Tool("exec_command", map[string]any{"cmd": cmd, "yield_time_ms": 120000})
			}
			srv := fakemodel.Start(t)
			home := r.codexHome(srv, "")
			r.trustCodexHooks(bin, home)
			stream := []string{bin, "app-server", "-c", `sandbox_mode="danger-full-access"`}
			return r, srv, keptClient{name: "codex", stream: stream, env: r.codexEnv(home), shell: shell, prompts: "AGENTS.md"}
		},
	}
}

func (c keptClient) pins(extra string) string {
	return fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = %q\nstream = %s\n%s", c.name, tomlStrings(c.stream...), extra)
}

// requestsWith are the model turns whose request holds mark.
func requestsWith(srv *fakemodel.Server, mark string) []fakemodel.Request {
	var out []fakemodel.Request
	for _, q := range srv.Turns() {
		if bytes.Contains(q.Body, []byte(mark)) {
			out = append(out, q)
		}
	}
	return out
}

// TestKeptSessionEndsIdle: with floor 0 a kept session outlives its
// answer while its cache is warm (a second letter goes into the same
// conversation) and ends at its idle deadline: the last request's cache
// life (300 s) less cache_margin_secs (285 here), journalled with the
// decision.
func TestKeptSessionEndsIdle(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	for name, setup := range keptClients() {
		t.Run(name, func(t *testing.T) {
			r, srv, c := setup(t)
			const one, two = "IDLE-ONE: the build is red", "IDLE-TWO: and the docs are stale"
			r.sendLetter(one)
			log := r.runnerd(c.pins("floor = 0\ncache_margin_secs = 285\n"), c.env)
			first := r.awaitEvent("turn_ended", 1, log, srv)[0]
			time.Sleep(2 * time.Second)
			r.sendLetter(two)
			second := r.awaitEvent("turn_ended", 2, log, srv)[1]
			if second.SessionID != first.SessionID || len(r.awaitEvent("woke", 1, log, srv)) != 1 {
				t.Fatalf("the second letter did not go into the kept session: %+v", r.journal())
			}
			if holding := requestsWith(srv, two); len(holding) == 0 || !bytes.Contains(holding[0].Body, []byte(one)) {
				t.Fatalf("the second letter's request does not carry the first turn:\n%s", srv.Log())
			}
			ended := r.awaitEvent("ended", 1, log, srv)[0]
			d := ended.Decision
			if d == nil || d.Action != session.ActionEnd || d.Inputs.CacheTTL != 300 || !d.CacheDeadline.Equal(d.Inputs.Last.Add(15*time.Second)) {
				t.Fatalf("ended without the idle decision: %+v\ndecision %+v\nrunnerd:\n%s", ended, d, log.String())
			}
			if ended.At.Before(d.CacheDeadline) || ended.At.Sub(d.CacheDeadline) > 5*time.Second || !strings.HasPrefix(ended.Note, "idle end: nothing waits, floor is 0, and the cache went cold at ") {
				t.Errorf("ended at %s, the deadline %s: %q", ended.At, d.CacheDeadline, ended.Note)
			}
			r.wantAllRead("letters still unread")
		})
	}
}

// TestKeptSessionResumesWarm: runnerd stops while bob's kept session is
// idle and warm; the next runnerd, for the next letter, resumes that
// session (Claude Code --resume, Codex thread/resume) instead of starting
// afresh: the request holding the new letter shows the earlier turn.
func TestKeptSessionResumesWarm(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	for name, setup := range keptClients() {
		t.Run(name, func(t *testing.T) {
			r, srv, c := setup(t)
			const one, two = "WARM-ONE: the build is red", "WARM-TWO: and the docs are stale"
			r.sendLetter(one)
			r.writePins(c.pins("floor = 0\n"))
			log, stop := r.startRunnerd(c.env)
			first := r.awaitEvent("turn_ended", 1, log, srv)[0]
			time.Sleep(500 * time.Millisecond)
			stop()
			ended := r.awaitEvent("ended", 1, log, srv)[0]
			if ended.Note != "runnerd stopped" {
				t.Fatalf("ended: %+v", ended)
			}
			log2, _ := r.startRunnerd(c.env)
			r.sendLetter(two)
			woke := r.awaitEvent("woke", 2, log2, srv)[1]
			if woke.How != "stream-resume" || woke.SessionID != first.SessionID || woke.Decision == nil || woke.Decision.Action != session.ActionResume {
				t.Fatalf("woke: %+v\nrunnerd:\n%s", woke, log2.String())
			}
			second := r.awaitEvent("turn_ended", 2, log2, srv)[1]
			if second.Exit != 0 || second.SessionID != first.SessionID {
				t.Fatalf("the resumed turn: %+v, want session %s", second, first.SessionID)
			}
			holding := requestsWith(srv, two)
			if len(holding) == 0 || !bytes.Contains(holding[0].Body, []byte(one)) {
				t.Fatalf("the resumed request does not show the earlier turn:\n%s", srv.Log())
			}
			if c := bytes.Count(holding[0].Body, []byte(two)); c != 1 {
				t.Errorf("the resumed request holds the new letter %d times", c)
			}
			r.wantAllRead("letters still unread")
		})
	}
}

// TestKeptSessionFlushesMidTurnNearItsCap: bob's kept session is still
// in its turn (a tool call that waits) when the rotation comes (timeout
// 40 s: at 30 s); the keeper asks for the flush through the hooks, the
// next request after that tool call carries the ask, the agent writes its
// memory in the same turn, and the session ends when the turn does:
// no flush turn, no cut. The floor's fresh session starts from that
// memory.
func TestKeptSessionFlushesMidTurnNearItsCap(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	const memo = "MIDTURN-MEMO: the tray listens on 7420"
	for name, setup := range keptClients() {
		t.Run(name, func(t *testing.T) {
			r, srv, c := setupMidTurn(t, setup, memo)
			log := r.runnerd(c.pins("floor = 1\ntimeout_secs = 40\n"), c.env)
			asked := r.awaitEvent("flush_asked", 1, log, srv)[0]
			if !strings.HasPrefix(asked.Note, "rotation: the session is ") || asked.Error != "" {
				t.Fatalf("flush_asked: %+v", asked)
			}
			ended := r.awaitEvent("ended", 1, log, srv)[0]
			if !strings.HasSuffix(ended.Note, "(the flush reached it mid-turn)") || !strings.HasPrefix(ended.Note, "refreshed: rotation") || ended.Exit != 0 {
				t.Fatalf("ended: %+v\nrunnerd:\n%s\nserver:\n%s", ended, log.String(), srv.Log())
			}
			for _, w := range r.journal() {
				if w.Event == "flush" {
					t.Errorf("a flush turn after the flush went in mid-turn: %+v", w)
				}
			}
			ask := requestsWith(srv, "this session ends after this turn (rotation: ")
			if len(ask) == 0 {
				t.Fatalf("no request carried the flush ask:\n%s", srv.Log())
			}
			if out := r.m1nd("memory", "recall", "--agent", "bob", "--query", "tray"); !strings.Contains(out, memo) {
				t.Fatalf("the flush wrote no memory:\n%s\nserver:\n%s", out, srv.Log())
			}
			r.awaitEvent("woke", 2, log, srv)
			r.awaitEvent("turn_ended", 2, log, srv)
			fresh := requestsWith(srv, "kept session: nothing waits for you now")
			if last := fresh[len(fresh)-1].Body; len(fresh) < 2 || !bytes.Contains(last, []byte(memo)) || bytes.Contains(last, []byte("until grep")) {
				t.Fatalf("the fresh session's first request lacks the flushed memory:\n%s", srv.Log())
			}
		})
	}
}

// setupMidTurn scripts the mid-turn flush: the floor's first turn runs a
// tool call that waits for the keeper's flush_asked line, then, its ask
// carried by the hook after that call, writes the memo and finishes.
func setupMidTurn(t *testing.T, setup func(t *testing.T) (*clientRepo, *fakemodel.Server, keptClient), memo string) (*clientRepo, *fakemodel.Server, keptClient) {
	t.Helper()
	// The journal's path is only known with the repository: the replies
	// are pushed once it is.
	r, srv, c := setup(t)
	journal := runners.JournalPath(filepath.Join(r.Dir, ".git", "m1nd"))
	srv.Push(
		c.shell(fmt.Sprintf("until grep -q flush_asked %s; do sleep 0.2; done; echo asked", journal)),
		c.shell("m1nd memory add --sort learned '"+memo+"'"),
		fakemodel.Text("done"),
	)
	return r, srv, c
}

// TestKeptSessionRefreshesOnInputChange: the instructions file the client
// reads (CLAUDE.md, AGENTS.md) is edited while bob's kept session idles;
// at the next letter the keeper refreshes it (a flush turn naming the
// change, a graceful end) and the fresh session's request shows the new
// instructions, which the old session never did.
func TestKeptSessionRefreshesOnInputChange(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	const mark = "INPUT-MARK: answer in French"
	for name, setup := range keptClients() {
		t.Run(name, func(t *testing.T) {
			r, srv, c := setup(t)
			log := r.runnerd(c.pins("floor = 1\n"), c.env)
			r.awaitEvent("turn_ended", 1, log, srv)
			before := len(srv.Turns())
			if err := os.WriteFile(filepath.Join(r.Dir, c.prompts), []byte(mark+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.sendLetter("INPUT-LETTER: a new job")
			flush := r.awaitEvent("flush", 1, log, srv)[0]
			if flush.Note != "system-prompt inputs changed: "+c.prompts {
				t.Fatalf("flush: %+v", flush)
			}
			ended := r.awaitEvent("ended", 1, log, srv)[0]
			if ended.Note != "refreshed: system-prompt inputs changed: "+c.prompts {
				t.Fatalf("ended: %+v", ended)
			}
			woke := r.awaitEvent("woke", 2, log, srv)[1]
			if woke.How != "stream" {
				t.Errorf("the refreshed session was resumed: %+v", woke)
			}
			r.awaitEvent("turn_ended", 2, log, srv) // the fresh session's first (the flush turn journals flushed)
			turns := srv.Turns()
			for _, q := range turns[:before] {
				if bytes.Contains(q.Body, []byte(mark)) {
					t.Fatalf("the old session's first request already held the new instructions (turn %d)", q.N)
				}
			}
			if last := turns[len(turns)-1]; !bytes.Contains(last.Body, []byte(mark)) {
				t.Fatalf("the fresh session's request lacks the new instructions:\n%s", clip(last.Body))
			}
		})
	}
}
