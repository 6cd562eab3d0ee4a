package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/review"
	"github.com/m1nd/m1nd/rules"
)

// waitingMission opens a hand mission on the shop and moves it, as agent,
// to phase (merge_wait: the agent's own claim, with no candidate).
func waitingMission(t *testing.T, flows *ops.Flows, agent, phase string, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	opened, err := flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_shop_core", Agent: agent, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	id := opened.Mission.MissionID
	head, _ := flows.Current(id)
	next := chain.Next(head.Letter, head.HeadLetterID, now)
	next.SetPhase(phase)
	exit := int64(0)
	if phase == chain.PhaseFailed {
		exit = 1
		next.Verdict = &chain.Verdict{Decision: "REJECT", Gist: "gate exited 1"}
	}
	next.Gate = &chain.Gate{Command: "go test ./core/...", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("ab", 32)}
	if _, err := flows.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: agent}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestReviewRequestsChanges(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	id := waitingMission(t, s.flows, "agent-b1", chain.PhaseMergeWait, now.Add(-time.Hour))
	commit := strings.Repeat("c", 40)
	req := ops.ReviewRequest{MissionID: id, Decision: review.Change, Body: " fix it \r\n", Agent: "reviewer", Now: now,
		Comments: []review.Comment{{Path: "core/a.go", Line: 1, Commit: commit, Text: "here"}}}
	res, err := s.flows.Review(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.To != "agent-b1" || res.Mail.Deduped || res.Letter == nil || res.Review.Round != 1 || res.Review.Body != "fix it" {
		t.Fatalf("reviewed: %+v %+v", res, res.Review)
	}
	head, _ := s.flows.Current(id)
	l := head.Letter
	if !chain.RequestsChanges(l) || l.Gate != nil || l.PacketRef == nil || *l.PacketRef != chain.PacketRef([]byte(res.Review.Render())) || l.Verdict.Gist != "1 comment: fix it" {
		t.Fatalf("the review letter: %s", l.Canonical())
	}
	// The agent's letter holds the review as rendered.
	sent, err := boxOf(s.flows).Between(ctx, "agent-b1", "reviewer")
	if err != nil || len(sent) != 1 || sent[0].Letter.Class != "ask" || sent[0].Letter.What != res.Review.Render() {
		t.Fatalf("mail: %v %+v", err, sent)
	}
	log, _ := s.flows.Log(ctx, id)
	text, r, ok, err := s.flows.ReviewText(ctx, log[len(log)-1], "agent-b1")
	if err != nil || !ok || text != res.Review.Render() || r.Comments[0].Commit != commit {
		t.Fatalf("ReviewText: %v %v %q", err, ok, text)
	}
	// A second request while the first waits: the head is a review.
	_, err = s.flows.Review(ctx, req)
	if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.InvalidTransition {
		t.Fatalf("review of a review: %v", err)
	}
	// The thread: the review, recorded, no answer yet.
	thread, err := s.flows.Reviews(ctx, log)
	if err != nil || len(thread) != 1 || thread[0].Recorded != res.Letter.LetterID || thread[0].By != "reviewer" || len(thread[0].Answers) != 0 {
		t.Fatalf("thread: %v %+v", err, thread)
	}
}

func TestReviewRefuses(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	waiting := waitingMission(t, s.flows, "agent-b1", chain.PhaseMergeWait, now.Add(-time.Hour))
	failed := waitingMission(t, s.flows, "agent-b1", chain.PhaseFailed, now.Add(-time.Hour))
	executing := waitingMission(t, s.flows, "agent-b1", chain.PhaseExecuting, now.Add(-time.Hour))
	for _, tc := range []struct {
		name  string
		req   ops.ReviewRequest
		code  rules.Code
		field string
	}{
		{"executing", ops.ReviewRequest{MissionID: executing, Decision: review.Change, Body: "x"}, rules.InvalidTransition, "mission_id"},
		{"approve a failure", ops.ReviewRequest{MissionID: failed, Decision: review.Approve}, rules.InvalidTransition, "mission_id"},
		{"says nothing", ops.ReviewRequest{MissionID: waiting, Decision: review.CommentOnly}, rules.InvalidLetter, "body"},
		{"its own agent", ops.ReviewRequest{MissionID: waiting, Decision: review.Change, Body: "x", Agent: "agent-b1"}, rules.InvalidLetter, "agent"},
		{"the human's name", ops.ReviewRequest{MissionID: waiting, Decision: review.Change, Body: "x", Agent: rules.HumanName}, rules.InvalidLetter, "agent"},
		{"a comment without a commit", ops.ReviewRequest{MissionID: failed, Decision: review.Change, Comments: []review.Comment{{Path: "a", Line: 1, Text: "x"}}}, rules.InvalidLetter, "comments[0].commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Agent == "" {
				tc.req.Agent = "reviewer"
			}
			tc.req.Now = now
			before, _ := repoOf(s.flows).ListRefs("refs/m1nd/")
			_, err := s.flows.Review(ctx, tc.req)
			r, ok := rules.AsRefusal(err)
			if !ok || r.Code != tc.code || r.Field != tc.field {
				t.Fatalf("got %v, want %s on %s", err, tc.code, tc.field)
			}
			after, _ := repoOf(s.flows).ListRefs("refs/m1nd/")
			if len(after) != len(before) {
				t.Fatalf("a refusal wrote refs: %d → %d", len(before), len(after))
			}
		})
	}
}

// A failed mission retried with nothing said: the review says why it
// failed; the same review run again is not sent twice.
func TestReviewRetriesAFailure(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	id := waitingMission(t, s.flows, "agent-b1", chain.PhaseFailed, now.Add(-time.Hour))
	req := ops.ReviewRequest{MissionID: id, Decision: review.Change, Agent: "reviewer", Now: now}
	res, err := s.flows.Review(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Review.Body != "The mission failed: gate exited 1." || res.Review.Commit != "" {
		t.Fatalf("retry review: %+v", res.Review)
	}
}

// The same review sent again (as after a letter that could not be
// recorded) is not sent twice.
func TestReviewSentOnce(t *testing.T) {
	s := newSurfaces(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	id := waitingMission(t, s.flows, "agent-b1", chain.PhaseMergeWait, now.Add(-time.Hour))
	req := ops.ReviewRequest{MissionID: id, Decision: review.CommentOnly, Body: "why this way?", Agent: "reviewer", Now: now}
	first, err := s.flows.Review(ctx, req)
	if err != nil || first.Mail.Deduped || first.Letter != nil {
		t.Fatalf("first: %v %+v", err, first)
	}
	req.Now = now.Add(time.Minute)
	again, err := s.flows.Review(ctx, req)
	if err != nil || !again.Mail.Deduped || again.Mail.ID != first.Mail.ID {
		t.Fatalf("again: %v %+v", err, again.Mail)
	}
	if head, _ := s.flows.Current(id); head.Letter.Phase != chain.PhaseMergeWait {
		t.Fatalf("a comment moved the mission to %s", head.Letter.Phase)
	}
}
