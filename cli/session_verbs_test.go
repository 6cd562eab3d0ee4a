package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runtimeDir is the brain's runtime folder, as init names it.
func runtimeDir(t *testing.T, dir string) string {
	t.Helper()
	return jsonOf(t, must(t, dir, "", "init", "--json"))["runtime_dir"].(string)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSessionsListsHooksAndKeeper(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	t.Setenv("CLAUDE_ENV_FILE", "")
	rt := runtimeDir(t, dir)

	contains(t, must(t, dir, "", "sessions").out, "no live sessions (--all lists the dead ones not swept yet)")
	contains(t, must(t, dir, "", "sessions", "--all").out, "no sessions recorded (m1nd hook install claude|codex wires them in)")
	if s := jsonOf(t, must(t, dir, "", "sessions", "--json")); s["ok"] != true || len(s["sessions"].([]any)) != 0 || s["keeper"] != nil {
		t.Fatalf("sessions --json of a new brain: %v", s)
	}

	// A hook event records the session.
	start := `{"session_id":"s-claude-1","transcript_path":"/home/u/t.jsonl","cwd":"` + dir + `","hook_event_name":"SessionStart","source":"startup"}`
	if res := m1nd(t, dir, start, "hook", "claude", "SessionStart"); res.code != 0 || res.err != "" {
		t.Fatalf("hook claude SessionStart: exit %d, stderr %q", res.code, res.err)
	}
	if _, err := os.Stat(filepath.Join(rt, "sessions", "s-claude-1.json")); err != nil {
		t.Fatalf("no session record: %v", err)
	}
	// Two dead sessions of a few minutes and a few hours ago.
	now := time.Now().UTC()
	dead := func(id, agent string, ago time.Duration) string {
		return fmt.Sprintf(`{"session_id":%q,"client":"codex","agent":%q,"state":"idle","last_event":"Stop","last_event_at":%q,"started_at":%q,"pid":2147483646,"pid_start":12}`,
			id, agent, now.Add(-ago).Format(time.RFC3339), now.Add(-ago-time.Minute).Format(time.RFC3339))
	}
	writeFile(t, filepath.Join(rt, "sessions", "dead-1.json"), dead("dead-1", "dave", 5*time.Minute+20*time.Second))
	writeFile(t, filepath.Join(rt, "sessions", "dead-2.json"), dead("dead-2", "erin", 3*time.Hour+10*time.Minute))

	all := jsonOf(t, must(t, dir, "", "sessions", "--all", "--json"))
	ss := all["sessions"].([]any)
	if len(ss) != 3 {
		t.Fatalf("sessions --all --json: %v", all)
	}
	byID := map[string]map[string]any{}
	for _, s := range ss {
		s := s.(map[string]any)
		byID[s["session_id"].(string)] = s
	}
	if s := byID["s-claude-1"]; s == nil || s["agent"] != "a1" || s["client"] != "claude" || s["state"] != "mid-turn" || s["last_event"] != "SessionStart" {
		t.Fatalf("the hook's session: %v", s)
	}
	if s := byID["dead-1"]; s == nil || s["live"] != false {
		t.Fatalf("a dead session: %v", s)
	}
	text := must(t, dir, "", "sessions", "--all").out
	contains(t, text, "AGENT", "CLIENT", "WORKTREE")
	var sawClaude, saw5m, saw3h bool
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 7 && f[0] == "a1":
			sawClaude = f[1] == "claude" && f[2] == "mid-turn" && f[6] == "SessionStart" && strings.HasSuffix(f[5], "s")
		case len(f) > 7 && f[0] == "dave":
			saw5m = f[3] == "no" && f[5] == "5m"
		case len(f) > 7 && f[0] == "erin":
			saw3h = f[3] == "no" && f[5] == "3h"
		}
	}
	if !sawClaude || !saw5m || !saw3h {
		t.Fatalf("sessions --all (claude %v, 5m %v, 3h %v):\n%s", sawClaude, saw5m, saw3h, text)
	}
	if live := must(t, dir, "", "sessions").out; strings.Contains(live, "dave") || strings.Contains(live, "erin") {
		t.Fatalf("dead sessions listed without --all:\n%s", live)
	}

	// The keeper's pins, from its journal.
	writeFile(t, filepath.Join(rt, "runners.toml"), `[[keeper]]
agent = "carol"
client = "codex"
start = ["codex", "exec", "{wake}"]
`)
	at := now.Add(-time.Minute).Format(time.RFC3339)
	writeFile(t, filepath.Join(rt, "keeper", "journal.jsonl"),
		`{"at":"`+at+`","agent":"carol","event":"woke","how":"start","items":["letter:aaaaaaaaaaaa"]}
{"at":"`+at+`","agent":"carol","event":"exited","waiting":["letter:aaaaaaaaaaaa"],"next":"`+at+`","note":"the woken session ran none of m1nd's hooks"}
{"at":"`+at+`","agent":"carol","event":"gave_up","items":["letter:aaaaaaaaaaaa"],"note":"gave up waking carol"}
`)
	kept := must(t, dir, "", "sessions").out
	contains(t, kept, "\nkeeper (runnerd's [[keeper]] pins, from its journal):\n", "  carol ", "codex", "wake", "next: ",
		"  ! gave up waking carol for letter:aaaaaaaaaaaa (m1nd mail inbox --agent carol reads them)",
		"  ! the woken session ran none of m1nd's hooks")
	kj := jsonOf(t, must(t, dir, "", "sessions", "--json"))
	if k, _ := kj["keeper"].([]any); len(k) != 1 || k[0].(map[string]any)["agent"] != "carol" {
		t.Fatalf("sessions --json keeper: %v", kj)
	}

	// A pin runnerd would refuse: the list says what is wrong.
	writeFile(t, filepath.Join(rt, "runners.toml"), `[[keeper]]
agent = "bob"
client = "claude"
start = ["claude", "-p", "{wake}"]
floor = 1
`)
	contains(t, must(t, dir, "", "sessions").out, "\nkeeper: ", "field floor: needs stream")
	if p, _ := jsonOf(t, must(t, dir, "", "sessions", "--json"))["keeper_problem"].(string); !strings.Contains(p, "field floor: needs stream") {
		t.Fatalf("keeper_problem %q", p)
	}
}

