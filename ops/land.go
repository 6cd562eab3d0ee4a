package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
)

// LandRequest is one landing made at a terminal (or by a test): the
// human's gesture and where the work goes. The tray signs its landings
// with a passkey instead: PlanLanding, PrepareLanding, FinishLanding.
type LandRequest struct {
	MissionID string
	// Into is the branch the work merges into; "" for the one the mission's
	// worktree was cut from (recorded at spawn).
	Into   string
	Agent  string // who lands: the owner
	Origin string // the gesture's origin (imported_via): human-tty at a terminal
	Now    time.Time
}

// How a landing moved the target branch.
const (
	MergeFastForward = "fast-forward" // the target moved to the branch's tip, the tested commit
	MergeCommit      = "merge"        // the two must be merged first: runnerd merges and gates it (the queue)
	MergeUpToDate    = "up-to-date"   // the target already holds the work
	MergeNoBranch    = "no-branch"    // the mission has no work branch here
)

// LandResult is what a landing did.
type LandResult struct {
	// ID is the mission's id again, under the key every reply names its
	// object by (docs/commands.md, "JSON replies").
	ID            string `json:"id"`
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
}

// LandingPlan is a landing worked out before anything is written: every
// refusal a landing can meet is asked (a broken chain or store, a
// conflict, a dirty worktree holding the target, no target), and Lands is
// exactly what the import will name and its gesture will bind — the
// mission, its merge_wait letter, the target and the commits as they are
// now. A plan whose import is in the store already (a landing cut short)
// is Resume: it is finished as that import recorded it, for this mission
// only, with no second gesture.
type LandingPlan struct {
	MissionID     string
	BlockID       string
	Lands         *brain.Landing // what the import names
	Merge         string         // MergeFastForward, MergeCommit, …
	Branch        string
	Target        string
	Resume        bool  // the import is made: StoreVersion names it
	StoreVersion  int64 // Resume: the import's version
	AlreadyLanded bool  // the head is landed: nothing is left to do

	head  *chain.Head
	merge *mergePlan
}

// PlanLanding works a landing of missionID out (see LandingPlan).
func (b *Flows) PlanLanding(ctx context.Context, missionID, into string) (*LandingPlan, error) {
	head, err := b.missions.Current(missionID)
	if err != nil {
		return nil, err
	}
	l := head.Letter
	plan := &LandingPlan{MissionID: l.MissionID, BlockID: l.BlockID, head: head}
	// Nothing proceeds on history the laws refuse: not a landing, not the
	// word that one was made.
	if err := b.CheckSound(ctx, chain.MissionRefPrefix+missionID, brain.StoreRef); err != nil {
		return nil, err
	}
	if l.Phase == chain.PhaseLanded {
		plan.AlreadyLanded, plan.Merge = true, MergeUpToDate
		if l.Receipt != nil {
			plan.StoreVersion = l.Receipt.StoreVersion
		}
		return plan, nil
	}
	if l.Phase != chain.PhaseMergeWait || l.ReceiptCandidate == nil {
		return nil, rules.Refusef(rules.InvalidTransition, "mission_id", "land takes a mission at merge_wait with a receipt candidate; %s is at %s", l.MissionID, l.Phase)
	}
	// Only a gate an approved runner proved moves a target (DESIGN §10):
	// a claim is proven first, by runnerd, on exactly its tree.
	if _, tree := l.ReceiptCandidate.Evidence.Tested(); tree != "" {
		word, err := b.headWord(head, l)
		if err != nil {
			return nil, err
		}
		if !word.Proven() {
			return nil, &ClaimedGate{MissionID: l.MissionID, Word: word}
		}
	}
	imp, ok, err := b.store.LandingImport(l.MissionID, head.HeadLetterID, l.BlockID, l.ReceiptCandidate)
	if err != nil {
		return nil, fmt.Errorf("land %s: %w", l.MissionID, err)
	}
	if ok && (into == "" || into == imp.Lands.Target) {
		// A landing cut short: finished exactly as its import recorded it,
		// while the target is still where the human saw it (or holds the
		// work already). Otherwise the landing starts again, with a new
		// gesture over the new commits.
		m, applies, err := b.recordedMerge(ctx, imp.Lands)
		if err != nil {
			return nil, err
		}
		if applies {
			plan.Lands, plan.merge, plan.Resume, plan.StoreVersion = imp.Lands, m, true, imp.StoreVersion
			plan.Merge, plan.Branch, plan.Target = m.kind, m.branch, m.target
			return plan, nil
		}
	}
	m, err := b.planMerge(ctx, l.MissionID, into, l.ReceiptCandidate.Evidence)
	if err != nil {
		return nil, err
	}
	plan.merge, plan.Merge, plan.Branch, plan.Target = m, m.kind, m.branch, m.target
	plan.Lands = &brain.Landing{MissionID: l.MissionID, LetterID: head.HeadLetterID}
	if m.kind != MergeNoBranch {
		plan.Lands.Target, plan.Lands.BranchHead, plan.Lands.TargetHead, plan.Lands.Tree = m.target, m.tip, m.old, m.tree
	}
	return plan, nil
}

