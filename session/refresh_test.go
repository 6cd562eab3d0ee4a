package session

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var r0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// claudeAssistant is one assistant line of a Claude Code transcript.
func claudeAssistant(id string, at time.Time, input, created, read, created1h int64) string {
	return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"message":{"id":%q,"model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d},"output_tokens":12}}}`,
		at.Format(time.RFC3339Nano), id, input, created, read, created-created1h, created1h)
}

func TestReadTranscript(t *testing.T) {
	user := `{"type":"user","timestamp":"2026-12-01T12:00:00Z","message":{"role":"user","content":"hi"}}`
	summary := `{"type":"summary","summary":"x"}`
	codexMeta := `{"timestamp":"2026-12-01T12:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}`
	codexTurn := `{"timestamp":"2026-12-01T12:00:00Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/w"}}`
	codexCount := func(at time.Time, input int64) string {
		return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":5},"model_context_window":272000}}}`, at.Format(time.RFC3339Nano), input, input/2)
	}
	noInfo := `{"timestamp":"2026-12-01T12:00:09Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`
	for _, tc := range []struct {
		name, client string
		lines        []string
		want         Measure
		err          string
	}{
		{"claude, 1 h cache, a message split over two lines", HostClaude, []string{
			user,
			claudeAssistant("m1", r0.Add(time.Second), 10, 20000, 0, 20000),
			claudeAssistant("m1", r0.Add(time.Second), 10, 20000, 0, 20000),
			claudeAssistant("m2", r0.Add(time.Minute), 5, 1000, 20000, 1000),
			summary,
		}, Measure{Client: HostClaude, Model: "claude-sonnet-4-5", Requests: 2, First: 20010, Prefix: 21005, Rental: 995, CacheTTL: 3600, Last: r0.Add(time.Minute)}, ""},
		{"claude, 5 min cache", HostClaude, []string{
			claudeAssistant("m1", r0, 3, 9000, 0, 0),
			claudeAssistant("m2", r0.Add(2*time.Second), 3, 0, 9000, 0),
		}, Measure{Client: HostClaude, Model: "claude-sonnet-4-5", Requests: 2, First: 9003, Prefix: 9003, CacheTTL: 300, Last: r0.Add(2 * time.Second)}, ""},
		{"claude, half a last line being written", HostClaude, []string{
			claudeAssistant("m1", r0, 3, 9000, 0, 0), `{"type":"assist`,
		}, Measure{Client: HostClaude, Model: "claude-sonnet-4-5", Requests: 1, First: 9003, Prefix: 9003, CacheTTL: 300, Last: r0}, ""},
		{"claude, a broken line before the end", HostClaude, []string{`{"type":`, claudeAssistant("m1", r0, 3, 9000, 0, 0)}, Measure{}, "claude transcript"},
		{"codex rollout", HostCodex, []string{
			codexMeta, codexTurn, codexCount(r0.Add(time.Second), 8000), noInfo, codexCount(r0.Add(time.Minute), 12000),
		}, Measure{Client: HostCodex, Model: "gpt-5-codex", Requests: 2, First: 8000, Prefix: 12000, Rental: 4000, Window: 272000, CacheTTL: 300, Last: r0.Add(time.Minute)}, ""},
		{"empty", HostCodex, nil, Measure{Client: HostCodex, CacheTTL: 300}, ""},
		{"unknown client", "gemini", []string{codexMeta}, Measure{}, "unknown client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTranscript(tc.client, strings.NewReader(strings.Join(tc.lines, "\n")+"\n"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	measured := Measure{Client: HostClaude, Model: "claude-sonnet-4-5", Requests: 10, First: 20000, Prefix: 60000, Rental: 200000, CacheTTL: 3600, Last: r0}
	at := func(m Measure, live, mid bool, waiting int, now time.Time) State {
		return State{Measure: m, Live: live, MidTurn: mid, Waiting: waiting, Now: now}
	}
	with := func(edit func(*Measure)) Measure { m := measured; edit(&m); return m }
	floored := func(s State) State { s.Floor = 1; return s }
	for _, tc := range []struct {
		name  string
		state State
		want  string
	}{
		{"mid-turn over the ceiling is kept", at(with(func(m *Measure) { m.Prefix = 190000 }), true, true, 0, r0), ActionKeep},
		{"idle over the ceiling is refreshed", at(with(func(m *Measure) { m.Prefix = 150000 }), true, false, 0, r0), ActionRehydrate},
		{"a 1M model holds more", at(with(func(m *Measure) { m.Prefix = 150000; m.Model = "claude-sonnet-4-5[1m]" }), true, false, 0, r0), ActionKeep},
		{"claude-opus-5-5 has 1M in Claude Code", at(with(func(m *Measure) { m.Prefix = 700000; m.Model = "claude-opus-5-5" }), true, false, 0, r0), ActionKeep},
		{"and a ceiling at 3/4 of it", at(with(func(m *Measure) { m.Prefix = 760000; m.Model = "claude-opus-5-5" }), true, false, 0, r0), ActionRehydrate},
		{"codex's own window", at(with(func(m *Measure) { m.Prefix = 150000; m.Window = 272000 }), true, false, 0, r0), ActionKeep},
		{"rental paid for a rebuild", at(with(func(m *Measure) { m.Rental = 800000 }), true, false, 0, r0), ActionRehydrate},
		{"live and idle", at(measured, true, false, 3, r0), ActionKeep},
		{"live, idle and warm, no floor", at(measured, true, false, 0, r0.Add(58*time.Minute)), ActionKeep},
		{"live, idle, past the deadline, no floor", at(measured, true, false, 0, r0.Add(59*time.Minute+30*time.Second)), ActionEnd},
		{"... full, it is ended all the same: a fresh one would only wait", at(with(func(m *Measure) { m.Prefix = 150000 }), true, false, 0, r0.Add(2*time.Hour)), ActionEnd},
		{"... but a floor keeps it", floored(at(measured, true, false, 0, r0.Add(2*time.Hour))), ActionKeep},
		{"... and work waiting goes into it", at(measured, true, false, 2, r0.Add(2*time.Hour)), ActionKeep},
		{"... and mid-turn it is never ended", at(measured, true, true, 0, r0.Add(2*time.Hour)), ActionKeep},
		{"not live, nothing waits", at(measured, false, false, 0, r0.Add(2*time.Hour)), ActionKeep},
		{"not live, work waits, warm", at(measured, false, false, 1, r0.Add(58*time.Minute)), ActionResume},
		{"not live, work waits, past the margin", at(measured, false, false, 1, r0.Add(59*time.Minute+30*time.Second)), ActionRehydrate},
		{"5 min cache, cold after 4", at(with(func(m *Measure) { m.CacheTTL = 300 }), false, false, 1, r0.Add(4*time.Minute+1)), ActionRehydrate},
		{"cold but no larger than a rebuild", at(with(func(m *Measure) { m.Prefix = 20000; m.Rental = 0 }), false, false, 1, r0.Add(3*time.Hour)), ActionResume},
		{"nothing measured", at(Measure{Client: HostCodex}, false, false, 1, r0), ActionKeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.state, DefaultPolicy())
			if d.Action != tc.want {
				t.Fatalf("%s (%s), want %s; ceiling %d", d.Action, d.Reason, tc.want, d.Ceiling)
			}
			if d.Reason == "" || d.Inputs != tc.state {
				t.Fatalf("a decision without its reason or inputs: %+v", d)
			}
		})
	}
	p := DefaultPolicy()
	p.Ceilings = map[string]int64{"claude-sonnet": 50000, "claude-sonnet-4-5": 70000}
	if c := p.Ceiling(measured); c != 70000 {
		t.Fatalf("the longest matching model prefix sets the ceiling: %d", c)
	}
	if d := Decide(at(measured, true, false, 0, r0), p); d.Action != ActionKeep || d.Fill() < 0.85 || d.Fill() > 0.86 {
		t.Fatalf("under a measured ceiling: %s fill %.2f", d.Action, d.Fill())
	}
}

