package tray

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/internal/serve"
)

// Pins is what the owner knows of runners from runners.toml (the
// operator's pins) and runnerd.secret: an announce proves liveness, never
// grants a capability.
type Pins struct {
	Secret       string            // the shared local secret; "" refuses every runner call
	Capabilities map[string]string // pinned runner id → capability
}

// lostAfter is how long a runner may be silent before it counts as lost.
const lostAfter = 90 * time.Second

// runnerSeen is a live runner's last announce.
type runnerSeen struct {
	port     int
	lastSeen time.Time
}

type registry struct {
	mu   sync.Mutex
	seen map[string]runnerSeen
}

func (s *Server) secretOK(r *http.Request) bool {
	return serve.SecretMatches(s.Pins.Secret, r.Header.Get(serve.SecretHeader))
}

// postAnnounce registers the pinned runner ids of an announce and echoes
// its challenge; unpinned ids are refused and logged.
func (s *Server) postAnnounce(w http.ResponseWriter, r *http.Request) {
	if !s.secretOK(r) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var req struct {
		RunnerIDs     []string `json:"runner_ids"`
		Port          string   `json:"port"`
		BootChallenge string   `json:"boot_challenge"`
	}
	body, err := readBody(w, r)
	if err == nil {
		err = decodeRequest(body, &req)
	}
	port, perr := strconv.Atoi(req.Port)
	if err != nil || perr != nil || port <= 0 || port > 65535 {
		serve.WriteErr(w, serve.Fail(http.StatusBadRequest, "bad_request", "want {runner_ids, port, boot_challenge}"))
		return
	}
	registered := []string{}
	s.runners.mu.Lock()
	for _, id := range req.RunnerIDs {
		if _, pinned := s.Pins.Capabilities[id]; !pinned {
			log.Printf("m1nd owner: refused the announce of runner %q: not pinned in runners.toml", gates.Clip(id))
			continue
		}
		s.runners.seen[id] = runnerSeen{port: port, lastSeen: s.now()}
		registered = append(registered, id)
	}
	s.runners.mu.Unlock()
	serve.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "echo": req.BootChallenge, "registered": registered})
}

type runnerStatus struct {
	RunnerID   string `json:"runner_id"`
	Capability string `json:"capability"`
	LastSeen   string `json:"last_seen,omitempty"`
	Lost       bool   `json:"lost"`
}

// status lists every pinned runner: when it last announced, and lost after
// 90 s of silence (or when it never did).
func (s *Server) status() []runnerStatus {
	s.runners.mu.Lock()
	defer s.runners.mu.Unlock()
	out := []runnerStatus{}
	for id, capability := range s.Pins.Capabilities {
		st := runnerStatus{RunnerID: id, Capability: capability, Lost: true}
		if seen, ok := s.runners.seen[id]; ok {
			st.LastSeen = chain.Timestamp(seen.lastSeen)
			st.Lost = s.now().Sub(seen.lastSeen) > lostAfter
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunnerID < out[j].RunnerID })
	return out
}

func (s *Server) getRunnerStatus(w http.ResponseWriter, r *http.Request) {
	serve.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "runners": s.status()})
}

// liveRunner returns the port of a live pinned runner of capability (the
// given id, or the first live one), or why there is none: a lost runner
// does not hide a live one of the same capability.
func (s *Server) liveRunner(id, capability string) (string, int, error) {
	lost := ""
	for _, st := range s.status() {
		if (id != "" && st.RunnerID != id) || st.Capability != capability {
			continue
		}
		if st.Lost {
			if lost == "" {
				lost = st.RunnerID
			}
			continue
		}
		s.runners.mu.Lock()
		port := s.runners.seen[st.RunnerID].port
		s.runners.mu.Unlock()
		return st.RunnerID, port, nil
	}
	switch {
	case lost != "" && id == "":
		return "", 0, gates.Refusef(gates.UnpinnedRunner, "runner_id", "no pinned %s has announced in 90 s: start m1nd runnerd", capability)
	case lost != "":
		return "", 0, gates.Refusef(gates.UnpinnedRunner, "runner_id", "runner %s is pinned but has not announced in 90 s: start m1nd runnerd", lost)
	case id == "":
		return "", 0, gates.Refusef(gates.UnpinnedRunner, "runner_id", "no %s is pinned in runners.toml", capability)
	}
	return "", 0, gates.Refusef(gates.UnpinnedRunner, "runner_id", "runner %s is not pinned as a %s in runners.toml", gates.Echo(id), capability)
}

// callRunner posts JSON to the runner daemon on port with the secret and
// returns its 200 answer. A refusal runnerd answered comes back as that
// *gates.Refusal, for the owner to answer as its own; no answer at all, or
// one that is neither, is a 502.
func (s *Server) callRunner(port int, path string, v any, timeout time.Duration) ([]byte, error) {
	body, _ := json.Marshal(v)
	req, err := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(serve.SecretHeader, s.Pins.Secret)
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, serve.Fail(http.StatusBadGateway, "runner_unreachable", "the runner daemon did not answer: "+err.Error())
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case err != nil:
		return nil, serve.Fail(http.StatusBadGateway, "runner_unreachable", "the runner daemon's answer broke off: "+err.Error())
	case resp.StatusCode == http.StatusOK:
		return out, nil
	}
	if ref, ok := serve.ReadRefusal(out); ok {
		return nil, ref
	}
	return nil, serve.Fail(http.StatusBadGateway, "runner_failed", fmt.Sprintf("the runner daemon answered %d: %s", resp.StatusCode, gates.Clip(string(bytes.TrimSpace(out)))))
}

