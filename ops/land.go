package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/internal/serve"
)

// LandRequest is one landing: the human's gesture and where the work goes.
type LandRequest struct {
	MissionID string
	// Into is the branch the work merges into; "" for the one the mission's
	// worktree was cut from (recorded at spawn).
	Into  string
	Agent string // who lands: the owner
	// ExpectedStoreVersion is the store version the import builds on; 0
	// reads the store's version now. A signed landing names the version its
	// proof was made over, so a store that moved is store_version_conflict.
	ExpectedStoreVersion int64
	Origin               string       // the gesture's origin (imported_via)
	Proof                *gates.Proof // with human-passkey: the assertion over the import's change
	// DryRun checks everything a landing checks and prepares the import,
	// writing nothing a ref reaches: the result says whether a gesture is
	// still needed, and its Change is what a passkey signs.
	DryRun bool
	Now    time.Time
}

// How a landing moved the target branch.
const (
	MergeFastForward = "fast-forward" // the target moved to the branch's tip
	MergeCommit      = "merge"        // a merge commit joins the two
	MergeUpToDate    = "up-to-date"   // the target already holds the work
	MergeNoBranch    = "no-branch"    // the mission has no work branch here
)

// LandResult is what a landing did (or, with DryRun, would do).
type LandResult struct {
	OK            bool   `json:"ok"`
	MissionID     string `json:"mission_id"`
	BlockID       string `json:"block_id"`
	StoreVersion  int64  `json:"store_version"`            // the import that holds the receipt
	Imported      bool   `json:"imported"`                 // this landing imported it (false: an earlier run had)
	Merge         string `json:"merge"`                    // MergeFastForward, MergeCommit, …
	Branch        string `json:"branch,omitempty"`         // the work branch
	Target        string `json:"target,omitempty"`         // the branch it landed in
	Commit        string `json:"commit,omitempty"`         // the target's tip after the landing
	Worktree      bool   `json:"worktree_updated"`         // a worktree with the target checked out was fast-forwarded
	AlreadyLanded bool   `json:"already_landed,omitempty"` // nothing was left to do
	LetterID      string `json:"letter_id,omitempty"`      // the landed letter

	// NeedsGesture (DryRun) says the import is still to be made: Change is
	// what its proof binds.
	NeedsGesture bool   `json:"-"`
	Change       []byte `json:"-"`
}

// Land lands a merge_wait mission, DESIGN §10: the human's gesture imports
// its receipt candidate, its work branch m1nd/<id> merges into the target
// branch, and the landed letter names the import. Everything that could
// refuse is asked before the import: a merge conflict (merge_conflict with
// the paths), a target checked out in a worktree with uncommitted changes
// (worktree_dirty naming it), a branch that does not exist. Each step is
// one compare-and-swap, in an order a crash cannot break: after the import
// the mission is still merge_wait, after the merge the target holds the
// work, and Land run again finds what is done and finishes the rest (no
// second gesture: the store holds the first).
func (b *Brain) Land(ctx context.Context, req LandRequest) (*LandResult, error) {
	head, err := b.Missions.Current(req.MissionID)
	if err != nil {
		return nil, err
	}
	l := head.Letter
	res := &LandResult{OK: true, MissionID: l.MissionID, BlockID: l.BlockID}
	if l.Phase == chain.PhaseLanded {
		res.AlreadyLanded, res.Merge = true, MergeUpToDate
		if l.Receipt != nil {
			res.StoreVersion = l.Receipt.StoreVersion
		}
		return res, nil
	}
	if l.Phase != chain.PhaseMergeWait || l.ReceiptCandidate == nil {
		return nil, gates.Refusef(gates.InvalidTransition, "mission_id", "land takes a mission at merge_wait with a receipt candidate; %s is at %s", l.MissionID, l.Phase)
	}
	plan, err := b.planMerge(ctx, l.MissionID, req.Into)
	if err != nil {
		return nil, err
	}
	res.Merge, res.Branch, res.Target = plan.kind, plan.branch, plan.target
	version, imported, err := b.Store.LandingVersion(l.BlockID, l.ReceiptCandidate)
	if err != nil {
		return nil, fmt.Errorf("land %s: %w", l.MissionID, err)
	}
	if !imported {
		current := req.ExpectedStoreVersion
		if current == 0 {
			if current, _, err = brain.StoreVersion(b.Repo); err != nil {
				return nil, fmt.Errorf("land %s: %w", l.MissionID, err)
			}
		}
		imp, err := b.Store.ImportReceipt(ctx, brain.ImportRequest{
			WriteRequest: brain.WriteRequest{ExpectedStoreVersion: current, Agent: req.Agent, Now: req.Now},
			BlockID:      l.BlockID, Receipt: chain.CanonicalJSON(l.ReceiptCandidate),
			Origin: req.Origin, Proof: req.Proof, DryRun: req.DryRun,
		})
		if err != nil {
			return nil, err
		}
		if req.DryRun {
			res.NeedsGesture, res.Change, res.StoreVersion = true, imp.Change, imp.StoreVersion
			return res, nil
		}
		version, res.Imported = imp.StoreVersion, true
	}
	res.StoreVersion = version
	if req.DryRun {
		return res, nil
	}
	// The move is not cut short by a cancelled context (Ctrl-C, SIGTERM):
	// a git merge stopped between the worktree and the branch leaves the
	// worktree dirty and git's locks behind, a state no landing finishes.
	// It takes milliseconds; what follows still honours ctx.
	if res.Commit, res.Worktree, err = b.applyMerge(context.WithoutCancel(ctx), plan, l, version); err != nil {
		return nil, fmt.Errorf("land %s: the receipt is in store v%d, but the merge did not happen (run the landing again to finish it): %w", l.MissionID, version, err)
	}
	landed := chain.Next(l, head.HeadLetterID, req.Now)
	landed.SetPhase(chain.PhaseLanded)
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: version}
	post, err := b.Missions.Post(ctx, chain.PostRequest{Body: landed.Canonical(), Agent: req.Agent})
	if err != nil {
		return nil, fmt.Errorf("land %s: the receipt is in store v%d and the work is merged, but the landed letter was not posted (run the landing again to finish it): %w", l.MissionID, version, err)
	}
	res.LetterID = post.LetterID
	return res, nil
}

