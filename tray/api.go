package tray

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/review"
	"github.com/m1nd/m1nd/rules"
)

// decodeRequest parses a write's JSON body strictly into v: one object, no
// unknown fields. A bad body is refused invalid_letter naming the problem.
func decodeRequest(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return rules.Refusef(rules.InvalidLetter, "", "the request is not the JSON object this endpoint takes: %s", rules.Clip(err.Error()))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return rules.Refusef(rules.InvalidLetter, "", "the request must be one JSON object")
	}
	return nil
}

// checkBrain refuses a ?brain= selector naming another brain: this owner
// serves one brain (multi-brain aggregation is out of scope).
func (s *Server) checkBrain(r *http.Request) error {
	if b := r.URL.Query().Get("brain"); b != "" && b != s.flows.Name() {
		return rules.Refusef(rules.BrainMismatch, "brain", "this owner serves brain %q, not %q", s.flows.Name(), rules.Clip(b))
	}
	return nil
}

type mailboxReply struct {
	ServedBrain string          `json:"served_brain"`
	Letters     []mailboxLetter `json:"letters"`
	Fates       map[string]int  `json:"fates"`
	Open        int             `json:"open"`
}

type mailboxLetter struct {
	mailbox.Stored
	Fate string `json:"fate"`
}

// getMailbox answers kind=mission with every mission head (DESIGN §4),
// with where each waiting mission stands in the landing queue ("queue"),
// how many are ready ("landing_bell") and each card's title, its ask's
// first line ("titles"); otherwise it answers the mail letters and their
// fate counts.
func (s *Server) getMailbox(w http.ResponseWriter, r *http.Request) {
	if err := s.checkBrain(r); err != nil {
		loopback.WriteErr(w, err)
		return
	}
	switch kind := r.URL.Query().Get("kind"); kind {
	case "mission":
		reply, err := s.headsReply(r.Context(), r.URL.Query().Get("phase"))
		if err != nil {
			loopback.WriteErr(w, err)
			return
		}
		loopback.WriteEncoded(w, http.StatusOK, reply)
	case "":
		all, fates, err := s.flows.Mail(r.Context())
		if err != nil {
			loopback.WriteErr(w, err)
			return
		}
		reply := mailboxReply{ServedBrain: s.flows.Name(), Letters: []mailboxLetter{}}
		reply.Fates, reply.Open = mailbox.Tally(fates)
		for i := len(all) - 1; i >= 0; i-- {
			reply.Letters = append(reply.Letters, mailboxLetter{Stored: all[i], Fate: fates[all[i].ID]})
		}
		loopback.WriteJSON(w, http.StatusOK, reply)
	default:
		loopback.WriteErr(w, rules.Refusef(rules.InvalidLetter, "kind", "kind is mission, or absent for mail letters"))
	}
}

// getSystemBlocks answers the block view (ops.BlocksView), the same as
// `m1nd blocks --json`; a brain with no store yet answers no skeleton and
// no blocks (the page says "no store yet").
func (s *Server) getSystemBlocks(w http.ResponseWriter, r *http.Request) {
	if err := s.checkBrain(r); err != nil {
		loopback.WriteErr(w, err)
		return
	}
	view, err := s.flows.Blocks(r.Context(), s.now())
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	loopback.WriteJSON(w, http.StatusOK, view)
}

// getMission answers one mission: its head and its view (timeline, ask,
// gate output, work and diff), the same as `m1nd mission show --json`.
func (s *Server) getMission(w http.ResponseWriter, r *http.Request) {
	if err := s.checkBrain(r); err != nil {
		loopback.WriteErr(w, err)
		return
	}
	id := r.PathValue("id")
	if !chain.ValidMissionID(id) {
		loopback.WriteRefusal(w, rules.Refusef(rules.UnknownMission, "mission_id", "%s is not a mission id (msn_ and 12 lowercase hex digits)", rules.Echo(id)))
		return
	}
	shown, err := s.flows.ShowMission(r.Context(), id)
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	loopback.WriteJSON(w, http.StatusOK, shown)
}

// getStatus answers the status view (ops.Status), the same as `m1nd
// status --json`.
func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	if err := s.checkBrain(r); err != nil {
		loopback.WriteErr(w, err)
		return
	}
	st, err := s.flows.Status(r.Context(), s.now())
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	loopback.WriteJSON(w, http.StatusOK, st)
}

