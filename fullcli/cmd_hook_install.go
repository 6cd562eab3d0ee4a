package fullcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	mcli "github.com/m1nd/m1nd/cli"
	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/session/hostconfig"

	"github.com/m1nd/m1nd/githook"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/urfave/cli/v2"
)

func hookInstallCommand(inv *mcli.Invocation, install bool, runF func(context.Context, *hookInstallOptions) error) *cli.Command {
	name, usage := "install", "merge m1nd's hooks and MCP server into the host's settings"
	if !install {
		name, usage = "uninstall", "remove m1nd's hooks and MCP server from the host's settings"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "claude|codex",
		Description: `Adds (or removes) one entry per event m1nd answers, leaving every other setting
and hook as it was; running it twice changes nothing. --user edits the user's
own settings ($CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json;
$CODEX_HOME/hooks.json or ~/.codex/hooks.json) instead of the project's.

It also registers m1nd's MCP server ('m1nd mcp', named m1nd) where the host
looks for one: Claude Code's .mcp.json (--user: ~/.claude.json, or
$CLAUDE_CONFIG_DIR/.claude.json), Codex's .codex/config.toml (--user:
$CODEX_HOME/config.toml or ~/.codex/config.toml) as [mcp_servers.m1nd].
Other servers and settings stay as they were; uninstall removes only m1nd's.
Claude Code asks once before it starts a project's .mcp.json servers.

A project's files are for the team to commit: they run m1nd as PATH finds
it, never this machine's path to it (an install warns when m1nd is not on
PATH here). --user files run this machine's m1nd by its path. m1nd status
says when the m1nd a registration runs cannot be found.

The PreCompact entry blocks automatic compaction (--block-auto-compact): the
session's memory is m1nd's, so a session that fills up is ended and started
afresh rather than summarised. --allow-auto-compact installs it without.

Codex runs project and user hooks only once they are trusted; install codex
prints how (docs/mail.md: "Trusting m1nd's hooks in Codex").`,
		Flags: installFlags(install),
		Action: func(c *cli.Context) error {
			host, err := mcli.OneArg(c, "host (claude or codex)")
			if err != nil {
				return err
			}
			if host != session.HostClaude && host != session.HostCodex {
				return mcli.Usagef("unknown host %q: want claude or codex", host)
			}
			opts := &hookInstallOptions{IO: inv.IO(), JSON: c.Bool("json"), Repo: inv.OpenRepo, Agent: inv.AgentOf(c),
				Install: install, Host: host, User: c.Bool("user"), AllowAutoCompact: c.Bool("allow-auto-compact")}
			return mcli.RunWith(c.Context, opts, runF, runHookInstall)
		},
	}
}

// hookInstallOptions is what hook install and hook uninstall run on.
type hookInstallOptions struct {
	IO               *mcli.IOStreams
	JSON             bool
	Repo             func() (*gitstore.Repo, error)
	Agent            func() (string, error)
	Install          bool // false: uninstall
	Host             string
	User             bool // the user's own settings, not the project's
	AllowAutoCompact bool
}

// runHookInstall merges m1nd's hooks and MCP server into the host's
// settings, or removes them.
func runHookInstall(ctx context.Context, opts *hookInstallOptions) error {
	root := ""
	var repo *gitstore.Repo
	if !opts.User {
		var err error
		if repo, err = opts.Repo(); err != nil {
			return err
		}
		if root = repo.WorkTree(); root == "" {
			return mcli.Usagef("a bare repository has no project settings; use --user")
		}
	}
	path, err := session.SettingsPath(opts.Host, root, opts.User)
	if err != nil {
		return err
	}
	mcpPath, err := hostconfig.MCPConfigPath(opts.Host, root, opts.User)
	if err != nil {
		return err
	}
	command := opts.command()
	changed, mcpChanged, err := opts.apply(path, mcpPath, command)
	if err != nil {
		return err
	}
	reply := map[string]any{"path": path, "changed": changed || mcpChanged, "mcp_path": mcpPath}
	warnings := opts.warnings(command, root)
	guarded, warning := opts.guard(ctx, repo, root)
	if guarded != "" {
		reply["guard"] = guarded
	} else if warning != "" {
		warnings = append(warnings, warning)
	}
	if len(warnings) > 0 {
		reply["warning"] = strings.Join(warnings, "; ")
	}
	trust := ""
	if opts.Install && opts.Host == session.HostCodex {
		trust = hostconfig.CodexTrustHint(root)
		reply["trust"] = trust
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		opts.say(w, path, mcpPath, changed, mcpChanged)
		if guarded != "" {
			fmt.Fprintf(w, "%s: guarded: git here runs m1nd's hooks folder %s, which refuses raw writes to refs/m1nd/ the laws forbid\n", root, guarded)
		}
		if trust != "" {
			fmt.Fprint(w, trust)
		}
		for _, warning := range warnings {
			fmt.Fprintln(opts.IO.Err, "warning: "+warning)
		}
		return nil
	})
}

