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
	code := cli.Main(ctx, os.Args, cli.SystemIO())
	stop()
	os.Exit(code)
}
