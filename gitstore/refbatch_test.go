package gitstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestCreateRefsAgreesWithGit creates refs in bulk beside every kind of
// ref git may already hold (loose, packed, a peeled annotated tag, one of
// the same name), and checks that git reads every ref as before plus the
// new ones, that what existed is not created, and that git's own
// housekeeping works on the result.
func TestCreateRefsAgreesWithGit(t *testing.T) {
	cases := []struct {
		name  string
		n     int // refs to create
		setup func(g *gittest.Repo, head string)
	}{
		{name: "no packed-refs, few: loose", n: 3, setup: func(*gittest.Repo, string) {}},
		{name: "no packed-refs, many", n: 40, setup: func(*gittest.Repo, string) {}},
		{name: "beside a packed annotated tag and loose refs", n: 40, setup: func(g *gittest.Repo, head string) {
			g.Git("tag", "-a", "-m", "v1", "v1")
			g.Git("update-ref", "refs/heads/topic", head)
			g.Git("pack-refs", "--all")
			g.Git("update-ref", "refs/heads/loose", head)
		}},
		{name: "an old packed-refs without a sorted header", n: 40, setup: func(g *gittest.Repo, head string) {
			path := filepath.Join(g.Dir, ".git", "packed-refs")
			data := fmt.Sprintf("# pack-refs with: peeled \n%s refs/heads/zz\n%s refs/heads/aa\n", head, head)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.Init(t, "create")
			head := g.Git("rev-parse", "HEAD")
			tc.setup(g, head)
			r := open(t, g.Dir)
			h, _ := gitstore.ParseHash(head)
			var refs []gitstore.Ref
			for i := 0; i < tc.n; i++ {
				refs = append(refs, gitstore.Ref{Name: fmt.Sprintf("refs/m1nd/missions/msn_%012x", i), Hash: h})
			}
			// One that exists already, loose, with another value: never
			// overwritten, and named.
			other := g.CommitFiles("other", map[string]string{"f": "x"})
			g.Git("update-ref", refs[1].Name, other)
			before := g.Git("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)|")
			notCreated, err := r.CreateRefs(context.Background(), refs)
			if err != nil {
				t.Fatal(err)
			}
			if len(notCreated) != 1 || notCreated[0] != refs[1].Name {
				t.Fatalf("not created = %v, want only %s", notCreated, refs[1].Name)
			}
			if got := g.Git("rev-parse", refs[1].Name); got != other {
				t.Fatalf("%s = %s, want the value it had, %s", refs[1].Name, got, other)
			}
			after := g.Git("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)|")
			for _, line := range strings.Split(before, "\n") {
				if !strings.Contains(after+"\n", line+"\n") {
					t.Errorf("git lost %q:\n%s", line, after)
				}
			}
			for i, ref := range refs {
				if i == 1 {
					continue
				}
				if got := g.Git("rev-parse", "--verify", ref.Name); got != head {
					t.Errorf("%s = %s, want %s", ref.Name, got, head)
				}
			}
			if locks, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "*.lock")); len(locks) > 0 {
				t.Errorf("locks left: %v", locks)
			}
			g.Git("pack-refs", "--all")
			g.Git("gc", "--quiet")
			if got := g.Git("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)|"); got != after {
				t.Errorf("after pack-refs and gc git reads\n%s\nwant\n%s", got, after)
			}
		})
	}
}

