package testscripts

// The human's proof binds exactly what lands (issue 24): each attack an
// agent would try, refused with its code by the local hook, a bare
// remote's pre-receive, a second clone's sync (both ways) and verify, with
// nothing written. The tray's substitution attack is in
// tray/gesture_test.go and the browser test; the scenarios a newcomer runs
// are the binding_*.txtar scripts.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/gitsync"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// bindRig is a remote brain with its flows, for missions that land.
type bindRig struct {
	*remoteBrain
	flows *ops.Flows
}

func newBindRig(t *testing.T) *bindRig {
	t.Helper()
	b := newRemoteBrain(t)
	return &bindRig{remoteBrain: b, flows: ops.New(b.repo, "shop")}
}

// candidate is a receipt candidate for sb_shop_core proved by ref.
func (r *bindRig) candidate(ref string) *rules.Receipt {
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	return &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{ref}, Command: "go test ./core/...", Cwd: ".", ExitStatus: &exit,
			StartedAt: r.now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: r.now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
}

// mergeWait opens a mission at merge_wait proposing cand, signed by
// runner b1 as runnerd signs it. With file, the mission has a work branch
// m1nd/<id> of one commit writing file on main's tip, its side record
// naming main, and the candidate names that commit and its tree as
// tested: what runnerd leaves. Without, it is carried by hand and cand is
// posted as it is. It returns the mission id and the merge_wait letter
// with its id.
func (r *bindRig) mergeWait(cand *rules.Receipt, file string) (string, *chain.Letter, string) {
	t := r.t
	t.Helper()
	id, mw := r.work(cand, file)
	att := r.runner.Sign(t, mw)
	posted, err := r.flows.Post(context.Background(), chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att})
	if err != nil {
		t.Fatal(err)
	}
	return id, mw, posted.LetterID
}

// work opens a mission (its judging letter, by runnerd:b1) with, when file
// is given, its work branch as mergeWait makes it, and returns the
// mission id and its merge_wait letter proposing cand, not posted.
func (r *bindRig) work(cand *rules.Receipt, file string) (string, *chain.Letter) {
	t := r.t
	t.Helper()
	ctx := context.Background()
	m := r.flows
	opened, err := m.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: r.now})
	if err != nil {
		t.Fatal(err)
	}
	id := opened.Mission.MissionID
	if file != "" {
		base := r.g.Git("rev-parse", "main")
		blob := r.g.GitStdin("work of "+id+"\n", "hash-object", "-w", "--stdin")
		tree := r.g.GitStdin(r.g.Git("ls-tree", base)+"\n100644 blob "+blob+"\t"+file+"\n", "mktree")
		tip := r.g.Git("commit-tree", tree, "-p", base, "-m", "agent: "+file)
		r.g.Git("update-ref", "refs/heads/m1nd/"+id, tip, "")
		if err := runs.WriteSide(r.repo.RuntimeDir(), &runs.Side{MissionID: id, RunnerID: "b1", Branch: "m1nd/" + id, Base: base, Target: "main", Created: chain.Timestamp(r.now)}); err != nil {
			t.Fatal(err)
		}
		tested := *cand
		tested.Evidence.EvidenceRefs = append(append([]string{}, cand.Evidence.EvidenceRefs...), "commit:"+tip, "tree:"+tree)
		cand = &tested
	}
	head, _ := m.Current(id)
	mw := chain.Next(head.Letter, head.HeadLetterID, r.now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: cand.Evidence.ArtifactHash}
	mw.ReceiptCandidate = cand
	return id, mw
}

// landedLetter writes, as raw git would, the landed letter of a mission's
// merge_wait letter naming store version, and returns its commit.
func (r *bindRig) landedLetter(id string, mw *chain.Letter, mwID string, version int64) string {
	l := chain.Next(mw, mwID, r.now.Add(time.Minute))
	l.Phase = chain.PhaseLanded
	l.Receipt = &chain.Receipt{Imported: true, StoreVersion: version}
	head := r.g.Git("rev-parse", chain.MissionRefPrefix+id)
	msg := id + " #3 landed sb_shop_core\n\nM1nd-Letter: " + chain.LetterID(l.Canonical()) + "\nM1nd-Agent: owner\n"
	return r.g.CommitFile(head, chain.LetterFile, l.Canonical(), msg)
}

