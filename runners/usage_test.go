package runners

import (
	"testing"
	"time"
)

func TestUsageLine(t *testing.T) {
	cost := 0.012345
	for _, tc := range []struct {
		u    Usage
		want string
	}{
		{Usage{}, "0 input tokens (0 read from the cache, 0 written), 0 output"},
		{Usage{Turns: 1, Input: 12, Output: 3}, "1 turn: 12 input tokens (0 read from the cache, 0 written), 3 output"},
		{Usage{Turns: 3, Input: 1845, CacheRead: 10000, CacheWrite: 500, Output: 800, CostUSD: &cost}, "3 turns: 12,345 input tokens (10,000 read from the cache, 500 written), 800 output, $0.0123"},
		{Usage{Input: 1234567}, "1,234,567 input tokens (0 read from the cache, 0 written), 0 output"},
	} {
		if got := tc.u.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.u, got, tc.want)
		}
	}
}

// TestKeeperAgentsSumsTheSession: m1nd sessions shows what the last kept
// session's turns cost, counted from its start.
func TestKeeperAgentsSumsTheSession(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	one := &Usage{Input: 100, Output: 10}
	lines := []Wake{
		{At: at, Event: "woke", How: "stream"},
		{At: at, Event: "turn_ended", Usage: &Usage{Input: 999}},
		{At: at, Event: "ended"},
		{At: at, Event: "woke", How: "stream"},
		{At: at, Event: "turn_ended", Usage: one},
		{At: at, Event: "turn_failed", Usage: one},
	}
	var a KeeperAgent
	a.replay(lines)
	if a.Spent == nil || a.Spent.Turns != 2 || a.Spent.Input != 200 || a.Spent.Output != 20 {
		t.Fatalf("spent %+v, want the last session's two turns", a.Spent)
	}
}
