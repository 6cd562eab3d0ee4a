package chain

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/gitstore"
)

// RacePolicy says what an append does when another writer moved the ref
// between reading its head and moving it.
type RacePolicy int

const (
	// RaceStale: the document names the head it extends (a mission letter,
	// a store snapshot), so a moved head is the caller's refusal and is
	// never retried behind its back.
	RaceStale RacePolicy = iota
	// RaceRetry: the document names no head (mail, a memory); appending it
	// after the newer head changes nothing it says, so the append is done
	// again on the new head, a bounded number of times.
	RaceRetry
)

// Kind declares one kind of m1nd ref to the engine: where its refs live,
// what its commits hold, and how a new document must follow the one
// before it. The engine appends, reads and indexes any kind alike, and the
// laws (package laws) judge raw writes of every registered kind with the
// same walk; a kind's package registers it at init with Register.
type Kind struct {
	// Name names the kind in lessons and listings: "mission", "mail".
	Name string
	// Prefix is where the kind's refs live ("refs/m1nd/missions/"); with
	// Single it is the whole name of the kind's one ref.
	Prefix string
	Single bool
	// ValidName reports whether the part of a ref's name after Prefix names
	// a chain of this kind (nil: any). A ref that fails it is a fault.
	ValidName func(rest string) bool

	// File is the one file in each commit's tree, which holds the document's
	// canonical bytes; Decode reads and validates it. A kind whose commits
	// hold a tree of files leaves File empty and reads with ReadCommit.
	File       string
	Decode     func(body []byte) (any, error)
	ReadCommit func(objs gitstore.Objects, c *gitstore.Commit) (any, error)

	// Describe names a commit of this kind: its subject, what `git log`
	// shows, and the kind's own trailers (never the origin, proof or agent,
	// which the engine writes), from the Doc its writer handed (Commit.Doc).
	Describe func(doc any) (subject string, trailers []Trailer)

	// Follows judges a new document against the one before it (prev is nil
	// for a chain's first document) and returns a refusal when it breaks
	// the kind's laws. next.Meta is the new commit.
	Follows func(prev, next *Judged, env Env) error

	// Deletable: a ref of this kind may be deleted (a reader prunes its
	// mail); every other kind's history only grows.
	Deletable bool
	// Race is what an append does on a lost ref race.
	Race RacePolicy
	// KeepParents: a commit may have parents after the previous document's
	// (its first parent), which it keeps reachable (the archive: a fold
	// keeps the chains it folds). Every other kind's commits have one.
	KeepParents bool
}

// Env is what the machine judging a commit knows beyond the objects.
type Env struct {
	// RuntimeDir is this repository's runtime dir, where agent keys live;
	// empty where there is none to consult (a remote's pre-receive).
	RuntimeDir string
	// Landings is the store as of the update being judged, for the landed
	// law; nil when there is none (a landed letter is then refused).
	Landings Landings
	// Gestures judges a human gesture's commit against the brain's keys;
	// nil: only its origin trailer is read.
	Gestures Gestures
	// Gates judges a merge_wait's gate: a runner's signature by the key
	// the approved runner pins hold for it; nil where the pins cannot be
	// read (a merge_wait naming a runner is then refused).
	Gates GateProofs
	// Work answers where a mission's work branch is, for a letter being
	// written here (Missions.Post); nil where branches are not judged (a
	// remote, history read by verify, whose branches may since have been
	// pruned).
	Work WorkGuard
}

// Gestures judges the commit of a human gesture (an archive, a landing, a
// receipt import, a ratification, an approval of runner pins): its origin
// and its proof over change, read from doc's commit message, against the
// brain's registered passkeys; doc's ref and commit say where it sits, for
// the keys that were removed since. A doc whose Commit is zero is a commit
// about to be written. The brain store implements it.
type Gestures interface {
	CheckCommit(doc *Judged, gesture string, change []byte) error
}

