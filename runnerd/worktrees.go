package runnerd

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/serve"
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
	sides, err := serve.ReadSides(repo.RuntimeDir())
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
	sides, err := serve.ReadSides(repo.RuntimeDir())
	if err != nil {
		return nil, err
	}
	removed := []string{}
	for _, s := range sides {
		if head, ok, err := m.HeadOf(s.MissionID); err == nil && ok && (head.Letter.Phase == chain.PhaseExecuting || head.Letter.Phase == chain.PhaseGate) {
			continue
		}
		if removeIfClean(ctx, repo, s) == worktreeRemoved {
			removed = append(removed, s.MissionID)
		}
	}
	return removed, nil
}

// tidyOutcome is what removeIfClean did with a mission's worktree.
type tidyOutcome int

const (
	worktreeGone    tidyOutcome = iota // not there: removed before
	worktreeDirty                      // uncommitted changes, or git could not tell: kept
	worktreeKept                       // clean, but git would not remove it
	worktreeRemoved                    // removed, and the side record says so
)

// removeIfClean removes a mission's worktree only when nothing in it would
// be lost: no uncommitted change (the branch keeps the commits). A removed
// worktree is marked so in its side record.
func removeIfClean(ctx context.Context, repo *gitstore.Repo, s *serve.Side) tidyOutcome {
	if fi, err := os.Stat(s.Worktree); err != nil || !fi.IsDir() {
		return worktreeGone
	}
	if status, err := gitOutput(ctx, s.Worktree, "status", "--porcelain"); err != nil || status != "" {
		return worktreeDirty
	}
	if _, err := gitOutput(ctx, repo.MainWorkTree(), "worktree", "remove", s.Worktree); err != nil {
		return worktreeKept
	}
	s.Removed = true
	serve.WriteSide(repo.RuntimeDir(), s)
	return worktreeRemoved
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