// Binds says in one line what a landing's gesture binds, for the human who
// makes it: the mission, the block, the commits and the store version.
func (p *LandingPlan) Binds(storeVersion int64) string {
	what := fmt.Sprintf("mission %s (block %s), receipt imported at store v%d", p.MissionID, p.BlockID, storeVersion)
	if p.Lands == nil || p.Lands.Target == "" {
		return what + "; no branch to merge"
	}
	return fmt.Sprintf("%s; %s at %.12s into %s at %.12s (%s), leaving %s at tree %.12s", what, p.Branch, p.Lands.BranchHead, p.Target, p.Lands.TargetHead, p.Merge, p.Target, p.Lands.Tree)
}

// Land lands a merge_wait mission with a terminal's gesture, DESIGN §10:
// PlanLanding, then LandPlanned.
func (b *Flows) Land(ctx context.Context, req LandRequest) (*LandResult, error) {
	plan, err := b.PlanLanding(ctx, req.MissionID, req.Into)
	if err != nil {
		return nil, err
	}
	return b.LandPlanned(ctx, plan, req.Agent, req.Origin, req.Now)
}

// LandPlanned lands as plan says: the import of exactly plan.Lands, made
// with origin (a terminal's; the laws judge it), then FinishLanding. A plan
// to resume imports nothing.
func (b *Flows) LandPlanned(ctx context.Context, plan *LandingPlan, agent, origin string, now time.Time) (*LandResult, error) {
	if plan.AlreadyLanded {
		return &LandResult{ID: plan.MissionID, MissionID: plan.MissionID, BlockID: plan.BlockID, AlreadyLanded: true, Merge: MergeUpToDate, StoreVersion: plan.StoreVersion}, nil
	}
	if plan.Resume {
		return b.FinishLanding(ctx, plan, agent, now)
	}
	current, _, err := brain.StoreVersion(b.repo)
	if err != nil {
		return nil, fmt.Errorf("land %s: %w", plan.MissionID, err)
	}
	l := plan.head.Letter
	imp, err := b.store.ImportReceipt(ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: current, Agent: agent, Now: now},
		BlockID:      l.BlockID, Receipt: chain.CanonicalJSON(l.ReceiptCandidate), Lands: plan.Lands, Origin: origin,
	})
	if err != nil {
		return nil, err
	}
	plan.Resume, plan.StoreVersion = true, imp.StoreVersion
	res, err := b.FinishLanding(ctx, plan, agent, now)
	if res != nil {
		res.Imported = true
	}
	return res, err
}

