package session

import (
	"context"
	"time"

	"github.com/m1nd/m1nd/ops"
)

// View is one recorded session as `m1nd sessions --json` and the MCP
// server's sessions tool answer it: the record, what waits for its agent,
// and the refresh decider's reading of it.
type View struct {
	Listed
	Waiting int      `json:"waiting"` // letters and follow-ups waiting for its agent
	Refresh Decision `json:"refresh"`
}

// Views lists the sessions recorded in the runtime folder, liveness
// checked at now (the dead ones too when all), each with what waits for
// its agent (ops.Flows.Waiting) and the decider's reading. flows is opened
// only when a session is listed.
func Views(ctx context.Context, runtimeDir string, flows func() (*ops.Flows, error), now time.Time, all bool) ([]View, error) {
	reg := NewRegistry(runtimeDir)
	// Listing is where a human looks: what is a day dead goes first.
	if _, err := reg.Sweep(now); err != nil {
		return nil, err
	}
	listed, err := reg.List(now, all)
	if err != nil {
		return nil, err
	}
	views := []View{}
	waiting := map[string]int{}
	var b *ops.Flows
	for _, l := range listed {
		if _, known := waiting[l.Agent]; !known {
			if b == nil {
				if b, err = flows(); err != nil {
					return nil, err
				}
			}
			if waiting[l.Agent], err = b.Waiting(ctx, l.Agent); err != nil {
				return nil, err
			}
		}
		views = append(views, View{Listed: l, Waiting: waiting[l.Agent], Refresh: Assess(l, waiting[l.Agent], now)})
	}
	return views, nil
}
