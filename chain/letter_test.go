package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

// baseLetter is a valid seq-1 judging letter in canonical form.
const baseLetter = `{"schema":"m1nd-mission-letter-v0","mission_id":"msn_0123456789ab","mission_seq":1,"block_id":"sb_repo_core","brain_ref":"Repo-B1","seat":"hand","capability":"hand-runner","phase":"judging","started_at":"2026-07-09T12:00:00Z","updated_at":"2026-07-09T12:00:00Z"}`

func TestCanonicalIsKeyOrderedAndStable(t *testing.T) {
	// Keys out of order, whitespace, optional fields null: the same letter.
	messy := `{ "updated_at":"2026-07-09T12:00:00Z", "phase":"judging", "schema":"m1nd-mission-letter-v0",
	  "mission_seq":1, "mission_id":"msn_0123456789ab", "block_id":"sb_repo_core", "brain_ref":"Repo-B1",
	  "seat":"hand", "capability":"hand-runner", "started_at":"2026-07-09T12:00:00Z",
	  "prev_letter_id":null, "runner_id":null, "synthetic":false }`
	l, err := DecodeLetter([]byte(messy))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(l.Canonical()); got != baseLetter {
		t.Fatalf("canonical =\n%s\nwant\n%s", got, baseLetter)
	}
	sum := sha256.Sum256([]byte(baseLetter))
	if l.ID() != hex.EncodeToString(sum[:])[:12] {
		t.Fatalf("id %s is not sha256 prefix", l.ID())
	}
}

func TestCanonicalFieldOrderAndOptionals(t *testing.T) {
	prev, runner, packet := "aaaaaaaaaaaa", "r1", "sha256:"+strings.Repeat("0", 64)
	var tokens, exit int64 = 0, 0
	l := &Letter{
		Schema: LetterSchema, MissionID: "msn_0123456789ab", MissionSeq: 2, PrevLetterID: &prev,
		BlockID: "sb_x", BrainRef: "b", Seat: "hand", RunnerID: &runner, Capability: "build-runner",
		Phase: "merge_wait", Verdict: &Verdict{Decision: "APPROVE", Gist: "a <b> & c"},
		Gate:      &Gate{Command: "go test ./...", ExitStatus: &exit, ArtifactHash: packet},
		PacketRef: &packet, Synthetic: true, TokensTotal: &tokens,
		StartedAt: "2026-07-09T12:00:00Z", UpdatedAt: "2026-07-09T12:00:01Z",
	}
	want := `{"schema":"m1nd-mission-letter-v0","mission_id":"msn_0123456789ab","mission_seq":2,"prev_letter_id":"aaaaaaaaaaaa","block_id":"sb_x","brain_ref":"b","seat":"hand","runner_id":"r1","capability":"build-runner","phase":"merge_wait","verdict":{"decision":"APPROVE","gist":"a <b> & c"},"gate":{"command":"go test ./...","exit_status":0,"artifact_hash":"` + packet + `"},"packet_ref":"` + packet + `","synthetic":true,"tokens_total":0,"started_at":"2026-07-09T12:00:00Z","updated_at":"2026-07-09T12:00:01Z"}`
	if got := string(l.Canonical()); got != want {
		t.Fatalf("canonical =\n%s\nwant\n%s", got, want)
	}
	// Decoding the canonical bytes gives the same bytes back.
	again, err := DecodeLetter([]byte(want))
	if err != nil || string(again.Canonical()) != want {
		t.Fatalf("round trip: %v\n%s", err, again.Canonical())
	}
}

