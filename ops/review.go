package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/review"
	"github.com/m1nd/m1nd/rules"
)

// A review goes back to the agent (DESIGN §10): it is one mail letter to
// the mission's agent — the one that wrote the letter reviewed — whose
// text is the review rendered (review.Render), so a live session hears it
// at its next tool call and the keeper wakes an idle one. A review that
// requests changes is also a review letter on the mission's chain
// (verdict CHANGE, packet_ref the sha256 of the text): the record after
// which work may return to the mission (chain.CheckTransition), and what
// runnerd answers by running the agent again. A review is not a human
// gesture: it lands nothing, and it is written under its writer's name.

// ReviewerName is who a review is written as when its writer has no
// agent id (the human at a terminal, the tray): a name that claims no
// human's word, for a review is no gesture.
const ReviewerName = "reviewer"

// ReviewRequest is what a review takes.
type ReviewRequest struct {
	MissionID string
	Decision  string // review.Change, review.Approve or review.CommentOnly
	Body      string
	// Comments are on lines of the diff; one without a commit was read
	// at the commit reviewed.
	Comments []review.Comment
	Agent    string // the reviewer: who writes the mail and the review letter
	Now      time.Time
}

// Reviewed is what Review did: the review, the letter that carried it to
// the mission's agent and, for a review that requests changes, the review
// letter on the mission's chain.
type Reviewed struct {
	ID     string              `json:"id"` // the mission's
	Review *review.Review      `json:"review"`
	To     string              `json:"to"`
	Mail   *mailbox.SendResult `json:"mail"`
	Letter *chain.PostResult   `json:"letter,omitempty"`
}

// reviewGateLines is how much of a failed gate's output a retry's review
// carries (its last lines), within review.MaxBody.
const (
	reviewGateLines = 60
	reviewGateBytes = 6 << 10
)

// Review reviews a mission's work: a mission waiting in merge_wait, or a
// failed one (to retry it: a review that requests changes with no body
// carries the gate's failing output). Everything that would refuse is
// asked before anything is written: the mission's phase
// (invalid_transition), the review (invalid_letter), the mail letter, the
// review letter. The mail goes first, then the review letter: a review
// letter never names text its agent was not sent. The same review sent
// again is not sent twice.
func (b *Flows) Review(ctx context.Context, req ReviewRequest) (*Reviewed, error) {
	if req.Agent == rules.HumanName {
		// Every surface asks here: a request field naming the human would
		// make an agent's review read as the human's word (DESIGN §7).
		return nil, rules.Refusef(rules.InvalidLetter, "agent", "a review is written under an agent's name, never %q, the human's, which anyone could claim: a review is no gesture (write as your agent, or as %s)", rules.HumanName, ReviewerName)
	}
	ref, err := chain.MissionRef(req.MissionID)
	if err != nil {
		return nil, rules.Refusef(rules.InvalidLetter, "mission_id", "%s is not a mission id", rules.Echo(req.MissionID))
	}
	if err := b.CheckSound(ctx, ref); err != nil {
		return nil, err
	}
	log, err := b.missions.Log(ctx, req.MissionID)
	if err != nil {
		return nil, err
	}
	head := log[len(log)-1]
	r, err := b.newReview(log, req)
	if err != nil {
		return nil, err
	}
	text := r.Render()
	mail, err := b.reviewMail(head.Agent, r, text, req)
	if err != nil {
		return nil, err
	}
	var next *chain.Letter
	if r.Decision == review.Change {
		if next, err = reviewLetter(head.Decoded, head.LetterID, r, text, req.Now); err != nil {
			return nil, err
		}
	}
	out := &Reviewed{ID: req.MissionID, Review: r, To: mail.To}
	if out.Mail, err = b.sendOnce(ctx, mail); err != nil {
		return nil, fmt.Errorf("review %s: %w", req.MissionID, err)
	}
	if next == nil {
		return out, nil
	}
	out.Letter, err = b.missions.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: req.Agent})
	if refusal, ok := rules.AsRefusal(err); ok {
		return out, rules.Refusef(refusal.Code, refusal.Field, "%s (the review reached %s as letter %s, but is not recorded on the mission; once it is settled, review again: the same review is not sent twice)", refusal.Lesson, mail.To, out.Mail.ID)
	}
	if err != nil {
		return out, fmt.Errorf("review %s: delivered to %s as letter %s, but not recorded on the mission: %w", req.MissionID, mail.To, out.Mail.ID, err)
	}
	return out, nil
}

