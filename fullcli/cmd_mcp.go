package fullcli

import (
	"context"
	"errors"
	"io"
	"time"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/mcpserver"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// mcpOptions is what mcp runs on.
type mcpOptions struct {
	IO    *mcli.IOStreams
	Agent func() (string, error)
	Flows func() (*ops.Flows, error)
	Poll  time.Duration
}

func newMCPCmd(inv *mcli.Invocation, runF func(context.Context, *mcpOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the Model Context Protocol on stdio: m1nd's tools for an agent's session",
		Description: `Claude Code and Codex start it as an MCP server ('m1nd hook install claude|codex'
registers it next to the hooks: .mcp.json, .codex/config.toml). It speaks
MCP (JSON-RPC, a line per message) on stdin and stdout until stdin closes,
and offers the agent's own verbs as tools, each running the flow its CLI verb
runs: mission_heads, mission_show, mission_log, mission_next, mission_post,
mail_send, mail_inbox, mail_show, memory_add, memory_recall, memory_resolve,
followup_open, followup_resolve, followup_list, atlas_read, atlas_publish,
atlas_amend, sessions. A refusal comes back as a tool error carrying its
{"ok":false,"refused","field","lesson"} envelope.

It acts as one agent: --agent, else $M1ND_AGENT, else git config m1nd.agent,
as the session's hooks resolve it; without one it does not start (exit 2)
rather than write as the owner. No tool performs a human gesture (receipt import,
ratify, archive, land): those stay the human's.

New letters for the agent are announced to the client while it runs (a log
message, and an update of the resource m1nd://inbox), looked for every
--poll; the letters themselves still reach the session through the hooks,
once.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "act as agent `ID` (default: $M1ND_AGENT, git config m1nd.agent; never owner)"},
			&cli.DurationFlag{Name: "poll", Value: mcpserver.DefaultPoll, Usage: "look for new letters to announce every `D`"},
		},
		Before: mcli.NoArgs,
		Action: func(c *cli.Context) error {
			opts := &mcpOptions{IO: inv.IO(), Agent: inv.WriterOf(c), Flows: inv.Flows, Poll: c.Duration("poll")}
			return mcli.RunWith(c.Context, opts, runF, runMCP)
		},
	}
}

// runMCP serves MCP on the invocation's stdin and stdout as the agent.
func runMCP(ctx context.Context, opts *mcpOptions) error {
	if _, err := opts.Agent(); err != nil {
		// No agent here is how it was started, not a letter it refused.
		if r, ok := rules.AsRefusal(err); ok && r.Code == rules.InvalidLetter && r.Field == "agent" {
			return mcli.Usagef("m1nd mcp acts as an agent, and none is set here: pass --agent ID, or set M1ND_AGENT or git config m1nd.agent (it never acts as %s, the human)", rules.HumanName)
		}
		return err
	}
	flows, agent, err := mcli.OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	srv := &mcpserver.Server{Flows: flows, Agent: agent, Now: opts.IO.Now, Poll: opts.Poll, Version: mcli.ReadVersion().String()}
	err = srv.Run(ctx, mcpserver.Stdio(opts.IO.In, opts.IO.Out))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // the client went away, or the process was asked to stop
	}
	return err
}
