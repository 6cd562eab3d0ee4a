// Package chaintest helps tests that need mission chains in a given state
// on a real repository, as httptest does for servers.
package chaintest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// MergeWait opens a mission on block and moves it to merge_wait with a
// green gate, through the post law; it returns the head and the mission's
// ref.
func MergeWait(t testing.TB, m *chain.Missions, block string) (*chain.Head, string) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	res, err := m.New(ctx, chain.NewMission{BlockID: block, Agent: "a", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	head, err := m.Current(res.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	next := chain.Next(head.Letter, head.HeadLetterID, now)
	next.Phase = chain.PhaseMergeWait
	exit := int64(0)
	next.Gate = &chain.Gate{Command: "true", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("a", 64)}
	if _, err := m.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if head, err = m.Current(res.MissionID); err != nil {
		t.Fatal(err)
	}
	return head, chain.MissionRefPrefix + res.MissionID
}
