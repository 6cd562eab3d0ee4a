package rules

import (
	"testing"
	"time"
)

var windowNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestCheckWindow(t *testing.T) {
	for _, tt := range []struct {
		label, start, end string
		field             string // "" = accepted
	}{
		{"an hour", "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", ""},
		{"equal", "2026-11-30T10:00:00Z", "2026-11-30T10:00:00Z", "evidence.ended_at"},
		{"reversed", "2026-11-30T11:00:00Z", "2026-11-30T10:00:00Z", "evidence.ended_at"},
		{"future start", "2026-11-30T12:00:01Z", "2026-11-30T13:00:00Z", "evidence.started_at"},
		{"future end", "2026-11-30T11:00:00Z", "2026-11-30T12:00:01Z", "evidence.ended_at"},
		{"ends now", "2026-11-30T11:00:00Z", "2026-11-30T12:00:00Z", ""},
		{"exactly 24 h", "2026-11-29T11:00:00Z", "2026-11-30T11:00:00Z", ""},
		{"24 h + 1 s", "2026-11-29T10:59:59Z", "2026-11-30T11:00:00Z", "evidence.ended_at"},
		{"offset spelling", "2026-11-30T10:00:00+00:00", "2026-11-30T11:00:00Z", "evidence.started_at"},
		{"fractional seconds", "2026-11-30T10:00:00Z", "2026-11-30T11:00:00.5Z", "evidence.ended_at"},
		{"missing start", "", "2026-11-30T11:00:00Z", "evidence.started_at"},
	} {
		err := CheckWindow(tt.start, tt.end, windowNow)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.label, err)
			}
			continue
		}
		r, ok := AsRefusal(err)
		if !ok || r.Code != IncompleteEvidence || r.Field != tt.field {
			t.Errorf("%s: got %v, want incomplete_evidence on %s", tt.label, err, tt.field)
		}
	}
}

func exit(n int64) *int64 { return &n }

func testReceipt() *Receipt {
	return &Receipt{
		BlockID: "sb_x_core", Type: "test",
		Emitter: &Emitter{Kind: "verb", ID: "human-tray-landing"},
		Scope:   Scope{BlockID: "sb_x_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: Evidence{
			ArtifactHash: "sha256:ab", EvidenceRefs: []string{"gate://msn_0123456789ab"},
			Command: "go test ./...", Cwd: "core", ExitStatus: exit(0),
			StartedAt: "2026-11-30T10:00:00Z", EndedAt: "2026-11-30T10:01:00Z",
		},
	}
}

func TestCheckReceiptContract(t *testing.T) {
	for _, tt := range []struct {
		label string
		edit  func(r *Receipt)
		field string
	}{
		{"complete test receipt", func(*Receipt) {}, ""},
		{"unknown type", func(r *Receipt) { r.Type = "vibes" }, "type"},
		{"unknown emitter", func(r *Receipt) { r.Emitter.Kind = "agent" }, "emitter.kind"},
		{"no artifact hash", func(r *Receipt) { r.Evidence.ArtifactHash = " " }, "evidence.artifact_hash"},
		{"no evidence refs", func(r *Receipt) { r.Evidence.EvidenceRefs = nil }, "evidence.evidence_refs"},
		{"blank evidence ref", func(r *Receipt) { r.Evidence.EvidenceRefs = []string{""} }, "evidence.evidence_refs"},
		{"test without command", func(r *Receipt) { r.Evidence.Command = "" }, "evidence.command"},
		{"test without cwd", func(r *Receipt) { r.Evidence.Cwd = "" }, "evidence.cwd"},
		{"test without exit status", func(r *Receipt) { r.Evidence.ExitStatus = nil }, "evidence.exit_status"},
		{"test without window", func(r *Receipt) { r.Evidence.StartedAt = "" }, "evidence.started_at"},
		{"absolute cwd", func(r *Receipt) { r.Evidence.Cwd = "/home/x" }, "evidence.cwd"},
		{"climbing cwd", func(r *Receipt) { r.Evidence.Cwd = "core/../../x" }, "evidence.cwd"},
		{"dot cwd", func(r *Receipt) { r.Evidence.Cwd = "." }, ""},
		{"runtime without command", func(r *Receipt) { r.Type = "runtime"; r.Evidence.Command = "" }, "evidence.command"},
		{"structural needs no run", func(r *Receipt) {
			r.Type = "structural"
			r.Evidence = Evidence{ArtifactHash: "sha256:cd", EvidenceRefs: []string{"tree:abc"}}
		}, ""},
		{"review with reversed window", func(r *Receipt) {
			r.Type = "review"
			r.Evidence.StartedAt, r.Evidence.EndedAt = r.Evidence.EndedAt, r.Evidence.StartedAt
		}, "evidence.ended_at"},
		{"a failing test is still evidence", func(r *Receipt) { r.Evidence.ExitStatus = exit(1) }, ""},
		{"expires on a date", func(r *Receipt) { r.Validity = &Validity{ExpiresOn: "2026-12-31"} }, ""},
		{"expires at a time", func(r *Receipt) { r.Validity = &Validity{ExpiresOn: "2026-12-31T08:00:00+01:00"} }, ""},
		{"expires on no date", func(r *Receipt) { r.Validity = &Validity{ExpiresOn: "next tuesday"} }, "validity.expires_on"},
		{"expires on a day that is not", func(r *Receipt) { r.Validity = &Validity{ExpiresOn: "2026-02-30"} }, "validity.expires_on"},
	} {
		r := testReceipt()
		tt.edit(r)
		err := CheckReceipt(r, windowNow)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.label, err)
			}
			continue
		}
		got, ok := AsRefusal(err)
		if !ok || got.Code != IncompleteEvidence || got.Field != tt.field {
			t.Errorf("%s: got %v, want incomplete_evidence on %s", tt.label, err, tt.field)
		}
	}
}