// mergePlan is how a landing will move the target branch, worked out
// before anything is written.
type mergePlan struct {
	kind     string
	branch   string // the work branch, m1nd/<id>
	target   string
	tip      string // the work branch's tip
	old      string // the target's tip
	tree     string // MergeCommit: the merged tree
	worktree string // where the target is checked out, "" when nowhere
}

// planMerge works out the merge of a mission's work branch into its
// target, refusing what would fail: no target, a conflict, a dirty
// worktree holding the target.
func (b *Brain) planMerge(ctx context.Context, missionID, into string) (*mergePlan, error) {
	p := &mergePlan{branch: WorkBranch(missionID)}
	tip, ok, err := b.Repo.ReadRef("refs/heads/" + p.branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		p.kind = MergeNoBranch
		return p, nil
	}
	p.tip = tip.String()
	p.target = into
	if p.target == "" {
		if side, ok, err := serve.ReadSide(b.Repo.RuntimeDir(), missionID); err != nil {
			return nil, err
		} else if ok {
			p.target = side.Target
		}
	}
	if p.target == "" {
		return nil, gates.Refusef(gates.InvalidTransition, "into", "no target branch is recorded for %s (it was not spawned on this machine, or from a detached HEAD): name one with --into BRANCH", missionID)
	}
	if out, _, err := b.gitRun(ctx, nil, "check-ref-format", "--branch", p.target); err != nil || out != p.target || strings.HasPrefix(p.target, "m1nd/") {
		return nil, gates.Refusef(gates.InvalidTransition, "into", "%s is not a branch a landing merges into", gates.Echo(p.target))
	}
	old, ok, err := b.Repo.ReadRef("refs/heads/" + p.target)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gates.Refusef(gates.InvalidTransition, "into", "this repository has no branch %s to land in", gates.Echo(p.target))
	}
	p.old = old.String()
	landed, err := b.isAncestor(ctx, p.tip, p.old)
	if err != nil {
		return nil, err
	}
	ff := false
	if !landed {
		if ff, err = b.isAncestor(ctx, p.old, p.tip); err != nil {
			return nil, err
		}
	}
	switch {
	case landed:
		p.kind = MergeUpToDate
		return p, nil
	case ff:
		p.kind = MergeFastForward
	default:
		p.kind = MergeCommit
		out, code, err := b.gitRun(ctx, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", p.old, p.tip)
		lines := strings.Split(out, "\n")
		switch {
		case code == 1 && len(lines) > 1:
			return nil, gates.Refusef(gates.MergeConflict, "mission_id", "%s does not merge cleanly into %s: %s conflict; resolve it on the branch (or land into another with --into), then land again",
				p.branch, p.target, strings.Join(echoAll(lines[1:]), ", "))
		case err != nil:
			return nil, fmt.Errorf("merge %s into %s: %w", p.branch, p.target, err)
		}
		p.tree = lines[0]
	}
	if p.worktree, err = b.checkedOutIn(ctx, p.target); err != nil {
		return nil, err
	}
	if p.worktree != "" {
		if err := b.cleanWorktree(ctx, p.worktree, p.target); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// applyMerge moves the target to hold the work: a fast-forward or a new
// merge commit, by compare-and-swap of the branch — or, where the target
// is checked out, by fast-forwarding that clean worktree. It returns the
// target's tip.
func (b *Brain) applyMerge(ctx context.Context, p *mergePlan, l *chain.Letter, version int64) (tip string, worktree bool, err error) {
	switch p.kind {
	case MergeNoBranch:
		return "", false, nil
	case MergeUpToDate:
		return p.old, false, nil
	}
	next := p.tip
	if p.kind == MergeCommit {
		msg := fmt.Sprintf("Land %s into %s\n\nThe work of mission %s on block %s, landed with its receipt\nimported at store v%d.\n\nM1nd-Mission: %s\nM1nd-Block: %s\nM1nd-Store-Version: %d\n",
			p.branch, p.target, l.MissionID, l.BlockID, version, l.MissionID, l.BlockID, version)
		out, _, err := b.gitRun(ctx, identityEnv(ctx, b), "commit-tree", p.tree, "-p", p.old, "-p", p.tip, "-m", msg)
		if err != nil {
			return "", false, err
		}
		next = out
	}
	if p.worktree != "" {
		// The worktree moves with its branch, or nothing moves: git's own
		// fast-forward refuses when its HEAD is no longer p.old or a file
		// it would overwrite is in the way.
		if err := b.cleanWorktree(ctx, p.worktree, p.target); err != nil {
			return "", false, err
		}
		if _, _, err := b.gitRunIn(ctx, p.worktree, nil, "merge", "--ff-only", "-q", next); err != nil {
			return "", false, fmt.Errorf("fast-forward %s in its worktree: %w", p.target, err)
		}
		return next, true, nil
	}
	if _, _, err := b.gitRun(ctx, nil, "update-ref", "-m", "m1nd land "+l.MissionID, "refs/heads/"+p.target, next, p.old); err != nil {
		return "", false, fmt.Errorf("move %s (it moved since the landing began?): %w", p.target, err)
	}
	return next, false, nil
}

// checkedOutIn is the worktree that has branch checked out, "" for none.
func (b *Brain) checkedOutIn(ctx context.Context, branch string) (string, error) {
	out, _, err := b.gitRun(ctx, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	var path string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			path = p
		}
		if line == "branch refs/heads/"+branch {
			return path, nil
		}
	}
	return "", nil
}

// cleanWorktree refuses worktree_dirty when the worktree that holds the
// target has uncommitted changes to tracked files. It only reads: git
// status takes no index.lock (GIT_OPTIONAL_LOCKS=0), so the owner's own
// git in that worktree never finds it locked by a landing, and a landing
// stopped here leaves no lock behind.
func (b *Brain) cleanWorktree(ctx context.Context, dir, branch string) error {
	out, _, err := b.gitRunIn(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return fmt.Errorf("status of %s: %w", dir, err)
	}
	if out != "" {
		n := len(strings.Split(out, "\n"))
		return gates.Refusef(gates.WorktreeDirty, "into", "%s is checked out in %s, which has %s: commit or stash them there, then land again (nothing was written)",
			branch, dir, gates.Count(n, "uncommitted change"))
	}
	return nil
}

// isAncestor reports whether commit a is an ancestor of commit c. Only
// git's own answer counts: a git that did not run, or was stopped, is an
// error and never a yes (a yes makes the landing "up-to-date": landed
// without the merge).
func (b *Brain) isAncestor(ctx context.Context, a, c string) (bool, error) {
	_, code, err := b.gitRun(ctx, nil, "merge-base", "--is-ancestor", a, c)
	switch {
	case err == nil:
		return true, nil
	case code == 1:
		return false, nil
	}
	return false, fmt.Errorf("is %.12s an ancestor of %.12s: %w", a, c, err)
}

// gitRun runs the git CLI on the repository: its output without the final
// new line, and its exit code.
func (b *Brain) gitRun(ctx context.Context, env []string, args ...string) (string, int, error) {
	return b.gitRunIn(ctx, b.Repo.CommandDir(), env, args...)
}

func (b *Brain) gitRunIn(ctx context.Context, dir string, env []string, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// git is stopped the way it can clean up after itself: SIGTERM, on
	// which it removes its lock files (index.lock, <ref>.lock), not the
	// default SIGKILL that leaves them for a human to delete. In a process
	// group of its own, a Ctrl-C or a hang-up at the terminal reaches m1nd,
	// which decides, and not the git it is waiting for.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		code = -1 // git did not run (not found, context done): no exit code
	}
	if err != nil {
		err = fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSuffix(out.String(), "\n"), code, err
}

// identityEnv names m1nd as the merge commit's author and committer when
// the repository names nobody (a fresh machine, a CI box), so a landing
// never fails for want of user.name.
func identityEnv(ctx context.Context, b *Brain) []string {
	if _, _, err := b.gitRun(ctx, nil, "var", "GIT_COMMITTER_IDENT"); err == nil {
		return nil
	}
	return []string{"GIT_AUTHOR_NAME=m1nd", "GIT_AUTHOR_EMAIL=m1nd@localhost", "GIT_COMMITTER_NAME=m1nd", "GIT_COMMITTER_EMAIL=m1nd@localhost"}
}

// echoAll echoes each path of a refusal safely (gates.Echo), at most ten.
func echoAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if len(out) == 10 {
			out = append(out, "…")
			break
		}
		out = append(out, gates.Echo(p))
	}
	return out
}
