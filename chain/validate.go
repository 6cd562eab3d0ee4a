package chain

import (
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// The closed enums of the v0 letter.
var (
	Seats        = []string{"oracle", "hand"}
	Capabilities = []string{"build-runner", "naming-runner", "loop-runner", "hand-runner", "review-runner"}
	Phases       = []string{"judging", "executing", "gate", "review", "merge_wait", "landed", "failed", "archived"}
	Decisions    = []string{"APPROVE", "CHANGE", "REJECT"}
)

// DecisionChange is the verdict of a review that requests changes: the
// one letter after which work returns to a mission that waits to land.
const DecisionChange = "CHANGE"

// RequestsChanges reports a review letter whose verdict is CHANGE.
func RequestsChanges(l *Letter) bool {
	return l.Phase == PhaseReview && l.Verdict != nil && l.Verdict.Decision == DecisionChange
}

// Finished reports whether phase ends a mission: landed or archived,
// which nothing follows, which fold, and which no history may drop.
func Finished(phase string) bool { return phase == PhaseLanded || phase == PhaseArchived }

// Phase names used by the laws.
const (
	PhaseJudging   = "judging"
	PhaseExecuting = "executing"
	PhaseGate      = "gate"
	PhaseReview    = "review"
	PhaseMergeWait = "merge_wait"
	PhaseLanded    = "landed"
	PhaseFailed    = "failed"
	PhaseArchived  = "archived"
)

// validSHA256Ref checks "sha256:" followed by 64 lowercase hex digits.
func validSHA256Ref(s string) bool {
	rest, ok := strings.CutPrefix(s, "sha256:")
	return ok && isLowerHex(rest, 64)
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// Validate applies the v0 schema and the per-phase laws (DESIGN §4). It is
// pure: it reads nothing but the letter. The first failure wins.
func Validate(l *Letter) error {
	if l.Schema != LetterSchema {
		return rules.Refusef(rules.SchemaMismatch, "schema", "schema must be %q", LetterSchema)
	}
	if err := validateShape(l); err != nil {
		return err
	}
	return validatePhaseLaws(l)
}

// missingFields refuses a letter that lacks fields every letter carries,
// naming them all: a half-written letter is told what it lacks before any
// check compares what it holds (a brain_ref it never set is no other
// brain). The schema is DecodeLetter's (schema_mismatch), and a missing
// prev_letter_id is the head CAS's to answer (stale_head).
func missingFields(l *Letter) error {
	var missing []string
	for _, f := range []struct {
		name   string
		absent bool
	}{
		{"mission_id", l.MissionID == ""},
		{"mission_seq", l.MissionSeq == 0},
		{"block_id", l.BlockID == ""},
		{"brain_ref", l.BrainRef == ""},
		{"seat", l.Seat == ""},
		{"capability", l.Capability == ""},
		{"phase", l.Phase == ""},
		{"started_at", l.StartedAt == ""},
		{"updated_at", l.UpdatedAt == ""},
	} {
		if f.absent {
			missing = append(missing, f.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return invalid(missing[0], "the letter lacks %s (m1nd mission next ID prints a whole one to edit)", strings.Join(missing, ", "))
}

func invalid(field, format string, args ...any) error {
	return rules.Refusef(rules.InvalidLetter, field, format, args...)
}

// validateShape checks each field on its own, theme by theme in the
// order the letter reads, so a letter with several faults always gets the
// same refusal: the first failure wins.
func validateShape(l *Letter) error {
	for _, check := range []func(*Letter) error{shapeOfMission, shapeOfSeat, shapeOfVerdict, shapeOfRecords, shapeOfTimes} {
		if err := check(l); err != nil {
			return err
		}
	}
	return nil
}

// shapeOfMission checks what places the letter: its mission, its place in
// the mission, the block it is about and the brain it belongs to.
func shapeOfMission(l *Letter) error {
	if !ValidMissionID(l.MissionID) {
		return invalid("mission_id", "mission_id must be msn_ followed by 12 lowercase hex digits")
	}
	if l.MissionSeq < 1 {
		return invalid("mission_seq", "mission_seq starts at 1 and counts the letters of the mission")
	}
	if l.PrevLetterID != nil && !ValidLetterID(*l.PrevLetterID) {
		return invalid("prev_letter_id", "prev_letter_id is the previous letter's id: 12 lowercase hex digits (omit it for seq 1)")
	}
	if strings.TrimSpace(l.BlockID) == "" || rules.HasControl(l.BlockID) {
		return invalid("block_id", "block_id names the block the mission is about (sb_…, or the skeleton id)")
	}
	return checkBrainRef(l.BrainRef)
}

// shapeOfSeat checks who works the mission and where it stands: the seat,
// the runner, the capability and the phase, each from its closed set.
func shapeOfSeat(l *Letter) error {
	if !oneOf(l.Seat, Seats) {
		return invalid("seat", "seat must be one of %s", strings.Join(Seats, ", "))
	}
	if l.RunnerID != nil && !rules.ValidAgentID(*l.RunnerID) {
		return invalid("runner_id", "runner_id is a pinned runner id: "+rules.IDRule+" (omit it when no runner is involved)")
	}
	if !oneOf(l.Capability, Capabilities) {
		return invalid("capability", "capability must be one of %s", strings.Join(Capabilities, ", "))
	}
	if !oneOf(l.Phase, Phases) {
		return invalid("phase", "phase must be one of %s", strings.Join(Phases, ", "))
	}
	return nil
}

// shapeOfVerdict checks a verdict, when there is one: a closed decision
// and a gist that stays on one line.
func shapeOfVerdict(l *Letter) error {
	v := l.Verdict
	if v == nil {
		return nil
	}
	if !oneOf(v.Decision, Decisions) {
		return invalid("verdict.decision", "verdict.decision must be one of %s", strings.Join(Decisions, ", "))
	}
	if rules.HasUnsafeText(v.Gist) || strings.ContainsAny(v.Gist, "\n\t") {
		return invalid("verdict.gist", "verdict.gist is one line of plain text")
	}
	return nil
}

// shapeOfRecords checks what the letter records of the work: the packet
// it was given, the tokens it spent and the gate command it ran.
func shapeOfRecords(l *Letter) error {
	if l.PacketRef != nil && !validSHA256Ref(*l.PacketRef) {
		return invalid("packet_ref", "packet_ref is sha256: followed by 64 lowercase hex digits of the packet markdown")
	}
	if l.TokensTotal != nil && *l.TokensTotal < 0 {
		return invalid("tokens_total", "tokens_total cannot be negative")
	}
	if g := l.Gate; g != nil && (rules.HasUnsafeText(g.Command) || strings.Contains(g.Command, "\n")) {
		return invalid("gate.command", "gate.command is the command line, verbatim, on one line")
	}
	return nil
}

// shapeOfTimes checks the letter's two timestamps.
func shapeOfTimes(l *Letter) error {
	for _, ts := range []struct{ field, value string }{{"started_at", l.StartedAt}, {"updated_at", l.UpdatedAt}} {
		if !rules.ValidDocTime(ts.value) {
			return invalid(ts.field, "%s must be an RFC 3339 timestamp such as 2026-07-09T12:00:00Z, 1970 or later (git dates no commit before)", ts.field)
		}
	}
	return nil
}

// checkBrainRef refuses anything that is not a bare display name: the
// letter never carries a path (seed 1f).
func checkBrainRef(ref string) error {
	if problem := rules.DisplayNameProblem(ref); problem != "" {
		return invalid("brain_ref", "brain_ref is the brain's bare display name (the main worktree's folder name), never a path: this one is %s", problem)
	}
	return nil
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// candidateAgrees refuses a merge_wait candidate whose evidence is not its
// gate's: the same artifact hash, a zero exit and the same command where
// it names them, and, from a runner, the commit and tree the gate tested.
func candidateAgrees(g *Gate, c *ReceiptCandidate) error {
	if c == nil {
		return nil
	}
	e := c.Evidence
	disagree := func(field, what string) error {
		return rules.Refusef(rules.IncompleteEvidence, "receipt_candidate.evidence."+field, "the candidate's evidence is its gate's: %s", what)
	}
	switch {
	case e.ArtifactHash != g.ArtifactHash:
		return disagree("artifact_hash", "its artifact_hash is gate.artifact_hash, the sha256 of the gate's log")
	case e.ExitStatus != nil && *e.ExitStatus != 0:
		return disagree("exit_status", "a gate that passed exited 0")
	case e.Command != "" && e.Command != g.Command:
		return disagree("command", "its command is gate.command")
	}
	return rules.CheckTested(e, "receipt_candidate.evidence", c.Emitter != nil && c.Emitter.Kind == "runnerd")
}

// validatePhaseLaws checks what the letter's phase demands of it, then
// the gate and the receipt candidate it carries, in that order: the first
// failure wins.
func validatePhaseLaws(l *Letter) error {
	if err := phaseLaw(l); err != nil {
		return err
	}
	if err := gateHashLaw(l.Gate); err != nil {
		return err
	}
	return candidateLaw(l.ReceiptCandidate)
}

// phaseLaw checks the law of the letter's own phase; a phase with no law
// of its own passes.
func phaseLaw(l *Letter) error {
	switch l.Phase {
	case PhaseExecuting:
		if l.Verdict != nil {
			return rules.Refusef(rules.InvalidPhase, "verdict", "an executing letter carries no verdict; the verdict comes with judging or review")
		}
	case PhaseMergeWait:
		return mergeWaitLaw(l)
	case PhaseLanded:
		return landedLaw(l.Receipt)
	case PhaseArchived:
		if l.Receipt != nil && l.Receipt.Imported {
			return rules.Refusef(rules.LandedLaw, "receipt.imported", "an archived letter sets its receipt aside; it cannot claim an imported receipt")
		}
	}
	return nil
}

// mergeWaitLaw: merge_wait stands on a gate that passed, and a candidate
// it carries agrees with that gate.
func mergeWaitLaw(l *Letter) error {
	if l.Gate == nil || blank(l.Gate.Command) {
		return rules.Refusef(rules.IncompleteEvidence, "gate.command", "merge_wait needs the gate that proved the work: gate.command and gate.artifact_hash")
	}
	if l.Gate.ExitStatus == nil || *l.Gate.ExitStatus != 0 {
		return rules.Refusef(rules.IncompleteEvidence, "gate.exit_status", "merge_wait is a gate that passed: gate.exit_status 0 (seed §1d: gate-zero is merge_wait); a gate that did not pass is failed")
	}
	return candidateAgrees(l.Gate, l.ReceiptCandidate)
}

// landedLaw: landed stands on a receipt the store imported, at a version
// it names.
func landedLaw(r *Receipt) error {
	if r == nil || !r.Imported {
		return rules.Refusef(rules.LandedLaw, "receipt.imported", "landed means the receipt is imported into the store; a green gate alone is merge_wait")
	}
	if r.StoreVersion < 1 {
		return rules.Refusef(rules.LandedLaw, "receipt.store_version", "landed names the store_version its receipt was imported at (1 or more)")
	}
	return nil
}

// gateHashLaw: a gate, in any phase, carries the hash of its full log, so
// the evidence can be checked later.
func gateHashLaw(g *Gate) error {
	if g == nil {
		return nil
	}
	if blank(g.ArtifactHash) {
		return rules.Refusef(rules.IncompleteEvidence, "gate.artifact_hash", "a gate carries the sha256 of its full log as artifact_hash")
	}
	if !validSHA256Ref(g.ArtifactHash) {
		return invalid("gate.artifact_hash", "gate.artifact_hash is sha256: followed by 64 lowercase hex digits")
	}
	return nil
}

// candidateLaw: a receipt candidate, in any phase, names its block and
// type and carries the base evidence.
func candidateLaw(c *ReceiptCandidate) error {
	if c == nil {
		return nil
	}
	if blank(c.BlockID) || blank(c.Type) {
		return invalid("receipt_candidate.block_id", "a receipt candidate names its block_id and type")
	}
	return rules.CheckBaseEvidence(c.Evidence, "receipt_candidate.evidence")
}
