package runners

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// KeeperAgent is what the keeper's journal says of one pinned agent: its
// session as the keeper holds it, and what the keeper does next.
type KeeperAgent struct {
	Agent     string     `json:"agent"`
	Client    string     `json:"client"`
	Mode      string     `json:"mode"`  // stream (a kept session) or wake (one per wake)
	State     string     `json:"state"` // none, woken, idle, mid-turn
	SessionID string     `json:"session_id,omitempty"`
	Since     *time.Time `json:"since,omitempty"` // when the state began
	Next      string     `json:"next"`            // the keeper's next action, in words
	NextAt    *time.Time `json:"next_at,omitempty"`
	GaveUp    []string   `json:"gave_up,omitempty"` // items it no longer wakes for
	Note      string     `json:"note,omitempty"`    // the last thing the operator can fix
	// Spent is what the last kept session's turns cost, as its client
	// reported them; absent before any turn reported.
	Spent *Usage `json:"spent,omitempty"`
}

// KeeperAgents reads the keeper's journal in runtimeDir for the agents
// pinned in its runners.toml, as of now. An agent with no pin is not
// listed; a journal that cannot be read lists every pin with no session.
func KeeperAgents(runtimeDir string, now time.Time) ([]KeeperAgent, error) {
	cfg, err := LoadConfig(filepath.Join(runtimeDir, ConfigFile))
	if err != nil {
		return nil, err
	}
	if len(cfg.Keepers) == 0 {
		return nil, nil
	}
	data, _ := gitstore.ReadRuntime(JournalPath(runtimeDir), 64<<20)
	byAgent := map[string][]Wake{}
	for _, line := range strings.Split(string(data), "\n") {
		var w Wake
		if json.Unmarshal([]byte(line), &w) == nil && w.Agent != "" {
			byAgent[w.Agent] = append(byAgent[w.Agent], w)
		}
	}
	var out []KeeperAgent
	for _, pin := range cfg.Keepers {
		out = append(out, keeperAgent(pin, byAgent[pin.Agent], now))
	}
	return out, nil
}

// keeperAgent replays one agent's journal lines.
func keeperAgent(pin *KeeperPin, lines []Wake, now time.Time) KeeperAgent {
	a := KeeperAgent{Agent: pin.Agent, Client: pin.Client, Mode: "wake", State: "none"}
	if len(pin.Stream) > 0 {
		a.Mode = "stream"
	}
	started, lastEnd := a.replay(lines)
	a.Next = keeperNext(pin, &a, started, lastEnd, now)
	if a.NextAt != nil && !now.Before(*a.NextAt) {
		a.NextAt = nil
	}
	return a
}

// replay plays journal lines onto a, oldest first. It returns when the
// last session was woken and when its last turn ended: the keeper's next
// action is timed from them.
func (a *KeeperAgent) replay(lines []Wake) (started, lastEnd time.Time) {
	given := map[string]bool{}
	for _, w := range lines {
		at := w.At
		switch w.Event {
		case "woke":
			a.State, a.SessionID, a.Since, started = "woken", w.SessionID, &at, at
			if strings.HasPrefix(w.How, "stream") { // stream, stream-resume
				a.State, lastEnd, a.Spent = "mid-turn", at, nil
			}
		case "turn", "tempo", "flush", "retry":
			a.State, a.Since = "mid-turn", &at
		case "flush_asked":
			a.State = "flushing"
		case "turn_ended", "turn_failed", "flushed", "flush_failed":
			a.State, a.Since, lastEnd = "idle", &at, at
			if w.Usage != nil {
				if a.Spent == nil {
					a.Spent = &Usage{}
				}
				a.Spent.Add(w.Usage)
			}
		case "exited", "failed", "ended":
			a.State, a.SessionID, a.Since = "none", "", &at
		case "gave_up":
			for _, it := range w.Items {
				given[it] = true
			}
		}
		if w.SessionID != "" && a.State != "none" {
			a.SessionID = w.SessionID
		}
		if w.Next != nil {
			a.NextAt = w.Next
		}
		if w.Note != "" && (w.Event == "exited" || w.Event == "ended") {
			a.Note = w.Note
		}
	}
	for it := range given {
		a.GaveUp = append(a.GaveUp, it)
	}
	slices.Sort(a.GaveUp)
	return started, lastEnd
}

// keeperNext says in words what the keeper does next for a, as of now:
// the backoff it waits out, the session or turn it waits for, or what
// wakes the agent.
func keeperNext(pin *KeeperPin, a *KeeperAgent, started, lastEnd, now time.Time) string {
	limit := time.Duration(pin.TimeoutSecs) * time.Second
	switch {
	case a.NextAt != nil && now.Before(*a.NextAt) && a.State == "none":
		return "wakes " + pin.Agent + " again after its backoff, at " + a.NextAt.UTC().Format(time.TimeOnly)
	case a.State == "woken":
		return "waits for the woken session to end (timeout_secs at " + started.Add(limit).UTC().Format(time.TimeOnly) + ")"
	case a.State == "mid-turn":
		return "waits for the turn to end"
	case a.State == "flushing":
		return "waits for the turn it asked to flush to end, then ends the session (timeout_secs at " + started.Add(limit).UTC().Format(time.TimeOnly) + ")"
	case a.State == "idle":
		rotate := pin.Rotation(started)
		next := "writes the next letter in as a turn"
		if pin.TempoSecs > 0 {
			next += fmt.Sprintf("; a tempo turn at %s", lastEnd.Add(time.Duration(pin.TempoSecs)*time.Second).UTC().Format(time.TimeOnly))
		}
		next += "; a flush and a fresh session at " + rotate.UTC().Format(time.TimeOnly)
		if pin.Floor == 0 {
			next += "; or it ends idle once its cache is cold"
		}
		return next
	case pin.Floor > 0:
		return "starts a kept session (floor 1)"
	}
	return "wakes " + pin.Agent + " when a letter or a follow-up waits"
}
