package brain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func stored(t *testing.T, typ string, boundary int64, exit *int, expires string) StoredReceipt {
	t.Helper()
	r := map[string]any{"block_id": "sb_x", "type": typ, "scope": map[string]any{"boundary_version": boundary, "contract_version": 1},
		"evidence": map[string]any{"artifact_hash": "sha256:ab", "evidence_refs": []string{"x"}}}
	if exit != nil {
		r["evidence"].(map[string]any)["exit_status"] = *exit
	}
	if expires != "" {
		r["validity"] = map[string]any{"expires_on": expires}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return StoredReceipt{Receipt: b}
}

func TestColourLaw(t *testing.T) {
	zero, one := 0, 1
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		label    string
		required []string
		receipts []StoredReceipt
		want     Colour
		why      string
	}{
		{"no receipts", []string{"test"}, nil, NeedsEvidence, "no test receipt yet"},
		{"no contract", nil, nil, Unknown, "requires no evidence"},
		{"a failing receipt beats an empty contract", nil, []StoredReceipt{stored(t, "test", 2, &one, "")}, Broken, "exit 1"},
		{"fresh", []string{"test"}, []StoredReceipt{stored(t, "test", 2, &zero, "")}, EvidenceBacked, "test proved at boundary v2"},
		{"stale boundary", []string{"test"}, []StoredReceipt{stored(t, "test", 1, &zero, "")}, NeedsEvidence, "proved boundary v1"},
		{"newest failing", []string{"test"}, []StoredReceipt{stored(t, "test", 2, &zero, ""), stored(t, "test", 2, &one, "")}, Broken, "newest test receipt failed"},
		{"failing then fixed", []string{"test"}, []StoredReceipt{stored(t, "test", 2, &one, ""), stored(t, "test", 2, &zero, "")}, EvidenceBacked, ""},
		{"expired", []string{"test"}, []StoredReceipt{stored(t, "test", 2, &zero, "2026-11-30")}, NeedsEvidence, "expired"},
		{"not yet expired", []string{"test"}, []StoredReceipt{stored(t, "test", 2, &zero, "2026-12-01")}, EvidenceBacked, ""},
		{"one of two types", []string{"test", "review"}, []StoredReceipt{stored(t, "test", 2, &zero, "")}, NeedsEvidence, "no review receipt yet"},
	} {
		b := &Block{BoundaryVersion: 2, ContractVersion: 1, ReceiptContract: ReceiptContract{Required: tt.required}, Receipts: tt.receipts}
		p := b.Colour(now)
		if p.Colour != tt.want || !strings.Contains(p.Why, tt.why) {
			t.Errorf("%s: %+v, want %s (%s)", tt.label, p, tt.want, tt.why)
		}
	}
}
