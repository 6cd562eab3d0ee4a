package tray

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/rules"
)

// pinState is the owner's current pins and the runners.toml they came
// from.
type pinState struct {
	mu     sync.Mutex
	stamp  string          // File's size and mtime when last read; "" before
	warned map[string]bool // unpinned ids whose refusal was logged since the last reload
}

// fileStamp is what says a file changed: its size and modification time,
// or that it is missing.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}

// pinned is the current pinned runner id → capability, after reading
// runners.toml again if it changed. The map is never written once
// returned.
func (s *Server) pinned() map[string]string {
	s.pins.mu.Lock()
	defer s.pins.mu.Unlock()
	if s.Pins.File == "" || s.Pins.Load == nil {
		return s.Pins.Capabilities
	}
	stamp := fileStamp(s.Pins.File)
	if stamp == s.pins.stamp {
		return s.Pins.Capabilities
	}
	first := s.pins.stamp == ""
	s.pins.stamp = stamp
	caps, err := s.Pins.Load(s.Pins.File)
	if err != nil {
		if first {
			return s.Pins.Capabilities // what loaded them said so already
		}
		log.Printf("m1nd owner: %v; the runners pinned before stay pinned until it loads", err)
		return s.Pins.Capabilities
	}
	if maps.Equal(caps, s.Pins.Capabilities) {
		return s.Pins.Capabilities
	}
	if !first || s.Pins.Capabilities != nil {
		ids := slices.Sorted(maps.Keys(caps))
		log.Printf("m1nd owner: %s changed; pinned now: %s", filepath.Base(s.Pins.File), strings.Join(ids, ", "))
	}
	s.Pins.Capabilities = caps
	s.pins.warned = nil
	return caps
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
	return loopback.SecretMatches(s.Pins.Secret, r.Header.Get(loopback.SecretHeader))
}

// postAnnounce registers the pinned runner ids of an announce and echoes
// its challenge; unpinned ids are refused and logged.
func (s *Server) postAnnounce(w http.ResponseWriter, r *http.Request) {
	if !s.secretOK(r) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var req wire.Announce
	body, err := readBody(w, r)
	if err == nil {
		err = decodeRequest(body, &req)
	}
	port, perr := strconv.Atoi(req.Port)
	if err != nil || perr != nil || port <= 0 || port > 65535 {
		loopback.WriteErr(w, loopback.Fail(http.StatusBadRequest, "bad_request", "want {runner_ids, port, boot_challenge}"))
		return
	}
	pins := s.pinned()
	registered := []string{}
	var refused []wire.RefusedRunner
	s.runners.mu.Lock()
	for _, id := range req.RunnerIDs {
		if _, pinned := pins[id]; !pinned {
			refused = append(refused, wire.RefusedRunner{RunnerID: id, Why: "not pinned in runners.toml"})
			continue
		}
		s.runners.seen[id] = runnerSeen{port: port, lastSeen: s.now()}
		registered = append(registered, id)
	}
	s.runners.mu.Unlock()
	s.pins.mu.Lock()
	for _, r := range refused {
		if !s.pins.warned[r.RunnerID] { // once per runner until the pins change
			log.Printf("m1nd owner: refused the announce of runner %q: %s", rules.Clip(r.RunnerID), r.Why)
			if s.pins.warned == nil {
				s.pins.warned = map[string]bool{}
			}
			s.pins.warned[r.RunnerID] = true
		}
	}
	s.pins.mu.Unlock()
	loopback.WriteJSON(w, http.StatusOK, wire.AnnounceReply{OK: true, Echo: req.BootChallenge, Refused: refused, Registered: registered})
}

// status lists every pinned runner: when it last announced, and lost after
// 90 s of silence (or when it never did).
func (s *Server) status() []wire.RunnerStatus {
	pins := s.pinned()
	s.runners.mu.Lock()
	defer s.runners.mu.Unlock()
	out := []wire.RunnerStatus{}
	for id, capability := range pins {
		st := wire.RunnerStatus{RunnerID: id, Capability: capability, Lost: true}
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
	loopback.WriteJSON(w, http.StatusOK, wire.RunnersStatus{OK: true, Runners: s.status()})
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
		return "", 0, rules.Refusef(rules.UnpinnedRunner, "runner_id", "no pinned %s has announced in 90 s: start m1nd runnerd", capability)
	case lost != "":
		return "", 0, rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner %s is pinned but has not announced in 90 s: start m1nd runnerd", lost)
	case id == "":
		return "", 0, rules.Refusef(rules.UnpinnedRunner, "runner_id", "no %s is pinned in runners.toml", capability)
	}
	return "", 0, rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner %s is not pinned as a %s in runners.toml", rules.Echo(id), capability)
}

