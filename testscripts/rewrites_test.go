package testscripts

// A rewrite is never a race (issue 40): on a remote with no m1nd hook,
// anyone may force-push a new history over a ref. Honest clones refuse it
// as a forgery instead of parking their own letters and adopting it: a
// chain that shares no commit with theirs (the brain's registration
// re-rooted to register another name; a landed mission re-rooted back to
// judging), or one that forks below a landed letter. Each is held,
// reported by sync and status, and replaced on the remote by sync
// --repair; the next sync of every clone is clean again.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// hooklessRig is a bindRig whose remote runs no m1nd hook.
func hooklessRig(t *testing.T) *bindRig {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "shop.git")
	bareRepo(t, remote, false)
	b := newRemoteBrainAt(t, remote, nil)
	return &bindRig{remoteBrain: b, flows: ops.New(b.repo, "shop")}
}

func TestRewrittenRemoteIsHeldNotRaced(t *testing.T) {
	ctx := context.Background()
	r := hooklessRig(t)
	landed, _, _ := r.mergeWait(r.candidate("gate://rewrites"), "a.txt")
	if _, err := r.flows.Land(ctx, ops.LandRequest{MissionID: landed, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now}); err != nil {
		t.Fatalf("landing: %v", err)
	}
	if out, err := r.m1nd(r.g.Dir, "sync"); err != nil {
		t.Fatalf("the first sync: %v\n%s", err, out)
	}
	b := r.secondClone()
	if rep, out := r.syncIn(b.Dir); !rep.OK {
		t.Fatalf("the second clone's first sync:\n%s", out)
	}
	refLanded := chain.MissionRefPrefix + landed

	// The attacker: a brain registration of its own, and the landed
	// mission's first letter committed again as a new root, both pushed
	// over the remote's by force.
	evil := gittest.Init(t, "evil")
	evil.Git("config", "m1nd.brain", "evil")
	evil.CommitFiles("files", map[string]string{"README.md": "x\n"})
	if out, err := r.m1nd(evil.Dir, "init"); err != nil {
		t.Fatalf("the attacker's init: %v\n%s", err, out)
	}
	evil.Git("push", "-q", "--force", r.remote, brain.RegistrationRef+":"+brain.RegistrationRef)
	root := strings.TrimSpace(r.g.Git("rev-list", "--max-parents=0", refLanded))
	tree := strings.TrimSpace(r.g.Git("rev-parse", root+"^{tree}"))
	reRooted := strings.TrimSpace(r.g.Git("commit-tree", tree, "-m", landed+" #1 judging sb_shop_core\n\nM1nd-Agent: runnerd:b1"))
	r.g.Git("push", "-q", "--force", r.remote, reRooted+":"+refLanded)

	before := map[string]string{}
	for _, clone := range []*gittest.Repo{r.g, b} {
		before[clone.Dir] = clone.Git("for-each-ref", "--format=%(objectname) %(refname)", "refs/m1nd/brain", refLanded)
	}
	for _, clone := range []*gittest.Repo{r.g, b} {
		rep, out := r.syncIn(clone.Dir)
		if rep.OK || len(rep.Conflicts) != 0 {
			t.Fatalf("a sync adopted a rewrite as a race:\n%s", out)
		}
		for _, ref := range []string{brain.RegistrationRef, refLanded} {
			f := faultOf(rep.RefusedRemote, ref)
			if f == nil || f.Code != string(rules.BrokenHistory) || !strings.Contains(f.Lesson, "shares no commit with this clone's") || !strings.Contains(f.Lesson, "m1nd sync --repair "+ref) {
				t.Fatalf("%s is not refused as a rewrite: %+v\n%s", ref, f, out)
			}
		}
		if f := faultOf(rep.RefusedRemote, brain.RegistrationRef); !strings.Contains(f.Lesson, "its identity and never changes") {
			t.Errorf("the re-rooted brain's lesson: %s", f.Lesson)
		}
		if after := clone.Git("for-each-ref", "--format=%(objectname) %(refname)", "refs/m1nd/brain", refLanded); after != before[clone.Dir] {
			t.Fatalf("a refused rewrite moved refs here:\n%s\nwas\n%s", after, before[clone.Dir])
		}
		if parked := clone.Git("for-each-ref", "refs/m1nd/conflicts/"); parked != "" {
			t.Fatalf("a rewrite parked this clone's letters:\n%s", parked)
		}
		if out, _ := r.m1nd(clone.Dir, "brain", "show"); !strings.HasPrefix(out, "brain shop ") {
			t.Fatalf("the clone's brain after the refused rewrite: %s", out)
		}
		st, _ := r.m1nd(clone.Dir, "status")
		if !strings.Contains(st, brain.RegistrationRef) || !strings.Contains(st, refLanded) || !strings.Contains(st, "--repair") {
			t.Fatalf("status does not list what sync held:\n%s", st)
		}
	}

	// The repair puts the clone's history back; every clone's next sync is
	// clean, and status lists nothing held.
	for _, ref := range []string{brain.RegistrationRef, refLanded} {
		if out, err := r.m1nd(r.g.Dir, "sync", "--repair", ref); err != nil || !strings.Contains(out, "repaired "+ref) {
			t.Fatalf("sync --repair %s: %v\n%s", ref, err, out)
		}
	}
	for _, clone := range []*gittest.Repo{r.g, b} {
		if rep, out := r.syncIn(clone.Dir); !rep.OK || len(rep.Held) != 0 {
			t.Fatalf("a sync after the repair:\n%s", out)
		}
		if st, _ := r.m1nd(clone.Dir, "status"); strings.Contains(st, "held") {
			t.Fatalf("status after the repair still lists a held ref:\n%s", st)
		}
	}
	if got := strings.TrimSpace(r.g.Git("ls-remote", r.remote, refLanded)); !strings.HasPrefix(got, strings.TrimSpace(r.g.Git("rev-parse", refLanded))) {
		t.Fatalf("the remote's %s after the repair: %s", refLanded, got)
	}
}

