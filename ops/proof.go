package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
)

// What the human is told is what was proven (DESIGN §10): a merge_wait's
// gate is proven by a runner the human approved (its signature verifies by
// the approved key) or it is an agent's claim, and every view says which,
// in the same words. Landing a claim first has runnerd run an approved
// runner's gate on exactly the claimed tree (RequestProof).

// The standings of a merge_wait's gate.
const (
	GateProven   = "proven"   // signed by a runner whose pin and key a human approved
	GateClaimed  = "claimed"  // written by an agent, naming no runner
	GateUnsigned = "unsigned" // a runner's, written before runners signed their gates
	GateBroken   = "broken"   // names a runner, and its signature does not hold
)

// GateWord is what a merge_wait letter's gate stands on.
type GateWord struct {
	Standing string `json:"standing"`
	// Agent is who wrote the merge_wait; Runner the runner it names.
	Agent  string `json:"agent"`
	Runner string `json:"runner,omitempty"`
	// Key is the fingerprint of the runner key that signed it, Pins the
	// runner pins version that approved that key, ApprovedAt when.
	Key        string `json:"key,omitempty"`
	Pins       int64  `json:"pins_version,omitempty"`
	ApprovedAt string `json:"approved_at,omitempty"`
	// Says is the one line every view shows.
	Says string `json:"says"`
	// Prove is a landing's request to prove a claim, while one stands:
	// asked, running, or failed with why.
	Prove *runs.ProveRequest `json:"prove,omitempty"`
}

// Proven reports whether the gate stands on an approved runner's
// signature.
func (w *GateWord) Proven() bool { return w != nil && w.Standing == GateProven }

// GateWordOf says what the merge_wait letter l of commit h on mission
// missionID stands on, judged now against the approved runner pins.
func (b *Flows) GateWordOf(missionID string, h gitstore.Hash, l *chain.Letter, body []byte) (*GateWord, error) {
	c, err := b.repo.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("mission %s: %w", missionID, err)
	}
	agent, _ := chain.AgentOf(c.Message)
	w := &GateWord{Agent: agent}
	runner, err := chain.NamedRunner(l, agent)
	if err != nil {
		w.Standing, w.Says = GateBroken, rules.OneLine(err.Error())
		return w, nil
	}
	w.Runner = runner
	att, signed, err := chain.AttestationOf(c.Message)
	switch {
	case runner == "":
		w.Standing = GateClaimed
		w.Says = fmt.Sprintf("claimed by agent %s, not run by a runner you approved", agent)
	case err != nil:
		w.Standing, w.Says = GateBroken, rules.OneLine(err.Error())
	case !signed:
		w.Standing = GateUnsigned
		w.Says = fmt.Sprintf("runner %s's word from before runners signed their gates: not proven", runner)
	default:
		doc := &chain.Doc{Ref: chain.MissionRefPrefix + missionID, Commit: h, Meta: c, Body: body}
		if err := b.store.CheckGateProof(doc, l); err != nil {
			w.Standing, w.Says = GateBroken, "BROKEN: "+rules.OneLine(err.Error())
			return w, nil
		}
		w.Standing, w.Key, w.Pins = GateProven, rules.RunnerKeyFingerprint(att.Key), att.Pins
		w.ApprovedAt = b.pinsApprovedAt(att.Pins)
		w.Says = fmt.Sprintf("proven by runner %s (key %s, approved in runner pins v%d", runner, w.Key, w.Pins)
		if w.ApprovedAt != "" {
			w.Says += " on " + w.ApprovedAt
		}
		w.Says += ")"
	}
	if w.Standing != GateProven {
		if side, ok, err := runs.ReadSide(b.repo.RuntimeDir(), missionID); err == nil && ok && side.Prove != nil {
			w.Prove = side.Prove
		}
	}
	return w, nil
}

