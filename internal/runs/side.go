package runs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// Side is the owner-runtime side record of a mission run: host-local
// detail (the worktree's absolute path, the branch the work lands in) that
// never enters a letter or a ref (seed 1f). runnerd writes it when it
// spawns; the mission view and the landing read it.
type Side struct {
	MissionID string `json:"mission_id"`
	RunnerID  string `json:"runner_id"`
	Worktree  string `json:"worktree"`
	Branch    string `json:"branch"`
	Base      string `json:"base"` // the commit the worktree started from
	// Target is the branch the worktree was cut from (checked out in the
	// main worktree at spawn), where a landing merges the work; "" when
	// HEAD was detached.
	Target  string `json:"target,omitempty"`
	Created string `json:"created_at"`
	Removed bool   `json:"removed,omitempty"`
	// AgentPGID is the running agent's process group, so a restarted
	// runnerd can stop what a killed one left behind.
	AgentPGID int `json:"agent_pgid,omitempty"`
	// Queue is what runnerd's landing queue last found of the mission
	// while it waits in merge_wait: a re-gate under way, a conflict with
	// the target, a gate that failed on the merge. Absent while nothing
	// is amiss.
	Queue *QueueState `json:"queue,omitempty"`
	// Prove asks runnerd's queue to run an approved runner's gate on
	// exactly the tree an agent's claimed merge_wait names: the human's
	// landing of a claim writes it (DESIGN §10). Absent otherwise.
	Prove *ProveRequest `json:"prove,omitempty"`
}

// ProveRequest is a human's landing of a claimed gate, waiting for an
// approved runner to prove it: the claim's merge_wait letter, the commit
// and tree it names, the runner whose approved gate runs on them, and
// the outcome once runnerd ran it.
type ProveRequest struct {
	Letter string `json:"letter"` // the claim's merge_wait letter id
	Runner string `json:"runner"`
	Commit string `json:"commit"`
	Tree   string `json:"tree"`
	At     string `json:"at"`
	// Running is set while the gate runs; Failed, with Exit and Why, when
	// it did not pass (runnerd then ends the mission failed).
	Running bool   `json:"running,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
	Exit    *int   `json:"exit,omitempty"`
	Why     string `json:"why,omitempty"`
}

// The states runnerd's queue records of a waiting mission.
const (
	QueueRegating   = "regating"    // the branch merged with the target is being gated
	QueueConflict   = "conflict"    // the branch does not merge cleanly into the target
	QueueGateFailed = "gate_failed" // the gate failed on the merge
	QueueNoRunner   = "no_runner"   // no approved build runner of the mission's to re-gate it
)

// QueueState is one finding of the landing queue about a mission, for the
// heads it was made at: it holds only while the branch is at Branch and
// the target at TargetHead.
type QueueState struct {
	State      string   `json:"state"`
	Target     string   `json:"target"`
	TargetHead string   `json:"target_head"`
	Branch     string   `json:"branch_head"`      // the work branch's head when found
	Commit     string   `json:"commit,omitempty"` // the commit being gated (a re-gate)
	Paths      []string `json:"paths,omitempty"`  // the conflicting paths
	Exit       *int     `json:"exit,omitempty"`   // the failed gate's exit status
	Why        string   `json:"why,omitempty"`    // one line, for no_runner
	At         string   `json:"at"`
}

// SideDir is where side records and run logs live in the runtime dir.
func SideDir(runtimeDir string) string { return filepath.Join(runtimeDir, "side") }

// The logs a run keeps beside its side record (SideLog).
const (
	LogSetup  = "setup"  // the runner's setup of the worktree
	LogAgent  = "agent"  // the agent's own output
	LogGate   = "gate"   // the gate's output on the work
	LogRegate = "regate" // the gate's output on the merge with the target
)

// SideLog is a run's log of what (LogSetup, LogAgent, LogGate, LogRegate),
// kept 0600 beside its side record.
func SideLog(runtimeDir, missionID, what string) string {
	return filepath.Join(SideDir(runtimeDir), missionID+"."+what+".log")
}

// SidePacket is the mission packet a run was given, kept beside its side
// record.
func SidePacket(runtimeDir, missionID string) string {
	return filepath.Join(SideDir(runtimeDir), missionID+".packet.md")
}

func sidePath(runtimeDir, missionID string) string {
	return filepath.Join(SideDir(runtimeDir), missionID+".json")
}

// WriteSide records a side record (0600: it names local paths).
func WriteSide(runtimeDir string, s *Side) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(sidePath(runtimeDir, s.MissionID), append(data, '\n'), 0o600)
}

// ReadSide reads a mission's side record; ok is false when this machine
// never ran the mission.
func ReadSide(runtimeDir, missionID string) (s *Side, ok bool, err error) {
	if !chain.ValidMissionID(missionID) {
		return nil, false, nil
	}
	data, err := gitstore.ReadRuntime(sidePath(runtimeDir, missionID), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s = &Side{}
	if err := json.Unmarshal(data, s); err != nil || s.MissionID != missionID {
		return nil, false, nil // not ours to trust: as if never run here
	}
	return s, true, nil
}

// ReadSides lists every side record.
func ReadSides(runtimeDir string) ([]*Side, error) {
	paths, err := filepath.Glob(filepath.Join(SideDir(runtimeDir), "msn_*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Side
	for _, p := range paths {
		data, err := gitstore.ReadRuntime(p, 1<<20)
		if err != nil {
			continue
		}
		s := &Side{}
		if json.Unmarshal(data, s) == nil && chain.ValidMissionID(s.MissionID) {
			out = append(out, s)
		}
	}
	return out, nil
}
