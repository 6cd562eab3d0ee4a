package chain

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	"github.com/m1nd/m1nd/gitstore"
)

// headCache remembers, for commits that were mission heads, what a heads
// reply needs of their letter: its id, sequence number and phase, and its
// canonical bytes. It is keyed by commit hash, in the runtime dir. A
// commit's hash fixes its tree and so its letter: an entry can be missing
// but never wrong, so refs moved by m1nd or by plain git (fetch,
// update-ref, gc) never make it stale. It is never truth: a cache that
// cannot be read is ignored, one that cannot be written is skipped.
//
// It holds the raw bytes and the few facts read from them, not decoded
// letters: a reply re-sends the bytes as they are, and decoding 100,000
// letters through encoding/json was most of a warm heads call.
type headCache struct {
	path    string
	entries map[gitstore.Hash]headEntry
}

// headEntry is one cached head letter.
type headEntry struct {
	letterID string
	seq      int64
	phase    string
	body     []byte // canonical, compact JSON
}

// HeadCachePath is where the heads cache of the repository whose runtime
// dir is given lives (a benchmark removes it to measure reads without it).
func HeadCachePath(runtimeDir string) string {
	return filepath.Join(runtimeDir, "cache", "heads-v2")
}

func loadHeadCache(repo *gitstore.Repo) *headCache {
	c := &headCache{path: HeadCachePath(repo.RuntimeDir()), entries: map[gitstore.Hash]headEntry{}}
	data, err := gitstore.ReadRuntime(c.path, -1)
	if err != nil {
		return c
	}
	ok := parseCacheLines(data, func(h gitstore.Hash, rest []byte) {
		e, good := parseHeadEntry(rest)
		if !good {
			data = nil
			return
		}
		c.entries[h] = e
	})
	if !ok || data == nil {
		c.entries = map[gitstore.Hash]headEntry{} // damaged: start over
	}
	return c
}

// parseHeadEntry reads "<letter id> <seq> <phase> <body>".
func parseHeadEntry(rest []byte) (headEntry, bool) {
	var fields [3][]byte
	for i := range fields {
		var found bool
		fields[i], rest, found = bytes.Cut(rest, []byte(" "))
		if !found || len(fields[i]) == 0 {
			return headEntry{}, false
		}
	}
	seq, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil || len(rest) == 0 || rest[0] != '{' {
		return headEntry{}, false
	}
	return headEntry{letterID: string(fields[0]), seq: seq, phase: string(fields[2]), body: rest}, true
}

// store writes the cache for exactly the given heads, replacing the file
// atomically.
func (c *headCache) store(heads []*Head) {
	var buf bytes.Buffer
	for _, h := range heads {
		if h == nil || h.Phase == "" || bytes.IndexByte([]byte(h.Phase), ' ') >= 0 {
			continue // a phase that cannot be a field is simply not cached
		}
		line := []byte(h.HeadLetterID + " " + strconv.FormatInt(h.SupersededCount+1, 10) + " " + h.Phase + " ")
		appendCacheLine(&buf, h.Commit, append(line, h.Head...))
	}
	_ = gitstore.WriteFileAtomic(c.path, buf.Bytes(), 0o600)   // a cache that cannot be written is skipped
	os.Remove(filepath.Join(filepath.Dir(c.path), "heads-v1")) // the cache before phases were kept
}
