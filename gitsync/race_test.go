package gitsync

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
)

// hookInto makes git run script (sh) once, from the hook named hook in
// c's repository: reference-transaction fires while sync's fetch writes
// the tracking refs (after the remote's refs were read, before the push),
// pre-push after the push read the remote's refs and checked them, before
// it sends the update. The script runs outside c's git environment.
func hookInto(t *testing.T, c *clone, hook, script string) {
	t.Helper()
	dir := t.TempDir()
	mark := filepath.Join(dir, "fired")
	guard := ""
	if hook == "reference-transaction" {
		// Only once the fetch has committed a tracking ref.
		guard = `[ "$1" = committed ] || exit 0
grep -q ' refs/m1nd-sync/' || exit 0
`
	}
	body := "#!/bin/sh\n" + guard + `[ -e '` + mark + `' ] && exit 0
: >'` + mark + `'
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
( ` + script + ` ) >'` + mark + `' 2>&1 </dev/null || { echo "hook script failed: $(cat '` + mark + `')" >&2; exit 1; }
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, hook), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c.g.Git("config", "core.hooksPath", dir)
	t.Cleanup(func() {
		if _, err := os.Stat(mark); err != nil {
			t.Errorf("the %s hook never fired: the race was not staged", hook)
		}
	})
}

// The remote moves between our fetch and our push (another clone's push,
// staged from a git hook of the syncing clone: real git, real repos). A
// ref we push that moved to a commit that is not on our chain is never
// overwritten — the atomic push is refused, and the next sync parks our
// letters and takes the remote's; a move along our own chain, or of a ref
// we do not push, lets the push through with nothing lost.
func TestSyncPushIsACompareAndSwapPerRef(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		hook string
		// stage readies b (and a) before a's sync and returns the script
		// the hook runs in the race window.
		stage func(t *testing.T, a, b *clone, target, other string) string
		// refused: a's first sync is refused at the push and the next one
		// parks a's letter on target under b's chain.
		refused bool
		// the letters on target and other once both clones synced again
		// (when not refused)
		targetLetters, otherLetters string
	}{
		{
			name: "moved to a non-descendant after the fetch",
			hook: "reference-transaction",
			stage: func(t *testing.T, a, b *clone, target, _ string) string {
				b.extend(t, target, "bob", now.Add(2*time.Minute))
				return "git -C '" + b.g.Dir + "' push -q origin " + chain.MissionRefPrefix + target
			},
			refused: true,
		},
		{
			name: "moved to a non-descendant after the push read the remote",
			hook: "pre-push",
			stage: func(t *testing.T, a, b *clone, target, _ string) string {
				b.extend(t, target, "bob", now.Add(2*time.Minute))
				return "git -C '" + b.g.Dir + "' push -q origin " + chain.MissionRefPrefix + target
			},
			refused: true,
		},
		{
			name: "moved along our own chain",
			hook: "reference-transaction",
			stage: func(t *testing.T, a, b *clone, target, _ string) string {
				ref := chain.MissionRefPrefix + target
				mid, _, _ := a.repo.ReadRef(ref)
				a.extend(t, target, "alice", now.Add(3*time.Minute))
				return "git -C '" + a.g.Dir + "' push -q origin " + mid.String() + ":" + ref
			},
			targetLetters: "3", otherLetters: "1",
		},
		{
			name: "a ref we do not push moved",
			hook: "reference-transaction",
			stage: func(t *testing.T, a, b *clone, _, other string) string {
				b.extend(t, other, "bob", now.Add(2*time.Minute))
				return "git -C '" + b.g.Dir + "' push -q origin " + chain.MissionRefPrefix + other
			},
			targetLetters: "2", otherLetters: "2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			a, b := twoClones(t)
			var ids []string
			for i := 0; i < 2; i++ {
				res, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now.Add(time.Duration(i) * time.Second)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.MissionID)
			}
			target, other := ids[0], ids[1]
			targetRef, otherRef := chain.MissionRefPrefix+target, chain.MissionRefPrefix+other
			a.sync(t)
			b.sync(t)
			// b opens a mission and pushes it, so that a's fetch has a
			// tracking ref to write (and its hook a transaction to see).
			fresh, err := b.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "bob", Now: now.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			b.sync(t)
			// a extends target and opens another mission: both to push.
			a.extend(t, target, "alice", now.Add(time.Minute))
			opened, err := a.m.New(ctx, chain.NewMission{BlockID: "sb_shop_core", Agent: "alice", Now: now.Add(2 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			script := tc.stage(t, a, b, target, other)
			aHead, _, _ := a.repo.ReadRef(targetRef)
			hookInto(t, a, tc.hook, script)
			remoteHead := func(ref string) string {
				return a.g.Git("ls-remote", "origin", ref)
			}

			rep := a.sync(t)
			if strings.Join(rep.Created, ",") != fresh.Ref {
				t.Fatalf("a's sync did not take b's new mission: %+v", rep)
			}
			if !tc.refused {
				pushed := append([]string(nil), rep.Pushed...)
				sort.Strings(pushed)
				want := []string{targetRef, opened.Ref}
				sort.Strings(want)
				if !rep.OK || strings.Join(pushed, ",") != strings.Join(want, ",") {
					t.Fatalf("a's sync: %+v", rep)
				}
				if got := remoteHead(targetRef); !strings.HasPrefix(got, aHead.String()) {
					t.Fatalf("remote %s = %q, want a's head %s", targetRef, got, aHead)
				}
				// Nothing the remote held is lost: whatever moved there is
				// on the chain it holds now, or still its head.
				b.sync(t)
				a.sync(t)
				la := a.g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/missions/")
				lb := b.g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/missions/")
				if la != lb {
					t.Fatalf("clones differ:\n%s\n---\n%s", la, lb)
				}
				if parked := a.g.Git("for-each-ref", "refs/m1nd/conflicts/") + b.g.Git("for-each-ref", "refs/m1nd/conflicts/"); parked != "" {
					t.Fatalf("something was parked: %s", parked)
				}
				if n := a.g.Git("rev-list", "--count", targetRef); n != tc.targetLetters {
					t.Fatalf("%s has %s letters, want %s", targetRef, n, tc.targetLetters)
				}
				if n := a.g.Git("rev-list", "--count", otherRef); n != tc.otherLetters {
					t.Fatalf("%s has %s letters, want %s", otherRef, n, tc.otherLetters)
				}
				return
			}
			// Refused: all or nothing, and the remote keeps b's letter.
			bHead, _, _ := b.repo.ReadRef(targetRef)
			if rep.OK || rep.PushError == "" || len(rep.Pushed) != 0 {
				t.Fatalf("a's sync over a moved remote: %+v", rep)
			}
			t.Logf("refused: %s", rep.PushError)
			if got := remoteHead(targetRef); !strings.HasPrefix(got, bHead.String()) {
				t.Fatalf("remote %s = %q: overwritten, want b's head %s", targetRef, got, bHead)
			}
			if got := remoteHead(opened.Ref); got != "" {
				t.Fatalf("a refused atomic push still created %s", got)
			}
			// The next sync parks a's letter and takes b's chain.
			rep = a.sync(t)
			if rep.OK || len(rep.Conflicts) != 1 || rep.Conflicts[0].Ref != targetRef || strings.Join(rep.Pushed, ",") != opened.Ref {
				t.Fatalf("a's next sync: %+v", rep)
			}
			if parked, ok, _ := a.repo.ReadRef(rep.Conflicts[0].ParkedRef); !ok || parked != aHead {
				t.Fatalf("parked %s = %s, want a's head %s", rep.Conflicts[0].ParkedRef, parked, aHead)
			}
			if now, _, _ := a.repo.ReadRef(targetRef); now != bHead {
				t.Fatal("a does not follow the remote's chain")
			}
			if got := remoteHead(targetRef); !strings.HasPrefix(got, bHead.String()) {
				t.Fatalf("remote %s = %q after the park, want b's head %s", targetRef, got, bHead)
			}
		})
	}
}
