// Package chain is m1nd's one engine for "a ref whose commits are JSON
// documents": each commit's tree holds the document, its parent is the
// document before, and the ref head moves only by compare-and-swap. Kinds
// of ref (missions here; mail, memories, shared documents and the store
// in their own packages) declare themselves with Register; the engine
// appends, dedups, indexes and reads any of them alike. The canonical
// codec and the mission letter with its post law live here too.
package chain
