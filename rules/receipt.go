package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Receipt is evidence about one block: what kind of proof it is, who made
// it, the block boundary and contract it was proved at, and the evidence
// itself. A mission letter carries one as its receipt_candidate; only a
// human's receipt import stores it in the brain store, where it may change
// the block's colour. Field order is the canonical key order.
type Receipt struct {
	BlockID  string    `json:"block_id"`
	Type     string    `json:"type"`
	Emitter  *Emitter  `json:"emitter,omitempty"`
	Scope    Scope     `json:"scope"`
	Evidence Evidence  `json:"evidence"`
	Validity *Validity `json:"validity,omitempty"`
}

// Emitter names who produced a receipt.
type Emitter struct {
	Kind string `json:"kind"` // ci | runnerd | verb | owner
	ID   string `json:"id"`
}

// Scope pins evidence to the block's boundary and contract versions.
type Scope struct {
	BlockID         string `json:"block_id,omitempty"`
	BoundaryVersion int64  `json:"boundary_version"`
	ContractVersion int64  `json:"contract_version"`
	ResolutionHash  string `json:"resolution_hash,omitempty"`
}

// Evidence is what a receipt rests on. A test receipt also carries the run.
type Evidence struct {
	ArtifactHash string   `json:"artifact_hash"`
	EvidenceRefs []string `json:"evidence_refs"`
	Command      string   `json:"command,omitempty"`
	Cwd          string   `json:"cwd,omitempty"`
	ExitStatus   *int64   `json:"exit_status,omitempty"`
	StartedAt    string   `json:"started_at,omitempty"`
	EndedAt      string   `json:"ended_at,omitempty"`
	Excerpt      []string `json:"excerpt,omitempty"`
}

// Validity says when a receipt stops counting.
type Validity struct {
	ExpiresOn string   `json:"expires_on,omitempty"`
	StalesOn  []string `json:"stales_on,omitempty"`
}

// ReceiptTypes is the closed set of receipt types.
var ReceiptTypes = []string{"test", "structural", "runtime", "review", "handoff", "spec"}

// EmitterKinds is the closed set of emitter kinds.
var EmitterKinds = []string{"ci", "runnerd", "verb", "owner"}

// runEvidence lists, per receipt type, the fields of a run that evidence of
// that type must carry beyond artifact_hash and evidence_refs. A test
// receipt proves a command ran, where, how it ended and when; a runtime
// receipt proves something was observed running, and when.
func runEvidence(receiptType string) []string {
	switch receiptType {
	case "test":
		return []string{"command", "cwd", "exit_status", "started_at", "ended_at"}
	case "runtime":
		return []string{"command", "started_at", "ended_at"}
	}
	return nil
}

// WindowLayout is the one timestamp spelling receipt windows accept.
const WindowLayout = "2006-01-02T15:04:05Z"

// MaxWindow is the longest execution window a receipt may claim.
const MaxWindow = 24 * time.Hour

func blank(s string) bool { return strings.TrimSpace(s) == "" }

func evidenceRefusal(field, format string, args ...any) error {
	return Refusef(IncompleteEvidence, field, format, args...)
}

// CheckBaseEvidence is the contract every piece of evidence meets, whatever
// its type: a non-blank artifact_hash and at least one evidence ref, none
// blank. prefix names where the evidence sits ("receipt_candidate.evidence").
func CheckBaseEvidence(e Evidence, prefix string) error {
	if blank(e.ArtifactHash) {
		return evidenceRefusal(prefix+".artifact_hash", "evidence needs an artifact_hash: the sha256 of what was checked")
	}
	if len(e.EvidenceRefs) == 0 {
		return evidenceRefusal(prefix+".evidence_refs", "evidence needs evidence_refs naming where it can be checked")
	}
	for _, ref := range e.EvidenceRefs {
		if blank(ref) {
			return evidenceRefusal(prefix+".evidence_refs", "evidence_refs entries cannot be blank")
		}
	}
	return nil
}

// CheckReceipt applies the evidence contract of the receipt's type and the
// execution window law, as a receipt import does: a known type, the base
// evidence, the run fields the type needs, a repo-relative cwd, and a
// window (when the receipt has one) that is well-formed, forward, not in
// the future and at most 24 hours long. now is the importer's clock.
func CheckReceipt(r *Receipt, now time.Time) error {
	if !slices.Contains(ReceiptTypes, r.Type) {
		return evidenceRefusal("type", "receipt type must be one of %s", strings.Join(ReceiptTypes, ", "))
	}
	if r.Emitter != nil && !slices.Contains(EmitterKinds, r.Emitter.Kind) {
		return evidenceRefusal("emitter.kind", "emitter.kind must be one of %s", strings.Join(EmitterKinds, ", "))
	}
	e := r.Evidence
	if err := CheckBaseEvidence(e, "evidence"); err != nil {
		return err
	}
	present := map[string]bool{
		"command":     !blank(e.Command),
		"cwd":         e.Cwd != "",
		"exit_status": e.ExitStatus != nil,
		"started_at":  e.StartedAt != "",
		"ended_at":    e.EndedAt != "",
	}
	for _, field := range runEvidence(r.Type) {
		if !present[field] {
			return evidenceRefusal("evidence."+field, "a %s receipt's evidence needs %s", r.Type, strings.Join(runEvidence(r.Type), ", "))
		}
	}
	if e.Cwd != "" {
		if problem := RepoRelativeProblem(e.Cwd); problem != "" {
			return evidenceRefusal("evidence.cwd", "evidence.cwd must be relative to the repository root (%s)", problem)
		}
	}
	if r.Validity != nil && r.Validity.ExpiresOn != "" {
		if _, err := ExpiresAt(r.Validity.ExpiresOn); err != nil {
			return evidenceRefusal("validity.expires_on", "validity.expires_on is a date (2026-12-31) or an RFC 3339 time")
		}
	}
	if present["started_at"] || present["ended_at"] {
		return CheckWindow(e.StartedAt, e.EndedAt, now)
	}
	return nil
}

