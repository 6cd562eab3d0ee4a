package runners

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodRunner = `
[[runner]]
id = "build-1"
capability = "build-runner"
command = ["agent", "{packet_file}"]
gate_command = "go test ./..."
workspace_allowlist = ["/src"]
`

const goodKeeper = `
[[keeper]]
agent = "bob"
client = "claude"
start = ["claude", "-p", "{wake}"]
resume = ["claude", "-p", "{wake}", "--resume", "{session_id}"]
worktree = "/src/shop"
`

func TestLoadConfig(t *testing.T) {
	for _, tt := range []struct {
		label, toml string
		want        string // error fragment; "" = loads
	}{
		{"good", goodRunner, ""},
		{"missing file is empty", "", ""},
		{"naming runner needs no gate", "[[runner]]\nid = \"n\"\ncapability = \"naming-runner\"\ncommand = [\"namer\"]\n", ""},
		{"no gate", strings.Replace(goodRunner, `gate_command = "go test ./..."`, "", 1), `[[runner]] #1 (id "build-1"), field gate_command`},
		{"loop runner", strings.Replace(goodRunner, "build-runner", "loop-runner", 1), "field capability: loop-runner is not a runnerd capability"},
		{"review runner", strings.Replace(goodRunner, "build-runner", "review-runner", 1), "field capability"},
		{"no packet placeholder", strings.Replace(goodRunner, `"{packet_file}"`, `"x"`, 1), "field command: a build runner's command must contain {packet_file}"},
		{"relative allowlist", strings.Replace(goodRunner, `"/src"`, `"src"`, 1), `field workspace_allowlist: "src" is not an absolute path`},
		{"no allowlist", strings.Replace(goodRunner, `workspace_allowlist = ["/src"]`, "", 1), "field workspace_allowlist"},
		{"bad id", strings.Replace(goodRunner, `"build-1"`, `"Build 1"`, 1), "field id"},
		{"duplicate id", goodRunner + goodRunner, `[[runner]] #2 (id "build-1"), field id: the id "build-1" is pinned twice`},
		{"unknown key", goodRunner + "colour = \"red\"\n", "[[runner]], field colour: unknown key"},
		{"negative timeout", goodRunner + "timeout_secs = -1\n", "field timeout_secs"},
		{"not toml", "[[runner]\n", "toml: "},
		{"a keeper", goodRunner + goodKeeper, ""},
		{"a keeper without the wake", strings.Replace(goodKeeper, `start = ["claude", "-p", "{wake}"]`, `start = ["claude", "-p"]`, 1), `[[keeper]] #1 (agent "bob"), field start: must pass {wake}`},
		{"a keeper's unknown key", goodKeeper + "beat = 5\n", "[[keeper]], field beat: unknown key"},
		{"an agent kept twice", goodKeeper + goodKeeper, `[[keeper]] #2 (agent "bob"), field agent: the agent "bob" is kept twice`},
	} {
		path := filepath.Join(t.TempDir(), ConfigFile)
		if tt.toml != "" {
			os.WriteFile(path, []byte(tt.toml), 0o644)
		}
		cfg, err := LoadConfig(path)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.label, err)
			} else if r := cfg.Runner("build-1"); r != nil && (r.TimeoutSecs != DefaultTimeout || r.NamingTimeoutSecs != DefaultNamingTimeout) {
				t.Errorf("%s: defaults not applied: %+v", tt.label, r)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tt.label, err, tt.want)
		}
	}
}

func TestWorkspaceAllowedResolvesSymlinks(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "allowed")
	outside := filepath.Join(root, "outside")
	os.MkdirAll(filepath.Join(allowed, "repo"), 0o755)
	os.MkdirAll(filepath.Join(outside, "repo"), 0o755)
	os.Symlink(filepath.Join(outside, "repo"), filepath.Join(allowed, "sneaky")) // inside by name, outside in fact
	os.Symlink(allowed, filepath.Join(root, "alias"))                            // an allowlist entry that is a link
	r := &Runner{WorkspaceAllowlist: []string{allowed}}
	for dir, want := range map[string]bool{
		filepath.Join(allowed, "repo"):       true,
		allowed:                              true,
		filepath.Join(allowed, "sneaky"):     false,
		filepath.Join(outside, "repo"):       false,
		root + "/allowed-not":                false,
		filepath.Join(root, "alias", "repo"): true,
	} {
		if got := r.WorkspaceAllowed(dir); got != want {
			t.Errorf("WorkspaceAllowed(%s) = %v, want %v", dir, got, want)
		}
	}
}
