// Package memory keeps what agents learn beyond their transcripts: typed
// memories on one ref per agent (refs/m1nd/memory/<agent>), follow-ups that
// a result closes, and shared documents whose publisher is proven by a key.
// Memory is the truth; a session is a cache of it.
package memory