// newReview is the review req makes of the mission whose letters are log:
// refused unless the head waits in merge_wait (or failed, for a review
// that is no approval), its round, the commit reviewed (which a comment
// without one was read at), its text tidied, a retry's body the gate's
// failing output when the reviewer said nothing, and the review's laws.
func (b *Flows) newReview(log []chain.Entry, req ReviewRequest) (*review.Review, error) {
	head := log[len(log)-1]
	l := head.Decoded
	switch {
	case l.Phase == chain.PhaseMergeWait:
	case l.Phase == chain.PhaseFailed && req.Decision != review.Approve:
	case l.Phase == chain.PhaseFailed:
		return nil, rules.Refusef(rules.InvalidTransition, "mission_id", "%s failed: there is nothing to approve; request changes to retry it", req.MissionID)
	default:
		return nil, rules.Refusef(rules.InvalidTransition, "mission_id", "a review takes a mission waiting in merge_wait, or a failed one to retry it; %s is at %s", req.MissionID, l.Phase)
	}
	r := &review.Review{
		MissionID: req.MissionID, Round: roundOf(log), Letter: head.LetterID, Commit: b.reviewedCommit(l),
		Decision: req.Decision, Body: req.Body, Comments: append([]review.Comment{}, req.Comments...),
	}
	for i := range r.Comments {
		if r.Comments[i].Commit == "" {
			r.Comments[i].Commit = r.Commit
		}
	}
	r.Tidy()
	if r.Decision == review.Change && l.Phase == chain.PhaseFailed && r.Body == "" && len(r.Comments) == 0 {
		r.Body = b.failedBody(req.MissionID, l)
	}
	return r, r.Validate()
}

// reviewMail is the letter that carries review r (its text) from the
// reviewer to agent, the one that wrote the letter reviewed, checked as
// sending it would check it.
func (b *Flows) reviewMail(agent string, r *review.Review, text string, req ReviewRequest) (*mailbox.Letter, error) {
	if !rules.ValidAgentID(agent) {
		return nil, rules.Refusef(rules.InvalidLetter, "mission_id", "the letter reviewed names no agent (its commit was written by plain git, as %s): the review would reach no one", rules.Echo(agent))
	}
	if agent == req.Agent {
		return nil, rules.Refusef(rules.InvalidLetter, "agent", "a review goes to the mission's agent, %s, and that is who writes this one: review as someone else (--agent)", agent)
	}
	mail := &mailbox.Letter{
		TS: chain.Timestamp(req.Now), Agent: req.Agent, To: agent, Class: mailbox.ClassAsk, Brain: b.Name(), Tool: "m1nd",
		What: text, Expected: expectedOf(r),
	}
	if r.Decision == review.Approve && len(r.Comments) == 0 && r.Body == "" {
		mail.Class = mailbox.ClassNote
	}
	return mail, mailbox.Validate(mail)
}

// reviewLetter is the review letter that records a review requesting
// changes on head: verdict CHANGE with the review's gist, packet_ref the
// text's sha256, and nothing of the work it sends back (no gate, no
// candidate).
func reviewLetter(head *chain.Letter, headID string, r *review.Review, text string, now time.Time) (*chain.Letter, error) {
	next := chain.Next(head, headID, now)
	next.SetPhase(chain.PhaseReview)
	next.Verdict = &chain.Verdict{Decision: chain.DecisionChange, Gist: r.Gist()}
	next.Gate, next.ReceiptCandidate, next.Receipt = nil, nil, nil
	ref := chain.PacketRef([]byte(text))
	next.PacketRef = &ref
	if err := chain.Validate(next); err != nil {
		return nil, err
	}
	return next, chain.CheckTransition(next, head)
}

