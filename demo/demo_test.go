package demo

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

func TestBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Demo-Brain")
	res, err := Build(context.Background(), dir, time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if res.Brain != "Demo-Brain" || len(res.Missions) != 2 {
		t.Fatalf("result = %+v", res)
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	m := &chain.Missions{Repo: repo, Brain: res.Brain}
	view, err := m.Heads("")
	if err != nil {
		t.Fatal(err)
	}
	if chain.LandingBell(view.Missions) != 1 || len(view.Missions) != 2 {
		t.Fatalf("heads = %d, bell = %d", len(view.Missions), chain.LandingBell(view.Missions))
	}
	for _, h := range view.Missions {
		if !strings.HasPrefix(h.Letter.BlockID, "sb_demo_brain_") {
			t.Errorf("block id %s", h.Letter.BlockID)
		}
	}
	out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput()
	if err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
	if _, err := Build(context.Background(), dir, time.Now()); err == nil {
		t.Fatal("building over an existing folder succeeded")
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Repo-B1": "repo_b1", "demo-brain": "demo_brain", "--x--": "x", "A  b": "a_b"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
