package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// testReceipt is a complete test receipt for block at boundary and contract 1.
func testReceipt(block string, boundary int64, exit int) string {
	return fmt.Sprintf(`{"block_id":%q,"type":"test","emitter":{"kind":"verb","id":"human-tray-landing"},
	  "scope":{"block_id":%q,"boundary_version":%d,"contract_version":1},
	  "evidence":{"artifact_hash":"sha256:ab","evidence_refs":["gate://msn_0123456789ab"],"command":"go vet ./core/... && go test ./core/... 2>&1 | tee <out>",
	  "cwd":"core","exit_status":%d,"started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}`, block, block, boundary, exit)
}

func importReq(v int64, block, receipt, origin string) ImportRequest {
	return ImportRequest{WriteRequest: write(v), BlockID: block, Receipt: []byte(receipt), Origin: origin}
}

func TestReceiptImportChecksInOrder(t *testing.T) {
	s, g := newStore(t)
	ctx := context.Background()
	// The origin is checked before anything else: even a garbage body on
	// a brain with no store is refused for the gesture.
	_, err := s.ImportReceipt(ctx, importReq(0, "sb_nope", "{garbage", ""))
	wantRefusal(t, err, rules.HumanGestureRequired, "imported_via")
	_, err = s.ImportReceipt(ctx, importReq(0, "sb_nope", "{garbage", "runnerd"))
	wantRefusal(t, err, rules.HumanGestureRequired, "imported_via")
	_, err = s.ImportReceipt(ctx, importReq(0, "sb_nope", "{garbage", rules.OriginHumanTTY))
	wantRefusal(t, err, rules.NoStore, "")
	mustScan(t, s)
	before := g.Git("rev-parse", StoreRef)
	good := testReceipt("sb_shop_core", 1, 0)
	for _, tt := range []struct {
		label  string
		req    ImportRequest
		code   rules.Code
		field  string
		lesson string
	}{
		{"stale expected version", importReq(5, "sb_shop_core", "{garbage", rules.OriginHumanTTY), rules.StoreVersionConflict, "expected_store_version", ""},
		{"unknown block", importReq(1, "sb_shop_nope", "{garbage", rules.OriginHumanTTY), rules.UnknownBlock, "block_id", ""},
		{"malformed receipt", importReq(1, "sb_shop_core", "{garbage", rules.OriginHumanTTY), rules.IncompleteEvidence, "receipt", ""},
		{"unknown field", importReq(1, "sb_shop_core", strings.Replace(good, `"type"`, `"typo":1,"type"`, 1), rules.OriginHumanTTY), rules.IncompleteEvidence, "receipt", ""},
		{"another block's receipt", importReq(1, "sb_shop_cmd", good, rules.OriginHumanTTY), rules.StaleScope, "block_id", ""},
		{"old boundary", importReq(1, "sb_shop_core", testReceipt("sb_shop_core", 2, 0), rules.OriginHumanTTY), rules.StaleScope, "scope.boundary_version", "boundary v2"},
		{"other contract", importReq(1, "sb_shop_core", strings.Replace(good, `"contract_version":1`, `"contract_version":3`, 1), rules.OriginHumanTTY), rules.StaleScope, "scope.contract_version", ""},
		{"no command", importReq(1, "sb_shop_core", strings.Replace(good, `"command":"go vet ./core/... && go test ./core/... 2>&1 | tee <out>",`, "", 1), rules.OriginHumanTTY), rules.IncompleteEvidence, "evidence.command", ""},
		{"future window", importReq(1, "sb_shop_core", strings.Replace(good, "2026-11-30T10:01:00Z", "2026-11-30T12:00:01Z", 1), rules.OriginHumanTTY), rules.IncompleteEvidence, "evidence.ended_at", ""},
	} {
		_, err := s.ImportReceipt(ctx, tt.req)
		r, ok := rules.AsRefusal(err)
		if !ok || r.Code != tt.code || r.Field != tt.field || !strings.Contains(r.Lesson, tt.lesson) {
			t.Errorf("%s: got %v, want %s on %s", tt.label, err, tt.code, tt.field)
		}
	}
	if after := g.Git("rev-parse", StoreRef); after != before {
		t.Fatal("a refused import moved the store")
	}
	res, err := s.ImportReceipt(ctx, importReq(1, "sb_shop_core", good, rules.OriginHumanTTY))
	if err != nil || res.StoreVersion != 2 || res.ReceiptCount != 1 || res.BlockID != "sb_shop_core" {
		t.Fatalf("import = %+v, %v", res, err)
	}
	log := g.Git("log", "-1", "--format=%s%n%b", StoreRef)
	if !strings.HasPrefix(log, "store v2: receipt_import sb_shop_core test") || !strings.Contains(log, "M1nd-Origin: human-tty") {
		t.Fatalf("commit message:\n%s", log)
	}
	// Stored as submitted (compacted), never re-dated, and never re-escaped:
	// the command's & and < come back as they went in.
	core := snap(t, s).Block("sb_shop_core")
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(good))
	if !bytes.Equal(core.Receipts[0].Receipt, compact.Bytes()) || core.Receipts[0].StoreVersion != 2 || core.Receipts[0].ImportedVia != "human-tty" {
		t.Fatalf("stored receipt %s (%+v)", core.Receipts[0].Receipt, core.Receipts[0])
	}
	if p := core.Colour(testNow); p.Colour != EvidenceBacked {
		t.Fatalf("colour after import = %+v", p)
	}
}

