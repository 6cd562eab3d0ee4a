// Command m1nd gives coding agents shared memory and context stored in git
// refs. Everything it does lives in internal/cli; this is only the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/m1nd/m1nd/internal/cli"
)

func main() {
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
