package gitsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/chain/chaintest"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

type clone struct {
	g    *gittest.Repo
	repo *gitstore.Repo
	m    *chain.Missions
}

// twoClones makes a bare remote and two clones of it, brain "shop".
func twoClones(t *testing.T) (*clone, *clone) {
	t.Helper()
	seed := gittest.Init(t, "seed")
	bare := filepath.Join(t.TempDir(), "shop.git")
	seed.Git("clone", "-q", "--bare", seed.Dir, bare)
	var out []*clone
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(t.TempDir(), name)
		seed.Git("clone", "-q", bare, dir)
		g := &gittest.Repo{}
		*g = *seed
		g.Dir = dir
		g.Git("config", "m1nd.brain", "shop") // the first sync registers it
		repo, err := gitstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { repo.Close() })
		out = append(out, &clone{g: g, repo: repo, m: &chain.Missions{Repo: repo, Brain: "shop"}})
	}
	return out[0], out[1]
}

func (c *clone) sync(t *testing.T) *Report {
	t.Helper()
	rep, err := Sync(context.Background(), c.repo, "origin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (c *clone) extend(t *testing.T, id, agent string, at time.Time) {
	t.Helper()
	head, err := c.m.Current(id)
	if err != nil {
		t.Fatal(err)
	}
	next := chain.Next(head.Letter, head.HeadLetterID, at)
	next.Phase = chain.PhaseExecuting
	if _, err := c.m.Post(context.Background(), chain.PostRequest{Body: next.Canonical(), Agent: agent}); err != nil {
		t.Fatal(err)
	}
}

func TestSyncPushesFastForwardsAndParksForks(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	res, err := a.m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id, ref := res.MissionID, res.Ref
	if rep := a.sync(t); !rep.OK || strings.Join(rep.Pushed, ",") != brain.RegistrationRef+","+ref {
		t.Fatalf("a's first sync (the registration it made, the mission): %+v", rep)
	}
	if rep := b.sync(t); !rep.OK || strings.Join(rep.Created, ",") != brain.RegistrationRef+","+ref {
		t.Fatalf("b's first sync (a's registration, the mission): %+v", rep)
	}
	// Both extend the same head; a syncs first and wins.
	a.extend(t, id, "alice", now.Add(time.Minute))
	b.extend(t, id, "bob", now.Add(2*time.Minute))
	bHead, _, _ := b.repo.ReadRef(ref)
	if rep := a.sync(t); !rep.OK || len(rep.Pushed) != 1 {
		t.Fatalf("a pushes: %+v", rep)
	}
	rep := b.sync(t)
	if rep.OK || len(rep.Conflicts) != 1 {
		t.Fatalf("b's conflict: %+v", rep)
	}
	c := rep.Conflicts[0]
	if c.Code != "stale_head" || len(c.Letters) != 1 || c.Letters[0] != bHead.String() || !strings.Contains(c.Lesson, "m1nd mission next "+id) {
		t.Fatalf("conflict %+v", c)
	}
	// Nothing accepted locally is dropped: bob's letter is parked, the
	// mission follows a's chain.
	if parked, ok, _ := b.repo.ReadRef(c.ParkedRef); !ok || parked != bHead {
		t.Fatalf("parked %s = %s", c.ParkedRef, parked)
	}
	aHead, _, _ := a.repo.ReadRef(ref)
	if now, _, _ := b.repo.ReadRef(ref); now != aHead {
		t.Fatal("b does not follow the remote's chain")
	}
	// Conflicts stay local.
	if rep := b.sync(t); !rep.OK || len(rep.Pushed) != 0 {
		t.Fatalf("b's next sync: %+v", rep)
	}
	if remote := a.g.Git("ls-remote", "origin", "refs/m1nd/conflicts/*"); remote != "" {
		t.Fatalf("a conflict was pushed: %s", remote)
	}
}

// Syncs from both clones at the same time leave every ref equal on both
// sides after one more round, with no letter lost.
func TestConcurrentSyncsStayConsistent(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 6; i++ {
		for _, c := range []*clone{a, b} {
			if _, err := c.m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "x", Now: now.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for round := 0; round < 3; round++ {
		for _, c := range []*clone{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				Sync(context.Background(), c.repo, "origin", Options{}) // a lost push is retried next round
			}()
		}
		wg.Wait()
	}
	a.sync(t)
	b.sync(t)
	la := a.g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/missions/")
	lb := b.g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/missions/")
	if la != lb || strings.Count(la, "\n")+1 != 12 {
		t.Fatalf("clones differ after syncing:\n%s\n---\n%s", la, lb)
	}
}

// A forked remote chain that breaks the laws is refused like any other bad
// remote history: the local chain stays, nothing is parked, and the other
// refs of the same sync still go through.
func TestSyncRefusesAForkedRemoteThatBreaksTheLaws(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	res, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	b.sync(t)
	a.extend(t, res.MissionID, "alice", now.Add(time.Minute))
	aHead, _, _ := a.repo.ReadRef(res.Ref)
	// b forges letter #3 on top of #1 and pushes it past every law.
	head, err := b.m.Current(res.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	forged := chain.Next(head.Letter, head.HeadLetterID, now.Add(2*time.Minute))
	forged.Phase = chain.PhaseExecuting
	forged.MissionSeq = 3
	commit := b.g.CommitFile(head.Commit.String(), chain.LetterFile, forged.Canonical(), "forged")
	b.g.Git("push", "-q", "-f", "origin", commit+":"+res.Ref)
	other, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now.Add(3 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	rep := a.sync(t)
	if rep.OK || len(rep.RefusedRemote) != 1 || rep.RefusedRemote[0].Ref != res.Ref || len(rep.Conflicts) != 0 ||
		strings.Join(rep.Pushed, ",") != other.Ref {
		t.Fatalf("sync over a forged fork: %+v", rep)
	}
	if now, _, _ := a.repo.ReadRef(res.Ref); now != aHead {
		t.Fatal("the forged chain was taken")
	}
	if parked := a.g.Git("for-each-ref", "refs/m1nd/conflicts/"); parked != "" {
		t.Fatalf("something was parked: %s", parked)
	}
}

// TestSyncTakesALandingWithItsStore: a landing made in clone a (the store's
// import and the landed letter) reaches clone b in one sync, the letter
// judged against the store b has just taken.
func TestSyncTakesALandingWithItsStore(t *testing.T) {
	a, b := twoClones(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	a.g.CommitFiles("files", map[string]string{"core/a.go": "package core\n"})
	store := &brain.Store{Repo: a.repo, Brain: "shop"}
	if _, err := store.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: now}); err != nil {
		t.Fatal(err)
	}
	a.m.Blocks, a.m.Gates = store, store
	runner := pinstest.Approve(t, a.repo, "r1", "go test")
	open, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "runnerd:r1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := a.m.Current(open.MissionID)
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	mw.Phase = chain.PhaseMergeWait
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	mw.Gate = &chain.Gate{Command: "go test", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_shop_core", Type: "test", Scope: rules.Scope{BlockID: "sb_shop_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"gate://x"}, Command: "go test", Cwd: ".", ExitStatus: &exit,
			StartedAt: now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	att := runner.Sign(t, mw)
	posted, err := a.m.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:r1", Attestation: att})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := store.ImportReceipt(ctx, brain.ImportRequest{WriteRequest: brain.WriteRequest{ExpectedStoreVersion: 1, Agent: "owner", Now: now},
		BlockID: "sb_shop_core", Receipt: chain.CanonicalJSON(mw.ReceiptCandidate), Origin: rules.OriginHumanTTY,
		Lands: &brain.Landing{MissionID: open.MissionID, LetterID: posted.LetterID}})
	if err != nil {
		t.Fatal(err)
	}
	landed := chain.Next(mw, posted.LetterID, now)
	landed.Phase = chain.PhaseLanded
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: imp.StoreVersion}
	if _, err := a.m.Post(ctx, chain.PostRequest{Body: landed.Canonical(), Agent: "owner"}); err != nil {
		t.Fatal(err)
	}
	if rep := a.sync(t); !rep.OK {
		t.Fatalf("a's sync: %+v", rep)
	}
	rep := b.sync(t)
	if !rep.OK || len(rep.RefusedRemote) != 0 {
		t.Fatalf("b's sync: %+v", rep)
	}
	if h, err := b.m.Current(open.MissionID); err != nil || h.Letter.Phase != chain.PhaseLanded {
		t.Fatalf("b's mission: %v %v", h, err)
	}
}