// callRunner posts in as JSON to the runner daemon on port with the
// secret and decodes its 200 answer into out (what the lane calls the
// answer that is not its JSON). A refusal runnerd answered comes back as
// that *rules.Refusal, for the owner to answer as its own; no answer at
// all, or one that is neither, is a 502.
func (s *Server) callRunner(ctx context.Context, port int, path string, in, out any, lane string, timeout time.Duration) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode the request to runnerd %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("call runnerd %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(loopback.SecretHeader, s.Pins.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return loopback.Fail(http.StatusBadGateway, "runner_unreachable", "the runner daemon did not answer: "+err.Error())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case err != nil:
		return loopback.Fail(http.StatusBadGateway, "runner_unreachable", "the runner daemon's answer broke off: "+err.Error())
	case resp.StatusCode == http.StatusOK:
		if err := json.Unmarshal(data, out); err != nil {
			return loopback.Fail(http.StatusBadGateway, "runner_failed", lane+" answer is not its JSON: "+rules.Clip(err.Error()))
		}
		return nil
	}
	if ref, ok := loopback.ReadRefusal(data); ok {
		return ref
	}
	return loopback.Fail(http.StatusBadGateway, "runner_failed", fmt.Sprintf("the runner daemon answered %d: %s", resp.StatusCode, rules.Clip(string(bytes.TrimSpace(data)))))
}

// postSpawn hands a mission to a live pinned build-runner. The owner never
// spawns: it proxies to runnerd, which does.
func (s *Server) postSpawn(r *http.Request, body []byte) (any, error) {
	var req wire.SpawnRequest
	if err := decodeRequest(body, &req); err != nil {
		return nil, err
	}
	id, port, err := s.liveRunner(req.RunnerID, "build-runner")
	if err != nil {
		return nil, err
	}
	var reply wire.RunReply
	run := wire.RunRequest{RunnerID: id, PacketMarkdown: req.PacketMarkdown, BlockID: req.BlockID, BrainRef: s.flows.Name(), MissionID: req.MissionID}
	if err := s.callRunner(r.Context(), port, wire.PathRun, run, &reply, "the build lane's", 15*time.Second); err != nil {
		return nil, err
	}
	return reply, nil
}

// lane starts a runner lane: the current store (refused no_store when
// there is none) and a live pinned runner of capability.
func (s *Server) lane(runnerID, capability string) (*brain.Snapshot, string, int, error) {
	snap, ok, err := s.flows.Snapshot()
	if err != nil {
		return nil, "", 0, err
	}
	if !ok {
		return nil, "", 0, rules.Refuse(rules.NoStore, "")
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
	want := map[string]bool{}
	for _, b := range req.BlockIDs {
		if snap.Block(b) == nil {
			return nil, rules.Refusef(rules.UnknownBlock, "block_ids", "this store has no block %s", rules.Echo(b))
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
		return namingReply{OK: true, Applied: []string{}, Results: []wire.NameResult{}}, nil
	}
	files, err := s.flows.Files(named...)
	if err != nil {
		return nil, err
	}
	ask := wire.NameRequest{RunnerID: id}
	for _, b := range named {
		ask.Blocks = append(ask.Blocks, wire.NamingBlock{BlockID: b.BlockID, Packet: brain.NamingPacket(b, files[b.BlockID])})
	}
	var answer wire.NameReply
	if err := s.callRunner(r.Context(), port, wire.PathName, ask, &answer, "the naming lane's", 10*time.Minute); err != nil {
		return nil, err
	}
	var ops []map[string]string
	reply := namingReply{OK: true, RunnerID: id, Results: answer.Results, Applied: []string{}}
	for _, res := range answer.Results {
		if res.OK {
			ops = append(ops, map[string]string{"op": "rename", "block_id": res.BlockID, "name": res.Name, "purpose": res.Purpose})
			reply.Applied = append(reply.Applied, res.BlockID)
		}
	}
	if len(ops) == 0 {
		return reply, nil
	}
	opsJSON, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode the naming edit: %w", err)
	}
	edit, err := s.flows.Edit(r.Context(), brain.EditRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: snap.StoreVersion, Agent: chain.RunnerAgent(id), Now: s.now()},
		Seat:         brain.SeatRunner, Ops: opsJSON,
	})
	if err != nil {
		return nil, err
	}
	reply.StoreVersion = edit.StoreVersion
	return reply, nil
}

// namingReply is the owner's answer to POST /api/naming: what the runner
// said of each block, the blocks whose names were applied and the store
// version the edit made (fields in the order the answer has always had).
type namingReply struct {
	Applied      []string          `json:"applied"`
	OK           bool              `json:"ok"`
	Results      []wire.NameResult `json:"results"`
	RunnerID     string            `json:"runner_id,omitempty"`
	StoreVersion int64             `json:"store_version,omitempty"`
}

// EnvelopeOK: the answer says its own ok, in its own place.
func (r namingReply) EnvelopeOK() bool { return r.OK }

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
	var reply wire.CurateReply
	if err := s.callRunner(r.Context(), port, wire.PathCurate, wire.CurateRequest{RunnerID: id, Packet: brain.CurationPacket(snap, req.Ask)}, &reply, "the curation lane's", 10*time.Minute); err != nil {
		return nil, err
	}
	if !reply.OK {
		return nil, loopback.Fail(http.StatusBadGateway, "runner_failed", "the curation lane proposed nothing usable: "+rules.Clip(reply.Detail))
	}
	return s.flows.Edit(r.Context(), brain.EditRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: snap.StoreVersion, Agent: chain.RunnerAgent(id), Now: s.now()},
		Seat:         brain.SeatRunner, Ops: reply.Ops,
	})
}
