package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
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
	Dir      string            `json:"dir"`
	Brain    string            `json:"brain"`
	Missions map[string]string `json:"missions"` // phase → mission id
}

// builder posts the demo's missions.
type builder struct {
	ctx   context.Context
	m     *chain.Missions
	store *brain.Store
	now   time.Time
	brain string
}

// Build creates the demo repository at dir (which must not exist), scans
// its skeleton and posts one mission in every phase: judging (one of them
// stagnant for two days), executing, gate, review, merge_wait (the landing
// bell rings), landed, failed and archived.
//
// The landed and archived missions need a human gesture (the receipt
// import, the archive). The demo stamps them as the operator's: it is the
// operator who runs `m1nd demo`, at their own terminal, to get a fixture.
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
	if _, err = store.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: now.Add(-3 * time.Hour)}); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	b := &builder{ctx: ctx, m: &chain.Missions{Repo: repo, Brain: name, Blocks: store}, store: store, now: now, brain: name}
	res := &Result{Dir: dir, Brain: name, Missions: map[string]string{}}
	steps := []struct {
		phase string
		run   func() (string, error)
	}{
		{"judging", func() (string, error) { return b.mission("web", "owner", now.Add(-3*time.Minute), "judging") }},
		{"stagnant", func() (string, error) { return b.mission("docs", "hand-1", now.Add(-50*time.Hour), "judging") }},
		{"executing", func() (string, error) {
			return b.mission("root", "runnerd:build-1", now.Add(-25*time.Minute), "executing")
		}},
		{"gate", func() (string, error) {
			return b.mission("web", "runnerd:build-1", now.Add(-40*time.Minute), "executing", "gate")
		}},
		{"review", func() (string, error) {
			return b.mission("docs", "hand-1", now.Add(-90*time.Minute), "executing", "gate", "review")
		}},
		{"merge_wait", func() (string, error) {
			return b.mission("core", "runnerd:build-1", now.Add(-42*time.Minute), "executing", "gate", "merge_wait")
		}},
		{"failed", func() (string, error) {
			return b.mission("web", "runnerd:build-1", now.Add(-2*time.Hour), "executing", "gate", "failed")
		}},
		{"landed", func() (string, error) { return b.landed("docs", now.Add(-3*time.Hour)) }},
		{"archived", func() (string, error) { return b.archived("root", now.Add(-4*time.Hour)) }},
	}
	for _, st := range steps {
		id, err := st.run()
		if err != nil {
			return nil, fmt.Errorf("demo: the %s mission: %w", st.phase, err)
		}
		res.Missions[st.phase] = id
	}
	return res, nil
}

func (b *builder) block(dir string) string { return "sb_" + brain.Slug(b.brain) + "_" + dir }

// mission opens a mission on block dir (its judging letter) and carries it
// through phases, ten minutes apart from start. It returns the mission id.
func (b *builder) mission(dir, agent string, start time.Time, phases ...string) (string, error) {
	id, _, err := b.carry(dir, agent, start, phases...)
	return id, err
}

func (b *builder) carry(dir, agent string, start time.Time, phases ...string) (string, *chain.Letter, error) {
	req := chain.NewMission{BlockID: b.block(dir), Agent: agent, Now: start, Capability: "hand-runner", Seat: "hand"}
	if runner, ok := strings.CutPrefix(agent, gates.RunnerPrefix); ok {
		req.Capability, req.RunnerID = "build-runner", runner
		req.Packet = []byte(fmt.Sprintf("# Mission packet — %s\n\n## What should change?\nThe demo's %s needs care.\n", dir, dir))
	}
	opened, err := b.m.New(b.ctx, req)
	if err != nil {
		return "", nil, err
	}
	head, err := b.m.Current(opened.MissionID)
	if err != nil {
		return "", nil, err
	}
	letter, id := head.Letter, head.HeadLetterID
	for i, phase := range phases {
		if phase == chain.PhaseJudging {
			continue // the opening letter
		}
		when := start.Add(time.Duration(i+1) * 10 * time.Minute)
		next := chain.Next(letter, id, when)
		next.SetPhase(phase)
		b.dress(next, dir, when)
		r, err := b.m.Post(b.ctx, chain.PostRequest{Body: next.Canonical(), Agent: agent})
		if err != nil {
			return "", nil, fmt.Errorf("post %s: %w", phase, err)
		}
		letter, id = next, r.LetterID
	}
	return opened.MissionID, letter, nil
}