// The issue's own scenario: a receipt lands, a file is added to the block,
// reconcile bumps the boundary and the block needs evidence again.
func TestBoundaryBumpMakesTheReceiptStale(t *testing.T) {
	s, g := newStore(t)
	ctx := context.Background()
	mustScan(t, s)
	// The scan recorded every block's baseline: nothing to reconcile yet.
	rec, err := s.Reconcile(ctx, write(1))
	if err != nil || rec.Changed || len(rec.Baselined)+len(rec.Bumped) != 0 || rec.StoreVersion != 1 {
		t.Fatalf("first reconcile = %+v %v", rec, err)
	}
	if p := snap(t, s).Block("sb_shop_core").Colour(testNow); p.Colour != NeedsEvidence || p.Why != "no test receipt yet" {
		t.Fatalf("before any receipt: %+v", p)
	}
	if _, err := s.ImportReceipt(ctx, importReq(1, "sb_shop_core", testReceipt("sb_shop_core", 1, 0), rules.OriginHumanTTY)); err != nil {
		t.Fatal(err)
	}
	// A file added before any reconcile still counts against the scan's
	// baseline.
	g.CommitFiles("grow core", map[string]string{"core/new.go": "package core\n"})
	rec, err = s.Reconcile(ctx, write(2))
	if err != nil || strings.Join(rec.Bumped, ",") != "sb_shop_core" || rec.StoreVersion != 3 {
		t.Fatalf("reconcile after adding a file = %+v %v", rec, err)
	}
	core := snap(t, s).Block("sb_shop_core")
	p := core.Colour(testNow)
	if core.BoundaryVersion != 2 || p.Colour != NeedsEvidence || !strings.Contains(p.Why, "proved boundary v1, the block is at v2") {
		t.Fatalf("after the bump: boundary %d, %+v", core.BoundaryVersion, p)
	}
	// The old receipt no longer imports; one at the new boundary does.
	_, err = s.ImportReceipt(ctx, importReq(3, "sb_shop_core", testReceipt("sb_shop_core", 1, 0), rules.OriginHumanTTY))
	wantRefusal(t, err, rules.StaleScope, "scope.boundary_version")
	if _, err := s.ImportReceipt(ctx, importReq(3, "sb_shop_core", testReceipt("sb_shop_core", 2, 0), rules.OriginHumanTTY)); err != nil {
		t.Fatal(err)
	}
	if p := snap(t, s).Block("sb_shop_core").Colour(testNow); p.Colour != EvidenceBacked {
		t.Fatalf("after a fresh receipt: %+v", p)
	}
	// Nothing changed at HEAD since: reconcile writes nothing.
	if same, err := s.Reconcile(ctx, write(4)); err != nil || same.Changed {
		t.Fatalf("idle reconcile = %+v %v", same, err)
	}
	// A failing run is evidence too: it turns the block broken.
	if _, err := s.ImportReceipt(ctx, importReq(4, "sb_shop_core", testReceipt("sb_shop_core", 2, 1), rules.OriginHumanTTY)); err != nil {
		t.Fatal(err)
	}
	if p := snap(t, s).Block("sb_shop_core").Colour(testNow); p.Colour != Broken {
		t.Fatalf("after a failing receipt: %+v", p)
	}
}

// Two writers at the same expected version: exactly one wins, every round.
func TestConcurrentWritersAtOneVersionExactlyOneWins(t *testing.T) {
	s, g := newStore(t)
	mustScan(t, s)
	ctx := context.Background()
	for round := int64(1); round <= 20; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range errs {
			repo, err := gitstore.Open(g.Dir)
			if err != nil {
				t.Fatal(err)
			}
			writer := &Store{Repo: repo, Brain: "Shop"}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer repo.Close()
				_, errs[w] = writer.ImportReceipt(ctx, importReq(round, "sb_shop_core", testReceipt("sb_shop_core", 1, w), rules.OriginHumanTTY))
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.StoreVersionConflict {
				t.Fatalf("round %d: loser got %v, want store_version_conflict", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers won", round, won)
		}
		if v, _, _ := StoreVersion(s.Repo); v != round+1 {
			t.Fatalf("round %d: store at v%d", round, v)
		}
	}
	if n := g.Git("rev-list", "--count", StoreRef); n != "21" {
		t.Fatalf("rev-list --count = %s, want 21", n)
	}
}
