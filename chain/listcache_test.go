package chain

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// TestMissionListingFollowsEveryRefMove: the kept listing of mission refs
// answers as ListRefs does after each way refs move (a loose ref written
// by git, pack-refs, a deletion, a stray name), is kept only from a
// settled folder, and is ignored when damaged.
func TestMissionListingFollowsEveryRefMove(t *testing.T) {
	g := gittest.Init(t, "listing")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	head := g.Git("rev-parse", "HEAD")
	path := MissionListPath(repo.RuntimeDir())
	os.MkdirAll(filepath.Dir(path), 0o700)
	settled := func() { // the folder and packed-refs older than a tick
		old := time.Now().Add(-time.Minute)
		for _, p := range []string{filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions"), filepath.Join(g.Dir, ".git", "packed-refs")} {
			os.Chtimes(p, old, old)
		}
	}
	check := func(step string, want ...string) {
		t.Helper()
		for round := range 2 { // the second answers from the kept listing
			refs, err := listMissions(repo)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			var got []string
			for _, r := range refs {
				if r.Hash.String() != head {
					t.Fatalf("%s: %s at %s", step, r.Name, r.Hash)
				}
				got = append(got, r.Name[len(MissionRefPrefix):])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, round %d: %v, want %v", step, round, got, want)
			}
		}
	}
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000aa", head)
	settled()
	check("one loose ref", "msn_0000000000aa")
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no listing kept from a settled folder: %v", err)
	}
	// The kept listing is what answers while the stamp holds.
	os.WriteFile(path, []byte(strings.Replace(string(kept), "msn_0000000000aa", "msn_00000000ffff", 1)), 0o600)
	if refs, err := listMissions(repo); err != nil || len(refs) != 1 || refs[0].Name != MissionRefPrefix+"msn_00000000ffff" {
		t.Fatalf("the kept listing was not used: %v %v", refs, err)
	}
	os.WriteFile(path, kept, 0o600)
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000bb", head)
	g.Git("update-ref", "refs/m1nd/missions/stray", head)
	check("two, and a stray name", "msn_0000000000aa", "msn_0000000000bb")
	g.Git("pack-refs", "--all")
	check("packed", "msn_0000000000aa", "msn_0000000000bb")
	g.Git("update-ref", "-d", "refs/m1nd/missions/msn_0000000000aa")
	check("a deletion", "msn_0000000000bb")

	// A folder written within a tick of the read: nothing is kept.
	os.Remove(path)
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000cc", head)
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(g.Dir, ".git", "refs", "m1nd", "missions"), future, future)
	check("unsettled", "msn_0000000000bb", "msn_0000000000cc")
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a listing was kept from a folder that had not settled")
	}

	// A damaged listing, under the current stamp, is read past.
	settled()
	check("settled again", "msn_0000000000bb", "msn_0000000000cc")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append(data, "not a line\n"...), 0o600)
	check("damaged", "msn_0000000000bb", "msn_0000000000cc")
}
