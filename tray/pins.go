package tray

import (
	"context"
	"fmt"
	"net/http"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// The gate that proves work is the human's: once the brain has a passkey,
// runnerd runs a build runner only as a human approved its pin
// (brain.PinSet on refs/m1nd/pins). The tray lists the build runners of
// runners.toml with their state and approves them with the gesture pins.

type runnerPinsReply struct {
	// Required says whether approval is needed: runnerd runs only approved
	// build runners, whose gates it signs with the approved key.
	Required        bool                `json:"required"`
	ApprovedVersion int64               `json:"approved_version"`
	Runners         []runners.PinStatus `json:"runners"`
	Problem         string              `json:"problem,omitempty"` // runners.toml does not load
	// Containment says how the running runnerd contains the agents and
	// gates it spawns ("" while none runs); Contained whether it does.
	Containment string `json:"containment,omitempty"`
	Contained   bool   `json:"contained"`
}

// runnersFile reads runners.toml now (an empty configuration with none).
func (s *Server) runnersFile() (*runners.Config, error) {
	if s.Pins.File == "" {
		return &runners.Config{}, nil
	}
	return runners.LoadConfig(s.Pins.File)
}

// getRunnerPins is GET /api/runner_pins.
func (s *Server) getRunnerPins(w http.ResponseWriter, r *http.Request) {
	approved, err := s.flows.ApprovedPins()
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	reply := runnerPinsReply{Required: true, Runners: []runners.PinStatus{}}
	if approved != nil {
		reply.ApprovedVersion = approved.Version
	}
	cfg, err := s.runnersFile()
	if err != nil {
		reply.Problem = rules.OneLine(err.Error())
		cfg = &runners.Config{}
	}
	key, err := s.flows.RunnerKey()
	if err != nil && reply.Problem == "" {
		reply.Problem = "runnerd's signing key: " + rules.OneLine(err.Error())
	}
	reply.Runners = runners.PinStatuses(cfg, approved, key)
	if rec, live := runs.ReadRunnerd(s.flows.RuntimeDir()); live {
		reply.Containment, reply.Contained = rec.Containment, rec.Contained
	}
	loopback.WriteJSON(w, http.StatusOK, reply)
}

// preparePins prepares the approval of every build runner runners.toml
// pins now: what the signature binds is each runner's gate and command,
// and the key of the runnerd that signs what its gate tested.
func (s *Server) preparePins(ctx context.Context) (*pendingGesture, error) {
	if err := s.flows.CheckSound(ctx, brain.PinsRef); err != nil {
		return nil, err
	}
	cfg, err := s.runnersFile()
	if err != nil {
		return nil, rules.Refusef(rules.InvalidLetter, "runners", "runners.toml does not load, so there is nothing to approve: %s", rules.Clip(err.Error()))
	}
	key, err := s.flows.RunnerKey()
	if err != nil {
		return nil, fmt.Errorf("runnerd's signing key: %w", err)
	}
	approvals, binds := runners.Approvals(cfg, key)
	if len(approvals) == 0 {
		return nil, rules.Refusef(rules.UnpinnedRunner, "runners", "runners.toml pins no build runner: there is no gate to approve")
	}
	commit, set, err := s.flows.PreparePins(ctx, approvals, s.now())
	if err != nil {
		return nil, err
	}
	binds = append(binds, fmt.Sprintf("approved runner pins v%d", set.Version))
	return &pendingGesture{
		gesture: rules.GesturePins, commit: commit, binds: binds,
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
	Keeper []runners.KeeperAgent `json:"keeper"`
}

// getKeeper is GET /api/keeper.
func (s *Server) getKeeper(w http.ResponseWriter, r *http.Request) {
	agents, err := runners.KeeperAgents(s.flows.RuntimeDir(), s.now())
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	if agents == nil {
		agents = []runners.KeeperAgent{}
	}
	loopback.WriteJSON(w, http.StatusOK, keeperReply{Keeper: agents})
}
