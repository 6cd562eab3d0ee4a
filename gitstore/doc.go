// Package gitstore is m1nd's only door to git's on-disk format. It opens a
// repository from its root, a subfolder or a linked worktree, reads and writes
// loose objects itself, reads packed ones with its own lock-free reader over
// the mapped packs (go-git's filesystem storage is the fallback for what that
// reader leaves alone), and moves refs with git's own lockfile protocol so
// that it interoperates with concurrent git processes.
//
// It imports go-git's storage and plumbing subpackages only, never the root
// package: the root's transports cost milliseconds of process start-up.
package gitstore
