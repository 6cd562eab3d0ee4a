package chain

import (
	"fmt"

	"github.com/m1nd/m1nd/gitstore"
)

// ReadJudged reads and decodes the document of commit h (c, read already)
// on ref as kind k reads it: the one value every law is asked about. A read
// that fails returns the body read so far, so a caller can tell a document
// that does not decode from one that is not there.
func (k *Kind) ReadJudged(objs gitstore.Objects, ref string, h gitstore.Hash, c *gitstore.Commit) (*Judged, error) {
	body, value, err := k.ReadDocument(objs, c)
	j := &Judged{Doc: Doc{Ref: ref, Commit: h, Meta: c, Body: body}, Value: value}
	if body != nil {
		j.ID = DocID(body)
	}
	return j, err
}

// JudgeNext is the one law a new commit of a chain meets, whoever wrote it:
// its document decodes, and follows the document of its parent (prev, nil
// for a chain's first commit) by the kind's rules, as env knows the brain.
// The laws of raw writes (package laws) ask it for every new commit they
// walk, and a prepared gesture asks it before its ref moves (Prepared).
func (k *Kind) JudgeNext(objs gitstore.Objects, ref string, prev *Judged, h gitstore.Hash, c *gitstore.Commit, env Env) (*Judged, error) {
	next, err := k.ReadJudged(objs, ref, h, c)
	if err != nil {
		return next, err
	}
	return next, k.follows(prev, next, env)
}

// ReadParent reads the document of c's parent, the one a new commit c
// follows; nil when c is a chain's first commit.
func (k *Kind) ReadParent(objs gitstore.Objects, ref string, c *gitstore.Commit) (*Judged, error) {
	if len(c.Parents) == 0 {
		return nil, nil
	}
	h := c.Parents[0]
	parent, err := objs.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("the parent commit cannot be read: %w", err)
	}
	prev, err := k.ReadJudged(objs, ref, h, parent)
	if err != nil {
		return nil, fmt.Errorf("the previous %s commit does not read: %w", k.Name, err)
	}
	return prev, nil
}
