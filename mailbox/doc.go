// Package mailbox keeps the letters agents send each other: one ref per
// recipient and writer (refs/m1nd/mail/<recipient>/<writer>), so writers
// never race one another; fates derived when read, never stored; and
// delivery cursors that put each letter into an agent's live session
// exactly once.
package mailbox
