package tray

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/serve"
	"github.com/m1nd/m1nd/runnerd"
)

// The gate that proves work is the human's: once the brain has a passkey,
// runnerd runs a build runner only as a human approved its pin
// (brain.PinSet on refs/m1nd/pins). The tray lists the build runners of
// runners.toml with their state and approves them with the gesture pins.

// pinView is one build runner of runners.toml as the tray shows it.
type pinView struct {
	ID          string   `json:"id"`
	GateCommand string   `json:"gate_command"`
	Command     []string `json:"command"`
	Pin         string   `json:"pin"`
	// State is approved (its pin is in the approved set), changed (its id
	// is, with another pin) or new.
	State string `json:"state"`
}

type runnerPinsReply struct {
	// Required says whether approval is needed: once the brain has a
	// passkey, runnerd runs only approved build runners.
	Required        bool      `json:"required"`
	ApprovedVersion int64     `json:"approved_version"`
	Runners         []pinView `json:"runners"`
	Problem         string    `json:"problem,omitempty"` // runners.toml does not load
}

// buildRunners reads the build runners of runners.toml now.
func (s *Server) buildRunners() ([]*runnerd.Runner, error) {
	if s.Pins.File == "" {
		return nil, nil
	}
	cfg, err := runnerd.LoadConfig(s.Pins.File)
	if err != nil {
		return nil, err
	}
	var out []*runnerd.Runner
	for _, r := range cfg.Runners {
		if r.ProvesWork() {
			out = append(out, r)
		}
	}
	return out, nil
}

// getRunnerPins is GET /api/runner_pins.
func (s *Server) getRunnerPins(w http.ResponseWriter, r *http.Request) {
	keys, err := s.Store.Keys()
	if err != nil {
		serve.WriteErr(w, err)
		return
	}
	approved, err := brain.ApprovedPins(s.Repo)
	if err != nil {
		serve.WriteErr(w, err)
		return
	}
	reply := runnerPinsReply{Required: keys != nil && len(keys.Keys) > 0, Runners: []pinView{}}
	if approved != nil {
		reply.ApprovedVersion = approved.Version
	}
	runners, err := s.buildRunners()
	if err != nil {
		reply.Problem = gates.OneLine(err.Error())
	}
	for _, rn := range runners {
		v := pinView{ID: rn.ID, GateCommand: rn.GateCommand, Command: rn.Command, Pin: rn.PinHash(), State: "new"}
		switch {
		case approved.Approved(rn.ID, v.Pin):
			v.State = "approved"
		case approved != nil && approved.Has(rn.ID):
			v.State = "changed"
		}
		reply.Runners = append(reply.Runners, v)
	}
	serve.WriteJSON(w, http.StatusOK, reply)
}

// preparePins prepares the approval of every build runner runners.toml
// pins now: what the signature binds is each runner's gate and command.
func (s *Server) preparePins(ctx context.Context) (*pendingGesture, error) {
	if err := s.CheckSound(ctx, brain.PinsRef); err != nil {
		return nil, err
	}
	runners, err := s.buildRunners()
	if err != nil {
		return nil, gates.Refusef(gates.InvalidLetter, "runners", "runners.toml does not load, so there is nothing to approve: %s", gates.Clip(err.Error()))
	}
	if len(runners) == 0 {
		return nil, gates.Refusef(gates.UnpinnedRunner, "runners", "runners.toml pins no build runner: there is no gate to approve")
	}
	approvals := make([]brain.ApprovedRunner, len(runners))
	binds := []string{}
	for i, rn := range runners {
		approvals[i] = rn.Approval()
		binds = append(binds, fmt.Sprintf("runner %s: its gate `%s` proves its work; it runs %s", rn.ID, gates.OneLine(rn.GateCommand), strings.Join(rn.Command, " ")))
	}
	commit, set, err := brain.PreparePins(s.Repo, approvals, s.now())
	if err != nil {
		return nil, err
	}
	binds = append(binds, fmt.Sprintf("approved runner pins v%d", set.Version))
	return &pendingGesture{
		gesture: gates.GesturePins, commit: commit, binds: binds,
		done: func(_ context.Context, h gitstore.Hash) (any, error) {
			ids := make([]string, len(set.Runners))
			for i, r := range set.Runners {
				ids[i] = r.ID
			}
			return map[string]any{"pins_version": set.Version, "approved": ids, "commit": h.String()}, nil
		},
	}, nil
}

// keeperReply is GET /api/keeper: what runnerd's keeper holds for each
// pinned agent, from its journal, with what an operator must fix.
type keeperReply struct {
	Keeper []runnerd.KeeperAgent `json:"keeper"`
}

// getKeeper is GET /api/keeper.
func (s *Server) getKeeper(w http.ResponseWriter, r *http.Request) {
	agents, err := runnerd.KeeperAgents(s.Repo.RuntimeDir(), s.now())
	if err != nil {
		serve.WriteErr(w, err)
		return
	}
	if agents == nil {
		agents = []runnerd.KeeperAgent{}
	}
	serve.WriteJSON(w, http.StatusOK, keeperReply{Keeper: agents})
}
