package githook

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/chain/chaintest"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// hookRig is a brain in a real repository, for the hook's own checks.
type hookRig struct {
	t    *testing.T
	g    *gittest.Repo
	repo *gitstore.Repo
	m    *chain.Missions
}

func newChainRig(t *testing.T) *hookRig {
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &hookRig{t: t, g: g, repo: repo, m: &chain.Missions{Repo: repo, Brain: "brain"}}
}

// mergeWait makes a mission whose head is merge_wait and returns it.
func (r *hookRig) mergeWait() (*chain.Head, string) {
	r.t.Helper()
	return chaintest.MergeWait(r.t, r.m, "sb_brain_core")
}

// TestCheckTransactionPackedRefs is the hook's view of packed refs: the
// loose copy that `git pack-refs` deletes is no deletion, nor is a second
// prune once it is gone; a deletion that takes the ref out of packed-refs
// is; and a zero old value is read from packed-refs.
func TestCheckTransactionPackedRefs(t *testing.T) {
	r := newChainRig(t)
	a, refA := r.mergeWait()
	b, refB := r.mergeWait()
	// Packed with the loose files kept: each loose file holds its packed
	// value, as when pack-refs is about to delete it.
	r.g.Git("pack-refs", "--all", "--no-prune")
	noise := []laws.Update{{Old: a.Commit, Ref: refA}, {Old: b.Commit, Ref: refB}}
	if faults, _ := CheckTransaction(r.repo, noise, nil); len(faults) != 0 {
		t.Fatalf("pack-refs noise refused: %v", faults)
	}
	// A deletion without the old value is never pack-refs at work.
	if faults, _ := CheckTransaction(r.repo, []laws.Update{{Ref: refB}}, nil); len(faults) != 1 || faults[0].Code != string(rules.InvalidTransition) {
		t.Fatalf("a deletion without an old value: %v", faults)
	}
	// Once the loose copy is gone, the same deletion is another pack-refs
	// pruning after the first (nothing moves), unless its git is taking the
	// ref out of packed-refs: then packed-refs.lock, written at prepare,
	// leaves it out, and the deletion would bury the chain.
	if err := os.Remove(filepath.Join(r.repo.CommonDir(), filepath.FromSlash(refA))); err != nil {
		t.Fatal(err)
	}
	if faults, _ := CheckTransaction(r.repo, noise, nil); len(faults) != 0 {
		t.Fatalf("a second prune of a packed ref: %v", faults)
	}
	packed, _ := os.ReadFile(filepath.Join(r.repo.CommonDir(), "packed-refs"))
	lock := filepath.Join(r.repo.CommonDir(), "packed-refs.lock")
	os.WriteFile(lock, packed, 0o644) // a pack-refs writing packed-refs: refA stays
	if faults, _ := CheckTransaction(r.repo, noise, nil); len(faults) != 0 {
		t.Fatalf("a prune while pack-refs rewrites packed-refs: %v", faults)
	}
	var without []string
	for _, line := range strings.Split(string(packed), "\n") {
		if !strings.HasSuffix(line, " "+refA) {
			without = append(without, line)
		}
	}
	os.WriteFile(lock, []byte(strings.Join(without, "\n")), 0o644) // git update-ref -d refA at prepare
	faults, _ := CheckTransaction(r.repo, noise, nil)
	if len(faults) != 1 || faults[0].Ref != refA || faults[0].Code != string(rules.InvalidTransition) {
		t.Fatalf("a deletion of a packed-only ref: %v", faults)
	}
	os.Remove(lock)
	// A writer that gives no old value: the ref's value is read from
	// packed-refs, so moving it back to its parent is a rewrite.
	first, _ := r.repo.ReadCommit(a.Commit)
	faults, _ = CheckTransaction(r.repo, []laws.Update{{New: first.Parents[0], Ref: refA}}, nil)
	if len(faults) != 1 || faults[0].Code != string(rules.InvalidTransition) {
		t.Fatalf("a rewrite of a packed-only ref without an old value: %v", faults)
	}
}

// olderHookScript is the reference-transaction script m1nd installed before
// it skipped the committed and aborted states.
const olderHookScript = `#!/bin/sh
# m1nd-hook: keeps raw git writes to refs/m1nd/ honest. 'm1nd hooks uninstall' removes it.
input=$(cat)
chained="$(dirname "$0")/reference-transaction.m1nd-chained"
if [ -x "$chained" ]; then
	printf '%s\n' "$input" | "$chained" "$@" || exit $?
fi
case "$input" in
*" refs/m1nd/"*) printf '%s\n' "$input" | m1nd hooks run reference-transaction "$@"; exit $? ;;
esac
exit 0
`

