package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMailVerbs(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	must(t, dir, "", "init")

	sent := jsonOf(t, must(t, dir, "", "mail", "send", "--to", "b2", "--class", "ask", "--what", "which port?", "--json"))
	id, _ := sent["id"].(string)
	if sent["ok"] != true || len(id) != 12 {
		t.Fatalf("mail send: %v", sent)
	}
	if got := gitOut(t, dir, "cat-file", "blob", "refs/m1nd/mail/b2/a1:mail.json"); !strings.Contains(got, "which port?") {
		t.Fatalf("mail ref holds %s", got)
	}
	contains(t, must(t, dir, "", "mail", "send", "--to", "b2", "--class", "ask", "--what", "which port?").out, "letter "+id+" was already sent")

	// An agent reads only its own inbox; the owner reads any.
	refused(t, m1nd(t, dir, "", "mail", "inbox", "--agent", "b2", "--json"), "not_your_agent", true)
	t.Setenv("M1ND_AGENT", "")
	in := jsonOf(t, must(t, dir, "", "mail", "inbox", "--agent", "b2", "--json"))
	if in["agent"] != "b2" || in["unread"] != float64(1) || len(in["letters"].([]any)) != 1 {
		t.Fatalf("inbox: %v", in)
	}
	contains(t, must(t, dir, "", "mail", "inbox", "--agent", "b2").out, "inbox of b2: 1 letter, 1 unread", id, "wet_ink")
	t.Setenv("M1ND_AGENT", "a1")

	shown := jsonOf(t, must(t, dir, "", "mail", "show", id, "--json"))
	if shown["fate"] != "wet_ink" {
		t.Fatalf("mail show: %v", shown)
	}
	contains(t, must(t, dir, "", "mail", "show", id).out, "from a1 to b2, class ask", "which port?")
	refused(t, m1nd(t, dir, "", "mail", "show", "000000000000"), "invalid_letter", false)

	// b2 answers with a triage letter: the ask is fired clay.
	t.Setenv("M1ND_AGENT", "b2")
	must(t, dir, "", "mail", "send", "--to", "a1", "--class", "triage", "--what", "7420", "--answers", id)
	f := jsonOf(t, must(t, dir, "", "mail", "fates", "--json"))
	if fates := f["fates"].(map[string]any); fates[id] != "fired_clay" {
		t.Fatalf("fates: %v", f)
	}
	contains(t, must(t, dir, "", "mail", "fates").out, "2 letters")
	read := jsonOf(t, must(t, dir, "", "mail", "inbox", "--mark-read", "--json"))
	if read["unread"] != float64(0) {
		t.Fatalf("after --mark-read: %v", read)
	}
}

func TestMemoryAndFollowupVerbs(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	must(t, dir, "", "init")

	added := jsonOf(t, must(t, dir, "", "memory", "add", "--sort", "learned", "--about", "sb_proj_core", "the gate is go test", "--json"))
	id, _ := added["id"].(string)
	if added["ok"] != true || id == "" || added["agent"] != "a1" {
		t.Fatalf("memory add: %v", added)
	}
	contains(t, must(t, dir, "", "memory", "add", "--sort", "idea", "cache the scan").out, "recorded (idea)")
	rc := jsonOf(t, must(t, dir, "", "memory", "recall", "--about", "sb_proj_core", "--json"))
	if ms := rc["memories"].([]any); len(ms) != 1 || ms[0].(map[string]any)["id"] != id {
		t.Fatalf("recall --about: %v", rc)
	}
	contains(t, must(t, dir, "", "memory", "recall", "--query", "scan").out, "cache the scan")
	contains(t, must(t, dir, "", "memory", "recall", "--sort", "rapport").out, "no memory matches")
	if n := gitOut(t, dir, "rev-list", "--count", "refs/m1nd/memory/a1"); n == "0" {
		t.Fatal("memory ref has no commits")
	}

	res := jsonOf(t, must(t, dir, "", "memory", "resolve", id, "--as", "withdrawn", "--rationale", "wrong gate", "--json"))
	if res["ok"] != true || res["as"] != "withdrawn" {
		t.Fatalf("memory resolve: %v", res)
	}

	op := jsonOf(t, must(t, dir, "", "followup", "open", "--owner", "b2", "name the port", "--json"))
	fid, _ := op["id"].(string)
	if fid == "" {
		t.Fatalf("followup open: %v", op)
	}
	l := jsonOf(t, must(t, dir, "", "followup", "list", "--open", "--json"))
	if fs := l["followups"].([]any); len(fs) != 1 || fs[0].(map[string]any)["id"] != fid {
		t.Fatalf("followup list: %v", l)
	}
	contains(t, must(t, dir, "", "followup", "list", "--owner", "b2").out, fid, "open", "name the port")
	contains(t, must(t, dir, "", "followup", "resolve", fid, "--recorded", "7420").out, "follow-up "+fid+" recorded")
	contains(t, must(t, dir, "", "followup", "list").out, "→ 7420")
	contains(t, must(t, dir, "", "followup", "list", "--open").out, "no follow-ups")
}

