// Package runs holds the side records of mission runs: host-local detail
// (a worktree's path, the branch the work lands in, the landing queue's
// last finding) and the logs beside them, kept in the runtime folder and
// never in a ref. runnerd writes them; ops, the tray and the CLI read
// them.
package runs
