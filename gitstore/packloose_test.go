package gitstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// looseUnder lists the loose ref files (no locks) below refs/m1nd/.
func looseUnder(t *testing.T, g *gittest.Repo) []string {
	t.Helper()
	var out []string
	root := filepath.Join(g.Dir, ".git", "refs", "m1nd")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(path, ".lock") {
			out = append(out, strings.TrimPrefix(filepath.ToSlash(path), filepath.ToSlash(filepath.Join(g.Dir, ".git"))+"/"))
		}
		return nil
	})
	return out
}

func refList(g *gittest.Repo) string {
	return g.Git("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)|")
}

// TestPackLooseAgreesWithGit packs loose m1nd refs beside every kind of
// ref git may hold (a ref packed with an older value and loose with a
// newer one, a peeled tag, loose branches outside the prefix, a ref whose
// lock another writer holds): git reads every ref as before, only the
// locked m1nd ref stays loose, and git's housekeeping works on the result.
func TestPackLooseAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	g := gittest.Init(t, "pack")
	r := open(t, g.Dir)
	head, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	other, _ := gitstore.ParseHash(g.CommitFiles("other", map[string]string{"f": "x"}))
	g.Git("tag", "-a", "-m", "v1", "v1")
	ref := func(i int) string { return fmt.Sprintf("refs/m1nd/missions/msn_%012x", i) }
	for i := 0; i < 5; i++ { // packed at head, then moved loose to other
		if err := r.UpdateRef(ctx, ref(i), gitstore.ZeroHash, head); err != nil {
			t.Fatal(err)
		}
	}
	g.Git("pack-refs", "--all")
	for i := 0; i < 40; i++ {
		old := gitstore.ZeroHash
		if i < 5 {
			old = head
		}
		if err := r.UpdateRef(ctx, ref(i), old, other); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.UpdateRef(ctx, "refs/m1nd/store", gitstore.ZeroHash, head); err != nil {
		t.Fatal(err)
	}
	g.Git("update-ref", "refs/heads/loose", head.String())
	held := plantLock(t, g, ref(7), "") // git's: empty, never cleared
	before := refList(g)

	n, err := r.PackLoose(ctx, "refs/m1nd/")
	if err != nil {
		t.Fatal(err)
	}
	if n != 40 { // 40 missions and the store, less the held one
		t.Errorf("packed %d, want 40", n)
	}
	if got := refList(g); got != before {
		t.Fatalf("after packing git reads\n%s\nwant\n%s", got, before)
	}
	if loose := looseUnder(t, g); len(loose) != 1 || loose[0] != ref(7) {
		t.Errorf("loose m1nd refs left: %v, want only the held %s", loose, ref(7))
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the other writer's lock went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, ".git", "refs", "heads", "loose")); err != nil {
		t.Errorf("a branch outside the prefix was packed: %v", err)
	}
	for i := 0; i < 40; i++ {
		if h, ok, err := r.ReadRef(ref(i)); err != nil || !ok || h != other {
			t.Errorf("ReadRef(%s) = %s %v %v, want %s", ref(i), h, ok, err, other)
		}
	}
	listed, err := r.ListRefs("refs/m1nd/missions/")
	if err != nil || len(listed) != 40 {
		t.Fatalf("ListRefs: %d refs, %v", len(listed), err)
	}
	os.Remove(held)
	if n, err := r.PackLoose(ctx, "refs/m1nd/"); err != nil || n != 1 {
		t.Errorf("packing again: %d, %v; want the one held before", n, err)
	}
	if n, err := r.PackLoose(ctx, "refs/m1nd/"); err != nil || n != 0 {
		t.Errorf("packing with nothing loose: %d, %v", n, err)
	}
	g.Git("pack-refs", "--all")
	g.Git("gc", "--quiet")
	if got := refList(g); got != before {
		t.Errorf("after pack-refs and gc git reads\n%s\nwant\n%s", got, before)
	}
}