// ExpiresAt reads validity.expires_on: a date (the receipt stops counting
// at the start of that day, UTC) or an RFC 3339 time.
func ExpiresAt(s string) (time.Time, error) {
	if at, err := time.Parse("2006-01-02", s); err == nil {
		return at, nil
	}
	return time.Parse(time.RFC3339, s)
}

// CheckWindow is the receipt window law: both ends spelled
// YYYY-MM-DDTHH:MM:SSZ, started strictly before ended, neither after now,
// and the window at most 24 hours (exactly 24 hours passes).
func CheckWindow(startedAt, endedAt string, now time.Time) error {
	start, err := parseWindowTime(startedAt)
	if err != nil {
		return evidenceRefusal("evidence.started_at", "started_at must be a UTC time spelled YYYY-MM-DDTHH:MM:SSZ")
	}
	end, err := parseWindowTime(endedAt)
	if err != nil {
		return evidenceRefusal("evidence.ended_at", "ended_at must be a UTC time spelled YYYY-MM-DDTHH:MM:SSZ")
	}
	switch {
	case !start.Before(end):
		return evidenceRefusal("evidence.ended_at", "the window must run forward: started_at strictly before ended_at")
	case start.After(now):
		return evidenceRefusal("evidence.started_at", "started_at is in the future; evidence is never dated ahead")
	case end.After(now):
		return evidenceRefusal("evidence.ended_at", "ended_at is in the future; evidence is never dated ahead")
	case end.Sub(start) > MaxWindow:
		return evidenceRefusal("evidence.ended_at", "the window is longer than 24 hours; a receipt proves one run")
	}
	return nil
}

// parseWindowTime accepts only the exact spelling: time.Parse alone would
// also take fractional seconds.
func parseWindowTime(s string) (time.Time, error) {
	t, err := time.Parse(WindowLayout, s)
	if err == nil && t.Format(WindowLayout) != s {
		err = fmt.Errorf("%q is not spelled %s", s, WindowLayout)
	}
	return t, err
}

// RepoRelativeProblem says why p is not a path relative to the repository
// root, or "" when it is: no leading / \ or ~, no drive letter, no "..".
func RepoRelativeProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return "absolute"
	case strings.HasPrefix(p, "~"):
		return "home-relative"
	case len(p) >= 2 && p[1] == ':':
		return "a drive letter"
	case HasControl(p):
		return "a control character"
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "climbs out with .."
		}
	}
	return ""
}

// The evidence refs that bind a gate to what it tested (DESIGN §10):
// "commit:<40 hex>" and "tree:<40 hex>", inside the frozen letter schema.
const (
	TestedCommitRef = "commit:"
	TestedTreeRef   = "tree:"
)

// Tested is the commit and tree a receipt's gate ran on, as its evidence
// names them ("" when it names none).
func (e Evidence) Tested() (commit, tree string) {
	for _, ref := range e.EvidenceRefs {
		if c, ok := strings.CutPrefix(ref, TestedCommitRef); ok && commit == "" {
			commit = c
		}
		if t, ok := strings.CutPrefix(ref, TestedTreeRef); ok && tree == "" {
			tree = t
		}
	}
	return commit, tree
}

// CheckTested refuses evidence whose refs name a tested commit or tree
// that is not 40 lowercase hex, name one twice, or name a commit without
// its tree (or the other way round); need requires both.
func CheckTested(e Evidence, prefix string, need bool) error {
	counts := map[string]int{}
	for _, ref := range e.EvidenceRefs {
		for _, kind := range []string{TestedCommitRef, TestedTreeRef} {
			if h, ok := strings.CutPrefix(ref, kind); ok {
				counts[kind]++
				if len(h) != 40 || strings.Trim(h, "0123456789abcdef") != "" {
					return evidenceRefusal(prefix+".evidence_refs", "a tested %s is named %s<40 hex>", strings.TrimSuffix(kind, ":"), kind)
				}
			}
		}
	}
	c, t := counts[TestedCommitRef], counts[TestedTreeRef]
	switch {
	case c > 1 || t > 1:
		return evidenceRefusal(prefix+".evidence_refs", "the evidence names one tested commit and one tested tree")
	case c != t:
		return evidenceRefusal(prefix+".evidence_refs", "the evidence names the commit its gate tested and that commit's tree, both (commit:… and tree:…)")
	case need && c == 0:
		return evidenceRefusal(prefix+".evidence_refs", "a runner's gate names the commit and the tree it tested (commit:… and tree:… in evidence_refs): the gate binds a commit")
	}
	return nil
}

// PinOf is the runner pin the evidence names as the one whose gate proved
// it (pin:sha256:…), "" when it names none.
func (e Evidence) PinOf() string {
	for _, ref := range e.EvidenceRefs {
		if p, ok := strings.CutPrefix(ref, PinRef); ok {
			return p
		}
	}
	return ""
}

// NamesTree reports whether the evidence names the tree its gate tested:
// a landing of it moves a target there.
func NamesTree(e Evidence) bool {
	_, tree := e.Tested()
	return tree != ""
}
