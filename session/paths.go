package session

import (
	"fmt"
	"os"
	"path/filepath"
)

// BlockFlag is the hook flag that blocks automatic compaction; installed
// PreCompact entries carry it unless asked not to.
const BlockFlag = "--block-auto-compact"

// SettingsPath is the settings file for host: in the project at root, or
// the user's own with user set ($CLAUDE_CONFIG_DIR/settings.json, else
// ~/.claude/settings.json; $CODEX_HOME/hooks.json, else
// ~/.codex/hooks.json).
func SettingsPath(host, root string, user bool) (string, error) {
	var dir, file, env string
	switch host {
	case HostClaude:
		dir, file, env = ".claude", "settings.json", "CLAUDE_CONFIG_DIR"
	case HostCodex:
		dir, file, env = ".codex", "hooks.json", "CODEX_HOME"
	default:
		return "", fmt.Errorf("unknown host %q: want claude or codex", host)
	}
	if !user {
		return filepath.Join(root, dir, file), nil
	}
	if own := os.Getenv(env); own != "" {
		return filepath.Join(own, file), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, dir, file), nil
}

// CodexConfigPath is Codex's user config: $CODEX_HOME/config.toml, else
// ~/.codex/config.toml. Trust lives there and only there.
func CodexConfigPath() string {
	if own := os.Getenv("CODEX_HOME"); own != "" {
		return filepath.Join(own, "config.toml")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex", "config.toml")
}
