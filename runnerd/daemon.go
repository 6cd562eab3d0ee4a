// Package runnerd is the runner daemon: pinned runners, a sibling worktree
// per mission, the agent and its gate. It is the only process that spawns
// agents; the owner and it find and trust each other through the owner's
// record and the shared secret (internal/loopback).
package runnerd

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/loopback"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/internal/wire"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
)

// DefaultAddr is where runnerd listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7421"

// AnnounceInterval is how often runnerd tells the owner it is alive
// while the owner takes its announces; without an owner it tries sooner
// (see announceLoop).
const AnnounceInterval = 30 * time.Second

// Daemon is the runner daemon of one brain: the only process that spawns
// agents. It never imports receipts and never posts landed.
type Daemon struct {
	Repo   *gitstore.Repo
	Brain  string
	Config *runners.Config
	// ConfigFile, when set, is the file Config came from: runnerd reads it
	// again when it changes, so a runner pinned while runnerd runs is
	// served (and announced) within a second, no restart.
	ConfigFile string
	Secret     string
	// Key signs what the runners' gates tested (rules.GateStatement); its
	// public half is part of the pins a human approves. nil: the brain's
	// key (secret.LoadRunnerKey), made when missing.
	Key ed25519.PrivateKey
	// Contain is how the commands runnerd spawns are contained (nil: they
	// are not; NewContainment probes the kernel).
	Contain  *Containment
	OwnerURL string        // "" finds the owner in serve.json
	Announce time.Duration // AnnounceInterval when 0
	Logf     func(format string, args ...any)
	Now      func() time.Time
	// Sessions is the session registry the keeper reads (nil: no session
	// is ever live, and none is resumed).
	Sessions SessionView
	// KeeperInterval is how often the keeper looks for waiting work
	// (KeeperInterval when 0).
	KeeperInterval time.Duration
	// QueueInterval is how often the landing queue looks at the missions
	// that wait (QueueInterval when 0; negative: no queue).
	QueueInterval time.Duration

	flows   *ops.Flows // what the brain is (ops.New), opened once: runnerd asks it, as every front end does
	port    string
	running sync.WaitGroup
	locks   sync.Map // runner id → *sync.Mutex: one mission at a time per runner
	rounds  sync.Map // mission id → true while a round a review started runs

	trustMu      sync.Mutex
	ownerRefused bool // an owner answered a wrong echo: no more announces to it

	cfg        atomic.Pointer[runners.Config] // the runners now, when ConfigFile was read again
	cfgStamp   string                         // ConfigFile's size and mtime when last read
	pinsStamp  string                         // the runtime dir's runners.toml (the owner's pins), likewise
	ownerState string                         // what the last announce found, as the log last said it
	record     *runs.RunnerdRecord            // what runnerd.json says of this runnerd, as last written

	// life ends when the daemon stops: running agents and gates are killed
	// with their process groups, and their missions end in a letter.
	life context.Context
}

func (d *Daemon) init() {
	if d.Key == nil {
		if _, err := secret.EnsureRunnerKey(d.Repo); err == nil {
			d.Key, _ = secret.LoadRunnerKey(d.Repo)
		}
	}
	d.flows = ops.New(d.Repo, d.Brain)
	if d.Logf == nil {
		d.Logf = func(string, ...any) {}
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Announce == 0 {
		d.Announce = AnnounceInterval
	}
	if d.life == nil {
		d.life = context.Background()
	}
}

func (d *Daemon) agent(r *runners.Runner) string { return chain.RunnerAgent(r.ID) }

// Serve recovers missions a previous runnerd left mid-run, then answers on
// ln and announces itself to the owner until ctx ends. Missions running at
// shutdown are waited for.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener) error {
	d.init()
	// A listener that fails stops the loops as a signal does.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	d.life = ctx
	_, d.port, _ = net.SplitHostPort(ln.Addr().String())
	d.recover(ctx)
	d.noteApprovals(d.config())
	d.writeRecord()
	defer runs.RemoveRunnerd(d.Repo.RuntimeDir(), os.Getpid())
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	go d.announceLoop(ctx)
	interval := d.KeeperInterval
	if interval == 0 {
		interval = KeeperInterval
	}
	var loops sync.WaitGroup
	loops.Add(1)
	go func() { defer loops.Done(); d.keeperLoop(ctx, interval) }()
	if every := d.QueueInterval; every >= 0 {
		if every == 0 {
			every = QueueInterval
		}
		loops.Add(1)
		go func() { defer loops.Done(); d.queueLoop(ctx, every) }()
	}
	err := loopback.Run(ctx, srv, ln)
	stop()
	d.drain(&loops)
	return err
}

// drain waits for the loops and the runs to end, at most stopGrace and a
// little more: every one of them was cancelled, their processes were told
// to stop, and what they still write has stopGrace to do it. What is not
// done by then is left to the next runnerd (recover).
func (d *Daemon) drain(loops *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		loops.Wait()
		d.running.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopGrace + 500*time.Millisecond):
		d.Logf("stopping: work still ending after %v is left to the next runnerd", stopGrace)
	}
}

