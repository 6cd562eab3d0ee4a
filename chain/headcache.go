package chain

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/m1nd/m1nd/gitstore"
)

// headCache remembers the letter.json of commits that were heads, keyed by
// commit hash, in the runtime dir. A commit's hash fixes its tree and so its
// letter: an entry can be missing but never wrong, so refs moved by m1nd or
// by plain git (fetch, update-ref, gc) never make it stale. It is never
// truth: a cache that cannot be read is ignored, one that cannot be written
// is skipped.
type headCache struct {
	path    string
	entries map[gitstore.Hash][]byte
}

// HeadCachePath is where the heads cache of the repository whose runtime
// dir is given lives (a benchmark removes it to measure reads without it).
func HeadCachePath(runtimeDir string) string {
	return filepath.Join(runtimeDir, "cache", "heads-v1")
}

func loadHeadCache(repo *gitstore.Repo) *headCache {
	c := &headCache{path: HeadCachePath(repo.RuntimeDir()), entries: map[gitstore.Hash][]byte{}}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return c
	}
	if !parseCacheLines(data, func(h gitstore.Hash, body []byte) { c.entries[h] = body }) {
		c.entries = map[gitstore.Hash][]byte{} // damaged: start over
	}
	return c
}

// store writes the cache for exactly the given heads, replacing the file
// atomically. Bodies with a newline (not canonical) are left out.
func (c *headCache) store(heads map[gitstore.Hash][]byte) {
	var buf bytes.Buffer
	for h, body := range heads {
		appendCacheLine(&buf, h, body)
	}
	_ = gitstore.WriteFileAtomic(c.path, buf.Bytes(), 0o600) // a cache that cannot be written is skipped
}
