package tray

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
)

// registerKey writes the brain's first key set, as the tray's
// registration does, for a software passkey.
func (f *fixture) registerKey(alg string) *rulestest.Authenticator {
	f.t.Helper()
	a := rulestest.New(f.t, alg)
	a.Origin = "http://localhost:" + f.srv.port
	// Registered as the tray does, anchoring what terminals confirmed
	// before (the runner pins the fixture approved).
	if _, err := brain.RegisterFirstKey(context.Background(), f.srv.repo, brain.Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, Label: "test", AddedAt: "2026-11-30T12:00:00Z"}, testNow); err != nil {
		f.t.Fatal(err)
	}
	f.login(a)
	return a
}

// login logs the fixture's page in with a, as the page does: options,
// an assertion over their challenge, the login that sets the cookie.
func (f *fixture) login(a *rulestest.Authenticator) {
	f.t.Helper()
	if status, out := f.tryLogin(a, nil); status != 200 || out["logged_in"] != true {
		f.t.Fatalf("login: %d %v", status, out)
	}
}

// tryLogin is login's two requests, tweak changing the assertion as
// rulestest.Assert's does; it returns the login's answer.
func (f *fixture) tryLogin(a *rulestest.Authenticator, tweak func(map[string]any, []byte) []byte) (int, map[string]any) {
	f.t.Helper()
	status, opts := f.do("POST", "/api/session/options", "{}", nil)
	if status != 200 {
		return status, opts
	}
	raw, err := base64.RawURLEncoding.DecodeString(opts["publicKey"].(map[string]any)["challenge"].(string))
	if err != nil {
		f.t.Fatal(err)
	}
	p := a.Assert(raw, tweak)
	body, _ := json.Marshal(map[string]any{"credential": map[string]any{"id": p.CredentialID, "type": "public-key", "response": map[string]any{
		"authenticatorData": p.AuthenticatorData, "clientDataJSON": p.ClientDataJSON, "signature": p.Signature}}})
	return f.do("POST", "/api/session/login", string(body), nil)
}

// logout forgets the page's cookies: what another local process sends.
func (f *fixture) logout() {
	jar, _ := cookiejar.New(nil)
	f.client.Jar = jar
}

// options asks for a gesture's challenge.
func (f *fixture) gestureOptions(body string) (int, map[string]any, []byte) {
	f.t.Helper()
	status, out := f.do("POST", "/api/gesture/options", body, nil)
	if status != 200 {
		return status, out, nil
	}
	challenge := out["publicKey"].(map[string]any)["challenge"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(challenge)
	if err != nil {
		f.t.Fatalf("challenge %q: %v", challenge, err)
	}
	id, _ := out["gesture_id"].(string)
	if id == "" {
		f.t.Fatalf("options handed out no gesture_id: %v", out)
	}
	if f.ids == nil {
		f.ids = map[string]string{}
	}
	f.ids[challenge] = id
	return status, out, raw
}

// commit sends an assertion for the gesture options handed out with
// challenge, by its id, as the page does.
func (f *fixture) commit(challenge []byte, p *rules.Proof) (int, map[string]any) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"gesture_id": f.ids[base64.RawURLEncoding.EncodeToString(challenge)],
		"credential": map[string]any{"id": p.CredentialID, "type": "public-key", "response": map[string]any{
			"authenticatorData": p.AuthenticatorData, "clientDataJSON": p.ClientDataJSON, "signature": p.Signature}},
	})
	return f.do("POST", "/api/gesture/commit", string(body), nil)
}

// signed makes a gesture signed by a.
func (f *fixture) signed(a *rulestest.Authenticator, body string) (int, map[string]any) {
	f.t.Helper()
	status, out, challenge := f.gestureOptions(body)
	if status != 200 {
		return status, out
	}
	return f.commit(challenge, a.Assert(challenge, nil))
}

