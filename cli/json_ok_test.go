package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/internal/wire"
)

// jsonVerbs walks the command tree and returns the path ("mission show")
// of every verb that takes --json.
func jsonVerbs(cmds []*cli.Command, parent string) []string {
	var out []string
	for _, c := range cmds {
		path := strings.TrimSpace(parent + " " + c.Name)
		if len(c.Subcommands) > 0 {
			out = append(out, jsonVerbs(c.Subcommands, path)...)
			continue
		}
		for _, f := range c.Flags {
			if slices.Contains(f.Names(), "json") {
				out = append(out, path)
			}
		}
	}
	return out
}

// firstKey returns the first key of the one JSON object in s and its value.
func firstKey(t *testing.T, s string) (string, any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", s)
	}
	tok, err := dec.Token()
	if err != nil {
		t.Fatalf("an empty JSON object: %q", s)
	}
	key, _ := tok.(string)
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	var whole map[string]any // and it is one valid object
	if err := json.Unmarshal([]byte(s), &whole); err != nil {
		t.Fatalf("not one JSON object: %v: %q", err, s)
	}
	return key, v
}

// TestEveryJSONReplyStartsWithOK runs every verb that takes --json in a
// prepared brain and checks that its reply's first key is "ok": true when
// it exits 0, false when it is refused (exit 3). A verb added with --json
// and not listed here fails the test until it is.
func TestEveryJSONReplyStartsWithOK(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	run := func(in string, args ...string) result { return m1nd(t, dir, in, args...) }
	val := func(res result, key string) string {
		t.Helper()
		m := jsonOf(t, res)
		for _, k := range strings.Split(key, ".") {
			if inner, ok := m[k].(map[string]any); ok {
				m = inner
				continue
			}
			s, _ := m[k].(string)
			return s
		}
		return ""
	}
	storeVersion := func() string {
		t.Helper()
		return jsonStoreVersion(t, must(t, dir, "", "status", "--json"))
	}

	// The state the verbs act on.
	must(t, dir, "", "skeleton", "scan")
	mid := val(must(t, dir, "", "mission", "new", "--block", "sb_proj_core", "--json"), "id")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	gateLog := runs.SideLog(repo.RuntimeDir(), mid, runs.LogGate)
	agentLog := runs.SideLog(repo.RuntimeDir(), mid, runs.LogAgent)
	runners := filepath.Join(repo.RuntimeDir(), "runners.toml")
	repo.Close()
	if err := os.MkdirAll(filepath.Dir(gateLog), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(runners, fmt.Appendf(nil, "[[runner]]\nid = \"r1\"\ncapability = \"build-runner\"\ncommand = [\"true\", \"{packet_file}\"]\ngate_command = \"true\"\nworkspace_allowlist = [%q]\n", filepath.Dir(dir)), 0o600)
	os.WriteFile(gateLog, []byte("ok\n"), 0o600) // as a runner here would have kept it
	os.WriteFile(agentLog, []byte("done\n"), 0o600)
	r.Git("-C", dir, "branch", "m1nd/"+mid) // its work branch, for mission diff
	must(t, dir, "", "agent", "key", "create", "a1")
	mem := val(must(t, dir, "", "memory", "add", "--sort", "idea", "--json", "a first memory"), "id")
	mail := val(must(t, dir, "", "mail", "send", "--to", "all", "--what", "hello", "--json"), "id")
	must(t, dir, "", "mail", "send", "--agent", "a2", "--to", "a1", "--what", "for your inbox")
	ops := filepath.Join(t.TempDir(), "ops.json")
	os.WriteFile(ops, []byte(`[{"op":"rename","block_id":"sb_proj_core","name":"Core"}]`), 0o644)
	receipt := filepath.Join(t.TempDir(), "receipt.json")
	os.WriteFile(receipt, []byte(`{}`), 0o644)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != wire.PathMissionSpawn {
			http.NotFound(w, req)
			return
		}
		json.NewEncoder(w).Encode(wire.RunReply{Accepted: true, MissionID: "msn_0123456789ab", RunnerID: "r1"})
	}))
	defer owner.Close()
	remote := filepath.Join(t.TempDir(), "remote.git")
	r.Git("init", "-q", "--bare", remote)
	r.Git("-C", dir, "remote", "add", "origin", remote)

	// In order: the verbs that install git hooks come last.
	verbs := []struct {
		path string
		args func() []string
	}{
		{"status", nil},
		{"mission new", func() []string { return []string{"--block", "sb_proj_docs"} }},
		{"mission show", func() []string { return []string{mid} }},
		{"mission log", func() []string { return []string{mid} }},
		{"mission gate", func() []string { return []string{mid} }},
		{"mission output", func() []string { return []string{mid} }},
		{"mission diff", func() []string { return []string{mid} }},
		{"mission heads", nil},
		{"mission review", func() []string {
			// A mission a1 says waits to land: its own merge_wait, a claim.
			wid := val(must(t, dir, "", "mission", "new", "--agent", "a1", "--block", "sb_proj_core", "--json"), "id")
			next := strings.Replace(string(must(t, dir, "", "mission", "next", wid, "--phase", "merge_wait").out), `"phase":"merge_wait",`,
				`"phase":"merge_wait","gate":{"command":"go test","exit_status":0,"artifact_hash":"sha256:`+strings.Repeat("ab", 32)+`"},`, 1)
			must(t, dir, next, "mission", "post", "--agent", "a1")
			return []string{wid, "--agent", "a2", "--body", "why this way?"}
		}},
		{"mission archive", func() []string { return []string{mid} }}, // refused: no terminal
		{"mission fold", nil},
		{"land", func() []string { return []string{mid} }},
		{"skeleton scan", nil},
		{"skeleton reconcile", nil},
		{"skeleton show", nil},
		{"skeleton edit", func() []string { return []string{"--expected-store-version", storeVersion(), ops} }},
		{"skeleton ratify", nil}, // refused: no terminal
		{"blocks", nil},
		{"receipt import", func() []string {
			return []string{"--expected-store-version", storeVersion(), "--block", "sb_proj_core", receipt}
		}}, // refused: no terminal
		{"mail send", func() []string { return []string{"--to", "a2", "--what", "hi"} }},
		{"mail inbox", nil},
		{"mail show", func() []string { return []string{mail} }},
		{"mail fates", nil},
		{"spawn", func() []string {
			return []string{"--runner", "r1", "--block", "sb_proj_core", "--owner-url", owner.URL}
		}},
		{"worktrees prune", nil},
		{"verify", nil},
		{"sync", nil},
		{"memory add", func() []string { return []string{"--sort", "idea", "a second memory"} }},
		{"memory recall", nil},
		{"memory resolve", func() []string { return []string{"--as", "withdrawn", "--rationale", "no", mem} }},
		{"followup open", func() []string { return []string{"--owner", "a2", "look at the core"} }},
		{"followup list", nil},
		{"followup resolve", func() []string {
			list := jsonOf(t, must(t, dir, "", "followup", "list", "--json"))
			id := list["followups"].([]any)[0].(map[string]any)["id"].(string)
			return []string{"--withdrawn", "done", id}
		}},
		{"atlas publish", func() []string { return []string{"--kind", "plan", "ship it"} }},
		{"atlas list", nil},
		{"atlas show", func() []string { return []string{firstDoc(t, dir)} }},
		{"atlas amend", func() []string { return []string{firstDoc(t, dir), "ship it later"} }},
		{"atlas resolve", func() []string { return []string{firstDoc(t, dir)} }},
		{"agent key create", func() []string { return []string{"a3"} }},
		{"demo", func() []string { return []string{"--no-serve", filepath.Join(t.TempDir(), "demo")} }},
		{"version", nil},
		{"brain show", nil},
		{"brain keys", nil},
		{"brain rename", func() []string { return []string{"other"} }}, // refused: the brain has missions
		{"hook install", func() []string { return []string{"claude"} }},
		{"hook uninstall", func() []string { return []string{"claude"} }},
		{"sessions", func() []string { return []string{"--all"} }},
		{"init", nil},
		{"hooks install", nil},
		{"hooks uninstall", nil},
		{"runners show", nil},
		{"runners approve", nil}, // refused: not at a terminal
	}

	// What each reply is about carries its id as "id" (docs/commands.md,
	// "JSON replies"): "." for the reply's own object, else the list whose
	// every entry names one.
	named := map[string]string{
		"mission new": ".", "mission show": ".", "mission log": ".", "mission gate": ".",
		"mission output": ".", "mission diff": ".", "mission heads": "missions", "mission review": ".",
		"skeleton show": "blocks", "blocks": "blocks",
		"mail send": ".", "mail inbox": "letters", "mail show": ".",
		"memory add": ".", "memory recall": "memories", "memory resolve": ".",
		"followup open": ".", "followup list": "followups", "followup resolve": ".",
		"atlas publish": ".", "atlas list": "docs", "atlas show": ".", "atlas amend": ".", "atlas resolve": ".",
		"runners show": "runners",
	}

	listed := map[string]bool{}
	for _, v := range verbs {
		listed[v.path] = true
	}
	for _, path := range jsonVerbs(wholeCommands(), "") {
		if !listed[path] {
			t.Errorf("m1nd %s takes --json: list it in this test", path)
		}
	}

	for _, v := range verbs {
		args := append(strings.Fields(v.path), "--json")
		if v.args != nil {
			args = append(args, v.args()...)
		}
		res := run("", args...)
		if res.code != exitOK && res.code != exitRefused {
			t.Errorf("m1nd %s: exit %d, want a reply (0) or a refusal (3)\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, res.out, res.err)
			continue
		}
		key, ok := firstKey(t, res.out)
		if key != "ok" || ok != (res.code == exitOK) {
			t.Errorf("m1nd %s: exit %d, first key %q = %v, want \"ok\": %v\n%s", strings.Join(args, " "), res.code, key, ok, res.code == exitOK, res.out)
		}
		if where, ok := named[v.path]; ok {
			if res.code != exitOK {
				t.Errorf("m1nd %s: refused, so its \"id\" goes unchecked: give it what it needs\n%s", strings.Join(args, " "), res.out)
				continue
			}
			if err := namesByID(res.out, where); err != nil {
				t.Errorf("m1nd %s: %v\n%s", strings.Join(args, " "), err, res.out)
			}
		}
	}
}

func jsonStoreVersion(t *testing.T, res result) string {
	t.Helper()
	var st struct {
		StoreVersion json.Number `json:"store_version"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(res.out)))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.StoreVersion.String()
}

func firstDoc(t *testing.T, dir string) string {
	t.Helper()
	list := jsonOf(t, must(t, dir, "", "atlas", "list", "--json"))
	docs, _ := list["docs"].([]any)
	if len(docs) == 0 {
		t.Fatalf("no shared document: %v", list)
	}
	return docs[0].(map[string]any)["doc_id"].(string)
}

// namesByID checks that the reply out carries a non-empty string "id": at
// its top when where is ".", else on every entry of the non-empty list
// where.
func namesByID(out, where string) error {
	var reply map[string]any
	if err := json.Unmarshal([]byte(out), &reply); err != nil {
		return err
	}
	objects := []any{reply}
	if where != "." {
		list, _ := reply[where].([]any)
		if len(list) == 0 {
			return fmt.Errorf("no entries in %q to check", where)
		}
		objects = list
	}
	for _, o := range objects {
		m, _ := o.(map[string]any)
		if id, _ := m["id"].(string); id == "" {
			return fmt.Errorf("no \"id\" in %v", o)
		}
	}
	return nil
}
