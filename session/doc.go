// Package session holds the agent-session hooks Claude Code and Codex run
// around tool calls (letters dropped into a live session as data, a
// bounded rehydration at session start, the compaction backstop) and their
// installation into the hosts' settings files. A hook never fails its host
// for m1nd's own errors.
package session
