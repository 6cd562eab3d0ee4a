package brain

import (
	"context"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

func TestLetterBlockGuard(t *testing.T) {
	s, _ := newStore(t)
	// No store: anything goes.
	if err := s.CheckLetterBlock("sb_anything", nil); err != nil {
		t.Fatalf("no store: %v", err)
	}
	mustScan(t, s)
	candidate := func(block string, boundary int64) *rules.Receipt {
		return &rules.Receipt{BlockID: block, Type: "test", Scope: rules.Scope{BoundaryVersion: boundary, ContractVersion: 1}}
	}
	for _, tt := range []struct {
		label     string
		block     string
		candidate *rules.Receipt
		code      rules.Code
		field     string
	}{
		{"a block", "sb_shop_core", nil, "", ""},
		{"the skeleton anchors", "sk_shop_candidate", nil, "", ""},
		{"another skeleton", "sk_other_candidate", nil, rules.UnknownBlock, "block_id"},
		{"an unknown block", "sb_shop_nope", nil, rules.UnknownBlock, "block_id"},
		{"not an id at all", "../../etc/passwd", nil, rules.UnknownBlock, "block_id"},
		{"a current candidate", "sb_shop_core", candidate("sb_shop_core", 1), "", ""},
		{"a candidate at another boundary", "sb_shop_core", candidate("sb_shop_core", 2), rules.StaleScope, "receipt_candidate.scope.boundary_version"},
		{"a candidate for an unknown block", "sb_shop_core", candidate("sb_shop_zzz", 1), rules.UnknownBlock, "receipt_candidate.block_id"},
	} {
		err := s.CheckLetterBlock(tt.block, tt.candidate)
		if tt.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.label, err)
			}
			continue
		}
		if r, ok := rules.AsRefusal(err); !ok || r.Code != tt.code || r.Field != tt.field {
			t.Errorf("%s: got %v, want %s on %s", tt.label, err, tt.code, tt.field)
		}
	}
}

// Wired into chain.Missions, the guard is post step 3.
func TestMissionPostUsesTheStoreGuard(t *testing.T) {
	s, _ := newStore(t)
	m := &chain.Missions{Repo: s.Repo, Brain: "Shop", Blocks: s}
	post := func(block string, synthetic bool) error {
		_, err := m.New(context.Background(), chain.NewMission{BlockID: block, Synthetic: synthetic, Agent: "owner", Now: testNow})
		return err
	}
	if err := post("sb_before_any_store", false); err != nil {
		t.Fatalf("a brain with no store accepts: %v", err)
	}
	mustScan(t, s)
	if err := post("sb_shop_cmd", false); err != nil {
		t.Fatal(err)
	}
	err := post("sb_shop_gone", false)
	if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.UnknownBlock || !strings.Contains(r.Lesson, "sb_shop_gone") {
		t.Fatalf("unknown block: %v", err)
	}
	if err := post("sb_shop_gone", true); err != nil {
		t.Fatalf("synthetic skips the guard: %v", err)
	}
}
