package runnerd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
)

// The session keeper (DESIGN §11; seed §1.3). runnerd is the only process
// that spawns, so the keeper lives here: for each agent pinned in a
// [[keeper]] table, when a letter or an owed follow-up waits and no session
// of the agent is live, it resumes the agent's last session (when the
// refresh decider says the resume is warm or cheap) or starts a fresh one,
// with a wake message that names what waits. The letters themselves enter
// the session through the agent's hooks and their cursors, exactly once,
// as they would for a session a human started. The keeper never speaks
// for the agent and never acknowledges a letter.

// Keeper defaults.
const (
	KeeperInterval   = 2 * time.Second // how often the keeper looks for waiting work
	maxKeeperBackoff = time.Hour
)

// SessionView is what the keeper reads of an agent's sessions: the
// session registry the hooks keep, liveness checked.
type SessionView interface {
	// Live reports whether a session of agent runs now.
	Live(agent string) (bool, error)
	// Last is agent's most recent session on client, live or not.
	Last(agent, client string) (id, transcript string, ok bool, err error)
	// Running reports whether session id's client runs now.
	Running(id string) bool
	// RegisteredSince reports whether a session of agent answered a hook
	// event at or after since: a woken session that never did ran none of
	// m1nd's hooks.
	RegisteredSince(agent string, since time.Time) (bool, error)
	// Sweep removes the records a day dead, and the files that are no
	// record: the keeper's tick keeps the folder small.
	Sweep(now time.Time) (int, error)
}

// maxWakes bounds the wakes for one item that is still waiting after each:
// then the keeper gives it up, journals gave_up, and says so in runnerd's
// log, the tray and m1nd sessions.
const maxWakes = 4

// keeper is the keeper's state: what was woken for, failures and backoff,
// the wakes in flight.
type keeper struct {
	d       *Daemon
	mu      sync.Mutex
	woken   map[string]bool      // items a wake is made for and not known to wait again
	wakes   map[string]int       // item → wakes made for it that it outlived
	given   map[string]bool      // items given up after maxWakes
	fails   map[string]int       // agent → failed wakes in a row
	next    map[string]time.Time // agent → no wake before
	running map[string]bool      // agent → a woken session runs
	// unresumable is each agent's kept session never to be resumed: a
	// refresh ended it (its successor starts from memory), or its resume
	// failed.
	unresumable map[string]string
	wg          sync.WaitGroup
}

func (d *Daemon) keeperDir() string { return filepath.Join(d.Repo.RuntimeDir(), "keeper") }

// newKeeper reads the journal back, so a restarted runnerd does not wake
// anyone twice for the same letter.
func newKeeper(d *Daemon) *keeper {
	k := &keeper{d: d, woken: map[string]bool{}, wakes: map[string]int{}, given: map[string]bool{}, fails: map[string]int{}, next: map[string]time.Time{}, running: map[string]bool{}, unresumable: map[string]string{}}
	data, err := gitstore.ReadRuntime(runners.JournalPath(d.Repo.RuntimeDir()), 64<<20)
	if err != nil {
		return k
	}
	for _, line := range strings.Split(string(data), "\n") {
		var w runners.Wake
		if json.Unmarshal([]byte(line), &w) != nil {
			continue
		}
		switch w.Event {
		case "woke", "turn":
			for _, item := range w.Items {
				k.woken[item] = true
			}
		case "failed":
			for _, item := range w.Items {
				k.woken[item] = false
			}
		case "gave_up":
			for _, item := range w.Items {
				k.given[item] = true
			}
		case "ended":
			if w.NoResume {
				k.unresumable[w.Agent] = w.SessionID
			}
		}
		for _, item := range w.Waiting {
			k.woken[item] = false
			k.wakes[item]++
		}
		if w.Next != nil {
			k.next[w.Agent] = *w.Next
		}
	}
	return k
}

