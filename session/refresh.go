package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The refresh decider (DESIGN §11; seed §1.4 and §2.5). A session is never
// summarised: memory is the summary. When a session has grown too large,
// or would cost more to resume than to rebuild, it is ended and a fresh
// one starts from the agent's memory (rehydration). Decide is a pure
// function of a session's measured state, read from the client's own
// transcript; the caller journals each decision with its inputs, so the
// constants below can be measured and moved.

// Actions the decider answers.
const (
	// ActionKeep leaves the session as it is: it is working, or idle with
	// nothing to do, or small and warm.
	ActionKeep = "keep"
	// ActionResume resumes the session (it is not live, work waits): its
	// cache is still warm, or it is no larger than a rebuild.
	ActionResume = "resume_warm"
	// ActionRehydrate ends the session (at an idle boundary) and starts a
	// fresh one from memory.
	ActionRehydrate = "end_and_rehydrate"
	// ActionEnd ends a live, idle session past its cache deadline when no
	// floor keeps it (research §1.4 rule 2, the task boundary): its cache
	// is cold, so ending it costs nothing a resume would not pay again.
	ActionEnd = "end_idle"
)

// ShortCacheTTL is the cache life in seconds of a request that wrote no
// 1 h cache: the one assumed when nothing says otherwise.
const ShortCacheTTL = 300

// Measure is what a transcript says about a session's requests.
type Measure struct {
	Client   string    `json:"client"` // claude or codex
	Model    string    `json:"model,omitempty"`
	Requests int       `json:"requests"` // model requests with usage
	First    int64     `json:"first_prefix"`
	Prefix   int64     `json:"prefix"`    // tokens the last request sent (input, cached or not)
	Rental   int64     `json:"rental"`    // the sum over requests after the first of prefix − first prefix
	Window   int64     `json:"window"`    // the model's context window, when the transcript names it
	CacheTTL int64     `json:"cache_ttl"` // seconds: 3600 when the last request wrote the 1 h cache, else 300
	Last     time.Time `json:"last_request"`
}

// Policy holds the decider's constants.
type Policy struct {
	// CeilingFraction of the context window is the most a session may
	// hold before it is refreshed at its next idle boundary.
	CeilingFraction float64
	// Ceilings by model name prefix override the fraction (measured
	// ceilings, in tokens).
	Ceilings map[string]int64
	// CacheMargin is taken off the cache life: a request this close to the
	// cache's end may find it gone.
	CacheMargin time.Duration
	// RentalFactor: a session whose re-read tokens above its first
	// prefix add up to this many first prefixes has paid for a rebuild
	// (seed §2.5: cache reads at 0.05× and 1 h writes at 2× give 40).
	RentalFactor int64
}

// DefaultPolicy is the decider's policy until measurements move it.
func DefaultPolicy() Policy {
	return Policy{CeilingFraction: 0.75, CacheMargin: 60 * time.Second, RentalFactor: 40}
}

// defaultWindow is a model's context window when the transcript does not
// say (Claude's transcripts never do): 1M for the models Claude Code gives
// a 1M window (2.1.332 auto-compacts claude-opus-5-5 from 977,000 tokens,
// measured) and for a model whose name asks for it, else 200k.
func defaultWindow(model string) int64 {
	for _, prefix := range []string{"claude-opus-5", "claude-sonnet-5"} {
		if strings.HasPrefix(model, prefix) {
			return 1_000_000
		}
	}
	if strings.Contains(model, "[1m]") {
		return 1_000_000
	}
	return 200_000
}

// State is a session's measured state at one moment.
type State struct {
	Measure
	Live    bool      `json:"live"`     // the client process runs
	MidTurn bool      `json:"mid_turn"` // a turn is open (between a prompt and its Stop)
	Waiting int       `json:"waiting"`  // letters and owed follow-ups that wait for the agent
	Floor   int       `json:"floor"`    // live sessions the keeper keeps for the agent with nothing waiting
	Now     time.Time `json:"now"`
}

// Decision is the decider's answer, with what it read.
type Decision struct {
	Action        string    `json:"action"`
	Reason        string    `json:"reason"`
	Ceiling       int64     `json:"ceiling"`
	CacheDeadline time.Time `json:"cache_deadline,omitzero"`
	IdleSeconds   int64     `json:"idle_seconds"`
	Inputs        State     `json:"inputs"`
}

// Fill is the share of the ceiling a session holds, for display.
func (d Decision) Fill() float64 {
	if d.Ceiling <= 0 {
		return 0
	}
	return float64(d.Inputs.Prefix) / float64(d.Ceiling)
}