// Decoded is a document with the value its kind decoded from it: how the
// engine and the kinds hand documents out once they are read.
type Decoded[T any] struct {
	Doc
	Value T
}

// Judged is a document being judged, decoded once by its kind.
type Judged = Decoded[any]

// Owns reports whether ref is of kind k.
func (k *Kind) Owns(ref string) bool {
	if k.Single {
		return ref == k.Prefix
	}
	return strings.HasPrefix(ref, k.Prefix) && len(ref) > len(k.Prefix)
}

// registry holds the kinds: written only by Register, while packages
// initialise (like image.RegisterFormat), and read-only after.
var registry struct {
	sync.RWMutex
	kinds []*Kind
}

// Register declares a kind of ref. It panics on a declaration the engine
// cannot use (no name, a prefix outside refs/m1nd/, one that overlaps a
// registered kind's, no way to read a commit): a programming error that
// every test finds at start-up.
func Register(k *Kind) {
	switch {
	case k.Name == "" || !strings.HasPrefix(k.Prefix, RefRoot):
		panic(fmt.Sprintf("chain.Register: kind %q: want a name and a prefix under refs/m1nd/", k.Name))
	case !k.Single && !strings.HasSuffix(k.Prefix, "/"):
		panic(fmt.Sprintf("chain.Register: kind %q: a prefix of many refs ends in /", k.Name))
	case k.Describe == nil:
		panic(fmt.Sprintf("chain.Register: kind %q: want Describe, which names its commits", k.Name))
	case (k.File == "") == (k.ReadCommit == nil) || (k.File != "") != (k.Decode != nil):
		panic(fmt.Sprintf("chain.Register: kind %q: want File with Decode, or ReadCommit", k.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	for _, o := range registry.kinds {
		if o.Name == k.Name || strings.HasPrefix(o.Prefix, k.Prefix) || strings.HasPrefix(k.Prefix, o.Prefix) {
			panic(fmt.Sprintf("chain.Register: kind %q overlaps kind %q", k.Name, o.Name))
		}
	}
	registry.kinds = append(registry.kinds, k)
	sort.Slice(registry.kinds, func(i, j int) bool { return registry.kinds[i].Prefix < registry.kinds[j].Prefix })
}

// KindOf returns the registered kind of ref, if any.
func KindOf(ref string) (*Kind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	for _, k := range registry.kinds {
		if k.Owns(ref) {
			return k, true
		}
	}
	return nil, false
}

// Kinds returns the registered kinds, ordered by prefix.
func Kinds() []*Kind {
	registry.RLock()
	defer registry.RUnlock()
	return append([]*Kind(nil), registry.kinds...)
}

// ReadDocument reads and decodes the document of commit c: the kind's one
// file, which must stand alone in the tree as a plain file, or the kind's
// own reading of the tree.
func (k *Kind) ReadDocument(objs gitstore.Objects, c *gitstore.Commit) (body []byte, value any, err error) {
	if k.ReadCommit != nil {
		value, err = k.ReadCommit(objs, c)
		return nil, value, err
	}
	entries, err := objs.TreeEntries(c.Tree)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if e.Name != k.File || (e.Mode != gitstore.ModeFile && e.Mode != gitstore.ModeExecutable) {
			continue
		}
		if len(entries) > 1 {
			return nil, nil, fmt.Errorf("the tree holds %d entries, not %s alone", len(entries), k.File)
		}
		if body, err = objs.ReadBlob(e.Hash); err != nil {
			return nil, nil, err
		}
		value, err = k.Decode(body)
		return body, value, err
	}
	return nil, nil, gitstore.ErrNoSuchFile
}

// ConflictsPrefix is where `m1nd sync` parks local history that lost a race
// (refs/m1nd/conflicts/<the ref under refs/m1nd/>/<its head, 12 hex>): no
// kind of its own, never pushed, listed by status and verify until the
// owner re-posts what it holds and deletes it.
const ConflictsPrefix = RefRoot + "conflicts/"