// TestSignedGestures: with a registered passkey, a tray gesture is written
// only with an assertion by that key over exactly the change prepared; the
// commit carries the proof and the laws accept it. A tampered assertion, an
// unregistered key, a proof for another change, a reused challenge and the
// terminal's origin are refused, nothing written.
func TestSignedGestures(t *testing.T) {
	f := newFixture(t, false)
	storeAt := func() string { return f.g.Git("rev-parse", "refs/m1nd/store") }
	// No passkey yet: the tray makes no gesture.
	if status, out, _ := f.gestureOptions(`{"gesture":"ratify","expected_store_version":1}`); status != 403 || out["refused"] != "human_gesture_required" {
		t.Fatalf("a gesture before any passkey: %d %v", status, out)
	}
	a := f.registerKey("es256")
	f.do("POST", "/api/candidate_edit", `{"expected_store_version":1,"by":"owner","ops":[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]}`, nil)
	ratify := `{"gesture":"ratify","expected_store_version":2,"block_ids":["sb_shop_core"]}`
	before := storeAt()
	for label, make := range map[string]func(challenge []byte) *rules.Proof{
		"a tampered signature": func(c []byte) *rules.Proof {
			p := a.Assert(c, nil)
			sig, _ := base64.RawURLEncoding.DecodeString(p.Signature)
			sig[len(sig)-1] ^= 1
			p.Signature = base64.RawURLEncoding.EncodeToString(sig)
			return p
		},
		"an unregistered key": func(c []byte) *rules.Proof { return rulestest.New(t, "es256").Assert(c, nil) },
		"a proof of another change": func(c []byte) *rules.Proof {
			return a.Assert(rules.GestureChallenge(rules.GestureRatify, []byte("another store")), nil)
		},
		"no user present": func(c []byte) *rules.Proof {
			return a.Assert(c, func(_ map[string]any, ad []byte) []byte { ad[32] = 0; return ad })
		},
	} {
		status, out, challenge := f.gestureOptions(ratify)
		if status != 200 {
			t.Fatalf("%s: options: %d %v", label, status, out)
		}
		if status, out := f.commit(challenge, make(challenge)); status != 403 || out["refused"] != "human_gesture_required" {
			t.Errorf("%s: %d %v", label, status, out)
		}
	}
	if storeAt() != before {
		t.Fatal("a refused gesture wrote the store")
	}
	// The signed ratification, then its challenge again.
	status, out, challenge := f.gestureOptions(ratify)
	if status != 200 {
		t.Fatalf("options: %d %v", status, out)
	}
	proof := a.Assert(challenge, nil)
	if status, out := f.commit(challenge, proof); status != 200 || out["store_version"] != 3.0 {
		t.Fatalf("a signed ratification: %d %v", status, out)
	}
	msg := f.g.Git("log", "-1", "--format=%B", "refs/m1nd/store")
	if !strings.Contains(msg, "M1nd-Origin: human-passkey") || !strings.Contains(msg, rules.ProofTrailer+": "+rules.EncodeProof(proof)) {
		t.Fatalf("the ratification's commit:\n%s", msg)
	}
	if status, out := f.commit(challenge, proof); status != 403 || out["field"] != "gesture_id" {
		t.Fatalf("a reused gesture: %d %v", status, out)
	}
	// The terminal's origin no longer counts, in the store and in post.
	if _, err := f.srv.flows.Ratify(context.Background(), brain.RatifyRequest{WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 3, Agent: "owner", Now: testNow}, Origin: rules.OriginHumanTTY}); err == nil {
		t.Fatal("a terminal ratification with a passkey registered was written")
	}
	// The gesture options refuse what the gesture would: a stale version.
	if status, out, _ := f.gestureOptions(`{"gesture":"ratify","expected_store_version":2}`); status != 409 || out["refused"] != "store_version_conflict" {
		t.Fatalf("a stale ratification: %d %v", status, out)
	}
	if status, out, _ := f.gestureOptions(`{"gesture":"dance"}`); status != 422 || out["field"] != "gesture" {
		t.Fatalf("no such gesture: %d %v", status, out)
	}
	// An origin in the body is no field at all.
	if status, out := f.do("POST", "/api/mission_post", `{"agent_id":"owner","letter":{},"archived_via":"human-ui"}`, nil); status != 422 || out["refused"] != "invalid_letter" {
		t.Fatalf("archived_via in a post: %d %v", status, out)
	}
}

