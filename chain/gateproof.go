package chain

import (
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// A merge_wait letter that names a runner stands on that runner's signed
// word (rules.GateStatement, carried in its commit's AttestationTrailer);
// one that names none is an agent's claim, shown as such and never landed
// as a proven gate (DESIGN §10). The mission kind asks Env.Gates, which the
// brain implements against the runner pins a human approved.

// GateProofs judges the proof of a merge_wait letter's gate: doc is its
// commit (Meta carries the trailers; a zero Commit is one about to be
// written), l the letter. A letter that names a runner needs a valid
// attestation by the key approved for that runner; one that names none is
// a claim and passes.
type GateProofs interface {
	CheckGateProof(doc *Doc, l *Letter) error
	// CheckLandedGate judges the gate a landed letter (its commit landed)
	// lands: merge_wait letter l of commit mw, whose candidate names the
	// tree the target moves to. Only a gate its runner signed lands; a
	// claim, or a runner's merge_wait from before runners signed, stands
	// only for a landing made before then (anchored).
	CheckLandedGate(mw *Doc, l *Letter, landed *Doc) error
}

// NamedRunner is the runner a merge_wait letter says proved its gate: its
// runner_id, its candidate's runnerd emitter, or its writer runnerd:<id>
// (agent, the commit's AgentTrailer). "" when it names none: the letter is
// a claim. A letter naming two runners is refused.
func NamedRunner(l *Letter, agent string) (string, error) {
	var names []string
	if l.RunnerID != nil {
		names = append(names, *l.RunnerID)
	}
	if c := l.ReceiptCandidate; c != nil && c.Emitter != nil && c.Emitter.Kind == "runnerd" {
		names = append(names, c.Emitter.ID)
	}
	if id, ok := strings.CutPrefix(agent, rules.RunnerPrefix); ok {
		names = append(names, id)
	}
	for _, n := range names[min(1, len(names)):] {
		if n != names[0] {
			return "", rules.Refusef(rules.UnprovenGate, "runner_id", "the letter names runner %s and runner %s: a merge_wait is proved by one runner", rules.Echo(names[0]), rules.Echo(n))
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// GateStatementOf is what runner's signature over merge_wait letter l
// (canonical bytes body) binds, under pin set version pins: the pin whose
// gate it ran, with the gate's window, and the commit and tree it tested
// (a runnerd-emitted candidate must name them, CheckTested; one naming
// none moves no target when it lands).
func GateStatementOf(l *Letter, body []byte, runner string, pins int64) (*rules.GateStatement, error) {
	refuse := func(what string) error {
		return rules.Refusef(rules.UnprovenGate, "receipt_candidate.evidence", "a runner's merge_wait names %s: this one does not, so nothing can prove it", what)
	}
	if l.Gate == nil || l.Gate.ExitStatus == nil || l.ReceiptCandidate == nil {
		return nil, refuse("its gate with an exit status and a receipt candidate")
	}
	e := l.ReceiptCandidate.Evidence
	commit, tree := e.Tested()
	switch {
	case e.PinOf() == "":
		return nil, refuse("the approved pin whose gate proved it (pin:sha256:…)")
	case e.StartedAt == "" || e.EndedAt == "":
		return nil, refuse("its gate's window")
	}
	return &rules.GateStatement{
		Schema: rules.GateStatementSchema, MissionID: l.MissionID, Letter: "sha256:" + DocHash(body),
		RunnerID: runner, Pins: pins, Pin: e.PinOf(), Commit: commit, Tree: tree,
		GateCommand: l.Gate.Command, ExitStatus: *l.Gate.ExitStatus, ArtifactHash: l.Gate.ArtifactHash,
		StartedAt: e.StartedAt, EndedAt: e.EndedAt,
	}, nil
}

// AttestationOf reads a runner's attestation from a commit message; ok is
// false when it carries none.
func AttestationOf(message string) (a rules.Attestation, ok bool, err error) {
	value, ok := TrailerValue(message, rules.AttestationTrailer)
	if !ok {
		return a, false, nil
	}
	a, err = rules.ParseAttestation(value)
	return a, true, err
}

// checkGateProof is the mission law of a merge_wait letter's gate: one
// that names a runner stands on that runner's signature (env.Gates judges
// it); one that names none is a claim.
func checkGateProof(next *Doc, l *Letter, env Env) error {
	agent, _ := AgentOf(next.Meta.Message)
	runner, err := NamedRunner(l, agent)
	if err != nil || runner == "" {
		return err
	}
	if env.Gates == nil {
		return rules.Refusef(rules.UnprovenGate, "runner_id", "this merge_wait names runner %s, and the approved runner pins cannot be read here to check its signature", rules.Echo(runner))
	}
	return env.Gates.CheckGateProof(next, l)
}

// checkLandedProven is the landed law's half about the gate: a landing
// that moves a target to a tree (the merge_wait's candidate names one)
// lands only a gate an approved runner proved; a claim never lands as
// one (landing it first has runnerd run the approved gate).
func checkLandedProven(prev, next *Doc, head *Letter, env Env) error {
	if head.ReceiptCandidate == nil {
		return nil
	}
	if _, tree := head.ReceiptCandidate.Evidence.Tested(); tree == "" {
		return nil
	}
	if env.Gates == nil {
		return rules.Refusef(rules.UnprovenGate, "phase", "the approved runner pins cannot be read here to check the gate this landing lands")
	}
	return env.Gates.CheckLandedGate(prev, head, next)
}

// ClaimLesson is the lesson of a landing refused because the merge_wait it
// lands is an agent's claim (agent wrote it, naming no runner).
func ClaimLesson(agent string) string {
	return fmt.Sprintf("this merge_wait is %s's claim, not a gate a runner you approved proved: land it with m1nd land or the tray, which first has runnerd run the approved gate on exactly its tree", rules.Echo(agent))
}
