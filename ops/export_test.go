package ops

import (
	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
)

// Parts are the brain's parts, for ops' own tests that write what another
// agent or a runner would (no front end reaches them).
func (b *Flows) Parts() (*gitstore.Repo, *brain.Store, *mailbox.Mailbox, *memory.Book) {
	return b.repo, b.store, b.box, b.book
}