// guard guards r's worktree with a spy for m1nd.
func (r *hookRig) guard(spy string) {
	r.t.Helper()
	if _, err := Guard(context.Background(), r.repo, r.g.Dir, spy); err != nil {
		r.t.Fatal(err)
	}
}

// TestGitHookRunsM1ndOnlyWhenPrepared guards a worktree with a spy for
// m1nd in a real repository: git runs the guard for prepared and
// committed, m1nd is started for prepared only; the repository's own
// reference-transaction hook still sees both, with its own name in $0. A
// pre-receive script has no state to look at.
func TestGitHookRunsM1ndOnlyWhenPrepared(t *testing.T) {
	r := newChainRig(t)
	dir := filepath.Join(r.repo.CommonDir(), "hooks")
	work := t.TempDir()
	spy := filepath.Join(work, "m1nd-spy")
	os.WriteFile(spy, []byte("#!/bin/sh\necho \"$*\" >>"+filepath.Join(work, "m1nd.log")+"\ncat >/dev/null\n"), 0o755)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, GitHookReferenceTransaction), []byte("#!/bin/sh\necho \"$1 ${0##*/}\" >>"+filepath.Join(work, "chained.log")+"\ncat >/dev/null\n"), 0o755)
	r.guard(spy)
	head := r.g.Git("rev-parse", "HEAD")
	r.g.Git("update-ref", "refs/m1nd/missions/msn_0123456789ab", head)
	if log, _ := os.ReadFile(filepath.Join(work, "m1nd.log")); string(log) != "hooks run reference-transaction prepared\n" {
		t.Errorf("m1nd was started for:\n%s", log)
	}
	if log, _ := os.ReadFile(filepath.Join(work, "chained.log")); string(log) != "prepared reference-transaction\ncommitted reference-transaction\n" {
		t.Errorf("the repository's own hook ran for:\n%s", log)
	}
	if strings.Contains(Script(GitHookPreReceive, "m1nd"), "prepared") {
		t.Errorf("the pre-receive script looks for a state:\n%s", Script(GitHookPreReceive, "m1nd"))
	}
}

