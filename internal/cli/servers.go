package cli

import (
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/owner"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/session"
)

// Servers makes the two front ends that serve a brain: the owner (the
// tray's HTTP API and web view) and the MCP server. They link WebAuthn and
// the MCP SDK, which no verb an agent or git runs per event needs, so this
// package never imports them: the m1nd that serves (cmd/m1nd-full) hands
// them in from internal/serving, and the small m1nd (Front) leaves them out.
type Servers interface {
	// Owner makes the owner of brainName's tray in repo.
	Owner(repo *gitstore.Repo, brainName string, readOnly bool, pins owner.Pins) owner.Server
	// MCP makes the MCP server of flows, every tool acting as agent.
	MCP(flows *ops.Brain, agent string, now func() time.Time, poll time.Duration, version string) session.MCPServer
}

// noServers is what a verb that serves says in a build without Servers.
func noServers(verb string) error {
	return usagef("m1nd %s serves, and this build of m1nd has no servers: run it with %s (%s installs both)", verb, FullName, installCommand)
}