func TestDecodeLetterRefusals(t *testing.T) {
	tests := []struct {
		name  string
		input string
		code  rules.Code
		field string
	}{
		{"not json", `{"schema":`, rules.InvalidLetter, ""},
		{"array", `[1,2]`, rules.InvalidLetter, ""},
		{"trailing data", baseLetter + ` {}`, rules.InvalidLetter, ""},
		{"unknown field", strings.Replace(baseLetter, `"phase"`, `"worktree":"/x","phase"`, 1), rules.InvalidLetter, "worktree"},
		{"case variant key", strings.Replace(baseLetter, `"phase"`, `"Phase"`, 1), rules.InvalidLetter, "Phase"},
		{"duplicate key", strings.Replace(baseLetter, `"phase":"judging"`, `"phase":"judging","phase":"landed"`, 1), rules.InvalidLetter, "phase"},
		{"nested unknown", strings.Replace(baseLetter, `"phase":"judging"`, `"phase":"judging","verdict":{"decision":"APPROVE","why":"x"}`, 1), rules.InvalidLetter, "verdict.why"},
		{"wrong type", strings.Replace(baseLetter, `"mission_seq":1`, `"mission_seq":"1"`, 1), rules.InvalidLetter, "mission_seq"},
		{"float seq", strings.Replace(baseLetter, `"mission_seq":1`, `"mission_seq":1.5`, 1), rules.InvalidLetter, "mission_seq"},
		{"invalid utf8", strings.Replace(baseLetter, "hand-runner", "hand-\xffrunner", 1), rules.InvalidLetter, ""},
		{"other schema", strings.Replace(baseLetter, "letter-v0", "letter-v9", 1), rules.SchemaMismatch, "schema"},
		{"other schema with unknown fields", `{"schema":"m1nd-mission-letter-v1","new_field":1}`, rules.SchemaMismatch, "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLetter([]byte(tt.input))
			r, ok := rules.AsRefusal(err)
			if !ok {
				t.Fatalf("err = %v, want refusal %s", err, tt.code)
			}
			if r.Code != tt.code || r.Field != tt.field {
				t.Fatalf("refused %s (%s), want %s (%s): %s", r.Code, r.Field, tt.code, tt.field, r.Lesson)
			}
			if r.Lesson == "" || strings.Contains(r.Lesson, "\n") {
				t.Fatalf("lesson must be one line: %q", r.Lesson)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	gate := `"gate":{"command":"go test ./...","exit_status":0,"artifact_hash":"` + hash + `"}`
	set := func(field, value string) string {
		// replaces or inserts "field":value before started_at
		l := baseLetter
		if i := strings.Index(l, `"`+field+`":`); i >= 0 {
			end := strings.Index(l[i:], `,"`)
			if end < 0 {
				end = strings.LastIndex(l[i:], "}")
			}
			end += i
			return l[:i] + `"` + field + `":` + value + l[end:]
		}
		return strings.Replace(l, `"started_at"`, `"`+field+`":`+value+`,"started_at"`, 1)
	}
	phase := func(p, extra string) string {
		l := set("phase", `"`+p+`"`)
		if extra != "" {
			l = strings.Replace(l, `"started_at"`, extra+`,"started_at"`, 1)
		}
		return l
	}
	tests := []struct {
		name  string
		input string
		code  rules.Code // "" = valid
		field string
	}{
		{"base", baseLetter, "", ""},
		{"missing schema", strings.Replace(baseLetter, `"schema":"m1nd-mission-letter-v0",`, "", 1), rules.SchemaMismatch, "schema"},
		{"bad mission id", set("mission_id", `"msn_XYZ"`), rules.InvalidLetter, "mission_id"},
		{"uppercase mission id", set("mission_id", `"msn_0123456789AB"`), rules.InvalidLetter, "mission_id"},
		{"seq zero", set("mission_seq", `0`), rules.InvalidLetter, "mission_seq"},
		{"bad prev", strings.Replace(baseLetter, `"block_id"`, `"prev_letter_id":"xyz","block_id"`, 1), rules.InvalidLetter, "prev_letter_id"},
		{"empty block", set("block_id", `""`), rules.InvalidLetter, "block_id"},
		{"brain path", set("brain_ref", `"/home/x/Repo"`), rules.InvalidLetter, "brain_ref"},
		{"brain tilde", set("brain_ref", `"~repo"`), rules.InvalidLetter, "brain_ref"},
		{"brain drive", set("brain_ref", `"C:repo"`), rules.InvalidLetter, "brain_ref"},
		{"brain backslash", set("brain_ref", `"a\\b"`), rules.InvalidLetter, "brain_ref"},
		{"bad seat", set("seat", `"chair"`), rules.InvalidLetter, "seat"},
		{"vendor capability", set("capability", `"claude-runner"`), rules.InvalidLetter, "capability"},
		{"bad phase", set("phase", `"done"`), rules.InvalidLetter, "phase"},
		{"bad decision", phase("judging", `"verdict":{"decision":"MAYBE"}`), rules.InvalidLetter, "verdict.decision"},
		{"bad timestamp", set("updated_at", `"yesterday"`), rules.InvalidLetter, "updated_at"},
		{"offset timestamp ok", set("updated_at", `"2026-07-09T14:00:00+02:00"`), "", ""},
		{"bad packet ref", set("packet_ref", `"md5:abc"`), rules.InvalidLetter, "packet_ref"},
		{"negative tokens", set("tokens_total", `-1`), rules.InvalidLetter, "tokens_total"},
		{"executing with verdict", phase("executing", `"verdict":{"decision":"APPROVE","gist":"ok"}`), rules.InvalidPhase, "verdict"},
		{"executing plain", phase("executing", ""), "", ""},
		{"merge_wait without gate", phase("merge_wait", ""), rules.IncompleteEvidence, "gate.command"},
		{"merge_wait blank command", phase("merge_wait", `"gate":{"command":"  ","artifact_hash":"`+hash+`"}`), rules.IncompleteEvidence, "gate.command"},
		{"merge_wait without hash", phase("merge_wait", `"gate":{"command":"make test","exit_status":0,"artifact_hash":""}`), rules.IncompleteEvidence, "gate.artifact_hash"},
		{"merge_wait of a gate that failed", phase("merge_wait", `"gate":{"command":"make test","exit_status":1,"artifact_hash":"`+hash+`"}`), rules.IncompleteEvidence, "gate.exit_status"},
		{"merge_wait of a gate with no exit", phase("merge_wait", `"gate":{"command":"make test","artifact_hash":"`+hash+`"}`), rules.IncompleteEvidence, "gate.exit_status"},
		{"a candidate of another log", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"sha256:`+strings.Repeat("cd", 32)+`","evidence_refs":["x"]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.artifact_hash"},
		{"a candidate of another command", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["x"],"command":"true"}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.command"},
		{"a candidate that failed", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["x"],"exit_status":2}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.exit_status"},
		{"a runner's candidate naming no tested commit", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","emitter":{"kind":"runnerd","id":"b1"},"scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["x"]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs"},
		{"a tested commit without its tree", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["commit:`+strings.Repeat("a", 40)+`"]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs"},
		{"a tested commit that is no hash", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["commit:HEAD","tree:`+strings.Repeat("a", 40)+`"]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs"},
		{"a runner's candidate naming what it tested", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","emitter":{"kind":"runnerd","id":"b1"},"scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["commit:`+strings.Repeat("a", 40)+`","tree:`+strings.Repeat("b", 40)+`"]}}`), "", ""},
		{"merge_wait ok", phase("merge_wait", gate), "", ""},
		{"gate phase without hash", phase("gate", `"gate":{"command":"make test","artifact_hash":""}`), rules.IncompleteEvidence, "gate.artifact_hash"},
		{"candidate without refs", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":[]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs"},
		{"candidate without hash", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"","evidence_refs":["gate://msn_0123456789ab"]}}`), rules.IncompleteEvidence, "receipt_candidate.evidence.artifact_hash"},
		{"candidate ok", phase("merge_wait", gate+`,"receipt_candidate":{"block_id":"sb_x","type":"test","scope":{"boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"`+hash+`","evidence_refs":["gate://msn_0123456789ab"]}}`), "", ""},
		{"landed without receipt", phase("landed", gate), rules.LandedLaw, "receipt.imported"},
		{"landed not imported", phase("landed", `"receipt":{"imported":false,"store_version":3}`), rules.LandedLaw, "receipt.imported"},
		{"landed version zero", phase("landed", `"receipt":{"imported":true,"store_version":0}`), rules.LandedLaw, "receipt.store_version"},
		{"landed ok", phase("landed", `"receipt":{"imported":true,"store_version":9}`), "", ""},
		{"archived imported", phase("archived", `"receipt":{"imported":true,"store_version":9}`), rules.LandedLaw, "receipt.imported"},
		{"archived ok", phase("archived", gate), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := DecodeLetter([]byte(tt.input))
			if err == nil {
				err = Validate(l)
			}
			if tt.code == "" {
				if err != nil {
					t.Fatalf("valid letter refused: %v\n%s", err, tt.input)
				}
				return
			}
			r, ok := rules.AsRefusal(err)
			if !ok || r.Code != tt.code || r.Field != tt.field {
				t.Fatalf("got %v, want %s (%s)\n%s", err, tt.code, tt.field, tt.input)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	for _, tt := range []struct {
		id      string
		mission bool
		agent   bool
	}{
		{"msn_0123456789ab", true, true},
		{"msn_0123456789a", false, true},
		{"msn_0123456789abc", false, true},
		{"msn_0123456789aB", false, false},
		{"owner", false, true},
		{"runnerd:r1", false, true},
		{"runnerd:", false, false},
		{"Owner", false, false},
		{"-x", false, false},
		{"a" + strings.Repeat("b", 63), false, true},
		{"a" + strings.Repeat("b", 64), false, false},
		{"a/b", false, false},
		{"a+b", false, false},
	} {
		if got := ValidMissionID(tt.id); got != tt.mission {
			t.Errorf("ValidMissionID(%q) = %v", tt.id, got)
		}
		if got := rules.ValidAgentID(tt.id); got != tt.agent {
			t.Errorf("rules.ValidAgentID(%q) = %v", tt.id, got)
		}
	}
	name, err := AgentRefName("runnerd:r1")
	if err != nil || name != "runnerd+r1" {
		t.Fatalf("AgentRefName = %q, %v", name, err)
	}
	if back, err := AgentFromRefName(name); err != nil || back != "runnerd:r1" {
		t.Fatalf("AgentFromRefName = %q, %v", back, err)
	}
	if _, err := MissionRef("msn_../../x"); err == nil {
		t.Fatal("MissionRef accepted a path")
	}
}

func TestSetPhaseDropsWhatThePhaseCannotCarry(t *testing.T) {
	l := &Letter{Phase: "judging", Verdict: &Verdict{Decision: "APPROVE", Gist: "go"}}
	l.SetPhase("review")
	if l.Verdict == nil {
		t.Fatal("review keeps its verdict")
	}
	l.SetPhase(PhaseExecuting)
	if l.Phase != PhaseExecuting || l.Verdict != nil {
		t.Fatalf("executing: %+v", l)
	}
	mw := &Letter{Phase: PhaseMergeWait, ReceiptCandidate: &ReceiptCandidate{BlockID: "sb_x_core"}, Receipt: &Receipt{Imported: true, StoreVersion: 2}}
	mw.SetPhase(PhaseLanded)
	if mw.ReceiptCandidate == nil || mw.Receipt == nil {
		t.Fatal("landed keeps its candidate and receipt")
	}
	mw.SetPhase(PhaseArchived)
	if mw.Phase != PhaseArchived || mw.ReceiptCandidate != nil || mw.Receipt != nil {
		t.Fatalf("archived: %+v", mw)
	}
}