// TestLandingThroughTheAPI: a signed receipt import lands no mission: a
// landed letter naming it is refused landed_law (the landing's import names
// its mission). An archive is signed like every other gesture.
func TestLandingThroughTheAPI(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("ed25519")
	ctx := context.Background()
	m := f.missions()
	mw, mwID := f.mergeWait()
	status, out := f.signed(a, fmt.Sprintf(`{"gesture":"receipt_import","expected_store_version":1,"block_id":"sb_shop_core","receipt":%s}`, chain.CanonicalJSON(mw.ReceiptCandidate)))
	if status != 200 || out["store_version"] != 2.0 {
		t.Fatalf("signed import: %d %v", status, out)
	}
	landed := chain.Next(mw, mwID, testNow)
	landed.Phase = chain.PhaseLanded
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: 2}
	status, out = f.do("POST", "/api/mission_post", fmt.Sprintf(`{"agent_id":"owner","letter":%s}`, landed.Canonical()), nil)
	if status != 422 || out["refused"] != "landed_law" || !strings.Contains(fmt.Sprint(out["lesson"]), "lands no mission") {
		t.Fatalf("a landed letter naming an import that lands no mission: %d %v", status, out)
	}
	// The landing gesture lands it: its own import, naming the mission.
	status, out = f.signed(a, fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mw.MissionID))
	if status != 200 || out["imported"] != true || out["store_version"] != 3.0 || out["merge"] != "no-branch" {
		t.Fatalf("the landing: %d %v", status, out)
	}
	_, blocks := f.do("GET", "/api/system_blocks", "", nil)
	for _, b := range blocks["blocks"].([]any) {
		if bm := b.(map[string]any); bm["block_id"] == "sb_shop_core" && bm["colour"] != "evidence-backed" {
			t.Fatalf("core after landing: %v", bm["colour"])
		}
	}
	// An archive: the terminal's origin no longer counts; signed, it does.
	mw2, _ := f.mergeWait()
	if _, err := m.Archive(ctx, mw2.MissionID, "owner", rules.OriginHumanTTY, testNow); err == nil {
		t.Fatal("a terminal archive with a passkey registered was posted")
	}
	status, out = f.signed(a, fmt.Sprintf(`{"gesture":"archive","mission_id":%q}`, mw2.MissionID))
	if status != 200 || out["phase"] != "archived" {
		t.Fatalf("signed archive: %d %v", status, out)
	}
	if faults, _, err := laws.Verify(ctx, f.srv.repo, nil); err != nil || len(faults) != 0 {
		t.Fatalf("verify after the tray's gestures: %v %v", faults, err)
	}
}

// mergeWait opens a mission on sb_shop_core and walks it to merge_wait
// with a green gate and its receipt candidate, as a runner would.
func (f *fixture) mergeWait() (*chain.Letter, string) {
	f.t.Helper()
	ctx, m := context.Background(), f.missions()
	open, err := m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: testNow.Add(-time.Hour)})
	if err != nil {
		f.t.Fatal(err)
	}
	head, _ := m.Current(open.MissionID)
	mw := chain.Next(head.Letter, head.HeadLetterID, testNow.Add(-10*time.Minute))
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	mw.Gate = &chain.Gate{Command: fixtureGate, ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("ab", 32)}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: mw.Gate.ArtifactHash, EvidenceRefs: []string{"gate://" + open.MissionID}, Command: mw.Gate.Command, Cwd: ".", ExitStatus: &exit,
			StartedAt: "2026-11-30T11:40:00Z", EndedAt: "2026-11-30T11:41:00Z"}}
	att := f.runner.Sign(f.t, mw)
	res, err := m.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att})
	if err != nil {
		f.t.Fatal(err)
	}
	return mw, res.LetterID
}