// TestPackLooseLosesNothingWhenPackedRefsIsHeld: while git holds
// packed-refs.lock, packing gives up with the lock's error and leaves
// every ref loose at its value, with no lock of its own left behind.
func TestPackLooseLosesNothingWhenPackedRefsIsHeld(t *testing.T) {
	ctx := context.Background()
	g := gittest.Init(t, "held")
	r := open(t, g.Dir)
	r.LockTimeout = 100 * time.Millisecond
	head, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	for i := 0; i < 10; i++ {
		if err := r.UpdateRef(ctx, fmt.Sprintf("refs/m1nd/missions/msn_%012x", i), gitstore.ZeroHash, head); err != nil {
			t.Fatal(err)
		}
	}
	before := refList(g)
	lock := filepath.Join(g.Dir, ".git", "packed-refs.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PackLoose(ctx, "refs/m1nd/"); !errors.Is(err, gitstore.ErrRefLocked) {
		t.Fatalf("PackLoose under git's packed-refs.lock: %v, want ErrRefLocked", err)
	}
	if got := refList(g); got != before {
		t.Errorf("git reads\n%s\nwant\n%s", got, before)
	}
	if loose := looseUnder(t, g); len(loose) != 10 {
		t.Errorf("%d loose refs, want all 10", len(loose))
	}
	if locks, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "*.lock")); len(locks) > 0 {
		t.Errorf("locks left: %v", locks)
	}
	os.Remove(lock)
	if n, err := r.PackLoose(ctx, "refs/m1nd/"); err != nil || n != 10 {
		t.Errorf("once git let go: %d, %v", n, err)
	}
}

// TestKeepPackedKeepsFoldersSmall: writing refs one by one with
// KeepPacked after each, no folder ever holds more than LooseMax+1 loose
// refs, and every ref reads at its value.
func TestKeepPackedKeepsFoldersSmall(t *testing.T) {
	ctx := context.Background()
	g := gittest.Init(t, "keep")
	r := open(t, g.Dir)
	head, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	const n = 3*gitstore.LooseMax + 5
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("refs/m1nd/missions/msn_%012x", i)
		if err := r.UpdateRef(ctx, name, gitstore.ZeroHash, head); err != nil {
			t.Fatal(err)
		}
		if err := r.KeepPacked(ctx, name, "refs/m1nd/"); err != nil {
			t.Fatal(err)
		}
		if loose := looseUnder(t, g); len(loose) > gitstore.LooseMax+1 {
			t.Fatalf("after %d writes %d refs are loose", i+1, len(loose))
		}
	}
	if got := g.Git("for-each-ref", "--format=x", "refs/m1nd/missions/"); strings.Count(got, "x") != n {
		t.Fatalf("git lists %d missions, want %d", strings.Count(got, "x"), n)
	}
	if loose := looseUnder(t, g); len(loose) == 0 || len(loose) > gitstore.LooseMax {
		t.Errorf("%d loose at the end, want some, at most %d", len(loose), gitstore.LooseMax)
	}
}

// TestPackLooseAtMostPacksTheFirstByName: a packing with a limit packs
// that many refs, the first by name, and leaves the rest loose; git reads
// every ref at its value, and the next packing takes the rest.
func TestPackLooseAtMostPacksTheFirstByName(t *testing.T) {
	ctx := context.Background()
	g := gittest.Init(t, "limit")
	r := open(t, g.Dir)
	head, _ := gitstore.ParseHash(g.Git("rev-parse", "HEAD"))
	for i := 0; i < 10; i++ {
		if err := r.UpdateRef(ctx, fmt.Sprintf("refs/m1nd/missions/msn_%012x", i), gitstore.ZeroHash, head); err != nil {
			t.Fatal(err)
		}
	}
	before := refList(g)
	if n, err := r.PackLooseAtMost(ctx, 4, "refs/m1nd/"); err != nil || n != 4 {
		t.Fatalf("packed %d, %v; want 4", n, err)
	}
	loose := looseUnder(t, g)
	if len(loose) != 6 || loose[0] != "refs/m1nd/missions/msn_000000000004" {
		t.Errorf("loose after packing 4: %v, want the last 6 by name", loose)
	}
	if got := refList(g); got != before {
		t.Errorf("git reads\n%s\nwant\n%s", got, before)
	}
	if n, err := r.PackLoose(ctx, "refs/m1nd/"); err != nil || n != 6 {
		t.Errorf("then: %d, %v; want the other 6", n, err)
	}
}