// twoKeys registers the brain's first passkey, "old", and adds a second,
// "kept", proven by the first: what a key removal needs.
func (r *bindRig) twoKeys() (old, kept *rulestest.Authenticator) {
	t := r.t
	t.Helper()
	ctx := context.Background()
	old, kept = teamKey(), rulestest.New(t, "ed25519") // old is the remote's trusted first key
	passkey := func(a *rulestest.Authenticator, label string) brain.Passkey {
		return brain.Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, Label: label, AddedAt: chain.Timestamp(r.now)}
	}
	if _, err := brain.RegisterFirstKey(ctx, r.repo, passkey(old, "old"), r.now); err != nil {
		t.Fatal(err)
	}
	add, err := brain.PrepareAddKey(r.repo, passkey(kept, "kept"), r.now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := add.Commit(ctx, old.Assert(add.Prepared.Challenge(), nil)); err != nil {
		t.Fatalf("adding the second key: %v", err)
	}
	trustKeySet(t, r.remote, keySetFingerprint(t, r.repo)) // the remote's admin trusts it
	return old, kept
}

// refs is every ref and branch, to tell that nothing was written.
func (r *bindRig) refs() string {
	return r.g.Git("for-each-ref", "--format=%(objectname) %(refname)")
}

// secondClone is another clone of the remote, with m1nd init and its own
// hook: a teammate's machine.
func (r *bindRig) secondClone() *gittest.Repo {
	t := r.t
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	clone := []string{}
	for _, kv := range r.config {
		clone = append(clone, "-c", kv[0]+"="+kv[1])
	}
	r.g.Git(append(clone, "clone", "-q", r.remote, dir)...)
	g := gittest.Open(t, dir)
	for _, kv := range r.config {
		g.Git("config", kv[0], kv[1])
	}
	if out, err := r.m1nd(dir, "init"); err != nil {
		t.Fatalf("m1nd init in the second clone: %v\n%s", err, out)
	}
	if out, err := r.m1nd(dir, "hooks", "install"); err != nil { // agents write here
		t.Fatalf("m1nd hooks install in the second clone: %v\n%s", err, out)
	}
	return g
}

// syncIn runs m1nd sync --json in dir and decodes its report; more are
// sync's flags (a first sync's --trust).
func (r *bindRig) syncIn(dir string, more ...string) (*gitsync.Report, string) {
	r.t.Helper()
	out, _ := r.m1nd(dir, append([]string{"sync", "--json"}, more...)...)
	rep := &gitsync.Report{}
	start := strings.Index(out, "{")
	if start < 0 || json.Unmarshal([]byte(out[start:strings.LastIndex(out, "}")+1]), rep) != nil {
		r.t.Fatalf("m1nd sync: not a report:\n%s", out)
	}
	return rep, out
}

// faultOf is the first fault at ref in faults, nil when none.
func faultOf(faults []*laws.RefFault, ref string) *laws.RefFault {
	for _, f := range faults {
		if f.Ref == ref {
			return f
		}
	}
	return nil
}

