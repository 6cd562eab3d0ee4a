package ops

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
	"github.com/m1nd/m1nd/rules"
)

// A mission in merge_wait is ready to land when its gate tested what the
// landing would put on its target: the branch is still at the tested
// commit, and that commit holds the target's head (the landing is then a
// fast-forward to it). Otherwise runnerd's queue re-gates it, and the
// views say where it stands (DESIGN §10).

// The queue states a waiting mission is shown in.
const (
	QueueReady        = "ready"         // lands as a fast-forward of its target to the tested commit
	QueueTargetMoved  = "target_moved"  // the target moved since the gate: re-gating
	QueueBranchMoved  = "branch_moved"  // a commit came after the gate: re-gating
	QueueRegating     = "regating"      // runnerd is gating the merge now
	QueueConflict     = "conflict"      // the branch does not merge cleanly into the target
	QueueGateFailed   = "gate_failed"   // the gate failed on the merge with the target
	QueueNoRunner     = "no_runner"     // nothing here can re-gate it
	QueueNoTestedWork = "untested_work" // the gate named no commit it tested
	QueueClaimed      = "claimed"       // an agent's claim: no approved runner proved it; landing it asks runnerd to
	QueueProving      = "proving"       // runnerd is asked to run an approved gate on exactly the claimed tree
)

// QueueView is where one waiting mission stands in the landing queue.
type QueueView struct {
	State      string   `json:"state"`
	Why        string   `json:"why"` // one line, for a card and `mission show`
	Target     string   `json:"target,omitempty"`
	TargetHead string   `json:"target_head,omitempty"`
	Tested     string   `json:"tested,omitempty"`      // the commit the gate tested
	BranchHead string   `json:"branch_head,omitempty"` // the work branch now
	Paths      []string `json:"paths,omitempty"`       // conflict: the paths
	Output     string   `json:"output,omitempty"`      // gate_failed: the tail of the re-gate's log
	// Proof is what the gate stands on: proven by a runner the human
	// approved, or an agent's claim (every view says it in these words).
	Proof *GateWord `json:"proof,omitempty"`
}

// Ready reports whether the mission may land now.
func (q *QueueView) Ready() bool { return q == nil || q.State == QueueReady }

// ancestry remembers which commit holds which: a fact that never changes,
// asked of git once per pair by a long-lived owner.
type ancestry struct {
	mu    sync.Mutex
	known map[[2]string]bool
}

// holds reports whether commit c holds commit a (a is c or an ancestor).
func (b *Flows) holds(ctx context.Context, a, c string) (bool, error) {
	key := [2]string{a, c}
	b.ancestry.mu.Lock()
	v, ok := b.ancestry.known[key]
	b.ancestry.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := b.isAncestor(ctx, a, c)
	if err != nil {
		return false, err
	}
	b.ancestry.mu.Lock()
	if b.ancestry.known == nil {
		b.ancestry.known = map[[2]string]bool{}
	}
	b.ancestry.known[key] = v
	b.ancestry.mu.Unlock()
	return v, nil
}

// QueueStamp summarises what the queue view leans on besides the mission
// refs: the branches (the targets and the work branches m1nd/<id>) and
// runnerd's side records, where the queue writes what it found. A keeper
// of a view built from Queue keys it by this stamp too (see
// gitstore.FolderStamp for when to trust it). A target in a folder of its
// own (release/1.0) is outside it: its move shows with the next write to
// one of these.
func (b *Flows) QueueStamp() (gitstore.FolderStamp, error) { return QueueStamp(b.repo) }

// QueueStamp is Flows.QueueStamp for repo: also what runnerd's queue
// watches to look again as soon as a branch moves.
func QueueStamp(repo *gitstore.Repo) (gitstore.FolderStamp, error) {
	common := repo.CommonDir()
	st, err := gitstore.StampFolders(
		filepath.Join(common, "refs", "heads"),
		filepath.Join(common, "refs", "heads", strings.TrimSuffix(WorkBranchPrefix, "/")),
		filepath.Join(common, "packed-refs"),
		runs.SideDir(repo.RuntimeDir()),
	)
	if err != nil {
		return gitstore.FolderStamp{}, fmt.Errorf("stamp the queue: %w", err)
	}
	return st, nil
}

// Queue is where each waiting mission of heads (those in merge_wait)
// stands, by mission id; a mission with no work branch here lands its
// receipt alone and is ready.
func (b *Flows) Queue(ctx context.Context, heads []*chain.Head) (map[string]*QueueView, error) {
	out := map[string]*QueueView{}
	for _, h := range heads {
		if h.Phase != chain.PhaseMergeWait {
			continue
		}
		l := h.Letter
		if l == nil {
			var err error
			if l, err = chain.DecodeStoredHead(h.Head); err != nil {
				return nil, err
			}
		}
		q, err := b.queueOf(ctx, h, l)
		if err != nil {
			return nil, fmt.Errorf("mission %s: %w", h.MissionID, err)
		}
		out[h.MissionID] = q
	}
	return out, nil
}