// PrepareLanding prepares a plan's import, for a passkey to sign: the one
// store commit its gesture writes, which binds the plan's Lands (mission,
// letter, target, commits) and the store change. Nothing a ref reaches is
// written.
func (b *Flows) PrepareLanding(ctx context.Context, plan *LandingPlan, agent string, now time.Time) (*chain.Prepared, int64, error) {
	if plan.AlreadyLanded || plan.Resume {
		return nil, 0, fmt.Errorf("land %s: nothing is left to sign", plan.MissionID)
	}
	current, _, err := brain.StoreVersion(b.repo)
	if err != nil {
		return nil, 0, fmt.Errorf("land %s: %w", plan.MissionID, err)
	}
	l := plan.head.Letter
	imp, err := b.store.ImportReceipt(ctx, brain.ImportRequest{
		WriteRequest: brain.WriteRequest{ExpectedStoreVersion: current, Agent: agent, Now: now},
		BlockID:      l.BlockID, Receipt: chain.CanonicalJSON(l.ReceiptCandidate), Lands: plan.Lands,
		Origin: rules.OriginHumanPasskey, DryRun: true,
	})
	if err != nil {
		return nil, 0, err
	}
	return imp.Prepared, imp.StoreVersion, nil
}

// FinishLanding moves the target as a made import recorded (plan.Resume,
// plan.StoreVersion) and posts the landed letter naming that import. Each
// step is one compare-and-swap, in an order a crash cannot break: after the
// import the mission is still merge_wait, after the merge the target holds
// the work, and PlanLanding run again finds what is done.
func (b *Flows) FinishLanding(ctx context.Context, plan *LandingPlan, agent string, now time.Time) (*LandResult, error) {
	l, version := plan.head.Letter, plan.StoreVersion
	res := &LandResult{ID: l.MissionID, MissionID: l.MissionID, BlockID: l.BlockID, StoreVersion: version, Merge: plan.Merge, Branch: plan.Branch, Target: plan.Target}
	// The move is not cut short by a cancelled context (Ctrl-C, SIGTERM):
	// a git merge stopped between the worktree and the branch leaves the
	// worktree dirty and git's locks behind, a state no landing finishes.
	// It takes milliseconds; what follows still honours ctx.
	var err error
	if res.Commit, res.Worktree, err = b.applyMerge(context.WithoutCancel(ctx), plan.merge, l); err != nil {
		return nil, fmt.Errorf("land %s: the receipt is in store v%d, but the merge did not happen (run the landing again to finish it): %w", l.MissionID, version, err)
	}
	landed := chain.Next(l, plan.head.HeadLetterID, now)
	landed.SetPhase(chain.PhaseLanded)
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: version}
	post, err := b.missions.Post(ctx, chain.PostRequest{Body: landed.Canonical(), Agent: agent})
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
	tree     string // the tree the target holds once landed
	now      string // the target's tip now, when the work is in it already (a resumed landing)
	worktree string // where the target is checked out, "" when nowhere
}

// planMerge works out how a mission's work branch lands in its target,
// refusing what would fail or would land what no gate passed on (DESIGN
// §10): no target; a branch that moved since its gate (stale_gate naming
// both commits); a target that moved since the gate, whose merge with
// the branch is gated first (stale_gate; merge_conflict, with the paths,
// when it does not merge); a dirty worktree holding the target. The
// target only ever moves to exactly the commit the gate tested.
func (b *Flows) planMerge(ctx context.Context, missionID, into string, evidence rules.Evidence) (*mergePlan, error) {
	branch := WorkBranch(missionID)
	tip, ok, err := b.repo.ReadRef("refs/heads/" + branch)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &mergePlan{kind: MergeNoBranch, branch: branch}, nil
	}
	side, _, err := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	if err != nil {
		return nil, err
	}
	target, old, err := b.landingTarget(ctx, missionID, into, side)
	if err != nil {
		return nil, err
	}
	tested, _ := evidence.Tested()
	if tested == "" {
		return nil, rules.Refusef(rules.IncompleteEvidence, "receipt_candidate.evidence.evidence_refs", "the gate of %s names no commit it tested (commit:… in its evidence): nothing a gate tested can land from %s", missionID, branch)
	}
	if side != nil && side.Queue != nil && side.Queue.State == runs.QueueGateFailed && side.Queue.Commit == tip.String() && side.Queue.Target == target {
		return nil, rules.Refusef(rules.StaleGate, "mission_id", "the gate failed on the merge of %s with %s (%.12s; m1nd mission gate --regate %s prints its output): what this landing would put on %s never passed; fix the work on the branch, and runnerd's queue gates it again", branch, target, tip, missionID, target)
	}
	if tip.String() != tested {
		return nil, rules.Refusef(rules.StaleGate, "mission_id", "%s moved since its gate: the gate tested %.12s, the branch is at %.12s — what came after the gate was never gated; runnerd gates the branch again (its queue), then land", branch, tested, tip)
	}
	p, err := b.mergeOf(ctx, branch, target, tested, old.String())
	if err != nil {
		return nil, err
	}
	if p.kind == MergeCommit {
		return nil, b.refuseUngatedMerge(ctx, p, missionID)
	}
	return p, nil
}