func TestHookWithNoAgent(t *testing.T) {
	r := newRepo(t)
	must(t, r.Dir, "", "init")
	t.Setenv("M1ND_AGENT", "")
	stop := `{"session_id":"s1","hook_event_name":"Stop","cwd":"` + r.Dir + `"}`
	for _, host := range []string{"claude", "codex"} {
		res := m1nd(t, r.Dir, stop, "hook", host, "Stop")
		want := "m1nd hook " + host + " Stop: no agent is set, so nothing is injected; name the session's agent with --agent in the hook entry, M1ND_AGENT, or git config m1nd.agent\n"
		if res.code != 0 || res.out != "" || res.err != want {
			t.Fatalf("hook %s Stop with no agent: exit %d, stdout %q, stderr %q", host, res.code, res.out, res.err)
		}
	}
	// Named by --agent, the same hook answers.
	if res := m1nd(t, r.Dir, stop, "hook", "claude", "Stop", "--agent", "b2"); res.code != 0 || res.err != "" {
		t.Fatalf("hook claude Stop --agent b2: exit %d, stderr %q", res.code, res.err)
	}
}

func TestCompletionScripts(t *testing.T) {
	r := newRepo(t)
	bash := must(t, r.Dir, "", "completion", "bash").out
	contains(t, bash, "_m1nd_complete", "complete ", "--generate-bash-completion")
	zsh := must(t, r.Dir, "", "completion", "zsh").out
	contains(t, zsh, "compdef", "--generate-bash-completion")
	fish := must(t, r.Dir, "", "completion", "fish").out
	contains(t, fish, "complete -c m1nd")
	if bash == zsh || zsh == fish {
		t.Fatal("two shells got the same script")
	}
	res := m1nd(t, r.Dir, "", "completion", "tcsh")
	if res.code != exitUsage || !strings.Contains(res.err, `no completion for shell "tcsh": use bash, zsh or fish`) || res.out != "" {
		t.Fatalf("completion tcsh: exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
	}
}

func TestBrainRename(t *testing.T) {
	// Unregistered (no init): a rename is git config.
	r := newRepo(t)
	dir := r.Dir
	contains(t, must(t, dir, "", "brain", "rename", "shop").out, "brain renamed shop (git config m1nd.brain)")
	if got := gitOut(t, dir, "config", "m1nd.brain"); got != "shop" {
		t.Fatalf("git config m1nd.brain = %q", got)
	}
	j := jsonOf(t, must(t, dir, "", "brain", "rename", "--json", "shop2"))
	if j["ok"] != true || j["brain"] != "shop2" {
		t.Fatalf("brain rename --json: %v", j)
	}
	if res := m1nd(t, dir, "", "brain", "rename", "a/b"); res.code != exitUsage || !strings.Contains(res.err, "cannot name a brain") {
		t.Fatalf("a bad brain name: exit %d, stderr %q", res.code, res.err)
	}

	// Registered at init: a human gesture at a terminal.
	must(t, dir, "", "init")
	// The registration holds the name now; git config m1nd.brain stays
	// set, and the rename below must carry it along (else every verb after
	// it would be refused brain_mismatch).
	contains(t, must(t, dir, "", "status").out, "brain    shop2")
	brainRef := gitOut(t, dir, "rev-parse", "refs/m1nd/brain")
	refused(t, m1nd(t, dir, "", "brain", "rename", "delta"), "human_gesture_required", false)
	refused(t, m1ndTTY(t, dir, "gamma\n", "brain", "rename", "delta"), "human_gesture_required", false)
	if got := gitOut(t, dir, "rev-parse", "refs/m1nd/brain"); got != brainRef {
		t.Fatalf("a refused rename moved refs/m1nd/brain")
	}
	ok := m1ndTTY(t, dir, "delta\n", "brain", "rename", "delta")
	if ok.code != 0 {
		t.Fatalf("brain rename at a terminal: exit %d\n%s%s", ok.code, ok.out, ok.err)
	}
	contains(t, ok.out, "Rename brain shop2 to delta", "brain renamed delta (refs/m1nd/brain; it was shop2): sync to carry the name to every clone")
	if got := gitOut(t, dir, "cat-file", "blob", "refs/m1nd/brain:brain.json"); !strings.Contains(got, `"name":"delta"`) || !strings.Contains(got, `"names":["shop2","delta"]`) {
		t.Fatalf("brain.json after the rename: %s", got)
	}
	contains(t, must(t, dir, "", "brain", "show").out, "brain delta (registered in refs/m1nd/brain, earlier shop2")
	if got := gitOut(t, dir, "config", "m1nd.brain"); got != "delta" {
		t.Fatalf("git config m1nd.brain = %q after the rename, want delta", got)
	}
}

func TestDemoWithoutServing(t *testing.T) {
	hermetic(t, "a1")
	dir := filepath.Join(t.TempDir(), "demo1")
	res := must(t, t.TempDir(), "", "demo", "--no-serve", "--dir", dir)
	contains(t, res.out, `demo brain "demo1" built in `+dir, "brain    demo1", "missions ",
		"Try, in another terminal:\n  cd "+dir+"\n", " blocks\n", " mission heads\n", " mission log msn_", "git log refs/m1nd/missions/msn_")
	gitOut(t, dir, "rev-parse", "--verify", "refs/m1nd/store")
	heads := jsonOf(t, must(t, dir, "", "mission", "heads", "--json"))
	if ms, _ := heads["missions"].([]any); len(ms) == 0 {
		t.Fatalf("the demo brain has no missions: %v", heads)
	}
	// The hint's mission is the one waiting to land.
	var mw string
	for _, line := range strings.Split(res.out, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "git log refs/m1nd/missions/"); ok {
			mw = id
		}
	}
	if got := jsonOf(t, must(t, dir, "", "mission", "show", mw, "--json"))["view"].(map[string]any)["phase"]; got != "merge_wait" {
		t.Fatalf("the hint's mission %s is at %v, want merge_wait", mw, got)
	}

	// --json, into a folder of the system's temp dir.
	t.Setenv("TMPDIR", t.TempDir())
	j := jsonOf(t, must(t, t.TempDir(), "", "demo", "--no-serve", "--json"))
	built, _ := j["dir"].(string)
	if j["ok"] != true || !strings.HasPrefix(built, os.Getenv("TMPDIR")) || filepath.Base(built) != "demo-brain" {
		t.Fatalf("demo --json: %v", j)
	}
	gitOut(t, built, "rev-parse", "--verify", "refs/m1nd/store")

	if res := m1nd(t, t.TempDir(), "", "demo", "--no-serve", "--dir", dir, "other"); res.code != exitUsage || !strings.Contains(res.err, "name the folder once") {
		t.Fatalf("demo with two folders: exit %d, stderr %q", res.code, res.err)
	}
}

// TestMCPRefusals: m1nd mcp does not serve without an agent or with an
// argument (fullcli's TestMCPOverStdio runs it over stdio).
func TestMCPRefusals(t *testing.T) {
	dir, _ := scanned(t)
	// No agent: a usage error naming how to set one, nothing served.
	t.Setenv("M1ND_AGENT", "")
	if res := m1nd(t, dir, "", "mcp"); res.code != exitUsage || !strings.Contains(res.err, "m1nd mcp acts as an agent, and none is set here") || res.out != "" {
		t.Fatalf("mcp without an agent: exit %d, stdout %q, stderr %q", res.code, res.out, res.err)
	}
	if res := m1nd(t, dir, "", "mcp", "extra"); res.code != exitUsage {
		t.Fatalf("mcp with an argument: exit %d, stderr %q", res.code, res.err)
	}
}
