// Package wire is the runner daemon's wire: what runnerd and the owner (tray) send each
// other over loopback, in one place so neither side spells it as a map.
// Replies that used to be written as maps keep their field order
// (alphabetical), so every reply keeps its bytes.
package wire

import "encoding/json"

// Runner daemon endpoints (runnerd) and the owner's endpoints runnerd
// calls.
const (
	PathRun          = "/run"
	PathName         = "/name"
	PathCurate       = "/curate"
	PathDaemonStatus = "/status"

	PathAnnounce      = "/api/runnerd/announce"
	PathRunnersStatus = "/api/runnerd/status"
	PathMissionSpawn  = "/api/mission_spawn"
)

// Announce is what runnerd tells the owner every interval: the runners it
// serves (the owner registers only the pinned ones), the port it answers
// on, and a challenge the owner echoes to prove it holds the secret too.
type Announce struct {
	RunnerIDs     []string `json:"runner_ids"`
	Port          string   `json:"port"`
	BootChallenge string   `json:"boot_challenge"`
}

// AnnounceReply is the owner's answer to an announce: the runners it
// registered, and those it refused with why (left out when none).
type AnnounceReply struct {
	Echo       string          `json:"echo"`
	OK         bool            `json:"ok"`
	Refused    []RefusedRunner `json:"refused,omitempty"`
	Registered []string        `json:"registered"`
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r AnnounceReply) EnvelopeOK() bool { return r.OK }

// RefusedRunner is a runner id of an announce the owner did not register,
// and why (e.g. "not pinned in runners.toml").
type RefusedRunner struct {
	RunnerID string `json:"runner_id"`
	Why      string `json:"why"`
}

// RunRequest asks runnerd to run a mission: a new one on BlockID, or the
// judging mission MissionID.
type RunRequest struct {
	RunnerID       string `json:"runner_id"`
	PacketMarkdown string `json:"packet_markdown"`
	BlockID        string `json:"block_id"`
	BrainRef       string `json:"brain_ref"`
	MissionID      string `json:"mission_id,omitempty"`
}

// RunReply is runnerd's answer to a run it accepted: the run goes on in
// the background, and the mission's letters say how it ends.
type RunReply struct {
	Accepted  bool   `json:"accepted"`
	MissionID string `json:"mission_id"`
	RunnerID  string `json:"runner_id"`
}

// NameRequest asks the naming lane to name blocks.
type NameRequest struct {
	RunnerID string        `json:"runner_id,omitempty"`
	Blocks   []NamingBlock `json:"blocks"`
}

// NamingBlock is one block to name and the packet that describes it
// (member paths and symbols, never file bodies).
type NamingBlock struct {
	BlockID string `json:"block_id"`
	Packet  string `json:"packet"`
}

// NameResult is one naming-runner answer, already through the o5
// sanitizer. Every field is always written: the owner's /api/naming
// answers these as they are.
type NameResult struct {
	BlockID string `json:"block_id"`
	OK      bool   `json:"ok"`
	Name    string `json:"name"`
	Purpose string `json:"purpose"`
	Refused string `json:"refused"` // "<field>: <class>", or why the runner gave nothing
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r NameResult) EnvelopeOK() bool { return r.OK }

// NameReply is runnerd's answer to a naming request: one result per
// block, in the request's order.
type NameReply struct {
	OK       bool         `json:"ok"`
	Results  []NameResult `json:"results"`
	RunnerID string       `json:"runner_id"`
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r NameReply) EnvelopeOK() bool { return r.OK }

// CurateRequest asks a hand-runner to propose candidate_edit ops.
type CurateRequest struct {
	RunnerID string `json:"runner_id,omitempty"`
	Packet   string `json:"packet"`
}

// CurateReply is the curation lane's answer: the ops the runner proposed,
// as data the owner sanitizes and applies, or why there are none.
type CurateReply struct {
	Detail   string          `json:"detail,omitempty"`
	OK       bool            `json:"ok"`
	Ops      json.RawMessage `json:"ops,omitempty"` // a JSON array of candidate_edit ops
	RunnerID string          `json:"runner_id"`
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r CurateReply) EnvelopeOK() bool { return r.OK }

// DaemonStatus is runnerd's own GET /status: the brain it serves and the
// runners in its runners.toml.
type DaemonStatus struct {
	Brain     string   `json:"brain"`
	OK        bool     `json:"ok"`
	RunnerIDs []string `json:"runner_ids"`
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r DaemonStatus) EnvelopeOK() bool { return r.OK }

// RunnerStatus is one pinned runner as the owner sees it: when it last
// announced, and lost after a silence (or when it never did).
type RunnerStatus struct {
	RunnerID   string `json:"runner_id"`
	Capability string `json:"capability"`
	LastSeen   string `json:"last_seen,omitempty"`
	Lost       bool   `json:"lost"`
}

// RunnersStatus is the owner's GET /api/runnerd/status.
type RunnersStatus struct {
	OK      bool           `json:"ok"`
	Runners []RunnerStatus `json:"runners"`
}

// EnvelopeOK is the answer's own ok (rules.Enveloped).
func (r RunnersStatus) EnvelopeOK() bool { return r.OK }

// SpawnRequest asks the owner (POST /api/mission_spawn) to hand a mission
// to a live pinned build-runner; the owner passes it on to runnerd as a
// RunRequest and answers runnerd's RunReply.
type SpawnRequest struct {
	RunnerID       string `json:"runner_id"`
	BlockID        string `json:"block_id"`
	PacketMarkdown string `json:"packet_markdown"`
	MissionID      string `json:"mission_id,omitempty"`
}