// queueOf is where one merge_wait letter's mission stands: a gate no
// approved runner proved is claimed (or being proven), never ready; a
// proven one is ready while its gate tested what would land.
func (b *Flows) queueOf(ctx context.Context, h *chain.Head, l *chain.Letter) (*QueueView, error) {
	missionID := h.MissionID
	word, err := b.headWord(h, l)
	if err != nil {
		return nil, err
	}
	q, err := b.queueOfGate(ctx, missionID, l)
	if q != nil {
		q.Proof = word
	}
	if err != nil || word.Proven() || l.ReceiptCandidate == nil || q.State == QueueNoTestedWork {
		return q, err
	}
	if _, tree := l.ReceiptCandidate.Evidence.Tested(); tree == "" {
		return q, nil
	}
	switch p := word.Prove; {
	case p != nil && p.Failed:
		q.State, q.Why = QueueGateFailed, fmt.Sprintf("%s; runner %s's approved gate did not prove it on tree %.12s: %s", word.Says, p.Runner, p.Tree, p.Why)
	case p != nil && p.Running:
		q.State, q.Why = QueueProving, fmt.Sprintf("%s; runnerd is running runner %s's approved gate on exactly tree %.12s", word.Says, p.Runner, p.Tree)
	case p != nil:
		q.State, q.Why = QueueProving, fmt.Sprintf("%s; a landing asked runnerd to run runner %s's approved gate on exactly tree %.12s (at %s)", word.Says, p.Runner, p.Tree, p.At)
	default:
		q.State, q.Why = QueueClaimed, word.Says+": landing it first has runnerd run an approved runner's gate on exactly its tree"
	}
	return q, nil
}

// queueOfGate is where a mission stands as its gate's commits go.
func (b *Flows) queueOfGate(ctx context.Context, missionID string, l *chain.Letter) (*QueueView, error) {
	q := &QueueView{State: QueueReady}
	branch := WorkBranch(missionID)
	tip, has, err := b.repo.ReadRef("refs/heads/" + branch)
	if err != nil || !has {
		q.Why = "no work branch here: the landing imports the receipt alone"
		return q, err
	}
	side, _, err := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	if err != nil {
		return nil, err
	}
	if side == nil || side.Target == "" {
		q.Why = "no target is recorded here: land it with --into BRANCH"
		return q, nil
	}
	q.Target, q.BranchHead = side.Target, tip.String()
	target, ok, err := b.repo.ReadRef("refs/heads/" + side.Target)
	if err != nil || !ok {
		q.State, q.Why = QueueNoRunner, fmt.Sprintf("this repository has no branch %s to land in", rules.Echo(side.Target))
		return q, err
	}
	q.TargetHead = target.String()
	if l.ReceiptCandidate != nil {
		q.Tested, _ = l.ReceiptCandidate.Evidence.Tested()
	}
	if q.Tested == "" {
		q.State, q.Why = QueueNoTestedWork, "its gate named no commit it tested: nothing here can land"
		return q, nil
	}
	if q.Tested == q.BranchHead {
		if held, err := b.holds(ctx, q.TargetHead, q.Tested); err != nil {
			return nil, err
		} else if held {
			q.Why = fmt.Sprintf("lands as %s moving to the tested %.12s", side.Target, q.Tested)
			return q, nil
		}
	}
	// Not ready: what the queue found for these heads, if anything.
	if b.queueFinding(q, side, missionID) {
		return q, nil
	}
	if q.Tested != q.BranchHead {
		q.State, q.Why = QueueBranchMoved, fmt.Sprintf("%s moved since its gate (tested %.12s, now %.12s): re-gating", branch, q.Tested, q.BranchHead)
		return q, nil
	}
	q.State, q.Why = QueueTargetMoved, fmt.Sprintf("%s moved since the gate: re-gating the merge", side.Target)
	return q, nil
}

// queueFinding fills q from what runnerd's queue last recorded of the
// mission, when that finding holds for q's heads, and reports whether it
// did.
func (b *Flows) queueFinding(q *QueueView, side *runs.Side, missionID string) bool {
	f := side.Queue
	if f == nil || f.TargetHead != q.TargetHead || f.Branch != q.BranchHead && f.State != runs.QueueRegating {
		return false
	}
	switch f.State {
	case runs.QueueConflict:
		q.State, q.Paths = QueueConflict, f.Paths
		q.Why = fmt.Sprintf("conflicts with %s: %s", side.Target, strings.Join(echoAll(f.Paths), ", "))
	case runs.QueueGateFailed:
		q.State, q.Output = QueueGateFailed, regateTail(b.repo.RuntimeDir(), missionID)
		q.Why = fmt.Sprintf("the gate failed on the merge with %s at %.12s", side.Target, f.TargetHead)
		if f.Why != "" {
			q.Why += " (" + f.Why + ")"
		}
	case runs.QueueRegating:
		q.State, q.Why = QueueRegating, fmt.Sprintf("re-gating the merge with %s at %.12s", side.Target, f.TargetHead)
	case runs.QueueNoRunner:
		q.State, q.Why = QueueNoRunner, f.Why
	default:
		return false
	}
	return true
}

// regateTail is the last lines of a mission's failed re-gate.
func regateTail(runtimeDir, missionID string) string {
	data, err := gitstore.ReadRuntime(runs.SideLog(runtimeDir, missionID, runs.LogRegate), -1)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 12 {
		lines = lines[len(lines)-12:]
	}
	return rules.CutBytes(strings.Join(lines, "\n"), 4<<10)
}

// ReadyBell counts the heads a human may land now: in merge_wait, sound,
// and ready in the queue.
func ReadyBell(heads []*chain.Head, queue map[string]*QueueView) int {
	n := 0
	for _, h := range heads {
		if h.Phase == chain.PhaseMergeWait && h.Fault == nil && queue[h.MissionID].Ready() {
			n++
		}
	}
	return n
}
