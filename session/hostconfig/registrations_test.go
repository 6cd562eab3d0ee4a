package hostconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/m1nd/m1nd/session"
)

func TestRegistrationsFindTheM1ndTheyName(t *testing.T) {
	bin := t.TempDir()
	m1nd := filepath.Join(bin, "m1nd")
	if err := os.WriteFile(m1nd, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		command string // what the install wrote
		path    string // PATH while looking
		found   string // "" : not found
	}{
		{"on PATH", "m1nd", bin, m1nd},
		{"not on PATH", "m1nd", t.TempDir(), ""},
		{"an absolute path that is there", m1nd, "", m1nd},
		{"an absolute path from another machine", "/home/someone/go/bin/m1nd", bin, ""},
		{"a shim in the repository", "tools/m1nd", "", "{root}/tools/m1nd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
			t.Setenv("CODEX_HOME", t.TempDir())
			t.Setenv("PATH", tc.path)
			if err := os.MkdirAll(filepath.Join(root, "tools"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "tools", "m1nd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, host := range []string{session.HostClaude, session.HostCodex} {
				path, _ := session.SettingsPath(host, root, false)
				if _, err := Install(path, host, tc.command, true); err != nil {
					t.Fatal(err)
				}
				mcp, _ := MCPConfigPath(host, root, false)
				if _, err := InstallMCP(mcp, host, tc.command); err != nil {
					t.Fatal(err)
				}
			}
			regs := Registrations(root)
			if len(regs) != 4 {
				t.Fatalf("%d registrations, want 4 (hooks and MCP of both hosts): %+v", len(regs), regs)
			}
			want := tc.found
			if want == "{root}/tools/m1nd" {
				want = filepath.Join(root, "tools", "m1nd")
			}
			for _, r := range regs {
				if r.Command != tc.command || r.Found != want {
					t.Errorf("%s %s in %s: command %q found %q, want %q found %q", r.Host, r.Kind, r.Path, r.Command, r.Found, tc.command, want)
				}
			}
		})
	}
}

func TestRegistrationsSkipWhatIsNotM1nds(t *testing.T) {
	root := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	files := map[string]string{
		".claude/settings.json": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"prettier --write"}]}]}}`,
		".mcp.json":             `{"mcpServers":{"m1nd":{"command":"node","args":["server.js"]}}}`,
		".codex/hooks.json":     `not json`,
		".codex/config.toml":    "[mcp_servers.other]\ncommand = \"x\"\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if regs := Registrations(root); len(regs) != 0 {
		t.Fatalf("registrations of what is not m1nd's: %+v", regs)
	}
}