// TestBorrowedImportLandsNothing: mission B carries a copy of landed
// mission A's receipt candidate (the same block, the same bytes). A's
// import does not land B: `m1nd land B` without a terminal asks for the
// gesture and is refused, nothing written; a landed letter on B naming
// A's import is refused landed_law by the local hook, by verify (written
// past the hook), by the remote's pre-receive, by the sync that would push
// it, and by a second clone's sync that finds it on the remote.
func TestBorrowedImportLandsNothing(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	a, mwA, _ := r.mergeWait(r.candidate("gate://shared"), "a.txt")
	landedA, err := r.flows.Land(ctx, ops.LandRequest{MissionID: a, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now})
	if err != nil {
		t.Fatalf("landing A: %v", err)
	}
	if out, err := r.m1nd(r.g.Dir, "sync"); err != nil {
		t.Fatalf("sync A's landing: %v\n%s", err, out)
	}
	// B is carried by hand with a copy of A's candidate, byte for byte.
	b, mwB, mwBID := r.mergeWait(mwA.ReceiptCandidate, "")
	refB := chain.MissionRefPrefix + b

	// The landing verb: A's import is not B's, so B's needs its gesture.
	before := r.refs()
	cmd := exec.Command(m1ndBin(t), "land", b)
	cmd.Dir, cmd.Env, cmd.Stdin = r.g.Dir, append(gittest.Env(t), "M1ND_AGENT=bob"), strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if exitCode(err) != 3 || !strings.Contains(string(out), "human_gesture_required") {
		t.Fatalf("m1nd land B with no terminal: exit %d\n%s", exitCode(err), out)
	}
	if after := r.refs(); after != before {
		t.Fatalf("a refused landing wrote:\n%s\nwas\n%s", after, before)
	}
	plan, err := r.flows.PlanLanding(ctx, b, "")
	if err != nil || plan.Resume || plan.Lands.MissionID != b {
		t.Fatalf("B's landing plan: %+v, %v; want a landing of its own, not A's resumed", plan, err)
	}

	// A landed letter on B naming A's import, by raw git.
	forged := r.landedLetter(b, mwB, mwBID, landedA.StoreVersion)
	head := r.g.Git("rev-parse", refB)
	out2, err := r.g.TryGit("update-ref", refB, forged, head)
	if err == nil || !strings.Contains(out2, "landed_law") || !strings.Contains(out2, "mission "+a+"'s import") {
		t.Fatalf("the local hook let B land on A's import: %v\n%s", err, out2)
	}
	r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", refB, forged, head)
	out3, err := r.m1nd(r.g.Dir, "verify")
	if exitCode(err) != 3 || !strings.Contains(out3, refB) || !strings.Contains(out3, "landed_law") {
		t.Fatalf("verify (exit %d) did not name B's borrowed landing:\n%s", exitCode(err), out3)
	}
	if out, err := r.g.TryGit("push", "origin", refB+":"+refB); err == nil || !strings.Contains(out, "landed_law") {
		t.Fatalf("the remote took B's borrowed landing: %v\n%s", err, out)
	}
	rep, raw := r.syncIn(r.g.Dir)
	if f := faultOf(rep.RefusedLocal, refB); f == nil || f.Code != string(rules.LandedLaw) {
		t.Fatalf("sync pushed B's borrowed landing, or said nothing of it:\n%s", raw)
	}
	if got := r.g.Git("ls-remote", "origin", refB); got != "" {
		t.Fatalf("the remote holds B after the sync: %s", got)
	}

	// Written on the remote past its hook, a second clone refuses it.
	bare := gittest.Open(t, r.remote)
	if out, err := exec.Command("git", "-C", r.g.Dir, "push", "-q", "--no-verify", "origin", refB+":"+refB).CombinedOutput(); err == nil {
		t.Fatalf("the remote's pre-receive let the forged ref in:\n%s", out)
	}
	bare.Git("-c", "core.hooksPath=/dev/null", "fetch", "-q", r.g.Dir, refB+":"+refB)
	clone := r.secondClone()
	rep, raw = r.syncIn(clone.Dir)
	if f := faultOf(rep.RefusedRemote, refB); f == nil || f.Code != string(rules.LandedLaw) {
		t.Fatalf("the second clone took B's borrowed landing:\n%s", raw)
	}
	if _, err := clone.TryGit("rev-parse", "--verify", "-q", refB); err == nil {
		t.Fatalf("the second clone holds %s after refusing it", refB)
	}
}

