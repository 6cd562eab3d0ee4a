package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// m1ndTTY runs the CLI as if at a terminal, the operator typing in.
func m1ndTTY(t *testing.T, dir, in string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"m1nd", "-C", dir}, args...),
		&IOStreams{In: strings.NewReader(in), Out: &out, Err: &errb, Interactive: func() bool { return true }}, wholeCLI)
	return result{code: code, out: out.String(), err: errb.String()}
}

func TestGesturesAtATerminal(t *testing.T) {
	dir, block := scanned(t)
	ops := filepath.Join(t.TempDir(), "ops.json")
	if err := os.WriteFile(ops, []byte(`[{"op":"rename","block_id":"`+block+`","name":"Core","purpose":"the core package"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, dir, "", "skeleton", "edit", "--expected-store-version", "1", ops)

	// A wrong answer at the prompt is no gesture.
	wrong := m1ndTTY(t, dir, "no\n", "skeleton", "ratify", "--block", block)
	refused(t, wrong, "human_gesture_required", false)
	contains(t, wrong.out, "Type sk_proj_candidate to confirm: ")

	ok := m1ndTTY(t, dir, "sk_proj_candidate\n", "skeleton", "ratify", "--block", block)
	if ok.code != 0 {
		t.Fatalf("ratify at a terminal: exit %d\n%s%s", ok.code, ok.out, ok.err)
	}
	contains(t, ok.out, "ratified "+block)
	show := jsonOf(t, must(t, dir, "", "skeleton", "show", "--json"))
	for _, b := range show["blocks"].([]any) {
		if b := b.(map[string]any); b["block_id"] == block && b["state"] != "ratified" {
			t.Fatalf("%s after ratify: %v", block, b)
		}
	}
	// Still candidate blocks left: the unnamed ones are refused.
	refused(t, m1ndTTY(t, dir, "sk_proj_candidate\n", "skeleton", "ratify"), "needs_owner_naming", false)

	// A receipt imported at the terminal turns the block's evidence.
	v := jsonOf(t, must(t, dir, "", "status", "--json"))["store_version"].(float64)
	rc := `{"block_id":"` + block + `","type":"test","emitter":{"kind":"verb","id":"go-test"},
"scope":{"block_id":"` + block + `","boundary_version":1,"contract_version":1},
"evidence":{"artifact_hash":"sha256:` + strings.Repeat("a", 64) + `","evidence_refs":["log"],
"command":"go test ./...","cwd":".","exit_status":0,"started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}`
	receipt := filepath.Join(t.TempDir(), "receipt.json")
	if err := os.WriteFile(receipt, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	imp := m1ndTTY(t, dir, block+"\n", "receipt", "import", "--expected-store-version", itoa(v), "--block", block, receipt)
	if imp.code != 0 {
		t.Fatalf("receipt import at a terminal: exit %d\n%s%s", imp.code, imp.out, imp.err)
	}
	contains(t, imp.out, "Type "+block+" to confirm: ", "receipt imported into "+block)
	for _, b := range jsonOf(t, must(t, dir, "", "blocks", "--json"))["blocks"].([]any) {
		if b := b.(map[string]any); b["block_id"] == block && b["receipt_count"] != float64(1) {
			t.Fatalf("%s after the import: %v", block, b)
		}
	}
}

func itoa(f float64) string { return strconv.FormatInt(int64(f), 10) }
