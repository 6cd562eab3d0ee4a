package session

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSettingsPathHonoursTheHostsOwnFolders(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tt := range []struct {
		host, env, value, want string
	}{
		{HostClaude, "CLAUDE_CONFIG_DIR", "", filepath.Join(home, ".claude", "settings.json")},
		{HostClaude, "CLAUDE_CONFIG_DIR", "/cfg/claude", "/cfg/claude/settings.json"},
		{HostCodex, "CODEX_HOME", "", filepath.Join(home, ".codex", "hooks.json")},
		{HostCodex, "CODEX_HOME", "/cfg/codex", "/cfg/codex/hooks.json"},
	} {
		t.Setenv(tt.env, tt.value)
		if got, err := SettingsPath(tt.host, "/repo", true); err != nil || got != tt.want {
			t.Errorf("%s with %s=%q: %q, %v; want %q", tt.host, tt.env, tt.value, got, err, tt.want)
		}
		if got, _ := SettingsPath(tt.host, "/repo", false); !strings.HasPrefix(got, "/repo/.") {
			t.Errorf("project settings moved with %s: %q", tt.env, got)
		}
	}
	t.Setenv("CODEX_HOME", "/cfg/codex")
	if got := CodexConfigPath(); got != "/cfg/codex/config.toml" {
		t.Errorf("CodexConfigPath = %q", got)
	}
}
