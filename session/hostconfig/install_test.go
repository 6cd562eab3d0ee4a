package hostconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/session"
)

func TestInstallMergesIdempotentlyAndUninstallReverses(t *testing.T) {
	for _, host := range []string{session.HostClaude, session.HostCodex} {
		t.Run(host, func(t *testing.T) {
			root := t.TempDir()
			path, err := session.SettingsPath(host, root, false)
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Dir(path), 0o755)
			before := `{"model":"opus","permissions":{"allow":["Bash(ls)"]},"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"prettier --write"}]}]}}`
			os.WriteFile(path, []byte(before), 0o640)
			changed, err := Install(path, host, "m1nd", true)
			if err != nil || !changed {
				t.Fatalf("install: %v %v", changed, err)
			}
			data, _ := os.ReadFile(path)
			var got map[string]any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if got["model"] != "opus" || !strings.Contains(string(data), "prettier --write") || !strings.Contains(string(data), `"m1nd hook `+host+` SessionStart"`) {
				t.Fatalf("settings after install:\n%s", data)
			}
			if n := strings.Count(string(data), "m1nd hook "+host); n != len(hostEvents(host)) {
				t.Fatalf("%d m1nd entries, want %d", n, len(hostEvents(host)))
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode changed to %v", fi.Mode().Perm())
			}
			if changed, err := Install(path, host, "m1nd", true); err != nil || changed {
				t.Fatalf("second install changed=%v err=%v", changed, err)
			}
			// An install naming another m1nd rewrites m1nd's entries, never
			// adds a second set.
			if changed, err := Install(path, host, "/usr/local/bin/m1nd", true); err != nil || !changed {
				t.Fatalf("install naming another m1nd changed=%v err=%v", changed, err)
			}
			data, _ = os.ReadFile(path)
			if n := strings.Count(string(data), "/usr/local/bin/m1nd hook "+host); n != len(hostEvents(host)) {
				t.Fatalf("%d entries name the new m1nd, want %d:\n%s", n, len(hostEvents(host)), data)
			}
			if changed, err := Uninstall(path, host); err != nil || !changed {
				t.Fatalf("uninstall: %v %v", changed, err)
			}
			data, _ = os.ReadFile(path)
			var back, orig map[string]any
			json.Unmarshal(data, &back)
			json.Unmarshal([]byte(before), &orig)
			b1, _ := json.Marshal(back)
			b2, _ := json.Marshal(orig)
			if string(b1) != string(b2) {
				t.Fatalf("uninstall did not restore the settings:\n%s\nwant\n%s", b1, b2)
			}
		})
	}
}

func TestInstallLeavesBrokenSettingsAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte("{not json"), 0o644)
	if _, err := Install(path, session.HostClaude, "m1nd", true); err == nil {
		t.Fatal("installed into a file that is not JSON")
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Fatal("the file was changed")
	}
	odd := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(odd, []byte(`{"hooks":{"Stop":"my-own-stop-script"}}`), 0o644)
	if _, err := Install(odd, session.HostClaude, "m1nd", true); err == nil {
		t.Fatal("installed over an event that is not a list")
	}
	if data, _ := os.ReadFile(odd); string(data) != `{"hooks":{"Stop":"my-own-stop-script"}}` {
		t.Fatalf("the file was changed: %s", data)
	}
	fresh := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if changed, err := Install(fresh, session.HostClaude, "m1nd", true); err != nil || !changed {
		t.Fatalf("install into a missing file: %v %v", changed, err)
	}
}
func TestInstallBlocksAutoCompactionUnlessAsked(t *testing.T) {
	for _, host := range []string{session.HostClaude, session.HostCodex} {
		path := filepath.Join(t.TempDir(), "hooks.json")
		preCompact := func() string {
			data, _ := os.ReadFile(path)
			var got struct {
				Hooks map[string][]struct {
					Hooks []struct{ Command string } `json:"hooks"`
				} `json:"hooks"`
			}
			json.Unmarshal(data, &got)
			if len(got.Hooks[session.EventUserPromptSubmit]) != 1 {
				t.Errorf("%s: UserPromptSubmit not installed once:\n%s", host, data)
			}
			return got.Hooks[session.EventPreCompact][0].Hooks[0].Command
		}
		for _, step := range []struct {
			block, changed bool
			want           string
		}{
			{true, true, "m1nd hook " + host + " PreCompact --block-auto-compact"},
			{true, false, "m1nd hook " + host + " PreCompact --block-auto-compact"},
			{false, true, "m1nd hook " + host + " PreCompact"},
			{false, false, "m1nd hook " + host + " PreCompact"},
			{true, true, "m1nd hook " + host + " PreCompact --block-auto-compact"},
		} {
			changed, err := Install(path, host, "m1nd", step.block)
			if err != nil || changed != step.changed {
				t.Fatalf("%s install block=%v: changed=%v err=%v", host, step.block, changed, err)
			}
			if got := preCompact(); got != step.want {
				t.Fatalf("%s block=%v: PreCompact runs %q, want %q", host, step.block, got, step.want)
			}
		}
	}
}
