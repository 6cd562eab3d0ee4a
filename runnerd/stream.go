package runnerd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/session"
)

// Long-lived sessions (seed §1.3, research §0: a woken `claude -p` dies at
// its first answer). For a pin with stream, the keeper holds one client
// process open per agent and writes each wake into it as a turn: the
// letters still enter through the session's hooks (UserPromptSubmit),
// once. Between turns it keeps the session (floor), wakes it on a tempo,
// and refreshes it at a turn boundary when the refresh decider or the
// session's age asks: a flush turn (write what you learned, decided and
// owe to memory), a bounded wait, a graceful end (close stdin, SIGTERM,
// then SIGKILL), and a fresh session that rehydrates from memory.

// Stream timings.
const (
	streamPoll = 250 * time.Millisecond // how often a kept session looks for waiting work
	flushWait  = 2 * time.Minute        // the most a flush turn is waited for
	endGrace   = 5 * time.Second        // after closing stdin, and again after SIGTERM
)

// protocol is one client's streaming protocol on the session's stdin and
// stdout.
type protocol interface {
	// argv is the client's command line: the pin's stream command, and
	// what resumes the session when one is resumed.
	argv(stream []string) []string
	// open writes what the protocol needs before the first turn.
	open(w io.Writer, cwd string) error
	// turn writes one user turn.
	turn(w io.Writer, text string) error
	// read reads one line of the client's stdout, answering the requests
	// the protocol requires answers to on w.
	read(line []byte, w io.Writer) streamEvent
}

// streamEvent is what one line of a client's stdout says.
type streamEvent struct {
	session string         // the session (thread) id, when the line names it
	ended   bool           // a turn ended
	failed  bool           // ... with an error
	detail  string         // the error, or the result's first words
	usage   *runners.Usage // what the ended turn cost, when the client said
}

// protocolFor is client's protocol, resuming session resume when it is
// not "".
func protocolFor(client, resume string) protocol {
	if client == session.HostCodex {
		return &codexWire{resume: resume}
	}
	return claudeWire{resume: resume}
}

// claudeWire is Claude Code's -p --input-format stream-json: one user
// message per line in, one result line out at each turn's end. A resumed
// session is named on the command line (--resume).
type claudeWire struct{ resume string }

func (c claudeWire) argv(stream []string) []string {
	if c.resume == "" {
		return stream
	}
	return append(stream, "--resume", c.resume)
}

func (claudeWire) open(io.Writer, string) error { return nil }

func (claudeWire) turn(w io.Writer, text string) error {
	return writeLine(w, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}}})
}

func (claudeWire) read(line []byte, _ io.Writer) streamEvent {
	var m struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		SessionID string `json:"session_id"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
		// Per model, what the turn since the last result cost.
		Since map[string]struct {
			Input      int64   `json:"inputTokens"`
			Output     int64   `json:"outputTokens"`
			CacheRead  int64   `json:"cacheReadInputTokens"`
			CacheWrite int64   `json:"cacheCreationInputTokens"`
			CostUSD    float64 `json:"costUSD"`
		} `json:"model_usage_since_last_result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return streamEvent{}
	}
	ev := streamEvent{session: m.SessionID}
	if m.Type == "result" {
		ev.ended, ev.failed = true, m.IsError || m.Subtype != "success"
		ev.detail = rules.CutBytes(rules.OneLine(m.Result), 200)
		if len(m.Since) > 0 {
			u := &runners.Usage{CostUSD: new(float64)}
			for _, mu := range m.Since {
				u.Input += mu.Input
				u.Output += mu.Output
				u.CacheRead += mu.CacheRead
				u.CacheWrite += mu.CacheWrite
				*u.CostUSD += mu.CostUSD
			}
			ev.usage = u
		}
	}
	return ev
}

// codexWire is codex app-server's JSON-RPC on stdio: initialize, one
// thread (thread/start, or thread/resume of a resumed session's thread),
// a turn/start per turn, turn/completed at each turn's end.
// Approval requests are declined: a kept session runs with the sandbox
// and approval policy its config gives, and nobody is there to approve.
type codexWire struct {
	resume string // the thread to resume, if any
	mu     sync.Mutex
	id     int
	thread string
	queued []string // turns written before the thread started
	// total is the thread's usage as its last thread/tokenUsage/updated
	// said; counted what the turns before this one cost.
	total, counted runners.Usage
}