// keeperLoop looks for waiting work every interval until ctx ends, then
// waits for the sessions it woke.
func (d *Daemon) keeperLoop(ctx context.Context, interval time.Duration) {
	k := newKeeper(d)
	defer k.wg.Wait()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		k.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// tick wakes every pinned agent that has new work and no live session.
func (k *keeper) tick(ctx context.Context) {
	if k.d.Sessions != nil {
		if _, err := k.d.Sessions.Sweep(k.d.Now()); err != nil {
			k.d.Logf("keeper: sweep the session records: %v", err)
		}
	}
	for _, pin := range k.d.config().Keepers {
		if ctx.Err() != nil {
			return
		}
		if err := k.consider(ctx, pin); err != nil {
			k.d.Logf("keeper %s: %v", pin.Agent, err)
		}
	}
}

func (k *keeper) consider(ctx context.Context, pin *runners.KeeperPin) error {
	now := k.d.Now()
	k.mu.Lock()
	busy := k.running[pin.Agent] || now.Before(k.next[pin.Agent])
	k.mu.Unlock()
	if busy {
		return nil
	}
	items, err := k.d.flows.WaitingItems(ctx, pin.Agent)
	if err != nil {
		return err
	}
	fresh := k.fresh(items)
	if len(fresh) == 0 && (len(pin.Stream) == 0 || pin.Floor == 0) {
		return nil
	}
	if k.d.Sessions != nil {
		live, err := k.d.Sessions.Live(pin.Agent)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		if live {
			return nil // its hooks hand it the letters at its next turn
		}
	}
	if len(pin.Stream) > 0 {
		open := runners.Wake{At: now, Agent: pin.Agent, Event: "woke", How: "stream", Items: fresh}
		var first *runners.Wake
		if len(fresh) > 0 {
			first = &open
		}
		if id, d := k.resumable(pin, max(len(fresh), pin.Floor), now); id != "" {
			open.How, open.SessionID, open.Decision = "stream-resume", id, d
		}
		k.mu.Lock()
		k.running[pin.Agent] = true
		k.mu.Unlock()
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			k.runStream(ctx, pin, open, first)
		}()
		return nil
	}
	named := k.named(items)
	argv, how, sessionID, decision := k.command(pin, len(named), now)
	wake := wakeMessage(pin.Agent, named)
	for i, a := range argv {
		a = strings.ReplaceAll(a, runners.WakePlaceholder, wake)
		a = strings.ReplaceAll(a, runners.SessionPlaceholder, sessionID)
		argv[i] = strings.ReplaceAll(a, runners.AgentPlaceholder, pin.Agent)
	}
	return k.spawn(ctx, pin, argv, runners.Wake{At: now, Agent: pin.Agent, Event: "woke", How: how, SessionID: sessionID, Items: fresh, Decision: decision})
}

// command picks start or resume: resume when the pin can and the agent's
// last session is resumable.
func (k *keeper) command(pin *runners.KeeperPin, waiting int, now time.Time) (argv []string, how, sessionID string, decision *session.Decision) {
	if len(pin.Resume) == 0 {
		return append([]string(nil), pin.Start...), "start", "", nil
	}
	id, d := k.resumable(pin, waiting, now)
	if id != "" {
		return append([]string(nil), pin.Resume...), "resume", id, d
	}
	return append([]string(nil), pin.Start...), "start", "", d
}

// resumable is the agent's last session when a wake should resume it,
// with the decision that says so: the session is not running, was not
// ended by a refresh (its successor starts from memory), and the refresh
// decider, reading its transcript, finds the resume warm or no larger
// than a rebuild. Otherwise no id, and the decision when one was made.
func (k *keeper) resumable(pin *runners.KeeperPin, waiting int, now time.Time) (string, *session.Decision) {
	id, d := k.lastDecision(pin, session.State{Waiting: waiting, Floor: pin.Floor, Now: now}, func(id string) bool {
		k.mu.Lock()
		never := k.unresumable[pin.Agent] == id
		k.mu.Unlock()
		return never || k.d.Sessions.Running(id)
	})
	if d != nil && d.Action == session.ActionResume {
		return id, d
	}
	return "", d
}

// lastDecision is the refresh decider's answer, in state st, for pin's
// agent's last session as its own transcript measures it, with that
// session's id: none when there is no such session, skip says to leave
// it, or its transcript cannot be read (a fresh session, then).
func (k *keeper) lastDecision(pin *runners.KeeperPin, st session.State, skip func(id string) bool) (string, *session.Decision) {
	if k.d.Sessions == nil {
		return "", nil
	}
	id, transcript, ok, err := k.d.Sessions.Last(pin.Agent, pin.Client)
	if err != nil || !ok || id == "" || transcript == "" || skip(id) {
		return "", nil
	}
	m, err := session.MeasureTranscript(pin.Client, transcript)
	if err != nil {
		return "", nil
	}
	st.Measure = m
	d := session.Decide(st, pin.Policy())
	return id, &d
}

// wakeMessage names what waits, never its content: the hooks deliver it.
func wakeMessage(agent string, items []string) string {
	var letters, followups []string
	for _, it := range items {
		if id, ok := strings.CutPrefix(it, "letter:"); ok {
			letters = append(letters, id)
		} else if id, ok := strings.CutPrefix(it, "followup:"); ok {
			followups = append(followups, id)
		}
	}
	var parts []string
	if len(letters) > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", rules.Count(len(letters), "letter"), strings.Join(letters, ", ")))
	}
	if len(followups) > 0 {
		parts = append(parts, fmt.Sprintf("%s you owe (%s)", rules.Count(len(followups), "follow-up"), strings.Join(followups, ", ")))
	}
	return fmt.Sprintf("m1nd: work waits for %s: %s. m1nd's hooks put the letters into this session; read them and act on what is yours.", agent, strings.Join(parts, "; "))
}

