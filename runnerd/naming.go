package runnerd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// namingParallel is how many naming runs go at once.
const namingParallel = 4

// maxNamingBlocks bounds one naming request.
const maxNamingBlocks = 200

func (d *Daemon) pick(id, capability string) *runners.Runner {
	for _, r := range d.config().Runners {
		if r.Capability == capability && (id == "" || r.ID == id) {
			return r
		}
	}
	return nil
}

func (d *Daemon) postName(w http.ResponseWriter, r *http.Request) {
	var req wire.NameRequest
	if err := decode(r, &req); err != nil || len(req.Blocks) == 0 || len(req.Blocks) > maxNamingBlocks {
		loopback.WriteRefusal(w, rules.Refusef(rules.InvalidLetter, "", "want {runner_id?, blocks:[{block_id, packet}]} with 1 to %d blocks", maxNamingBlocks))
		return
	}
	runner := d.pick(req.RunnerID, runners.CapNaming)
	if runner == nil {
		loopback.WriteRefusal(w, rules.Refusef(rules.UnpinnedRunner, "runner_id", "no naming-runner with that id is pinned in %s", runners.ConfigFile))
		return
	}
	results := make([]wire.NameResult, len(req.Blocks))
	sem := make(chan struct{}, namingParallel)
	var wg sync.WaitGroup
	for i, b := range req.Blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = d.nameOne(r.Context(), runner, b)
		}()
	}
	wg.Wait()
	loopback.WriteJSON(w, http.StatusOK, wire.NameReply{OK: true, RunnerID: runner.ID, Results: results})
}

// nameOne runs the naming runner with the packet on stdin; its last
// non-empty stdout line must be {"name","purpose"}, and both pass the o5
// sanitizer or the block stays unnamed.
func (d *Daemon) nameOne(ctx context.Context, runner *runners.Runner, b wire.NamingBlock) wire.NameResult {
	res := wire.NameResult{BlockID: b.BlockID}
	out, err := d.runStdin(ctx, runner, b.Packet, runner.NamingTimeout())
	if err != nil {
		res.Refused = err.Error()
		return res
	}
	var answer struct {
		Name    string `json:"name"`
		Purpose string `json:"purpose"`
	}
	if err := json.Unmarshal([]byte(lastNonEmpty(out)), &answer); err != nil {
		res.Refused = `the runner's last line was not {"name","purpose"}`
		return res
	}
	if err := rules.SanitizeName(answer.Name); err != nil {
		res.Refused = err.Error()
		return res
	}
	if err := rules.SanitizePurpose(answer.Purpose); err != nil {
		res.Refused = err.Error()
		return res
	}
	res.OK, res.Name, res.Purpose = true, answer.Name, answer.Purpose
	return res
}

// postCurate runs the curation lane: the hand-runner reads the packet on
// stdin and its last non-empty stdout line is a JSON array of
// candidate_edit ops. runnerd only returns them as data: the owner
// sanitizes (runner seat) and applies them.
func (d *Daemon) postCurate(w http.ResponseWriter, r *http.Request) {
	var req wire.CurateRequest
	if err := decode(r, &req); err != nil {
		loopback.WriteRefusal(w, rules.Refusef(rules.InvalidLetter, "", "want {runner_id?, packet}"))
		return
	}
	runner := d.pick(req.RunnerID, runners.CapHand)
	if runner == nil {
		loopback.WriteRefusal(w, rules.Refusef(rules.UnpinnedRunner, "runner_id", "no hand-runner with that id is pinned in %s", runners.ConfigFile))
		return
	}
	out, err := d.runStdin(r.Context(), runner, req.Packet, runner.CurationTimeout())
	if err != nil {
		loopback.WriteJSON(w, http.StatusOK, wire.CurateReply{RunnerID: runner.ID, Detail: err.Error()})
		return
	}
	var ops []json.RawMessage
	if err := json.Unmarshal([]byte(lastNonEmpty(out)), &ops); err != nil {
		loopback.WriteJSON(w, http.StatusOK, wire.CurateReply{RunnerID: runner.ID, Detail: "the runner's last line was not a JSON array of ops"})
		return
	}
	list, err := json.Marshal(ops)
	if err != nil {
		loopback.WriteErr(w, fmt.Errorf("encode the curation ops: %w", err))
		return
	}
	loopback.WriteJSON(w, http.StatusOK, wire.CurateReply{OK: true, RunnerID: runner.ID, Ops: list})
}

// runStdin runs runner's command in the main worktree, contained (it
// reads, and writes nothing of the repository), with input on stdin in
// its own process group, and returns stdout.
func (d *Daemon) runStdin(ctx context.Context, runner *runners.Runner, input string, limit time.Duration) (string, error) {
	dir := d.Repo.MainWorkTree()
	var j *jail
	if d.Contain.On() {
		var err error
		if j, err = d.callJail(runner, dir); err != nil {
			d.Logf("runner %s: contain: %v", runner.ID, err)
			return "", fmt.Errorf("runner could not be contained (runnerd's log says why)")
		}
		defer os.RemoveAll(strings.TrimPrefix(j.env[0], "TMPDIR="))
	}
	res := d.runIn(ctx, j, dir, os.Environ(), limit, "", strings.NewReader(input), true, nil, runner.Command...)
	switch {
	case res.err != nil:
		return "", fmt.Errorf("runner could not run: %s", startProblem(res.err))
	case res.stopped:
		return "", fmt.Errorf("runner stopped")
	case res.timedOut:
		return "", fmt.Errorf("runner timed out after %s — killed", limit)
	case res.exit != 0:
		return "", fmt.Errorf("runner exited %d", res.exit)
	}
	return string(res.log), nil
}

func lastNonEmpty(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}
