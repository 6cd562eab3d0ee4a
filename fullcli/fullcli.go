// Package fullcli is m1nd-full's command line: every verb of cli
// and the ones that link what no hot verb should pay for at start-up —
// they serve a brain (serve, demo, mcp: net/http, WebAuthn, the MCP SDK),
// run or ask the runner daemon (runnerd, spawn, worktrees, runners,
// sessions), or read and write the hosts' configuration files (status,
// hook install: TOML). The small m1nd (cmd/m1nd) links cli
// alone and hands these verbs to m1nd-full.
package fullcli

import (
	"context"

	"github.com/urfave/cli/v2"

	mcli "github.com/m1nd/m1nd/cli"
)

// Main runs the whole m1nd command line on args, as cli.Main does with
// these verbs added, and returns the exit status.
func Main(ctx context.Context, args []string, io *mcli.IOStreams) int {
	return mcli.Main(ctx, args, io, Verbs)
}

// Verbs are m1nd-full's own verbs (a cli.Verbs); hook install and
// uninstall join cli's hook group.
func Verbs(inv *mcli.Invocation) []*cli.Command {
	return []*cli.Command{
		newStatusCmd(inv, nil),
		{Name: "hook", Subcommands: []*cli.Command{hookInstallCommand(inv, true, nil), hookInstallCommand(inv, false, nil)}},
		newSessionsCmd(inv, nil),
		newMCPCmd(inv, nil),
		newServeCmd(inv, nil),
		newRunnerdCmd(inv, nil),
		newSpawnCmd(inv, nil),
		newWorktreesCmd(inv, nil),
		runnersCommand(inv),
		newDemoCmd(inv, nil),
	}
}
