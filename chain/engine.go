package chain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Chain is one ref of a kind: its commits hold JSON documents, each
// commit's parent is the document before.
type Chain struct {
	Repo *gitstore.Repo
	Kind *Kind
	Ref  string // e.g. refs/m1nd/missions/msn_0123456789ab
}

// Doc is one document of a chain at the commit that holds it: the one
// type every kind reads and writes through.
type Doc struct {
	Ref    string
	Commit gitstore.Hash
	Meta   *gitstore.Commit // nil when read from the chain's index
	ID     string           // DocID of Body; empty for a kind whose commits hold a tree
	Body   []byte           // the canonical bytes of the kind's one file
}

// Head returns the newest document; ok is false when the ref does not exist.
func (c Chain) Head() (doc Doc, ok bool, err error) {
	h, ok, err := c.Repo.ReadRef(c.Ref)
	if err != nil || !ok {
		return Doc{}, ok, err
	}
	body, meta, err := c.Repo.ReadFileAt(h, c.Kind.File)
	if err != nil {
		return Doc{}, false, fmt.Errorf("%s at %s: %w", c.Ref, h, err)
	}
	return c.doc(h, meta, body), true, nil
}

func (c Chain) doc(h gitstore.Hash, meta *gitstore.Commit, body []byte) Doc {
	return Doc{Ref: c.Ref, Commit: h, Meta: meta, ID: DocID(body), Body: body}
}

// Walk visits the documents from newest to oldest along first parents
// until fn returns gitstore.ErrStopWalk or an error.
func (c Chain) Walk(from gitstore.Hash, fn func(Doc) error) error {
	return c.Repo.WalkFirstParent(from, func(h gitstore.Hash, meta *gitstore.Commit) error {
		body, err := c.Repo.ReadFileInTree(meta.Tree, c.Kind.File)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", c.Ref, h, err)
		}
		return fn(c.doc(h, meta, body))
	})
}

// Trailer is one "Key: value" line at the end of a commit message.
type Trailer struct{ Key, Value string }

// AgentTrailer names the writer in every m1nd commit's message. The
// engine writes it from Commit.Agent; the laws find replaced m1nd commits
// by it (AgentOf reads it).
const AgentTrailer = "M1nd-Agent"

// Commit is what a writer hands the engine with a document: who writes
// it, when, and what its kind's Describe names it by. The engine writes
// the message (Kind.Message): the subject and trailers the kind makes of
// Doc, a human gesture's origin and proof, and the AgentTrailer.
type Commit struct {
	Agent string    // the writer, the commit's author and committer (see Signature), and its AgentTrailer
	When  time.Time // the document's own time: the same document on the same parent is the same commit
	// Doc is what the kind's Describe makes the subject and the kind's own
	// trailers from: the document itself (a letter, a fold) or the kind's
	// account of the change (a store operation, a key change).
	Doc any
	// Origin is the origin a human gesture's commit names (rules.OriginTrailer),
	// and Proof its passkey's proof; empty for an agent's write.
	Origin string
	Proof  *rules.Proof
	// Attestation is a runner's signature over the gate a merge_wait
	// letter names (rules.AttestationTrailer); nil for every other commit.
	Attestation *rules.Attestation
	// Keep are parents after the previous document, for a kind whose
	// commits keep other commits reachable (Kind.KeepParents: a fold keeps
	// the chains it folds); empty for every other kind.
	Keep []gitstore.Hash
}

// Message is the commit message of a commit of kind k: the subject, a
// blank line, the kind's trailers, the origin and proof of a gesture, and
// the AgentTrailer. It is the one place an m1nd commit message is spelled.
func (k *Kind) Message(meta Commit) string {
	subject, trailers := k.describe(meta.Doc)
	return message(subject, trailers, meta)
}

// GestureMessage is what a judge reads of a gesture's commit before there
// is one (a terminal asking whether its gesture could count): its origin
// and proof, named as Kind.Message names them.
func GestureMessage(origin string, proof *rules.Proof) string {
	return message("", nil, Commit{Origin: origin, Proof: proof})
}

func message(subject string, trailers []Trailer, meta Commit) string {
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	for _, t := range trailers {
		fmt.Fprintf(&b, "%s: %s\n", t.Key, t.Value)
	}
	if meta.Origin != "" {
		fmt.Fprintf(&b, "%s: %s\n", rules.OriginTrailer, meta.Origin)
	}
	if meta.Proof != nil {
		fmt.Fprintf(&b, "%s: %s\n", rules.ProofTrailer, rules.EncodeProof(meta.Proof))
	}
	if meta.Attestation != nil {
		fmt.Fprintf(&b, "%s: %s\n", rules.AttestationTrailer, meta.Attestation.Trailer())
	}
	fmt.Fprintf(&b, "%s: %s\n", AgentTrailer, meta.Agent)
	return b.String()
}

// AgentOf is the writer a commit message names in its AgentTrailer; ok is
// false for a commit m1nd did not write.
func AgentOf(message string) (agent string, ok bool) {
	return TrailerValue(message, AgentTrailer)
}

// OriginOf is the origin a commit message names in its rules.OriginTrailer:
// a human gesture's, or empty. The laws judge it with its proof.
func OriginOf(message string) string {
	origin, _ := TrailerValue(message, rules.OriginTrailer)
	return origin
}