// dress gives a letter what its phase carries: a verdict, a gate, and on
// merge_wait a complete receipt candidate at the block's boundary.
func (b *builder) dress(l *chain.Letter, dir string, when time.Time) {
	log := []byte(fmt.Sprintf("ok  demo/%s 0.01s\n", dir))
	exit := int64(0)
	switch l.Phase {
	case "gate":
		l.Gate = &chain.Gate{Command: "go test ./" + dir + "/...", ArtifactHash: chain.PacketRef(log)}
	case "review":
		l.Verdict = &chain.Verdict{Decision: "CHANGE", Gist: "the docs contradict the ledger's rounding"}
	case "failed":
		exit = 1
		l.Gate = &chain.Gate{Command: "go test ./" + dir + "/...", ExitStatus: &exit, ArtifactHash: chain.PacketRef([]byte("FAIL demo/" + dir))}
		l.Verdict = &chain.Verdict{Decision: "REJECT", Gist: "gate exited 1"}
	case "merge_wait":
		l.Gate = &chain.Gate{Command: "go test ./" + dir + "/...", ExitStatus: &exit, ArtifactHash: chain.PacketRef(log)}
		l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: "gate green; the change is proved"}
		l.ReceiptCandidate = &gates.Receipt{
			BlockID: b.block(dir), Type: "test", Emitter: &gates.Emitter{Kind: "runnerd", ID: "build-1"},
			Scope: gates.Scope{BlockID: b.block(dir), BoundaryVersion: 1, ContractVersion: 1},
			Evidence: gates.Evidence{ArtifactHash: l.Gate.ArtifactHash, EvidenceRefs: []string{"gate://" + l.MissionID},
				Command: l.Gate.Command, Cwd: ".", ExitStatus: &exit,
				StartedAt: when.Add(-2 * time.Minute).UTC().Format(gates.WindowLayout), EndedAt: when.Add(-time.Minute).UTC().Format(gates.WindowLayout)},
		}
	}
}

// landed carries a mission to merge_wait, imports its receipt and posts
// the landed letter, as the tray's landing does.
func (b *builder) landed(dir string, start time.Time) (string, error) {
	id, mw, err := b.carry(dir, "runnerd:build-1", start, "judging", "executing", "gate", "merge_wait")
	if err != nil {
		return "", err
	}
	v, _, err := brain.StoreVersion(b.store.Repo)
	if err != nil {
		return "", err
	}
	candidate := chain.CanonicalJSON(mw.ReceiptCandidate)
	imp, err := b.store.ImportReceipt(b.ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: v, Agent: "owner", Now: b.now},
		BlockID:      mw.ReceiptCandidate.BlockID, Receipt: candidate, Origin: gates.OriginHumanTTY,
	})
	if err != nil {
		return "", err
	}
	head, err := b.m.Current(id)
	if err != nil {
		return "", err
	}
	landed := chain.Next(mw, head.HeadLetterID, start.Add(time.Hour))
	landed.Phase = chain.PhaseLanded
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: imp.StoreVersion}
	_, err = b.m.Post(b.ctx, chain.PostRequest{Body: landed.Canonical(), Agent: "owner"})
	return id, err
}

// archived carries a mission to merge_wait and archives it.
func (b *builder) archived(dir string, start time.Time) (string, error) {
	id, _, err := b.carry(dir, "runnerd:build-1", start, "judging", "executing", "gate", "merge_wait")
	if err != nil {
		return "", err
	}
	_, err = b.m.Archive(b.ctx, id, "owner", gates.OriginHumanTTY, start.Add(time.Hour))
	return id, err
}