// TestInstallGitHookRefreshesAnOlderScript: a script m1nd installed before
// is replaced by the current one, the hook it chained the old way moved
// into m1nd-chained/ under its own name; then installing again changes
// nothing, and uninstalling puts the chained hook back.
func TestInstallGitHookRefreshesAnOlderScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, GitHookPreReceive)
	os.WriteFile(path, []byte(olderHookScript), 0o755)
	os.WriteFile(path+legacyChainedSuffix, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	changed, err := InstallGitHook(dir, GitHookPreReceive, "m1nd")
	if err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	if data, _ := os.ReadFile(path); string(data) != Script(GitHookPreReceive, "m1nd") {
		t.Fatalf("after the refresh:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, chainedDir, GitHookPreReceive)); string(data) != "#!/bin/sh\nexit 0\n" {
		t.Fatalf("the chained hook did not move, or changed:\n%s", data)
	}
	if _, err := os.Stat(path + legacyChainedSuffix); err == nil {
		t.Fatal("the old chained name is still there")
	}
	if changed, err := InstallGitHook(dir, GitHookPreReceive, "m1nd"); err != nil || changed {
		t.Fatalf("again: %v %v", changed, err)
	}
	if changed, err := UninstallGitHook(dir, GitHookPreReceive); err != nil || !changed {
		t.Fatalf("uninstall: %v %v", changed, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "#!/bin/sh\nexit 0\n" {
		t.Fatalf("the chained hook is not back:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, chainedDir)); err == nil {
		t.Fatal("an empty m1nd-chained folder was left")
	}
}

func FuzzParseUpdates(f *testing.F) {
	z := strings.Repeat("0", 40)
	a := strings.Repeat("a", 40)
	for _, s := range []string{z + " " + a + " refs/m1nd/missions/msn_0123456789ab\n", a + " " + z + " refs/heads/main\n", "garbage\n", "", "x y z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		updates, err := ParseUpdates(strings.NewReader(input))
		if err != nil {
			return
		}
		for _, u := range updates {
			if !strings.HasPrefix(u.Ref, "refs/m1nd/") {
				t.Fatalf("kept %q", u.Ref)
			}
		}
	})
}

// TestPackRefsPrunesWithoutStartingM1nd: in a guarded worktree (a spy for
// m1nd), `git pack-refs --all` over many loose m1nd refs starts no m1nd:
// neither the transaction that writes packed-refs (each ref at the value
// its loose file holds) nor the prune of each loose file; a real write, a
// creation while packed-refs.lock is held included, and a real deletion of
// a loose or a packed ref still reach m1nd.
func TestPackRefsPrunesWithoutStartingM1nd(t *testing.T) {
	r := newChainRig(t)
	work := t.TempDir()
	spyLog := filepath.Join(work, "m1nd.log")
	spy := filepath.Join(work, "m1nd-spy")
	os.WriteFile(spy, []byte("#!/bin/sh\nn=$(grep -c ' refs/m1nd/')\necho \"$* lines=$n\" >>"+spyLog+"\n"), 0o755)
	r.guard(spy)
	head := r.g.Git("rev-parse", "HEAD")
	var create strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&create, "create refs/m1nd/missions/msn_%012x %s\n", i, head)
	}
	r.g.GitStdin(create.String(), "-c", "core.hooksPath=/dev/null", "update-ref", "--stdin")
	r.g.Git("pack-refs", "--all")
	if log, _ := os.ReadFile(spyLog); len(log) != 0 {
		t.Fatalf("pack-refs of 40 loose refs started m1nd for:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(r.repo.CommonDir(), "refs", "m1nd", "missions", "msn_000000000001")); err == nil {
		t.Fatal("pack-refs left the loose file")
	}
	// Each real write reaches m1nd at least once (a packed ref's deletion
	// is two transactions in git: packed-refs, then the loose side).
	// A stray packed-refs.lock makes no creation look like packing.
	lock := filepath.Join(r.repo.CommonDir(), "packed-refs.lock")
	os.WriteFile(lock, nil, 0o644)
	os.Remove(spyLog)
	r.g.Git("update-ref", "refs/m1nd/missions/msn_0000000000fe", head, strings.Repeat("0", 40))
	if log, _ := os.ReadFile(spyLog); !strings.Contains(string(log), "prepared lines=1\n") {
		t.Fatalf("a creation under a held packed-refs.lock did not start m1nd: %q", log)
	}
	os.Remove(lock)
	for _, args := range [][]string{
		{"update-ref", "refs/m1nd/missions/msn_0000000000ff", head},       // a loose-only ref
		{"update-ref", "-d", "refs/m1nd/missions/msn_0000000000ff", head}, // its deletion
		{"update-ref", "-d", "refs/m1nd/missions/msn_000000000001", head}, // a packed-only ref's
	} {
		os.Remove(spyLog)
		r.g.Git(args...)
		if log, _ := os.ReadFile(spyLog); !strings.Contains(string(log), "prepared lines=1\n") {
			t.Fatalf("git %s did not start m1nd: %q", strings.Join(args, " "), log)
		}
	}
}

// TestPreReceiveWakesForProtectedBranches: the pre-receive script calls
// m1nd for a push of refs/m1nd/ refs or of a protected branch — its name
// quoted, whatever characters git allows in it — and for nothing else,
// passing the policy's flags through intact.
func TestPreReceiveWakesForProtectedBranches(t *testing.T) {
	work := t.TempDir()
	spy := filepath.Join(work, "m1nd-spy")
	log := filepath.Join(work, "m1nd.log")
	os.WriteFile(spy, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done >>"+log+"\necho >>"+log+"\ncat >/dev/null\n"), 0o755)
	odd := `rel$(touch pwned)'"x`
	policy := PushPolicy{RequirePasskey: true, Protect: []string{"main", odd}}
	script := filepath.Join(work, GitHookPreReceive)
	os.WriteFile(script, []byte(Script(GitHookPreReceive, spy, policy.HookArgs()...)), 0o755)
	zero := strings.Repeat("0", 40)
	one := strings.Repeat("1", 40)
	for _, tc := range []struct {
		ref  string
		wake bool
	}{
		{"refs/m1nd/missions/msn_0123456789ab", true},
		{"refs/heads/main", true},
		{"refs/heads/" + odd, true},
		{"refs/heads/wip", false},
		{"refs/tags/v1", false},
	} {
		os.Remove(log)
		cmd := exec.Command("sh", script)
		cmd.Dir = work
		cmd.Stdin = strings.NewReader(zero + " " + one + " " + tc.ref + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.ref, err, out)
		}
		got, _ := os.ReadFile(log)
		want := ""
		if tc.wake {
			want = "[hooks][run][pre-receive][--require-passkey][--protect][main][--protect][" + odd + "]\n"
		}
		if string(got) != want {
			t.Errorf("a push of %s started m1nd as %q, want %q", tc.ref, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "pwned")); err == nil {
		t.Error("a branch name ran as shell")
	}
}
