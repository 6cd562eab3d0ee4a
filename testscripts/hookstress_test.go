package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestParallelHookProcessesDeliverEachLetterOnce is Claude Code's worst
// case: matching hooks run in parallel. 8 real `m1nd hook claude
// PostToolUse` processes at a time, round after round, over 500 letters
// from 5 writers: every letter must reach the session exactly once.
func TestParallelHookProcessesDeliverEachLetterOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	const letters, procs = 500, 8
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	box := &mailbox.Mailbox{Repo: repo, Brain: "brain"}
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	want := map[string]bool{}
	for i := 0; i < letters; i++ {
		to := "bob"
		if i%10 == 0 {
			to = mailbox.ToAll
		}
		res, err := box.Send(context.Background(), &mailbox.Letter{TS: base.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			Agent: fmt.Sprintf("writer%d", i%5), To: to, Class: "note", Brain: "brain", What: fmt.Sprintf("letter number %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		want[res.ID] = true
	}
	bin := m1ndBin(t)
	env := gittest.Env(t)
	input := []byte(`{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"` + g.Dir + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"ok"},"tool_use_id":"t1"}`)
	idPattern := regexp.MustCompile(`- letter ([0-9a-f]{12}) from`)
	seen := map[string]int{}
	var mu sync.Mutex
	for round := 0; round < 200; round++ {
		var wg sync.WaitGroup
		got := 0
		for p := 0; p < procs; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(bin, "hook", "claude", "PostToolUse", "--agent", "bob")
				cmd.Dir = g.Dir
				cmd.Env = env
				cmd.Stdin = bytes.NewReader(input)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil || stderr.Len() > 0 {
					t.Errorf("hook: %v %s", err, stderr.String())
					return
				}
				if len(out) == 0 {
					return
				}
				var reply struct {
					HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal(out, &reply); err != nil {
					t.Errorf("reply %q: %v", out, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, m := range idPattern.FindAllStringSubmatch(reply.HookSpecificOutput.AdditionalContext, -1) {
					seen[m[1]]++
					got++
				}
			}()
		}
		wg.Wait()
		if t.Failed() || got == 0 {
			break
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("letter %s delivered %d times", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d distinct letters delivered, want %d", len(seen), len(want))
	}
}
