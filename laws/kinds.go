package laws

// The kinds m1nd ships register themselves with chain when their packages
// initialise; importing them here means every judge (the git hooks, verify,
// sync) knows them all. A kind of ref declared anywhere else is judged the
// same way once its package is linked in.
import (
	_ "github.com/m1nd/m1nd/brain"   // the store
	_ "github.com/m1nd/m1nd/mailbox" // mail
	_ "github.com/m1nd/m1nd/memory"  // memories and shared documents
)
