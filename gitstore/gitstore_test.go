package gitstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

func open(t *testing.T, dir string) *gitstore.Repo {
	t.Helper()
	r, err := gitstore.Open(dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestOpenFindsCommonDir(t *testing.T) {
	g := gittest.Init(t, "Main-Repo")
	sub := filepath.Join(g.Dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(filepath.Dir(g.Dir), "linked")
	g.Git("worktree", "add", "-q", wt)
	bare := filepath.Join(filepath.Dir(g.Dir), "bare.git")
	g.Git("clone", "-q", "--bare", g.Dir, bare)
	common := filepath.Join(g.Dir, ".git")

	tests := []struct {
		name, dir, wantCommon, wantMain, wantWorkTree string
	}{
		{"root", g.Dir, common, g.Dir, g.Dir},
		{"subfolder", sub, common, g.Dir, g.Dir},
		{"linked worktree", wt, common, g.Dir, wt},
		{"bare", bare, bare, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := open(t, tt.dir)
			if r.CommonDir() != tt.wantCommon {
				t.Errorf("CommonDir = %s, want %s", r.CommonDir(), tt.wantCommon)
			}
			if got := r.MainWorkTree(); got != tt.wantMain {
				t.Errorf("MainWorkTree = %q, want %q", got, tt.wantMain)
			}
			if got := r.WorkTree(); got != tt.wantWorkTree {
				t.Errorf("WorkTree = %q, want %q", got, tt.wantWorkTree)
			}
		})
	}
}

func TestOpenOutsideRepository(t *testing.T) {
	_, err := gitstore.Open(t.TempDir())
	if !errors.Is(err, gitstore.ErrNotRepository) {
		t.Fatalf("err = %v, want ErrNotRepository", err)
	}
}

func TestRefWrittenFromWorktreeIsSeenByGit(t *testing.T) {
	g := gittest.Init(t, "main")
	wt := filepath.Join(filepath.Dir(g.Dir), "wt")
	g.Git("worktree", "add", "-q", wt)
	r := open(t, wt)
	blob, err := r.WriteBlob([]byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Only commits may sit under refs that git log walks; a blob ref is fine for for-each-ref.
	if err := r.UpdateRef(context.Background(), "refs/m1nd/test/x", gitstore.ZeroHash, blob); err != nil {
		t.Fatal(err)
	}
	if got := g.Git("for-each-ref", "--format=%(objectname)", "refs/m1nd/test/"); got != blob.String() {
		t.Fatalf("main repo sees %q, want %s", got, blob)
	}
}

func TestObjectsRoundTripWithGit(t *testing.T) {
	g := gittest.Init(t, "objects")
	r := open(t, g.Dir)
	body := []byte(`{"hello":"world"}`)
	blob, err := r.WriteBlob(body)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "body")
	os.WriteFile(file, body, 0o644)
	if want := g.Git("hash-object", file); want != blob.String() {
		t.Fatalf("blob name %s, git computes %s", blob, want)
	}
	if got := g.Git("cat-file", "-p", blob.String()); got != string(body) {
		t.Fatalf("git reads blob as %q", got)
	}
	tree, err := r.WriteTree([]gitstore.TreeEntry{
		{Name: "b.json", Mode: "100644", Hash: blob},
		{Name: "a.json", Mode: "100644", Hash: blob},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Git("ls-tree", "--name-only", tree.String()); got != "a.json\nb.json" {
		t.Fatalf("ls-tree = %q", got)
	}
	when := time.Date(2026, 7, 9, 12, 0, 0, 0, time.FixedZone("", 2*3600))
	sig := gitstore.Signature{Name: "agent-1", Email: "agent-1@m1nd", When: when}
	parent := gitstore.Hash{}
	var commits []gitstore.Hash
	for i := 0; i < 3; i++ {
		c := &gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "subject\n\nTrailer: x\n"}
		if !parent.IsZero() {
			c.Parents = []gitstore.Hash{parent}
		}
		h, err := r.WriteCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
		parent = h
	}
	if got := g.Git("log", "--format=%an <%ae> %aI %s", parent.String()); !strings.HasPrefix(got, "agent-1 <agent-1@m1nd> 2026-07-09T12:00:00+02:00 subject") {
		t.Fatalf("git log = %q", got)
	}
	if got := g.Git("rev-list", "--count", parent.String()); got != "3" {
		t.Fatalf("rev-list --count = %s", got)
	}
	g.Git("fsck", "--strict", "--no-dangling")

	c, err := r.ReadCommit(parent)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tree != tree || len(c.Parents) != 1 || c.Parents[0] != commits[1] || !c.Author.When.Equal(when) || c.Message != "subject\n\nTrailer: x\n" {
		t.Fatalf("ReadCommit = %+v", c)
	}
	got, _, err := r.ReadFileAt(parent, "b.json")
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("ReadFileAt = %q, %v", got, err)
	}
	if _, _, err := r.ReadFileAt(parent, "missing.json"); !errors.Is(err, gitstore.ErrNoSuchFile) {
		t.Fatalf("missing file err = %v", err)
	}
	var walked int
	if err := r.WalkFirstParent(parent, func(gitstore.Hash, *gitstore.Commit) error { walked++; return nil }); err != nil || walked != 3 {
		t.Fatalf("walk visited %d, err %v", walked, err)
	}
}

func TestReadsObjectsWrittenByGit(t *testing.T) {
	g := gittest.Init(t, "gitwrote")
	r := open(t, g.Dir)
	head := g.Git("rev-parse", "HEAD")
	h, err := gitstore.ParseHash(head)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	if c.Message != "root\n" || c.Author.Name != "Test" {
		t.Fatalf("commit = %+v", c)
	}
}

func TestUpdateRefCompareAndSwap(t *testing.T) {
	g := gittest.Init(t, "cas")
	r := open(t, g.Dir)
	ctx := context.Background()
	a, _ := r.WriteBlob([]byte("a"))
	b, _ := r.WriteBlob([]byte("b"))
	const ref = "refs/m1nd/missions/msn_0123456789ab"
	steps := []struct {
		name     string
		old, new gitstore.Hash
		stale    bool
		want     gitstore.Hash
	}{
		{"create", gitstore.ZeroHash, a, false, a},
		{"create again is stale", gitstore.ZeroHash, b, true, a},
		{"wrong old is stale", b, b, true, a},
		{"right old moves", a, b, false, b},
	}
	for _, st := range steps {
		err := r.UpdateRef(ctx, ref, st.old, st.new)
		var stale *gitstore.StaleRefError
		if st.stale != errors.As(err, &stale) {
			t.Fatalf("%s: err = %v, stale want %v", st.name, err, st.stale)
		}
		if !st.stale && err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := g.Git("rev-parse", ref); got != st.want.String() {
			t.Fatalf("%s: git sees %s, want %s", st.name, got, st.want)
		}
		if _, err := os.Stat(filepath.Join(g.Dir, ".git", ref+".lock")); !os.IsNotExist(err) {
			t.Fatalf("%s: lock file left behind", st.name)
		}
	}
}

// A stale compare-and-swap on a ref that lives only in packed-refs must
// leave no loose file behind: git must still see the packed value.
func TestStaleCASOnPackedRefKeepsPackedValue(t *testing.T) {
	g := gittest.Init(t, "packed")
	r := open(t, g.Dir)
	const ref = "refs/m1nd/missions/msn_00000000000a"
	head := g.Git("rev-parse", "HEAD")
	g.Git("update-ref", ref, head)
	g.Git("pack-refs", "--all")
	loose := filepath.Join(g.Dir, ".git", filepath.FromSlash(ref))
	if _, err := os.Stat(loose); !os.IsNotExist(err) {
		t.Fatal("ref still loose after pack-refs")
	}
	other, _ := r.WriteBlob([]byte("other"))
	err := r.UpdateRef(context.Background(), ref, other, other)
	var stale *gitstore.StaleRefError
	if !errors.As(err, &stale) || stale.Actual.String() != head {
		t.Fatalf("err = %v, want stale with actual %s", err, head)
	}
	if _, err := os.Stat(loose); !os.IsNotExist(err) {
		t.Fatalf("stale CAS left a loose file: %v", err)
	}
	if got := g.Git("rev-parse", ref); got != head {
		t.Fatalf("git sees %s, want packed %s", got, head)
	}
	// A right CAS over the packed value works and git sees it.
	h, _ := gitstore.ParseHash(head)
	if err := r.UpdateRef(context.Background(), ref, h, other); err != nil {
		t.Fatal(err)
	}
	if got := g.Git("rev-parse", ref); got != other.String() {
		t.Fatalf("git sees %s after CAS, want %s", got, other)
	}
}

func TestUpdateRefWaitsForHeldLock(t *testing.T) {
	g := gittest.Init(t, "lock")
	r := open(t, g.Dir)
	r.LockTimeout = 300 * time.Millisecond
	a, _ := r.WriteBlob([]byte("a"))
	const ref = "refs/m1nd/test/locked"
	lock := plantLock(t, g, ref, "")
	if err := r.UpdateRef(context.Background(), ref, gitstore.ZeroHash, a); !errors.Is(err, gitstore.ErrRefLocked) {
		t.Fatalf("held lock: err = %v, want ErrRefLocked", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("the other writer's lock was removed")
	}
	// Released while we wait: the update goes through.
	go func() {
		time.Sleep(50 * time.Millisecond)
		os.Remove(lock)
	}()
	if err := r.UpdateRef(context.Background(), ref, gitstore.ZeroHash, a); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestListRefsMergesLooseAndPacked(t *testing.T) {
	g := gittest.Init(t, "list")
	r := open(t, g.Dir)
	head := g.Git("rev-parse", "HEAD")
	for _, id := range []string{"msn_000000000001", "msn_000000000002", "msn_000000000003"} {
		g.Git("update-ref", "refs/m1nd/missions/"+id, head)
	}
	g.Git("update-ref", "refs/m1nd/other/x", head)
	g.Git("pack-refs", "--all")
	blob, _ := r.WriteBlob([]byte("newer"))
	h, _ := gitstore.ParseHash(head)
	if err := r.UpdateRef(context.Background(), "refs/m1nd/missions/msn_000000000002", h, blob); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateRef(context.Background(), "refs/m1nd/missions/msn_000000000004", gitstore.ZeroHash, blob); err != nil {
		t.Fatal(err)
	}
	// A stray lock file is not a ref.
	os.WriteFile(filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "msn_000000000005.lock"), nil, 0o644)
	refs, err := r.ListRefs("refs/m1nd/missions/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ref := range refs {
		got = append(got, ref.Name[len("refs/m1nd/missions/"):]+"="+ref.Hash.String()[:7])
	}
	want := []string{"msn_000000000001=" + head[:7], "msn_000000000002=" + blob.String()[:7], "msn_000000000003=" + head[:7], "msn_000000000004=" + blob.String()[:7]}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ListRefs = %v\nwant %v", got, want)
	}
	// git agrees.
	if n := len(strings.Fields(g.Git("for-each-ref", "--format=%(refname)", "refs/m1nd/missions/"))); n != 4 {
		t.Fatalf("git lists %d refs", n)
	}
	// A loose symbolic ref (plain git can write one) over a packed value is
	// named apart from the refs, in the same walk, and hides that value.
	g.Git("symbolic-ref", "refs/m1nd/missions/msn_000000000003", "refs/heads/main")
	refs, symbolic, err := r.ListRefsAndSymbolic("refs/m1nd/missions/")
	if err != nil || len(refs) != 3 || len(symbolic) != 1 || symbolic[0] != (gitstore.OddRef{Name: "refs/m1nd/missions/msn_000000000003", Kind: "symbolic ref"}) {
		t.Fatalf("ListRefsAndSymbolic = %v %v %v", refs, symbolic, err)
	}
	for _, ref := range refs {
		if ref.Name == "refs/m1nd/missions/msn_000000000003" {
			t.Fatalf("the symbolic ref is listed as %v", ref)
		}
	}
}

// A long-lived Repo must keep reading after someone else runs git gc and
// git pack-refs behind its back: loose objects move into a new pack.
func TestReadsSurviveGCBehindOurBack(t *testing.T) {
	g := gittest.Init(t, "gc")
	r := open(t, g.Dir)
	ctx := context.Background()
	var last gitstore.Hash
	for i := 0; i < 5; i++ {
		blob, _ := r.WriteBlob([]byte{byte('a' + i)})
		tree, _ := r.WriteTree([]gitstore.TreeEntry{{Name: "letter.json", Mode: "100644", Hash: blob}})
		sig := gitstore.Signature{Name: "t", Email: "t@m1nd", When: time.Unix(1700000000+int64(i), 0).UTC()}
		c := &gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "x\n"}
		if !last.IsZero() {
			c.Parents = []gitstore.Hash{last}
		}
		h, err := r.WriteCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.UpdateRef(ctx, "refs/m1nd/missions/msn_0000000000aa", last, h); err != nil {
			t.Fatal(err)
		}
		last = h
	}
	// Touch the pack machinery once so the pack index is loaded and cached.
	if _, _, err := r.ReadFileAt(last, "letter.json"); err != nil {
		t.Fatal(err)
	}
	g.Git("gc", "-q", "--prune=now")
	if matches, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "??")); len(matches) != 0 {
		t.Fatalf("loose object dirs remain after gc: %v", matches)
	}
	for round := 0; round < 2; round++ {
		got, _, err := r.ReadFileAt(last, "letter.json")
		if err != nil || string(got) != "e" {
			t.Fatalf("after gc: %q, %v", got, err)
		}
		h, ok, err := r.ReadRef("refs/m1nd/missions/msn_0000000000aa")
		if err != nil || !ok || h != last {
			t.Fatalf("ReadRef after pack-refs: %s %v %v", h, ok, err)
		}
		g.Git("repack", "-a", "-d", "-q") // a second pack swap
	}
	var n int
	if err := r.WalkFirstParent(last, func(gitstore.Hash, *gitstore.Commit) error { n++; return nil }); err != nil || n != 5 {
		t.Fatalf("walk after gc: %d, %v", n, err)
	}
	// And writing on top still works and git is happy.
	blob, _ := r.WriteBlob([]byte("f"))
	if err := r.UpdateRef(ctx, "refs/m1nd/missions/msn_0000000000bb", gitstore.ZeroHash, blob); err != nil {
		t.Fatal(err)
	}
	g.Git("fsck", "--no-dangling")
}

