package testscripts

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// TestSelfCertifiedLandingByRawGit: a landed letter written with git's own
// plumbing, in canonical bytes and extending a real merge_wait head, but
// naming a store version that holds no human-imported candidate, is
// refused landed_law by the guard of a worktree where agents write and by
// a bare remote's pre-receive; written from an unguarded checkout, m1nd
// verify names it, m1nd sync holds it back, and the remote declines it. The real landing (the candidate imported, the letter naming
// that version) passes the hook and the remote, store and letter pushed
// together.
func TestSelfCertifiedLandingByRawGit(t *testing.T) {
	ctx := context.Background()
	b := newRemoteBrain(t)
	g, repo, store, now, run := b.g, b.repo, b.store, b.now, b.m1nd

	// A merge_wait mission, written through the laws.
	m := &chain.Missions{Repo: repo, Brain: "shop", Blocks: store}
	opened, err := m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "runnerd:b1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := m.Current(opened.MissionID)
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	mw.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"gate://" + opened.MissionID}, Command: "go test ./core/...", Cwd: ".", ExitStatus: &exit,
			StartedAt: now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	m.Gates = store
	att := b.runner.Sign(t, mw)
	if _, err := m.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att}); err != nil {
		t.Fatal(err)
	}
	ref := chain.MissionRefPrefix + opened.MissionID
	head, _ = m.Current(opened.MissionID)
	g.Git("push", "-q", "origin", ref+":"+ref, brain.StoreRef+":"+brain.StoreRef)

	// landed writes a landed letter naming version on the merge_wait head,
	// as raw git would, and returns its commit.
	landed := func(version int64) string {
		l := chain.Next(mw, head.HeadLetterID, now.Add(time.Minute))
		l.Phase = chain.PhaseLanded
		l.Receipt = &chain.Receipt{Imported: true, StoreVersion: version}
		id := chain.LetterID(l.Canonical())
		msg := opened.MissionID + " #3 landed sb_shop_core\n\nM1nd-Letter: " + id + "\nM1nd-Agent: owner\n"
		return g.CommitFile(head.Commit.String(), chain.LetterFile, l.Canonical(), msg)
	}
	forged := landed(1) // store v1 holds no receipt at all
	out, err := g.TryGit("update-ref", ref, forged, head.Commit.String())
	if err == nil || !strings.Contains(out, "m1nd: refused: landed_law: store v1 holds no receipt for sb_shop_core") {
		t.Fatalf("the local hook let a self-certified landing through: %v\n%s", err, out)
	}
	if got := g.Git("rev-parse", ref); got != head.Commit.String() {
		t.Fatalf("the refused landing moved the ref to %s", got)
	}

	// A worktree no agent writes in (the human's other checkout) is not
	// guarded: the raw write goes in there; verify names it, sync holds it
	// back, and the remote declines it.
	other := filepath.Join(t.TempDir(), "checkout")
	g.Git("worktree", "add", "-q", "--detach", other)
	g.Git("-C", other, "update-ref", ref, forged, head.Commit.String())
	out, err = run(g.Dir, "verify")
	if exitCode(err) != 3 || !strings.Contains(out, forged[:12]) || !strings.Contains(out, "landed_law") {
		t.Fatalf("verify (exit %d) did not name the forged landing %s:\n%s", exitCode(err), forged[:12], out)
	}
	out, err = run(other, "sync")
	if err == nil || !strings.Contains(out, ref) || !strings.Contains(out, "landed_law") {
		t.Fatalf("sync pushed, or did not name, the forged landing (%v):\n%s", err, out)
	}
	out, err = g.TryGit("push", "origin", ref+":"+ref)
	if err == nil || !strings.Contains(out, "landed_law") {
		t.Fatalf("the remote took a self-certified landing: %v\n%s", err, out)
	}
	if got := g.Git("ls-remote", "origin", ref); !strings.HasPrefix(got, head.Commit.String()) {
		t.Fatalf("the remote moved to %s", got)
	}
	g.Git("-c", "core.hooksPath=/dev/null", "update-ref", ref, head.Commit.String(), forged)

	// An import of the same candidate that lands no mission (m1nd receipt
	// import, store v2) does not land it either: the landing's import
	// names the mission.
	plain, err := store.ImportReceipt(ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 1, Agent: "owner", Now: now},
		BlockID:      "sb_shop_core", Receipt: chain.CanonicalJSON(mw.ReceiptCandidate), Origin: rules.OriginHumanTTY,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := g.TryGit("update-ref", ref, landed(plain.StoreVersion), head.Commit.String()); err == nil || !strings.Contains(out, "landed_law") || !strings.Contains(out, "lands no mission") {
		t.Fatalf("the local hook let a landing on an import of no mission through: %v\n%s", err, out)
	}

	// The real landing: the candidate imported by a human gesture for this
	// mission (store v3), then the letter naming v3; the hook and the
	// remote take both, pushed in one atomic transaction as m1nd sync
	// pushes (pushed one ref at a time, the landing must not arrive before
	// its store).
	imp, err := store.ImportReceipt(ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 2, Agent: "owner", Now: now},
		BlockID:      "sb_shop_core", Receipt: chain.CanonicalJSON(mw.ReceiptCandidate), Origin: rules.OriginHumanTTY,
		Lands: &brain.Landing{MissionID: opened.MissionID, LetterID: head.HeadLetterID},
	})
	if err != nil {
		t.Fatal(err)
	}
	honest := landed(imp.StoreVersion)
	if out, err := g.TryGit("update-ref", ref, honest, head.Commit.String()); err != nil {
		t.Fatalf("the hook refused the real landing: %v\n%s", err, out)
	}
	if out, err := g.TryGit("push", "--atomic", "origin", ref+":"+ref, brain.StoreRef+":"+brain.StoreRef); err != nil {
		t.Fatalf("the remote refused the real landing: %v\n%s", err, out)
	}
	if out, err := run(g.Dir, "verify"); err != nil {
		t.Fatalf("verify after the real landing: %v\n%s", err, out)
	}
}