func TestAtlasAndAgentKey(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	must(t, dir, "", "init")

	key := jsonOf(t, must(t, dir, "", "agent", "key", "create", "a1", "--json"))
	path, _ := key["path"].(string)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key %s: %v %v", path, fi, err)
	}
	contains(t, must(t, dir, "", "agent", "key", "create", "b2").out, "key for b2: ", "(mode 0600)")

	pub := jsonOf(t, must(t, dir, "", "atlas", "publish", "--kind", "plan", "ship the CLI tests", "--json"))
	doc := pub["doc"].(map[string]any)
	id, _ := doc["doc_id"].(string)
	if id == "" || doc["publisher"] != "a1" {
		t.Fatalf("atlas publish: %v", pub)
	}
	if got := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/m1nd/atlas/"); !strings.Contains(got, id) {
		t.Fatalf("atlas refs: %q, want one for %s", got, id)
	}
	sh := jsonOf(t, must(t, dir, "", "atlas", "show", id, "--json"))
	if sh["proof"] == "" || sh["doc"].(map[string]any)["text"] != "ship the CLI tests" {
		t.Fatalf("atlas show: %v", sh)
	}
	contains(t, must(t, dir, "", "atlas", "amend", id, "ship them today").out, id+" v2")
	contains(t, must(t, dir, "", "atlas", "show", id).out, id+" v2 plan", "by a1", "ship them today")
	contains(t, must(t, dir, "", "atlas", "list").out, id, "ship them today")
	ls := jsonOf(t, must(t, dir, "", "atlas", "list", "--json"))
	if docs := ls["docs"].([]any); len(docs) != 1 {
		t.Fatalf("atlas list: %v", ls)
	}

	// Only the publisher amends.
	t.Setenv("M1ND_AGENT", "b2")
	refused(t, m1nd(t, dir, "", "atlas", "amend", id, "mine now"), "not_publisher", false)
	t.Setenv("M1ND_AGENT", "a1")
	contains(t, must(t, dir, "", "atlas", "resolve", id).out, "resolved")
}

func TestVerifyAndHooks(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	must(t, dir, "", "init")
	must(t, dir, "", "skeleton", "scan")
	v := jsonOf(t, must(t, dir, "", "verify", "--json"))
	if v["ok"] != true || v["refs_checked"].(float64) < 1 || len(v["faults"].([]any)) != 0 {
		t.Fatalf("verify: %v", v)
	}
	contains(t, must(t, dir, "", "verify").out, "0 faults")

	// init writes m1nd's hooks folder and guards nothing; hooks install
	// guards this worktree, uninstall unguards it.
	if _, err := os.Stat(filepath.Join(dir, ".git", "m1nd", "hooks", "reference-transaction")); err != nil {
		t.Fatalf("init did not write the guard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "reference-transaction")); !os.IsNotExist(err) {
		t.Fatalf("init installed a hook every worktree runs: %v", err)
	}
	hooksPath := func() string {
		out, _ := exec.Command("git", "-C", dir, "config", "--worktree", "core.hooksPath").Output()
		return strings.TrimSpace(string(out))
	}
	contains(t, must(t, dir, "", "hooks", "install").out, "installed ")
	if hooksPath() != ".git/m1nd/hooks" {
		t.Fatalf("hooks install did not guard the worktree: %q", hooksPath())
	}
	un := jsonOf(t, must(t, dir, "", "hooks", "uninstall", "--json"))
	if un["ok"] != true || len(un["changed"].([]any)) == 0 || hooksPath() != "" {
		t.Fatalf("hooks uninstall: %v (core.hooksPath %q)", un, hooksPath())
	}
	contains(t, must(t, dir, "", "hooks", "uninstall").out, "nothing to change")
	// A worktree with hooks of its own is the operator's to settle: a
	// usage error (exit 2), not m1nd's failure.
	if out, err := exec.Command("git", "-C", dir, "config", "--worktree", "core.hooksPath", "my-hooks").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	if res := m1nd(t, dir, "", "hooks", "install"); res.code != 2 || !strings.Contains(res.err, "git config --worktree --unset core.hooksPath") {
		t.Fatalf("hooks install over the worktree's own hooks: exit %d\n%s", res.code, res.err)
	}
	if out, err := exec.Command("git", "-C", dir, "config", "--worktree", "--unset", "core.hooksPath").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}

	settings := filepath.Join(dir, ".claude", "settings.json")
	inst := jsonOf(t, must(t, dir, "", "hook", "install", "claude", "--json"))
	if inst["changed"] != true || inst["path"] != settings {
		t.Fatalf("hook install claude: %v", inst)
	}
	body, err := os.ReadFile(settings)
	if err != nil || !strings.Contains(string(body), "SessionStart") {
		t.Fatalf("settings %s: %v\n%s", settings, err, body)
	}
	contains(t, must(t, dir, "", "hook", "install", "claude").out, "nothing to change")
	if inst["guard"] == nil || hooksPath() != ".git/m1nd/hooks" {
		t.Fatalf("hook install claude did not guard the worktree it wires: %v (core.hooksPath %q)", inst, hooksPath())
	}

	ss := must(t, dir, `{"session_id":"s1","hook_event_name":"SessionStart","cwd":"`+dir+`"}`, "hook", "claude", "SessionStart")
	if out := strings.TrimSpace(ss.out); out != "" {
		jsonOf(t, ss)
	}
	if ss.err != "" {
		t.Errorf("SessionStart stderr: %s", ss.err)
	}
	contains(t, must(t, dir, "", "hook", "uninstall", "claude").out, "hooks removed")
}