// TestRemovedKeyProvesNothingAfter: a passkey removed from the brain
// proves nothing made after its removal, decided by the history the
// removal anchored, not by a clock: an archive it signed before the
// removal stands in verify, on a fresh remote and in a fresh clone's first
// sync; one it signs after is refused by the local hook, verify, the
// remote, a push by sync and a second clone's sync.
func TestRemovedKeyProvesNothingAfter(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	old, kept := r.twoKeys()
	// archive signs the archive of a merge_wait mission with a, through
	// the laws (Prepared.Commit), and returns the mission's ref.
	archive := func(a *rulestest.Authenticator) (string, error) {
		id, _, _ := r.mergeWait(r.candidate("gate://x"), "x.txt")
		p, err := r.flows.PrepareArchive(id, "owner", r.now)
		if err != nil {
			t.Fatal(err)
		}
		env, err := r.store.Env()
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Commit(ctx, rules.OriginHumanPasskey, a.Assert(p.Challenge(), nil), env)
		return chain.MissionRefPrefix + id, err
	}
	before, err := archive(old)
	if err != nil {
		t.Fatalf("an archive signed by the old key while it is held: %v", err)
	}
	remove, err := brain.PrepareRemoveKey(ctx, r.repo, old.ID, r.now)
	if err != nil {
		t.Fatal(err)
	}
	if got := remove.Next.Removed[0].Anchors[before]; got != r.g.Git("rev-parse", before) {
		t.Fatalf("the removal anchors %v, want the archive the key signed", remove.Next.Removed[0].Anchors)
	}
	if _, err := remove.Commit(ctx, kept.Assert(remove.Prepared.Challenge(), nil)); err != nil {
		t.Fatalf("removing the old key: %v", err)
	}

	// After the removal: through the laws, and by raw git past them.
	if _, err := archive(old); err == nil || !strings.Contains(err.Error(), "removed in key set v3") {
		t.Fatalf("an archive signed by the removed key after its removal: %v", err)
	}
	id, _, _ := r.mergeWait(r.candidate("gate://y"), "y.txt")
	after := chain.MissionRefPrefix + id
	p, err := r.flows.PrepareArchive(id, "owner", r.now)
	if err != nil {
		t.Fatal(err)
	}
	forged := r.g.CommitFile(p.Parent.String(), chain.LetterFile, p.Change, p.Message(rules.OriginHumanPasskey, old.Assert(p.Challenge(), nil)))
	head := p.Parent.String()
	if out, err := r.g.TryGit("update-ref", after, forged, head); err == nil || !strings.Contains(out, "removed in key set v3") {
		t.Fatalf("the local hook took an archive by the removed key: %v\n%s", err, out)
	}
	r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", after, forged, head)
	faults, _, err := laws.Verify(ctx, r.repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := faultOf(faults, after); f == nil || f.Code != string(rules.HumanGestureRequired) {
		t.Fatalf("verify: %v; want the archive after the removal refused", faults)
	}
	if f := faultOf(faults, before); f != nil {
		t.Fatalf("verify refused the archive made before the removal: %v", f)
	}

	// A fresh remote takes the history made before (a creation of every
	// ref, as a first push is) and the sync refuses to push the one after.
	rep, raw := r.syncIn(r.g.Dir)
	if f := faultOf(rep.RefusedLocal, after); f == nil || !strings.Contains(f.Lesson, "removed in key set v3") {
		t.Fatalf("sync pushed the archive by the removed key:\n%s", raw)
	}
	if got := r.g.Git("ls-remote", "origin", before); got == "" {
		t.Fatalf("the remote did not take the archive made before the removal:\n%s", raw)
	}
	if out, err := r.g.TryGit("push", "origin", after+":"+after); err == nil || !strings.Contains(out, "removed in key set v3") {
		t.Fatalf("the remote took the archive by the removed key: %v\n%s", err, out)
	}
	// A new clone's first sync takes what came before, and refuses the
	// archive after when the remote holds it (written there past its hook).
	gittest.Open(t, r.remote).Git("-c", "core.hooksPath=/dev/null", "fetch", "-q", r.g.Dir, after+":"+after)
	clone := r.secondClone()
	rep, raw = r.syncIn(clone.Dir, "--trust", keySetFingerprint(t, r.repo))
	if f := faultOf(rep.RefusedRemote, after); f == nil || !strings.Contains(f.Lesson, "removed in key set v3") {
		t.Fatalf("a first sync took the archive by the removed key:\n%s", raw)
	}
	if !strings.Contains(strings.Join(rep.Created, " "), before) {
		t.Fatalf("a first sync did not take the archive made before the removal:\n%s", raw)
	}
}

// TestKeysAreNeverReplacedBySync: an agent registers its own first key on
// a fresh remote that runs no m1nd hook (a guarded one takes a first key
// set only from the key its admin trusts: binding_keys_sync.txtar). The
// human's clone holds its own keys: its sync refuses the remote's key set, reports it, never
// adopts it and parks nothing; the human's keys stand, and a landing the
// agent signed with its key is refused by the human's sync; verify is
// clean on the human's side.
func TestKeysAreNeverReplacedBySync(t *testing.T) {
	ctx := context.Background()
	r := hooklessRig(t)
	human, agent := rulestest.New(t, "es256"), rulestest.New(t, "es256")
	if _, err := brain.RegisterFirstKey(ctx, r.repo, brain.Passkey{CredentialID: human.ID, PublicKey: human.Key.PKIX, Label: "human", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	humanKeys := r.g.Git("rev-parse", brain.KeysRef)

	// The agent's clone of the (still empty) remote: its own brain's first
	// key set, pushed first.
	evil := gittest.Init(t, "shop")
	evil.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "README.md": "x\n"})
	if out, err := r.m1nd(evil.Dir, "init"); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	evilRepo, err := gitstore.Open(evil.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer evilRepo.Close()
	if _, err := brain.RegisterFirstKey(ctx, evilRepo, brain.Passkey{CredentialID: agent.ID, PublicKey: agent.Key.PKIX, Label: "not the human", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	evil.Git("remote", "add", "origin", r.remote)
	evil.Git("push", "-q", "origin", brain.KeysRef+":"+brain.KeysRef)

	rep, raw := r.syncIn(r.g.Dir)
	if f := faultOf(rep.RefusedRemote, brain.KeysRef); f == nil || !strings.Contains(f.Lesson, "do not extend the ones this clone trusts") {
		t.Fatalf("the human's sync did not refuse the agent's key set:\n%s", raw)
	}
	if len(rep.Conflicts) != 0 || rep.OK {
		t.Fatalf("the key set was parked as a conflict, or the sync said ok:\n%s", raw)
	}
	if got := r.g.Git("rev-parse", brain.KeysRef); got != humanKeys {
		t.Fatalf("the human's keys were replaced: %s, want %s", got, humanKeys)
	}
	if refs := r.g.Git("for-each-ref", "--format=%(refname)", chain.ConflictsPrefix); refs != "" {
		t.Fatalf("sync parked: %s", refs)
	}
	// The agent's signed archive on the remote is refused here.
	agentStore := &brain.Store{Repo: evilRepo, Brain: "shop"}
	if _, err := agentStore.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: r.now}); err != nil {
		t.Fatal(err)
	}
	m := &chain.Missions{Repo: evilRepo, Brain: "shop", Blocks: agentStore}
	opened, err := m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: r.now})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := m.Current(opened.MissionID)
	mw := chain.Next(head.Letter, head.HeadLetterID, r.now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	cand := r.candidate("gate://evil")
	mw.Gate, mw.ReceiptCandidate = &chain.Gate{Command: cand.Evidence.Command, ExitStatus: &exit, ArtifactHash: cand.Evidence.ArtifactHash}, cand
	mw.RunnerID = nil // the agent's own merge_wait, a claim: its clone holds no runner pins
	if _, err := m.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "evil"}); err != nil {
		t.Fatal(err)
	}
	p, err := m.PrepareArchive(opened.MissionID, "owner", r.now)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := agentStore.Env()
	if _, err := p.Commit(ctx, rules.OriginHumanPasskey, agent.Assert(p.Challenge(), nil), env); err != nil {
		t.Fatalf("the agent's archive in its own clone: %v", err)
	}
	ref := chain.MissionRefPrefix + opened.MissionID
	evil.Git("push", "-q", "origin", ref+":"+ref)
	rep, raw = r.syncIn(r.g.Dir)
	if f := faultOf(rep.RefusedRemote, ref); f == nil || f.Code != string(rules.HumanGestureRequired) {
		t.Fatalf("the human's sync took the archive the agent's key signed:\n%s", raw)
	}
	if out, err := r.m1nd(r.g.Dir, "verify"); err != nil {
		t.Fatalf("verify on the human's side: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.g.Dir, ".git", "refs", "m1nd", "missions", opened.MissionID)); err == nil {
		t.Fatalf("the agent's mission reached the human's clone")
	}
}

