// Package chain is m1nd's one engine for "a ref whose commits are JSON
// documents": each commit's tree holds the document, its parent is the
// document before, and the ref head moves only by compare-and-swap. Kinds
// of ref (missions here; mail, memories, shared documents and the store
// in their own packages) are package values made by Define from a typed
// Spec; the engine appends, dedups, indexes and reads any of them alike,
// and the laws judge those in the list they are handed (laws.Shipped). The canonical
// codec and the mission letter with its post law live here too.
package chain