// spawn starts the woken session and journals it; its end is journaled
// when it exits. A wake that fails (the client cannot start, or exits
// non-zero) is no wake: its items wait again, after a backoff that
// doubles with each failure in a row.
func (k *keeper) spawn(ctx context.Context, pin *runners.KeeperPin, argv []string, w runners.Wake) error {
	dir := pin.Worktree
	if dir == "" {
		dir = k.d.Repo.WorkTree()
	}
	if err := os.MkdirAll(k.d.keeperDir(), 0o700); err != nil {
		return err
	}
	w.Log = filepath.Join(k.d.keeperDir(), fmt.Sprintf("%s-%s.log", pin.Agent, w.At.UTC().Format("20060102T150405.000000000")))
	logFile, err := gitstore.OpenRuntimeWrite(w.Log, os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(pin.TimeoutSecs)*time.Second)
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "M1ND_AGENT="+pin.Agent)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// At timeout_secs: SIGTERM to the session's process group, so the
	// client can end its turn and write its transcript; SIGKILL only if it
	// is still there endGrace later.
	exited := make(chan struct{})
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		go func() {
			select {
			case <-exited:
			case <-time.After(endGrace):
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}()
		return nil
	}
	k.mu.Lock()
	for _, it := range w.Items {
		k.woken[it] = true
	}
	k.running[pin.Agent] = true
	k.mu.Unlock()
	if err := cmd.Start(); err != nil {
		cancel()
		logFile.Close()
		k.ended(ctx, pin, w, -1, err)
		return nil
	}
	k.journal(w)
	k.d.Logf("keeper %s: woke (%s) for %s", pin.Agent, w.How, strings.Join(w.Items, ", "))
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer cancel()
		defer logFile.Close()
		err := cmd.Wait()
		close(exited)
		ended, cancelEnded := lingering(ctx, 0)
		defer cancelEnded()
		k.ended(ended, pin, w, gitstore.ExitCode(err), err)
	}()
	return nil
}

// ended journals a woken session's end. Delivered is not answered: the
// letters its unanswered turn was given come back for the next wake
// (mailbox Release); what the wake was for and still waits — the client
// failed, exited 0 having read nothing (untrusted hooks), or took only
// part of a long backlog — is woken for again: at once when the session
// moved something, else after a backoff that doubles with each such wake
// in a row. An item outliving maxWakes wakes is given up, journaled and
// logged. A woken session that answered no hook at all is named, with
// how to fix it.
func (k *keeper) ended(ctx context.Context, pin *runners.KeeperPin, w runners.Wake, code int, err error) {
	end := runners.Wake{At: k.d.Now(), Agent: pin.Agent, Event: "exited", How: w.How, SessionID: w.SessionID, Exit: code, Log: w.Log}
	if err != nil {
		end.Event, end.Error, end.Items = "failed", rules.OneLine(err.Error()), w.Items
	}
	registered := k.registered(pin, w.At, &end)
	if k.d.Sessions != nil {
		k.giveBack(ctx, pin, k.d.Sessions.Running, &end)
	}
	k.mu.Lock()
	k.running[pin.Agent] = false
	k.mu.Unlock()
	k.settle(ctx, pin, w.Items, &end, err != nil || !registered)
	if !registered {
		// Another wake would run none of the hooks either: what it was
		// for is given up now, with the note that says how to fix it.
		k.giveUp(pin, end.Waiting, end.At, "the woken session ran none of m1nd's hooks; waking it again would not help")
	}
}

// registered reports whether a session of pin's agent answered a hook
// since its wake at; when none did, end gets the note saying how to fix it.
func (k *keeper) registered(pin *runners.KeeperPin, at time.Time, end *runners.Wake) bool {
	if k.d.Sessions == nil {
		return true
	}
	ok, err := k.d.Sessions.RegisteredSince(pin.Agent, at.Add(-time.Second))
	if err == nil && !ok {
		end.Note = unregisteredNote(pin.Client)
		return false
	}
	return true
}

