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

const headCacheFile = "heads-v1"

func loadHeadCache(repo *gitstore.Repo) *headCache {
	c := &headCache{path: filepath.Join(repo.RuntimeDir(), "cache", headCacheFile), entries: map[gitstore.Hash][]byte{}}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return c
	}
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(line) < 42 || line[40] != ' ' {
			c.entries = map[gitstore.Hash][]byte{} // damaged: start over
			return c
		}
		h, err := gitstore.ParseHash(string(line[:40]))
		if err != nil {
			c.entries = map[gitstore.Hash][]byte{}
			return c
		}
		c.entries[h] = line[41:]
	}
	return c
}

// store writes the cache for exactly the given heads, replacing the file
// atomically. Bodies with a newline (not canonical) are left out.
func (c *headCache) store(heads map[gitstore.Hash][]byte) {
	var buf bytes.Buffer
	for h, body := range heads {
		if bytes.IndexByte(body, '\n') >= 0 {
			continue
		}
		buf.WriteString(h.String())
		buf.WriteByte(' ')
		buf.Write(body)
		buf.WriteByte('\n')
	}
	_ = gitstore.WriteFileAtomic(c.path, buf.Bytes(), 0o600) // a cache that cannot be written is skipped
}
