package brain

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

var demoFiles = map[string]string{
	"README.md":        "# shop\n",
	"go.mod":           "module shop\n",
	"core/ledger.go":   "package core\n",
	"core/deep/x.go":   "package deep\n",
	"cmd/shop/main.go": "package main\n",
	".github/ci.yml":   "on: push\n",
}

// newStore makes a repository named Shop with demoFiles committed.
func newStore(t *testing.T) (*Store, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, "Shop")
	g.CommitFiles("files", demoFiles)
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &Store{Repo: repo, Brain: "Shop"}, g
}

func write(v int64) WriteRequest {
	return WriteRequest{ExpectedStoreVersion: v, Agent: "owner", Now: testNow}
}

func mustScan(t *testing.T, s *Store) *ScanResult {
	t.Helper()
	v, _, _ := StoreVersion(s.Repo)
	res, err := s.Scan(context.Background(), write(v))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func snap(t *testing.T, s *Store) *Snapshot {
	t.Helper()
	sn, ok, err := s.Snapshot()
	if err != nil || !ok {
		t.Fatalf("snapshot: %v %v", ok, err)
	}
	return sn
}

func wantRefusal(t *testing.T, err error, code rules.Code, field string) *rules.Refusal {
	t.Helper()
	r, ok := rules.AsRefusal(err)
	if !ok || r.Code != code || (field != "*" && r.Field != field) {
		t.Fatalf("got %v, want refusal %s on %q", err, code, field)
	}
	return r
}

func TestScanProposesOneBlockPerTopLevelDirectory(t *testing.T) {
	s, g := newStore(t)
	res := mustScan(t, s)
	if res.StoreVersion != 1 || res.SkeletonID != "sk_shop_candidate" {
		t.Fatalf("scan = %+v", res)
	}
	if got := strings.Join(res.Added, ","); got != "sb_shop_cmd,sb_shop_core,sb_shop_github,sb_shop_root" {
		t.Fatalf("added %s", got)
	}
	sn := snap(t, s)
	root := sn.Block("sb_shop_root")
	if root.Kind != KindRoot || len(root.Membership) != 2 || !root.CandidateMeta.NeedsOwnerNaming ||
		root.CandidateMeta.NamedBy != NamedByHeuristic || strings.Join(root.ReceiptContract.Required, ",") != "test" {
		t.Fatalf("root block = %+v", root)
	}
	if core := sn.Block("sb_shop_core"); core.Membership[0] != (Member{"core/", RolePrimary}) || core.State != StateCandidate {
		t.Fatalf("core block = %+v", core)
	}
	// Plain git reads the store: one commit per version, readable subjects.
	if n := g.Git("rev-list", "--count", StoreRef); n != "1" {
		t.Fatalf("rev-list --count = %s", n)
	}
	if subj := g.Git("log", "-1", "--format=%s", StoreRef); subj != "store v1: scan sk_shop_candidate (4 new blocks)" {
		t.Fatalf("subject %q", subj)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(g.Git("show", StoreRef+":store.json")), &doc); err != nil || doc["store_version"] != 1.0 {
		t.Fatalf("store.json = %v %v", doc, err)
	}
	g.Git("show", StoreRef+":blocks/sb_shop_core.json")

	// Scanning again changes nothing and writes nothing.
	again := mustScan(t, s)
	if again.Changed || again.StoreVersion != 1 {
		t.Fatalf("rescan = %+v", again)
	}
	// A new directory gets a block of its own; a new root file is left
	// for the owner to place.
	g.CommitFiles("more", map[string]string{"api/v1.go": "package api\n", "NOTES": "x\n"})
	more := mustScan(t, s)
	if more.StoreVersion != 2 || strings.Join(more.Added, ",") != "sb_shop_api" {
		t.Fatalf("scan after adding api/ = %+v", more)
	}
}

func TestStoreVersionConflictAppliesNothing(t *testing.T) {
	s, g := newStore(t)
	mustScan(t, s)
	before := g.Git("rev-parse", StoreRef)
	_, err := s.Reconcile(context.Background(), write(7))
	r := wantRefusal(t, err, rules.StoreVersionConflict, "expected_store_version")
	if !strings.Contains(r.Lesson, "version 1, not 7") {
		t.Fatalf("lesson %q", r.Lesson)
	}
	if after := g.Git("rev-parse", StoreRef); after != before {
		t.Fatal("a refused write moved the store")
	}
	// With no store, anything but 0 is a conflict too.
	fresh, _ := newStore(t)
	_, err = fresh.Scan(context.Background(), write(1))
	wantRefusal(t, err, rules.StoreVersionConflict, "expected_store_version")
	_, err = fresh.Reconcile(context.Background(), write(0))
	wantRefusal(t, err, rules.NoStore, "")
}

func TestReadingTheStoreDoesNotWalkHistory(t *testing.T) {
	s, g := newStore(t)
	mustScan(t, s)
	if _, err := s.Edit(context.Background(), EditRequest{WriteRequest: write(1), Seat: SeatOwner, Ops: []byte(`[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]`)}); err != nil {
		t.Fatal(err)
	}
	// Cut the history: the parent of v2 is gone, yet v2 reads.
	parent := g.Git("rev-parse", StoreRef+"^")
	g.Git("update-ref", "refs/keep", g.Git("rev-parse", StoreRef))
	obj := g.Git("rev-parse", "--git-path", "objects/"+parent[:2]+"/"+parent[2:])
	if err := removeFile(g.Dir, obj); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := StoreVersion(s.Repo); err != nil || !ok || v != 2 {
		t.Fatalf("StoreVersion = %d %v %v", v, ok, err)
	}
}

func removeFile(dir, rel string) error {
	if !strings.HasPrefix(rel, "/") {
		rel = dir + "/" + rel
	}
	return os.Remove(rel)
}

// A store commit is authored by an agent id, spelt ref-safe as on every
// other chain (chain.Signature).
func TestStoreWritersAreAgentIDs(t *testing.T) {
	s, g := newStore(t)
	for _, agent := range []string{"", "Bob Smith", "owner<x>", "runnerd:", "a/b"} {
		if _, err := s.Scan(context.Background(), WriteRequest{Agent: agent, Now: testNow}); err == nil {
			t.Errorf("a scan by %q was written", agent)
		}
	}
	if refs := g.Git("for-each-ref", StoreRef); refs != "" {
		t.Fatalf("a refused writer moved the store: %s", refs)
	}
	if _, err := s.Scan(context.Background(), WriteRequest{Agent: "runnerd:b1", Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if who := g.Git("log", "-1", "--format=%an <%ae>", StoreRef); who != "runnerd+b1 <runnerd+b1@m1nd>" {
		t.Fatalf("store commit by %s", who)
	}
}
