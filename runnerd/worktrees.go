package runnerd

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// Worktree is a mission worktree as `m1nd worktrees` shows it.
type Worktree struct {
	MissionID string `json:"mission_id"`
	RunnerID  string `json:"runner_id"`
	Phase     string `json:"phase"`
	Branch    string `json:"branch"`
	Path      string `json:"path"`
	Present   bool   `json:"present"`
	Clean     bool   `json:"clean"`
	Commits   int    `json:"commits"`
	DiskBytes int64  `json:"disk_bytes"`
}

// Worktrees lists the mission worktrees runnerd made in this brain.
func Worktrees(ctx context.Context, repo *gitstore.Repo, m *chain.Missions) ([]Worktree, error) {
	sides, err := ReadSides(repo.RuntimeDir())
	if err != nil {
		return nil, err
	}
	out := []Worktree{}
	for _, s := range sides {
		w := Worktree{MissionID: s.MissionID, RunnerID: s.RunnerID, Branch: s.Branch, Path: s.Worktree}
		if head, ok, err := m.HeadOf(s.MissionID); err == nil && ok {
			w.Phase = head.Letter.Phase
		}
		if fi, err := os.Stat(s.Worktree); err == nil && fi.IsDir() {
			w.Present = true
			status, err := gitOutput(ctx, s.Worktree, "status", "--porcelain")
			w.Clean = err == nil && status == ""
			w.DiskBytes = diskUse(s.Worktree)
		}
		if n, err := gitOutput(ctx, repo.MainWorkTree(), "rev-list", "--count", s.Base+".."+s.Branch); err == nil {
			w.Commits, _ = strconv.Atoi(n)
		}
		out = append(out, w)
	}
	return out, nil
}

// Prune removes the mission worktrees that hold nothing to lose: present,
// clean (no uncommitted change; the branch keeps the commits) and not in
// the middle of a run. It returns the missions whose worktree it removed.
func Prune(ctx context.Context, repo *gitstore.Repo, m *chain.Missions) ([]string, error) {
	list, err := Worktrees(ctx, repo, m)
	if err != nil {
		return nil, err
	}
	removed := []string{}
	for _, w := range list {
		if !w.Present || !w.Clean || w.Phase == chain.PhaseExecuting || w.Phase == chain.PhaseGate {
			continue
		}
		if _, err := gitOutput(ctx, repo.MainWorkTree(), "worktree", "remove", w.Path); err != nil {
			continue
		}
		removed = append(removed, w.MissionID)
		if sides, err := ReadSides(repo.RuntimeDir()); err == nil {
			for _, s := range sides {
				if s.MissionID == w.MissionID {
					s.Removed = true
					WriteSide(repo.RuntimeDir(), s)
				}
			}
		}
	}
	return removed, nil
}

func diskUse(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