// packChildEnv names the repository a child of TestKillNineWhilePacking
// packs, again and again, until it is killed.
const packChildEnv = "M1ND_PACK_CHILD_DIR"

// TestKillNineWhilePacking kills a process packing m1nd refs at random
// moments. After every kill git reads every ref at its value, git's
// housekeeping runs once an m1nd writer has come by (it clears a killed
// m1nd's locks, as after a killed post), and the next packing finishes.
func TestKillNineWhilePacking(t *testing.T) {
	if dir := os.Getenv(packChildEnv); dir != "" {
		r, err := gitstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("packing") // the parent's kill is timed from here
		for {
			r.PackLoose(context.Background(), "refs/m1nd/")
		}
	}
	if testing.Short() {
		t.Skip("crash test")
	}
	ctx := context.Background()
	g := gittest.Init(t, "packkill")
	r := open(t, g.Dir)
	commits := []gitstore.Hash{}
	for i := 0; i < 3; i++ {
		h, _ := gitstore.ParseHash(g.CommitFiles(fmt.Sprintf("c%d", i), map[string]string{"f": fmt.Sprint(i)}))
		commits = append(commits, h)
	}
	want := map[string]gitstore.Hash{}
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	const refs, rounds = 300, 30
	var killedMid int
	for round := 0; round < rounds; round++ {
		// Move a third of the refs, so each round has loose refs to pack,
		// some of them packed already with an older value.
		for i := round % 3; i < refs; i += 3 {
			name := fmt.Sprintf("refs/m1nd/missions/msn_%012x", i)
			next := commits[(round+i)%len(commits)]
			if next == want[name] {
				next = commits[(round+i+1)%len(commits)]
			}
			if err := r.UpdateRef(ctx, name, want[name], next); err != nil {
				t.Fatalf("round %d: m1nd cannot write after the kill: %v", round, err)
			}
			want[name] = next
		}
		child := exec.Command(os.Args[0], "-test.run=^TestKillNineWhilePacking$")
		child.Env = append(os.Environ(), packChildEnv+"="+g.Dir)
		out, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n')
		time.Sleep(time.Duration(rng.IntN(6000)) * time.Microsecond)
		child.Process.Kill()
		child.Wait()
		locks, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "*.lock"))
		if _, err := os.Stat(filepath.Join(g.Dir, ".git", "packed-refs.lock")); err == nil || len(locks) > 0 {
			killedMid++ // killed holding locks: mid-packing
		}
		checkRefs(t, g, want, fmt.Sprintf("round %d", round))
		listed, err := r.ListRefs("refs/m1nd/missions/")
		if err != nil || len(listed) != len(want) {
			t.Fatalf("round %d: m1nd lists %d refs (%v), want %d", round, len(listed), err, len(want))
		}
	}
	// The last kill may have left a stamped lock: the next m1nd packing
	// clears it, then git's own housekeeping runs.
	if _, err := r.PackLoose(ctx, "refs/m1nd/"); err != nil {
		t.Fatal(err)
	}
	g.Git("pack-refs", "--all")
	if out, err := g.TryGit("fsck", "--no-progress"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	checkRefs(t, g, want, "after pack-refs")
	t.Logf("%d rounds, %d killed mid-packing (holding locks)", rounds, killedMid)
}

// checkRefs fails unless git reads exactly the refs of want under
// refs/m1nd/, each at its value.
func checkRefs(t *testing.T, g *gittest.Repo, want map[string]gitstore.Hash, when string) {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/"), "\n") {
		if name, h, ok := strings.Cut(line, " "); ok {
			got[name] = h
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: git lists %d m1nd refs, want %d", when, len(got), len(want))
	}
	for name, h := range want {
		if got[name] != h.String() {
			t.Fatalf("%s: git reads %s at %q, want %s", when, name, got[name], h)
		}
	}
}
