package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/m1nd/m1nd/gitstore"
)

// hostEvents are the events m1nd hooks into, per host. Codex ignores
// PreCompact output, so it also gets UserPromptSubmit (where the
// rehydration is re-injected after a compaction) and PostCompact.
var hostEvents = map[string][]string{
	HostClaude: {EventSessionStart, EventPostToolUse, EventPostToolBatch, EventStop, EventPreCompact},
	HostCodex:  {EventSessionStart, EventPostToolUse, EventUserPromptSubmit, EventStop, EventPreCompact, EventPostCompact},
}

// SettingsPath is the settings file for host: in the project at root, or
// the user's own with user set.
func SettingsPath(host, root string, user bool) (string, error) {
	rel := map[string]string{HostClaude: filepath.Join(".claude", "settings.json"), HostCodex: filepath.Join(".codex", "hooks.json")}[host]
	if rel == "" {
		return "", fmt.Errorf("unknown host %q: want claude or codex", host)
	}
	if !user {
		return filepath.Join(root, rel), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, rel), nil
}

// hookTimeout is the seconds a host gives one m1nd hook call.
const hookTimeout = 10

// Install merges m1nd's hook entries for host into the settings file at
// path, leaving every other setting as it was (keys are rewritten in
// sorted order, values untouched). It is idempotent: an entry already
// there is not added twice. command is how the host runs m1nd ("m1nd" or
// an absolute path). changed is false when nothing had to be added.
func Install(path, host, command string) (changed bool, err error) {
	return editSettings(path, func(hooks map[string]any) (bool, error) {
		changed := false
		for _, event := range hostEvents[host] {
			cmd := fmt.Sprintf("%s hook %s %s", command, host, event)
			groups, ok := hooks[event].([]any)
			if hooks[event] != nil && !ok {
				return false, fmt.Errorf(`%s: hooks.%s is not a list, so m1nd leaves the file alone`, path, event)
			}
			if findOurs(groups, host) {
				continue
			}
			group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": hookTimeout}}}
			if event == EventPostToolUse {
				group["matcher"] = "*"
			}
			hooks[event] = append(groups, group)
			changed = true
		}
		return changed, nil
	})
}

// Uninstall removes m1nd's entries for host from the settings file and
// every hooks list or event left empty by that; other entries stay.
func Uninstall(path, host string) (changed bool, err error) {
	return editSettings(path, func(hooks map[string]any) (bool, error) {
		changed := false
		for event, v := range hooks {
			groups, ok := v.([]any)
			if !ok {
				continue
			}
			var kept []any
			for _, g := range groups {
				group, ok := g.(map[string]any)
				list, _ := group["hooks"].([]any)
				if !ok || list == nil {
					kept = append(kept, g)
					continue
				}
				var rest []any
				for _, h := range list {
					if isOurs(h, host) {
						changed = true
						continue
					}
					rest = append(rest, h)
				}
				if len(rest) > 0 {
					group["hooks"] = rest
					kept = append(kept, group)
				}
			}
			if len(kept) == 0 {
				delete(hooks, event)
			} else {
				hooks[event] = kept
			}
		}
		return changed, nil
	})
}

func findOurs(groups []any, host string) bool {
	for _, g := range groups {
		group, _ := g.(map[string]any)
		list, _ := group["hooks"].([]any)
		for _, h := range list {
			if isOurs(h, host) {
				return true
			}
		}
	}
	return false
}

// isOurs recognises an entry m1nd installed: a command running "… hook
// <host> <Event>" of a binary named m1nd.
func isOurs(h any, host string) bool {
	entry, _ := h.(map[string]any)
	cmd, _ := entry["command"].(string)
	bin, rest, ok := strings.Cut(cmd, " hook "+host+" ")
	return ok && rest != "" && filepath.Base(strings.Trim(bin, `"'`)) == "m1nd"
}

// editSettings reads a settings file (a missing one is {}), lets edit
// change its "hooks" object, and writes it back atomically when edit says
// it changed something.
func editSettings(path string, edit func(hooks map[string]any) (bool, error)) (bool, error) {
	settings := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &settings); err != nil {
			return false, fmt.Errorf("%s is not a JSON object, so m1nd leaves it alone: %w", path, err)
		}
	}
	hooks, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		return false, fmt.Errorf(`%s: "hooks" is not an object, so m1nd leaves it alone`, path)
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	if changed, err := edit(hooks); err != nil || !changed {
		return false, err
	}
	if len(hooks) == 0 {
		delete(settings, "hooks")
	} else {
		settings["hooks"] = hooks
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return false, err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return true, gitstore.WriteFileAtomic(path, buf.Bytes(), perm)
}
