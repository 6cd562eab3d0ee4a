package runnerd

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

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