// postSpawn hands a mission to a live pinned build-runner. The owner never
// spawns: it proxies to runnerd, which does.
func (s *Server) postSpawn(r *http.Request, body []byte) (any, error) {
	var req struct {
		RunnerID       string `json:"runner_id"`
		BlockID        string `json:"block_id"`
		PacketMarkdown string `json:"packet_markdown"`
		MissionID      string `json:"mission_id,omitempty"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	id, port, err := s.liveRunner(req.RunnerID, "build-runner")
	if err != nil {
		return nil, err
	}
	out, err := s.callRunner(port, "/run", map[string]any{"runner_id": id, "packet_markdown": req.PacketMarkdown,
		"block_id": req.BlockID, "brain_ref": s.Missions.Brain, "mission_id": req.MissionID}, 15*time.Second)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// lane starts a runner lane: the current store (refused no_store when
// there is none) and a live pinned runner of capability.
func (s *Server) lane(runnerID, capability string) (*brain.Snapshot, string, int, error) {
	snap, ok, err := s.Store.Snapshot()
	if err != nil {
		return nil, "", 0, err
	}
	if !ok {
		return nil, "", 0, gates.Refuse(gates.NoStore, "")
	}
	id, port, err := s.liveRunner(runnerID, capability)
	return snap, id, port, err
}

// postNaming asks a live naming-runner to name blocks (all that still need
// the owner's naming, or block_ids) and applies the names that passed the
// o5 sanitizer as one runner-seat candidate_edit.
func (s *Server) postNaming(r *http.Request, body []byte) (any, error) {
	var req struct {
		RunnerID string   `json:"runner_id,omitempty"`
		BlockIDs []string `json:"block_ids,omitempty"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	snap, id, port, err := s.lane(req.RunnerID, "naming-runner")
	if err != nil {
		return nil, err
	}
	type block struct {
		BlockID string `json:"block_id"`
		Packet  string `json:"packet"`
	}
	var blocks []block
	want := map[string]bool{}
	for _, b := range req.BlockIDs {
		if snap.Block(b) == nil {
			return nil, gates.Refusef(gates.UnknownBlock, "block_ids", "this store has no block %s", gates.Echo(b))
		}
		want[b] = true
	}
	var named []*brain.Block
	for _, b := range snap.Blocks {
		if (len(want) > 0 && want[b.BlockID]) || (len(want) == 0 && b.CandidateMeta.NeedsOwnerNaming) {
			named = append(named, b)
		}
	}
	if len(named) == 0 {
		return map[string]any{"ok": true, "applied": []string{}, "results": []any{}}, nil
	}
	files, err := s.Store.Files(named...)
	if err != nil {
		return nil, err
	}
	for _, b := range named {
		blocks = append(blocks, block{BlockID: b.BlockID, Packet: brain.NamingPacket(b, files[b.BlockID])})
	}
	out, err := s.callRunner(port, "/name", map[string]any{"runner_id": id, "blocks": blocks}, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	var reply struct {
		Results []struct {
			BlockID string `json:"block_id"`
			OK      bool   `json:"ok"`
			Name    string `json:"name"`
			Purpose string `json:"purpose"`
			Refused string `json:"refused"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &reply); err != nil {
		return nil, serve.Fail(http.StatusBadGateway, "runner_failed", "the naming lane's answer is not its JSON: "+gates.Clip(err.Error()))
	}
	var ops []map[string]string
	applied := []string{}
	for _, res := range reply.Results {
		if res.OK {
			ops = append(ops, map[string]string{"op": "rename", "block_id": res.BlockID, "name": res.Name, "purpose": res.Purpose})
			applied = append(applied, res.BlockID)
		}
	}
	reply2 := map[string]any{"ok": true, "runner_id": id, "results": reply.Results, "applied": applied}
	if len(ops) == 0 {
		return reply2, nil
	}
	opsJSON, _ := json.Marshal(ops)
	edit, err := s.Store.Edit(r.Context(), brain.EditRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: snap.StoreVersion, Agent: chain.RunnerAgent(id), Now: s.now()},
		Seat:         brain.SeatRunner, Ops: opsJSON,
	})
	if err != nil {
		return nil, err
	}
	reply2["store_version"] = edit.StoreVersion
	return reply2, nil
}

// postCurate asks a live hand-runner to propose candidate_edit ops for the
// skeleton and applies them under the runner seat: the o5 sanitizer and the
// batch's atomicity hold as for any runner edit.
func (s *Server) postCurate(r *http.Request, body []byte) (any, error) {
	var req struct {
		RunnerID string `json:"runner_id,omitempty"`
		Ask      string `json:"ask,omitempty"`
	}
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	snap, id, port, err := s.lane(req.RunnerID, "hand-runner")
	if err != nil {
		return nil, err
	}
	out, err := s.callRunner(port, "/curate", map[string]any{"runner_id": id, "packet": brain.CurationPacket(snap, req.Ask)}, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	var reply struct {
		OK     bool            `json:"ok"`
		Ops    json.RawMessage `json:"ops"`
		Detail string          `json:"detail"`
	}
	if err := json.Unmarshal(out, &reply); err != nil || !reply.OK {
		return nil, serve.Fail(http.StatusBadGateway, "runner_failed", "the curation lane proposed nothing usable: "+gates.Clip(reply.Detail))
	}
	return s.Store.Edit(r.Context(), brain.EditRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: snap.StoreVersion, Agent: chain.RunnerAgent(id), Now: s.now()},
		Seat:         brain.SeatRunner, Ops: reply.Ops,
	})
}