// workBranch makes the mission's work branch m1nd/<id>: one commit on
// main's tip writing files, made in the main worktree, which is left on
// main and clean. Its side record names main as the target, as runnerd
// records at spawn.
func (f *fixture) workBranch(id string, files map[string]string) string {
	f.t.Helper()
	base := f.g.Git("rev-parse", "main")
	f.g.Git("checkout", "-q", "-b", "m1nd/"+id)
	tip := f.g.CommitFiles("agent work", files)
	f.g.Git("checkout", "-q", "main")
	side := &runs.Side{MissionID: id, RunnerID: "b1", Branch: "m1nd/" + id, Base: base, Target: "main", Created: "2026-11-30T11:00:00Z"}
	if err := runs.WriteSide(f.srv.repo.RuntimeDir(), side); err != nil {
		f.t.Fatal(err)
	}
	f.gated(id)
	return tip
}

// gated posts a merge_wait letter after id's head whose gate tested the
// tip of m1nd/<id>, as runnerd does after a gate (or a re-gate) passed.
func (f *fixture) gated(id string) {
	f.t.Helper()
	head, err := f.srv.flows.Current(id)
	if err != nil {
		f.t.Fatal(err)
	}
	next := chain.Next(head.Letter, head.HeadLetterID, testNow.Add(-5*time.Minute))
	cand := *next.ReceiptCandidate
	cand.Evidence.EvidenceRefs = []string{"gate://" + id, "commit:" + f.g.Git("rev-parse", "m1nd/"+id), "tree:" + f.g.Git("rev-parse", "m1nd/"+id+"^{tree}")}
	next.ReceiptCandidate = &cand
	att := f.runner.Sign(f.t, next)
	if _, err := f.srv.flows.Post(context.Background(), chain.PostRequest{Body: next.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		f.t.Fatal(err)
	}
}

// TestLandGesture: the tray's "land" is one signed gesture. Signed, it
// imports the receipt, fast-forwards main (checked out, clean) to the
// agent's commit and posts landed; a branch that conflicts with main is
// refused merge_conflict at options and nothing moves; a tampered
// assertion writes nothing.
func TestLandGesture(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	refs := func() string { return f.g.Git("for-each-ref", "--format=%(objectname) %(refname)") }
	head := func(id string) string {
		h, err := f.srv.flows.Current(id)
		if err != nil {
			t.Fatal(err)
		}
		return h.Letter.Phase
	}

	// A tampered assertion: refused, no ref moves, the mission waits.
	mw, _ := f.mergeWait()
	tip := f.workBranch(mw.MissionID, map[string]string{"core/a.go": "package core\n\n// agent work\n"})
	land := fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mw.MissionID)
	before := refs()
	status, out, challenge := f.gestureOptions(land)
	if status != 200 {
		t.Fatalf("land options: %d %v", status, out)
	}
	p := a.Assert(challenge, nil)
	sig, _ := base64.RawURLEncoding.DecodeString(p.Signature)
	sig[len(sig)-1] ^= 1
	p.Signature = base64.RawURLEncoding.EncodeToString(sig)
	if status, out := f.commit(challenge, p); status != 403 || out["refused"] != "human_gesture_required" {
		t.Fatalf("a tampered landing: %d %v", status, out)
	}
	if after := refs(); after != before || head(mw.MissionID) != chain.PhaseMergeWait {
		t.Fatalf("a tampered landing wrote:\n%s\nwas\n%s", after, before)
	}

	// Signed: main moves to the agent's commit, in its clean worktree too.
	status, out = f.signed(a, land)
	if status != 200 || out["ok"] != true || out["merge"] != "fast-forward" || out["target"] != "main" || out["branch"] != "m1nd/"+mw.MissionID ||
		out["commit"] != tip || out["worktree_updated"] != true || out["imported"] != true || out["store_version"] != 2.0 {
		t.Fatalf("a signed landing: %d %v", status, out)
	}
	if got := f.g.Git("rev-parse", "main"); got != tip {
		t.Fatalf("main is at %s, want the agent's commit %s", got, tip)
	}
	if s := f.g.Git("status", "--porcelain"); s != "" || !strings.Contains(f.g.Git("show", "HEAD:core/a.go"), "agent work") {
		t.Fatalf("the main worktree after the landing: %q", s)
	}
	if phase := head(mw.MissionID); phase != chain.PhaseLanded {
		t.Fatalf("the mission is %s after the landing", phase)
	}
	msg := f.g.Git("log", "-1", "--format=%B", "refs/m1nd/store")
	if !strings.Contains(msg, "M1nd-Origin: human-passkey") || !strings.Contains(msg, rules.ProofTrailer+": ") {
		t.Fatalf("the import's commit carries no passkey proof:\n%s", msg)
	}
	// Landed, its options say so and sign nothing.
	if status, out := f.do("POST", "/api/gesture/options", land, nil); status != 200 || out["done"] != true || out["already_landed"] != true {
		t.Fatalf("land options of a landed mission: %d %v", status, out)
	}

	// A branch that conflicts with main: refused at options, nothing moves.
	mw2, _ := f.mergeWait()
	f.workBranch(mw2.MissionID, map[string]string{"core/a.go": "package core\n\n// theirs\n"})
	f.g.CommitFiles("ours", map[string]string{"core/a.go": "package core\n\n// ours\n"})
	before = refs()
	status, out, _ = f.gestureOptions(fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mw2.MissionID))
	if status != 409 || out["refused"] != "merge_conflict" || !strings.Contains(fmt.Sprint(out["lesson"]), "core/a.go") {
		t.Fatalf("a conflicting landing: %d %v", status, out)
	}
	if after := refs(); after != before || head(mw2.MissionID) != chain.PhaseMergeWait {
		t.Fatalf("a refused landing wrote:\n%s\nwas\n%s", after, before)
	}
}

