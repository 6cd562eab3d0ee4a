// Command m1nd gives coding agents shared memory and context stored in git
// refs. Everything it does lives in internal/cli; this is only the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/m1nd/m1nd/internal/cli"
)

func main() {
	// Most calls live a few milliseconds and read everything once, so the
	// collector's default pace (a cycle each time the heap doubles from
	// 4 MB) is pure cost: heads over 100k missions ran a dozen cycles.
	// A call collects when its heap grows fivefold, and hard under a
	// soft 1 GiB ceiling; GOGC and GOMEMLIMIT, when set, win.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels the context: servers stop and write what
	// ends their work. From then on a signal kills as it would without
	// m1nd, so nothing that does not watch the context can hold the
	// process past a second one. Every write is a compare-and-swap: a kill
	// leaves every ref valid.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx, os.Args, cli.SystemIO())
	stop()
	os.Exit(code)
}
