package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// Session states, as the hooks last saw them.
const (
	StateMidTurn = "mid-turn" // the model is working: a letter lands at its next tool call
	StateIdle    = "idle"     // the turn ended: the session waits for a prompt
)

// SweepAfter is how long a dead session's record is kept.
const SweepAfter = 24 * time.Hour

// Record is one live session as its hooks saw it last, kept in the runtime
// folder (sessions/<session id>.json, 0600): machine-local, never a ref.
// Whether the session still lives is never read from it: Alive checks the
// process.
type Record struct {
	SessionID   string `json:"session_id"`
	Client      string `json:"client"` // claude | codex
	Agent       string `json:"agent"`
	State       string `json:"state"` // mid-turn | idle
	LastEvent   string `json:"last_event"`
	LastEventAt string `json:"last_event_at"` // RFC 3339, UTC
	StartedAt   string `json:"started_at"`    // the first event recorded
	Transcript  string `json:"transcript_path,omitempty"`
	Worktree    string `json:"worktree,omitempty"`
	Proc
}

// Proc names a process so that a reused pid is never taken for it: the
// pid and its start time, in clock ticks after boot (/proc/<pid>/stat
// field 22).
type Proc struct {
	PID     int    `json:"pid"`
	Start   uint64 `json:"pid_start"`
	Command string `json:"process,omitempty"` // its comm, for people
}

// ValidSessionID reports whether id is a safe token to name a file by:
// [A-Za-z0-9][A-Za-z0-9_.-]{0,127} with no "..", what both hosts' UUIDs
// are. Checked by hand: a regexp with that repetition compiled at package
// init cost 0.4 ms of every m1nd call.
func ValidSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 || strings.Contains(id, "..") {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != '-')) {
			return false
		}
	}
	return true
}

// StateAfter is the state a session is in once event was answered with
// res: a Stop that blocked keeps the turn going.
func StateAfter(event string, res Result) (string, bool) {
	switch event {
	case EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventPostToolBatch:
		return StateMidTurn, true
	case EventStop:
		if len(res.Stdout) > 0 {
			return StateMidTurn, true
		}
		return StateIdle, true
	}
	return "", false // compaction events change no state
}

// Registry is the runtime folder's record of live sessions.
type Registry struct {
	Dir string // <runtime dir>/sessions
}

// NewRegistry is the registry in a repository's runtime folder.
func NewRegistry(runtimeDir string) *Registry {
	return &Registry{Dir: filepath.Join(runtimeDir, "sessions")}
}

func (r *Registry) path(id string) string { return filepath.Join(r.Dir, id+".json") }

