package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// TestClaudeFailedTurnGivesTheLetterBack (issue 38): a letter that lands
// mid-turn reaches the model through a tool's PostToolUse; Claude Code
// then runs the batch's PostToolBatch before the request that carries it.
// That request fails — a 500, a 529, the client killed while it waits —
// so the model never answered it: the letter stays in flight, and the
// next session's first request carries it, once; a third session does
// not (the second answered it).
func TestClaudeFailedTurnGivesTheLetterBack(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	bin := clientBin(t, "claude", claudeVersion)
	for _, tc := range []struct {
		name   string
		second fakemodel.Reply // the reply to the request that carries the letter
		kill   bool            // the client is killed while that request waits
	}{
		{"a 500", fakemodel.Error(500), false},
		{"a 529", fakemodel.Error(529), false},
		{"the client killed", fakemodel.Text("never sent"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newClientRepo(t, "claude")
			srv := fakemodel.Start(t,
				fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
				tc.second,
				fakemodel.Text("Read it, done."),
				fakemodel.Text("Nothing new."))
			r.sendDuringTurn(srv, 1, letterMark)
			// Claude Code retries a failed model call by itself; none here,
			// so the turn fails at the first error.
			env := append(r.claudeEnv(srv), "CLAUDE_CODE_MAX_RETRIES=0")
			args := append([]string{"-p", "do the task"}, claudeFlags...)
			if tc.kill {
				h := srv.Hold(2)
				c := r.start(env, bin, args...)
				<-h.Reached()
				c.cmd.Process.Kill()
				c.wait()
				h.Release()
			} else if out, stderr, err := r.run(env, bin, args...); err == nil && !strings.Contains(out, `"is_error":true`) {
				t.Fatalf("the turn did not fail: %s\nstderr: %s\nserver:\n%s", out, stderr, srv.Log())
			}
			turns := srv.Turns()
			if len(turns) != 2 || bytes.Count(turns[1].Body, []byte(letterMark)) != 1 {
				t.Fatalf("want the failed request to carry the letter once:\n%s", srv.Log())
			}
			var fates struct {
				Delivery []struct {
					Agent string            `json:"agent"`
					Turns []json.RawMessage `json:"in_turn"`
					Again []json.RawMessage `json:"again"`
				} `json:"delivery"`
			}
			if err := json.Unmarshal([]byte(r.m1nd("mail", "fates", "--json")), &fates); err != nil {
				t.Fatal(err)
			}
			if len(fates.Delivery) != 1 || len(fates.Delivery[0].Turns)+len(fates.Delivery[0].Again) != 1 {
				t.Fatalf("the letter of the failed turn is not in flight: %+v", fates)
			}

			// The next session gets it back, once.
			if res, stderr, err := r.claude(srv, "go on"); err != nil || res.IsError {
				t.Fatalf("the next session: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
			}
			turns = srv.Turns()
			if n := bytes.Count(turns[2].Body, []byte(letterMark)); n != 1 {
				t.Fatalf("the next session's first request carries the letter %d times, want 1:\n%s", n, clip(turns[2].Body))
			}
			// It answered: a third session does not see it again.
			if res, stderr, err := r.claude(srv, "anything else?"); err != nil || res.IsError {
				t.Fatalf("the third session: %v %+v\nstderr: %s", err, res, stderr)
			}
			turns = srv.Turns()
			if bytes.Contains(turns[len(turns)-1].Body, []byte(letterMark)) {
				t.Fatalf("the answered letter came again:\n%s", clip(turns[len(turns)-1].Body))
			}
		})
	}
}

// TestCodexFailedTurnGivesTheLetterBack: Codex hands a PostToolUse's
// letter to the next request at once (it has no batch hook); that request
// fails (a 400, which Codex does not retry), so nothing answered the
// letter: the next session's first request carries it, once.
func TestCodexFailedTurnGivesTheLetterBack(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	srv := fakemodel.Start(t,
		fakemodel.Tool("exec_command", map[string]any{"cmd": "echo first"}),
		fakemodel.Error(400),
		fakemodel.Text("Read it, done."))
	r.sendDuringTurn(srv, 1, letterMark)
	if stdout, stderr, err := r.codex(srv, "", "do the task"); err == nil {
		t.Fatalf("the turn did not fail:\nstdout: %s\nstderr: %s\nserver:\n%s", stdout, stderr, srv.Log())
	}
	turns := srv.Turns()
	if len(turns) != 2 || bytes.Count(turns[1].Body, []byte(letterMark)) != 1 {
		t.Fatalf("want the failed request to carry the letter once:\n%s", srv.Log())
	}
	if stdout, stderr, err := r.codex(srv, "", "go on"); err != nil || !strings.Contains(stdout, "Read it, done.") {
		t.Fatalf("the next session: %v\nstdout: %s\nstderr: %s\nserver:\n%s", err, stdout, stderr, srv.Log())
	}
	turns = srv.Turns()
	if n := bytes.Count(turns[2].Body, []byte(letterMark)); n != 1 {
		t.Fatalf("the next session's first request carries the letter %d times, want 1:\n%s", n, clip(turns[2].Body))
	}
}

// keptRetryCarriesOnce: a kept session's turn that carries a letter fails
// (the model answers an error the client does not retry); the client
// keeps the failed turn in its conversation, so the keeper's next turn
// names the letter instead of carrying it again: the retry's request
// holds the letter once, then the letter is read.
func keptRetryCarriesOnce(t *testing.T, r *clientRepo, srv *fakemodel.Server, client string, stream []string, env []string) {
	t.Helper()
	id := r.sendLetter(letterMark)
	pins := fmt.Sprintf("[[keeper]]\nagent = \"bob\"\nclient = %q\nstream = %s\nfloor = 1\ntimeout_secs = 600\nbackoff_secs = 1\n", client, tomlStrings(stream...))
	log := r.runnerd(pins, env)
	failed := r.awaitEvent("turn_failed", 1, log, srv)[0]
	retried := r.awaitEvent("retry", 1, log, srv)[0]
	ended := r.awaitEvent("turn_ended", 1, log, srv)[0]
	if failed.SessionID == "" || retried.SessionID != failed.SessionID || ended.SessionID != failed.SessionID {
		t.Fatalf("the failed turn, the retry and its end ran in sessions %q, %q, %q; want one", failed.SessionID, retried.SessionID, ended.SessionID)
	}
	if len(retried.Items) != 1 || retried.Items[0] != "letter:"+id {
		t.Fatalf("the retry is for %v, want letter:%s", retried.Items, id)
	}
	turns := srv.Turns()
	if len(turns) < 2 || !bytes.Contains(turns[0].Body, []byte(letterMark)) {
		t.Fatalf("the failed turn never held the letter:\n%s", srv.Log())
	}
	last := turns[len(turns)-1].Body
	if n := bytes.Count(last, []byte(letterMark)); n != 1 || !bytes.Contains(last, []byte("your previous turn failed before you answered")) {
		t.Fatalf("the retry's request holds the letter %d times, want 1, with the retry's note:\n%s", n, clip(last))
	}
	r.wantAllRead("the letter is still unread after the retry answered")
}

func TestClaudeKeptRetryCarriesTheLetterOnce(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	bin := clientBin(t, "claude", claudeVersion)
	srv := fakemodel.Start(t, fakemodel.Error(500), fakemodel.Text("Read it, done."))
	keptRetryCarriesOnce(t, r, srv, session.HostClaude, claudeStream(bin), append(r.claudeEnv(srv), "CLAUDE_CODE_MAX_RETRIES=0"))
}

func TestCodexKeptRetryCarriesTheLetterOnce(t *testing.T) {
	longtest.Need(t, "the keeper against real Claude Code and Codex")
	r := newClientRepo(t, "codex")
	bin := clientBin(t, "codex", codexVersion)
	srv := fakemodel.Start(t, fakemodel.Error(400), fakemodel.Text("Read it, done."))
	home := r.codexHome(srv, "")
	r.trustCodexHooks(bin, home)
	keptRetryCarriesOnce(t, r, srv, session.HostCodex, []string{bin, "app-server", "-c", `sandbox_mode="danger-full-access"`}, r.codexEnv(home))
}
