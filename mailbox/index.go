package mailbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// indexEntry is one letter of a mail ref: its commit, id and bytes.
type indexEntry struct {
	Commit gitstore.Hash
	ID     string
	Body   []byte
}

// refIndex is a cache of one mail ref's letters, oldest first, keyed by
// the head it was built from. It lives in the runtime dir and is never
// truth: when the ref moved (by m1nd or by plain git) it is extended from
// the new head back to the old one, or rebuilt when the old head is no
// longer in the history; a file that cannot be read is rebuilt, one that
// cannot be written is skipped.
type refIndex struct {
	path    string
	head    gitstore.Hash
	entries []indexEntry
}

const indexDir = "mail-v1"

func indexPath(repo *gitstore.Repo, ref string) string {
	return filepath.Join(repo.RuntimeDir(), "cache", indexDir, filepath.FromSlash(strings.TrimPrefix(ref, RefPrefix)))
}

// loadRefIndex reads the cache of ref; a missing or damaged one is empty.
// The file is a header line "<head>" and then "<commit> <body>" lines.
func loadRefIndex(repo *gitstore.Repo, ref string) *refIndex {
	x := &refIndex{path: indexPath(repo, ref)}
	data, err := os.ReadFile(x.path)
	if err != nil {
		return x
	}
	header, data, _ := bytes.Cut(data, []byte("\n"))
	head, err := gitstore.ParseHash(string(header))
	if err != nil {
		return x
	}
	var entries []indexEntry
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if len(line) < 42 || line[40] != ' ' {
			return x
		}
		h, err := gitstore.ParseHash(string(line[:40]))
		if err != nil {
			return x
		}
		body := line[41:]
		entries = append(entries, indexEntry{Commit: h, ID: chain.LetterID(body), Body: body})
	}
	x.head, x.entries = head, entries
	return x
}

// refresh brings the index to head and returns its entries, oldest first.
// It reports whether anything changed (so the file wants saving).
func (x *refIndex) refresh(repo *gitstore.Repo, head gitstore.Hash) ([]indexEntry, bool, error) {
	if x.head == head {
		return x.entries, false, nil
	}
	var fresh []indexEntry
	found := x.head.IsZero()
	err := repo.WalkFirstParent(head, func(h gitstore.Hash, meta *gitstore.Commit) error {
		if h == x.head {
			found = true
			return gitstore.ErrStopWalk
		}
		body, err := repo.ReadFileInTree(meta.Tree, File)
		if err != nil {
			return err
		}
		fresh = append(fresh, indexEntry{Commit: h, ID: chain.LetterID(body), Body: body})
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	for i, j := 0, len(fresh)-1; i < j; i, j = i+1, j-1 {
		fresh[i], fresh[j] = fresh[j], fresh[i]
	}
	if found {
		x.entries = append(x.entries, fresh...)
	} else {
		x.entries = fresh // the old head left the history: rebuilt
	}
	x.head = head
	return x.entries, true, nil
}

// save writes the index; a body holding a new line (not written by m1nd)
// makes the ref uncached rather than the cache wrong.
func (x *refIndex) save() {
	var buf bytes.Buffer
	buf.WriteString(x.head.String())
	buf.WriteByte('\n')
	for _, e := range x.entries {
		if bytes.IndexByte(e.Body, '\n') >= 0 {
			os.Remove(x.path)
			return
		}
		buf.WriteString(e.Commit.String())
		buf.WriteByte(' ')
		buf.Write(e.Body)
		buf.WriteByte('\n')
	}
	_ = gitstore.WriteFileAtomic(x.path, buf.Bytes(), 0o600)
}

// letters returns ref's letters at head, oldest first, through its index.
func letters(repo *gitstore.Repo, ref string, head gitstore.Hash) ([]indexEntry, error) {
	x := loadRefIndex(repo, ref)
	entries, changed, err := x.refresh(repo, head)
	if err != nil {
		return nil, err
	}
	if changed {
		x.save()
	}
	return entries, nil
}
