package brain

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// StoreOp names the one operation a store commit makes. The commit says
// which in its StoreOpTrailer, and the laws hold the change from the
// snapshot before to that operation's rules: a commit that says "scan"
// but renames a block, or says nothing, is refused, whoever wrote it.
type StoreOp string

// The store's operations.
const (
	StoreOpScan          StoreOp = "scan"
	StoreOpReconcile     StoreOp = "reconcile"
	StoreOpEdit          StoreOp = "candidate_edit"
	StoreOpRatify        StoreOp = "ratify"
	StoreOpReceiptImport StoreOp = "receipt_import"
)

// The trailers a store commit names its operation and, for an edit, its
// seat with.
const (
	StoreOpTrailer = "M1nd-Store-Op"
	SeatTrailer    = "M1nd-Seat"
)

var storeOps = []StoreOp{StoreOpScan, StoreOpReconcile, StoreOpEdit, StoreOpRatify, StoreOpReceiptImport}

// storeOpOf reads the operation and the seat a store commit names. A
// commit written before the trailer existed names its operation as the
// first word of its subject ("store v3: reconcile: …") and an edit's seat
// as the subject's last word, in parentheses.
func storeOpOf(message string) (StoreOp, string, error) {
	op, ok := chain.TrailerValue(message, StoreOpTrailer)
	seat, _ := chain.TrailerValue(message, SeatTrailer)
	if !ok {
		subject, _, _ := strings.Cut(message, "\n")
		if _, rest, found := strings.Cut(subject, ": "); found {
			op = strings.TrimSuffix(strings.Fields(rest + " ")[0], ":")
			if seat == "" && StoreOp(op) == StoreOpEdit {
				fields := strings.Fields(rest)
				seat = strings.Trim(fields[len(fields)-1], "()")
			}
		}
	}
	if !slices.Contains(storeOps, StoreOp(op)) {
		return "", "", rules.Refusef(rules.InvalidTransition, "operation", "a store commit is one operation (%s) named in its %s trailer; this one names %s", joinOps(), StoreOpTrailer, rules.Echo(op))
	}
	if StoreOp(op) == StoreOpEdit && seat != SeatOwner && seat != SeatRunner {
		return "", "", rules.Refusef(rules.InvalidTransition, "seat", "a candidate_edit commit names its seat (owner or runner) in its %s trailer", SeatTrailer)
	}
	return StoreOp(op), seat, nil
}

