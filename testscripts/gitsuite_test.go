package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/testkit/gittest"
	"github.com/m1nd/m1nd/testkit/longtest"
)

// Git's own ref behaviours with m1nd installed (issue 39). The cases of
// git's t1400 (update-ref), t1416 (reference-transaction hooks), t3200
// (branch), t3210 (pack-refs) and t5510 (fetch), in this project's words,
// each a shell script whose output names every ref and value it leaves.
// Each runs in three copies of one repository: without m1nd, with m1nd
// installed as a user installs it (m1nd init: the checkout a human works
// in), and in a worktree m1nd guards (m1nd hooks install, as where agents
// write). The three outputs are the same, byte for byte — the user's own
// reference-transaction hook included, which sees its own name in $0.

// gitCases are the behaviours, by the git test file they come from.
var gitCases = []struct{ name, script string }{
	{"t1400 update-ref", `
git update-ref refs/heads/a HEAD && echo "create: $(git rev-parse refs/heads/a)"
git update-ref refs/heads/a HEAD~1 HEAD && echo "update with the old value: ok"
git update-ref refs/heads/a HEAD HEAD 2>/dev/null || echo "update with a wrong old value: refused"
git update-ref -d refs/heads/a HEAD 2>/dev/null || echo "delete with a wrong old value: refused"
git update-ref -d refs/heads/a HEAD~1 && echo "delete with the old value: ok"
git rev-parse -q --verify refs/heads/a || echo "gone"
printf 'create refs/heads/s1 HEAD\ncreate refs/heads/s2 HEAD~1\nverify refs/heads/main HEAD\n' | git update-ref --stdin && echo "stdin transaction: ok"
printf 'update refs/heads/s1 HEAD~1 HEAD\ndelete refs/heads/s2 HEAD\n' | git update-ref --stdin 2>/dev/null || echo "stdin transaction with a bad old value: refused whole"
git for-each-ref --format='%(refname) %(objectname)' refs/heads/
git symbolic-ref refs/heads/link refs/heads/s1 && git update-ref --no-deref refs/heads/link HEAD~1 && echo "no-deref: $(git rev-parse refs/heads/link) $(git rev-parse refs/heads/s1)"
git update-ref --create-reflog refs/heads/logged HEAD && git reflog show --format=%H refs/heads/logged | head -1
`},
	{"t1416 reference-transaction hook", `
git update-ref refs/heads/hooked HEAD
git update-ref -d refs/heads/hooked
printf 'create refs/heads/h1 HEAD\ncreate refs/heads/h2 HEAD\n' | git update-ref --stdin
REJECT=1 git update-ref refs/heads/rejected HEAD 2>/dev/null || echo "a hook that says no in prepared: aborted"
git rev-parse -q --verify refs/heads/rejected || echo "rejected is not there"
cat "$HOOK_LOG"
`},
	{"t3200 branch", `
git branch b1 && git branch b2 HEAD~1
git branch -m b1 renamed && git branch -c b2 copied
git branch -d copied >/dev/null && git branch -D b2 >/dev/null
git branch --list --format='%(refname) %(objectname)'
git branch -m main trunk && git symbolic-ref HEAD && git branch -m trunk main
for i in $(seq 1 30); do git branch many$i; done
git branch -D $(git branch --format='%(refname:short)' --list 'many*') | wc -l
`},
	{"t3210 pack-refs", `
for i in $(seq 1 40); do git update-ref refs/heads/p$i HEAD; git update-ref refs/tags/t$i HEAD~1; done
git pack-refs --all
ls .git/refs/heads | sort | tr '\n' ' '; echo
grep -c ' refs/\(heads\|tags\)/' .git/packed-refs
git update-ref -d refs/heads/p1 && git rev-parse -q --verify refs/heads/p1 || echo "p1 deleted from packed-refs"
git update-ref refs/heads/p2 HEAD~1 && echo "p2 moved over its packed value: $(git rev-parse refs/heads/p2)"
git pack-refs --all --prune && git for-each-ref --count=3 --format='%(refname) %(objectname)' refs/heads/
git gc -q && git count-objects -v | grep -c count
`},
	{"t5510 fetch", `
git clone -q --bare . ../upstream-$SIDE.git
git -C ../upstream-$SIDE.git branch up1 HEAD
for i in $(seq 1 50); do git -C ../upstream-$SIDE.git branch f$i HEAD~1; git -C ../upstream-$SIDE.git tag v$i HEAD; done
git remote add up ../upstream-$SIDE.git
git fetch -q up
git for-each-ref --format='%(refname)' refs/remotes/up/ | wc -l
git rev-parse refs/remotes/up/up1 refs/tags/v7
git -C ../upstream-$SIDE.git branch -D up1 >/dev/null
git fetch -q --prune up
git rev-parse -q --verify refs/remotes/up/up1 || echo "pruned"
git fetch -q --atomic up && echo "atomic fetch: ok"
`},
}

// userHook is the repository's own reference-transaction hook: it logs
// its name, the state and the input, and says no when REJECT is set.
const userHook = `#!/bin/sh
{ echo "${0##*/} $1"; cat; } >>"$HOOK_LOG"
if [ "$1" = prepared ] && [ -n "$REJECT" ]; then exit 1; fi
exit 0
`

func TestGitRefBehavioursWithM1nd(t *testing.T) {
	longtest.Need(t, "git's own ref behaviours with m1nd installed")
	template := gittest.Init(t, "repo")
	template.CommitFiles("two", map[string]string{"a.txt": "a\n"})
	template.CommitFiles("three", map[string]string{"b.txt": "b\n"})
	hooks := filepath.Join(template.Dir, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "reference-transaction"), []byte(userHook), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(gittest.Env(t), "GIT_AUTHOR_DATE=2026-12-01T12:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T12:00:00Z")
	sides := []struct{ name, setup string }{
		{"without m1nd", ""},
		{"m1nd installed", "init"},
		{"a guarded worktree", "init,hooks install"},
	}
	for _, c := range gitCases {
		t.Run(c.name, func(t *testing.T) {
			var outs []string
			for i, side := range sides {
				dir := filepath.Join(t.TempDir(), "repo")
				if out, err := exec.Command("cp", "-a", template.Dir, dir).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				for _, verb := range strings.Split(side.setup, ",") {
					if verb == "" {
						continue
					}
					cmd := exec.Command(m1ndBin(t), strings.Fields(verb)...)
					cmd.Dir, cmd.Env = dir, env
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("%s: m1nd %s: %v\n%s", side.name, verb, err, out)
					}
				}
				if guarded := strings.Contains(side.setup, "hooks install"); guarded {
					if hp, _ := exec.Command("git", "-C", dir, "config", "core.hooksPath").Output(); strings.TrimSpace(string(hp)) != ".git/m1nd/hooks" {
						t.Fatalf("%s: core.hooksPath is %q", side.name, hp)
					}
				}
				cmd := exec.Command("sh", "-c", "set -u\n"+c.script)
				cmd.Dir = dir
				cmd.Env = append(append([]string(nil), env...), "HOOK_LOG="+filepath.Join(dir, "..", "hook.log"), fmt.Sprintf("SIDE=%d", i))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", side.name, err, out)
				}
				outs = append(outs, string(out))
			}
			if strings.TrimSpace(outs[0]) == "" {
				t.Fatal("the case printed nothing")
			}
			for i := 1; i < len(sides); i++ {
				if outs[i] != outs[0] {
					t.Errorf("%s differs from git %s:\n--- %s\n%s--- %s\n%s", sides[i].name, sides[0].name, sides[0].name, outs[0], sides[i].name, outs[i])
				}
			}
		})
	}
}