// TestForgedStateIsShownBroken: history written past the hooks — a landed
// letter no import backs, a store commit adding a receipt no human
// imported — is marked broken by `status`, `mission heads`, `mission show`
// and `blocks` (the same judge as verify), the bell does not count it, the
// blocks are drawn from the last store version the laws accept, and
// neither `m1nd land` nor a gesture proceeds on it (broken_history).
func TestForgedStateIsShownBroken(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	id, mw, mwID := r.mergeWait(r.candidate("gate://forged"), "f.txt")
	ref := chain.MissionRefPrefix + id
	head := r.g.Git("rev-parse", ref)
	forged := r.landedLetter(id, mw, mwID, 1)
	r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, forged, head)

	out, err := r.m1nd(r.g.Dir, "mission", "heads", "--json")
	if err != nil || !strings.Contains(out, `"fault":{"commit":"`+forged+`","refused":"landed_law"`) {
		t.Fatalf("heads --json does not mark the forged landing: %v\n%s", err, out)
	}
	if out, _ := r.m1nd(r.g.Dir, "mission", "heads"); !strings.Contains(out, "BROKEN landed_law") {
		t.Fatalf("heads does not mark the forged landing:\n%s", out)
	}
	if out, _ := r.m1nd(r.g.Dir, "mission", "show", id); !strings.HasPrefix(out, "BROKEN      its history breaks the laws at "+forged[:12]+": landed_law") {
		t.Fatalf("mission show does not mark it:\n%s", out)
	}
	out, _ = r.m1nd(r.g.Dir, "status", "--json")
	var st struct {
		Broken []laws.RefFault `json:"broken"`
		Phases map[string]int  `json:"phases"`
	}
	if json.Unmarshal([]byte(out), &st) != nil || len(st.Broken) != 1 || st.Broken[0].Ref != ref || st.Broken[0].Code != string(rules.LandedLaw) {
		t.Fatalf("status does not list the forged landing as broken:\n%s", out)
	}
	// It is counted as broken, never among the landed it claims to be.
	if st.Phases[chain.BrokenPhase] != 1 || st.Phases[chain.PhaseLanded] != 0 {
		t.Fatalf("status counts the forged landing under %v", st.Phases)
	}
	if out, _ := r.m1nd(r.g.Dir, "status"); !strings.Contains(out, "\n  broken           1 (below: BROKEN)\n") || strings.Contains(out, "  landed ") {
		t.Fatalf("status text counts the forged landing:\n%s", out)
	}

	// A second mission at merge_wait on the forged one's block; then the
	// store gets a receipt no human imported, past the hook.
	id2, _, _ := r.mergeWait(r.candidate("gate://two"), "g.txt")
	if out, _ := r.m1nd(r.g.Dir, "status", "--json"); !strings.Contains(out, `"landing_bell":{"merge_wait":1,"ready":1}`) {
		t.Fatalf("the bell counts the broken head, or not the sound one:\n%s", out)
	}
	v1 := r.g.Git("rev-parse", brain.StoreRef)
	forgedStore := r.unprovenReceipt()
	r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", brain.StoreRef, forgedStore, v1)
	out, _ = r.m1nd(r.g.Dir, "blocks")
	if !strings.HasPrefix(out, "BROKEN   refs/m1nd/store at "+forgedStore[:12]) || !strings.Contains(out, "shown as store v1, the last version the laws accept") || !strings.Contains(out, "needs-evidence") || strings.Contains(out, "evidence-backed") {
		t.Fatalf("blocks shows the forged receipt as real:\n%s", out)
	}
	out, _ = r.m1nd(r.g.Dir, "blocks", "--json")
	if !strings.Contains(out, `"store_broken":{"ref":"refs/m1nd/store"`) || !strings.Contains(out, `"head_version":2,"lawful_version":1`) {
		t.Fatalf("blocks --json does not mark the store:\n%s", out)
	}

	// Nothing lands on a broken mission, nor on a broken store — also when
	// the kept verdicts (a cache in the runtime folder, which an agent can
	// write) are forged to call both sound.
	keysHead, _, _ := r.repo.ReadRef(brain.KeysRef)
	forgedCache := "store " + forgedStore + " keys " + keysHead.String() + "\n" + ref + " " + forged + " s\n" + brain.StoreRef + " " + forgedStore + " k\n"
	if err := os.WriteFile(laws.VerdictsPath(r.repo.RuntimeDir()), []byte(forgedCache), 0o600); err != nil {
		t.Fatal(err)
	}
	before := r.refs()
	for _, mission := range []string{id, id2} {
		_, err := r.flows.Land(ctx, ops.LandRequest{MissionID: mission, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now})
		refusal, ok := rules.AsRefusal(err)
		if !ok || refusal.Code != rules.BrokenHistory {
			t.Fatalf("landing %s: %v, want broken_history", mission, err)
		}
		if want := map[string]string{id: ref + " breaks the laws", id2: "refs/m1nd/store breaks the laws"}[mission]; !strings.Contains(refusal.Lesson, want) {
			t.Errorf("landing %s: the lesson %q does not say %q", mission, refusal.Lesson, want)
		}
	}
	if after := r.refs(); after != before {
		t.Fatalf("a refused landing wrote:\n%s", after)
	}
}