// GestureOf reads a gesture's origin and proof from its commit message, as
// Kind.Message wrote them; a proof trailer that does not decode is refused.
func GestureOf(message string) (origin string, proof *rules.Proof, err error) {
	if value, ok := TrailerValue(message, rules.ProofTrailer); ok {
		if proof, err = rules.DecodeProof(value); err != nil {
			return "", nil, err
		}
	}
	return OriginOf(message), proof, nil
}

// Signature is the commit identity of agent at when: its ref-safe name
// (runnerd:r1 is runnerd+r1), with @m1nd as the mail domain, to the second
// in UTC. Every writer of every kind signs through it.
func Signature(agent string, when time.Time) (gitstore.Signature, error) {
	name, err := AgentRefName(agent)
	if err != nil {
		return gitstore.Signature{}, err
	}
	if err := rules.CheckCommitDate(when, time.Now()); err != nil {
		return gitstore.Signature{}, err
	}
	return gitstore.Signature{Name: name, Email: name + "@m1nd", When: when.UTC().Truncate(time.Second)}, nil
}

// ErrLostRace is wrapped by Append when the ref moved between the caller's
// read and the write; it carries the *gitstore.StaleRefError.
var ErrLostRace = errors.New("chain head moved")

// Append writes body as the next document after parent (ZeroHash for the
// first), in a tree holding the kind's one file, and moves the ref from
// parent to the new commit (see AppendTree).
func (c Chain) Append(ctx context.Context, parent gitstore.Hash, body []byte, meta Commit) (gitstore.Hash, error) {
	blob, err := c.Repo.WriteBlob(body)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	tree, err := c.Repo.WriteTree([]gitstore.TreeEntry{{Name: c.Kind.File, Mode: gitstore.ModeFile, Hash: blob}})
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return c.AppendTree(ctx, parent, tree, meta)
}

// AppendTree writes a commit of tree after parent and moves the ref from
// parent to it. Objects are written before the ref moves, so a crash at any
// point leaves the ref naming a complete commit. When the ref is no longer
// at parent nothing points at the new objects and the error wraps
// ErrLostRace.
func (c Chain) AppendTree(ctx context.Context, parent, tree gitstore.Hash, meta Commit) (gitstore.Hash, error) {
	sig, err := Signature(meta.Agent, meta.When)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("%s: %w", c.Ref, err)
	}
	commit := &gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: c.Kind.Message(meta)}
	if !parent.IsZero() {
		commit.Parents = []gitstore.Hash{parent}
	}
	if len(meta.Keep) > 0 {
		if !c.Kind.KeepParents {
			return gitstore.ZeroHash, fmt.Errorf("%s: a %s commit has one parent", c.Ref, c.Kind.Name)
		}
		commit.Parents = append(commit.Parents, meta.Keep...)
	}
	h, err := c.Repo.WriteCommit(commit)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	return h, c.moveRef(ctx, parent, h)
}

// moveRef moves the chain's ref from parent to h, then keeps m1nd's refs
// packed (gitstore.KeepPacked): git's housekeeping starts the
// reference-transaction hook for every loose ref it prunes, so m1nd never
// leaves many. Packing is housekeeping: the document is written whatever
// it meets.
func (c Chain) moveRef(ctx context.Context, parent, h gitstore.Hash) error {
	if err := c.Repo.UpdateRef(ctx, c.Ref, parent, h); err != nil {
		var stale *gitstore.StaleRefError
		if errors.As(err, &stale) {
			return fmt.Errorf("%w: %w", ErrLostRace, err)
		}
		return err
	}
	c.Repo.KeepPacked(ctx, c.Ref, RefRoot)
	return nil
}

// RefRoot is where every m1nd ref lives.
const RefRoot = "refs/m1nd/"

// raceAttempts bounds how often AppendUnique appends again after losing a
// race, for kinds whose documents name no head.
const raceAttempts = 5

// AppendUnique appends body to the chain's head unless a document with the
// same id is already on the chain: then deduped is true and commit is the
// one that holds it. When another writer moves the ref first, a RaceRetry
// kind appends again on the new head; a RaceStale kind returns the error,
// wrapping ErrLostRace, for the caller to refuse.
func (c Chain) AppendUnique(ctx context.Context, body []byte, meta Commit) (commit gitstore.Hash, deduped bool, err error) {
	id := DocID(body)
	for attempt := 1; ; attempt++ {
		head, ok, err := c.Repo.ReadRef(c.Ref)
		if err != nil {
			return gitstore.ZeroHash, false, err
		}
		if ok {
			docs, err := c.Docs(head)
			if err != nil {
				return gitstore.ZeroHash, false, err
			}
			for _, d := range docs {
				if d.ID == id {
					return d.Commit, true, nil
				}
			}
		}
		commit, err := c.Append(ctx, head, body, meta)
		if errors.Is(err, ErrLostRace) && c.Kind.Race == RaceRetry && attempt < raceAttempts {
			continue
		}
		return commit, false, err
	}
}

// ReadAll returns every document of every chain of kind, each chain oldest
// first, through the chains' indexes. Refs under the kind's prefix whose
// names are not the kind's are skipped: someone wrote them by hand.
func ReadAll(ctx context.Context, repo *gitstore.Repo, kind *Kind) ([]Doc, error) {
	refs, err := repo.ListRefs(kind.Prefix)
	if err != nil {
		return nil, err
	}
	var out []Doc
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !kind.Owns(r.Name) || kind.ValidName != nil && !kind.ValidName(r.Name[len(kind.Prefix):]) {
			continue
		}
		docs, err := Chain{Repo: repo, Kind: kind, Ref: r.Name}.Docs(r.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}
