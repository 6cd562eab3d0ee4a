package demo

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/rules"
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

	key  ed25519.PrivateKey // runnerd's, which signs build-1's gates
	pin  string             // build-1's approved pin
	pins int64              // the pin set version that approved it
}

// demoGate is the demo runner's approved gate.
const demoGate = "go test ./..."

// approveRunner makes the demo's runnerd key and approves runner
// build-1's pin with it: the operator's approval at the terminal where
// they run m1nd demo.
func (b *builder) approveRunner(when time.Time) error {
	repo := b.store.Repo
	if _, err := secret.EnsureRunnerKey(repo); err != nil {
		return err
	}
	key, err := secret.LoadRunnerKey(repo)
	if err != nil {
		return err
	}
	b.key, b.pin = key, chain.PacketRef([]byte("demo runner build-1: "+demoGate))
	p, set, err := brain.PreparePins(b.ctx, repo, []brain.ApprovedRunner{{ID: "build-1", Pin: b.pin, Key: rules.RunnerKey(key.Public().(ed25519.PublicKey)),
		GateCommand: demoGate, Command: []string{"demo-agent", "{packet_file}"}}}, when)
	if err != nil {
		return err
	}
	if _, err := b.store.CommitPins(b.ctx, p, rules.OriginHumanTTY, nil); err != nil {
		return err
	}
	b.pins = set.Version
	return nil
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
	b := &builder{ctx: ctx, m: &chain.Missions{Repo: repo, Brain: name, Blocks: store, Gates: store}, store: store, now: now, brain: name}
	// The demo's runner build-1: runnerd's key made here, its pin
	// approved as the operator approves at a terminal; it signs the gates
	// of the demo's runner missions, as runnerd does.
	if err := b.approveRunner(now.Add(-3 * time.Hour)); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
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
			// The agent's commit first, then the gate that tested it.
			id, err := b.mission("core", "runnerd:build-1", now.Add(-42*time.Minute), "executing", "gate")
			if err == nil {
				err = b.work(id, now.Add(-35*time.Minute))
			}
			if err == nil {
				err = b.then(id, "core", "runnerd:build-1", now.Add(-12*time.Minute), chain.PhaseMergeWait)
			}
			return id, err
		}},
		{"failed", func() (string, error) {
			id, err := b.mission("web", "runnerd:build-1", now.Add(-2*time.Hour), "executing", "gate", "failed")
			if err == nil {
				err = b.keepGateLog(id, failedLog("web"))
			}
			return id, err
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
	if runner, ok := strings.CutPrefix(agent, rules.RunnerPrefix); ok {
		req.Capability, req.RunnerID = "build-runner", runner
		req.Packet = demoPacket(dir)
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
		if letter, id, err = b.post(letter, id, dir, agent, start.Add(time.Duration(i+1)*10*time.Minute), phase); err != nil {
			return "", nil, err
		}
	}
	return opened.MissionID, letter, nil
}

// then posts the next letter of mission id, in phase, dressed for it.
func (b *builder) then(missionID, dir, agent string, when time.Time, phase string) error {
	head, err := b.m.Current(missionID)
	if err != nil {
		return err
	}
	_, _, err = b.post(head.Letter, head.HeadLetterID, dir, agent, when, phase)
	return err
}

// post posts the letter after head (whose id is headID) in phase.
func (b *builder) post(head *chain.Letter, headID, dir, agent string, when time.Time, phase string) (*chain.Letter, string, error) {
	next := chain.Next(head, headID, when)
	next.SetPhase(phase)
	if err := b.dress(next, dir, when); err != nil {
		return nil, "", err
	}
	req := chain.PostRequest{Body: next.Canonical(), Agent: agent}
	if runner, ok := strings.CutPrefix(agent, rules.RunnerPrefix); ok && phase == chain.PhaseMergeWait {
		st, err := chain.GateStatementOf(next, next.Canonical(), runner, b.pins)
		if err != nil {
			return nil, "", err
		}
		att := rules.SignGate(b.key, st)
		req.Attestation = &att
	}
	r, err := b.m.Post(b.ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("post %s: %w", phase, err)
	}
	return next, r.LetterID, nil
}

// tested is the commit and tree a demo gate ran on: the mission's work
// branch where it has one, else main, as a runner's gate names them.
func (b *builder) tested(missionID string) (string, string, error) {
	ref := "refs/heads/m1nd/" + missionID
	h, ok, err := b.store.Repo.ReadRef(ref)
	if err == nil && !ok {
		h, _, err = b.store.Repo.ReadRef("refs/heads/main")
	}
	if err != nil {
		return "", "", err
	}
	c, err := b.store.Repo.ReadCommit(h)
	if err != nil {
		return "", "", err
	}
	return h.String(), c.Tree.String(), nil
}

// dress gives a letter what its phase carries: a verdict, a gate, and on
// merge_wait a complete receipt candidate at the block's boundary, naming
// the commit and tree its gate tested.
func (b *builder) dress(l *chain.Letter, dir string, when time.Time) error {
	log := greenLog(dir)
	exit := int64(0)
	switch l.Phase {
	case "gate":
		l.Gate = &chain.Gate{Command: "go test ./" + dir + "/...", ArtifactHash: chain.PacketRef(log)}
	case "review":
		l.Verdict = &chain.Verdict{Decision: "CHANGE", Gist: "the docs contradict the ledger's rounding"}
	case "failed":
		exit = 1
		l.Gate = &chain.Gate{Command: "go test ./" + dir + "/...", ExitStatus: &exit, ArtifactHash: chain.PacketRef(failedLog(dir))}
		l.Verdict = &chain.Verdict{Decision: "REJECT", Gist: "gate exited 1"}
	case "merge_wait":
		commit, tree, err := b.tested(l.MissionID)
		if err != nil {
			return err
		}
		l.Gate = &chain.Gate{Command: demoGate, ExitStatus: &exit, ArtifactHash: chain.PacketRef(log)}
		l.Verdict = &chain.Verdict{Decision: "APPROVE", Gist: "gate green; the change is proved"}
		l.ReceiptCandidate = &rules.Receipt{
			BlockID: b.block(dir), Type: "test", Emitter: &rules.Emitter{Kind: "runnerd", ID: "build-1"},
			Scope: rules.Scope{BlockID: b.block(dir), BoundaryVersion: 1, ContractVersion: 1},
			Evidence: rules.Evidence{ArtifactHash: l.Gate.ArtifactHash, EvidenceRefs: []string{"gate://" + l.MissionID, rules.PinRef + b.pin, "commit:" + commit, "tree:" + tree},
				Command: l.Gate.Command, Cwd: ".", ExitStatus: &exit,
				StartedAt: when.Add(-2 * time.Minute).UTC().Format(rules.WindowLayout), EndedAt: when.Add(-time.Minute).UTC().Format(rules.WindowLayout)},
		}
	}
	return nil
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
	head, err := b.m.Current(id)
	if err != nil {
		return "", err
	}
	imp, err := b.store.ImportReceipt(b.ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: v, Agent: "owner", Now: b.now},
		BlockID:      mw.ReceiptCandidate.BlockID, Receipt: candidate, Origin: rules.OriginHumanTTY,
		Lands: &brain.Landing{MissionID: id, LetterID: head.HeadLetterID},
	})
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
	_, err = b.m.Archive(b.ctx, id, "owner", rules.OriginHumanTTY, start.Add(time.Hour))
	return id, err
}

