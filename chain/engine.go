// Package chain is m1nd's one engine for "a ref whose commits are JSON
// documents": each commit's tree holds exactly one file, its parent is the
// previous document, and the ref head moves only by compare-and-swap. The
// mission letter (m1nd-mission-letter-v0) is the first document built on it;
// the mailbox and memories reuse the same engine.
package chain

import (
	"context"
	"errors"
	"fmt"

	"github.com/m1nd/m1nd/gitstore"
)

// Chain is one ref of JSON documents.
type Chain struct {
	Repo *gitstore.Repo
	Ref  string // e.g. refs/m1nd/missions/msn_0123456789ab
	File string // the one file in every commit's tree, e.g. letter.json
}

// Link is one document of a chain and the commit that holds it.
type Link struct {
	Commit gitstore.Hash
	Body   []byte
	Meta   *gitstore.Commit
}

// Head returns the newest link; ok is false when the ref does not exist.
func (c Chain) Head() (link Link, ok bool, err error) {
	h, ok, err := c.Repo.ReadRef(c.Ref)
	if err != nil || !ok {
		return Link{}, ok, err
	}
	link, err = c.read(h)
	return link, err == nil, err
}

func (c Chain) read(h gitstore.Hash) (Link, error) {
	body, meta, err := c.Repo.ReadFileAt(h, c.File)
	if err != nil {
		return Link{}, fmt.Errorf("%s at %s: %w", c.Ref, h, err)
	}
	return Link{Commit: h, Body: body, Meta: meta}, nil
}

// Walk visits the links from newest to oldest along first parents until fn
// returns gitstore.ErrStopWalk or an error.
func (c Chain) Walk(from gitstore.Hash, fn func(Link) error) error {
	return c.Repo.WalkFirstParent(from, func(h gitstore.Hash, meta *gitstore.Commit) error {
		body, err := c.Repo.ReadFileInTree(meta.Tree, c.File)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", c.Ref, h, err)
		}
		return fn(Link{Commit: h, Body: body, Meta: meta})
	})
}

// Commit describes the commit Append writes around a document.
type Commit struct {
	Author  gitstore.Signature // also used as committer, so the commit is a pure function of its inputs
	Message string
}

// ErrLostRace is wrapped by Append when the ref moved between the caller's
// read and the write; it carries the *gitstore.StaleRefError.
var ErrLostRace = errors.New("chain head moved")

// Append writes body as the next document after parent (ZeroHash for the
// first) and moves the ref from parent to the new commit. Objects are
// written before the ref moves, so a crash at any point leaves the ref
// naming a complete commit. When the ref is no longer at parent nothing
// points at the new objects and the error wraps ErrLostRace.
func (c Chain) Append(ctx context.Context, parent gitstore.Hash, body []byte, meta Commit) (gitstore.Hash, error) {
	blob, err := c.Repo.WriteBlob(body)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	tree, err := c.Repo.WriteTree([]gitstore.TreeEntry{{Name: c.File, Mode: "100644", Hash: blob}})
	if err != nil {
		return gitstore.ZeroHash, err
	}
	commit := &gitstore.Commit{Tree: tree, Author: meta.Author, Committer: meta.Author, Message: meta.Message}
	if !parent.IsZero() {
		commit.Parents = []gitstore.Hash{parent}
	}
	h, err := c.Repo.WriteCommit(commit)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	if err := c.Repo.UpdateRef(ctx, c.Ref, parent, h); err != nil {
		var stale *gitstore.StaleRefError
		if errors.As(err, &stale) {
			return gitstore.ZeroHash, fmt.Errorf("%w: %w", ErrLostRace, err)
		}
		return gitstore.ZeroHash, err
	}
	return h, nil
}