// landingTarget is the branch a landing merges into (into, else the one
// the side record names) and its tip, refusing a target that is missing,
// not a branch, or a work branch.
func (b *Flows) landingTarget(ctx context.Context, missionID, into string, side *runs.Side) (string, gitstore.Hash, error) {
	target := into
	if target == "" && side != nil {
		target = side.Target
	}
	if target == "" {
		return "", gitstore.ZeroHash, rules.Refusef(rules.InvalidTransition, "into", "no target branch is recorded for %s (it was not spawned on this machine, or from a detached HEAD): name one with --into BRANCH", missionID)
	}
	if out, _, err := b.gitRun(ctx, nil, "check-ref-format", "--branch", target); err != nil || out != target || strings.HasPrefix(target, WorkBranchPrefix) {
		return "", gitstore.ZeroHash, rules.Refusef(rules.InvalidTransition, "into", "%s is not a branch a landing merges into", rules.Echo(target))
	}
	old, ok, err := b.repo.ReadRef("refs/heads/" + target)
	if err != nil {
		return "", gitstore.ZeroHash, err
	}
	if !ok {
		return "", gitstore.ZeroHash, rules.Refusef(rules.InvalidTransition, "into", "this repository has no branch %s to land in", rules.Echo(target))
	}
	return target, old, nil
}

// refuseUngatedMerge is the refusal of a landing whose branch and target
// must be merged first: merge_conflict, with the paths, when they do not
// merge; else stale_gate, since the merge is gated before it lands.
func (b *Flows) refuseUngatedMerge(ctx context.Context, p *mergePlan, missionID string) error {
	paths, err := b.conflicts(ctx, p.old, p.tip)
	if err != nil {
		return err
	}
	if len(paths) > 0 {
		return rules.Refusef(rules.MergeConflict, "mission_id", "%s does not merge cleanly into %s: %s conflict; resolve it on the branch (or land into another with --into), then land again",
			p.branch, p.target, strings.Join(echoAll(paths), ", "))
	}
	return rules.Refusef(rules.StaleGate, "mission_id", "%s moved since the gate of %s (it is at %.12s now, which the tested %.12s does not hold): the merge of the two is gated first — runnerd re-gates it (its queue; m1nd runnerd must run), then land the re-gated commit", p.target, missionID, p.old, p.tip)
}

