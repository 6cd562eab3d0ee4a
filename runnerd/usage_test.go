package runnerd

import (
	"bytes"
	"strconv"
	"strings"
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

// TestStreamReadsUsage: each client's turn end yields what the turn cost —
// Claude Code's model_usage_since_last_result (summed over models, with
// its price), Codex's thread total less what earlier turns counted.
func TestStreamReadsUsage(t *testing.T) {
	claude := `{"type":"result","subtype":"success","session_id":"s1","is_error":false,"result":"done","total_cost_usd":0.9,"model_usage_since_last_result":{"a":{"inputTokens":1234,"outputTokens":10,"cacheReadInputTokens":500,"cacheCreationInputTokens":70,"costUSD":0.005},"b":{"inputTokens":6,"outputTokens":1,"costUSD":0.001}}}`
	ev := claudeWire{}.read([]byte(claude), nil)
	if u := ev.usage; u == nil || u.Input != 1240 || u.Output != 11 || u.CacheRead != 500 || u.CacheWrite != 70 || u.CostUSD == nil || *u.CostUSD < 0.00599 || *u.CostUSD > 0.00601 {
		t.Fatalf("claude: %+v", ev.usage)
	}
	c := &codexWire{thread: "th"}
	var out bytes.Buffer
	usage := func(in, cached, outTok int) string {
		return strings.NewReplacer("IN", strconv.Itoa(in), "CA", strconv.Itoa(cached), "OUT", strconv.Itoa(outTok)).Replace(
			`{"method":"thread/tokenUsage/updated","params":{"threadId":"th","tokenUsage":{"total":{"inputTokens":IN,"cachedInputTokens":CA,"cacheWriteInputTokens":0,"outputTokens":OUT}}}}`)
	}
	done := `{"method":"turn/completed","params":{"turn":{"status":"completed"}}}`
	c.read([]byte(usage(1000, 400, 10)), &out)
	if ev := c.read([]byte(done), &out); ev.usage == nil || ev.usage.Input != 600 || ev.usage.CacheRead != 400 || ev.usage.Output != 10 || ev.usage.CostUSD != nil {
		t.Fatalf("codex turn 1: %+v", ev.usage)
	}
	c.read([]byte(usage(2500, 1400, 25)), &out)
	if ev := c.read([]byte(done), &out); ev.usage == nil || ev.usage.Input != 500 || ev.usage.CacheRead != 1000 || ev.usage.Output != 15 {
		t.Fatalf("codex turn 2: %+v", ev.usage)
	}
	if ev := c.read([]byte(done), &out); ev.usage != nil {
		t.Fatalf("a turn with no new usage: %+v", ev.usage)
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
