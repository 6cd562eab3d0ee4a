package chain

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
)

// The caches in the runtime dir (never truth, never refs) hold documents
// as lines "<commit> <canonical bytes>": canonical bytes never hold a new
// line, so a body that does is simply not cached.

// appendCacheLine adds one line for body at commit h; false when body holds
// a new line and cannot be cached.
func appendCacheLine(buf *bytes.Buffer, h gitstore.Hash, body []byte) bool {
	if bytes.IndexByte(body, '\n') >= 0 {
		return false
	}
	buf.WriteString(h.String())
	buf.WriteByte(' ')
	buf.Write(body)
	buf.WriteByte('\n')
	return true
}

// parseCacheLines calls fn for each line of data, in order; false when a
// line is damaged (the caller then starts over).
func parseCacheLines(data []byte, fn func(h gitstore.Hash, body []byte)) bool {
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if len(line) < 42 || line[40] != ' ' {
			return false
		}
		h, err := gitstore.ParseHash(string(line[:40]))
		if err != nil {
			return false
		}
		fn(h, line[41:])
	}
	return true
}

// docIndexDir holds one index file per chain, at the ref's path below
// refs/m1nd/.
const docIndexDir = "docs-v1"

// Docs returns the chain's documents at head, oldest first, through an
// index in the runtime dir keyed by the head it was built from. When the
// ref moved (by m1nd or by plain git) the index is extended from the new
// head back to the old one, or rebuilt when the old head left the history.
// A file that cannot be read is rebuilt, one that cannot be written is
// skipped: the index only spares walking the whole chain on every read.
func (c Chain) Docs(head gitstore.Hash) ([]Doc, error) {
	path := filepath.Join(c.Repo.RuntimeDir(), "cache", docIndexDir, filepath.FromSlash(strings.TrimPrefix(c.Ref, RefRoot)))
	cached, docs := loadDocIndex(path, c.Ref)
	if cached == head {
		return docs, nil
	}
	var fresh []Doc
	found := cached.IsZero()
	err := c.Walk(head, func(d Doc) error {
		if d.Commit == cached {
			found = true
			return gitstore.ErrStopWalk
		}
		fresh = append(fresh, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		docs = nil // the old head left the history: rebuilt
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		docs = append(docs, fresh[i])
	}
	saveDocIndex(path, head, docs)
	return docs, nil
}

// loadDocIndex reads an index file: a header line "<head>", then one cache
// line per document, oldest first. A missing or damaged file is empty.
func loadDocIndex(path, ref string) (gitstore.Hash, []Doc) {
	data, err := gitstore.ReadRuntime(path, -1)
	if err != nil {
		return gitstore.ZeroHash, nil
	}
	header, data, _ := bytes.Cut(data, []byte("\n"))
	head, err := gitstore.ParseHash(string(header))
	if err != nil {
		return gitstore.ZeroHash, nil
	}
	var docs []Doc
	if !parseCacheLines(data, func(h gitstore.Hash, body []byte) {
		docs = append(docs, Doc{Ref: ref, Commit: h, ID: DocID(body), Body: body})
	}) {
		return gitstore.ZeroHash, nil
	}
	return head, docs
}

// saveDocIndex writes the index; a body holding a new line (not written by
// m1nd) leaves the chain unindexed rather than the index wrong.
func saveDocIndex(path string, head gitstore.Hash, docs []Doc) {
	var buf bytes.Buffer
	buf.WriteString(head.String())
	buf.WriteByte('\n')
	for _, d := range docs {
		if !appendCacheLine(&buf, d.Commit, d.Body) {
			os.Remove(path)
			return
		}
	}
	_ = gitstore.WriteFileAtomic(path, buf.Bytes(), 0o600)
}