// TestLookAlikeLandingsAreNotSubstituted: two look-alike missions wait in
// merge_wait on one block, their work branches alike (the agent's holds
// what it wants landed). In the same second
// the human asks to land B and an agent asks to land A (the options are
// anyone's to ask for). Each gesture waits under its own random id and
// binds its own mission, branch and commits: the human's signature lands B
// and only B, three rounds running; the agent's id with the human's proof
// is refused; and the options reply says what the signature binds.
func TestLookAlikeLandingsAreNotSubstituted(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	for round := 1; round <= 3; round++ {
		mwA, _ := f.mergeWait()
		mwB, _ := f.mergeWait()
		// Look-alike: the same block, the same file; the agent's branch
		// holds what the agent wants landed.
		f.workBranch(mwA.MissionID, map[string]string{fmt.Sprintf("core/r%d.go", round): "package core\n\n// the agent's\n"})
		f.workBranch(mwB.MissionID, map[string]string{fmt.Sprintf("core/r%d.go", round): "package core\n"})
		// The human's options, then the agent's, in the same second.
		_, human, humanChallenge := f.gestureOptions(fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mwB.MissionID))
		_, agent, agentChallenge := f.gestureOptions(fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mwA.MissionID))
		if human["gesture_id"] == agent["gesture_id"] || string(humanChallenge) == string(agentChallenge) {
			t.Fatalf("round %d: two landings share an id or a challenge: %v %v", round, human["gesture_id"], agent["gesture_id"])
		}
		binds := fmt.Sprint(human["binds"])
		for _, want := range []string{"landing " + mwB.MissionID, "m1nd/" + mwB.MissionID + " at ", "lands in main at ", "main then holds tree ", "store v"} {
			if !strings.Contains(binds, want) {
				t.Errorf("round %d: the human's options say it binds %s; want %q in it", round, binds, want)
			}
		}
		proof := a.Assert(humanChallenge, nil)
		// The agent's id with the human's proof: refused, nothing written.
		before := f.g.Git("for-each-ref", "--format=%(objectname) %(refname)")
		if status, out := f.commit(agentChallenge, proof); status != 403 || out["refused"] != "human_gesture_required" {
			t.Fatalf("round %d: the agent's gesture with the human's proof: %d %v", round, status, out)
		}
		if after := f.g.Git("for-each-ref", "--format=%(objectname) %(refname)"); after != before {
			t.Fatalf("round %d: a refused commit wrote:\n%s", round, after)
		}
		// The human's own: B lands, A waits.
		if status, out := f.commit(humanChallenge, proof); status != 200 || out["mission_id"] != mwB.MissionID || out["branch"] != "m1nd/"+mwB.MissionID {
			t.Fatalf("round %d: the human's landing: %d %v", round, status, out)
		}
		for id, want := range map[string]string{mwA.MissionID: chain.PhaseMergeWait, mwB.MissionID: chain.PhaseLanded} {
			if h, err := f.srv.flows.Current(id); err != nil || h.Letter.Phase != want {
				t.Fatalf("round %d: %s is %v (%v), want %s", round, id, h, err, want)
			}
		}
		if holds, err := f.g.TryGit("merge-base", "--is-ancestor", "m1nd/"+mwA.MissionID, "main"); err == nil {
			t.Fatalf("round %d: main holds the agent's branch m1nd/%s %s", round, mwA.MissionID, holds)
		}
		// The import names B and the commits the human saw.
		snap, _, _ := f.srv.flows.Snapshot()
		rs := snap.Block("sb_shop_core").Receipts
		if l := rs[len(rs)-1].Lands; l == nil || l.MissionID != mwB.MissionID || l.Target != "main" || l.BranchHead != f.g.Git("rev-parse", "m1nd/"+mwB.MissionID) {
			t.Fatalf("round %d: the import names %+v", round, l)
		}
	}
}

