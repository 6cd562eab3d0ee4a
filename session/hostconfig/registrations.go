package hostconfig

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/session"
)

// Registration is one place a host was told to run m1nd: its hooks or its
// MCP server, in a project's settings or the user's own.
type Registration struct {
	Path    string `json:"path"`
	Host    string `json:"host"`
	Kind    string `json:"kind"`    // "hooks" or "mcp"
	Command string `json:"command"` // the m1nd it runs, as written
	// Found is the m1nd the host would run: Command on PATH, or the file
	// it names; "" when there is none, and every hook call fails.
	Found string `json:"found,omitempty"`
}

// Registration kinds.
const (
	KindHooks = "hooks"
	KindMCP   = "mcp"
)

// settingsCap bounds what is read of a settings file.
const settingsCap = 16 << 20

// Registrations lists m1nd's registrations for both hosts: in the project
// whose worktree is root ("" for none) and in the user's own settings. A
// file that is missing or not m1nd's to read is skipped: this is a view,
// never a refusal.
func Registrations(root string) []Registration {
	var out []Registration
	for _, host := range []string{session.HostClaude, session.HostCodex} {
		for _, user := range []bool{false, true} {
			if !user && root == "" {
				continue
			}
			if path, err := session.SettingsPath(host, root, user); err == nil {
				if cmd := hookCommandIn(path, host); cmd != "" {
					out = append(out, Registration{Path: path, Host: host, Kind: KindHooks, Command: cmd})
				}
			}
			if path, err := MCPConfigPath(host, root, user); err == nil {
				if cmd := mcpCommandIn(path, host); cmd != "" {
					out = append(out, Registration{Path: path, Host: host, Kind: KindMCP, Command: cmd})
				}
			}
		}
	}
	for i := range out {
		out[i].Found = Locate(out[i].Command, root)
	}
	return out
}

// Locate is the executable a host finds for command: a bare name on PATH,
// an absolute path as it is, a relative one from the project root (where
// the hosts run hooks). "" when there is none.
func Locate(command, root string) string {
	path := command
	switch {
	case !strings.Contains(command, "/"):
		found, err := exec.LookPath(command)
		if err != nil {
			return ""
		}
		return found
	case !filepath.IsAbs(command):
		path = filepath.Join(root, command)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return path
}

// hookCommandIn is the m1nd that host's m1nd hooks in the settings file
// at path run ("" when it holds none).
func hookCommandIn(path, host string) string {
	data, err := gitstore.ReadRegular(path, settingsCap)
	if err != nil {
		return ""
	}
	var doc struct {
		Hooks map[string]any `json:"hooks"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	for _, event := range hostEvents(host) {
		groups, _ := doc.Hooks[event].([]any)
		if entry := findOurs(groups, host); entry != nil {
			cmd, _ := entry["command"].(string)
			bin, _, _ := strings.Cut(cmd, " hook "+host+" ")
			return strings.Trim(bin, `"'`)
		}
	}
	return ""
}

// mcpCommandIn is the m1nd that host's m1nd MCP server in the file at
// path runs ("" when it registers none).
func mcpCommandIn(path, host string) string {
	data, err := gitstore.ReadRegular(path, settingsCap)
	if err != nil {
		return ""
	}
	var cur map[string]any
	if host == session.HostCodex {
		if cur, err = codexServer(path, data); err != nil || cur == nil {
			return ""
		}
		cur["args"] = anyList(cur["args"])
	} else {
		var doc struct {
			Servers map[string]map[string]any `json:"mcpServers"`
		}
		if json.Unmarshal(data, &doc) != nil {
			return ""
		}
		cur = doc.Servers[MCPServerName]
	}
	if cur == nil || !isOurServer(cur["command"], cur["args"]) {
		return ""
	}
	cmd, _ := cur["command"].(string)
	return cmd
}