// TestCreateRefsWaitsOutAHeldLock: a ref whose lock another writer holds
// is not created while it holds it, and is named; the rest are created.
func TestCreateRefsWaitsOutAHeldLock(t *testing.T) {
	g := gittest.Init(t, "busy")
	r := open(t, g.Dir)
	r.LockTimeout = 100 * time.Millisecond
	h, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	var refs []gitstore.Ref
	for i := 0; i < 20; i++ {
		refs = append(refs, gitstore.Ref{Name: fmt.Sprintf("refs/m1nd/missions/msn_%012x", i), Hash: h})
	}
	lock := plantLock(t, g, refs[5].Name, "")
	notCreated, err := r.CreateRefs(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(notCreated) != 1 || notCreated[0] != refs[5].Name {
		t.Fatalf("not created = %v, want %s", notCreated, refs[5].Name)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the other writer's lock went: %v", err)
	}
	if _, err := g.TryGit("rev-parse", "--verify", "-q", refs[5].Name); err == nil {
		t.Fatalf("%s was created under another writer's lock", refs[5].Name)
	}
	if got := g.Git("for-each-ref", "--count=100", "--format=x", "refs/m1nd/missions/"); strings.Count(got, "x") != 19 {
		t.Fatalf("git lists %d missions, want 19", strings.Count(got, "x"))
	}
}

func TestCreateRefsRefusesBadInput(t *testing.T) {
	g := gittest.Init(t, "bad")
	r := open(t, g.Dir)
	h, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	for _, refs := range [][]gitstore.Ref{
		{{Name: "refs/m1nd/../x", Hash: h}},
		{{Name: "refs/m1nd/missions/msn_000000000001", Hash: gitstore.ZeroHash}},
	} {
		if _, err := r.CreateRefs(context.Background(), refs); err == nil {
			t.Errorf("CreateRefs(%v) = nil error", refs)
		}
	}
	if out := g.Git("for-each-ref", "refs/m1nd/"); out != "" {
		t.Fatalf("bad input wrote refs: %s", out)
	}
}

// TestDeleteRefsAgreesWithGit deletes refs that are loose, packed and
// both, each only at the value named: one that moved stays, and git reads
// every other ref as before.
func TestDeleteRefsAgreesWithGit(t *testing.T) {
	g := gittest.Init(t, "delete")
	head := g.Git("rev-parse", "HEAD")
	other := g.CommitFiles("other", map[string]string{"f": "x"})
	g.Git("tag", "-a", "-m", "v1", "v1")
	names := []string{"refs/m1nd/missions/msn_000000000001", "refs/m1nd/missions/msn_000000000002", "refs/m1nd/missions/msn_000000000003", "refs/m1nd/missions/msn_000000000004"}
	for _, n := range names {
		g.Git("update-ref", n, head)
	}
	g.Git("pack-refs", "--all")
	g.Git("update-ref", names[1], other) // packed at head, loose at other
	g.Git("update-ref", names[3], other) // moved: named at head below
	r := open(t, g.Dir)
	h, _ := gitstore.ParseHash(head)
	o, _ := gitstore.ParseHash(other)
	notDeleted, err := r.DeleteRefs(context.Background(), []gitstore.Ref{
		{Name: names[0], Hash: h}, {Name: names[1], Hash: o}, {Name: names[3], Hash: h},
		{Name: "refs/m1nd/missions/msn_00000000000f", Hash: h}, // never was
		{Name: "refs/m1nd/nowhere/x", Hash: h},                 // never was, in a folder that never was
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, ".git", "refs", "m1nd", "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("deleting a ref that is nowhere made its folder: %v", err)
	}
	if strings.Join(notDeleted, " ") != names[3]+" refs/m1nd/missions/msn_00000000000f refs/m1nd/nowhere/x" {
		t.Fatalf("not deleted = %v", notDeleted)
	}
	got := g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/", "refs/tags/")
	want := names[2] + " " + head + "\n" + names[3] + " " + other + "\nrefs/tags/v1 " + g.Git("rev-parse", "v1")
	if got != want {
		t.Fatalf("git reads\n%s\nwant\n%s", got, want)
	}
	if peeled := g.Git("rev-parse", "v1^{commit}"); peeled != other {
		t.Fatalf("the tag peels to %s, want %s", peeled, other)
	}
	g.Git("gc", "--quiet")
	if again := g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/", "refs/tags/"); again != got {
		t.Fatalf("after gc git reads\n%s", again)
	}
}