// roundOf is the round a mission's work is in: one more than the reviews
// on its chain that requested changes.
func roundOf(log []chain.Entry) int {
	round := 1
	for _, e := range log {
		if chain.RequestsChanges(e.Decoded) {
			round++
		}
	}
	return round
}

// reviewedCommit is the commit a review of l reads: the one its gate
// tested, else (a failed mission) its work branch's tip; "" for none.
func (b *Flows) reviewedCommit(l *chain.Letter) string {
	if c := l.ReceiptCandidate; c != nil {
		if tested, _ := c.Evidence.Tested(); tested != "" {
			return tested
		}
	}
	if tip, ok, err := b.WorkTip(l.MissionID); err == nil && ok {
		return tip.String()
	}
	return ""
}

// failedBody is what a retry's review says when the reviewer says
// nothing: why the mission failed and, when this machine keeps it, the
// gate's output (its last lines, indented as a code block).
func (b *Flows) failedBody(missionID string, l *chain.Letter) string {
	why := "The mission failed."
	if l.Verdict != nil && l.Verdict.Gist != "" {
		why = "The mission failed: " + l.Verdict.Gist + "."
	}
	side, _, _ := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	out, _, err := b.gateOutput(missionID, side, reviewGateBytes)
	if err != nil || strings.TrimSpace(out) == "" {
		return why
	}
	var body strings.Builder
	body.WriteString(why + " The gate's output, its last lines:\n")
	for _, line := range LastLines(out, reviewGateLines) {
		body.WriteString("\n    " + strings.ReplaceAll(line, "\t", "    "))
	}
	return body.String()
}

// LastLines is the last n lines of text (a run's output, a gate's).
func LastLines(text string, n int) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return lines[max(0, len(lines)-n):]
}

// expectedOf is what the agent owes a review.
func expectedOf(r *review.Review) string {
	switch r.Decision {
	case review.Change:
		return fmt.Sprintf("commit what the review asks on %s: the work is gated again as round %d", WorkBranch(r.MissionID), r.Round+1)
	case review.CommentOnly:
		return "answer the comments: reply to this letter"
	}
	return ""
}

// sendOnce sends a letter unless its writer sent the same text of the
// same class to the same agent already (a review run again after it was
// delivered but not recorded): then that letter stands, deduped.
func (b *Flows) sendOnce(ctx context.Context, l *mailbox.Letter) (*mailbox.SendResult, error) {
	sent, err := b.box.Between(ctx, l.To, l.Agent)
	if err != nil {
		return nil, err
	}
	for _, s := range sent {
		if s.Letter.What == l.What && s.Letter.Class == l.Class {
			return &mailbox.SendResult{ID: s.ID, To: l.To, Ref: s.Ref, Commit: s.Commit.String(), Deduped: true}, nil
		}
	}
	return b.box.Send(ctx, l)
}

// ReviewView is one review in a mission's thread: the review, who wrote
// it and when, the mail letter that carried it, the review letter that
// recorded it (a request for changes), the agent's answers, and the
// commit gated after it.
type ReviewView struct {
	*review.Review
	MailID string `json:"mail_id"`
	By     string `json:"by"`
	At     string `json:"at"`
	// Recorded is the review letter's id on the mission's chain; "" for a
	// review that requested no changes (or whose letter was never posted).
	Recorded string `json:"recorded,omitempty"`
	// Answers are the letters the mission's agent wrote to the reviewer
	// after the review and before the next one.
	Answers []AnswerView `json:"answers"`
	// AddressedBy is the commit the next gate passed on after the review:
	// the work that answers it; "" while none has.
	AddressedBy string `json:"addressed_by,omitempty"`
}

// AnswerView is one letter the agent wrote back.
type AnswerView struct {
	ID   string `json:"id"`
	At   string `json:"at"`
	What string `json:"what"`
}

