package testscripts

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// TestKillNineWhilePosting kills `m1nd mission post` and `m1nd mission new`
// processes with SIGKILL at random moments. After every kill, git fsck must
// be clean, every mission ref must be a valid chain, and m1nd must be able
// to extend it.
func TestKillNineWhilePosting(t *testing.T) {
	longtest.Need(t, "crash rounds")
	if testing.Short() {
		t.Skip("crash test")
	}
	const rounds = 60
	g := gittest.Init(t, "crash")
	bin := m1ndBin(t)
	env := gittest.Env(t)
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = g.Dir
		cmd.Env = env
		return cmd.CombinedOutput()
	}
	if out, err := run("mission", "new", "--block", "sb_crash_core", "--agent", "crash"); err != nil {
		t.Fatalf("mission new: %v\n%s", err, out)
	}
	work := t.TempDir()
	seed := crashSeed(t)
	t.Logf("seed %d (replay the same kill delays: %s=%d go test ./testscripts -run TestKillNineWhilePosting)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(1, seed))
	var killedEarly, killedLate int
	for round := 0; round < rounds; round++ {
		// Half the rounds extend an existing chain, half open a new mission
		// (the create-a-ref path).
		args := []string{"mission", "new", "--block", "sb_crash_core", "--agent", "crash"}
		if round%2 == 0 {
			file := filepath.Join(work, "next.json")
			if err := os.WriteFile(file, nextLetter(t, g.Dir), 0o644); err != nil {
				t.Fatal(err)
			}
			args = []string{"mission", "post", "--agent", "crash", file}
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = g.Dir
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(9000)) * time.Microsecond)
		cmd.Process.Kill()
		if err := cmd.Wait(); err != nil {
			killedEarly++
		} else {
			killedLate++ // it finished before the kill
		}

		if out, err := g.TryGit("fsck", "--no-progress"); err != nil || strings.Contains(out, "error") || strings.Contains(out, "missing") || strings.Contains(out, "broken") {
			t.Fatalf("round %d: git fsck: %v\n%s", round, err, out)
		}
		checkChains(t, g.Dir, round)

		// m1nd extends the chain with nothing done by hand: a lock a
		// killed m1nd left carries its stamp, and the next writer clears it.
		file := filepath.Join(work, "extend.json")
		if err := os.WriteFile(file, nextLetter(t, g.Dir), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := run("mission", "post", "--agent", "crash", file); err != nil {
			t.Fatalf("round %d: m1nd cannot extend after the kill: %v\n%s", round, err, out)
		}
	}
	checkChains(t, g.Dir, rounds)
	t.Logf("%d rounds: %d killed mid-run, %d finished first; every next post went through", rounds, killedEarly, killedLate)
}

// crashSeedEnv names the variable that replays a crash run: its seed picks
// every kill delay (where the kills land still depends on the machine).
const crashSeedEnv = "M1ND_CRASH_SEED"

// crashSeed is the seed of this run: the one in crashSeedEnv, or a new one.
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	v := os.Getenv(crashSeedEnv)
	if v == "" {
		return uint64(time.Now().UnixNano())
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a decimal seed: %v", crashSeedEnv, v, err)
	}
	return seed
}

// nextLetter builds the letter that extends the first mission's head.
func nextLetter(t *testing.T, dir string) []byte {
	t.Helper()
	m := missions(t, dir)
	view, err := m.Heads(context.Background(), "")
	if err != nil || len(view.Missions) == 0 {
		t.Fatalf("heads: %v", err)
	}
	head := view.Missions[0]
	l := chain.Next(head.Letter, head.HeadLetterID, time.Unix(1752062400+head.Letter.MissionSeq, 0))
	l.Phase = "executing"
	return l.Canonical()
}

func missions(t *testing.T, dir string) *chain.Missions {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &chain.Missions{Repo: repo, Brain: filepath.Base(dir)}
}

// checkChains walks every mission ref: contiguous seqs, each letter naming
// its predecessor, every letter well-formed.
func checkChains(t *testing.T, dir string, round int) {
	t.Helper()
	m := missions(t, dir)
	view, err := m.Heads(context.Background(), "")
	if err != nil {
		t.Fatalf("round %d: heads: %v", round, err)
	}
	for _, h := range view.Missions {
		log, err := m.Log(context.Background(), h.MissionID)
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, h.MissionID, err)
		}
		for i, e := range log {
			if err := chain.Validate(e.Decoded); err != nil {
				t.Fatalf("round %d: %s letter %d invalid: %v", round, h.MissionID, i, err)
			}
			if e.Decoded.MissionSeq != int64(i+1) || (i > 0 && *e.Decoded.PrevLetterID != log[i-1].LetterID) {
				t.Fatalf("round %d: %s letter %d breaks the chain", round, h.MissionID, i)
			}
		}
	}
}