// warnings are what an install says on stderr about the sessions it
// wires in: no agent set, or an m1nd the host will not find.
func (opts *hookInstallOptions) warnings(command, root string) []string {
	if !opts.Install {
		return nil
	}
	var out []string
	if id, err := opts.Agent(); err == nil && id == rules.HumanName {
		out = append(out, noAgentWarning)
	}
	if hostconfig.Locate(command, root) == "" {
		out = append(out, fmt.Sprintf("%s is not on PATH here, so the host will not find the m1nd its hooks name until it is (README: Install)", command))
	}
	return out
}

// guard guards the worktree at root of repo, where an agent's session
// now writes, on install into its project settings; it returns the
// guard's folder, or why it could not.
func (opts *hookInstallOptions) guard(ctx context.Context, repo *gitstore.Repo, root string) (guard, warning string) {
	if !opts.Install || repo == nil {
		return "", ""
	}
	if _, err := githook.Guard(ctx, repo, root, mcli.HookCommandName()); err != nil {
		return "", "this worktree is not guarded against raw git writes to refs/m1nd/: " + rules.OneLine(err.Error())
	}
	return githook.GuardDir(repo), ""
}

// command is how the host runs m1nd. A project's settings are committed
// and run on every teammate's machine, so they name m1nd as PATH finds it;
// the user's own settings name this machine's m1nd by its path, as git's
// hooks do (mcli.HookCommandName).
func (opts *hookInstallOptions) command() string {
	if opts.User {
		return mcli.HookCommandName()
	}
	return mcli.FrontName
}

// apply installs (or removes) the hooks at path, then the MCP server at
// mcpPath, each running command, and reports what changed.
func (opts *hookInstallOptions) apply(path, mcpPath, command string) (changed, mcpChanged bool, err error) {
	if opts.Install {
		if changed, err = hostconfig.Install(path, opts.Host, command, !opts.AllowAutoCompact); err == nil {
			mcpChanged, err = hostconfig.InstallMCP(mcpPath, opts.Host, command)
		}
		return changed, mcpChanged, err
	}
	if changed, err = hostconfig.Uninstall(path, opts.Host); err == nil {
		mcpChanged, err = hostconfig.UninstallMCP(mcpPath, opts.Host)
	}
	return changed, mcpChanged, err
}

// say is the text reply: what changed in each file.
func (opts *hookInstallOptions) say(w io.Writer, path, mcpPath string, changed, mcpChanged bool) {
	switch {
	case !changed:
		fmt.Fprintf(w, "%s: nothing to change\n", path)
	case opts.Install:
		fmt.Fprintf(w, "%s: m1nd's %s hooks installed\n", path, opts.Host)
	default:
		fmt.Fprintf(w, "%s: m1nd's %s hooks removed\n", path, opts.Host)
	}
	switch {
	case mcpChanged && opts.Install:
		fmt.Fprintf(w, "%s: m1nd's MCP server registered (m1nd mcp)\n", mcpPath)
	case mcpChanged:
		fmt.Fprintf(w, "%s: m1nd's MCP server removed\n", mcpPath)
	}
}

// noAgentWarning is what hook install says when the sessions it wires in
// would have no agent.
const noAgentWarning = "no agent is set here, so the hooks will inject nothing and m1nd mcp will not start: set M1ND_AGENT for the session, or git config m1nd.agent ID (per worktree with git config --worktree)"

func installFlags(install bool) []cli.Flag {
	flags := []cli.Flag{&cli.BoolFlag{Name: "user", Usage: "edit the user's settings, not the project's"}, mcli.JSONFlag}
	if install {
		flags = append(flags, &cli.BoolFlag{Name: "allow-auto-compact", Usage: "install PreCompact without " + session.BlockFlag + ": let the host summarise a full session"})
	}
	return flags
}