// Ceiling is the most a session of model m may hold under p.
func (p Policy) Ceiling(m Measure) int64 {
	best := ""
	for prefix := range p.Ceilings {
		if strings.HasPrefix(m.Model, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best != "" {
		return p.Ceilings[best]
	}
	window := m.Window
	if window <= 0 {
		window = defaultWindow(m.Model)
	}
	return int64(float64(window) * p.CeilingFraction)
}

// Decide answers what to do with a session in state s. A live session is
// only ever ended at an idle boundary: mid-turn it is kept whatever it
// holds, and its fill is looked at again when the turn ends.
func Decide(s State, p Policy) Decision {
	d := Decision{Inputs: s, Ceiling: p.Ceiling(s.Measure)}
	if !s.Last.IsZero() {
		d.CacheDeadline = s.Last.Add(time.Duration(s.CacheTTL)*time.Second - p.CacheMargin)
		d.IdleSeconds = int64(s.Now.Sub(s.Last) / time.Second)
	}
	warm := !s.Last.IsZero() && s.Now.Before(d.CacheDeadline)
	switch {
	case s.Live && s.MidTurn:
		d.Action, d.Reason = ActionKeep, "mid-turn: a session is only refreshed at an idle boundary"
	case s.Requests == 0:
		d.Action, d.Reason = ActionKeep, "no request measured yet"
	case s.Live && s.Waiting == 0 && s.Floor == 0 && !warm && !s.Last.IsZero():
		// Ahead of fill and rental: with nothing to do and no floor, a
		// fresh session would only wait too.
		d.Action, d.Reason = ActionEnd, "idle past the cache deadline, nothing waits and no floor keeps it"
	case s.Prefix >= d.Ceiling:
		d.Action, d.Reason = ActionRehydrate, fmt.Sprintf("context fill: %d tokens at or over the ceiling of %d", s.Prefix, d.Ceiling)
	case s.First > 0 && s.Rental >= p.RentalFactor*s.First:
		d.Action, d.Reason = ActionRehydrate, fmt.Sprintf("rental: %d tokens re-read above the first prefix, %d× a rebuild of %d", s.Rental, p.RentalFactor, s.First)
	case s.Live:
		d.Action, d.Reason = ActionKeep, "live and idle, under the ceiling"
	case s.Waiting == 0:
		d.Action, d.Reason = ActionKeep, "not live, and nothing waits for it"
	case warm:
		d.Action, d.Reason = ActionResume, "work waits and the cache is warm until the deadline"
	case s.Prefix > s.First:
		d.Action, d.Reason = ActionRehydrate, fmt.Sprintf("cold cache: resuming rewrites %d tokens, a rebuild about %d", s.Prefix, s.First)
	default:
		d.Action, d.Reason = ActionResume, "cold, but no larger than a rebuild"
	}
	return d
}

// ReadTranscript measures a session from its client's transcript:
// Claude Code's JSONL (assistant lines carry message.usage, with
// cache_creation.ephemeral_1h_input_tokens telling the cache life) or
// Codex's rollout JSONL (event_msg token_count lines carry
// last_token_usage and the model's context window; turn_context names the
// model). Lines it does not know are skipped; a line that is not JSON
// ends the reading with an error (a transcript being written may end in
// half a line: that last line is ignored).
func ReadTranscript(client string, r io.Reader) (Measure, error) {
	m := Measure{Client: client, CacheTTL: ShortCacheTTL}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var pending error
	seen := map[string]bool{} // Claude repeats a message's usage on each of its content lines
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		if pending != nil {
			return m, pending
		}
		var err error
		switch client {
		case HostClaude:
			err = m.claudeLine(line, seen)
		case HostCodex:
			err = m.codexLine(line)
		default:
			return m, fmt.Errorf("unknown client %q: want claude or codex", client)
		}
		if err != nil {
			pending = err // fatal unless it is the last line
		}
	}
	return m, sc.Err()
}

// request records one model request that sent prefix tokens at t.
func (m *Measure) request(prefix int64, t time.Time) {
	m.Requests++
	if m.Requests == 1 {
		m.First = prefix
	} else if prefix > m.First {
		m.Rental += prefix - m.First
	}
	m.Prefix = prefix
	if !t.IsZero() {
		m.Last = t
	}
}

type claudeLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Message   struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			InputTokens              int64 `json:"input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
			CacheCreation            struct {
				Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
		} `json:"usage"`
	} `json:"message"`
}

func (m *Measure) claudeLine(data []byte, seen map[string]bool) error {
	var l claudeLine
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("claude transcript: %w", err)
	}
	u := l.Message.Usage
	if l.Type != "assistant" || u == nil || (l.Message.ID != "" && seen[l.Message.ID]) {
		return nil
	}
	seen[l.Message.ID] = l.Message.ID != ""
	if l.Message.Model != "" && l.Message.Model != "<synthetic>" {
		m.Model = l.Message.Model
	}
	m.request(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens, l.Timestamp)
	if u.CacheCreation.Ephemeral1h > 0 {
		m.CacheTTL = 3600
	} else if u.CacheCreationInputTokens > 0 {
		m.CacheTTL = ShortCacheTTL // this request wrote the 5 min cache
	}
	return nil
}

type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type  string `json:"type"`
		Model string `json:"model"` // turn_context
		Info  *struct {
			Last struct {
				InputTokens int64 `json:"input_tokens"` // cached ones included
			} `json:"last_token_usage"`
			Window int64 `json:"model_context_window"`
		} `json:"info"`
	} `json:"payload"`
}

func (m *Measure) codexLine(data []byte) error {
	var l codexLine
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("codex rollout: %w", err)
	}
	switch {
	case l.Type == "turn_context" && l.Payload.Model != "":
		m.Model = l.Payload.Model
	case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil:
		if l.Payload.Info.Window > 0 {
			m.Window = l.Payload.Info.Window
		}
		m.request(l.Payload.Info.Last.InputTokens, l.Timestamp)
	}
	return nil
}
