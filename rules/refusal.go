package rules

import (
	"errors"
	"fmt"
	"slices"
)

// Code names why something was refused. The set is closed (DESIGN §5).
type Code string

// The refusal codes.
const (
	SchemaMismatch        Code = "schema_mismatch"
	InvalidLetter         Code = "invalid_letter"
	InvalidPhase          Code = "invalid_phase"
	IncompleteEvidence    Code = "incomplete_evidence"
	LandedLaw             Code = "landed_law"
	StaleHead             Code = "stale_head"
	InvalidTransition     Code = "invalid_transition"
	HumanGestureRequired  Code = "human_gesture_required"
	BrainMismatch         Code = "brain_mismatch"
	UnknownBlock          Code = "unknown_block"
	StaleScope            Code = "stale_scope"
	ReadOnlyOwner         Code = "read_only_owner"
	StoreVersionConflict  Code = "store_version_conflict"
	NeedsOwnerNaming      Code = "needs_owner_naming"
	SkeletonNotCandidate  Code = "skeleton_not_candidate"
	CandidateEditRejected Code = "candidate_edit_rejected"
	NoStore               Code = "no_store"
	UnknownMission        Code = "unknown_mission"
	UnpinnedRunner        Code = "unpinned_runner"
	WorkspaceNotAllowed   Code = "workspace_not_allowed"
	NotPublisher          Code = "not_publisher"
	BadPublisherProof     Code = "bad_publisher_proof"
	MergeConflict         Code = "merge_conflict"
	WorktreeDirty         Code = "worktree_dirty"
	BrokenHistory         Code = "broken_history"
	StaleGate             Code = "stale_gate"
	UnprovenGate          Code = "unproven_gate"
	NotYourAgent          Code = "not_your_agent"
)

// codeLesson is a refusal code and its default lesson.
type codeLesson struct {
	code   Code
	lesson string
}

// defaultLessons is what a newcomer reads when a refusal has no more
// specific lesson. Every code has one. A slice, laid out by the compiler:
// a map would be built at every start of every m1nd call.
var defaultLessons = []codeLesson{
	{SchemaMismatch, `the document's "schema" is not one this m1nd speaks; mission letters say "m1nd-mission-letter-v0"`},
	{InvalidLetter, "the letter is not a well-formed m1nd-mission-letter-v0 document; fix the named field and post again"},
	{InvalidPhase, "this phase cannot carry that field; an executing letter has no verdict yet"},
	{IncompleteEvidence, "evidence needs an artifact hash (and evidence refs for a receipt candidate); a merge_wait letter needs its gate command"},
	{LandedLaw, "landed means the receipt is imported into the store; a green gate alone is merge_wait"},
	{StaleHead, "the mission's head moved since you read it; read the head again and extend it"},
	{InvalidTransition, "that phase cannot follow the current head; archived only supersedes a merge_wait head"},
	{HumanGestureRequired, "this is a human gesture; the tray (or an interactive terminal) makes it, agents never do"},
	{BrainMismatch, "the letter names another brain; brain_ref must be this repository's display name"},
	{UnknownBlock, "the letter names a block this brain does not have; use a block id from `m1nd blocks` or mark a probe synthetic"},
	{StaleScope, "the evidence was proved at another boundary or contract version than the block has now"},
	{ReadOnlyOwner, "this owner is read-only; writes go to a writable owner"},
	{StoreVersionConflict, "the store moved since you read it; read it again and resend with the new store version"},
	{NeedsOwnerNaming, "a block still carries a heuristic name; the owner names it before ratifying"},
	{SkeletonNotCandidate, "the skeleton is already ratified; edits apply to a candidate skeleton"},
	{CandidateEditRejected, "one edit in the batch failed, so none was applied"},
	{NoStore, "this brain has no store yet; run `m1nd skeleton scan` first"},
	{UnknownMission, "no mission with that id exists in this brain"},
	{UnpinnedRunner, "that runner id is not pinned in runners.toml; the operator pins runners, announces cannot"},
	{WorkspaceNotAllowed, "that workspace is outside the runner's pinned workspace roots"},
	{NotPublisher, "only the publisher of a shared document may amend it"},
	{BadPublisherProof, "the publisher proof does not verify"},
	{MergeConflict, "the mission's branch does not merge cleanly into its target; resolve it on the branch, then land again"},
	{WorktreeDirty, "the target branch is checked out in a worktree with uncommitted changes; commit or stash them, then land again"},
	{BrokenHistory, "this ref's history breaks the laws (written past the hooks); nothing proceeds on it: m1nd verify names the commit and the law"},
	{StaleGate, "the branch or the target moved since the gate, and no gate has passed on what would land yet; runnerd gates it again, then land"},
	{UnprovenGate, "no runner you approved proved this gate: a runner's merge_wait carries its signature (only runnerd writes one), and landing a claimed gate first has runnerd run the approved gate"},
	{NotYourAgent, "an agent reads and moves only its own records; the owner (no agent identity set) may read any agent's inbox"},
}

// Refusal is a law saying no. It is an error, and callers test for it with
// errors.As. Nothing has been written when a Refusal is returned.
type Refusal struct {
	Code   Code   `json:"refused"`
	Field  string `json:"field,omitempty"`
	Lesson string `json:"lesson"`
}

// Refuse builds a refusal with the code's default lesson.
func Refuse(code Code, field string) *Refusal {
	return &Refusal{Code: code, Field: field, Lesson: Lesson(code)}
}

// Refusef builds a refusal with a specific one-line lesson.
func Refusef(code Code, field, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Field: field, Lesson: fmt.Sprintf(format, args...)}
}

func lessonIndex(code Code) int {
	return slices.IndexFunc(defaultLessons, func(l codeLesson) bool { return l.code == code })
}

// Lesson returns the default lesson for a code.
func Lesson(code Code) string {
	if i := lessonIndex(code); i >= 0 {
		return defaultLessons[i].lesson
	}
	return string(code)
}

// Known reports whether code is one of the closed set.
func Known(code Code) bool {
	ok := lessonIndex(code) >= 0
	return ok
}

func (r *Refusal) Error() string {
	if r.Field != "" {
		return fmt.Sprintf("refused: %s (%s): %s", r.Code, r.Field, r.Lesson)
	}
	return fmt.Sprintf("refused: %s: %s", r.Code, r.Lesson)
}

// Envelope is the JSON shape of a refusal on every surface.
type Envelope struct {
	OK bool `json:"ok"`
	*Refusal
}

// Envelope wraps the refusal for JSON output: {"ok":false,"refused":…}.
func (r *Refusal) Envelope() Envelope { return Envelope{OK: false, Refusal: r} }

// EnvelopeOK is false: a refusal says so itself.
func (e Envelope) EnvelopeOK() bool { return e.OK }

// AsRefusal extracts a refusal from an error chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

// HTTPStatus is the status code an HTTP surface answers a refusal with:
// 409 Conflict for races, 403 Forbidden for gates, 422 Unprocessable Entity
// for the rest. (Numbers, not net/http constants: importing net/http here
// would cost every CLI call its start-up.)
func HTTPStatus(code Code) int {
	switch code {
	case StaleHead, StoreVersionConflict, StaleScope, MergeConflict, WorktreeDirty, BrokenHistory, StaleGate:
		return 409
	case HumanGestureRequired, ReadOnlyOwner, UnpinnedRunner, WorkspaceNotAllowed, NotYourAgent, UnprovenGate:
		return 403
	}
	return 422
}