// Reviews is a mission's review thread, oldest first: every review its
// agents were sent (mail whose text is a review of this mission), each
// with what answered it. log is the mission's letters.
func (b *Flows) Reviews(ctx context.Context, log []chain.Entry) ([]ReviewView, error) {
	if len(log) == 0 {
		return nil, nil
	}
	missionID := log[0].Decoded.MissionID
	agents := map[string]bool{}
	recorded := map[string]string{} // packet_ref → review letter id
	for _, e := range log {
		if chain.RequestsChanges(e.Decoded) && e.Decoded.PacketRef != nil {
			recorded[*e.Decoded.PacketRef] = e.LetterID
		} else if rules.ValidAgentID(e.Agent) {
			agents[e.Agent] = true
		}
	}
	var out []ReviewView
	for agent := range agents {
		letters, err := b.box.To(ctx, agent)
		if err != nil {
			return nil, err
		}
		for _, s := range letters {
			r, ok := review.Parse(s.Letter.What)
			if !ok || r.MissionID != missionID {
				continue
			}
			out = append(out, ReviewView{Review: r, MailID: s.ID, By: s.Letter.Agent, At: s.Letter.TS,
				Recorded: recorded[chain.PacketRef([]byte(s.Letter.What))], Answers: []AnswerView{}})
		}
	}
	sortReviews(out)
	for i := range out {
		until := ""
		if i+1 < len(out) {
			until = out[i+1].At
		}
		if err := b.answers(ctx, &out[i], log, until); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// answers fills in what answered review v: the agent's letters to the
// reviewer from the review until the next one, and the first commit a gate
// passed on after it.
func (b *Flows) answers(ctx context.Context, v *ReviewView, log []chain.Entry, until string) error {
	agent := ""
	for _, e := range log {
		if e.LetterID == v.Letter {
			agent = e.Agent
		}
	}
	if rules.ValidAgentID(agent) && rules.ValidAgentID(v.By) && agent != v.By {
		sent, err := b.box.Between(ctx, v.By, agent)
		if err != nil {
			return err
		}
		for _, s := range sent {
			if s.Letter.TS >= v.At && (until == "" || s.Letter.TS < until) {
				v.Answers = append(v.Answers, AnswerView{ID: s.ID, At: s.Letter.TS, What: s.Letter.What})
			}
		}
	}
	if v.Recorded == "" {
		return nil
	}
	after := false
	for _, e := range log {
		if e.LetterID == v.Recorded {
			after = true
			continue
		}
		if c := e.Decoded.ReceiptCandidate; after && e.Decoded.Phase == chain.PhaseMergeWait && c != nil {
			v.AddressedBy, _ = c.Evidence.Tested()
			return nil
		}
	}
	return nil
}

// sortReviews orders reviews by when they were sent, then mail id.
func sortReviews(v []ReviewView) {
	slices.SortFunc(v, func(a, b ReviewView) int {
		return cmp.Or(strings.Compare(a.At, b.At), strings.Compare(a.MailID, b.MailID))
	})
}

// ReviewText is the text of the review a mission's head letter records
// (a review letter that requests changes), as its agent was sent it: the
// mail letter from the review letter's writer to agent whose sha256 is the
// letter's packet_ref. ok is false when head records no such review, or
// this clone holds no such letter.
func (b *Flows) ReviewText(ctx context.Context, head chain.Entry, agent string) (text string, r *review.Review, ok bool, err error) {
	missionID := head.Decoded.MissionID
	if !chain.RequestsChanges(head.Decoded) || head.Decoded.PacketRef == nil || !rules.ValidAgentID(head.Agent) || !rules.ValidAgentID(agent) {
		return "", nil, false, nil
	}
	sent, err := b.box.Between(ctx, agent, head.Agent)
	if err != nil {
		return "", nil, false, err
	}
	for i := len(sent) - 1; i >= 0; i-- {
		what := sent[i].Letter.What
		if chain.PacketRef([]byte(what)) != *head.Decoded.PacketRef {
			continue
		}
		if r, ok := review.Parse(what); ok && r.MissionID == missionID {
			return what, r, true, nil
		}
	}
	return "", nil, false, nil
}

// WorkTip is the commit at the tip of a mission's work branch; ok is false
// when the branch is gone.
func (b *Flows) WorkTip(missionID string) (gitstore.Hash, bool, error) {
	return b.repo.ReadRef("refs/heads/" + WorkBranch(missionID))
}
