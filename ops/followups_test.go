package ops_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
)

// letterFor is the newest letter waiting for agent from from.
func letterFor(t *testing.T, b *ops.Flows, agent, from string) *mailbox.Stored {
	t.Helper()
	waiting, err := b.Unread(agent)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(waiting) - 1; i >= 0; i-- {
		if waiting[i].Letter.Agent == from {
			return &waiting[i]
		}
	}
	t.Fatalf("no letter for %s from %s among %d", agent, from, len(waiting))
	return nil
}

func TestAnAnswerClosesAFollowupNoMissionCarries(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	_, b := scannedShop(t, map[string]string{"a.go": "package a\n"}, now)
	id, err := b.OpenFollowup(ctx, "alice", "bob", "which port does the tray use?", "", now)
	if err != nil {
		t.Fatal(err)
	}
	ask := letterFor(t, b, "bob", "alice")

	cases := []struct {
		name    string
		from    string
		answers []string
		closes  bool
	}{
		{"a letter answering nothing", "bob", nil, false},
		{"an answer by someone who does not owe it", "carol", []string{ask.ID}, false},
		{"the owner's answer", "bob", []string{ask.ID}, true},
		{"a second answer", "bob", []string{ask.ID}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent, err := b.SendMail(ctx, ops.MailRequest{Agent: tc.from, To: "alice", What: "7420, " + strings.Repeat("!", i), Answers: tc.answers, Now: now.Add(time.Duration(i+1) * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(sent.ClosedFollowups, id); got != tc.closes {
				t.Fatalf("closed %v, want %v closing %s", sent.ClosedFollowups, tc.closes, id)
			}
		})
	}
	fs, err := b.Followups(ctx, "bob", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].State != memory.StateRecorded || fs[0].Result != "7420, !!" || fs[0].ResolvedBy != "bob" {
		t.Fatalf("follow-up after the answer: %+v", fs[0])
	}
	// The opener hears how it closed, as for a resolve.
	waiting, err := b.Unread("alice")
	if err != nil {
		t.Fatal(err)
	}
	told := 0
	for _, l := range waiting {
		if strings.Contains(l.Letter.What, "follow-up "+id+" (") && strings.Contains(l.Letter.What, "closed recorded by bob: 7420, !!") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("the opener was told %d times how %s closed, want once", told, id)
	}
}

func TestAFollowupAMissionCarriesWaitsForTheMission(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	_, b := scannedShop(t, map[string]string{"a.go": "package a\n"}, now)
	id, err := b.OpenFollowup(ctx, "alice", "bob", "ship the fix", "msn_000000000001", now)
	if err != nil {
		t.Fatal(err)
	}
	ask := letterFor(t, b, "bob", "alice")
	sent, err := b.SendMail(ctx, ops.MailRequest{Agent: "bob", To: "alice", What: "on it", Answers: []string{ask.ID}, Now: now.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.ClosedFollowups) != 0 {
		t.Fatalf("an answer closed %v, which mission msn_000000000001 carries (%s)", sent.ClosedFollowups, id)
	}
}

func TestADecisionNamingAnAgentTellsIt(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	_, b := scannedShop(t, map[string]string{"a.go": "package a\n"}, now)
	cases := []struct {
		name string
		req  memory.AddRequest
		told []string
	}{
		{"a decision naming bob by about", memory.AddRequest{Sort: "decided", Text: "the tray stays on 7420", About: []string{"agent:bob"}}, []string{"bob"}},
		{"a commitment naming two in its text", memory.AddRequest{Sort: "committed", Text: "I review @carol's and @dave's branches, @carol first."}, []string{"carol", "dave"}},
		{"a learned memory names no one", memory.AddRequest{Sort: "learned", Text: "@bob knows the hooks"}, nil},
		{"a private decision names no one", memory.AddRequest{Sort: "decided", Text: "@bob is slow", Private: true}, nil},
		{"oneself and the human are not written to", memory.AddRequest{Sort: "decided", Text: "@alice and @owner agree"}, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Agent, tc.req.Now = "alice", now.Add(time.Duration(i)*time.Second)
			added, err := b.AddMemory(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(added.Told, tc.told) {
				t.Fatalf("told %v, want %v", added.Told, tc.told)
			}
			for _, to := range tc.told {
				l := letterFor(t, b, to, "alice")
				if !strings.Contains(l.Letter.What, "(memory "+added.ID+")") || !strings.Contains(l.Letter.What, tc.req.Text) {
					t.Fatalf("%s's letter: %q", to, l.Letter.What)
				}
			}
		})
	}
	// The same memory again writes nothing and tells no one again.
	again, err := b.AddMemory(ctx, memory.AddRequest{Agent: "alice", Sort: "decided", Text: "the tray stays on 7420", About: []string{"agent:bob"}, Now: now})
	if err != nil || again.Written || len(again.Told) != 0 {
		t.Fatalf("the same memory again: %+v, %v", again, err)
	}
}

func TestFollowupResolution(t *testing.T) {
	for _, tc := range []struct {
		recorded, withdrawn, as, text string
		ok                            bool
	}{
		{"7420", "", memory.StateRecorded, "7420", true},
		{"", "moot", memory.StateWithdrawn, "moot", true},
		{"", "", "", "", false},
		{"a", "b", "", "", false},
	} {
		as, text, ok := ops.FollowupResolution(tc.recorded, tc.withdrawn)
		if as != tc.as || text != tc.text || ok != tc.ok {
			t.Errorf("FollowupResolution(%q, %q) = %q %q %v, want %q %q %v", tc.recorded, tc.withdrawn, as, text, ok, tc.as, tc.text, tc.ok)
		}
	}
}
