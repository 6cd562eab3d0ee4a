package runnerd

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/ops"
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

// Heads says where a mission stands: *ops.Flows (and *chain.Missions).
type Heads interface {
	HeadOf(missionID string) (head *chain.Head, ok bool, err error)
}

// Worktrees lists the mission worktrees runnerd made in this brain.
func Worktrees(ctx context.Context, repo *gitstore.Repo, m Heads) ([]Worktree, error) {
	sides, err := runs.ReadSides(repo.RuntimeDir())
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
		// The work as a reviewer reads it: the commits the target lacks
		// (from the merge base with it), else those since the base.
		from := s.Base
		if s.Target != "" {
			if _, ok, err := repo.ReadRef("refs/heads/" + s.Target); err == nil && ok {
				from = "refs/heads/" + s.Target
			}
		}
		if n, err := gitOutput(ctx, repo.MainWorkTree(), "rev-list", "--count", from+".."+s.Branch, "--"); err == nil {
			w.Commits, _ = strconv.Atoi(n)
		}
		out = append(out, w)
	}
	return out, nil
}

// Pruned is what Prune did: the worktrees it removed, and for missions
// that ended (landed, archived) the branches it deleted and those it kept.
type Pruned struct {
	Removed []string     `json:"removed"`
	Deleted []string     `json:"branches_deleted"`
	Kept    []KeptBranch `json:"branches_kept"`
}

// KeptBranch is an ended mission's branch Prune would not delete, and why.
type KeptBranch struct {
	MissionID string `json:"mission_id"`
	Branch    string `json:"branch"`
	Why       string `json:"why"`
}

// Prune removes the mission worktrees that hold nothing to lose: present,
// clean (no uncommitted change; the branch keeps the commits) and not in
// the middle of a run. Of a mission that ended (landed or archived) it
// then deletes the branch m1nd/<id>, but only when its target holds every
// commit of it and no worktree has it checked out: unmerged work is never
// deleted.
func Prune(ctx context.Context, repo *gitstore.Repo, m Heads) (*Pruned, error) {
	sides, err := runs.ReadSides(repo.RuntimeDir())
	if err != nil {
		return nil, err
	}
	out := &Pruned{Removed: []string{}, Deleted: []string{}, Kept: []KeptBranch{}}
	for _, s := range sides {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		phase := ""
		if head, ok, err := m.HeadOf(s.MissionID); err == nil && ok {
			phase = head.Letter.Phase
		}
		if phase == chain.PhaseExecuting || phase == chain.PhaseGate {
			continue
		}
		outcome := removeIfClean(ctx, repo, s)
		if outcome == worktreeRemoved {
			out.Removed = append(out.Removed, s.MissionID)
		}
		if phase != chain.PhaseLanded && phase != chain.PhaseArchived {
			continue
		}
		if outcome == worktreeRemoved || outcome == worktreeGone {
			deleted, why, err := deleteIfMerged(ctx, repo, s)
			if err != nil {
				return nil, fmt.Errorf("prune %s: %w", s.MissionID, err)
			}
			switch {
			case deleted:
				out.Deleted = append(out.Deleted, s.Branch)
			case why != "":
				out.Kept = append(out.Kept, KeptBranch{MissionID: s.MissionID, Branch: s.Branch, Why: why})
			}
		} else {
			out.Kept = append(out.Kept, KeptBranch{MissionID: s.MissionID, Branch: s.Branch, Why: "its worktree holds uncommitted changes"})
		}
	}
	return out, nil
}

// deleteIfMerged deletes an ended mission's branch when its target holds
// its tip and no worktree has it checked out; otherwise it says why not
// ("" for a branch already gone).
func deleteIfMerged(ctx context.Context, repo *gitstore.Repo, s *runs.Side) (bool, string, error) {
	if s.Branch != ops.WorkBranch(s.MissionID) {
		return false, "not a branch runnerd made", nil
	}
	ref := "refs/heads/" + s.Branch
	tip, ok, err := repo.ReadRef(ref)
	if err != nil || !ok {
		return false, "", err
	}
	if s.Target == "" {
		return false, "no target is recorded: nothing says where its work went", nil
	}
	if _, ok, err := repo.ReadRef("refs/heads/" + s.Target); err != nil || !ok {
		return false, fmt.Sprintf("its target %s is not here", s.Target), err
	}
	main := repo.MainWorkTree()
	if main == "" {
		return false, "the brain is a bare repository: no worktree to check from", nil
	}
	merged, err := isAncestor(ctx, main, tip.String(), "refs/heads/"+s.Target)
	if err != nil {
		return false, "", err
	}
	if !merged {
		return false, fmt.Sprintf("%s does not hold its commits: unmerged work stays", s.Target), nil
	}
	list, err := gitOutput(ctx, main, "worktree", "list", "--porcelain")
	if err != nil {
		return false, "", err
	}
	for _, line := range strings.Split(list, "\n") {
		if line == "branch "+ref {
			return false, "a worktree has it checked out", nil
		}
	}
	// Compare-and-delete: a branch that moved since the check stays.
	if _, err := gitOutput(ctx, main, "update-ref", "-m", "m1nd worktrees prune: merged into "+s.Target, "-d", ref, tip.String()); err != nil {
		return false, "it moved while being pruned", nil
	}
	return true, "", nil
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
func removeIfClean(ctx context.Context, repo *gitstore.Repo, s *runs.Side) tidyOutcome {
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
	runs.WriteSide(repo.RuntimeDir(), s)
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
