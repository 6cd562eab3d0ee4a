package cli

import (
	"slices"
	"testing"

	"github.com/m1nd/m1nd/chain"
)

// TestEveryShippedKindIsLinked: the laws judge the kinds registered in the
// program, so the CLI (which the git hooks, verify and sync run as) must
// link every kind m1nd ships.
func TestEveryShippedKindIsLinked(t *testing.T) {
	var names []string
	for _, k := range chain.Kinds() {
		names = append(names, k.Name)
	}
	for _, want := range []string{"atlas", "keys", "mail", "memory", "mission", "store"} {
		if !slices.Contains(names, want) {
			t.Errorf("kind %q is not registered in the CLI; registered: %v", want, names)
		}
	}
}