func TestUsageErrors(t *testing.T) {
	r := newRepo(t)
	tests := []struct {
		name string
		args []string
		hint string
	}{
		{"unknown command", []string{"mission", "bogus"}, "Run 'm1nd mission --help'"},
		{"bad flag", []string{"status", "--nope"}, "Run 'm1nd status --help'"},
		{"missing block", []string{"mission", "new"}, "Run 'm1nd mission new --help'"},
		{"missing mission id", []string{"mission", "show"}, "Run 'm1nd mission show --help'"},
		{"bad mission id", []string{"mission", "log", "msn_nope"}, "Run 'm1nd mission log --help'"},
		{"bad phase", []string{"mission", "heads", "--phase", "nap"}, "Run 'm1nd mission heads --help'"},
		{"missing version", []string{"skeleton", "edit", "ops.json"}, "Run 'm1nd skeleton edit --help'"},
		{"missing memory sort", []string{"memory", "add", "x"}, "Run 'm1nd memory add --help'"},
		{"missing mail what", []string{"mail", "send", "--to", "b2"}, "Run 'm1nd mail send --help'"},
		{"unknown host", []string{"hook", "install", "vim"}, "Run 'm1nd hook install --help'"},
		{"extra argument", []string{"verify", "x"}, "Run 'm1nd verify --help'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := m1nd(t, r.Dir, "", tt.args...)
			if res.code != exitUsage {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", res.code, res.out, res.err)
			}
			if !strings.HasPrefix(res.err, "m1nd: ") || !strings.Contains(res.err, tt.hint+" for usage.") {
				t.Fatalf("stderr %q lacks %q", res.err, tt.hint)
			}
		})
	}

	res := m1nd(t, r.Dir, "", "bogus")
	if res.code != exitUsage || !strings.Contains(res.err, `unknown command "bogus"`) {
		t.Fatalf("m1nd bogus: exit %d, stderr %q", res.code, res.err)
	}
	refused(t, m1nd(t, r.Dir, "", "mission", "show", "msn_000000000000"), "unknown_mission", false)

	for _, args := range [][]string{{"--help"}, {"mission", "post", "--help"}, {"skeleton", "edit", "--help"}, {"mail", "--help"}} {
		res := m1nd(t, r.Dir, "", args...)
		if res.code != 0 || !strings.Contains(res.out, "USAGE") && !strings.Contains(res.out, "Usage") {
			t.Errorf("m1nd %s: exit %d\n%s%s", strings.Join(args, " "), res.code, res.out, res.err)
		}
	}
}

func TestUnknownTopLevelCommandHint(t *testing.T) {
	r := newRepo(t)
	res := m1nd(t, r.Dir, "", "bogus")
	if res.code != exitUsage || !strings.Contains(res.err, "Run 'm1nd --help' for usage.") {
		t.Fatalf("m1nd bogus: exit %d, stderr %q", res.code, res.err)
	}
}