// More refs than one push carries go in batches of at most MaxBatch, with
// a progress line for each, and every ref arrives.
func TestSyncPushesInBatches(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	n := MaxBatch + 20
	for i := 0; i < n; i++ {
		if _, err := a.m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	var progress strings.Builder
	rep, err := Sync(context.Background(), a.repo, "origin", Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	// How many batches follow the timed first one depends on how fast this
	// machine pushed it: at least one, never more than the smallest batch
	// size allows.
	most := 1 + (n+1-probeBatch+minBatch-1)/minBatch
	if !rep.OK || len(rep.Pushed) != n+1 || rep.Batches < 2 || rep.Batches > most { // the missions and the registration
		t.Fatalf("pushed %d in %d batches (ok %v, %s), want %d in 2 to %d", len(rep.Pushed), rep.Batches, rep.OK, rep.PushError, n+1, most)
	}
	for _, want := range []string{" refs of 521, timing the remote to size the rest)", fmt.Sprintf("pushing batch %d of %d (", rep.Batches, rep.Batches)} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if rep := b.sync(t); !rep.OK || len(rep.Created) != n+1 {
		t.Fatalf("b took %d of %d: %+v", len(rep.Created), n, rep.OK)
	}
}

// A push the server cuts short (it hung up mid-push, as a proxy that timed
// out does) is pushed again in halves, down to one ref; when even that is
// cut short, it is named as such, with its batch, not as a refusal.
func TestSyncNamesAPushCutShort(t *testing.T) {
	a, _ := twoClones(t)
	bare := a.g.Git("-C", a.g.Dir, "remote", "get-url", "origin")
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nkill -9 $PPID\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := a.m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	rep := a.sync(t)
	if rep.OK || !rep.PushCutShort || rep.FailedBatch != "1 of 2" || len(rep.Pushed) != 0 {
		t.Fatalf("a push cut short: %+v", rep)
	}
}

// A forged raw push to a remote with no m1nd hook is held back by every
// honest clone, listed by every sync until resolved, and repaired by
// Repair with the local history; a ref that keeps the laws, the keys, and
// local history that breaks them too are refused.
func TestRepairReplacesAForgedRemoteRef(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	res, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	b.sync(t)
	head, err := b.m.Current(res.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	forged := chain.Next(head.Letter, head.HeadLetterID, now.Add(2*time.Minute))
	forged.Phase = chain.PhaseExecuting
	forged.MissionSeq = 3
	commit := b.g.CommitFile(head.Commit.String(), chain.LetterFile, forged.Canonical(), "forged")
	b.g.Git("push", "-q", "-f", "origin", commit+":"+res.Ref)

	for i := 0; i < 2; i++ { // listed by every sync, not only the first
		rep := a.sync(t)
		if rep.OK || len(rep.Held) != 1 || rep.Held[0].Ref != res.Ref || rep.Held[0].Side != "remote" {
			t.Fatalf("sync %d over the forgery: held %+v", i+1, rep.Held)
		}
	}
	held, err := HeldBack(a.repo.RuntimeDir())
	if err != nil || len(held) != 1 || held[0].Ref != res.Ref || held[0].Remote != "origin" {
		t.Fatalf("HeldBack: %+v, %v", held, err)
	}
	for _, tc := range []struct{ name, ref, lesson string }{
		{"a ref that keeps the laws", clean.Ref, "nothing to repair"},
		{"the keys", brain.KeysRef, "never replaced by a push"},
		{"no ref of m1nd's", "refs/heads/main", "one ref under refs/m1nd/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Repair(ctx, a.repo, "origin", tc.ref)
			if r, ok := rules.AsRefusal(err); !ok || !strings.Contains(r.Lesson, tc.lesson) {
				t.Fatalf("Repair(%s): %v, want a refusal saying %q", tc.ref, err, tc.lesson)
			}
		})
	}
	fixed, err := Repair(ctx, a.repo, "origin", res.Ref)
	if err != nil || fixed.Was != commit {
		t.Fatalf("Repair: %+v, %v", fixed, err)
	}
	aHead, _, _ := a.repo.ReadRef(res.Ref)
	if got := a.g.Git("ls-remote", "origin", res.Ref); !strings.HasPrefix(got, aHead.String()) {
		t.Fatalf("the remote holds %q, want a's %s", got, aHead)
	}
	// The repair itself clears the record: m1nd status offers it no more.
	if held, _ := HeldBack(a.repo.RuntimeDir()); len(held) != 0 {
		t.Fatalf("still held right after the repair: %+v", held)
	}
	if rep := a.sync(t); !rep.OK || len(rep.Held) != 0 {
		t.Fatalf("sync after the repair: %+v", rep)
	}
	if held, _ := HeldBack(a.repo.RuntimeDir()); len(held) != 0 {
		t.Fatalf("still held after the repair: %+v", held)
	}
	if rep := b.sync(t); !rep.OK {
		t.Fatalf("b after the repair: %+v", rep)
	}
}

// A steady sync asks the remote first and fetches nothing when the remote
// holds what the tracking refs say, pushes included; a change on the
// remote is fetched.
func TestSteadySyncFetchesNothing(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	syncSays := func(c *clone) string {
		t.Helper()
		var progress strings.Builder
		rep, err := Sync(ctx, c.repo, "origin", Options{Progress: &progress})
		if err != nil || !rep.OK {
			t.Fatalf("sync: %+v, %v", rep, err)
		}
		return progress.String()
	}
	if _, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now}); err != nil {
		t.Fatal(err)
	}
	syncSays(a) // pushes the mission; its tracking ref follows
	if said := syncSays(a); strings.Contains(said, "fetching origin") {
		t.Fatalf("a steady sync after a push fetched:\n%s", said)
	}
	if said := syncSays(b); !strings.Contains(said, "fetching origin") {
		t.Fatalf("b's sync did not fetch the new mission:\n%s", said)
	}
	if said := syncSays(b); strings.Contains(said, "fetching origin") {
		t.Fatalf("b's steady sync fetched:\n%s", said)
	}
}

