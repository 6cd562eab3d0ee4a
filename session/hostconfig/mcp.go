package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/session"
)

// MCPServerName is the name m1nd's MCP server is registered under, in
// both hosts' configuration: Claude Code then names its tools
// mcp__m1nd__<tool>.
const MCPServerName = "m1nd"

// MCPConfigPath is where host looks for MCP servers: in the project at
// root (Claude Code's .mcp.json, Codex's .codex/config.toml), or the
// user's own with user set (Claude Code's $CLAUDE_CONFIG_DIR/.claude.json,
// else ~/.claude.json; Codex's $CODEX_HOME/config.toml, else
// ~/.codex/config.toml).
func MCPConfigPath(host, root string, user bool) (string, error) {
	switch host {
	case session.HostClaude:
		if !user {
			return filepath.Join(root, ".mcp.json"), nil
		}
		if own := os.Getenv("CLAUDE_CONFIG_DIR"); own != "" {
			return filepath.Join(own, ".claude.json"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude.json"), nil
	case session.HostCodex:
		if !user {
			return filepath.Join(root, ".codex", "config.toml"), nil
		}
		return session.CodexConfigPath(), nil
	}
	return "", fmt.Errorf("unknown host %q: want claude or codex", host)
}

// InstallMCP registers m1nd's MCP server ("<command> mcp") for host in
// the configuration file at path, leaving every other server and setting
// as it was; an entry already registered the same way changes nothing.
func InstallMCP(path, host, command string) (changed bool, err error) {
	if host == session.HostCodex {
		return editCodexConfig(path, command, true)
	}
	return editMCPJSON(path, func(servers map[string]any) bool {
		want := map[string]any{"command": command, "args": []any{"mcp"}}
		if cur, ok := servers[MCPServerName].(map[string]any); ok && sameServer(cur, want) {
			return false
		}
		servers[MCPServerName] = want
		return true
	})
}

// UninstallMCP removes m1nd's MCP server for host from the file at path;
// a server named m1nd that does not run m1nd mcp is not ours and stays.
func UninstallMCP(path, host string) (changed bool, err error) {
	if host == session.HostCodex {
		return editCodexConfig(path, "", false)
	}
	return editMCPJSON(path, func(servers map[string]any) bool {
		cur, _ := servers[MCPServerName].(map[string]any)
		if cur == nil || !isOurServer(cur["command"], cur["args"]) {
			return false
		}
		delete(servers, MCPServerName)
		return true
	})
}

func sameServer(cur, want map[string]any) bool {
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(want)
	return bytes.Equal(a, b)
}

// isOurServer recognises m1nd's registration: a binary named m1nd run
// with the single argument mcp.
func isOurServer(command, args any) bool {
	cmd, _ := command.(string)
	list, _ := args.([]any)
	return filepath.Base(cmd) == "m1nd" && len(list) == 1 && list[0] == "mcp"
}

// editMCPJSON edits the "mcpServers" object of a Claude Code MCP file
// (editJSONMember); a project .mcp.json left with nothing in it is
// removed.
func editMCPJSON(path string, edit func(servers map[string]any) bool) (bool, error) {
	return editJSONMember(path, "mcpServers", filepath.Base(path) == ".mcp.json", func(servers map[string]any) (bool, error) {
		return edit(servers), nil
	})
}

// writeKeepingMode writes data to path atomically, keeping the file's
// mode (0644 for a new one, its folder made when missing).
func writeKeepingMode(path string, data []byte) error {
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(path, data, perm)
}

// codexServerHeader matches the header of m1nd's server table in a Codex
// config.toml, or of one of its subtables ([mcp_servers.m1nd.env]).
// Compiled on first use: only hook install and uninstall need it.
var codexServerHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(m1nd|"m1nd")\s*(\]|\.)`)
})

// editCodexConfig registers (install) or removes m1nd's server in a Codex
// config.toml, editing the text so that every comment and other table
// stays as written: the [mcp_servers.m1nd] table is appended, or cut out
// with its subtables. A file that is not TOML, or that defines m1nd's
// server some other way (inline, dotted keys), is left alone.
func editCodexConfig(path, command string, install bool) (bool, error) {
	data, err := gitstore.ReadRegular(path, 16<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	cur, err := codexServer(path, data)
	if err != nil {
		return false, err
	}
	if !install && (cur == nil || !isOurServer(cur["command"], anyList(cur["args"]))) {
		return false, nil
	}
	if install && cur != nil && cur["command"] == command && slices.Equal(anyList(cur["args"]), []any{"mcp"}) {
		return false, nil
	}
	text := cutCodexServer(string(data))
	if cur != nil {
		if again, err := codexServer(path, []byte(text)); err != nil || again != nil {
			return false, fmt.Errorf("%s defines mcp_servers.m1nd in a way m1nd cannot edit (inline or with dotted keys), so m1nd leaves it alone", path)
		}
	}
	if install {
		text = appendCodexServer(text, command)
	}
	if strings.TrimSpace(text) == "" && !install {
		return true, os.Remove(path)
	}
	return true, writeKeepingMode(path, []byte(text))
}

// appendCodexServer appends m1nd's [mcp_servers.m1nd] table, running
// command, to a config's text, after a blank line.
func appendCodexServer(text, command string) string {
	q, _ := json.Marshal(command) // a TOML basic string
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return text + fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [\"mcp\"]\n", MCPServerName, q)
}

// codexServer parses a Codex config and returns its mcp_servers.m1nd
// table, nil when there is none.
func codexServer(path string, data []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("%s is not TOML, so m1nd leaves it alone: %w", path, err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	cur, _ := servers[MCPServerName].(map[string]any)
	return cur, nil
}

func anyList(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return nil
}

// cutCodexServer removes the [mcp_servers.m1nd] table and its subtables
// from a config's text, with the blank lines before each.
func cutCodexServer(text string) string {
	if text == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	var out []string
	skipping := false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "[") {
			was := skipping
			skipping = codexServerHeader().MatchString(l)
			if was && !skipping && len(out) > 0 {
				out = append(out, "\n") // the blank line that set the next table apart
			}
			if skipping {
				for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
					out = out[:len(out)-1]
				}
			}
		}
		if !skipping {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}
