// Package runnerd is the runner daemon: pinned runners, a sibling worktree
// per mission, the agent and its gate, and the phase letters that record
// them. It is the only spawner.
package runnerd