func TestValidRefName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"refs/m1nd/missions/msn_0123456789ab", true},
		{"refs/m1nd/mail/agent+x/owner", true},
		{"refs/m1nd/store", true},
		{"HEAD", false},
		{"refs/", false},
		{"refs/m1nd/../heads/main", false},
		{"refs/m1nd/.hidden", false},
		{"refs/m1nd/x.lock", false},
		{"refs/m1nd/a b", false},
		{"refs/m1nd/a~1", false},
		{"refs/m1nd/a:b", false},
		{"refs/m1nd/a\x00b", false},
		{"refs/m1nd//x", false},
		{"refs/m1nd/x/", false},
		{"refs/m1nd/@{x}", false},
	}
	for _, tt := range tests {
		if got := gitstore.ValidRefName(tt.name); got != tt.ok {
			t.Errorf("ValidRefName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestConfigValue(t *testing.T) {
	g := gittest.Init(t, "cfg")
	g.Git("config", "m1nd.brain", "Brain-X")
	g.Git("config", "--add", "m1nd.agent", "first")
	g.Git("config", "--add", "m1nd.agent", "second")
	r := open(t, g.Dir)
	if v, ok := r.ConfigValue("m1nd", "brain"); !ok || v != "Brain-X" {
		t.Errorf("m1nd.brain = %q %v", v, ok)
	}
	if v, ok := r.ConfigValue("M1ND", "Agent"); !ok || v != "second" {
		t.Errorf("m1nd.agent (last wins, case-insensitive) = %q %v", v, ok)
	}
	if _, ok := r.ConfigValue("m1nd", "missing"); ok {
		t.Error("missing key reported present")
	}
	// Per-worktree config, as git reads it: each worktree its own agent.
	wt := filepath.Join(filepath.Dir(g.Dir), "wt")
	g.Git("worktree", "add", "-q", "--detach", wt)
	g.Git("config", "extensions.worktreeConfig", "true")
	g.Git("-C", wt, "config", "--worktree", "m1nd.agent", "bob")
	if v, _ := open(t, wt).ConfigValue("m1nd", "agent"); v != g.Git("-C", wt, "config", "m1nd.agent") || v != "bob" {
		t.Errorf("worktree agent = %q", v)
	}
	if v, _ := open(t, g.Dir).ConfigValue("m1nd", "agent"); v != "second" {
		t.Errorf("main worktree agent = %q", v)
	}
}

func TestParseHash(t *testing.T) {
	if _, err := gitstore.ParseHash("xyz"); err == nil {
		t.Error("short hash accepted")
	}
	if _, err := gitstore.ParseHash(strings.Repeat("g", 40)); err == nil {
		t.Error("non-hex accepted")
	}
	h, err := gitstore.ParseHash(strings.Repeat("ab", 20))
	if err != nil || h.String() != strings.Repeat("ab", 20) || h.IsZero() {
		t.Errorf("ParseHash = %s, %v", h, err)
	}
}

// A lock left by a killed m1nd process names its holder; the next writer
// clears it. A live holder's lock, a lock with a ref value in it, or an
// empty one, however old, may be git's (git deletes a ref under an empty
// lock for as long as its hooks run) and is waited for, never cleared: an
// m1nd lock is never empty, nor ever holds a ref value.
func TestDeadWritersLockIsCleared(t *testing.T) {
	g := gittest.Init(t, "deadlock")
	r := open(t, g.Dir)
	r.LockTimeout = 200 * time.Millisecond
	a, _ := r.WriteBlob([]byte("a"))
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	bootID := strings.TrimSpace(string(boot))
	tests := []struct {
		name    string
		content string
		cleared bool
	}{
		{"dead pid", fmt.Sprintf("m1nd-pid %d %s\n", dead.Process.Pid, bootID), true},
		{"earlier boot", fmt.Sprintf("m1nd-pid %d not-this-boot\n", live.Process.Pid), true},
		{"live pid", fmt.Sprintf("m1nd-pid %d %s\n", live.Process.Pid, bootID), false},
		{"ref value", a.String() + "\n", false},
		{"empty (git mid-write)", "", false},
		{"empty and old (git's, its hook slow)", "", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := fmt.Sprintf("refs/m1nd/test/r%d", i)
			lock := plantLock(t, g, ref, tt.content)
			if strings.HasPrefix(tt.name, "empty and old") {
				old := time.Now().Add(-time.Minute)
				os.Chtimes(lock, old, old)
			}
			err := r.UpdateRef(context.Background(), ref, gitstore.ZeroHash, a)
			if tt.cleared && err != nil {
				t.Fatalf("dead lock not cleared: %v", err)
			}
			if !tt.cleared && !errors.Is(err, gitstore.ErrRefLocked) {
				t.Fatalf("err = %v, want ErrRefLocked", err)
			}
			_, statErr := os.Stat(lock)
			if tt.cleared != os.IsNotExist(statErr) {
				t.Fatalf("lock file present = %v after update", statErr == nil)
			}
			if _, err := os.Stat(strings.TrimSuffix(lock, ".lock") + ".break.lock"); !os.IsNotExist(err) {
				t.Fatal("break lock left behind")
			}
		})
	}
}

// plantLock leaves <ref>.lock with content, as another writer would.
// TestReadingARefClearsItsDeadLock: an m1nd killed after its rename and
// before removing its lock leaves the ref updated and a stamped lock
// nobody must write past; reading the ref clears it, so git's own
// commands do not wait on it. A live holder's lock and git's stay.
func TestReadingARefClearsItsDeadLock(t *testing.T) {
	g := gittest.Init(t, "readclears")
	r := open(t, g.Dir)
	a, _ := r.WriteBlob([]byte("a"))
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	for _, tt := range []struct {
		content string
		cleared bool
	}{
		{fmt.Sprintf("m1nd-pid %d %s\n", dead.Process.Pid, strings.TrimSpace(string(boot))), true},
		{fmt.Sprintf("m1nd-pid %d %s\n", os.Getpid(), strings.TrimSpace(string(boot))), false},
		{"", false},
		{a.String() + "\n", false},
	} {
		ref := "refs/m1nd/test/read"
		if err := r.UpdateRef(context.Background(), ref, gitstore.ZeroHash, a); err != nil && !errors.As(err, new(*gitstore.StaleRefError)) {
			t.Fatal(err)
		}
		lock := plantLock(t, g, ref, tt.content)
		if h, ok, err := r.ReadRef(ref); err != nil || !ok || h != a {
			t.Fatalf("read: %s %v %v", h, ok, err)
		}
		_, statErr := os.Stat(lock)
		if tt.cleared != os.IsNotExist(statErr) {
			t.Errorf("lock %q: present after a read = %v, want cleared %v", tt.content, statErr == nil, tt.cleared)
		}
		os.Remove(lock)
	}
}

func plantLock(t *testing.T, g *gittest.Repo, ref, content string) string {
	t.Helper()
	lock := filepath.Join(g.Dir, ".git", filepath.FromSlash(ref)+".lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return lock
}

func TestMainHeadAndListFilesAgreeWithGit(t *testing.T) {
	g := gittest.Init(t, "files")
	r := open(t, g.Dir)
	g.CommitFiles("files", map[string]string{
		"README.md": "hi\n", "core/a.go": "package core\n", "core/deep/b.go": "package deep\n", "core-x/c": "c\n",
	})
	wt := filepath.Join(filepath.Dir(g.Dir), "wt")
	g.Git("worktree", "add", "-q", "--detach", wt, "HEAD~1")
	fromWorktree := open(t, wt)
	for _, repo := range []*gitstore.Repo{r, fromWorktree} {
		head, ok, err := repo.MainHead()
		if err != nil || !ok || head.String() != g.Git("rev-parse", "HEAD") {
			t.Fatalf("MainHead = %s %v %v", head, ok, err)
		}
		files, err := repo.ListFiles(head)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(g.Git("ls-tree", "-r", "--name-only", "HEAD"), "\n")
		sort.Strings(want)
		if strings.Join(files, ",") != strings.Join(want, ",") {
			t.Fatalf("ListFiles = %v, want %v", files, want)
		}
		c, _ := repo.ReadCommit(head)
		body, err := repo.ReadFileInTree(c.Tree, "core/deep/b.go")
		if err != nil || string(body) != "package deep\n" {
			t.Fatalf("nested read = %q %v", body, err)
		}
		for _, missing := range []string{"core", "core/deep", "core/nope.go", "README.md/x"} {
			if _, err := repo.ReadFileInTree(c.Tree, missing); !errors.Is(err, gitstore.ErrNoSuchFile) {
				t.Errorf("ReadFileInTree(%q) = %v, want ErrNoSuchFile", missing, err)
			}
		}
	}
	unborn := gittest.Env(t)
	dir := filepath.Join(t.TempDir(), "unborn")
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = unborn
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if _, ok, err := open(t, dir).MainHead(); ok || err != nil {
		t.Fatalf("unborn HEAD: ok=%v err=%v", ok, err)
	}
}

// TestListRefsAgreesWithGit: over nested ref names whose folder order is
// not their name order ("a/b" and "a-b"), some packed, some loose over
// packed, some deleted, ListRefs lists what git for-each-ref lists, in the
// same order; and a FIFO where a ref should be is an error, at once.
func TestListRefsAgreesWithGit(t *testing.T) {
	g := gittest.Init(t, "agree")
	r := open(t, g.Dir)
	head := g.Git("rev-parse", "HEAD")
	other := g.Git("commit-tree", "-m", "other", g.Git("rev-parse", "HEAD^{tree}"))
	names := []string{"mail/a/b", "mail/a-b/c", "mail/a.b", "mail/a/c/d", "missions/msn_000000000001", "missions/msn_000000000002", "memory/z", "x"}
	for _, n := range names {
		g.Git("update-ref", "refs/m1nd/"+n, head)
	}
	g.Git("update-ref", "refs/heads/outside", head)
	list := func() string {
		t.Helper()
		refs, err := r.ListRefs("refs/m1nd/")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ref := range refs {
			fmt.Fprintf(&b, "%s %s\n", ref.Hash, ref.Name)
		}
		return b.String()
	}
	for _, step := range []struct {
		name string
		git  [][]string
	}{
		{"all loose", nil},
		{"all packed", [][]string{{"pack-refs", "--all"}}},
		{"loose over packed", [][]string{{"update-ref", "refs/m1nd/mail/a-b/c", other}, {"update-ref", "refs/m1nd/missions/msn_000000000003", other}}},
		{"deleted, packed and loose", [][]string{{"update-ref", "-d", "refs/m1nd/mail/a/b"}, {"update-ref", "-d", "refs/m1nd/missions/msn_000000000003"}}},
		{"packed again, loose kept", [][]string{{"pack-refs", "--all", "--no-prune"}, {"update-ref", "refs/m1nd/x", other}}},
	} {
		for _, args := range step.git {
			g.Git(args...)
		}
		want := g.Git("for-each-ref", "--format=%(objectname) %(refname)", "refs/m1nd/") + "\n"
		if got := list(); got != want {
			t.Fatalf("%s: ListRefs\n%s\ngit for-each-ref\n%s", step.name, got, want)
		}
	}
	fifo := filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "msn_0000000000ff")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("TARGET-CONTENTS\n"), 0o644)
	link := filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions", "msn_0000000000fe")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// A FIFO or a symbolic link where a ref should be is neither read nor
	// followed, and fails no listing: it is named apart, for verify.
	type listed struct {
		refs []gitstore.Ref
		odd  []gitstore.OddRef
		err  error
	}
	done := make(chan listed, 1)
	go func() { refs, odd, err := r.ListRefsAndSymbolic("refs/m1nd/"); done <- listed{refs, odd, err} }()
	select {
	case got := <-done:
		want := []gitstore.OddRef{{Name: "refs/m1nd/missions/msn_0000000000fe", Kind: "symbolic link"}, {Name: "refs/m1nd/missions/msn_0000000000ff", Kind: "named pipe (FIFO)"}}
		if got.err != nil || !slices.Equal(got.odd, want) {
			t.Fatalf("ListRefsAndSymbolic: odd %v, err %v; want %v", got.odd, got.err, want)
		}
		for _, ref := range got.refs {
			if strings.HasSuffix(ref.Name, "fe") || strings.HasSuffix(ref.Name, "ff") {
				t.Fatalf("%s listed as a ref", ref.Name)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listing refs hung on a FIFO")
	}
	if _, err := r.ListRefs("refs/m1nd/"); err != nil {
		t.Fatalf("ListRefs over a FIFO and a link: %v", err)
	}
	// Read by name, the link is refused without quoting what it points to.
	_, _, err := r.ReadRef("refs/m1nd/missions/msn_0000000000fe")
	if err == nil || strings.Contains(err.Error(), "TARGET-CONTENTS") || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("ReadRef through a link: %v", err)
	}
}

// TestPackedRefLookupAgreesWithGit: one ref looked up in packed-refs (by
// binary search in the sorted file git writes, by a scan otherwise) finds
// what git rev-parse finds, for every ref, first and last, with annotated
// tags' peeled lines in between, and finds nothing for names between.
func TestPackedRefLookupAgreesWithGit(t *testing.T) {
	g := gittest.Init(t, "lookup")
	head := g.Git("rev-parse", "HEAD")
	var create strings.Builder
	var names []string
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("refs/m1nd/missions/msn_%012x", i*7)
		names = append(names, name)
		fmt.Fprintf(&create, "create %s %s\n", name, head)
	}
	g.GitStdin(create.String(), "update-ref", "--stdin")
	for _, tag := range []string{"a", "m", "z"} {
		g.Git("tag", "-a", "-m", tag, tag)
		names = append(names, "refs/tags/"+tag)
	}
	names = append(names, "refs/heads/main")
	g.Git("pack-refs", "--all")
	packed := filepath.Join(g.Dir, ".git", "packed-refs")
	sorted, _ := os.ReadFile(packed)
	if !strings.Contains(string(sorted), " sorted") || !strings.Contains(string(sorted), "\n^") {
		t.Fatalf("packed-refs is not sorted with peeled lines:\n%.300s", sorted)
	}
	// The same lines, shuffled, under a header that does not say sorted.
	lines := strings.Split(strings.TrimSpace(string(sorted)), "\n")[1:]
	var records []string
	for _, l := range lines {
		if strings.HasPrefix(l, "^") {
			records[len(records)-1] += "\n" + l
		} else {
			records = append(records, l)
		}
	}
	for i := range records {
		j := (i * 131) % len(records)
		records[i], records[j] = records[j], records[i]
	}
	unsorted := "# pack-refs with: peeled \n" + strings.Join(records, "\n") + "\n"
	for _, tc := range []struct{ name, content string }{{"sorted", string(sorted)}, {"unsorted", unsorted}} {
		os.WriteFile(packed, []byte(tc.content), 0o644)
		r := open(t, g.Dir)
		for _, name := range names {
			h, ok, err := r.ReadRef(name)
			if want := g.Git("rev-parse", name); err != nil || !ok || h.String() != want {
				t.Fatalf("%s: %s = %v %v %v, git says %s", tc.name, name, h, ok, err, want)
			}
		}
		for _, absent := range []string{"refs/m1nd/missions/msn_000000000001", "refs/a", "refs/zzz", "refs/tags/b", "refs/m1nd/missions/msn_"} {
			if h, ok, err := r.ReadRef(absent); ok || err != nil {
				t.Fatalf("%s: %s = %v %v %v, want none", tc.name, absent, h, ok, err)
			}
		}
	}
}

