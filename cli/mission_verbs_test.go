package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scanned is a repository after init and a skeleton scan, with the id of
// one of its candidate blocks.
func scanned(t *testing.T) (dir, block string) {
	t.Helper()
	r := newRepo(t)
	must(t, r.Dir, "", "init")
	scan := must(t, r.Dir, "", "skeleton", "scan")
	contains(t, scan.out, "next: name the blocks")
	b := jsonOf(t, must(t, r.Dir, "", "blocks", "--json"))
	blocks, _ := b["blocks"].([]any)
	if len(blocks) == 0 {
		t.Fatalf("no blocks after a scan: %v", b)
	}
	for _, x := range blocks {
		id := x.(map[string]any)["block_id"].(string)
		if strings.HasSuffix(id, "_core") {
			return r.Dir, id
		}
	}
	t.Fatalf("no core block in %v", blocks)
	return "", ""
}

func TestSkeletonVerbs(t *testing.T) {
	dir, block := scanned(t)

	st := jsonOf(t, must(t, dir, "", "status", "--json"))
	if st["store_version"] != float64(1) {
		t.Fatalf("store version after one scan: %v", st["store_version"])
	}
	contains(t, must(t, dir, "", "status").out, "store    version 1", "blocks   3")

	show := jsonOf(t, must(t, dir, "", "skeleton", "show", "--json"))
	if show["ok"] != true || show["store_version"] != float64(1) || len(show["blocks"].([]any)) != 3 {
		t.Fatalf("skeleton show: %v", show)
	}
	contains(t, must(t, dir, "", "skeleton", "show").out, block, "primary   core/", "(needs owner naming)")
	contains(t, must(t, dir, "", "blocks").out, "store v1", block)

	// A second scan finds nothing new; reconcile changes nothing either.
	contains(t, must(t, dir, "", "skeleton", "scan").out, "store v1 unchanged")
	rec := jsonOf(t, must(t, dir, "", "skeleton", "reconcile", "--json"))
	if rec["ok"] != true {
		t.Fatalf("reconcile: %v", rec)
	}
	contains(t, must(t, dir, "", "skeleton", "reconcile").out, "unchanged")

	ops := filepath.Join(t.TempDir(), "ops.json")
	if err := os.WriteFile(ops, []byte(`[{"op":"rename","block_id":"`+block+`","name":"Core","purpose":"the core package"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	v := jsonOf(t, must(t, dir, "", "status", "--json"))["store_version"].(float64)
	edit := must(t, dir, "", "skeleton", "edit", "--expected-store-version", "1", ops)
	contains(t, edit.out, "~ "+block)
	if v != 1 {
		t.Fatalf("store version %v before the edit", v)
	}
	shown := must(t, dir, "", "skeleton", "show")
	contains(t, shown.out, block+`  "Core"`, "the core package")

	// The store moved to v2: an edit that read v1 is refused.
	refused(t, m1nd(t, dir, "", "skeleton", "edit", "--expected-store-version", "1", ops), "store_version_conflict", false)
	refused(t, m1nd(t, dir, "", "skeleton", "edit", "--json", "--expected-store-version", "1", ops), "store_version_conflict", true)
	// The same edit again, from stdin, restates the store.
	body, _ := os.ReadFile(ops)
	contains(t, must(t, dir, string(body), "skeleton", "edit", "--expected-store-version", "2", "-").out, "store v2 unchanged")

	// Ratify and receipt import are human gestures: no terminal, no write.
	refused(t, m1nd(t, dir, "", "skeleton", "ratify", "--block", block), "human_gesture_required", false)
	receipt := filepath.Join(t.TempDir(), "receipt.json")
	rc := `{"block_id":"` + block + `","type":"test","emitter":{"kind":"verb","id":"go-test"},
"scope":{"block_id":"` + block + `","boundary_version":1,"contract_version":1},
"evidence":{"artifact_hash":"sha256:` + strings.Repeat("a", 64) + `","evidence_refs":["log"],
"command":"go test ./...","cwd":".","exit_status":0,"started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}`
	if err := os.WriteFile(receipt, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	env := refused(t, m1nd(t, dir, "", "receipt", "import", "--json", "--expected-store-version", "2", "--block", block, receipt), "human_gesture_required", true)
	_ = env
	if got := jsonOf(t, must(t, dir, "", "status", "--json"))["store_version"]; got != float64(2) {
		t.Fatalf("a refused gesture wrote the store: version %v", got)
	}
}

func TestMissionVerbs(t *testing.T) {
	dir, block := scanned(t)

	// A real block, then a synthetic probe.
	opened := jsonOf(t, must(t, dir, "", "mission", "new", "--block", block, "--json"))
	id, _ := opened["mission_id"].(string)
	if opened["ok"] != true || !strings.HasPrefix(id, "msn_") || opened["letter_id"] == "" {
		t.Fatalf("mission new: %v", opened)
	}
	syn := must(t, dir, "", "mission", "new", "--block", "sb_probe", "--synthetic")
	contains(t, syn.out, "opened msn_", "judging")

	heads := jsonOf(t, must(t, dir, "", "mission", "heads", "--json"))
	if ms, _ := heads["missions"].([]any); len(ms) != 2 {
		t.Fatalf("heads: %v", heads)
	}
	contains(t, must(t, dir, "", "mission", "heads").out, id, block, "judging")
	contains(t, must(t, dir, "", "mission", "heads", "--phase", "landed").out, "no mission heads in phase landed")

	head := jsonOf(t, must(t, dir, "", "mission", "show", id, "--json"))
	if head["mission_id"] != id || head["head_letter_id"] != opened["letter_id"] {
		t.Fatalf("show: %v", head)
	}
	contains(t, must(t, dir, "", "mission", "show", id).out, "mission     "+id+" #1", "phase       judging", "block       "+block)

	// next | post: the next letter goes in through stdin.
	next := must(t, dir, "", "mission", "next", id, "--phase", "executing")
	var letter map[string]any
	if err := json.Unmarshal([]byte(next.out), &letter); err != nil {
		t.Fatalf("next is not a letter: %v\n%s", err, next.out)
	}
	if letter["mission_seq"] != float64(2) || letter["prev_letter_id"] != opened["letter_id"] || letter["phase"] != "executing" {
		t.Fatalf("next letter: %v", letter)
	}
	stale := must(t, dir, "", "mission", "next", id).out // seq 2 too, still judging
	posted := jsonOf(t, must(t, dir, next.out, "mission", "post"))
	if posted["ok"] != true || posted["mission_id"] != id || posted["deduped"] != false {
		t.Fatalf("post: %v", posted)
	}
	again := jsonOf(t, must(t, dir, next.out, "mission", "post", "-"))
	if again["deduped"] != true {
		t.Fatalf("posting the same letter again: %v", again)
	}
	ref := "refs/m1nd/missions/" + id
	if n := gitOut(t, dir, "rev-list", "--count", ref); n != "2" {
		t.Fatalf("%s has %s commits, want 2", ref, n)
	}
	if got := gitOut(t, dir, "cat-file", "blob", ref+":letter.json"); !strings.Contains(got, `"phase":"executing"`) {
		t.Fatalf("head letter in git: %s", got)
	}

	// Refused posts: always JSON on stdout, exit 3.
	refused(t, m1nd(t, dir, stale, "mission", "post"), "stale_head", true)
	refused(t, m1nd(t, dir, "{not json", "mission", "post"), "invalid_letter", true)
	bad := strings.Replace(next.out, `"schema":"m1nd-mission-letter-v0"`, `"schema":"m1nd-mission-letter-v9"`, 1)
	if bad == next.out {
		t.Fatalf("no schema field to change in %s", next.out)
	}
	refused(t, m1nd(t, dir, bad, "mission", "post"), "schema_mismatch", true)
	if n := gitOut(t, dir, "rev-list", "--count", ref); n != "2" {
		t.Fatalf("a refused post moved %s: %s commits", ref, n)
	}

	lg := jsonOf(t, must(t, dir, "", "mission", "log", id, "--json"))
	if ls, _ := lg["letters"].([]any); lg["mission_id"] != id || len(ls) != 2 {
		t.Fatalf("log: %v", lg)
	}
	text := must(t, dir, "", "mission", "log", id).out
	if lines := strings.Split(strings.TrimSpace(text), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "#1") || !strings.Contains(lines[1], "executing") {
		t.Fatalf("log text:\n%s", text)
	}

	// Archive is a human gesture.
	refused(t, m1nd(t, dir, "", "mission", "archive", id), "human_gesture_required", false)
	refused(t, m1nd(t, dir, "", "mission", "archive", "--json", id), "human_gesture_required", true)

	st := jsonOf(t, must(t, dir, "", "status", "--json"))
	if st["missions"] != float64(2) {
		t.Fatalf("status missions: %v", st)
	}
}

// gitOut runs the real git in dir with the hermetic environment.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := execGit(dir, args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
