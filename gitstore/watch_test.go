package gitstore_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestWatchRefsWakesOnEveryWayARefMoves: on Linux the watch wakes for a
// loose ref written by git in a folder that did not exist (and one in it
// after), a deletion, and packed-refs replaced by git pack-refs; it stays
// quiet while nothing under the prefix moves.
func TestWatchRefsWakesOnEveryWayARefMoves(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	g := gittest.Init(t, "watch")
	r := open(t, g.Dir)
	ctx, cancel := context.WithCancel(context.Background())
	wake, ok := r.WatchRefs(ctx, "refs/m1nd/")
	if !ok {
		t.Fatal("no watch on Linux")
	}
	head := g.Git("rev-parse", "HEAD")
	woke := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(5 * time.Second):
			t.Fatalf("no wake-up for %s", what)
		}
		// What the same change still has queued belongs to it.
		time.Sleep(50 * time.Millisecond)
		select {
		case <-wake:
		default:
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-wake:
			t.Fatalf("a wake-up for %s", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	quiet("nothing")
	g.Git("update-ref", "refs/heads/other", head)
	quiet("a branch")
	g.Git("update-ref", "refs/m1nd/mail/b1/a1", head) // makes refs/m1nd, then mail/b1
	woke("the first m1nd ref, in new folders")
	g.Git("update-ref", "refs/m1nd/mail/b1/a2", head)
	woke("a ref in a folder made after the watch began")
	g.Git("pack-refs", "--all")
	woke("git pack-refs")
	g.Git("update-ref", "-d", "refs/m1nd/mail/b1/a1")
	woke("a deletion")
	cancel()
	select {
	case _, open := <-wake:
		for open {
			_, open = <-wake
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not end with its context")
	}
}
