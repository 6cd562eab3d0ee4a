package demo

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

func TestBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Demo-Brain")
	res, err := Build(context.Background(), dir, time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if res.Brain != "Demo-Brain" || len(res.Missions) != 9 {
		t.Fatalf("result = %+v", res)
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	m := &chain.Missions{Repo: repo, Brain: res.Brain}
	view, err := m.Heads(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	phases := chain.PhaseCounts(view.Missions)
	for _, p := range chain.Phases {
		if phases[p] == 0 {
			t.Errorf("no mission in phase %s: %v", p, phases)
		}
	}
	if chain.LandingBell(view.Missions) != 1 || len(view.Missions) != 9 {
		t.Fatalf("heads = %d, bell = %d", len(view.Missions), chain.LandingBell(view.Missions))
	}
	// Every mission names a block of the demo's scanned skeleton.
	store := &brain.Store{Repo: repo, Brain: res.Brain}
	for _, h := range view.Missions {
		if err := store.CheckLetterBlock(h.Letter.BlockID, nil); err != nil || !strings.HasPrefix(h.Letter.BlockID, "sb_demo_brain_") {
			t.Errorf("block id %s: %v", h.Letter.BlockID, err)
		}
	}
	if v, ok, err := brain.StoreVersion(repo); err != nil || !ok || v != 2 {
		t.Errorf("store version %d %v %v, want 2 (the scan, the landed receipt)", v, ok, err)
	}
	out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput()
	if err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
	if _, err := Build(context.Background(), dir, time.Now()); err == nil {
		t.Fatal("building over an existing folder succeeded")
	}
}
