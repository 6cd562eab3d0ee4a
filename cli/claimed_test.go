package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAgentWritesMayNotClaimTheHuman: mail, memories, follow-ups and
// shared documents are written as an agent; the human's name (owner, the
// default when none is set) is refused for them, exit 3 with the envelope,
// and nothing is written. Reads and the mission verbs keep the default.
func TestAgentWritesMayNotClaimTheHuman(t *testing.T) {
	r := newRepo(t)
	t.Setenv("M1ND_AGENT", "")
	for _, args := range [][]string{
		{"mail", "send", "--to", "bob", "--what", "hi", "--json"},
		{"mail", "send", "--to", "bob", "--what", "hi", "--agent", "owner", "--json"},
		{"memory", "add", "--sort", "learned", "a fact", "--json"},
		{"followup", "open", "--owner", "bob", "find out", "--json"},
		{"atlas", "publish", "--kind", "plan", "ship it", "--json"},
	} {
		res := m1nd(t, r.Dir, "", args...)
		var env map[string]any
		if res.code != exitRefused || json.Unmarshal([]byte(res.out), &env) != nil || env["refused"] != "invalid_letter" || env["field"] != "agent" ||
			!strings.Contains(env["lesson"].(string), "human's name") {
			t.Errorf("%v: exit %d, %s %s", args, res.code, res.out, res.err)
		}
	}
	if refs := r.Git("for-each-ref", "refs/m1nd/mail/", "refs/m1nd/memory/", "refs/m1nd/atlas/"); refs != "" {
		t.Fatalf("a refused write wrote %s", refs)
	}
	// As an agent it is written; the human still reads and opens missions.
	must(t, r.Dir, "", "mail", "send", "--to", "bob", "--what", "hi", "--agent", "alice")
	must(t, r.Dir, "", "mail", "inbox")
	must(t, r.Dir, "", "mission", "new", "--block", "sb_proj_core", "--synthetic")
}