// TestForkBelowALandedLetterIsARewrite: a remote chain that shares this
// clone's first letters but leaves out its landed one is refused as a
// rewrite, not parked as a race: a landed letter is never replaced.
func TestForkBelowALandedLetterIsARewrite(t *testing.T) {
	ctx := context.Background()
	r := hooklessRig(t)
	landed, _, _ := r.mergeWait(r.candidate("gate://below"), "b.txt")
	if _, err := r.flows.Land(ctx, ops.LandRequest{MissionID: landed, Agent: "owner", Origin: rules.OriginHumanTTY, Now: r.now}); err != nil {
		t.Fatalf("landing: %v", err)
	}
	if out, err := r.m1nd(r.g.Dir, "sync"); err != nil {
		t.Fatalf("the first sync: %v\n%s", err, out)
	}
	ref := chain.MissionRefPrefix + landed
	// A letter after the judging one, on the remote, by force: the chain
	// forks below merge_wait and landed.
	first := strings.TrimSpace(r.g.Git("rev-list", "--max-parents=0", ref))
	m := r.flows
	log, err := m.Log(ctx, landed)
	if err != nil {
		t.Fatal(err)
	}
	next := chain.Next(log[0].Decoded, log[0].LetterID, r.now)
	next.Phase = chain.PhaseExecuting
	forged := r.g.CommitFile(first, chain.LetterFile, next.Canonical(), landed+" #2 executing sb_shop_core\n\nM1nd-Letter: "+chain.LetterID(next.Canonical())+"\nM1nd-Agent: runnerd:b1\n")
	r.g.Git("push", "-q", "--force", r.remote, forged+":"+ref)
	head := r.g.Git("rev-parse", ref)
	rep, out := r.syncIn(r.g.Dir)
	f := faultOf(rep.RefusedRemote, ref)
	if rep.OK || len(rep.Conflicts) != 0 || f == nil || f.Code != string(rules.BrokenHistory) || !strings.Contains(f.Lesson, "drops this clone's final letter") {
		t.Fatalf("a fork below the landed letter was not refused as a rewrite: %+v\n%s", f, out)
	}
	if after := r.g.Git("rev-parse", ref); after != head {
		t.Fatalf("the landed mission moved to %s", after)
	}
	if out, err := r.m1nd(r.g.Dir, "sync", "--repair", ref); err != nil {
		t.Fatalf("sync --repair: %v\n%s", err, out)
	}
	if rep, out := r.syncIn(r.g.Dir); !rep.OK {
		t.Fatalf("the sync after the repair:\n%s", out)
	}
}

// TestCopiedKeySquatsNothing: an agent pushes first a key set that holds
// the team's own public key, with before_first_key anchors of its own (so
// that its terminal gestures would stand as made before the first key). A
// remote trusting the team's set by its fingerprint refuses it: the
// fingerprint is the set's, not the key's.
func TestCopiedKeySquatsNothing(t *testing.T) {
	ctx := context.Background()
	r := newBindRig(t)
	key := teamKey()
	if _, err := brain.RegisterFirstKey(ctx, r.repo, brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "alice", AddedAt: chain.Timestamp(r.now)}, r.now); err != nil {
		t.Fatal(err)
	}
	fp := keySetFingerprint(t, r.repo)
	trustKeySet(t, r.remote, fp)

	evil := gittest.Init(t, "shop")
	evil.CommitFiles("files", map[string]string{"README.md": "x\n"})
	anchor := strings.TrimSpace(evil.Git("rev-parse", "HEAD"))
	set := &brain.KeySet{Schema: brain.KeysSchema, Version: 1,
		Keys:           []brain.Passkey{{CredentialID: key.ID, PublicKey: key.Key.PKIX, Label: "alice", AddedAt: chain.Timestamp(r.now)}},
		BeforeFirstKey: brain.Anchors{brain.StoreRef: anchor}}
	blob := evil.GitStdin(string(set.Canonical()), "hash-object", "-w", "--stdin")
	tree := evil.GitStdin("100644 blob "+blob+"\t"+brain.KeysFile+"\n", "mktree")
	squat := strings.TrimSpace(evil.Git("commit-tree", tree, "-m", "keys v1: register alice"))
	out, err := evil.TryGit("push", r.remote, squat+":"+brain.KeysRef)
	if err == nil || !strings.Contains(out, "this remote takes only the first key set its admin trusts") || !strings.Contains(out, "it trusts "+fp) {
		t.Fatalf("the remote took a set that copies the team's key: %v\n%s", err, out)
	}
	if out, err := r.m1nd(r.g.Dir, "sync"); err != nil {
		t.Fatalf("the team's own first set after the squat: %v\n%s", err, out)
	}
}
