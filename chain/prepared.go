package chain

import (
	"context"
	"fmt"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Prepared is the one commit a human gesture writes, made ready but for
// the proof: its tree is written, no ref names it yet, and Change is what
// the gesture's proof binds. The tray hands out its challenge and commits
// it once the passkey signed; a terminal commits it at once with its
// origin. Either way it is judged by its kind's laws before the ref moves.
type Prepared struct {
	Chain   Chain
	Parent  gitstore.Hash // the head it extends; ZeroHash for a chain's first commit
	Tree    gitstore.Hash
	Meta    Commit // what names it, without the gesture's origin and proof
	Gesture string // rules.Gesture…
	Change  []byte // what the proof binds
}

// Challenge is what the gesture's passkey signs.
func (p *Prepared) Challenge() []byte { return rules.GestureChallenge(p.Gesture, p.Change) }

// Message is the commit message with the gesture's origin and proof.
func (p *Prepared) Message(origin string, proof *rules.Proof) string {
	meta := p.Meta
	meta.Origin, meta.Proof = origin, proof
	return p.Chain.Kind.Message(meta)
}

// Commit writes the gesture's commit with origin and proof, judges it with
// its kind's laws as env knows the brain (the same laws that judge it in
// a git hook, a sync and verify), and moves the ref from Parent to it. A
// refusal writes nothing a ref reaches; a ref that moved since the gesture
// was prepared wraps ErrLostRace.
func (p *Prepared) Commit(ctx context.Context, origin string, proof *rules.Proof, env Env) (gitstore.Hash, error) {
	sig, err := Signature(p.Meta.Agent, p.Meta.When)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("%s: %w", p.Chain.Ref, err)
	}
	c := &gitstore.Commit{Tree: p.Tree, Author: sig, Committer: sig, Message: p.Message(origin, proof)}
	if !p.Parent.IsZero() {
		c.Parents = []gitstore.Hash{p.Parent}
	}
	h, err := p.Chain.Repo.WriteCommit(c)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	kind, repo := p.Chain.Kind, p.Chain.Repo
	prev, err := kind.ReadParent(repo, p.Chain.Ref, c)
	if err != nil {
		return gitstore.ZeroHash, fmt.Errorf("%s: %w", p.Chain.Ref, err)
	}
	if _, err := kind.JudgeNext(repo, p.Chain.Ref, prev, h, c, env); err != nil {
		return gitstore.ZeroHash, err
	}
	if err := p.Chain.moveRef(ctx, p.Parent, h); err != nil {
		return gitstore.ZeroHash, err
	}
	return h, nil
}