// unprovenReceipt writes, as raw git would, a store commit on the store's
// head (version N) that imports a receipt for sb_shop_core no human
// imported (a human-tty claim with no gesture behind it) as version N+1,
// and returns it.
func (r *bindRig) unprovenReceipt() string {
	head := r.g.Git("rev-parse", brain.StoreRef)
	doc := r.g.Git("show", head+":store.json")
	var version int
	if _, err := fmt.Sscanf(doc[strings.Index(doc, `"store_version": `):], `"store_version": %d`, &version); err != nil {
		r.t.Fatalf("store.json at %s: %v", head, err)
	}
	next := fmt.Sprint(version + 1)
	body := r.g.Git("show", head+":blocks/sb_shop_core.json")
	receipt := string(chain.CanonicalJSON(r.candidate("gate://nobody")))
	imported := `{"receipt":` + receipt + `,"store_version":` + next + `,"imported_by":"owner","imported_via":"human-tty","imported_at":"2026-11-30T10:02:00Z"}`
	if strings.Contains(body, `"receipts": []`) {
		body = strings.Replace(body, `"receipts": []`, `"receipts": [`+imported+`]`, 1)
	} else {
		body = strings.Replace(body, `"receipts": [`, `"receipts": [`+imported+`,`, 1)
	}
	doc = strings.Replace(doc, fmt.Sprintf(`"store_version": %d`, version), `"store_version": `+next, 1)
	blocks := r.g.GitStdin(strings.ReplaceAll(r.g.Git("ls-tree", head+":blocks"), blockBlob(r, head), r.g.GitStdin(body+"\n", "hash-object", "-w", "--stdin")), "mktree")
	tree := r.g.GitStdin("040000 tree "+blocks+"\tblocks\n100644 blob "+r.g.GitStdin(doc+"\n", "hash-object", "-w", "--stdin")+"\tstore.json\n", "mktree")
	return r.g.Git("commit-tree", tree, "-p", head, "-m", "store v"+next+": receipt_import sb_shop_core test\n\nM1nd-Store-Version: "+next+"\nM1nd-Agent: owner\nM1nd-Store-Op: receipt_import")
}