// Compose modes and whether this owner offers them.
type policyReply struct {
	Brain    string          `json:"brain"`
	ReadOnly bool            `json:"read_only"`
	Modes    map[string]mode `json:"modes"`
	// BuildRunners are the live pinned build-runners spawn can use.
	BuildRunners []string `json:"build_runners"`
}

type mode struct {
	Available bool   `json:"available"`
	Why       string `json:"why,omitempty"` // why not, when not
}

// getPolicy says which compose modes this owner allows (seed §4d):
// read-only → clipboard only; no runner daemon → clipboard and direct.
func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) {
	modes := map[string]mode{
		"clipboard": {Available: true},
		"direct":    {Available: true},
		"spawn":     {Available: false, Why: "no live pinned build-runner: pin one in runners.toml and start m1nd runnerd"},
	}
	live := []string{}
	for _, st := range s.status() {
		if st.Capability == "build-runner" && !st.Lost {
			live = append(live, st.RunnerID)
		}
	}
	if len(live) > 0 {
		modes["spawn"] = mode{Available: true}
	}
	if s.ReadOnly {
		modes["direct"] = mode{Why: "this owner is read-only: it posts nothing"}
		modes["spawn"] = mode{Why: "this owner is read-only: it posts nothing"}
	}
	loopback.WriteJSON(w, http.StatusOK, policyReply{Brain: s.flows.Name(), ReadOnly: s.ReadOnly, Modes: modes, BuildRunners: live})
}

// getPacket composes the mission packet for ?block_id= with ?ask=.
func (s *Server) getPacket(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("block_id")
	md, err := s.flows.Packet(id, r.URL.Query().Get("ask"), s.now())
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	loopback.WriteJSON(w, http.StatusOK, map[string]any{"block_id": id, "markdown": md, "packet_ref": chain.PacketRef([]byte(md))})
}

// missionPostRequest is POST /api/mission_post. It carries no origin: an
// archive is a signed gesture (/api/gesture/options), never a field.
type missionPostRequest struct {
	AgentID string          `json:"agent_id"`
	Letter  json.RawMessage `json:"letter"`
}

func (s *Server) postMission(r *http.Request, body []byte) (any, error) {
	var req missionPostRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	if !rules.ValidAgentID(req.AgentID) {
		return nil, rules.Refusef(rules.InvalidLetter, "agent_id", "agent_id is who posts: "+rules.AgentIDRule)
	}
	return s.flows.PostLetter(r.Context(), req.Letter, req.AgentID)
}

// missionNewRequest is POST /api/mission_new: what `m1nd mission new`
// takes, as JSON. The page sends block_id, agent_id, packet_markdown and
// deliver_to.
type missionNewRequest struct {
	BlockID    string `json:"block_id"`
	AgentID    string `json:"agent_id"`
	Packet     string `json:"packet_markdown"`
	DeliverTo  string `json:"deliver_to,omitempty"`
	Followup   string `json:"followup,omitempty"`
	Seat       string `json:"seat,omitempty"`
	Capability string `json:"capability,omitempty"`
	RunnerID   string `json:"runner_id,omitempty"`
	Synthetic  bool   `json:"synthetic,omitempty"`
}

// missionNewReply is the answer to a mission opened by the tray (fields
// in the order the answer has always had): the letter posted and the
// packet delivered, each a result in its own envelope (rules.Success).
type missionNewReply struct {
	Delivered any    `json:"delivered,omitempty"` // the *mailbox.SendResult; nil when not delivered
	Mission   any    `json:"mission"`             // the *chain.PostResult
	Note      string `json:"note,omitempty"`
}

// postMissionNew is the compose panel's direct mode: the seq-1 judging
// letter with the packet's ref, and the packet delivered to an agent's
// inbox. Delivery is not execution. It runs the same flow as `m1nd mission
// new` (ops.OpenMission), so both refuse a bad request alike.
func (s *Server) postMissionNew(r *http.Request, body []byte) (any, error) {
	var req missionNewRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	if !rules.ValidAgentID(req.AgentID) {
		return nil, rules.Refusef(rules.InvalidLetter, "agent_id", "agent_id is who opens the mission")
	}
	var packet []byte
	if req.Packet != "" {
		packet = []byte(req.Packet)
	}
	opened, err := s.flows.OpenMission(r.Context(), ops.MissionRequest{
		BlockID: req.BlockID, Seat: req.Seat, Capability: req.Capability, RunnerID: req.RunnerID,
		Packet: packet, Synthetic: req.Synthetic, Agent: req.AgentID,
		DeliverTo: req.DeliverTo, Followup: req.Followup, Now: s.now(),
	})
	if err != nil {
		return nil, err
	}
	reply := missionNewReply{Mission: rules.Success(opened.Mission)}
	if opened.Delivered != nil {
		reply.Delivered = rules.Success(opened.Delivered)
		reply.Note = "posted to the agent's inbox — delivery is not execution"
	}
	return reply, nil
}

