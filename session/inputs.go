package session

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/m1nd/m1nd/memory"
)

// A conversation keeps the system prompt it started with (research §2.5
// rule 1: a resumed or kept session never sees a changed input), so a
// session the keeper holds is refreshed when what its start was built
// from changes. Inputs is that, read at the start: the client's
// instruction files and the settings that carry m1nd's hooks, each by
// the digest of its content, and the memory header (the memories the
// session's start listed, by id).
type Inputs struct {
	// Files maps each input file to the sha256 of its content, "" when
	// it does not exist.
	Files map[string]string
	// Memories are the ids of the memories the start listed.
	Memories []string
}

// maxInputFile bounds what is read of one input file: a larger one is
// digested as far as this.
const maxInputFile = 4 << 20

// InputFiles are the files client reads into a session started in dir:
// its instruction files there, and the settings that hold m1nd's hooks
// (the project's and the user's, as `m1nd hook install` writes them).
func InputFiles(client, dir string) []string {
	var files []string
	switch client {
	case HostClaude:
		files = []string{
			filepath.Join(dir, "CLAUDE.md"), filepath.Join(dir, ".claude", "CLAUDE.md"), filepath.Join(dir, "CLAUDE.local.md"),
			filepath.Join(dir, ".claude", "settings.local.json"),
		}
	case HostCodex:
		files = []string{filepath.Join(dir, "AGENTS.md"), filepath.Join(dir, "AGENTS.override.md"), CodexConfigPath()}
	default:
		return nil
	}
	for _, user := range []bool{false, true} {
		if p, err := SettingsPath(client, dir, user); err == nil {
			files = append(files, p)
		}
	}
	return files
}

// ReadInputs reads a session's inputs now: client's files for a session
// in dir, and the memory header agent's start lists from v.
func ReadInputs(client, dir string, v *memory.View, agent string) Inputs {
	in := Inputs{Files: map[string]string{}}
	for _, f := range InputFiles(client, dir) {
		in.Files[f] = fileDigest(f)
	}
	for _, lane := range headerMemories(v, agent) {
		for _, m := range lane {
			in.Memories = append(in.Memories, m.ID)
		}
	}
	return in
}

// fileDigest is the sha256 of path's content ("" when it is not a
// regular file, a link to one included: CLAUDE.md is often a link to
// AGENTS.md).
func fileDigest(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO never blocks the keeper
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxInputFile)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Changed says which of the inputs read at a session's start (in) are no
// longer what they were, read again now in dir with v: the files whose
// content changed, appeared or went (by their path relative to dir when
// inside it), and "memory" when a memory the start listed is no longer in
// force. Memories written since are not a change: the session wrote them,
// or heard of them in a letter.
func (in Inputs) Changed(client, dir string, v *memory.View) []string {
	var out []string
	for _, f := range InputFiles(client, dir) {
		was, ok := in.Files[f]
		if ok && fileDigest(f) != was {
			out = append(out, shortPath(dir, f))
		}
	}
	inForce := map[string]bool{}
	for _, m := range v.Memories {
		if m.State == memory.StateInForce {
			inForce[m.ID] = true
		}
	}
	if slices.ContainsFunc(in.Memories, func(id string) bool { return !inForce[id] }) {
		out = append(out, "memory")
	}
	return out
}

func shortPath(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