// giveBack releases the letters in flight in turns that will not answer
// (their session does not run, by alive), for the next turn to take
// again, and names them in end.
func (k *keeper) giveBack(ctx context.Context, pin *runners.KeeperPin, alive func(string) bool, end *runners.Wake) {
	again, undeliverable, err := k.d.flows.Release(ctx, pin.Agent, alive)
	if err != nil {
		k.d.Logf("keeper %s: give back the letters of the ended turn: %v", pin.Agent, err)
	}
	for _, f := range again {
		end.Again = append(end.Again, "letter:"+f.ID)
	}
	k.undeliverable(pin, undeliverable)
}

// undeliverable gives up waking pin's agent for letters the mailbox gave
// up as undeliverable, each with its reason.
func (k *keeper) undeliverable(pin *runners.KeeperPin, letters []mailbox.InFlight) {
	for _, f := range letters {
		why := fmt.Sprintf("undeliverable: %s; it stays unread (m1nd mail inbox --agent %s)", f.Reason, pin.Agent)
		k.giveUp(pin, []string{"letter:" + f.ID}, k.d.Now(), why)
	}
}

// giveUp stops waking pin's agent for items (those not given up before),
// journals gave_up and logs it, saying why.
func (k *keeper) giveUp(pin *runners.KeeperPin, items []string, at time.Time, why string) {
	var fresh []string
	k.mu.Lock()
	for _, it := range items {
		if !k.given[it] {
			k.given[it] = true
			fresh = append(fresh, it)
		}
	}
	k.mu.Unlock()
	if len(fresh) == 0 {
		return
	}
	note := fmt.Sprintf("gave up waking %s for %s: %s", pin.Agent, strings.Join(fresh, ", "), why)
	k.journal(runners.Wake{At: at, Agent: pin.Agent, Event: "gave_up", Items: fresh, Note: note})
	k.d.Logf("keeper %s: %s", pin.Agent, note)
}

// settle journals end, the end of a session or a turn woken for items:
// what still waits is woken for again, at once when the session moved
// something, else (and after a failure) after a backoff that doubles
// with each such wake in a row; an item outliving maxWakes wakes is given
// up, journaled and logged.
func (k *keeper) settle(ctx context.Context, pin *runners.KeeperPin, items []string, end *runners.Wake, failed bool) {
	waiting := map[string]bool{}
	if its, err := k.d.flows.WaitingItems(ctx, pin.Agent); err == nil {
		for _, it := range its {
			waiting[it] = true
		}
	} else {
		k.d.Logf("keeper %s: %v", pin.Agent, err)
	}
	var outlived []string
	k.mu.Lock()
	for _, it := range items {
		if !waiting[it] {
			continue
		}
		end.Waiting = append(end.Waiting, it)
		k.woken[it] = false
		if k.wakes[it]++; k.wakes[it] >= maxWakes {
			outlived = append(outlived, it)
		}
	}
	moved := len(end.Waiting) < len(items)
	if failed || (len(end.Waiting) > 0 && !moved) {
		k.fails[pin.Agent]++
		backoff := time.Duration(pin.BackoffSecs) * time.Second << min(k.fails[pin.Agent]-1, 16)
		next := end.At.Add(min(backoff, maxKeeperBackoff))
		k.next[pin.Agent], end.Next = next, &next
	} else {
		k.fails[pin.Agent] = 0
	}
	k.mu.Unlock()
	k.journal(*end)
	if end.Note != "" {
		k.d.Logf("keeper %s: %s", pin.Agent, end.Note)
	}
	k.giveUp(pin, outlived, end.At, fmt.Sprintf("woken %d times, still waiting (read them with m1nd mail inbox --agent %s)", maxWakes, pin.Agent))
}

// unregisteredNote is what the keeper says of a woken session that ran
// none of m1nd's hooks: the letters never reached it.
func unregisteredNote(client string) string {
	if client == session.HostCodex {
		return "the woken session ran none of m1nd's hooks, so no letter reached it: Codex runs only trusted hooks (codex exec runs untrusted ones silently not at all); trust the project and m1nd's hooks in $CODEX_HOME/config.toml (m1nd hook install codex prints how; docs/mail.md: Trusting m1nd's hooks in Codex)"
	}
	return "the woken session ran none of m1nd's hooks, so no letter reached it: install them where it runs (m1nd hook install claude, in its worktree) and check that the client's settings load them"
}

// journal appends one line; a journal that cannot be written is logged.
func (k *keeper) journal(w runners.Wake) {
	line, _ := json.Marshal(w)
	path := runners.JournalPath(k.d.Repo.RuntimeDir())
	f, err := gitstore.OpenRuntimeWrite(path, os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, err = gitstore.OpenRuntimeWrite(path, os.O_APPEND, 0o600)
		}
	}
	if err != nil {
		k.d.Logf("keeper journal: %v", err)
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}