// greenLog and failedLog are the gate output of the demo's runs; their
// sha256 is the letters' artifact hash, as a runner's would be.
func greenLog(dir string) []byte {
	return []byte(fmt.Sprintf("=== RUN   TestLedger\n--- PASS: TestLedger (0.00s)\n=== RUN   TestLedgerNegative\n--- PASS: TestLedgerNegative (0.00s)\nPASS\nok  \tdemo/%s\t0.01s\n", dir))
}

func failedLog(dir string) []byte {
	return []byte(fmt.Sprintf("=== RUN   TestIndexTitle\n    index_test.go:9: the title says \"demo\", want \"ledger\"\n--- FAIL: TestIndexTitle (0.00s)\nFAIL\nFAIL\tdemo/%s\t0.01s\nFAIL\n", dir))
}

// keepGateLog writes a mission's gate output where a runner keeps it.
func (b *builder) keepGateLog(missionID string, log []byte) error {
	path := runs.SideLog(b.store.Repo.RuntimeDir(), missionID, "gate")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, log, 0o600)
}

// work gives the merge_wait mission what a runner leaves behind: the
// agent's commit on m1nd/<id> (off main, never checked out), its gate log
// and the side record naming main as the branch it lands in. Landing it
// in the tray puts the commit on main.
func (b *builder) work(missionID string, when time.Time) error {
	repo := b.store.Repo
	dir := repo.MainWorkTree()
	base, _, err := repo.ReadRef("refs/heads/main")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(runs.SideDir(repo.RuntimeDir()), 0o700); err != nil {
		return err
	}
	index := filepath.Join(runs.SideDir(repo.RuntimeDir()), missionID+".index")
	defer os.Remove(index)
	stamp := when.UTC().Format(time.RFC3339)
	env := []string{"GIT_INDEX_FILE=" + index,
		"GIT_AUTHOR_NAME=build-1", "GIT_AUTHOR_EMAIL=build-1@runnerd.invalid", "GIT_AUTHOR_DATE=" + stamp,
		"GIT_COMMITTER_NAME=build-1", "GIT_COMMITTER_EMAIL=build-1@runnerd.invalid", "GIT_COMMITTER_DATE=" + stamp}
	git := func(stdin string, args ...string) (string, error) {
		out, _, err := gitstore.GitCmd{Dir: dir, Env: env, Stdin: strings.NewReader(stdin)}.Run(b.ctx, args...)
		if err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
		return strings.TrimSpace(out), nil
	}
	if _, err := git("", "read-tree", base.String()); err != nil {
		return err
	}
	for name, body := range agentChange {
		blob, err := git(body, "hash-object", "-w", "--stdin")
		if err != nil {
			return err
		}
		if _, err := git("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+name); err != nil {
			return err
		}
	}
	tree, err := git("", "write-tree")
	if err != nil {
		return err
	}
	commit, err := git("", "commit-tree", tree, "-p", base.String(), "-m", "core: refuse negative entries\n\nThe ledger summed them silently; now it says which one it refused.")
	if err != nil {
		return err
	}
	if _, err := git("", "update-ref", "refs/heads/m1nd/"+missionID, commit, gitstore.ZeroHash.String()); err != nil {
		return err
	}
	if err := b.keepGateLog(missionID, greenLog("core")); err != nil {
		return err
	}
	if err := os.WriteFile(runs.SidePacket(repo.RuntimeDir(), missionID), demoPacket("core"), 0o600); err != nil {
		return err
	}
	return runs.WriteSide(repo.RuntimeDir(), &runs.Side{MissionID: missionID, RunnerID: "build-1", Branch: "m1nd/" + missionID,
		Base: base.String(), Target: "main", Created: chain.Timestamp(when), Removed: true})
}

