package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSyncWithABareRemote(t *testing.T) {
	dir, block := scanned(t)
	// The installed hook would run "m1nd" from PATH, which a test binary is
	// not: sync here checks its own links, the hook is tested elsewhere.
	must(t, dir, "", "hooks", "uninstall")
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	gitOut(t, dir, "remote", "add", "origin", bare)
	must(t, dir, "", "mission", "new", "--block", block)

	rep := jsonOf(t, must(t, dir, "", "sync", "--json"))
	if rep["ok"] != true {
		t.Fatalf("sync: %v", rep)
	}
	local := gitOut(t, dir, "rev-parse", "refs/m1nd/store")
	if remote := gitOut(t, bare, "rev-parse", "refs/m1nd/store"); remote != local {
		t.Fatalf("remote store %s, local %s", remote, local)
	}
	contains(t, must(t, dir, "", "sync", "origin").out, "sync with origin: ", "0 refs pushed")

	res := m1nd(t, dir, "", "sync", "not a remote")
	if res.code != exitUsage || !strings.Contains(res.err, "is not a remote name") {
		t.Fatalf("sync with a bad remote name: exit %d, stderr %q", res.code, res.err)
	}
}

func TestHooksRun(t *testing.T) {
	r := newRepo(t)
	dir := r.Dir
	// committed and aborted transactions are past judging.
	must(t, dir, strings.Repeat("0", 40)+" "+strings.Repeat("1", 40)+" refs/m1nd/store\n", "hooks", "run", "reference-transaction", "committed")
	// A prepared transaction that touches nothing of m1nd's passes.
	head := gitOut(t, dir, "rev-parse", "HEAD")
	must(t, dir, strings.Repeat("0", 40)+" "+head+" refs/heads/other\n", "hooks", "run", "reference-transaction", "prepared")
	// Deleting the store is refused.
	must(t, dir, "", "init")
	must(t, dir, "", "skeleton", "scan")
	store := gitOut(t, dir, "rev-parse", "refs/m1nd/store")
	del := m1nd(t, dir, store+" "+strings.Repeat("0", 40)+" refs/m1nd/store\n", "hooks", "run", "reference-transaction", "prepared")
	if del.code != exitRefused || !strings.Contains(del.err, "m1nd: refused: ") || !strings.Contains(del.err, "refs/m1nd/store") {
		t.Fatalf("deleting the store through the hook: exit %d, stderr %q", del.code, del.err)
	}
	res := m1nd(t, dir, "", "hooks", "run", "post-commit")
	if res.code != exitUsage || !strings.Contains(res.err, `unknown git hook "post-commit"`) {
		t.Fatalf("unknown git hook: exit %d, stderr %q", res.code, res.err)
	}
}

func TestMissionPacketAndDelivery(t *testing.T) {
	dir, block := scanned(t)
	packet := filepath.Join(t.TempDir(), "packet.md")
	if err := os.WriteFile(packet, []byte("# do the thing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := jsonOf(t, must(t, dir, "", "mission", "new", "--block", block, "--packet", packet, "--deliver-to", "b2", "--json"))
	id, _ := res["mission_id"].(string)
	if d, _ := res["delivered"].(map[string]any); d == nil || d["id"] == "" {
		t.Fatalf("mission new --deliver-to: %v", res)
	}
	shown := must(t, dir, "", "mission", "show", id).out
	contains(t, shown, "packet      sha256:")
	t.Setenv("M1ND_AGENT", "") // the owner reads b2's inbox
	in := jsonOf(t, must(t, dir, "", "mail", "inbox", "--agent", "b2", "--json"))
	if in["unread"] != float64(1) {
		t.Fatalf("b2's inbox after delivery: %v", in)
	}
	// The packet may come from stdin too.
	contains(t, must(t, dir, "# from stdin\n", "mission", "new", "--block", block, "--packet", "-").out, "opened msn_")

	missing := m1nd(t, dir, "", "mission", "new", "--block", block, "--packet", filepath.Join(t.TempDir(), "none.md"))
	if missing.code != exitUsage || !strings.Contains(missing.err, "read packet") {
		t.Fatalf("a missing packet: exit %d, stderr %q", missing.code, missing.err)
	}
	t.Setenv("M1ND_AGENT", "Not Valid")
	bad := m1nd(t, dir, "", "mission", "new", "--block", block)
	if bad.code != exitUsage || !strings.Contains(bad.err, "(from M1ND_AGENT) is not valid") {
		t.Fatalf("an invalid agent id: exit %d, stderr %q", bad.code, bad.err)
	}
}
