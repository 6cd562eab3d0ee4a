package runnerd

import (
	"context"
	"testing"
	"time"
)

func TestLingering(t *testing.T) {
	t.Run("outlives a cancel by the grace, not more", func(t *testing.T) {
		parent, stop := context.WithCancel(context.Background())
		ctx, cancel := lingering(parent, 0)
		defer cancel()
		stop()
		cancelled := time.Now()
		select {
		case <-ctx.Done():
			t.Fatal("ended with its parent: a stopping daemon could not write what ends its work")
		case <-time.After(stopGrace / 4):
		}
		select {
		case <-ctx.Done():
			if waited := time.Since(cancelled); waited < stopGrace {
				t.Fatalf("ended %v after the cancel, before the grace of %v", waited, stopGrace)
			}
		case <-time.After(stopGrace + 5*time.Second):
			t.Fatal("outlived its grace: a hung git call could hold the stop")
		}
	})
	t.Run("an already cancelled parent gets the grace too", func(t *testing.T) {
		parent, stop := context.WithCancel(context.Background())
		stop()
		ctx, cancel := lingering(parent, 0)
		defer cancel()
		if ctx.Err() != nil {
			t.Fatal("born ended")
		}
		select {
		case <-ctx.Done():
		case <-time.After(stopGrace + 5*time.Second):
			t.Fatal("outlived its grace")
		}
	})
	t.Run("a limit ends it while the parent lives", func(t *testing.T) {
		ctx, cancel := lingering(context.Background(), 10*time.Millisecond)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the limit did not end it")
		}
	})
	t.Run("cancel ends it at once", func(t *testing.T) {
		ctx, cancel := lingering(context.Background(), 0)
		cancel()
		if ctx.Err() == nil {
			t.Fatal("cancel did not end it")
		}
	})
}
