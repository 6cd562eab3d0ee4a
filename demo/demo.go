// Package demo builds the embedded default brain a newcomer starts with:
// a small git repository whose missions show every part of a chain.
package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// files is the demo repository's content: enough for blocks to mean something.
var files = map[string]string{
	"README.md":            "# demo-brain\n\nA tiny repository that m1nd keeps memory for.\n",
	"core/ledger.go":       "package core\n\n// Ledger sums entries.\nfunc Ledger(xs []int) (n int) {\n\tfor _, x := range xs {\n\t\tn += x\n\t}\n\treturn n\n}\n",
	"core/ledger_test.go":  "package core\n\nimport \"testing\"\n\nfunc TestLedger(t *testing.T) {\n\tif Ledger([]int{1, 2}) != 3 {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n",
	"web/index.html":       "<!doctype html><title>demo</title>\n",
	"docs/architecture.md": "# Architecture\n\ncore holds the ledger; web shows it.\n",
}

// Result says what Build made.
type Result struct {
	Dir      string   `json:"dir"`
	Brain    string   `json:"brain"`
	Missions []string `json:"missions"`
}

// Build creates the demo repository at dir (which must not exist) and posts
// two missions: one carried through judging, executing, gate and
// merge_wait (so the landing bell rings), one just opened.
func Build(ctx context.Context, dir string, now time.Time) (*Result, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("demo: %s already exists; name a new folder", dir)
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	if err := gitstore.InitWithCommit(ctx, dir, "demo brain"); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	name, err := brain.DisplayName(repo)
	if err != nil {
		return nil, err
	}
	// The skeleton first, so every mission names a real block.
	store := &brain.Store{Repo: repo, Brain: name}
	_, err = store.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: now.Add(-time.Hour)})
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	m := &chain.Missions{Repo: repo, Brain: name, Blocks: store}
	res := &Result{Dir: dir, Brain: name}
	block := func(dir string) string { return "sb_" + brain.Slug(name) + "_" + dir }

	start := now.Add(-42 * time.Minute)
	opened, err := m.New(ctx, chain.NewMission{BlockID: block("core"), Seat: "hand", Capability: "build-runner", RunnerID: "build-1",
		Packet: []byte("# Mission packet — core\n\n## What should change?\nLedger should reject negative entries.\n"), Agent: "runnerd:build-1", Now: start})
	if err != nil {
		return nil, err
	}
	head, _, err := m.HeadOf(opened.MissionID)
	if err != nil {
		return nil, err
	}
	exit := int64(0)
	steps := []func(l *chain.Letter){
		func(l *chain.Letter) { l.Phase = chain.PhaseExecuting },
		func(l *chain.Letter) {
			l.Phase = "gate"
			l.Gate = &chain.Gate{Command: "go test ./core/...", ArtifactHash: chain.PacketRef([]byte("ok  demo/core 0.01s\n"))}
		},
		func(l *chain.Letter) {
			l.Phase = chain.PhaseMergeWait
			l.Gate.ExitStatus = &exit
			l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: "gate green; negative entries refused"}
		},
	}
	letter, id := head.Letter, head.HeadLetterID
	for i, step := range steps {
		next := chain.Next(letter, id, start.Add(time.Duration(i+1)*10*time.Minute))
		step(next)
		r, err := m.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: "runnerd:build-1"})
		if err != nil {
			return nil, fmt.Errorf("demo: post %s: %w", next.Phase, err)
		}
		letter, id = next, r.LetterID
	}
	second, err := m.New(ctx, chain.NewMission{BlockID: block("web"), Agent: "owner", Now: now.Add(-3 * time.Minute)})
	if err != nil {
		return nil, err
	}
	res.Missions = []string{opened.MissionID, second.MissionID}
	return res, nil
}