// Handler is runnerd's HTTP surface; every endpoint needs the secret.
func (d *Daemon) Handler() http.Handler {
	if d.flows == nil {
		d.init()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run", d.authed(d.postRun))
	mux.HandleFunc("POST /name", d.authed(d.postName))
	mux.HandleFunc("POST /curate", d.authed(d.postCurate))
	mux.HandleFunc("GET /status", d.authed(d.getStatus))
	return mux
}

// authed answers 401 with no body unless the request carries the secret
// (compared in constant time).
func (d *Daemon) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !loopback.SecretMatches(d.Secret, r.Header.Get(loopback.SecretHeader)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		h(w, r)
	}
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (d *Daemon) postRun(w http.ResponseWriter, r *http.Request) {
	var req wire.RunRequest
	if err := decode(r, &req); err != nil {
		loopback.WriteRefusal(w, rules.Refusef(rules.InvalidLetter, "", "want {runner_id, packet_markdown, block_id, brain_ref, mission_id?}: %s", rules.Clip(err.Error())))
		return
	}
	runner := d.config().Runner(req.RunnerID)
	if runner == nil || runner.Capability != runners.CapBuild {
		d.Logf("refused /run for runner %q: not a pinned build-runner", rules.Clip(req.RunnerID))
		loopback.WriteRefusal(w, rules.Refusef(rules.UnpinnedRunner, "runner_id", "runner %q is not pinned as a build-runner in %s", rules.Clip(req.RunnerID), runners.ConfigFile))
		return
	}
	if _, err := d.approval(runner); err != nil {
		d.Logf("refused /run for runner %s: %v", runner.ID, err)
		loopback.WriteErr(w, err)
		return
	}
	main := d.Repo.MainWorkTree()
	if main == "" || !runner.WorkspaceAllowed(main) {
		loopback.WriteRefusal(w, rules.Refusef(rules.WorkspaceNotAllowed, "", "this brain's repository is outside runner %s's workspace_allowlist", runner.ID))
		return
	}
	if req.BrainRef != "" && req.BrainRef != d.Brain {
		loopback.WriteRefusal(w, rules.Refusef(rules.BrainMismatch, "brain_ref", "runnerd serves brain %q", d.Brain))
		return
	}
	id, block, err := d.open(r.Context(), runner, req)
	if err != nil {
		loopback.WriteErr(w, err)
		return
	}
	d.runFor(runner, func() { d.run(d.life, runner, id, block, req.PacketMarkdown) })
	loopback.WriteJSON(w, http.StatusOK, wire.RunReply{Accepted: true, MissionID: id, RunnerID: runner.ID})
}

// runFor runs work in the background for runner, one at a time per
// runner (a mission's first round, a round a review started), counted in
// d.running so that a stopping daemon waits for it.
func (d *Daemon) runFor(runner *runners.Runner, work func()) {
	d.running.Add(1)
	go func() {
		defer d.running.Done()
		lock, _ := d.locks.LoadOrStore(runner.ID, &sync.Mutex{})
		lock.(*sync.Mutex).Lock()
		defer lock.(*sync.Mutex).Unlock()
		work()
	}()
}

// open posts the seq-1 judging letter of a new mission, or checks that
// the named one waits at judging on the request's block, and returns the
// mission's id and block: a run works on the block its letters name.
func (d *Daemon) open(ctx context.Context, runner *runners.Runner, req wire.RunRequest) (id, block string, err error) {
	if req.MissionID != "" {
		head, err := d.flows.Current(req.MissionID)
		if err != nil {
			return "", "", err
		}
		l := head.Letter
		if l.Phase != chain.PhaseJudging {
			return "", "", rules.Refusef(rules.InvalidTransition, "mission_id", "mission %s is at %s; a runner takes a mission only from judging", l.MissionID, l.Phase)
		}
		if req.BlockID != "" && req.BlockID != l.BlockID {
			return "", "", rules.Refusef(rules.InvalidLetter, "block_id", "mission %s is on block %s, not %s; leave block_id out or name the mission's own", l.MissionID, l.BlockID, rules.Echo(req.BlockID))
		}
		return l.MissionID, l.BlockID, nil
	}
	opened, err := d.flows.OpenMission(ctx, ops.MissionRequest{BlockID: req.BlockID, Seat: "hand", Capability: runners.CapBuild, RunnerID: runner.ID,
		Packet: []byte(req.PacketMarkdown), Agent: d.agent(runner), Now: d.Now()})
	if err != nil {
		return "", "", err
	}
	return opened.Mission.MissionID, req.BlockID, nil
}

func (d *Daemon) getStatus(w http.ResponseWriter, r *http.Request) {
	var ids []string
	for _, rn := range d.config().Runners {
		ids = append(ids, rn.ID)
	}
	loopback.WriteJSON(w, http.StatusOK, wire.DaemonStatus{OK: true, Brain: d.Brain, RunnerIDs: ids})
}

// Listen binds a loopback address only.
func Listen(addr string) (net.Listener, error) { return loopback.Listen(addr, "runnerd") }
