package runnerd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/testkit/gittest"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

type rig struct {
	t    *testing.T
	g    *gittest.Repo
	d    *Daemon
	http *httptest.Server
	dir  string // scripts
}

// newRig makes a scanned brain "shop" and a daemon whose runners run the
// given shell scripts (agent and gate), through the real /run endpoint,
// their pins approved at a terminal (the brain has no passkey).
func newRig(t *testing.T, agent, gate string, timeout int) *rig {
	r := newRigUnapproved(t, agent, gate, timeout)
	r.approve(rules.OriginHumanTTY, nil)
	return r
}

// newRigUnapproved is newRig with no runner pin approved yet.
func newRigUnapproved(t *testing.T, agent, gate string, timeout int) *rig {
	t.Helper()
	g := gittest.Init(t, "shop")
	g.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "web/index.html": "<p>\n"})
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", "Agent"}, {"GIT_AUTHOR_EMAIL", "agent@x"}, {"GIT_COMMITTER_NAME", "Agent"}, {"GIT_COMMITTER_EMAIL", "agent@x"}} {
		t.Setenv(kv[0], kv[1])
	}
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	if _, err := (&brain.Store{Repo: repo, Brain: "shop"}).Scan(context.Background(), brain.WriteRequest{Agent: "owner"}); err != nil {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	script := filepath.Join(scripts, "agent.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"+agent+"\n"), 0o755)
	namer := filepath.Join(scripts, "namer.sh")
	os.WriteFile(namer, []byte("#!/bin/sh\ncat >/dev/null\necho thinking\necho \"$NAME_ANSWER\"\n"), 0o755)
	cfg := &runners.Config{Runners: []*runners.Runner{
		{ID: "build-1", Capability: runners.CapBuild, Command: []string{script, runners.PacketPlaceholder}, GateCommand: gate,
			WorkspaceAllowlist: []string{filepath.Dir(g.Dir)}, TimeoutSecs: timeout},
		{ID: "namer", Capability: runners.CapNaming, Command: []string{namer}, NamingTimeoutSecs: 5},
		{ID: "elsewhere", Capability: runners.CapBuild, Command: []string{script, runners.PacketPlaceholder}, GateCommand: "true",
			WorkspaceAllowlist: []string{scripts}, TimeoutSecs: timeout},
	}}
	d := &Daemon{Repo: repo, Brain: "shop", Config: cfg, Secret: testSecret}
	hs := httptest.NewServer(d.Handler())
	t.Cleanup(func() { hs.Close(); d.running.Wait() })
	return &rig{t: t, g: g, d: d, http: hs, dir: scripts}
}

// publicKey is the rig's runnerd key, as the pins carry it.
func (r *rig) publicKey() string {
	if r.d.Key == nil {
		r.d.init()
	}
	return rules.RunnerKey(r.d.Key.Public().(ed25519.PublicKey))
}

// approve approves every build runner of the rig's configuration now, with
// its runnerd key, as a human does: at a terminal (origin human-tty, before
// the first passkey) or signed by key's passkey.
func (r *rig) approve(origin string, key *rulestest.Authenticator) {
	r.t.Helper()
	ctx := context.Background()
	approvals, _ := runners.Approvals(r.d.config(), r.publicKey())
	p, _, err := brain.PreparePins(ctx, r.d.Repo, approvals, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		r.t.Fatal(err)
	}
	var proof *rules.Proof
	if key != nil {
		proof = key.Assert(p.Challenge(), nil)
	}
	if _, err := (&brain.Store{Repo: r.d.Repo, Brain: r.d.Brain}).CommitPins(ctx, p, origin, proof); err != nil {
		r.t.Fatalf("approve the pins (%s): %v", origin, err)
	}
}

