package runnerd

import (
	"context"
	"time"
)

// stopGrace is how long what a stopping runnerd still does — the letter
// that ends a mission, a worktree's removal, a keeper's journal — may run
// past the signal. serve.Run's shutdown and this grace together stay
// inside the 5 s a service manager or a terminal waits before it kills.
const stopGrace = 2 * time.Second

// lingering returns a context that survives ctx's cancel by at most
// stopGrace (and never lives past limit, when limit > 0): a daemon asked
// to stop still writes what ends the work it was doing, but a git call
// that hangs cannot hold the stop.
func lingering(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if limit > 0 {
		var cancelLimit context.CancelFunc
		out, cancelLimit = context.WithTimeout(out, limit)
		inner := cancel
		cancel = func() { cancelLimit(); inner() }
	}
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, cancel) })
	return out, func() { stop(); cancel() }
}
