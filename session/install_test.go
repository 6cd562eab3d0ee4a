package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallMergesIdempotentlyAndUninstallReverses(t *testing.T) {
	for _, host := range []string{HostClaude, HostCodex} {
		t.Run(host, func(t *testing.T) {
			root := t.TempDir()
			path, err := SettingsPath(host, root, false)
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Dir(path), 0o755)
			before := `{"model":"opus","permissions":{"allow":["Bash(ls)"]},"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"prettier --write"}]}]}}`
			os.WriteFile(path, []byte(before), 0o640)
			changed, err := Install(path, host, "m1nd")
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
			if n := strings.Count(string(data), "m1nd hook "+host); n != len(hostEvents[host]) {
				t.Fatalf("%d m1nd entries, want %d", n, len(hostEvents[host]))
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode changed to %v", fi.Mode().Perm())
			}
			if changed, err := Install(path, host, "/usr/local/bin/m1nd"); err != nil || changed {
				t.Fatalf("second install changed=%v err=%v", changed, err)
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
	if _, err := Install(path, HostClaude, "m1nd"); err == nil {
		t.Fatal("installed into a file that is not JSON")
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Fatal("the file was changed")
	}
	odd := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(odd, []byte(`{"hooks":{"Stop":"my-own-stop-script"}}`), 0o644)
	if _, err := Install(odd, HostClaude, "m1nd"); err == nil {
		t.Fatal("installed over an event that is not a list")
	}
	if data, _ := os.ReadFile(odd); string(data) != `{"hooks":{"Stop":"my-own-stop-script"}}` {
		t.Fatalf("the file was changed: %s", data)
	}
	fresh := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if changed, err := Install(fresh, HostClaude, "m1nd"); err != nil || !changed {
		t.Fatalf("install into a missing file: %v %v", changed, err)
	}
}