// blockBlob is the blob of blocks/sb_shop_core.json at store commit c.
func blockBlob(r *bindRig, c string) string {
	return r.g.Git("rev-parse", c+":blocks/sb_shop_core.json")
}

// TestRemotePolicyOnTerminalGestures: a guarded remote never takes the
// tray's old human-ui claim on a new commit; with no key registered it
// takes a terminal's archive (the brain's own weaker mode) unless it was
// installed with --require-passkey, the team's setting; once it holds a
// key it takes no terminal archive made after that key.
func TestRemotePolicyOnTerminalGestures(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	r.g.Git("push", "-q", "origin", brain.StoreRef+":"+brain.StoreRef)
	// archiveBy writes, by raw git past the local hook, an archive of a
	// fresh merge_wait mission with origin, and pushes it.
	archiveBy := func(origin string) (string, error) {
		id, _, _ := r.mergeWait(r.candidate("gate://"+origin), origin+".txt")
		p, err := r.flows.PrepareArchive(id, "owner", r.now)
		if err != nil {
			t.Fatal(err)
		}
		ref := chain.MissionRefPrefix + id
		forged := r.g.CommitFile(p.Parent.String(), chain.LetterFile, p.Change, p.Message(origin, nil))
		r.g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, forged, p.Parent.String())
		return r.g.TryGit("push", "origin", ref+":"+ref)
	}
	if out, err := archiveBy(rules.OriginHumanUI); err == nil || !strings.Contains(out, "human-ui was the tray's unsigned claim") {
		t.Fatalf("the remote took a human-ui archive: %v\n%s", err, out)
	}
	if out, err := archiveBy(rules.OriginHumanTTY); err != nil {
		t.Fatalf("the remote with no key refused a terminal archive: %v\n%s", err, out)
	}
	if out, err := r.m1nd(r.remote, "hooks", "install", "--bare", "--require-passkey"); err != nil {
		t.Fatalf("hooks install --bare --require-passkey: %v\n%s", err, out)
	}
	if script, _ := os.ReadFile(filepath.Join(r.remote, "hooks", "pre-receive")); !strings.Contains(string(script), "hooks run pre-receive --require-passkey") {
		t.Fatalf("the pre-receive does not require a passkey:\n%s", script)
	}
	if out, err := archiveBy(rules.OriginHumanTTY); err == nil || !strings.Contains(out, "takes human gestures signed by a passkey only") {
		t.Fatalf("a --require-passkey remote took a terminal archive: %v\n%s", err, out)
	}
	// A key on the remote (the set it trusts): no terminal archive after it.
	key := teamKey()
	if _, err := brain.RegisterFirstKey(ctx, r.repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "laptop", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	trustKeySet(t, r.remote, keySetFingerprint(t, r.repo))
	r.g.Git("push", "-q", "origin", brain.KeysRef+":"+brain.KeysRef)
	if out, err := archiveBy(rules.OriginHumanTTY); err == nil || !strings.Contains(out, "made after the first key does not count") {
		t.Fatalf("a remote holding a key took a terminal archive: %v\n%s", err, out)
	}
}

