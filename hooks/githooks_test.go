package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/m1nd/m1nd/gates"
)

// TestCheckTransactionPackedRefs is the hook's view of packed refs: the
// loose copy that `git pack-refs` deletes is no deletion, the same deletion
// without a loose copy is, and a zero old value is read from packed-refs.
func TestCheckTransactionPackedRefs(t *testing.T) {
	r := newChainRig(t)
	a, refA := r.mergeWait()
	b, refB := r.mergeWait()
	// Packed with the loose files kept: each loose file holds its packed
	// value, as when pack-refs is about to delete it.
	r.g.Git("pack-refs", "--all", "--no-prune")
	noise := []Update{{Old: a.Commit, Ref: refA}, {Old: b.Commit, Ref: refB}}
	if faults := CheckTransaction(r.repo, noise); len(faults) != 0 {
		t.Fatalf("pack-refs noise refused: %v", faults)
	}
	// A deletion without the old value is never pack-refs at work.
	if faults := CheckTransaction(r.repo, []Update{{Ref: refB}}); len(faults) != 1 || faults[0].Code != string(gates.InvalidTransition) {
		t.Fatalf("a deletion without an old value: %v", faults)
	}
	// Once the loose copy is gone the same deletion would bury the chain.
	if err := os.Remove(filepath.Join(r.repo.CommonDir(), filepath.FromSlash(refA))); err != nil {
		t.Fatal(err)
	}
	faults := CheckTransaction(r.repo, noise)
	if len(faults) != 1 || faults[0].Ref != refA || faults[0].Code != string(gates.InvalidTransition) {
		t.Fatalf("a deletion of a packed-only ref: %v", faults)
	}
	// A writer that gives no old value: the ref's value is read from
	// packed-refs, so moving it back to its parent is a rewrite.
	first, _ := r.repo.ReadCommit(a.Commit)
	faults = CheckTransaction(r.repo, []Update{{New: first.Parents[0], Ref: refA}})
	if len(faults) != 1 || faults[0].Code != string(gates.InvalidTransition) {
		t.Fatalf("a rewrite of a packed-only ref without an old value: %v", faults)
	}
}