// Note records one hook event of a session: who, where, which process, and
// the state the event leaves it in (state "" keeps the last one). The
// write is atomic; the file is 0600.
func (r *Registry) Note(in *Input, client, agent, event, state string, host Proc, now time.Time) error {
	if !ValidSessionID(in.SessionID) {
		return fmt.Errorf("session id %q is not a safe token; session not recorded", clipTo(in.SessionID, 80))
	}
	at := now.UTC().Format(time.RFC3339)
	rec := &Record{SessionID: in.SessionID, StartedAt: at, State: StateMidTurn}
	if old, err := r.Read(in.SessionID); err == nil && old.Client == client {
		rec = old
	}
	if state != "" {
		rec.State = state
	}
	rec.Client, rec.Agent, rec.LastEvent, rec.LastEventAt = client, agent, event, at
	if in.TranscriptPath != "" {
		rec.Transcript = in.TranscriptPath
	}
	if in.Cwd != "" {
		rec.Worktree = in.Cwd
	}
	if host.PID > 0 {
		rec.Proc = host
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(r.path(in.SessionID), append(data, '\n'), 0o600)
}

// Read reads one session's record.
func (r *Registry) Read(id string) (*Record, error) {
	if !ValidSessionID(id) {
		return nil, fmt.Errorf("session id %q is not a safe token", clipTo(id, 80))
	}
	data, err := gitstore.ReadRuntime(r.path(id), 1<<20)
	if err != nil {
		return nil, err
	}
	return DecodeRecord(data)
}

// DecodeRecord reads a record file, refusing one that is not a record.
func DecodeRecord(data []byte) (*Record, error) {
	rec := &Record{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(rec); err != nil {
		return nil, fmt.Errorf("session record: %w", err)
	}
	switch {
	case !ValidSessionID(rec.SessionID):
		return nil, errors.New("session record: no valid session_id")
	case rec.Client != HostClaude && rec.Client != HostCodex:
		return nil, fmt.Errorf("session record: client %q is neither claude nor codex", clipTo(rec.Client, 40))
	case rec.State != StateMidTurn && rec.State != StateIdle:
		return nil, fmt.Errorf("session record: state %q is neither mid-turn nor idle", clipTo(rec.State, 40))
	case rec.PID < 0:
		return nil, errors.New("session record: negative pid")
	}
	if _, err := time.Parse(time.RFC3339, rec.LastEventAt); err != nil {
		return nil, fmt.Errorf("session record: last_event_at: %w", err)
	}
	return rec, nil
}

// Listed is a record with its liveness, checked when listed.
type Listed struct {
	Record
	Live bool `json:"live"`
}

// List reads every record and checks each one's process; it changes
// nothing. A dead record whose last event is older than SweepAfter is
// left out, as Sweep would remove it. With all unset, only live sessions
// are returned. Newest event first.
func (r *Registry) List(now time.Time, all bool) ([]Listed, error) {
	var out []Listed
	err := r.walk(now, func(rec *Record, live bool) {
		if live || all {
			out = append(out, Listed{Record: *rec, Live: live})
		}
	}, nil)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].LastEventAt != out[j].LastEventAt {
			return out[i].LastEventAt > out[j].LastEventAt
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out, err
}

// Sweep removes what the folder keeps for no one: dead records whose last
// event is older than SweepAfter, and files that are no record (a temp
// file a crashed write left, a stranger, one that does not decode) and
// were not touched for as long. It returns how many it removed.
func (r *Registry) Sweep(now time.Time) (int, error) {
	n := 0
	err := r.walk(now, nil, func(path string) {
		if os.Remove(path) == nil {
			n++
		}
	})
	return n, err
}

// walk reads the folder: each readable record that is live, or dead but
// not yet due a sweep, goes to keep (with its liveness); each file due a
// sweep goes to stale. Either may be nil.
func (r *Registry) walk(now time.Time, keep func(rec *Record, live bool), stale func(path string)) error {
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(r.Dir, e.Name())
		rec, live, due := entryOf(e, path, now)
		switch {
		case due && stale != nil:
			stale(path)
		case rec != nil && !due && keep != nil:
			keep(rec, live)
		}
	}
	return nil
}

// entryOf reads one file of the folder: its record (nil when it holds
// none, or none that can be read now), whether the record's process is
// alive, and whether the file is due a sweep — a record a day dead, or a
// file that is no record (a temp file a crashed write left, a stranger,
// one that does not decode) untouched for as long.
func entryOf(e fs.DirEntry, path string, now time.Time) (rec *Record, live, due bool) {
	old := func() bool {
		fi, err := e.Info()
		return err == nil && now.Sub(fi.ModTime()) > SweepAfter
	}
	id, ok := strings.CutSuffix(e.Name(), ".json")
	if !ok || !e.Type().IsRegular() || !ValidSessionID(id) {
		return nil, false, e.Type().IsRegular() && old()
	}
	data, err := gitstore.ReadRuntime(path, 1<<20)
	if err != nil {
		return nil, false, false
	}
	if rec, err = DecodeRecord(data); err != nil || rec.SessionID != id {
		return nil, false, old()
	}
	live = Alive(rec.Proc)
	at, _ := time.Parse(time.RFC3339, rec.LastEventAt)
	return rec, live, !live && now.Sub(at) > SweepAfter
}

// Running reports whether session id's client runs now: its record names
// a process that is alive. A session with no record (or none readable)
// does not run.
func (r *Registry) Running(id string) bool {
	if !ValidSessionID(id) {
		return false
	}
	rec, err := r.Read(id)
	return err == nil && rec != nil && Alive(rec.Proc)
}

// RegisteredSince reports whether a session of agent answered a hook
// event at or after since (its record's last event): the keeper's test of
// a woken session that ran none of m1nd's hooks.
func (r *Registry) RegisteredSince(agent string, since time.Time) (bool, error) {
	listed, err := r.List(time.Now(), true)
	if err != nil {
		return false, err
	}
	for _, s := range listed {
		if at, err := time.Parse(time.RFC3339, s.LastEventAt); err == nil && s.Agent == agent && !at.Before(since.Truncate(time.Second)) {
			return true, nil
		}
	}
	return false, nil
}

// Live reports whether a session of agent runs now (the keeper's view).
func (r *Registry) Live(agent string) (bool, error) {
	listed, err := r.List(time.Now(), false)
	if err != nil {
		return false, err
	}
	for _, s := range listed {
		if s.Agent == agent {
			return true, nil
		}
	}
	return false, nil
}

// Last is agent's most recent session on client, live or not: the one a
// keeper would resume.
func (r *Registry) Last(agent, client string) (id, transcript string, ok bool, err error) {
	listed, err := r.List(time.Now(), true)
	if err != nil {
		return "", "", false, err
	}
	for _, s := range listed { // newest event first
		if s.Agent == agent && s.Client == client {
			return s.SessionID, s.Transcript, true, nil
		}
	}
	return "", "", false, nil
}

// MeasureTranscript measures the session whose client wrote the
// transcript at path (ReadTranscript). A transcript that is not there yet
// measures as nothing; one that cannot be read is an error.
func MeasureTranscript(client, path string) (Measure, error) {
	empty := Measure{Client: client, CacheTTL: 300}
	if path == "" {
		return empty, nil
	}
	f, err := gitstore.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return empty, err
	}
	defer f.Close()
	return ReadTranscript(client, f)
}

// Assess reads a listed session's transcript and asks the refresh decider
// about it, with waiting the work that waits for its agent. A transcript
// that cannot be read is measured as nothing.
func Assess(s Listed, waiting int, now time.Time) Decision {
	m, err := MeasureTranscript(s.Client, s.Transcript)
	if err != nil {
		m = Measure{Client: s.Client, CacheTTL: 300}
	}
	return Decide(State{Measure: m, Live: s.Live, MidTurn: s.State == StateMidTurn, Waiting: waiting, Now: now}, DefaultPolicy())
}