func (c *codexWire) request(w io.Writer, method string, params any) error {
	c.id++
	return writeLine(w, map[string]any{"id": c.id, "method": method, "params": params})
}

func (c *codexWire) open(w io.Writer, cwd string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.request(w, "initialize", map[string]any{"clientInfo": map[string]string{"name": "m1nd-keeper", "version": "1"}}); err != nil {
		return err
	}
	if err := writeLine(w, map[string]any{"method": "initialized"}); err != nil {
		return err
	}
	if c.resume != "" {
		return c.request(w, "thread/resume", map[string]any{"threadId": c.resume, "cwd": cwd, "approvalPolicy": "never"})
	}
	return c.request(w, "thread/start", map[string]any{"cwd": cwd, "approvalPolicy": "never"})
}

func (c *codexWire) argv(stream []string) []string { return stream }

func (c *codexWire) turn(w io.Writer, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.thread == "" {
		c.queued = append(c.queued, text)
		return nil
	}
	return c.startTurn(w, text)
}

func (c *codexWire) startTurn(w io.Writer, text string) error {
	return c.request(w, "turn/start", map[string]any{"threadId": c.thread, "input": []map[string]string{{"type": "text", "text": text}}})
}

func (c *codexWire) read(line []byte, w io.Writer) streamEvent {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Params struct {
			Turn struct {
				Status string `json:"status"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"turn"`
			TokenUsage struct {
				Total *struct {
					Input      int64 `json:"inputTokens"` // cached ones included
					Cached     int64 `json:"cachedInputTokens"`
					CacheWrite int64 `json:"cacheWriteInputTokens"`
					Output     int64 `json:"outputTokens"`
				} `json:"total"`
			} `json:"tokenUsage"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return streamEvent{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case m.Method != "" && len(m.ID) > 0: // a request of the server's: decline it
		_ = writeLine(w, map[string]any{"id": m.ID, "result": map[string]string{"decision": "decline"}})
	case m.Method == "thread/tokenUsage/updated" && m.Params.TokenUsage.Total != nil:
		t := m.Params.TokenUsage.Total
		c.total = runners.Usage{Input: t.Input - t.Cached, CacheRead: t.Cached, CacheWrite: t.CacheWrite, Output: t.Output}
	case m.Method == "turn/completed":
		ev := streamEvent{session: c.thread, ended: true, failed: m.Params.Turn.Status != "completed"}
		if e := m.Params.Turn.Error; e != nil {
			ev.detail = rules.CutBytes(rules.OneLine(e.Message), 200)
		}
		if c.total != c.counted {
			ev.usage = &runners.Usage{Input: c.total.Input - c.counted.Input, CacheRead: c.total.CacheRead - c.counted.CacheRead,
				CacheWrite: c.total.CacheWrite - c.counted.CacheWrite, Output: c.total.Output - c.counted.Output}
			c.counted = c.total
		}
		return ev
	case m.Error != nil && c.thread != "": // a turn/start refused
		return streamEvent{session: c.thread, ended: true, failed: true, detail: rules.CutBytes(rules.OneLine(m.Error.Message), 200)}
	case m.Result.Thread.ID != "" && c.thread == "":
		c.thread = m.Result.Thread.ID
		for _, text := range c.queued {
			_ = c.startTurn(w, text)
		}
		c.queued = nil
		return streamEvent{session: c.thread}
	}
	return streamEvent{}
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// stream is one long-lived session the keeper owns.
type stream struct {
	pin     *runners.KeeperPin
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	proto   protocol
	log     *os.File
	started time.Time
	events  chan streamEvent
	exited  chan struct{} // closed once the process was waited for
	waitErr error

	session string       // the client's session id, once it named one
	busy    bool         // a turn runs
	turn    runners.Wake // the running turn's journal line
	lastEnd time.Time
	turns   int
	// spent is what the session's turns cost so far, as the client said.
	spent runners.Usage
	// retry is the letters a failed turn left in the session's context,
	// unanswered: the next turn points at them instead of carrying them
	// again (mailbox Failed).
	retry []string
	dir   string // where the session runs
	// resumed: the session opened by resuming s.session.
	resumed bool

	// inputs are what the session's system prompt was built from, read
	// when it opened: a change refreshes it.
	inputs session.Inputs
	// flushAsked is why the session was asked to flush mid-turn, near its
	// cap; it ends when that turn does. askedFlush: the ask was tried.
	flushAsked string
	askedFlush bool
	// idleUntil is when an idle session with no floor is looked at again
	// for its idle end (zero: at the next look); ending is the decision
	// that ended it there.
	idleUntil time.Time
	ending    *session.Decision
}

// openStream starts pin's streaming client in dir, resuming session
// resume when it is not "".
func (k *keeper) openStream(pin *runners.KeeperPin, dir, resume string, now time.Time) (*stream, error) {
	if err := os.MkdirAll(k.d.keeperDir(), 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(k.d.keeperDir(), fmt.Sprintf("%s-%s.log", pin.Agent, now.UTC().Format("20060102T150405.000000000")))
	logFile, err := gitstore.OpenRuntimeWrite(logPath, os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	proto := protocolFor(pin.Client, resume)
	argv := make([]string, len(pin.Stream))
	for i, a := range pin.Stream {
		argv[i] = strings.ReplaceAll(a, runners.AgentPlaceholder, pin.Agent)
	}
	argv = proto.argv(argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "M1ND_AGENT="+pin.Agent)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		var stdout io.ReadCloser
		if stdout, err = cmd.StdoutPipe(); err == nil {
			s := &stream{pin: pin, cmd: cmd, stdin: stdin, proto: proto, log: logFile, started: now, session: resume, resumed: resume != "",
				events: make(chan streamEvent, 64), exited: make(chan struct{})}
			if err = cmd.Start(); err == nil {
				go s.readLoop(stdout)
				if err = s.proto.open(stdin, dir); err != nil {
					s.end(context.Background())
					return nil, err
				}
				return s, nil
			}
		}
	}
	logFile.Close()
	return nil, err
}

// readLoop reads the client's stdout into the log and its events, until
// the client closes it; then it waits for the process.
func (s *stream) readLoop(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		s.log.Write(append(append([]byte(nil), line...), '\n'))
		if ev := s.proto.read(line, s.stdin); ev != (streamEvent{}) {
			s.events <- ev
		}
	}
	s.waitErr = s.cmd.Wait()
	s.log.Close()
	close(s.exited)
}

// end ends the session gracefully: stdin closed, then SIGTERM to its
// process group, then SIGKILL, each after endGrace.
func (s *stream) end(ctx context.Context) {
	s.stdin.Close()
	go func() { // nobody reads the events any more: never let them block the reader
		for {
			select {
			case <-s.events:
			case <-s.exited:
				return
			}
		}
	}()
	terminate(ctx, s.cmd.Process.Pid, s.exited, endGrace)
}

// terminate waits grace for exited, then sends the process group pgid
// SIGTERM, and SIGKILL after grace more.
func terminate(ctx context.Context, pgid int, exited <-chan struct{}, grace time.Duration) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-exited:
			return
		case <-time.After(grace):
		case <-ctx.Done():
		}
		_ = syscall.Kill(-pgid, sig)
	}
	<-exited
}

// rotateAt is when an idle kept session is refreshed ahead of its
// timeout_secs (seed §1.5: flush ahead of the cap).
func rotateAt(s *stream) time.Time { return s.pin.Rotation(s.started) }

// Messages the keeper writes into a kept session.
func floorMessage(agent string) string {
	return fmt.Sprintf("m1nd: you are %s's kept session: nothing waits for you now. m1nd writes new work into this session as it arrives; until then, answer with nothing.", agent)
}

func tempoMessage(agent string, idle time.Duration) string {
	return fmt.Sprintf("m1nd: tempo: %s has been idle %s and nothing new arrived. Look at what you owe (m1nd followup list --owner %s --open) if anything is yours; otherwise answer with nothing.", agent, idle.Round(time.Second), agent)
}

// runStream keeps pin's agent's session until ctx ends or the session
// ends: it writes a turn for each wake, keeps it idle under the floor,
// wakes it on the tempo, and refreshes it when asked. first is the first
// turn's wake (its items), or nil for a floor session.
func (k *keeper) runStream(ctx context.Context, pin *runners.KeeperPin, start runners.Wake, first *runners.Wake) {
	defer func() {
		k.mu.Lock()
		k.running[pin.Agent] = false
		k.mu.Unlock()
	}()
	dir := pin.Worktree
	if dir == "" {
		dir = k.d.Repo.WorkTree()
	}
	s, err := k.openStream(pin, dir, start.SessionID, start.At)
	if err != nil {
		start.Event, start.Error = "failed", rules.OneLine(err.Error())
		k.settle(ctx, pin, start.Items, &start, true)
		return
	}
	s.dir = dir
	s.inputs = k.readInputs(ctx, s)
	start.Log = s.log.Name()
	k.journal(start)
	how := "started"
	if start.SessionID != "" {
		how = "resumed " + start.SessionID + " as"
	}
	k.d.Logf("keeper %s: %s a kept session (stream) for %s", pin.Agent, how, itemsOrFloor(start.Items))
	if first != nil {
		k.writeTurn(ctx, s, "turn", first.Items, wakeMessage(pin.Agent, first.Items), nil, "")
	} else {
		k.writeTurn(ctx, s, "turn", nil, floorMessage(pin.Agent), nil, "")
	}
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			closing, cancel := lingering(ctx, 0)
			defer cancel()
			k.closeStream(closing, s, "runnerd stopped")
			return
		case ev := <-s.events:
			if ev.session != "" {
				s.session = ev.session
			}
			if ev.ended && s.busy {
				k.turnEnded(ctx, s, ev)
			}
		case <-s.exited:
			exiting, cancel := lingering(ctx, 0)
			defer cancel()
			k.streamExited(exiting, s)
			return
		case <-tick.C:
			if done := k.step(ctx, s); done {
				return
			}
		}
	}
}

func itemsOrFloor(items []string) string {
	if len(items) == 0 {
		return "the floor"
	}
	return strings.Join(items, ", ")
}

// writeTurn writes one turn into s and journals it as event.
func (k *keeper) writeTurn(ctx context.Context, s *stream, event string, items []string, text string, d *session.Decision, note string) {
	w := runners.Wake{At: k.d.Now(), Agent: s.pin.Agent, Event: event, How: "stream", SessionID: s.session, Items: items, Decision: d, Note: note}
	k.mu.Lock()
	for _, it := range items {
		k.woken[it] = true
	}
	k.mu.Unlock()
	if s.spent.Turns > 0 {
		text += "\n\n" + s.spent.Account()
	}
	if err := s.proto.turn(s.stdin, text); err != nil {
		w.Error = rules.OneLine(err.Error())
		k.journal(w)
		k.closeStream(ctx, s, "its stdin is closed")
		return
	}
	s.busy, s.turn = true, w
	k.journal(w)
}

// turnEnded settles a turn of s: the letters its failed turn held come
// back, and what it was for that still waits is woken for again.
func (k *keeper) turnEnded(ctx context.Context, s *stream, ev streamEvent) {
	s.busy, s.lastEnd, s.idleUntil = false, k.d.Now(), time.Time{}
	s.turns++
	end := runners.Wake{At: s.lastEnd, Agent: s.pin.Agent, Event: "turn_ended", How: "stream", SessionID: s.session, Note: ev.detail, Usage: ev.usage}
	s.spent.Add(ev.usage)
	if ev.failed {
		end.Event, end.Exit = "turn_failed", 1
		// A turn that failed answers nothing. The client keeps its prompt
		// and the letters the hooks put in it: they stay this session's,
		// and the next turn asks for their answer instead of repeating
		// them. Sessions that ended meanwhile give theirs back.
		if k.d.Sessions != nil {
			k.giveBack(ctx, s.pin, func(id string) bool { return id == s.session || k.d.Sessions.Running(id) }, &end)
		}
		k.keepForRetry(ctx, s, ev.detail)
	}
	if s.turn.Event == "flush" {
		end.Event = "flushed"
		if ev.failed {
			end.Event = "flush_failed"
		}
	}
	k.settle(ctx, s.pin, s.turn.Items, &end, ev.failed)
}

// keepForRetry keeps the letters of s's failed turn in its context for
// the next turn, or gives up those that went into too many failed turns.
func (k *keeper) keepForRetry(ctx context.Context, s *stream, why string) {
	if why == "" {
		why = "the client reported an error"
	}
	kept, gaveUp, err := k.d.flows.Failed(ctx, s.pin.Agent, s.session, why)
	if err != nil {
		k.d.Logf("keeper %s: the letters of the failed turn: %v", s.pin.Agent, err)
	}
	for _, f := range kept {
		s.retry = append(s.retry, f.ID)
	}
	k.undeliverable(s.pin, gaveUp)
}

// retryMessage is the turn after a failed one in a kept session: the
// letters are in the conversation already, so it names them, once.
func retryMessage(agent string, letters []string) string {
	verb := "are"
	if len(letters) == 1 {
		verb = "is"
	}
	return fmt.Sprintf("m1nd: your previous turn failed before you answered. The %s it carried for %s %s above in this conversation (%s), not repeated here: read them there and act on what is yours.",
		rules.Count(len(letters), "letter"), agent, verb, strings.Join(letters, ", "))
}

// retryTurn writes the letters an unanswered turn gave back into the
// stream again, as one turn.
func (k *keeper) retryTurn(ctx context.Context, s *stream) {
	items := make([]string, len(s.retry))
	for i, id := range s.retry {
		items[i] = "letter:" + id
	}
	k.writeTurn(ctx, s, "retry", items, retryMessage(s.pin.Agent, s.retry), nil, "")
	s.retry = nil
}

// step is one look at an open stream; it reports whether the stream ended.
func (k *keeper) step(ctx context.Context, s *stream) bool {
	now := k.d.Now()
	pin := s.pin
	if s.busy {
		return k.stepMidTurn(ctx, s, now)
	}
	if s.turn.Event == "flush" { // flushed: end, and the next look starts afresh
		k.closeStream(ctx, s, refreshedNote+s.turn.Note)
		return true
	}
	if s.flushAsked != "" {
		if done := k.flushedMidTurn(ctx, s); done {
			return true
		}
	}
	k.mu.Lock()
	paused := now.Before(k.next[pin.Agent])
	k.mu.Unlock()
	if len(s.retry) > 0 && !paused {
		k.retryTurn(ctx, s)
		return false
	}
	items, err := k.d.flows.WaitingItems(ctx, pin.Agent)
	if err != nil {
		k.d.Logf("keeper %s: %v", pin.Agent, err)
		return false
	}
	fresh := k.fresh(items)
	work := len(fresh) > 0 && !paused
	tempo := pin.TempoSecs > 0 && now.Sub(s.lastEnd) >= time.Duration(pin.TempoSecs)*time.Second
	if !work && !tempo && now.Before(rotateAt(s)) {
		if pin.Floor == 0 && len(fresh) == 0 && k.idleOver(s, now) {
			k.closeStream(ctx, s, idleEndNote(s, now))
			return true
		}
		return false // kept: nothing to decide until work, the tempo, the rotation or the idle end
	}
	// A turn boundary with something to do: the refresh decider first.
	d, why := k.refreshDue(ctx, s, len(items), now)
	if why != "" {
		k.writeTurn(ctx, s, "flush", nil, session.FlushAskFor(why), d, why)
		return false
	}
	switch {
	case work:
		k.writeTurn(ctx, s, "turn", fresh, wakeMessage(pin.Agent, k.named(items)), d, "")
	case tempo:
		k.writeTurn(ctx, s, "tempo", nil, tempoMessage(pin.Agent, now.Sub(s.lastEnd)), d, "")
	}
	return false
}

// stepMidTurn is step while a turn runs: a flush turn past flushWait and
// a turn past timeout_secs are cut; a turn running at the rotation is
// asked to flush at its next tool call.
func (k *keeper) stepMidTurn(ctx context.Context, s *stream, now time.Time) bool {
	limit := s.started.Add(time.Duration(s.pin.TimeoutSecs) * time.Second)
	switch {
	case s.turn.Event == "flush" && now.Sub(s.turn.At) >= flushWait:
		k.closeStream(ctx, s, "the flush turn took longer than "+flushWait.String())
		return true
	case !now.Before(limit):
		k.closeStream(ctx, s, fmt.Sprintf("timeout_secs (%d) reached mid-turn", s.pin.TimeoutSecs))
		return true
	case !s.askedFlush && s.turn.Event != "flush" && !now.Before(rotateAt(s)):
		k.askFlush(s, rotationWhy(s, now))
	}
	return false
}

// fresh is what waits that no wake was made for and was not given up.
func (k *keeper) fresh(items []string) []string {
	return k.waitingExcept(items, func(it string) bool { return k.woken[it] || k.given[it] })
}

// named is what a wake names: all that waits but what was given up.
func (k *keeper) named(items []string) []string {
	return k.waitingExcept(items, func(it string) bool { return k.given[it] })
}

// waitingExcept is items but those skip reports, read under the keeper's
// lock.
func (k *keeper) waitingExcept(items []string, skip func(string) bool) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, it := range items {
		if !skip(it) {
			out = append(out, it)
		}
	}
	return out
}

// refreshDue says why s should be refreshed now, if it should: the
// refresh decider reading its transcript (fill, rental), a change of its
// system-prompt inputs, or its age nearing timeout_secs. The decision is
// what the journal records.
func (k *keeper) refreshDue(ctx context.Context, s *stream, waiting int, now time.Time) (*session.Decision, string) {
	d := k.measure(s, session.State{Live: true, Waiting: waiting, Floor: s.pin.Floor, Now: now})
	if d != nil && d.Action == session.ActionRehydrate {
		return d, d.Reason
	}
	if changed := k.inputsChanged(ctx, s); len(changed) > 0 {
		return d, "system-prompt inputs changed: " + strings.Join(changed, ", ")
	}
	if !now.Before(rotateAt(s)) {
		return d, rotationWhy(s, now)
	}
	return d, ""
}

// rotationWhy is why s is refreshed ahead of its timeout_secs.
func rotationWhy(s *stream, now time.Time) string {
	return fmt.Sprintf("rotation: the session is %s old, timeout_secs is %d", now.Sub(s.started).Round(time.Second), s.pin.TimeoutSecs)
}

// closeStream ends s gracefully and settles it.
func (k *keeper) closeStream(ctx context.Context, s *stream, why string) {
	s.end(ctx)
	k.streamEnded(ctx, s, why)
}

// streamExited settles a session that ended by itself.
func (k *keeper) streamExited(ctx context.Context, s *stream) {
	k.streamEnded(ctx, s, "the client exited")
}

func (k *keeper) streamEnded(ctx context.Context, s *stream, why string) {
	<-s.exited
	end := runners.Wake{At: k.d.Now(), Agent: s.pin.Agent, Event: "ended", How: "stream", SessionID: s.session, Exit: max(gitstore.ExitCode(s.waitErr), 0), Log: s.log.Name(), Note: why, Decision: s.ending}
	if s.flushAsked != "" { // an ask no hook carried is not the next session's
		if err := session.ClearFlush(k.d.Repo.RuntimeDir(), s.pin.Agent); err != nil {
			k.d.Logf("keeper %s: take back the flush ask: %v", s.pin.Agent, err)
		}
	}
	var items []string
	failed := s.busy // a turn cut short answers nothing
	if failed {
		items = s.turn.Items
		end.Items = items
	}
	var hooks runners.Wake
	if s.turns == 0 && !k.registered(s.pin, s.started, &hooks) {
		failed, end.Note = true, why+"; "+hooks.Note
	}
	if s.resumed && s.turns == 0 {
		end.Note += resumeFailedNote
	}
	// A refresh's successor starts from memory; a resume that never got a
	// turn done would fail again.
	end.NoResume = strings.HasPrefix(why, refreshedNote) || (s.resumed && s.turns == 0)
	if end.NoResume {
		k.mu.Lock()
		k.unresumable[s.pin.Agent] = s.session
		k.mu.Unlock()
	}
	if k.d.Sessions != nil {
		k.giveBack(ctx, s.pin, k.d.Sessions.Running, &end)
	}
	k.settle(ctx, s.pin, items, &end, failed)
}
