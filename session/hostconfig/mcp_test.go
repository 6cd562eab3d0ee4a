package hostconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/session"
	"github.com/m1nd/m1nd/session/hostconfig"
)

// mcpRoundTrip installs twice and uninstalls twice, checking that the
// second of each changes nothing and that the file ends as it began.
func mcpRoundTrip(t *testing.T, host, path, before string, installed func(string)) {
	t.Helper()
	if before != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{true, false} {
		changed, err := hostconfig.InstallMCP(path, host, "/opt/bin/m1nd")
		if err != nil || changed != want {
			t.Fatalf("install #%d: changed %v, %v; want %v", i+1, changed, err, want)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	installed(string(data))
	if fi, _ := os.Stat(path); before != "" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	for i, want := range []bool{true, false} {
		changed, err := hostconfig.UninstallMCP(path, host)
		if err != nil || changed != want {
			t.Fatalf("uninstall #%d: changed %v, %v; want %v", i+1, changed, err, want)
		}
	}
	after, err := os.ReadFile(path)
	if before == "" {
		if !os.IsNotExist(err) {
			t.Errorf("a file m1nd created is left behind: %q", after)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if host == session.HostCodex && string(after) != before {
		t.Errorf("uninstall left\n%s\nwant\n%s", after, before)
	}
	if host == session.HostClaude && !strings.Contains(string(after), `"other"`) {
		t.Errorf("uninstall lost the other server:\n%s", after)
	}
}

func TestMCPInstallClaude(t *testing.T) {
	dir := t.TempDir()
	foreign := `{"mcpServers":{"other":{"command":"npx","args":["-y","other-mcp"],"env":{"K":"<v>"}}},"x":1}`
	mcpRoundTrip(t, session.HostClaude, filepath.Join(dir, ".mcp.json"), foreign, func(s string) {
		for _, want := range []string{`"m1nd": {`, `"command": "/opt/bin/m1nd"`, `"mcp"`, `"other": {`, `"K": "<v>"`, `"x": 1`} {
			if !strings.Contains(s, want) {
				t.Errorf("installed file lacks %s:\n%s", want, s)
			}
		}
	})
	// No file before: created, then removed.
	mcpRoundTrip(t, session.HostClaude, filepath.Join(t.TempDir(), ".mcp.json"), "", func(s string) {
		if !strings.Contains(s, `"m1nd"`) {
			t.Errorf("no m1nd server:\n%s", s)
		}
	})
	// A server named m1nd that is not m1nd mcp is not removed.
	path := filepath.Join(t.TempDir(), ".mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers":{"m1nd":{"command":"python3","args":["mine.py"]}}}`), 0o644)
	if changed, err := hostconfig.UninstallMCP(path, session.HostClaude); err != nil || changed {
		t.Errorf("uninstalled a foreign m1nd server: %v %v", changed, err)
	}
	// Not JSON: left alone.
	os.WriteFile(path, []byte("nope"), 0o644)
	if _, err := hostconfig.InstallMCP(path, session.HostClaude, "m1nd"); err == nil || !strings.Contains(err.Error(), "leaves it alone") {
		t.Errorf("installed into a file that is not JSON: %v", err)
	}
}

func TestMCPInstallCodex(t *testing.T) {
	foreign := `# my settings
model = "o3"

[mcp_servers.other]
command = "npx"
args = ["-y", "other-mcp"]

[mcp_servers.other.env]
K = "v"

[projects."/src/x"]
trust_level = "trusted"
`
	path := filepath.Join(t.TempDir(), ".codex", "config.toml")
	mcpRoundTrip(t, session.HostCodex, path, foreign, func(s string) {
		if !strings.HasPrefix(s, foreign) || !strings.HasSuffix(s, "\n[mcp_servers.m1nd]\ncommand = \"/opt/bin/m1nd\"\nargs = [\"mcp\"]\n") {
			t.Errorf("installed config:\n%s", s)
		}
	})
	mcpRoundTrip(t, session.HostCodex, filepath.Join(t.TempDir(), "config.toml"), "", func(string) {})

	// An older registration in the middle of the file is replaced, its
	// subtable with it, and the tables around it stay.
	mid := "a = 1\n\n[mcp_servers.m1nd]\ncommand = \"/old/m1nd\"\nargs = [\"mcp\"]\n\n[mcp_servers.m1nd.env]\nX = \"1\"\n\n[tui]\nx = 2\n"
	os.WriteFile(path, []byte(mid), 0o600)
	if changed, err := hostconfig.InstallMCP(path, session.HostCodex, "/opt/bin/m1nd"); err != nil || !changed {
		t.Fatalf("install over an old path: %v %v", changed, err)
	}
	got, _ := os.ReadFile(path)
	if want := "a = 1\n\n[tui]\nx = 2\n\n[mcp_servers.m1nd]\ncommand = \"/opt/bin/m1nd\"\nargs = [\"mcp\"]\n"; string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Defined inline: left alone.
	os.WriteFile(path, []byte("mcp_servers = { m1nd = { command = \"m1nd\", args = [\"mcp\"] } }\n"), 0o600)
	if _, err := hostconfig.UninstallMCP(path, session.HostCodex); err == nil || !strings.Contains(err.Error(), "leaves it alone") {
		t.Errorf("uninstall of an inline table: %v", err)
	}
	os.WriteFile(path, []byte("[oops\n"), 0o600)
	if _, err := hostconfig.InstallMCP(path, session.HostCodex, "m1nd"); err == nil || !strings.Contains(err.Error(), "not TOML") {
		t.Errorf("install into a file that is not TOML: %v", err)
	}
}
