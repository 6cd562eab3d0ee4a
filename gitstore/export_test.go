package gitstore

import "context"

// PackLooseAtMost is packLoose for the tests of its limit.
func (r *Repo) PackLooseAtMost(ctx context.Context, limit int, prefixes ...string) (int, error) {
	return r.packLoose(ctx, limit, prefixes...)
}