// pinsApprovedAt is when runner pins version v was approved (its commit's
// date), "" when it cannot be read.
func (b *Flows) pinsApprovedAt(v int64) string {
	head, ok, err := b.repo.ReadRef(brain.PinsRef)
	if err != nil || !ok {
		return ""
	}
	found := ""
	b.repo.WalkFirstParent(head, func(h gitstore.Hash, c *gitstore.Commit) error {
		body, err := b.repo.ReadFileInTree(c.Tree, brain.PinsFile)
		if err != nil {
			return gitstore.ErrStopWalk
		}
		if set, err := brain.DecodePinSet(body); err == nil && set.Version == v {
			found = chain.Timestamp(c.Committer.When)
			return gitstore.ErrStopWalk
		}
		return nil
	})
	return found
}

// headWord is GateWordOf a merge_wait head.
func (b *Flows) headWord(h *chain.Head, l *chain.Letter) (*GateWord, error) {
	return b.GateWordOf(h.MissionID, h.Commit, l, l.Canonical())
}

// ClaimedGate is the refusal of a landing whose merge_wait names a tree
// no approved runner proved: the front end asks runnerd to prove it
// (RequestProof) rather than land it.
type ClaimedGate struct {
	MissionID string
	Word      *GateWord
}

// Error is the refusal's text.
func (e *ClaimedGate) Error() string { return e.Refusal().Error() }

// Refusal is the unproven_gate refusal it stands for.
func (e *ClaimedGate) Refusal() *rules.Refusal {
	return rules.Refusef(rules.UnprovenGate, "mission_id", "%s's gate is %s: nothing lands on it as it is; landing it first has runnerd run an approved runner's gate on exactly its tree (m1nd land asks, then land again once it is proven)", e.MissionID, e.Word.Says)
}

// Unwrap makes errors.As(err, *rules.Refusal) see the refusal.
func (e *ClaimedGate) Unwrap() error { return e.Refusal() }

// AsClaimedGate reports whether err is a landing refused because its
// gate is not proven.
func AsClaimedGate(err error) (*ClaimedGate, bool) {
	var c *ClaimedGate
	ok := errors.As(err, &c)
	return c, ok
}

// ProofRequest is what RequestProof asked of runnerd.
type ProofRequest struct {
	MissionID string `json:"mission_id"`
	Claim     string `json:"claim"` // who claimed the gate, as the views say it
	Runner    string `json:"runner"`
	Gate      string `json:"gate_command"`
	Commit    string `json:"commit"`
	Tree      string `json:"tree"`
	Already   bool   `json:"already_asked,omitempty"`
}

// RequestProof asks runnerd's queue to run an approved runner's gate on
// exactly the tree a claimed merge_wait names (the landing of a claim,
// DESIGN §10): it records the request in the mission's side record, for
// the runner of the mission's spawn when runnerd can sign its gate, else
// for the first build runner it can. With no runnerd running here, or
// none that can sign, it is refused unproven_gate and nothing is written.
// into names the branch the landing will merge into, when given.
func (b *Flows) RequestProof(ctx context.Context, missionID, into string, now time.Time) (*ProofRequest, error) {
	head, word, err := b.claimToProve(ctx, missionID)
	if err != nil {
		return nil, err
	}
	commit, tree := head.Letter.ReceiptCandidate.Evidence.Tested()
	side, _, err := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	if err != nil {
		return nil, err
	}
	runner, err := b.prover(missionID, word, side)
	if err != nil {
		return nil, err
	}
	if side == nil {
		side = &runs.Side{MissionID: missionID, Branch: WorkBranch(missionID), Created: chain.Timestamp(now)}
	}
	if into != "" {
		side.Target = into
	}
	req := &ProofRequest{MissionID: missionID, Claim: word.Says, Runner: runner, Commit: commit, Tree: tree, Gate: b.approvedGate(runner)}
	if p := side.Prove; p != nil && p.Letter == head.HeadLetterID && !p.Failed && p.Commit == commit {
		req.Already, req.Runner = true, p.Runner
		return req, nil
	}
	side.Prove = &runs.ProveRequest{Letter: head.HeadLetterID, Runner: runner, Commit: commit, Tree: tree, At: chain.Timestamp(now)}
	if err := runs.WriteSide(b.repo.RuntimeDir(), side); err != nil {
		return nil, fmt.Errorf("ask runnerd to prove %s: %w", missionID, err)
	}
	return req, nil
}

