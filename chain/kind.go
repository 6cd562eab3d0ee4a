package chain

import (
	"fmt"
	"slices"
	"sort"
	"strings"

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
// laws (package laws) judge raw writes of every kind in the list they are
// given with the same walk. A kind is made once, as a package value, by
// Define from its typed Spec; its Shape, read-only, says where it lives
// and what it allows.
type Kind struct {
	Shape

	// The Spec's typed hooks, each adapted once by Define to the values
	// the engine hands round (Judged, Commit.Doc).
	read     func(objs gitstore.Objects, c *gitstore.Commit) (body []byte, value any, err error)
	describe func(doc any) (subject string, trailers []Trailer)
	follows  func(prev, next *Judged, env Env) error
}

// Shape is what a kind says of its refs, whatever its documents are.
type Shape struct {
	// Name names the kind in lessons and listings: "mission", "mail".
	Name string
	// Prefix is where the kind's refs live ("refs/m1nd/missions/"); with
	// Single it is the whole name of the kind's one ref.
	Prefix string
	Single bool
	// ValidName reports whether the part of a ref's name after Prefix names
	// a chain of this kind (nil: any). A ref that fails it is a fault.
	ValidName func(rest string) bool
	// File is the one file in each commit's tree, which holds the
	// document's canonical bytes; empty for a kind whose commits hold a tree
	// of files (Spec.ReadCommit).
	File string
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

// Spec is a kind as its package writes it: its Shape, and typed hooks. D
// is the document its commits decode to (a *Letter, a *Snapshot), N what
// a writer hands the engine to name a commit by (Commit.Doc: the document
// itself, or the kind's account of the change).
type Spec[D, N any] struct {
	Shape

	// Decode reads and validates the one file's bytes (with File); a kind
	// whose commits hold a tree of files reads the commit with ReadCommit
	// instead.
	Decode     func(body []byte) (D, error)
	ReadCommit func(objs gitstore.Objects, c *gitstore.Commit) (D, error)

	// Describe names a commit of this kind: its subject, what `git log`
	// shows, and the kind's own trailers (never the origin, proof or agent,
	// which the engine writes), from the Doc its writer handed.
	Describe func(doc N) (subject string, trailers []Trailer)

	// Follows judges a new document against the one before it (prev is nil
	// for a chain's first document) and returns a refusal when it breaks
	// the kind's laws. next.Meta is the new commit. Nil: any document
	// follows any.
	Follows func(prev, next *Decoded[D], env Env) error
}

// Define makes the kind s declares. It panics on a declaration the engine
// cannot use (no name, a prefix outside refs/m1nd/, no way to read or name
// a commit): a programming error, found as the package holding the kind
// starts, by every test of it.
func Define[D, N any](s Spec[D, N]) *Kind {
	switch {
	case s.Name == "" || !strings.HasPrefix(s.Prefix, RefRoot):
		panic(fmt.Sprintf("chain.Define: kind %q: want a name and a prefix under refs/m1nd/", s.Name))
	case !s.Single && !strings.HasSuffix(s.Prefix, "/"):
		panic(fmt.Sprintf("chain.Define: kind %q: a prefix of many refs ends in /", s.Name))
	case s.Describe == nil:
		panic(fmt.Sprintf("chain.Define: kind %q: want Describe, which names its commits", s.Name))
	case (s.File == "") == (s.ReadCommit == nil) || (s.File != "") != (s.Decode != nil):
		panic(fmt.Sprintf("chain.Define: kind %q: want File with Decode, or ReadCommit", s.Name))
	}
	k := &Kind{Shape: s.Shape}
	k.read = func(objs gitstore.Objects, c *gitstore.Commit) ([]byte, any, error) {
		var body []byte
		var value D
		var err error
		if s.ReadCommit != nil {
			value, err = s.ReadCommit(objs, c)
		} else if body, err = k.readFile(objs, c); err == nil {
			value, err = s.Decode(body)
		}
		if err != nil {
			return body, nil, err // nothing decoded: no typed nil to mistake for a value
		}
		return body, value, nil
	}
	k.describe = func(doc any) (string, []Trailer) {
		n, ok := doc.(N)
		if !ok && doc != nil {
			panic(fmt.Sprintf("chain: a %s commit is named by a %T, not a %T", s.Name, doc, n))
		}
		return s.Describe(n)
	}
	k.follows = func(prev, next *Judged, env Env) error {
		if s.Follows == nil {
			return nil
		}
		p, err := typed[D](k, prev)
		if err != nil {
			return err
		}
		n, err := typed[D](k, next)
		if err != nil {
			return err
		}
		return s.Follows(p, n, env)
	}
	return k
}

// typed is j as its kind decoded it (nil stays nil). Only the kind's own
// reading makes a Judged, so a value of another type is the engine's bug,
// said as an error rather than a panic in a git hook.
func typed[D any](k *Kind, j *Judged) (*Decoded[D], error) {
	if j == nil {
		return nil, nil
	}
	v, ok := j.Value.(D)
	if !ok {
		return nil, fmt.Errorf("a %s document decoded to %T, not %T", k.Name, j.Value, v)
	}
	return &Decoded[D]{Doc: j.Doc, Value: v}, nil
}

// Follows judges next against prev (nil for a chain's first document) by
// the kind's laws, as the kind's Spec.Follows does.
func (k *Kind) Follows(prev, next *Judged, env Env) error { return k.follows(prev, next, env) }

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
	CheckCommit(doc *Doc, gesture string, change []byte) error
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

// Kinds is the list of kinds one judge knows: the laws judge a ref by
// the kind in it that owns it, and leave a ref no kind owns to its
// caller. Made by NewKinds, which orders it by prefix.
type Kinds []*Kind

// NewKinds lists ks for a judge. A kind whose name or refs another's
// overlap is refused: the laws could not say which of them judges a ref.
func NewKinds(ks ...*Kind) (Kinds, error) {
	list := slices.Clone(ks)
	sort.Slice(list, func(i, j int) bool { return list[i].Prefix < list[j].Prefix })
	for i, k := range list {
		for _, o := range list[:i] {
			if o.Name == k.Name || strings.HasPrefix(o.Prefix, k.Prefix) || strings.HasPrefix(k.Prefix, o.Prefix) {
				return nil, fmt.Errorf("kind %q overlaps kind %q", k.Name, o.Name)
			}
		}
	}
	return list, nil
}

// Of returns the kind in s that owns ref, if any.
func (s Kinds) Of(ref string) (*Kind, bool) {
	for _, k := range s {
		if k.Owns(ref) {
			return k, true
		}
	}
	return nil, false
}

// ReadDocument reads and decodes the document of commit c: the kind's one
// file, which must stand alone in the tree as a plain file, or the kind's
// own reading of the tree.
func (k *Kind) ReadDocument(objs gitstore.Objects, c *gitstore.Commit) (body []byte, value any, err error) {
	return k.read(objs, c)
}

// readFile reads the kind's one file of commit c.
func (k *Kind) readFile(objs gitstore.Objects, c *gitstore.Commit) ([]byte, error) {
	entries, err := objs.TreeEntries(c.Tree)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name != k.File || (e.Mode != gitstore.ModeFile && e.Mode != gitstore.ModeExecutable) {
			continue
		}
		if len(entries) > 1 {
			return nil, fmt.Errorf("the tree holds %d entries, not %s alone", len(entries), k.File)
		}
		return objs.ReadBlob(e.Hash)
	}
	return nil, gitstore.ErrNoSuchFile
}

// ConflictsPrefix is where `m1nd sync` parks local history that lost a race
// (refs/m1nd/conflicts/<the ref under refs/m1nd/>/<its head, 12 hex>): no
// kind of its own, never pushed, listed by status and verify until the
// owner re-posts what it holds and deletes it.
const ConflictsPrefix = RefRoot + "conflicts/"

// TrackingRoot is where `m1nd sync` keeps what it last saw of each remote
// (refs/m1nd-sync/<remote>/<the ref under refs/m1nd/>): outside
// refs/m1nd/, so no law judges a remote's refs as this clone's.
const TrackingRoot = "refs/m1nd-sync/"