// TestALandingWhoseTargetMovedWritesNothing: the human is shown a landing,
// then the target moves before the signature comes back. The signature
// binds the commits the human saw, and no gate passed on the merge with
// the new target: the commit is refused stale_gate, nothing is written;
// once the merge is gated (runnerd's queue), the landing fast-forwards.
func TestALandingWhoseTargetMovedWritesNothing(t *testing.T) {
	f := newFixture(t, false)
	a := f.registerKey("es256")
	mw, _ := f.mergeWait()
	f.workBranch(mw.MissionID, map[string]string{"core/b.go": "package core\n"})
	_, _, challenge := f.gestureOptions(fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mw.MissionID))
	f.g.CommitFiles("main moves on", map[string]string{"README.md": "moved\n"})
	before := f.g.Git("for-each-ref", "--format=%(objectname) %(refname)")
	status, out := f.commit(challenge, a.Assert(challenge, nil))
	if status != 409 || out["refused"] != "stale_gate" || !strings.Contains(fmt.Sprint(out["lesson"]), "main moved since the gate of "+mw.MissionID) {
		t.Fatalf("a landing signed before main moved: %d %v", status, out)
	}
	if after := f.g.Git("for-each-ref", "--format=%(objectname) %(refname)"); after != before {
		t.Fatalf("a refused landing wrote:\n%s", after)
	}
	// The queue's re-gate: main merged into the branch, gated.
	f.g.Git("checkout", "-q", "m1nd/"+mw.MissionID)
	f.g.Git("merge", "-q", "--no-edit", "main")
	merged := f.g.Git("rev-parse", "HEAD")
	f.g.Git("checkout", "-q", "main")
	f.gated(mw.MissionID)
	if status, out := f.signed(a, fmt.Sprintf(`{"gesture":"land","mission_id":%q}`, mw.MissionID)); status != 200 || out["merge"] != "fast-forward" || out["commit"] != merged {
		t.Fatalf("the landing of the gated merge: %d %v", status, out)
	}
}
