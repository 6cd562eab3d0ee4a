// Package runnerd is the runner daemon: pinned runners, a sibling worktree
// per mission, the agent and its gate. This file holds the shared local
// secret that authenticates the daemon to the owner on loopback.
package runnerd