// reviewRequest is a review made in the mission view (ops.Review).
type reviewRequest struct {
	Decision string           `json:"decision"`
	Body     string           `json:"body"`
	Comments []review.Comment `json:"comments"`
	// AgentID is who writes it; absent: ops.ReviewerName, for a review is
	// no gesture and the page claims no human's word.
	AgentID string `json:"agent_id"`
}

// postReview sends a review of a mission's work to its agent and, when
// it requests changes, records it on the mission (ops.Review).
func (s *Server) postReview(r *http.Request, body []byte) (any, error) {
	var req reviewRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	agent := ops.ReviewerName
	if req.AgentID != "" {
		if !rules.ValidAgentID(req.AgentID) {
			return nil, rules.Refusef(rules.InvalidLetter, "agent_id", "agent_id is who writes the review (%s), or absent for %s", rules.AgentIDRule, ops.ReviewerName)
		}
		agent = req.AgentID
	}
	return s.flows.Review(r.Context(), ops.ReviewRequest{
		MissionID: r.PathValue("id"), Decision: req.Decision, Body: req.Body, Comments: req.Comments,
		Agent: agent, Now: s.now(),
	})
}

type candidateEditRequest struct {
	ExpectedStoreVersion *int64          `json:"expected_store_version"`
	By                   string          `json:"by"`
	Ops                  json.RawMessage `json:"ops"`
}

func (s *Server) postCandidateEdit(r *http.Request, body []byte) (any, error) {
	var req candidateEditRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	if req.By != brain.SeatOwner && req.By != brain.SeatRunner {
		return nil, rules.Refusef(rules.CandidateEditRejected, "by", "candidate_edit rejected: by is owner or runner")
	}
	w, err := s.writeRequest(req.ExpectedStoreVersion, req.By, "by") // the seat, owner or runner, is who edits
	if err != nil {
		return nil, err
	}
	return s.flows.Edit(r.Context(), brain.EditRequest{WriteRequest: w, Seat: req.By, Ops: req.Ops})
}

// writeRequest is what every store write names: the store version the
// page read (required) and who writes (agentField names where the request
// says so).
func (s *Server) writeRequest(expected *int64, agent, agentField string) (brain.WriteRequest, error) {
	if expected == nil {
		return brain.WriteRequest{}, rules.Refusef(rules.StoreVersionConflict, "expected_store_version", "send the store version you read as expected_store_version")
	}
	who, err := agentOrOwner(agent, agentField)
	return brain.WriteRequest{ExpectedStoreVersion: *expected, Agent: who, Now: s.now()}, err
}

// peekString reads one top-level string field without judging the rest
// of the body: the human-origin check comes before the input is parsed.
func peekString(body []byte, field string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(m[field], &v) != nil {
		return ""
	}
	return v
}

// agentOrOwner is who makes a write: the id a request names, or owner
// when it names none. An id that is not an agent id is refused, naming
// field, never quietly replaced.
func agentOrOwner(id, field string) (string, error) {
	switch {
	case id == "":
		return "owner", nil
	case !rules.ValidAgentID(id):
		return "", rules.Refusef(rules.InvalidLetter, field, "%s is an agent id (%s), or absent for owner", field, rules.AgentIDRule)
	}
	return id, nil
}

// proveRequest is POST /api/prove: the landing of a claimed gate.
type proveRequest struct {
	MissionID string `json:"mission_id"`
	Into      string `json:"into,omitempty"`
}

// postProve asks runnerd to run an approved runner's gate on exactly the
// tree a claimed merge_wait names (ops.RequestProof): what the tray's
// land… does on a claim, before anything can land. It changes no ref;
// with no runner to prove it, it is refused and says so.
func (s *Server) postProve(r *http.Request, body []byte) (any, error) {
	var req proveRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	if !chain.ValidMissionID(req.MissionID) {
		return nil, rules.Refusef(rules.UnknownMission, "mission_id", "%s is not a mission id (msn_ and 12 lowercase hex digits)", rules.Echo(req.MissionID))
	}
	return s.flows.RequestProof(r.Context(), req.MissionID, req.Into, s.now())
}
