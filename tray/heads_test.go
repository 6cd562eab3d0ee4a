package tray

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/chain/chaintest"
	"github.com/m1nd/m1nd/internal/runs"
)

// TestHeadsReplyMemo: the heads reply is kept while the mission refs stay
// still, and rebuilt when git or m1nd moves one; a reply read while the
// refs' folder is younger than a modification-time tick is never kept. A
// loose ref file rewritten in place (which neither git nor m1nd does)
// stands in for a write in the same tick as the read: it moves a ref and
// leaves every stamp as it was.
func TestHeadsReplyMemo(t *testing.T) {
	f := newFixture(t, false)
	m := f.missions()
	first, ref := chaintest.MergeWait(t, m, "sb_shop_core")
	second, _ := chaintest.MergeWait(t, m, "sb_shop_core")
	refFile := filepath.Join(f.srv.repo.CommonDir(), filepath.FromSlash(ref))
	folder := filepath.Dir(refFile)
	packed := filepath.Join(f.srv.repo.CommonDir(), "packed-refs")
	// The reply leans on the branches and runnerd's side records too.
	common := f.srv.repo.CommonDir()
	leans := []string{filepath.Join(common, "refs", "heads"), filepath.Join(common, "refs", "heads", "m1nd"), runs.SideDir(f.srv.repo.RuntimeDir())}
	age := func(d time.Duration) {
		then := time.Now().Add(-d)
		for _, p := range append([]string{folder, packed}, leans...) {
			if err := os.Chtimes(p, then, then); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
	}
	heads := func() map[string]string {
		t.Helper()
		code, out := f.do("GET", "/api/mailbox?brain=shop&kind=mission", "", nil)
		if code != 200 {
			t.Fatalf("heads: %d %v", code, out)
		}
		phases := map[string]string{}
		for _, h := range out["missions"].([]any) {
			h := h.(map[string]any)
			phases[h["mission_id"].(string)] = h["head"].(map[string]any)["phase"].(string)
		}
		return phases
	}
	// The first letter of the first mission: a commit that is a valid head.
	log, err := m.Log(context.Background(), first.MissionID)
	if err != nil {
		t.Fatal(err)
	}
	older := log[0].Commit + "\n"

	// Fresh refs (a modification time that is not yet a tick old; here in
	// the future, so however slow the machine): the reply is built, not
	// kept; an in-place rewrite shows.
	age(-time.Hour)
	if got := heads(); got[first.MissionID] != chain.PhaseMergeWait || len(got) != 2 {
		t.Fatalf("heads: %v", got)
	}
	if err := os.WriteFile(refFile, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := heads(); got[first.MissionID] == chain.PhaseMergeWait {
		t.Fatalf("a reply read among fresh refs was kept: %v", got)
	}

	// On a file system that keeps whole seconds, a second is not settled.
	if err := os.WriteFile(refFile, []byte(first.Commit.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	whole := time.Now().Add(-time.Second).Truncate(time.Second)
	for _, p := range append([]string{folder, packed}, leans...) {
		os.Chtimes(p, whole, whole)
	}
	heads()
	if err := os.WriteFile(refFile, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := heads(); got[first.MissionID] == chain.PhaseMergeWait {
		t.Fatalf("a reply read a second after a whole-second write was kept: %v", got)
	}

	// Settled refs: the reply is kept, so an in-place rewrite is not seen...
	age(time.Hour)
	heads()
	if err := os.WriteFile(refFile, []byte(first.Commit.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := heads(); got[first.MissionID] == chain.PhaseMergeWait {
		t.Fatalf("a settled reply was rebuilt: %v", got)
	}
	// ...until runnerd's queue records something (the rewrite stands in
	// for a queue state the reply would show; the kept listing of mission
	// refs, which an in-place rewrite passes by as the memo does, is
	// dropped so that the memo alone is under test)...
	if err := runs.WriteSide(f.srv.repo.RuntimeDir(), &runs.Side{MissionID: second.MissionID, Target: "main"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(chain.MissionListPath(f.srv.repo.RuntimeDir())); err != nil {
		t.Fatal(err)
	}
	if got := heads(); got[first.MissionID] != chain.PhaseMergeWait {
		t.Fatalf("a reply kept after the queue recorded something: %v", got)
	}
	// ...and a write through git's protocol is seen (settled again, the
	// first ref rewritten in place back to its older letter first).
	age(time.Hour)
	heads()
	if err := os.WriteFile(refFile, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := heads(); got[first.MissionID] != chain.PhaseMergeWait {
		t.Fatalf("a settled reply was rebuilt: %v", got)
	}
	f.g.Git("update-ref", chain.MissionRefPrefix+second.MissionID, second.Commit.String())
	f.g.Git("update-ref", "-d", chain.MissionRefPrefix+second.MissionID)
	if got := heads(); got[first.MissionID] == chain.PhaseMergeWait || len(got) != 1 {
		t.Fatalf("after git moved the refs: %v", got)
	}
	// Packing moves no value but replaces packed-refs; the reply stays right.
	age(time.Hour)
	heads()
	f.g.Git("pack-refs", "--all")
	if got := heads(); got[first.MissionID] == chain.PhaseMergeWait || len(got) != 1 {
		t.Fatalf("after pack-refs: %v", got)
	}
}

// BenchmarkHeadsView is the tray's heads view over 1,000 missions, asked
// by 8 clients at once: settled (the refs still, the memo answers) and
// moving (every reply built, as while agents post).
func BenchmarkHeadsView(b *testing.B) {
	f := newFixture(b, false)
	m := f.missions()
	for i := 0; i < 1000; i++ {
		if _, err := m.New(context.Background(), chain.NewMission{BlockID: "sb_shop_core", Agent: "a", Now: testNow}); err != nil {
			b.Fatal(err)
		}
	}
	folder := filepath.Join(f.srv.repo.CommonDir(), "refs", "m1nd", "missions")
	for _, settled := range []bool{true, false} {
		name := "moving"
		if settled {
			name = "settled"
			then := time.Now().Add(-time.Hour)
			os.Chtimes(folder, then, then)
		} else {
			os.Chtimes(folder, time.Now(), time.Now())
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4) // 8 clients on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := http.Get(f.http.URL + "/api/mailbox?brain=shop&kind=mission")
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("heads: %d", resp.StatusCode)
					}
				}
			})
		})
	}
}
