package testscripts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/testkit/fakemodel"
	"github.com/m1nd/m1nd/testkit/longtest"
)

const reviewMark = "REVIEW-91c2: call it Ledger, not Book"

// A review reaches the agent that works on the mission as any letter does
// (issue 41): Claude Code, mid-turn, hears the review at its next tool
// call, once, framed as mail, with what it owes.
func TestClaudeHearsAReview(t *testing.T) {
	longtest.Need(t, "real Claude Code and Codex")
	r := newClientRepo(t, "claude")
	id := r.waitingMission()
	srv := fakemodel.Start(t,
		fakemodel.Tool("Bash", map[string]any{"command": "echo first", "description": "first step"}),
		fakemodel.Tool("Bash", map[string]any{"command": "echo second", "description": "second step"}),
		fakemodel.Text("All done."))
	srv.OnTurn(func(turn int, _ []byte) {
		if turn != 1 {
			return
		}
		cmd := exec.Command(m1ndBin(r.t), "mission", "review", id, "--agent", "alice", "--request-changes", "--body", reviewMark)
		cmd.Dir, cmd.Env = r.Dir, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("mission review during turn 1: %v\n%s", err, out)
		}
	})
	res, stderr, err := r.claude(srv, "do the task")
	if err != nil || res.IsError || res.Result != "All done." {
		t.Fatalf("claude -p: %v %+v\nstderr: %s\nserver:\n%s", err, res, stderr, srv.Log())
	}
	assertLetterOnce(t, srv, reviewMark, 2)
	turns := srv.Turns()
	for _, want := range []string{"# Review of " + id + ": changes requested", "commit what the review asks on m1nd/" + id} {
		if !strings.Contains(string(turns[1].Body), want) {
			t.Errorf("turn 2 lacks %q:\n%s", want, clip(turns[1].Body))
		}
	}
	if head := r.m1nd("mission", "show", id); !strings.Contains(head, "phase       review") {
		t.Errorf("the review is not recorded on the mission:\n%s", head)
	}
}

// waitingMission opens a mission as bob and moves it to merge_wait with
// a gate of bob's own (a claim): the work a reviewer reads.
func (r *clientRepo) waitingMission() string {
	r.t.Helper()
	var opened struct {
		MissionID string `json:"mission_id"`
	}
	if err := json.Unmarshal([]byte(r.m1nd("mission", "new", "--block", "sb_brain_core", "--json")), &opened); err != nil {
		r.t.Fatal(err)
	}
	var next chain.Letter
	if err := json.Unmarshal([]byte(r.m1nd("mission", "next", opened.MissionID, "--phase", chain.PhaseMergeWait)), &next); err != nil {
		r.t.Fatal(err)
	}
	exit := int64(0)
	next.Gate = &chain.Gate{Command: "go test ./...", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("ab", 32)}
	path := filepath.Join(r.t.TempDir(), "merge_wait.json")
	if err := os.WriteFile(path, next.Canonical(), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.m1nd("mission", "post", path)
	return opened.MissionID
}
