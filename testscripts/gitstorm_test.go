package testscripts

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestGitHousekeepingDuringPosts is git's own housekeeping under m1nd's
// traffic: for a bounded time, posters and mail writers move refs/m1nd/
// refs while `git pack-refs --all` and `git gc --auto` run over and over
// with m1nd's reference-transaction hook installed. Every git command must
// exit 0 (plain git does in the same race), every accepted letter must be
// on its chain, and `git fsck --strict` and `m1nd verify` must be clean.
func TestGitHousekeepingDuringPosts(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	const posters, writers, storm = 3, 2, 6 * time.Second
	g := gittest.Init(t, "brain")
	env := gittest.Env(t)
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = g.Dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	m1nd := exec.Command(m1ndBin(t), "init")
	m1nd.Dir, m1nd.Env = g.Dir, env
	if out, err := m1nd.CombinedOutput(); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	// The two housekeepers below also race each other for packed-refs.lock,
	// which git waits core.packedRefsTimeout for (1 s by default); under
	// -race the reference-transaction hook a pack-refs runs is an
	// instrumented m1nd, and holds the lock longer than that. Git against
	// git is not what this test is about: it waits longer.
	for _, kv := range [][2]string{{"gc.auto", "20"}, {"gc.autoPackLimit", "2"}, {"gc.autoDetach", "false"}, {"core.packedRefsTimeout", "30000"}} {
		if out, err := git("config", kv[0], kv[1]); err != nil {
			t.Fatalf("git config: %v\n%s", err, out)
		}
	}
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	ctx := context.Background()
	m := &chain.Missions{Repo: repo, Brain: "brain"}
	box := &mailbox.Mailbox{Repo: repo, Brain: "brain"}
	deadline := time.Now().Add(storm)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := map[string][]string{} // mission → letter ids, in order
	var mailSent atomic.Int64
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	for p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opened, err := m.New(ctx, chain.NewMission{BlockID: fmt.Sprintf("sb_storm_%d", p), Synthetic: true, Agent: fmt.Sprintf("poster%d", p), Now: time.Now()})
			if err != nil {
				fail("open: %v", err)
				return
			}
			mu.Lock()
			accepted[opened.MissionID] = []string{opened.LetterID}
			mu.Unlock()
			for time.Now().Before(deadline) {
				head, err := m.Current(opened.MissionID)
				if err != nil {
					fail("read %s: %v", opened.MissionID, err)
					return
				}
				next := chain.Next(head.Letter, head.HeadLetterID, time.Now())
				next.SetPhase(chain.PhaseExecuting)
				res, err := m.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: fmt.Sprintf("poster%d", p)})
				if err != nil {
					fail("post %s: %v", opened.MissionID, err)
					return
				}
				mu.Lock()
				accepted[opened.MissionID] = append(accepted[opened.MissionID], res.LetterID)
				mu.Unlock()
			}
		}()
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				_, err := box.Send(ctx, &mailbox.Letter{TS: time.Now().UTC().Format(time.RFC3339), Agent: fmt.Sprintf("writer%d", w), To: "bob",
					Class: "note", Brain: "brain", What: fmt.Sprintf("note %d from writer %d", i, w)})
				if err != nil {
					fail("mail: %v", err)
					return
				}
				mailSent.Add(1)
			}
		}()
	}
	var packs, gcs atomic.Int64
	for _, args := range [][]string{{"pack-refs", "--all"}, {"gc", "--auto", "--quiet"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if out, err := git(args...); err != nil {
					fail("git %s: %v\n%s", strings.Join(args, " "), err, out)
					continue
				}
				if args[0] == "gc" {
					gcs.Add(1)
				} else {
					packs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures, the first:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	letters := 0
	for id, want := range accepted {
		log, err := m.Log(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != len(want) {
			t.Fatalf("mission %s: %d letters on its chain, %d accepted", id, len(log), len(want))
		}
		for i, e := range log {
			if e.LetterID != want[i] {
				t.Fatalf("mission %s letter %d: %s on the chain, %s accepted", id, i+1, e.LetterID, want[i])
			}
		}
		letters += len(want)
	}
	if out, err := git("fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	if faults, _, err := laws.Verify(ctx, repo, nil); err != nil || len(faults) > 0 {
		t.Fatalf("verify: %v %v", faults, err)
	}
	t.Logf("%d letters on %d chains and %d mail letters while git ran pack-refs %d times and gc --auto %d times: every git command exited 0",
		letters, len(accepted), mailSent.Load(), packs.Load(), gcs.Load())
}
