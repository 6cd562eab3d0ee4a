//go:build !linux

package gitstore

import "context"

// WatchRefs is not available here: ok is false, and the caller polls.
func (r *Repo) WatchRefs(ctx context.Context, prefix string) (wake <-chan struct{}, ok bool) {
	return nil, false
}
