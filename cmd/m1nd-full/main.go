// Command m1nd-full is the whole m1nd command line: every verb, the tray
// and the MCP server included. The small m1nd beside it hands it every
// verb it does not run itself.
package main

import (
	"context"

	"github.com/m1nd/m1nd/internal/cli"
	"github.com/m1nd/m1nd/internal/serving"
)

func main() {
	cli.Process(func(ctx context.Context, args []string, io *cli.IOStreams) int {
		return cli.Main(ctx, args, io, serving.Servers{})
	})
}