// agentChange is the demo agent's work on core.
var agentChange = map[string]string{
	"core/ledger.go":      "package core\n\nimport \"fmt\"\n\n// Ledger sums entries; a negative entry is refused, by its index.\nfunc Ledger(xs []int) (n int, err error) {\n\tfor i, x := range xs {\n\t\tif x < 0 {\n\t\t\treturn 0, fmt.Errorf(\"entry %d is negative (%d)\", i, x)\n\t\t}\n\t\tn += x\n\t}\n\treturn n, nil\n}\n",
	"core/ledger_test.go": "package core\n\nimport \"testing\"\n\nfunc TestLedger(t *testing.T) {\n\tif n, err := Ledger([]int{1, 2}); n != 3 || err != nil {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n\nfunc TestLedgerNegative(t *testing.T) {\n\tif _, err := Ledger([]int{1, -2}); err == nil {\n\t\tt.Fatal(\"a negative entry was summed\")\n\t}\n}\n",
}

// demoPacket is the ask a demo runner mission was given.
func demoPacket(dir string) []byte {
	ask := fmt.Sprintf("The demo's %s needs care.", dir)
	if dir == "core" {
		ask = "The ledger sums negative entries silently. Refuse them, saying which entry was refused, and prove it with a test."
	}
	return []byte(fmt.Sprintf("# Mission packet — %s\n\n## What should change?\n%s\n", dir, ask))
}
