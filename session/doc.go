// Package session holds the agent-session hooks Claude Code and Codex run
// around tool calls (letters dropped into a live session as data, a
// bounded rehydration at session start, the compaction backstop) and their
// installation into the hosts' settings files, and the registry of live
// sessions the hooks keep in the runtime folder (liveness checked against
// the process, never trusted from the record). A hook never fails its host
// for m1nd's own errors.
package session
