package runners

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/session"
)

// Placeholders in a keeper's start and resume commands.
const (
	WakePlaceholder    = "{wake}"
	SessionPlaceholder = "{session_id}"
	AgentPlaceholder   = "{agent}"
)

// Keeper pin defaults.
const (
	// MaxRotateLead bounds how long before timeout_secs an idle kept
	// session is rotated: a quarter of timeout_secs, at most this.
	MaxRotateLead = 5 * time.Minute

	DefaultWakeTimeout   = 1800 // seconds a woken session may run
	DefaultKeeperBackoff = 30   // seconds before the first retry of a failed wake; doubling
)

// KeeperPin is one [[keeper]] table of runners.toml: an agent whose
// sessions runnerd keeps alive, and how to start and resume its client.
type KeeperPin struct {
	Agent       string   `toml:"agent"`
	Client      string   `toml:"client"` // claude or codex
	Start       []string `toml:"start"`  // {wake} is the wake message
	Resume      []string `toml:"resume"` // {wake}, {session_id}; optional
	Worktree    string   `toml:"worktree"`
	TimeoutSecs int      `toml:"timeout_secs"` // DefaultWakeTimeout when 0
	BackoffSecs int      `toml:"backoff_secs"` // DefaultKeeperBackoff when 0
	// Stream is a long-lived session instead of one process per wake: the
	// client reads turns on stdin (Claude Code: -p --input-format
	// stream-json --output-format stream-json --verbose; Codex: codex
	// app-server) and the keeper writes each wake into it as a turn.
	Stream []string `toml:"stream"`
	// Floor is how many sessions the keeper keeps live for the agent with
	// nothing waiting (0 or 1; needs stream): a kept session answers its
	// next letter without a start.
	Floor int `toml:"floor"`
	// TempoSecs is a scheduled wake of a kept session idle that long, a
	// turn the agent may answer with nothing (0: none; needs stream).
	TempoSecs int `toml:"tempo_secs"`
	// CacheMarginSecs is taken off the cache life the transcript shows to
	// give a session's idle deadline (0: the decider's 60 s). A kept
	// session with floor 0 ends idle at that deadline.
	CacheMarginSecs int `toml:"cache_margin_secs"`
}

// Policy is the refresh decider's policy for the pin's sessions.
func (k *KeeperPin) Policy() session.Policy {
	p := session.DefaultPolicy()
	if k.CacheMarginSecs > 0 {
		p.CacheMargin = time.Duration(k.CacheMarginSecs) * time.Second
	}
	return p
}

// Check refuses a pin the keeper could not act on (fail says how), and
// fills in the defaults of what it leaves out.
func (k *KeeperPin) Check(fail func(field, format string, args ...any) error) error {
	for _, c := range keeperChecks(k) {
		if c.bad {
			return fail(c.field, c.format, c.args...)
		}
	}
	if k.TimeoutSecs == 0 {
		k.TimeoutSecs = DefaultWakeTimeout
	}
	if k.BackoffSecs == 0 {
		k.BackoffSecs = DefaultKeeperBackoff
	}
	return nil
}

// keeperCheck is one rule a pin must keep: bad when the pin breaks it,
// and what fail is told then.
type keeperCheck struct {
	bad    bool
	field  string
	format string
	args   []any
}

// keeperChecks are a pin's rules in the order a refusal names them: the
// first one broken is the one the operator reads.
func keeperChecks(k *KeeperPin) []keeperCheck {
	return []keeperCheck{
		{!rules.ValidAgentID(k.Agent), "agent", "%q is not an agent id (%s)", []any{k.Agent, rules.AgentIDRule}},
		{k.Client != session.HostClaude && k.Client != session.HostCodex, "client", "%q: want claude or codex", []any{k.Client}},
		{len(k.Start) == 0 && len(k.Stream) == 0, "start", "the command that starts a session is required (or stream, for a long-lived one)", nil},
		{len(k.Start) > 0 && !mentions(k.Start, WakePlaceholder), "start", "must pass %s, the wake message, to the client", []any{WakePlaceholder}},
		{len(k.Resume) > 0 && (!mentions(k.Resume, SessionPlaceholder) || !mentions(k.Resume, WakePlaceholder)), "resume", "must pass both %s and %s", []any{SessionPlaceholder, WakePlaceholder}},
		{k.Worktree != "" && !filepath.IsAbs(k.Worktree), "worktree", "must be an absolute path", nil},
		{k.TimeoutSecs < 0, "timeout_secs", "must be positive", nil},
		{k.BackoffSecs < 0, "backoff_secs", "must be positive", nil},
		{len(k.Stream) > 0 && mentions(k.Stream, WakePlaceholder), "stream", "takes no %s: the keeper writes each wake into the session as a turn", []any{WakePlaceholder}},
		{k.Floor < 0 || k.Floor > 1, "floor", "is 0 or 1: one agent's sessions share its letters, so the keeper keeps at most one", nil},
		{k.Floor > 0 && len(k.Stream) == 0, "floor", "needs stream: a session started with start ends at its first answer", nil},
		{k.TempoSecs < 0 || (k.TempoSecs > 0 && len(k.Stream) == 0), "tempo_secs", "is a positive number of seconds, and needs stream", nil},
		{k.CacheMarginSecs < 0 || k.CacheMarginSecs >= 300, "cache_margin_secs", "is a number of seconds below 300, the shortest cache life", nil},
	}
}

func mentions(argv []string, placeholder string) bool {
	for _, a := range argv {
		if strings.Contains(a, placeholder) {
			return true
		}
	}
	return false
}

// Wake is one line of the keeper's journal.
type Wake struct {
	At        time.Time         `json:"at"`
	Agent     string            `json:"agent"`
	Event     string            `json:"event"` // woke, exited, failed, gave_up; a kept session's turn, tempo, flush, retry, turn_ended, turn_failed, flushed, flush_failed, ended
	How       string            `json:"how,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	Items     []string          `json:"items,omitempty"` // letter:<id>, followup:<id>
	Decision  *session.Decision `json:"decision,omitempty"`
	Exit      int               `json:"exit,omitempty"`
	Error     string            `json:"error,omitempty"`
	Log       string            `json:"log,omitempty"`
	// Waiting is what the wake was for that still waits once the session
	// ended (woken again, after a backoff when nothing moved); Again the
	// letters its unanswered turn gave back for delivery.
	Waiting []string `json:"waiting,omitempty"`
	Again   []string `json:"again,omitempty"`
	// Next is when the keeper may wake the agent again, after a backoff.
	Next *time.Time `json:"next,omitempty"`
	// Note says what went wrong that the operator can fix: a woken
	// session that ran none of m1nd's hooks, the items given up.
	Note string `json:"note,omitempty"`
	// Usage is what a kept session's ended turn cost, as its client
	// reported it.
	Usage *Usage `json:"usage,omitempty"`
	// NoResume marks a kept session's end after which it is never resumed
	// (a refresh ended it, or its resume failed).
	NoResume bool `json:"no_resume,omitempty"`
}

// JournalPath is the keeper's journal in a repository's runtime dir.
func JournalPath(runtimeDir string) string {
	return filepath.Join(runtimeDir, "keeper", "journal.jsonl")
}

// Rotation is when a kept session of pin started at started is
// refreshed: a quarter of timeout_secs before it, at most MaxRotateLead
// before.
func (k *KeeperPin) Rotation(started time.Time) time.Time {
	limit := time.Duration(k.TimeoutSecs) * time.Second
	return started.Add(limit - min(limit/4, MaxRotateLead))
}
