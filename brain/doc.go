// Package brain holds what a brain is: its identity (the display name every
// letter names) and, with the brain store, its skeleton, blocks and receipts.
package brain
