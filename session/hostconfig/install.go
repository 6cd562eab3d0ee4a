package hostconfig

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
	"github.com/m1nd/m1nd/session"
)

// hostEvents is the events m1nd hooks into for host. Both get
// UserPromptSubmit: letters that arrived between turns reach the next
// prompt instead of waiting for a tool call. Codex ignores PreCompact
// output, so it also gets PostCompact (the rehydration is re-injected at the
// next prompt after a compaction).
func hostEvents(host string) []string {
	switch host {
	case session.HostClaude:
		return []string{session.EventSessionStart, session.EventPostToolUse, session.EventPostToolBatch, session.EventUserPromptSubmit, session.EventStop, session.EventPreCompact}
	case session.HostCodex:
		return []string{session.EventSessionStart, session.EventPostToolUse, session.EventUserPromptSubmit, session.EventStop, session.EventPreCompact, session.EventPostCompact}
	}
	return nil
}

// CodexTrustHint says how to make Codex run the hooks just installed
// (for the project at root, or the user's own when root is ""). Codex runs
// an untrusted hook nowhere: its TUI asks, codex exec skips it silently.
// m1nd never writes that trust itself: it is the user's consent.
func CodexTrustHint(root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Codex runs these hooks only once they are trusted (codex exec skips untrusted ones silently):\n")
	if root != "" {
		fmt.Fprintf(&b, "  - trust the project, in %s:\n      [projects.%q]\n      trust_level = \"trusted\"\n", session.CodexConfigPath(), root)
	}
	b.WriteString("  - trust each hook: start codex here once and approve m1nd's hooks when it asks (it records\n" +
		"    [hooks.state.\"<hooks.json>:<event>:<group>:<index>\"] trusted_hash = \"sha256:…\" in that file);\n" +
		"  - or, for one run you started yourself: codex exec --dangerously-bypass-hook-trust …\n")
	return b.String()
}

// hookTimeout is the seconds a host gives one m1nd hook call.
const hookTimeout = 10

// Install merges m1nd's hook entries for host into the settings file at
// path, leaving every other setting as it was (keys are rewritten in
// sorted order, values untouched). It is idempotent: an entry already
// there is not added twice, though it is rewritten to run command (an
// older install named another m1nd) and its PreCompact entry is switched
// to block (or not) as asked. command is how the host runs m1nd ("m1nd"
// for a file a team commits, or an absolute path). changed is false when
// nothing had to change.
func Install(path, host, command string, blockAutoCompact bool) (changed bool, err error) {
	return editSettings(path, func(hooks map[string]any) (bool, error) {
		changed := false
		for _, event := range hostEvents(host) {
			cmd := fmt.Sprintf("%s hook %s %s", command, host, event)
			if event == session.EventPreCompact && blockAutoCompact {
				cmd += " " + session.BlockFlag
			}
			groups, ok := hooks[event].([]any)
			if hooks[event] != nil && !ok {
				return false, fmt.Errorf(`%s: hooks.%s is not a list, so m1nd leaves the file alone`, path, event)
			}
			if entry := findOurs(groups, host); entry != nil {
				if entry["command"] != cmd {
					entry["command"] = cmd
					changed = true
				}
				continue
			}
			group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": hookTimeout}}}
			if event == session.EventPostToolUse {
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

// findOurs is the first m1nd entry for host among an event's groups.
func findOurs(groups []any, host string) map[string]any {
	for _, g := range groups {
		group, _ := g.(map[string]any)
		list, _ := group["hooks"].([]any)
		for _, h := range list {
			if isOurs(h, host) {
				return h.(map[string]any)
			}
		}
	}
	return nil
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
	return editJSONMember(path, "hooks", false, edit)
}

// editJSONMember reads a client's JSON settings file (a missing one is
// {}), lets edit change the object under key, and writes the file back
// atomically, every other member as it was, when edit says it changed
// something. An emptied object is dropped; with removeEmpty, a file left
// with nothing in it is removed.
func editJSONMember(path, key string, removeEmpty bool, edit func(member map[string]any) (bool, error)) (bool, error) {
	doc := map[string]any{}
	data, err := gitstore.ReadRegular(path, 16<<20)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &doc); err != nil {
			return false, fmt.Errorf("%s is not a JSON object, so m1nd leaves it alone: %w", path, err)
		}
	}
	member, ok := doc[key].(map[string]any)
	if doc[key] != nil && !ok {
		return false, fmt.Errorf(`%s: %q is not an object, so m1nd leaves it alone`, path, key)
	}
	if member == nil {
		member = map[string]any{}
	}
	if changed, err := edit(member); err != nil || !changed {
		return false, err
	}
	if len(member) == 0 {
		delete(doc, key)
	} else {
		doc[key] = member
	}
	if len(doc) == 0 && removeEmpty {
		return true, os.Remove(path)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return false, err
	}
	return true, writeKeepingMode(path, buf.Bytes())
}