// A sync that finds the remote as the last clean sync left it and no ref
// here written since reads no ref at all; a local write, a remote one, or
// a write too close to the last sync's reading (within a clock tick of the
// folder stamps) makes it read and carry everything again.
func TestSteadySyncReadsNothingUntilARefMoves(t *testing.T) {
	a, b := twoClones(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	const idle = "nothing to do"
	syncSays := func(c *clone) (*Report, string) {
		t.Helper()
		var progress strings.Builder
		rep, err := Sync(ctx, c.repo, "origin", Options{Progress: &progress})
		if err != nil || !rep.OK {
			t.Fatalf("sync: %+v, %v", rep, err)
		}
		return rep, progress.String()
	}
	res, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	syncSays(a)
	// Right after its own writes a sync records nothing: they are within
	// a tick of its reading.
	if _, said := syncSays(a); strings.Contains(said, idle) {
		t.Fatalf("a sync just after a write read nothing:\n%s", said)
	}
	time.Sleep(gitstore.Settle + 10*time.Millisecond)
	syncSays(a) // settled: recorded
	if rep, said := syncSays(a); !strings.Contains(said, idle) || rep.Unchanged == 0 {
		t.Fatalf("a steady sync read refs (unchanged %d):\n%s", rep.Unchanged, said)
	}
	// A local write is pushed at once.
	a.extend(t, res.MissionID, "alice", now.Add(time.Minute))
	if rep, said := syncSays(a); strings.Contains(said, idle) || len(rep.Pushed) != 1 || rep.Pushed[0] != res.Ref {
		t.Fatalf("a local write was not pushed: %+v\n%s", rep.Pushed, said)
	}
	time.Sleep(gitstore.Settle + 10*time.Millisecond)
	syncSays(a)
	if _, said := syncSays(a); !strings.Contains(said, idle) {
		t.Fatalf("not steady again:\n%s", said)
	}
	// A write on the remote is fetched.
	syncSays(b)
	b.extend(t, res.MissionID, "bob", now.Add(2*time.Minute))
	syncSays(b)
	if rep, said := syncSays(a); strings.Contains(said, idle) || len(rep.FastForwarded) != 1 {
		t.Fatalf("a remote write was not taken: %+v\n%s", rep.FastForwarded, said)
	}
	// The record is the runtime folder's: a sync that cannot read it reads
	// every ref.
	seen := filepath.Join(a.repo.RuntimeDir(), "sync", "origin.seen.json")
	time.Sleep(gitstore.Settle + 10*time.Millisecond)
	syncSays(a)
	if err := os.WriteFile(seen, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, said := syncSays(a); strings.Contains(said, idle) {
		t.Fatalf("a broken record was trusted:\n%s", said)
	}
}

// A clone that holds a folded mission behind its folded head (it never
// saw the archive letter) has its live ref removed by the sync that
// brings the fold, and reads the mission from the archive; the remote's
// live ref went with the folding clone's sync.
func TestSyncCarriesAFold(t *testing.T) {
	a, b := twoClones(t)
	ctx := context.Background()
	head, ref := chaintest.MergeWait(t, a.m, "sb_shop_core")
	a.sync(t)
	if rep := b.sync(t); !strings.Contains(strings.Join(rep.Created, " "), ref) {
		t.Fatalf("b did not take the mission: %+v", rep.Created)
	}
	p, err := a.m.PrepareArchive(head.MissionID, "owner", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, rules.OriginHumanTTY, nil, chain.Env{}); err != nil {
		t.Fatal(err)
	}
	folded, err := ops.New(a.repo, "shop").Fold(ctx, ops.FoldRequest{Agent: "owner", Now: time.Now()})
	if err != nil || len(folded.Folded) != 1 {
		t.Fatalf("fold: %+v, %v", folded, err)
	}
	if rep := a.sync(t); !rep.OK || len(rep.RemoteFolded) != 1 || rep.RemoteFolded[0] != ref {
		t.Fatalf("a's sync did not remove the remote's live ref: %+v", rep)
	}
	if out := a.g.Git("ls-remote", "origin", ref); out != "" {
		t.Fatalf("the remote still holds %s", out)
	}
	rep := b.sync(t)
	if !rep.OK || len(rep.Folded) != 1 || rep.Folded[0] != ref {
		t.Fatalf("b's sync did not remove its live ref of the folded mission: %+v", rep)
	}
	if _, ok, _ := b.repo.ReadRef(ref); ok {
		t.Fatalf("b still holds %s", ref)
	}
	got, err := b.m.Current(head.MissionID)
	if err != nil || !got.Folded || got.Phase != chain.PhaseArchived {
		t.Fatalf("b reads %+v, %v; want the archived mission, folded", got, err)
	}
}

// A remote that cuts short every push of more than 3 refs (a proxy whose
// timeout a larger push outlives) still takes all of a first sync: the
// batch is pushed again in halves, and no later batch is larger than the
// size that got through, each with its progress line.
func TestSyncHalvesABatchCutShort(t *testing.T) {
	a, _ := twoClones(t)
	bare := a.g.Git("-C", a.g.Dir, "remote", "get-url", "origin")
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ $(wc -l) -le 3 ] || kill -9 $PPID\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		if _, err := a.m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: time.Date(2026, 11, 30, 12, 0, i, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	var progress strings.Builder
	rep, err := Sync(context.Background(), a.repo, "origin", Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Split(progress.String(), "\n")
	if !rep.OK || rep.PushCutShort || len(rep.Pushed) < 9 {
		t.Fatalf("a first sync through a remote that cuts large pushes: %+v\n%s", rep, strings.Join(said, "\n"))
	}
	log := strings.Join(said, "\n")
	if !strings.Contains(log, "was cut short (origin timed out or hung up); pushing it again in batches of") {
		t.Fatalf("no line says the batch was cut short and halved:\n%s", log)
	}
	missions := a.g.Git("--git-dir", bare, "for-each-ref", "--format=%(refname)", "refs/m1nd/missions/")
	if n := len(strings.Fields(missions)); n != 9 {
		t.Fatalf("the remote holds %d missions, want 9", n)
	}
}
