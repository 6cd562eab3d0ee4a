// Package serving makes the front ends that serve a brain, for the CLI:
// the owner of its tray (tray) and the MCP server (mcpserver). They link
// WebAuthn and the MCP SDK, whose start-up no hot verb should pay, so
// internal/cli never imports them: cmd/m1nd-full hands Servers to
// cli.Main, and the small m1nd hands every verb that serves to m1nd-full.
// It knows the CLI only by the interfaces it meets (cli.Servers).
package serving

import (
	"context"
	"io"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/owner"
	"github.com/m1nd/m1nd/mcpserver"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/tray"
)

// Servers is the CLI's servers (cli.Servers) made of tray and mcpserver.
type Servers struct{}

// Owner makes tray's owner of brainName in repo, with the runners pinned.
func (Servers) Owner(repo *gitstore.Repo, brainName string, readOnly bool, pins owner.Pins) owner.Server {
	srv := tray.New(repo, brainName, readOnly)
	srv.Pins = pins
	return srv
}

// MCP makes mcpserver's server of flows acting as agent.
func (Servers) MCP(flows *ops.Brain, agent string, now func() time.Time, poll time.Duration, version string) session.MCPServer {
	return mcpStdio{&mcpserver.Server{Flows: flows, Agent: agent, Now: now, Poll: poll, Version: version}}
}

// mcpStdio serves an MCP server on a reader and a writer (stdio).
type mcpStdio struct{ srv *mcpserver.Server }

func (m mcpStdio) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	return m.srv.Run(ctx, mcpserver.Stdio(in, out))
}
