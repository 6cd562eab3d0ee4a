package runners

import (
	"fmt"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// Usage is what a kept session's turns cost, as its client reports it:
// tokens by kind and, when the client prices them (Claude Code does, Codex
// does not), dollars. m1nd holds no lease on a model: it journals what the
// clients say, shows it (m1nd sessions), and tells the session what it has
// spent (research §1.7's plan line).
type Usage struct {
	Turns      int      `json:"turns,omitempty"` // in a session's sum: how many turns it counts
	Input      int64    `json:"input_tokens"`    // sent, not read from the cache
	CacheRead  int64    `json:"cache_read_tokens"`
	CacheWrite int64    `json:"cache_write_tokens"`
	Output     int64    `json:"output_tokens"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
}

// Add counts u into s, as one more turn.
func (s *Usage) Add(u *Usage) {
	if u == nil {
		return
	}
	s.Turns++
	s.Input += u.Input
	s.CacheRead += u.CacheRead
	s.CacheWrite += u.CacheWrite
	s.Output += u.Output
	if u.CostUSD != nil {
		cost := *u.CostUSD
		if s.CostUSD != nil {
			cost += *s.CostUSD
		}
		s.CostUSD = &cost
	}
}

// String is the usage in one line: "3 turns: 12,345 input tokens (10,000
// read from the cache, 500 written), 800 output, $0.0123".
func (s Usage) String() string {
	var b strings.Builder
	if s.Turns > 0 {
		b.WriteString(rules.Count(s.Turns, "turn") + ": ")
	}
	fmt.Fprintf(&b, "%s input tokens (%s read from the cache, %s written), %s output", thousands(s.Input+s.CacheRead+s.CacheWrite), thousands(s.CacheRead), thousands(s.CacheWrite), thousands(s.Output))
	if s.CostUSD != nil {
		fmt.Fprintf(&b, ", $%.4f", *s.CostUSD)
	}
	return b.String()
}

// Account is the line a turn m1nd writes into a kept session ends with:
// what the session has spent so far.
func (s Usage) Account() string {
	return "m1nd: this session so far, as your client reports it: " + s.String() + "."
}

// thousands writes n with commas every three digits.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