func (r *rig) post(path, secret string, body any) (int, map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", r.http.URL+path, bytes.NewReader(b))
	req.Header.Set(loopback.SecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// spawn runs a mission on the core block and waits for its run to end.
func (r *rig) spawn() *chain.Head {
	r.t.Helper()
	status, out := r.post("/run", testSecret, wire.RunRequest{RunnerID: "build-1", PacketMarkdown: "# Mission packet — core\n", BlockID: "sb_shop_core", BrainRef: "shop"})
	if status != 200 || out["accepted"] != true {
		r.t.Fatalf("/run: %d %v", status, out)
	}
	r.d.running.Wait()
	head, err := r.d.flows.Current(out["mission_id"].(string))
	if err != nil {
		r.t.Fatal(err)
	}
	return head
}

func phases(t *testing.T, d *Daemon, id string) string {
	log, err := d.flows.Log(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, e := range log {
		ps = append(ps, e.Decoded.Phase)
	}
	return strings.Join(ps, ">")
}

func TestRunToMergeWaitWithACompleteCandidate(t *testing.T) {
	r := newRig(t, `test -f "$1" && test "$M1ND_AGENT" = runnerd:build-1 && test -n "$M1ND_MISSION" && test "$M1ND_BLOCK" = sb_shop_core || exit 7
echo "// $M1ND_MISSION" >> core/a.go && git commit -qam work`, `grep -q msn_ core/a.go && echo proved`, 30)
	head := r.spawn()
	l := head.Letter
	if got := phases(t, r.d, head.MissionID); got != "judging>executing>gate>merge_wait" {
		t.Fatalf("phases %s (gist %v)", got, l.Verdict)
	}
	if l.Verdict.Decision != "APPROVE" || !strings.Contains(l.Verdict.Gist, "1 commit on m1nd/"+head.MissionID+"; worktree removed") {
		t.Fatalf("verdict %+v", l.Verdict)
	}
	c := l.ReceiptCandidate
	if c == nil || c.Type != "test" || c.Scope.BoundaryVersion != 1 || c.Evidence.Cwd != "." || c.Evidence.EvidenceRefs[0] != "gate://"+head.MissionID ||
		c.Evidence.Excerpt[len(c.Evidence.Excerpt)-1] != "proved" || c.Emitter.Kind != "runnerd" {
		t.Fatalf("candidate %+v", c)
	}
	// The candidate is importable as it stands: evidence contract and window.
	if err := rules.CheckReceipt(c, time.Now()); err != nil {
		t.Fatalf("the candidate would not import: %v", err)
	}
	log, _ := os.ReadFile(runs.SideLog(r.d.Repo.RuntimeDir(), head.MissionID, "gate"))
	if c.Evidence.ArtifactHash != chain.PacketRef(log) || l.Gate.ArtifactHash != c.Evidence.ArtifactHash {
		t.Fatal("artifact hash is not sha256 of the gate log")
	}
	// The work is on the branch; the clean worktree is gone; its path is
	// only in the side record.
	if msg := r.g.Git("log", "-1", "--format=%s", "m1nd/"+head.MissionID); msg != "work" {
		t.Fatalf("branch head %q", msg)
	}
	wt := worktreePath(r.g.Dir, head.MissionID)
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("clean worktree kept: %v", err)
	}
	if refs := r.g.Git("log", "-p", "refs/m1nd/missions/"+head.MissionID); strings.Contains(refs, wt) || strings.Contains(refs, r.g.Dir) {
		t.Fatal("an absolute path reached a letter")
	}
}

// TestTheGateBindsACommit: an agent that leaves its work uncommitted has
// it committed by runnerd, as the agent and saying so, before the gate;
// the candidate names the commit and tree the gate tested, which are the
// branch's tip and its tree.
func TestTheGateBindsACommit(t *testing.T) {
	r := newRig(t, `echo "// $M1ND_MISSION" >> core/a.go`, `grep -q msn_ core/a.go`, 30)
	head := r.spawn()
	l := head.Letter
	if l.Phase != chain.PhaseMergeWait || !strings.Contains(l.Verdict.Gist, "runnerd committed the work the agent left uncommitted") {
		t.Fatalf("head %s %+v", l.Phase, l.Verdict)
	}
	branch := "m1nd/" + head.MissionID
	tip, tree := r.g.Git("rev-parse", branch), r.g.Git("rev-parse", branch+"^{tree}")
	if commit, gotTree := l.ReceiptCandidate.Evidence.Tested(); commit != tip || gotTree != tree {
		t.Fatalf("the candidate names %s %s, the branch is at %s %s", commit, gotTree, tip, tree)
	}
	msg := r.g.Git("log", "-1", "--format=%an <%ae>%n%B", branch)
	if !strings.HasPrefix(msg, "runnerd+build-1 <runnerd+build-1@m1nd>\n"+uncommittedMessage) || !strings.Contains(msg, "M1nd-Committed-By: runnerd") {
		t.Fatalf("the commit of the uncommitted work:\n%s", msg)
	}
}

func TestEveryFailureEndsInALetter(t *testing.T) {
	for _, tt := range []struct {
		label, agent, gate, gist string
		timeout                  int
	}{
		{"gate fails", `echo x >> core/a.go; git commit -qam work`, `echo FAIL; exit 3`, "gate exited 3; 1 commit on", 30},
		{"agent cannot run", ``, `true`, "agent could not run: command not found", 30},
		{"agent fails", `exit 7`, `true`, "agent exited 7", 30},
		{"dirty worktree kept", `echo wip >> core/a.go; exit 7`, `true`, "agent exited 7; 0 commits on", 30},
		{"agent commits nothing", `true`, `true`, "the agent committed nothing: there is no work for the gate to test", 30},
		{"agent leaves another branch", `git checkout -q -b elsewhere && echo x >> core/a.go && git commit -qam x`, `true`, "the agent left its worktree off m1nd/", 30},
		{"gate changes the work", `echo x >> core/a.go; git commit -qam work`, `echo y >> core/a.go`, "the gate changed tracked files of the work it tested", 30},
		{"agent times out", `sleep 300 & echo $! > "$PIDFILE"; wait`, `true`, "agent timed out after 1s — killed", 1},
	} {
		t.Run(tt.label, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			t.Setenv("PIDFILE", pidfile)
			r := newRig(t, tt.agent, tt.gate, tt.timeout)
			if tt.label == "agent cannot run" {
				r.d.Config.Runners[0].Command = []string{filepath.Join(r.dir, "missing-agent"), runners.PacketPlaceholder}
				r.approve(rules.OriginHumanTTY, nil) // the human approves the new pin
			}
			head := r.spawn()
			if head.Letter.Phase != "failed" || head.Letter.Verdict.Decision != "REJECT" || !strings.Contains(head.Letter.Verdict.Gist, tt.gist) {
				t.Fatalf("head %s %+v, want failed with %q", head.Letter.Phase, head.Letter.Verdict, tt.gist)
			}
			if tt.label == "dirty worktree kept" {
				if !strings.Contains(head.Letter.Verdict.Gist, "worktree kept: uncommitted changes") {
					t.Fatalf("gist %q", head.Letter.Verdict.Gist)
				}
				if _, err := os.Stat(filepath.Join(worktreePath(r.g.Dir, head.MissionID), "core", "a.go")); err != nil {
					t.Fatal("the dirty worktree was removed")
				}
				wts, _ := Worktrees(context.Background(), r.d.Repo, r.d.flows)
				if len(wts) != 1 || wts[0].Clean || !wts[0].Present {
					t.Fatalf("worktrees %+v", wts)
				}
				if pruned, err := Prune(context.Background(), r.d.Repo, r.d.flows); err != nil || len(pruned.Removed) != 0 {
					t.Fatal("prune removed a dirty worktree")
				}
			}
			if strings.Contains(head.Letter.Verdict.Gist, r.dir) || strings.Contains(head.Letter.Verdict.Gist, r.g.Dir) {
				t.Fatalf("a host path reached the letter: %q", head.Letter.Verdict.Gist)
			}
			if tt.label == "agent times out" {
				data, _ := os.ReadFile(pidfile)
				pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
				if pid == 0 {
					t.Fatal("the agent never started its child")
				}
				time.Sleep(50 * time.Millisecond)
				if alive(pid) {
					t.Fatalf("the agent's child %d survived the kill", pid)
				}
			}
		})
	}
}

// A worktree that cannot be made fails the mission without naming a path.
func TestWorktreeAddFailureNamesNoPath(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	// Where every mission's branch would go, a file stands: no work
	// branch, so no worktree, can be made.
	if err := os.WriteFile(filepath.Join(r.g.Dir, ".git", "refs", "heads", "m1nd"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := r.spawn()
	gist := head.Letter.Verdict.Gist
	if head.Letter.Phase != "failed" || !strings.HasPrefix(gist, "worktree add failed") || strings.Contains(gist, "/") {
		t.Fatalf("head %s, gist %q", head.Letter.Phase, gist)
	}
}

func TestRunRefusals(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	req := wire.RunRequest{RunnerID: "build-1", BlockID: "sb_shop_core", BrainRef: "shop"}
	if status, _ := r.post("/run", "", req); status != 401 {
		t.Errorf("no secret: %d", status)
	}
	if status, _ := r.post("/run", strings.Repeat("0", 64), req); status != 401 {
		t.Errorf("wrong secret: %d", status)
	}
	// Refusals are the §5 envelope: the code, the field when there is one,
	// and a lesson.
	refused := func(label string, status int, out map[string]any, wantStatus int, code string, field any) {
		t.Helper()
		if status != wantStatus || out["ok"] != false || out["refused"] != code || out["field"] != field || out["lesson"] == nil || out["lesson"] == "" {
			t.Errorf("%s: %d %v, want %d %s", label, status, out, wantStatus, code)
		}
		if _, ok := out["error"]; ok {
			t.Errorf("%s: a second body shape: %v", label, out)
		}
	}
	req.RunnerID = "ghost"
	status, out := r.post("/run", testSecret, req)
	refused("unpinned", status, out, 403, "unpinned_runner", "runner_id")
	req.RunnerID = "namer" // pinned, but not a build-runner
	status, out = r.post("/run", testSecret, req)
	refused("naming runner asked to build", status, out, 403, "unpinned_runner", "runner_id")
	req.RunnerID = "elsewhere"
	status, out = r.post("/run", testSecret, req)
	refused("outside the allowlist", status, out, 403, "workspace_not_allowed", nil)
	status, out = r.post("/name", testSecret, wire.NameRequest{RunnerID: "build-1", Blocks: []wire.NamingBlock{{BlockID: "sb_shop_core"}}})
	refused("a build runner asked to name", status, out, 403, "unpinned_runner", "runner_id")
	status, out = r.post("/curate", testSecret, wire.CurateRequest{RunnerID: "namer"})
	refused("a naming runner asked to curate", status, out, 403, "unpinned_runner", "runner_id")
	status, out = r.post("/run", testSecret, map[string]any{"runner_id": "build-1", "surprise": 1})
	refused("an unknown field", status, out, 422, "invalid_letter", nil)
	req.RunnerID, req.BlockID = "build-1", "sb_shop_nope"
	if status, out := r.post("/run", testSecret, req); status != 422 || out["refused"] != "unknown_block" {
		t.Errorf("unknown block: %d %v", status, out)
	}
	if refs := r.g.Git("for-each-ref", "refs/m1nd/missions/"); refs != "" {
		t.Fatalf("a refused run wrote %s", refs)
	}
}

// A spawn on an existing mission works on the block the mission's letters
// name: the request may leave block_id out but never name another, and
// only a judging mission is sent to a runner.
func TestRunOnAnExistingMissionKeepsItsBlock(t *testing.T) {
	r := newRig(t, `test "$M1ND_BLOCK" = sb_shop_core || exit 7
echo "// $M1ND_MISSION" >> core/a.go && git commit -qam work`, `true`, 30)
	opened, err := r.d.flows.OpenMission(context.Background(), ops.MissionRequest{BlockID: "sb_shop_core", Agent: "owner", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	id := opened.Mission.MissionID
	seq := func() int64 {
		head, err := r.d.flows.Current(id)
		if err != nil {
			t.Fatal(err)
		}
		return head.Letter.MissionSeq
	}
	req := wire.RunRequest{RunnerID: "build-1", BlockID: "sb_shop_web", MissionID: id, BrainRef: "shop", PacketMarkdown: "# p\n"}
	if status, out := r.post("/run", testSecret, req); status != 422 || out["refused"] != "invalid_letter" || out["field"] != "block_id" ||
		!strings.Contains(out["lesson"].(string), "is on block sb_shop_core, not sb_shop_web") {
		t.Fatalf("another block: %d %v", status, out)
	}
	req.MissionID = "msn_00000000dead"
	if status, out := r.post("/run", testSecret, req); status != 422 || out["refused"] != "unknown_mission" {
		t.Fatalf("no such mission: %d %v", status, out)
	}
	r.d.running.Wait()
	if n := seq(); n != 1 {
		t.Fatalf("a refused run moved the mission to seq %d", n)
	}

	req.MissionID, req.BlockID = id, ""
	if status, out := r.post("/run", testSecret, req); status != 200 || out["mission_id"] != id {
		t.Fatalf("the mission's own block: %d %v", status, out)
	}
	r.d.running.Wait()
	head, _ := r.d.flows.Current(id)
	c := head.Letter.ReceiptCandidate
	if head.Letter.Phase != chain.PhaseMergeWait || c == nil || c.BlockID != "sb_shop_core" || c.Scope.BlockID != "sb_shop_core" {
		t.Fatalf("head %s %+v, candidate %+v", head.Letter.Phase, head.Letter.Verdict, c)
	}

	// At merge_wait it is not the runner's to take again.
	req.BlockID = "sb_shop_core"
	if status, out := r.post("/run", testSecret, req); status != 422 || out["refused"] != "invalid_transition" || out["field"] != "mission_id" ||
		!strings.Contains(out["lesson"].(string), "is at merge_wait") {
		t.Fatalf("a mission at merge_wait: %d %v", status, out)
	}
	r.d.running.Wait()
	if n := seq(); n != head.Letter.MissionSeq {
		t.Fatalf("a refused run moved the mission from seq %d to %d", head.Letter.MissionSeq, n)
	}
}

func TestRestartedRunnerFailsWhatItLeftRunning(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	ctx := context.Background()
	runner := r.d.Config.Runners[0]
	id, _, err := r.d.open(ctx, runner, wire.RunRequest{BlockID: "sb_shop_core"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.d.advance(ctx, runner, id, func(l *chain.Letter) { l.Phase = chain.PhaseExecuting }); err != nil {
		t.Fatal(err)
	}
	runs.WriteSide(r.d.Repo.RuntimeDir(), &runs.Side{MissionID: id, RunnerID: runner.ID, Worktree: filepath.Join(r.dir, "gone"), Branch: "m1nd/" + id, Base: r.g.Git("rev-parse", "HEAD")})
	r.d.recover(ctx)
	head, _ := r.d.flows.Current(id)
	if head.Letter.Phase != "failed" || !strings.HasPrefix(head.Letter.Verdict.Gist, "runner restarted") {
		t.Fatalf("after restart: %s %+v", head.Letter.Phase, head.Letter.Verdict)
	}
}

func TestNamingLaneSanitizes(t *testing.T) {
	for answer, want := range map[string]string{
		`{"name":"Ledger core","purpose":"sums the entries"}`:    "",
		`{"name":"see https://x.example","purpose":"p"}`:         "name: URL",
		`{"name":"ok","purpose":"key AKIA1234567890ABCDEFGHIJ"}`: "purpose: token-like string",
		`not json`: `the runner's last line was not {"name","purpose"}`,
	} {
		t.Setenv("NAME_ANSWER", answer)
		r := newRig(t, `true`, `true`, 30)
		status, out := r.post("/name", testSecret, wire.NameRequest{Blocks: []wire.NamingBlock{{BlockID: "sb_shop_core", Packet: "# Name this block\n"}}})
		if status != 200 {
			t.Fatalf("/name: %d %v", status, out)
		}
		res := out["results"].([]any)[0].(map[string]any)
		if want == "" && (res["ok"] != true || res["name"] != "Ledger core") || want != "" && (res["ok"] == true || res["refused"] != want) {
			t.Errorf("answer %s: %v", answer, res)
		}
		if want != "" && strings.Contains(res["refused"].(string), "x.example") {
			t.Error("a refusal echoed the runner's text")
		}
	}
}

// alive reports a process that exists and is not a zombie (killed, not yet
// reaped by whoever inherited it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// An owner that echoes the boot challenge wrong is not announced to again.
func TestAnnounceStopsTrustingAWrongEcho(t *testing.T) {
	r := newRig(t, `true`, `true`, 30)
	calls := 0
	echo := func(right bool) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			calls++
			var in map[string]any
			json.NewDecoder(req.Body).Decode(&in)
			if req.Header.Get(loopback.SecretHeader) != testSecret || in["port"] == "" {
				w.WriteHeader(401)
				return
			}
			reply := in["boot_challenge"].(string)
			if !right {
				reply = "not-the-challenge"
			}
			json.NewEncoder(w).Encode(map[string]any{"ok": true, "echo": reply, "registered": in["runner_ids"]})
		}
	}
	good := httptest.NewServer(echo(true))
	defer good.Close()
	r.d.OwnerURL, r.d.port = good.URL, "7421"
	r.d.announceOnce(context.Background())
	r.d.announceOnce(context.Background())
	if calls != 2 || r.d.ownerRefused {
		t.Fatalf("a good owner: %d calls, refused %v", calls, r.d.ownerRefused)
	}
	bad := httptest.NewServer(echo(false))
	defer bad.Close()
	r.d.OwnerURL, calls = bad.URL, 0
	r.d.announceOnce(context.Background())
	r.d.announceOnce(context.Background())
	if calls != 1 || !r.d.ownerRefused {
		t.Fatalf("a wrong echo: %d calls, refused %v", calls, r.d.ownerRefused)
	}
}