// TestLooseObjectsOfEverySizeReadByGit: small objects are written as a
// stored zlib block, larger ones compressed; git reads, names and fscks
// both, on each side of the boundary, and so does m1nd's own reader.
func TestLooseObjectsOfEverySizeReadByGit(t *testing.T) {
	g := gittest.Init(t, "sizes")
	r := open(t, g.Dir)
	for _, n := range []int{0, 1, 700, 4000, 4025, 4026, 4100, 70000, 1 << 20} {
		body := bytes.Repeat([]byte("m1nd letter "), n/12+1)[:n]
		h, err := r.WriteBlob(body)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		file := filepath.Join(t.TempDir(), "body")
		os.WriteFile(file, body, 0o644)
		if want := g.Git("hash-object", file); want != h.String() {
			t.Fatalf("%d bytes: named %s, git computes %s", n, h, want)
		}
		if got := g.Git("cat-file", "-s", h.String()); got != strconv.Itoa(n) {
			t.Fatalf("%d bytes: git reads a size of %s", n, got)
		}
		if out, err := exec.Command("git", "-C", g.Dir, "cat-file", "blob", h.String()).Output(); err != nil || !bytes.Equal(out, body) {
			t.Fatalf("%d bytes: git reads other bytes back (%v)", n, err)
		}
		fresh := open(t, g.Dir)
		if got, err := fresh.ReadBlob(h); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: ReadBlob: %v", n, err)
		}
		// Stored: the zlib header, one block header, the object, the checksum.
		hex := h.String()
		fi, err := os.Stat(filepath.Join(g.Dir, ".git", "objects", hex[:2], hex[2:]))
		if err != nil {
			t.Fatal(err)
		}
		object := len(fmt.Sprintf("blob %d\x00", n)) + n
		if stored := fi.Size() == int64(2+5+object+4); stored != (object <= 4032) {
			t.Errorf("%d bytes: a loose file of %d bytes (stored %v)", n, fi.Size(), stored)
		}
	}
	g.Git("fsck", "--strict", "--no-dangling")
}

