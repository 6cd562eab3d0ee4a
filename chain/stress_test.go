package chain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestConcurrentPostersAndGitUpdateRef races goroutines posting through
// m1nd against git processes that append letters to the same ref with
// hash-object, mktree, commit-tree and `git update-ref <ref> <new> <old>`.
// Every write that reported success must be in the final chain, the chain
// must be a valid sequence of letters, and git fsck must be clean.
func TestConcurrentPostersAndGitUpdateRef(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	const (
		mission     = "msn_00000000beef"
		ref         = chain.MissionRefPrefix + mission
		goroutines  = 4
		postsEach   = 12
		gitWorkers  = 2
		appendsEach = 6
		maxAttempts = 200
	)
	m, g := newMissions(t, "stress")
	mustPost(t, m, first("stress", mission))

	var mu sync.Mutex
	succeeded := map[string]string{} // commit -> who
	record := func(commit, who string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := succeeded[commit]; dup {
			t.Errorf("commit %s reported twice (%s and %s)", commit, prev, who)
		}
		succeeded[commit] = who
	}
	var stale, locked int64
	var counterMu sync.Mutex
	count := func(p *int64) { counterMu.Lock(); *p++; counterMu.Unlock() }

	var wg sync.WaitGroup
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			repo, err := gitstore.Open(g.Dir) // each poster is its own "process" view
			if err != nil {
				t.Error(err)
				return
			}
			defer repo.Close()
			poster := &chain.Missions{Repo: repo, Brain: "stress"}
			for done, attempts := 0, 0; done < postsEach && attempts < maxAttempts; attempts++ {
				head, _, err := poster.HeadOf(mission)
				if err != nil {
					t.Error(err)
					return
				}
				l := chain.Next(head.Letter, head.HeadLetterID, t0.Add(time.Duration(w*1000+done)*time.Second))
				l.Phase = "executing"
				res, err := poster.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: fmt.Sprintf("poster-%d", w)})
				if r, ok := rules.AsRefusal(err); ok && r.Code == rules.StaleHead {
					count(&stale)
					continue
				}
				if err != nil && strings.Contains(err.Error(), gitstore.ErrRefLocked.Error()) {
					count(&locked)
					continue
				}
				if err != nil {
					t.Errorf("poster %d: %v", w, err)
					return
				}
				if res.Deduped {
					t.Errorf("poster %d: unexpected dedup", w)
				}
				record(res.Commit, fmt.Sprintf("poster-%d", w))
				done++
			}
		}(w)
	}
	for w := 0; w < gitWorkers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			dir := t.TempDir()
			repo, err := gitstore.Open(g.Dir)
			if err != nil {
				t.Error(err)
				return
			}
			defer repo.Close()
			reader := &chain.Missions{Repo: repo, Brain: "stress"}
			for done, attempts := 0, 0; done < appendsEach && attempts < maxAttempts; attempts++ {
				head, _, err := reader.HeadOf(mission)
				if err != nil {
					t.Error(err)
					return
				}
				l := chain.Next(head.Letter, head.HeadLetterID, t0.Add(time.Duration(100000+w*1000+done)*time.Second))
				l.Phase = "executing"
				file := filepath.Join(dir, "letter.json")
				if err := os.WriteFile(file, l.Canonical(), 0o644); err != nil {
					t.Error(err)
					return
				}
				commit, err := gitAppendCommit(g, file, head.Commit.String(), fmt.Sprintf("%s #%d executing by git", mission, l.MissionSeq))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := g.TryGit("update-ref", ref, commit, head.Commit.String()); err != nil {
					continue // lost the race (or the lock): git reports failure, nothing claimed
				}
				record(commit, fmt.Sprintf("git-%d", w))
				done++
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Walk the final chain: every letter extends the previous one.
	log, err := m.Log(context.Background(), mission)
	if err != nil {
		t.Fatal(err)
	}
	inChain := map[string]bool{}
	for i, e := range log {
		inChain[e.Commit] = true
		l := e.Decoded
		if l.MissionSeq != int64(i+1) {
			t.Fatalf("letter %d has seq %d", i, l.MissionSeq)
		}
		if i > 0 && (l.PrevLetterID == nil || *l.PrevLetterID != log[i-1].LetterID) {
			t.Fatalf("letter %d does not extend letter %d", i, i-1)
		}
	}
	for commit, who := range succeeded {
		if !inChain[commit] {
			t.Errorf("write by %s reported success but %s is not in the chain (lost update)", who, commit)
		}
	}
	if len(log) != len(succeeded)+1 {
		t.Errorf("chain has %d letters, want %d successes + 1", len(log), len(succeeded))
	}
	if want := goroutines*postsEach + gitWorkers*appendsEach; len(succeeded) != want {
		t.Logf("only %d of %d writes succeeded within %d attempts each", len(succeeded), want, maxAttempts)
	}
	g.Git("fsck", "--strict")
	t.Logf("%d letters, %d stale_head refusals, %d lock timeouts", len(log), stale, locked)
}

// gitAppendCommit writes a letter commit with git's plumbing (safe to call
// from any goroutine: it reports errors instead of failing the test).
func gitAppendCommit(g *gittest.Repo, file, parent, msg string) (string, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return g.TryCommitFile(parent, chain.LetterFile, body, msg)
}