// TestFoldedMissionKeepsItsKeyAnchor: an archive signed by a key, folded
// into the archive, then the key removed: the removal anchors the folded
// mission as it anchors a live one, so verify and a fresh clone's first
// sync still take what the key signed before its removal.
func TestFoldedMissionKeepsItsKeyAnchor(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	old, kept := r.twoKeys()
	id, _, _ := r.mergeWait(r.candidate("gate://folded"), "folded.txt")
	p, err := r.flows.PrepareArchive(id, "owner", r.now)
	if err != nil {
		t.Fatal(err)
	}
	env, err := r.store.Env()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, rules.OriginHumanPasskey, old.Assert(p.Challenge(), nil), env); err != nil {
		t.Fatal(err)
	}
	folded, err := r.flows.Fold(ctx, ops.FoldRequest{Agent: "owner", Now: time.Now()})
	if err != nil || len(folded.Folded) != 1 || folded.Folded[0] != id {
		t.Fatalf("fold: %+v, %v", folded, err)
	}
	remove, err := brain.PrepareRemoveKey(ctx, r.repo, old.ID, r.now)
	if err != nil {
		t.Fatal(err)
	}
	ref := chain.MissionRefPrefix + id
	if _, anchored := remove.Next.Removed[0].Anchors[ref]; !anchored {
		t.Fatalf("the removal does not anchor the folded mission: %v", remove.Next.Removed[0].Anchors)
	}
	if _, err := remove.Commit(ctx, kept.Assert(remove.Prepared.Challenge(), nil)); err != nil {
		t.Fatal(err)
	}
	if out, err := r.m1nd(r.g.Dir, "verify"); err != nil || !strings.Contains(out, " 0 faults") {
		t.Fatalf("verify after the removal: %v\n%s", err, out)
	}
	if rep, raw := r.syncIn(r.g.Dir); !rep.OK {
		t.Fatalf("sync:\n%s", raw)
	}
	clone := r.secondClone()
	if rep, raw := r.syncIn(clone.Dir, "--trust", keySetFingerprint(t, r.repo)); !rep.OK {
		t.Fatalf("a fresh clone's first sync:\n%s", raw)
	}
	if out, err := r.m1nd(clone.Dir, "mission", "show", id); err != nil || !strings.Contains(out, "folded") {
		t.Fatalf("the fresh clone's mission show: %v\n%s", err, out)
	}
}