// A linked worktree's admin folder is read from its ".git" file, and only
// trusted when it lies in the common dir's worktrees/ and names the
// worktree back: a ".git" file rewritten inside the worktree is refused.
func TestWorktreeAdminDir(t *testing.T) {
	g := gittest.Init(t, "admin")
	common := filepath.Join(g.Dir, ".git")
	a, b := filepath.Join(filepath.Dir(g.Dir), "a"), filepath.Join(filepath.Dir(g.Dir), "b")
	g.Git("worktree", "add", "-q", "--detach", a)
	g.Git("worktree", "add", "-q", "--detach", b)
	want := strings.TrimSpace(g.Git("-C", a, "rev-parse", "--absolute-git-dir"))
	if got, err := gitstore.WorktreeAdminDir(common, a); err != nil || got != want {
		t.Fatalf("WorktreeAdminDir(a) = %q, %v; want %q", got, err, want)
	}
	bAdmin := strings.TrimSpace(g.Git("-C", b, "rev-parse", "--absolute-git-dir"))
	for _, tt := range []struct{ name, gitFile, err string }{
		{"the common dir", "gitdir: " + common, "not to a worktree's folder"},
		{"another worktree's folder", "gitdir: " + bAdmin, "belongs to another worktree"},
		{"no gitdir line", "nothing", "not a gitdir file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(a, ".git"), []byte(tt.gitFile+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := gitstore.WorktreeAdminDir(common, a); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("WorktreeAdminDir with .git %q = %q, %v; want an error with %q", tt.gitFile, got, err, tt.err)
			}
		})
	}
}
