package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// benchBrain is the brain name of every fixture (git config m1nd.brain), so
// letters posted into any copy of one name the right brain.
const benchBrain = "bench"

// fixtures builds repositories of n missions once and hands out copies.
type fixtures struct {
	work  string
	built map[int]string
}

// copyOf returns a fresh copy (cp -a) of the pristine fixture of n
// missions, named name under work, building the pristine one first when
// this is the first ask for n.
func (f *fixtures) copyOf(name string, n int) (string, error) {
	src, ok := f.built[n]
	if !ok {
		var err error
		if src, err = buildFixture(f.work, n); err != nil {
			return "", err
		}
		f.built[n] = src
	}
	dst := filepath.Join(f.work, name)
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cp -a %s: %v: %s", src, err, out)
	}
	return dst, nil
}

// fixtureMissionID is mission i's id: spread like the random ids m1nd
// picks, yet the same on every run.
func fixtureMissionID(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("bench mission %d", i)))
	return "msn_" + hex.EncodeToString(sum[:6])
}

// fixtureLetter is mission i's first letter, as `m1nd mission new` writes it.
func fixtureLetter(i int) *chain.Letter {
	at := chain.Timestamp(time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
	return &chain.Letter{
		Schema: chain.LetterSchema, MissionID: fixtureMissionID(i), MissionSeq: 1,
		BlockID: "sb_bench_core", BrainRef: benchBrain, Seat: "hand", Capability: "hand-runner",
		Phase: chain.PhaseJudging, StartedAt: at, UpdatedAt: at,
	}
}

// buildFixture makes a repository with a first commit (a few top-level
// folders, so a scan finds blocks) and n missions of one letter each,
// written by `git fast-import` in one pass: one pack of objects, one loose
// ref per mission. No hooks are installed yet. The commits are byte for
// byte what m1nd writes for the same letters (checked against an
// in-process post of the first), so heads, verify and the hooks read them
// as m1nd's own.
func buildFixture(work string, n int) (string, error) {
	start := time.Now()
	name := fmt.Sprintf("fixture-%d", n)
	for i := 2; ; i++ { // a row took the first one built (fixtures.take): build another beside it
		if _, err := os.Stat(filepath.Join(work, name)); err != nil {
			break
		}
		name = fmt.Sprintf("fixture-%d-%d", n, i)
	}
	dir, err := newRepo(work, name)
	if err != nil {
		return "", err
	}
	if _, err := gitOut(dir, nil, "config", "m1nd.brain", benchBrain); err != nil {
		return "", err
	}
	for _, part := range []string{"core", "api", "web"} {
		if err := os.MkdirAll(filepath.Join(dir, part), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, part, "a.go"), []byte("package "+part+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "parts"}} {
		if _, err := gitOut(dir, nil, args...); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(os.Stderr, "fixture: writing %d missions with git fast-import …\n", n)
	cmd := exec.Command("git", "-c", "core.hooksPath=/dev/null", "fast-import", "--quiet", "--done")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(stdin, 1<<20)
	for i := 0; i < n; i++ {
		l := fixtureLetter(i)
		body := l.Canonical()
		when, _ := time.Parse(time.RFC3339, l.UpdatedAt)
		msg := chain.MissionKind.Message(chain.Commit{Agent: benchBrain, Doc: chain.NamedLetter{Letter: l, ID: chain.LetterID(body)}})
		sig := fmt.Sprintf("%s <%s@m1nd> %d +0000", benchBrain, benchBrain, when.Unix())
		fmt.Fprintf(w, "commit refs/m1nd/missions/%s\nauthor %s\ncommitter %s\ndata %d\n%s", l.MissionID, sig, sig, len(msg), msg)
		fmt.Fprintf(w, "M 100644 inline letter.json\ndata %d\n%s\n\n", len(body), body)
	}
	fmt.Fprintf(w, "done\n")
	if err := w.Flush(); err != nil {
		return "", fmt.Errorf("fast-import: %v: %s", err, out)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("fast-import: %v: %s", err, out)
	}
	if err := checkFixture(work, dir); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "fixture: %d missions in %s\n", n, time.Since(start).Round(10*time.Millisecond))
	fixtureTimes = append(fixtureTimes, fmt.Sprintf("%d missions %s", n, time.Since(start).Round(10*time.Millisecond)))
	return dir, nil
}

// fixtureTimes records how long each fixture took, for the summary.
var fixtureTimes []string

// checkFixture posts mission 0's letter in-process, through chain's own
// post, into a scratch repository and checks the commit is the one
// fast-import wrote.
func checkFixture(work, fixture string) error {
	scratch, err := os.MkdirTemp(work, "fixture-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if out, err := exec.Command("git", "init", "-q", scratch).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	repo, err := gitstore.Open(scratch)
	if err != nil {
		return err
	}
	defer repo.Close()
	m := &chain.Missions{Repo: repo, Brain: benchBrain}
	res, err := m.Post(context.Background(), chain.PostRequest{Body: fixtureLetter(0).Canonical(), Agent: benchBrain})
	if err != nil {
		return fmt.Errorf("fixture check post: %w", err)
	}
	got, err := gitOut(fixture, nil, "rev-parse", chain.MissionRefPrefix+fixtureMissionID(0))
	if err != nil {
		return err
	}
	if got != res.Commit {
		return fmt.Errorf("fixture commit %s is not what m1nd writes for the same letter (%s)", got, res.Commit)
	}
	return nil
}
