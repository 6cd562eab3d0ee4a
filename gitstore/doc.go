// Package gitstore is m1nd's only door to git's on-disk format. It opens a
// repository from its root, a subfolder or a linked worktree, reads and writes
// loose objects itself, reads packed ones with its own lock-free reader over
// the mapped packs (git's own `cat-file --batch` reads what that reader
// leaves alone), reads git's config files with a port of git's parser, and
// moves refs with git's own lockfile protocol so that it interoperates with
// concurrent git processes.
//
// It imports no git library: the hot verbs start in a few milliseconds, and
// go-git's packages alone took a millisecond of every start to initialise
// (its config parser's encoding/gob, its URL regexps). The real git binary,
// which m1nd needs anyway, answers the rare rest.
package gitstore