// claimToProve is mission missionID's head when it is a sound merge_wait
// whose gate is not proven, and names a tested commit this repository
// holds; with what its gate stands on.
func (b *Flows) claimToProve(ctx context.Context, missionID string) (*chain.Head, *GateWord, error) {
	head, err := b.missions.Current(missionID)
	if err != nil {
		return nil, nil, err
	}
	l := head.Letter
	if l.Phase != chain.PhaseMergeWait || l.ReceiptCandidate == nil {
		return nil, nil, rules.Refusef(rules.InvalidTransition, "mission_id", "only a merge_wait mission's gate is proven for a landing; %s is at %s", missionID, l.Phase)
	}
	if err := b.CheckSound(ctx, chain.MissionRefPrefix+missionID); err != nil {
		return nil, nil, err
	}
	word, err := b.headWord(head, l)
	if err != nil {
		return nil, nil, err
	}
	commit, tree := l.ReceiptCandidate.Evidence.Tested()
	if word.Proven() || tree == "" {
		return nil, nil, rules.Refusef(rules.InvalidTransition, "mission_id", "%s's gate needs no proof run: %s", missionID, word.Says)
	}
	h, err := gitstore.ParseHash(commit)
	if err != nil {
		return nil, nil, err
	}
	if _, err := b.repo.ReadCommit(h); err != nil {
		return nil, nil, rules.Refusef(rules.UnprovenGate, "mission_id", "the commit %.12s that %s's gate names is not in this repository: fetch it first (nothing was written)", commit, missionID)
	}
	return head, word, nil
}

// prover is the runner that proves mission missionID's claim: the runner
// of its spawn when the runnerd running here can sign its gate, else the
// first build runner it can; refused unproven_gate when there is none.
func (b *Flows) prover(missionID string, word *GateWord, side *runs.Side) (string, error) {
	rec, live := runs.ReadRunnerd(b.repo.RuntimeDir())
	if !live || len(rec.Provers) == 0 {
		why := "no runnerd runs here"
		if live {
			why = "the runnerd that runs here has no build runner whose pin and key you approved"
		}
		return "", rules.Refusef(rules.UnprovenGate, "mission_id", "%s's gate is %s, and %s to prove it: start m1nd runnerd with an approved build runner (m1nd runners), then land again; nothing was written", missionID, word.Says, why)
	}
	if side != nil && rec.Proves(side.RunnerID) {
		return side.RunnerID, nil
	}
	return rec.Provers[0], nil
}

// approvedGate is the gate command the approved pins hold for runner.
func (b *Flows) approvedGate(runner string) string {
	approved, err := brain.ApprovedPins(b.repo)
	if r := approved.Runner(runner); err == nil && r != nil {
		return r.GateCommand
	}
	return ""
}

// landedWord is what the gate a landed mission landed stood on: the
// merge_wait letter its landed letter follows; nil when it reads none.
func (b *Flows) landedWord(h *chain.Head) (*GateWord, error) {
	c, err := b.repo.ReadCommit(h.Commit)
	if err != nil || len(c.Parents) == 0 {
		return nil, err
	}
	parent := c.Parents[0]
	body, _, err := b.repo.ReadFileAt(parent, chain.LetterFile)
	if err != nil {
		return nil, nil
	}
	l, err := chain.DecodeStoredHead(body)
	if err != nil || l.Phase != chain.PhaseMergeWait {
		return nil, nil
	}
	return b.GateWordOf(h.MissionID, parent, l, body)
}