func joinOps() string {
	names := make([]string, len(storeOps))
	for i, op := range storeOps {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// storeMove is one store commit being judged: the snapshots on either side
// and what the commit says it is.
type storeMove struct {
	prev, next *Snapshot // prev is nil for the first commit
	op         StoreOp
	seat       string
	agent      string // the writer (the commit's chain.AgentTrailer)
}

// refuse is the transition's refusal: it names the version and the
// operation, so `m1nd verify` points at the commit and says what rule broke.
func (m storeMove) refuse(format string, args ...any) error {
	return rules.Refusef(rules.InvalidTransition, string(m.op), "store v%d is no legal %s: %s", m.next.StoreVersion, m.op, fmt.Sprintf(format, args...))
}

// checkOperation holds the change to its operation's rules: what each
// writer in this package may change, checked without the repository's
// files (a remote may hold refs/m1nd/ alone), so every verifier reaches
// the same verdict. What needs a human (new receipts, ratified blocks) is
// proven by the gesture rules in storeFollows as well.
func (m storeMove) checkOperation() error {
	if m.op != StoreOpScan && m.prev == nil {
		return m.refuse("the first store commit is a scan")
	}
	if strings.HasPrefix(m.agent, rules.RunnerPrefix) && m.op != StoreOpEdit {
		return m.refuse("a runner writes to the store only by candidate_edit, in the runner's seat")
	}
	switch m.op {
	case StoreOpScan:
		return m.scan()
	case StoreOpReconcile:
		return m.reconcile()
	case StoreOpEdit:
		return m.edit()
	case StoreOpRatify:
		return m.ratify()
	default:
		return m.receiptImport()
	}
}

// scan: the first commit creates a candidate skeleton of heuristic blocks;
// later a scan adds heuristic blocks beside a candidate skeleton's blocks,
// or records a candidate revision beside a ratified one, and changes
// nothing else.
func (m storeMove) scan() error {
	if m.prev == nil {
		s := m.next.Skeleton
		if s.State != StateCandidate || s.Version != 1 || s.Ratification != nil || m.next.Revision != nil || !ValidSkeletonID(s.SkeletonID) {
			return m.refuse("the first scan writes a candidate skeleton at version 1 with no ratification")
		}
		return m.onlyNewHeuristicBlocks(nil)
	}
	if m.prev.Skeleton.State == StateRatified {
		if !sameSkeleton(m.prev, m.next, false) {
			return m.refuse("a scan of a ratified skeleton changes only its candidate revision")
		}
		if err := m.blocksUnchanged(nil); err != nil {
			return err
		}
		if r := m.next.Revision; r != nil {
			for _, b := range r.Blocks {
				if len(b.Receipts) > 0 || b.State != StateCandidate {
					return m.refuse("a candidate revision proposes candidate blocks without receipts")
				}
			}
		}
		return nil
	}
	grown := m.next.Skeleton.Version - m.prev.Skeleton.Version
	if !sameSkeleton(m.prev, m.next, true) || (grown != 0 && grown != 1) || !sameRevision(m.prev, m.next) {
		return m.refuse("a scan of a candidate skeleton adds blocks and changes nothing else of the skeleton")
	}
	return m.onlyNewHeuristicBlocks(m.prev)
}

// onlyNewHeuristicBlocks: every block before is still there, unchanged;
// every new one is a scan's proposal: a candidate the owner still names,
// at boundary and contract version 1, without receipts.
func (m storeMove) onlyNewHeuristicBlocks(prev *Snapshot) error {
	var before []*Block
	if prev != nil {
		before = prev.Blocks
	}
	for _, b := range before {
		if !sameBlock(b, m.next.Block(b.BlockID), nil) {
			return m.refuse("it changes or removes %s; a scan only adds blocks", b.BlockID)
		}
	}
	for _, b := range m.next.Blocks {
		if prev != nil && prev.Block(b.BlockID) != nil {
			continue
		}
		if b.State != StateCandidate || len(b.Receipts) > 0 || b.BoundaryVersion != 1 || b.ContractVersion != 1 ||
			b.CandidateMeta != (CandidateMeta{NamedBy: NamedByHeuristic, NeedsOwnerNaming: true}) || len(b.Sockets) > 0 {
			return m.refuse("its new block %s is not a scan's proposal (a candidate named by the heuristic, at version 1, without sockets or receipts)", b.BlockID)
		}
	}
	return nil
}

// reconcile: the same blocks, each changed at most in its membership
// fingerprint and, when a recorded fingerprint changed, one step of its
// boundary version.
func (m storeMove) reconcile() error {
	if !sameSkeleton(m.prev, m.next, false) || !sameRevision(m.prev, m.next) {
		return m.refuse("a reconcile changes blocks' fingerprints and boundary versions only")
	}
	if len(m.prev.Blocks) != len(m.next.Blocks) {
		return m.refuse("a reconcile neither adds nor removes blocks")
	}
	for _, p := range m.prev.Blocks {
		b := m.next.Block(p.BlockID)
		if !sameBlock(p, b, func(x *Block) { x.Fingerprint, x.BoundaryVersion = "", 0 }) {
			return m.refuse("it changes %s beyond its fingerprint and boundary version", p.BlockID)
		}
		bumped := b.BoundaryVersion - p.BoundaryVersion
		switch {
		case b.Fingerprint == "" && p.Fingerprint != "":
			return m.refuse("it clears the fingerprint of %s", p.BlockID)
		case bumped == 1 && p.Fingerprint != "" && p.Fingerprint != b.Fingerprint:
		case bumped != 0:
			return m.refuse("it moves %s's boundary version by %d; a reconcile bumps it by 1, and only when the block's recorded files changed", p.BlockID, bumped)
		}
	}
	return nil
}

// edit: the candidate_edit laws that hold without the files: a candidate
// skeleton one version on, ratified blocks untouched, every block left
// with members and with sockets to blocks that exist, and, in the
// runner's seat, every name and purpose it wrote plain prose (o5). A
// runner never writes in the owner's seat.
func (m storeMove) edit() error {
	if m.prev.Skeleton.State != StateCandidate {
		return m.refuse("skeleton %s is ratified; candidate_edit changes a candidate skeleton only", m.prev.Skeleton.SkeletonID)
	}
	if !sameSkeleton(m.prev, m.next, true) || m.next.Skeleton.Version != m.prev.Skeleton.Version+1 || !sameRevision(m.prev, m.next) {
		return m.refuse("an edit moves the skeleton one version on and changes nothing else of it")
	}
	if strings.HasPrefix(m.agent, rules.RunnerPrefix) && m.seat != SeatRunner {
		return m.refuse("%s is a runner, and a runner edits in the runner's seat", m.agent)
	}
	for _, p := range m.prev.Blocks {
		if p.State == StateRatified && !sameBlock(p, m.next.Block(p.BlockID), nil) {
			return m.refuse("it changes or removes ratified block %s", p.BlockID)
		}
	}
	for _, b := range m.next.Blocks {
		p := m.prev.Block(b.BlockID)
		if p != nil && p.State == StateRatified {
			continue
		}
		if err := m.editedBlock(p, b); err != nil {
			return err
		}
	}
	return nil
}

// editedBlock holds one candidate block b that an edit leaves (p is the
// block before, nil for a new one) to the edit's laws: still a candidate,
// a new one with no history, members, sockets to blocks that exist, and a
// name.
func (m storeMove) editedBlock(p, b *Block) error {
	if b.State != StateCandidate {
		return m.refuse("it leaves %s %s; an edit's blocks are candidates", b.BlockID, rules.Echo(b.State))
	}
	if p == nil && (len(b.Receipts) > 0 || b.BoundaryVersion != 1) {
		return m.refuse("its new block %s starts at boundary version 1 without receipts", b.BlockID)
	}
	if !slices.ContainsFunc(b.Membership, func(x Member) bool { return x.Role != RoleExcluded }) {
		return m.refuse("it leaves %s without members", b.BlockID)
	}
	for _, s := range b.Sockets {
		if m.next.Block(s.To) == nil {
			return m.refuse("%s keeps a socket to %s, which does not exist", b.BlockID, rules.Echo(s.To))
		}
	}
	if strings.TrimSpace(b.Name) == "" {
		return m.refuse("it leaves %s without a name", b.BlockID)
	}
	return m.editedNaming(p, b)
}

// editedNaming holds a block whose name or purpose the edit wrote to the
// seat that wrote it: only the owner's seat names as the owner, and the
// runner's seat writes plain prose (o5). A block the edit did not rename
// passes.
func (m storeMove) editedNaming(p, b *Block) error {
	renamed := p == nil || p.Name != b.Name || p.Purpose != b.Purpose
	if !renamed {
		return nil
	}
	if b.CandidateMeta.NamedBy == SeatOwner && m.seat != SeatOwner {
		return m.refuse("the runner's seat names %s as the owner's", b.BlockID)
	}
	if m.seat != SeatRunner {
		return nil
	}
	// o5 holds the text the runner wrote: a name or purpose that
	// changed, the name of a block it made (a split child carries its
	// parent's purpose).
	if p == nil || p.Name != b.Name {
		if err := rules.SanitizeName(b.Name); err != nil {
			return m.refuse("the runner's name for %s breaks o5 (%v)", b.BlockID, err)
		}
	}
	if (p != nil && p.Purpose != b.Purpose) || (p == nil && !slices.ContainsFunc(m.prev.Blocks, func(x *Block) bool { return x.Purpose == b.Purpose })) {
		if err := rules.SanitizePurpose(b.Purpose); err != nil {
			return m.refuse("the runner's purpose for %s breaks o5 (%v)", b.BlockID, err)
		}
	}
	return nil
}

// ratify: candidate blocks become ratified, exactly those the
// ratification of this version names, and nothing else changes; the
// skeleton is ratified once no candidate is left.
func (m storeMove) ratify() error {
	r := m.next.Skeleton.Ratification
	if r == nil || r.StoreVersion != m.next.StoreVersion || len(r.BlockIDs) == 0 {
		return m.refuse("a ratification of this version names the blocks it ratifies")
	}
	all := allRatified(m.next)
	if (all && m.next.Skeleton.State != StateRatified) || (!all && m.next.Skeleton.State != m.prev.Skeleton.State) ||
		m.next.Skeleton.SkeletonID != m.prev.Skeleton.SkeletonID || m.next.Skeleton.Version != m.prev.Skeleton.Version || !sameRevision(m.prev, m.next) {
		return m.refuse("a ratify changes the skeleton's ratification, and its state once every block is ratified")
	}
	named := map[string]bool{}
	for _, id := range r.BlockIDs {
		if p := m.prev.Block(id); p == nil || p.State != StateCandidate {
			return m.refuse("its ratification names %s, which was no candidate block", rules.Echo(id))
		}
		named[id] = true
	}
	return m.blocksUnchanged(func(p, b *Block) bool {
		return named[p.BlockID] && b.State == StateRatified && sameBlock(p, b, func(x *Block) { x.State = "" })
	})
}

// receiptImport: one receipt appended to one block, nothing else changed.
func (m storeMove) receiptImport() error {
	if !sameSkeleton(m.prev, m.next, false) || !sameRevision(m.prev, m.next) {
		return m.refuse("a receipt import changes one block's receipts only")
	}
	added := 0
	err := m.blocksUnchanged(func(p, b *Block) bool {
		if len(b.Receipts) != len(p.Receipts)+1 || !sameBlock(p, b, func(x *Block) { x.Receipts = nil }) {
			return false
		}
		added++
		return true
	})
	if err != nil {
		return err
	}
	if added != 1 {
		return m.refuse("a receipt import adds exactly one receipt")
	}
	return nil
}

// blocksUnchanged: the same blocks, each byte-equal to before unless
// changed(prev, next) allows its change.
func (m storeMove) blocksUnchanged(changed func(prev, next *Block) bool) error {
	if len(m.prev.Blocks) != len(m.next.Blocks) {
		return m.refuse("it adds or removes blocks")
	}
	for _, p := range m.prev.Blocks {
		b := m.next.Block(p.BlockID)
		if b == nil {
			return m.refuse("it removes %s", p.BlockID)
		}
		if !sameBlock(p, b, nil) && (changed == nil || !changed(p, b)) {
			return m.refuse("it changes %s", p.BlockID)
		}
	}
	return nil
}

// sameBlock reports whether a and b encode the same once mask has cleared
// the fields a rule lets change (mask works on copies).
func sameBlock(a, b *Block, mask func(*Block)) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := *a, *b
	if mask != nil {
		mask(&ca)
		mask(&cb)
	}
	ea, err1 := encode(&ca)
	eb, err2 := encode(&cb)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}

// sameSkeleton compares two skeletons, ignoring the version when
// anyVersion is set.
func sameSkeleton(a, b *Snapshot, anyVersion bool) bool {
	sa, sb := a.Skeleton, b.Skeleton
	if anyVersion {
		sa.Version, sb.Version = 0, 0
	}
	ea, err1 := encode(sa)
	eb, err2 := encode(sb)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}

func sameRevision(a, b *Snapshot) bool {
	ea, err1 := encode(a.Revision)
	eb, err2 := encode(b.Revision)
	return err1 == nil && err2 == nil && bytes.Equal(ea, eb)
}
