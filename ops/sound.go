package ops

import (
	"context"
	"fmt"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// What breaks the laws is shown as broken, and nothing proceeds on it: the
// views mark a head or a store that the laws refuse, with the same judge
// as verify (laws.Verdicts, kept by commit in the runtime folder), and a
// gesture or a landing on one is refused broken_history — judged fresh,
// never from the kept verdicts, which are a cache and never truth.

// Verdicts is the laws' verdicts on this brain's refs, opened once.
func (b *Flows) Verdicts() *laws.Verdicts {
	b.verdictsOnce.Do(func() { b.verdicts = laws.OpenVerdicts(b.repo) })
	return b.verdicts
}

// CheckSound refuses broken_history when one of refs (at its head now)
// breaks the laws, judged from its root now: a landing or a gesture never
// builds on forged history, whatever a cache file says.
func (b *Flows) CheckSound(ctx context.Context, refs ...string) error {
	return CheckSoundOf(ctx, b.Verdicts(), refs...)
}

// CheckSoundOf is CheckSound with the verdicts v.
func CheckSoundOf(ctx context.Context, v *laws.Verdicts, refs ...string) error {
	defer v.Save()
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := v.JudgeRefFresh(ref)
		if err != nil {
			return fmt.Errorf("judge %s: %w", ref, err)
		}
		if f != nil {
			return BrokenRefusal(f)
		}
	}
	return nil
}

// BrokenRefusal is the refusal of a gesture or landing on a ref whose
// history breaks the laws, naming the fault.
func BrokenRefusal(f *laws.RefFault) error {
	at := ""
	if len(f.Commit) >= 12 {
		at = " at " + f.Commit[:12]
	}
	return rules.Refusef(rules.BrokenHistory, "", "%s breaks the laws%s (%s: %s): nothing proceeds on it; m1nd verify names it, and the history must be put right first", f.Ref, at, f.Code, f.Lesson)
}

// Heads is every mission's head (optionally only those in phase), each
// marked with the law its chain breaks, if any (chain.Head.Fault). With
// decode, the letters are decoded for callers that read them; without,
// a reply re-sends their stored bytes.
func (b *Flows) Heads(ctx context.Context, phase string, decode bool) (*chain.HeadsView, error) {
	read := b.missions.HeadsRaw
	if decode {
		read = b.missions.Heads
	}
	view, err := read(ctx, phase)
	if err != nil {
		return nil, err
	}
	if err := b.markHeads(view.Missions); err != nil {
		return nil, err
	}
	return view, nil
}

// markHeads sets the fault of each head whose chain breaks the laws. A
// head read from the archive (Folded) is only as sound as the archive
// that folds it: a forged fold (a merge_wait mission listed as finished)
// marks every head it folds, never "folded, finished" over it.
func (b *Flows) markHeads(heads []*chain.Head) error {
	refs := make([]string, len(heads), len(heads)+1)
	commits := make([]gitstore.Hash, len(heads), len(heads)+1)
	folded := false
	for i, h := range heads {
		refs[i], commits[i] = chain.MissionRefPrefix+h.MissionID, h.Commit
		folded = folded || h.Folded
	}
	if folded {
		archive, _, err := b.repo.ReadRef(chain.ArchiveRef)
		if err != nil {
			return err
		}
		refs, commits = append(refs, chain.ArchiveRef), append(commits, archive)
	}
	v := b.Verdicts()
	faults, err := v.Judge(refs, commits)
	if err != nil {
		return fmt.Errorf("judge the mission heads: %w", err)
	}
	v.Save()
	var archiveFault *chain.HeadFault
	if folded {
		if f := faults[len(heads)]; f != nil {
			archiveFault = &chain.HeadFault{Commit: f.Commit, Refused: f.Code, Lesson: "the archive that folds it breaks the laws: " + f.Lesson}
		}
	}
	for i, f := range faults[:len(heads)] {
		switch {
		case f != nil:
			heads[i].Fault = &chain.HeadFault{Commit: f.Commit, Refused: f.Code, Lesson: f.Lesson}
		case heads[i].Folded && archiveFault != nil:
			heads[i].Fault = archiveFault
		}
	}
	return nil
}

// Faults are the refs of the brain's own state (the store, the keys, the
// runner pins) whose history breaks the laws now.
func (b *Flows) Faults(ctx context.Context) ([]*laws.RefFault, error) {
	refs := []string{brain.StoreRef, brain.KeysRef, brain.PinsRef}
	heads := make([]gitstore.Hash, len(refs))
	for i, ref := range refs {
		h, _, err := b.repo.ReadRef(ref)
		if err != nil {
			return nil, err
		}
		heads[i] = h
	}
	v := b.Verdicts()
	faults, err := v.Judge(refs, heads)
	if err != nil {
		return nil, err
	}
	v.Save()
	var out []*laws.RefFault
	for _, f := range faults {
		if f != nil {
			out = append(out, f)
		}
	}
	return out, ctx.Err()
}
