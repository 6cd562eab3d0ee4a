package ops

import (
	"context"
	"fmt"

	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/laws"
)

// What breaks the laws is shown as broken, and nothing proceeds on it: the
// views mark a head or a store that the laws refuse, with the same judge
// as verify (laws.Verdicts, kept by commit in the runtime folder), and a
// gesture or a landing on one is refused broken_history.

// Verdicts is the laws' verdicts on this brain's refs, opened once.
func (b *Brain) Verdicts() *laws.Verdicts {
	b.verdictsOnce.Do(func() { b.verdicts = laws.OpenVerdicts(b.Repo) })
	return b.verdicts
}

// CheckSound refuses broken_history when one of refs (at its head now)
// breaks the laws: a landing or a gesture never builds on forged history.
func (b *Brain) CheckSound(ctx context.Context, refs ...string) error {
	v := b.Verdicts()
	defer v.Save()
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := v.JudgeRef(ref)
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
	return gates.Refusef(gates.BrokenHistory, "", "%s breaks the laws%s (%s: %s): nothing proceeds on it; m1nd verify names it, and the history must be put right first", f.Ref, at, f.Code, f.Lesson)
}