// FuzzReadTranscript: any bytes read as either client's transcript never
// panic, and what is measured is consistent.
func FuzzReadTranscript(f *testing.F) {
	f.Add(claudeAssistant("m1", r0, 3, 9000, 0, 0) + "\n" + claudeAssistant("m2", r0, 1, 2, 3, 4))
	f.Add(`{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":5},"model_context_window":9}}}`)
	f.Add("\n\n{}\n[]\nnull\n")
	f.Fuzz(func(t *testing.T, data string) {
		for _, client := range []string{HostClaude, HostCodex} {
			m, err := ReadTranscript(client, strings.NewReader(data))
			if err != nil {
				continue
			}
			if m.Requests < 0 || m.Rental < 0 || (m.Requests == 0 && (m.First != 0 || m.Prefix != 0 || m.Rental != 0)) {
				t.Fatalf("%s: inconsistent measure %+v", client, m)
			}
			Decide(State{Measure: m, Now: r0}, DefaultPolicy())
		}
	})
}

func TestNamesAgent(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"bob reviews", true}, {"ask @bob first", true}, {"bobby reviews", false}, {"the bob.", true},
		{"kebob", false}, {"bob-2 reviews", false}, {"first bobx then bob", true}, {"", false},
	} {
		if got := namesAgent(tc.text, "bob"); got != tc.want {
			t.Errorf("namesAgent(%q) = %v", tc.text, got)
		}
	}
}
