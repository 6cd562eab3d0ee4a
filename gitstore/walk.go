package gitstore

import (
	"errors"
	"fmt"
)

// ErrStopWalk, returned by a WalkFirstParent callback, ends the walk early
// without an error.
var ErrStopWalk = errors.New("stop walk")

// WalkFirstParent visits from and then each first parent in turn, newest
// first, until a root commit, an error, or fn returning ErrStopWalk.
func (r *Repo) WalkFirstParent(from Hash, fn func(h Hash, c *Commit) error) error {
	for h := from; !h.IsZero(); {
		c, err := r.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("walk %s: %w", from, err)
		}
		if err := fn(h, c); err != nil {
			if errors.Is(err, ErrStopWalk) {
				return nil
			}
			return err
		}
		if len(c.Parents) == 0 {
			return nil
		}
		h = c.Parents[0]
	}
	return nil
}
