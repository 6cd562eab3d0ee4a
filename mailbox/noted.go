package mailbox

import (
	"context"
	"encoding/json"
	"fmt"
)

// noted is the record of the letters an agent was told of by a tool
// result (the MCP server's note), beside its cursor: a server process
// that starts after another tells the agent only of what that one did
// not. It holds only letters still waiting, so it stays as small as the
// backlog.
type noted struct {
	IDs []string `json:"ids"`
}

// Unnoted returns the letters of waiting (Waiting's order) that no call,
// in this process or an earlier one, returned for agent, and records them
// as told. Telling claims nothing: the hooks still hand each letter over
// once.
func (b *Mailbox) Unnoted(ctx context.Context, agent string, waiting []Stored) ([]Stored, error) {
	rec := &noted{}
	if err := readAgentJSON(b.Repo, notedFile, agent, "letters told of", "remove it: the agent is then told of what waits again", rec); err != nil {
		return nil, err
	}
	if fresh := unnoted(rec, waiting); len(fresh) == 0 {
		return nil, nil // most calls: nothing new, nothing locked
	}
	_, unlock, err := b.lockCursor(ctx, agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec = &noted{}
	if err := readAgentJSON(b.Repo, notedFile, agent, "letters told of", "remove it: the agent is then told of what waits again", rec); err != nil {
		return nil, err
	}
	fresh := unnoted(rec, waiting)
	if len(fresh) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(waiting))
	for _, s := range waiting {
		ids = append(ids, s.ID)
	}
	data, err := json.Marshal(noted{IDs: ids}) // what waits now, every one told of
	if err != nil {
		return nil, err
	}
	if err := writeAgentJSON(b.Repo, notedFile, agent, data); err != nil {
		return nil, fmt.Errorf("letters told of for %s: %w", agent, err)
	}
	return fresh, nil
}

// unnoted is the letters of waiting that rec does not hold.
func unnoted(rec *noted, waiting []Stored) []Stored {
	told := make(map[string]bool, len(rec.IDs))
	for _, id := range rec.IDs {
		told[id] = true
	}
	var out []Stored
	for _, s := range waiting {
		if !told[s.ID] {
			out = append(out, s)
		}
	}
	return out
}