// mergeOf works out how tip of branch lands on old, the tip of target: up
// to date (old holds tip), a fast-forward (tip holds old), or neither
// (MergeCommit: the two must be merged, and the merge gated, first), with
// the tree the target will hold, and checks the worktree that holds the
// target.
func (b *Flows) mergeOf(ctx context.Context, branch, target, tip, old string) (*mergePlan, error) {
	p := &mergePlan{branch: branch, target: target, tip: tip, old: old}
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
		p.tree, _, err = b.gitRun(ctx, nil, "rev-parse", p.old+"^{tree}")
		return p, err
	case ff:
		p.kind = MergeFastForward
		if p.tree, _, err = b.gitRun(ctx, nil, "rev-parse", p.tip+"^{tree}"); err != nil {
			return nil, err
		}
	default:
		p.kind = MergeCommit
		return p, nil
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

// conflicts are the paths where the merge of a and c conflicts; none when
// it merges cleanly. Nothing is written but objects no ref reaches.
func (b *Flows) conflicts(ctx context.Context, a, c string) ([]string, error) {
	out, code, err := b.gitRun(ctx, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", a, c)
	lines := strings.Split(out, "\n")
	switch {
	case code == 1 && len(lines) > 1:
		return lines[1:], nil
	case err != nil:
		return nil, fmt.Errorf("merge %.12s with %.12s: %w", a, c, err)
	}
	return nil, nil
}

// recordedMerge is the merge a made import recorded, and whether it still
// applies: the target is where the human saw it (the merge is to be made,
// giving the recorded tree), or holds the recorded work already (the
// merge was made; what is left is the letter).
func (b *Flows) recordedMerge(ctx context.Context, lands *brain.Landing) (*mergePlan, bool, error) {
	if lands.Target == "" {
		return &mergePlan{kind: MergeNoBranch, branch: WorkBranch(lands.MissionID)}, true, nil
	}
	now, ok, err := b.repo.ReadRef("refs/heads/" + lands.Target)
	if err != nil || !ok {
		return nil, false, err
	}
	branch := WorkBranch(lands.MissionID)
	if now.String() != lands.TargetHead {
		holds, err := b.isAncestor(ctx, lands.BranchHead, now.String())
		if err != nil || !holds {
			return nil, false, err
		}
		return &mergePlan{kind: MergeUpToDate, branch: branch, target: lands.Target, tip: lands.BranchHead, old: lands.TargetHead, tree: lands.Tree, now: now.String()}, true, nil
	}
	p, err := b.mergeOf(ctx, branch, lands.Target, lands.BranchHead, lands.TargetHead)
	if err != nil {
		return nil, false, err
	}
	if p.kind == MergeCommit || p.tree != lands.Tree {
		return nil, false, nil // not what the import recorded: land again
	}
	return p, true, nil
}

// applyMerge moves the target to exactly the tested commit: a
// fast-forward, by compare-and-swap of the branch — or, where the target
// is checked out, by fast-forwarding that clean worktree. It returns the
// target's tip.
func (b *Flows) applyMerge(ctx context.Context, p *mergePlan, l *chain.Letter) (tip string, worktree bool, err error) {
	switch {
	case p.kind == MergeNoBranch:
		return "", false, nil
	case p.now != "":
		return p.now, false, nil
	case p.kind == MergeUpToDate:
		return p.old, false, nil
	}
	if p.kind != MergeFastForward {
		return "", false, fmt.Errorf("land %s: %s is no fast-forward of %s: the target moves only to the commit a gate tested", l.MissionID, p.branch, p.target)
	}
	next := p.tip
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
func (b *Flows) checkedOutIn(ctx context.Context, branch string) (string, error) {
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
func (b *Flows) cleanWorktree(ctx context.Context, dir, branch string) error {
	out, _, err := b.gitRunIn(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return fmt.Errorf("status of %s: %w", dir, err)
	}
	if out != "" {
		n := len(strings.Split(out, "\n"))
		return rules.Refusef(rules.WorktreeDirty, "into", "%s is checked out in %s, which has %s: commit or stash them there, then land again (nothing was written)",
			branch, dir, rules.Count(n, "uncommitted change"))
	}
	return nil
}

// isAncestor reports whether commit a is an ancestor of commit c. Only
// git's own answer counts: a git that did not run, or was stopped, is an
// error and never a yes (a yes makes the landing "up-to-date": landed
// without the merge).
func (b *Flows) isAncestor(ctx context.Context, a, c string) (bool, error) {
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
func (b *Flows) gitRun(ctx context.Context, env []string, args ...string) (string, int, error) {
	return b.gitRunIn(ctx, b.repo.CommandDir(), env, args...)
}

func (b *Flows) gitRunIn(ctx context.Context, dir string, env []string, args ...string) (string, int, error) {
	return gitstore.GitCmd{Dir: dir, Env: env}.Run(ctx, args...)
}

// echoAll echoes each path of a refusal safely (rules.Echo), at most ten.
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
		out = append(out, rules.Echo(p))
	}
	return out
}
