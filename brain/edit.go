package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/m1nd/m1nd/rules"
)

// The candidate_edit ops.
const (
	OpRename         = "rename"
	OpMerge          = "merge"
	OpSplit          = "split"
	OpMoveMember     = "move_member"
	OpResolveSeam    = "resolve_seam"
	OpAssignUnmapped = "assign_unmapped"
)

// MaxOps bounds one candidate_edit batch.
const MaxOps = 1000

// opSpec is one op's fields: the table of them is the ops file's schema.
type opSpec struct {
	op                 string
	required, optional []string
	phase              int // the order ops apply in (opPhase)
}

// opSpecs lists, per op, its required and optional fields and its phase:
// merges (with their socket rewrite), member ops, splits, renames apply
// in that order, whatever their order in the batch; a rejection still
// names the op's index in the batch. A slice, laid out by the compiler:
// a map would be built at every start of every m1nd call.
var opSpecs = []opSpec{
	{OpRename, []string{"block_id"}, []string{"name", "purpose"}, 3},
	{OpMerge, []string{"into", "block_ids"}, nil, 0},
	{OpSplit, []string{"block_id", "by"}, nil, 2},
	{OpMoveMember, []string{"path", "from", "to"}, nil, 1},
	{OpResolveSeam, []string{"path", "resolution"}, nil, 1},
	{OpAssignUnmapped, []string{"path", "block_id"}, nil, 1},
}

// specOf is the spec of op kind, ok false for an unknown kind.
func specOf(kind string) (opSpec, bool) {
	i := slices.IndexFunc(opSpecs, func(s opSpec) bool { return s.op == kind })
	if i < 0 {
		return opSpec{}, false
	}
	return opSpecs[i], true
}

// opPhase is the phase an op applies in.
func opPhase(kind string) int {
	s, _ := specOf(kind)
	return s.phase
}

// Op is one candidate_edit operation, tagged by Op.
type Op struct {
	Op         string   `json:"op"`
	BlockID    string   `json:"block_id,omitempty"`
	Name       *string  `json:"name,omitempty"`
	Purpose    *string  `json:"purpose,omitempty"`
	Into       string   `json:"into,omitempty"`
	BlockIDs   []string `json:"block_ids,omitempty"`
	By         *SplitBy `json:"by,omitempty"`
	Path       string   `json:"path,omitempty"`
	From       string   `json:"from,omitempty"`
	To         string   `json:"to,omitempty"`
	Resolution string   `json:"resolution,omitempty"`

	Index int `json:"-"` // position in the submitted batch, from 0
}

// SplitBy names the groups a split makes: each group is a list of globs,
// and every file of the block must fall in exactly one group.
type SplitBy struct {
	Paths [][]string `json:"paths"`
}

// rejectAt refuses the batch at op i (candidate_edit_rejected naming
// ops[i]); rejectBatch refuses it as a whole: the file, or the result of
// all its ops. Nothing is applied either way.
func rejectAt(i int, format string, args ...any) error {
	return rules.Refusef(rules.CandidateEditRejected, fmt.Sprintf("ops[%d]", i), "candidate_edit rejected at op %d: %s; nothing was applied", i, fmt.Sprintf(format, args...))
}

func rejectBatch(format string, args ...any) error {
	return rules.Refusef(rules.CandidateEditRejected, "ops", "candidate_edit rejected: %s; nothing was applied", fmt.Sprintf(format, args...))
}

// DecodeOps parses an ops file: a JSON array of objects, each tagged by
// "op" and carrying exactly its op's fields. The first bad op refuses the
// batch, naming its index.
func DecodeOps(data []byte) ([]Op, error) {
	var raw []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, rejectBatch("the ops file must be a JSON array of op objects")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, rejectBatch("the ops file must hold one JSON array")
	}
	if len(raw) == 0 || len(raw) > MaxOps {
		return nil, rejectBatch("a batch holds 1 to %d ops", MaxOps)
	}
	ops := make([]Op, len(raw))
	for i, r := range raw {
		op, err := decodeOp(r)
		if err != nil {
			return nil, rejectAt(i, "%s", err)
		}
		op.Index = i
		ops[i] = op
	}
	return ops, nil
}

func decodeOp(r json.RawMessage) (Op, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
		return Op{}, errors.New("an op is a JSON object")
	}
	var kind string
	if err := json.Unmarshal(fields["op"], &kind); err != nil {
		return Op{}, errors.New(`an op names its kind in "op"`)
	}
	spec, ok := specOf(kind)
	if !ok {
		return Op{}, fmt.Errorf("unknown op %q (want rename, merge, split, move_member, resolve_seam or assign_unmapped)", rules.Echo(kind))
	}
	allowed := map[string]bool{"op": true}
	for _, f := range append(append([]string(nil), spec.required...), spec.optional...) {
		allowed[f] = true
	}
	for f := range fields {
		if !allowed[f] {
			return Op{}, fmt.Errorf("%s takes no field %q", kind, rules.Echo(f))
		}
	}
	for _, f := range spec.required {
		if _, ok := fields[f]; !ok {
			return Op{}, fmt.Errorf("%s needs %q", kind, f)
		}
	}
	var op Op
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return Op{}, fmt.Errorf("%s: %s", kind, jsonProblem(err))
	}
	if kind == OpRename && op.Name == nil && op.Purpose == nil {
		return Op{}, errors.New("rename needs a name, a purpose or both")
	}
	if kind == OpSplit && (op.By == nil || op.By.Paths == nil) {
		return Op{}, errors.New(`split needs "by":{"paths":[[glob…]…]}`)
	}
	return op, nil
}

// EditRequest is a candidate_edit batch.
type EditRequest struct {
	WriteRequest
	Seat string // owner: names stored verbatim; runner: every name and purpose passes the o5 sanitizer
	Ops  []byte
}

// EditResult reports an applied batch.
type EditResult struct {
	MutationResult
	Applied int      `json:"applied"`
	Blocks  []string `json:"blocks"` // the blocks the batch changed or made
	Removed []string `json:"removed,omitempty"`
}

// Edit applies a candidate_edit batch atomically: every op runs on a copy
// of the store in phase order, the first failure refuses the whole batch
// naming its index, and final checks (no block left without files, no
// socket to a missing block, no new contested path) run before anything is
// written. Refused skeleton_not_candidate on a ratified skeleton.
func (s *Store) Edit(ctx context.Context, req EditRequest) (*EditResult, error) {
	if req.Seat != SeatOwner && req.Seat != SeatRunner {
		return nil, fmt.Errorf("candidate_edit: seat %q: want owner or runner", req.Seat)
	}
	_, files, err := s.headFiles()
	if err != nil {
		return nil, fmt.Errorf("candidate_edit: %w", err)
	}
	res := &EditResult{Blocks: []string{}}
	_, mres, err := s.mutate(ctx, mutation{
		op: StoreOpEdit, seat: req.Seat, expected: req.ExpectedStoreVersion, needStore: true, agent: req.Agent, now: req.at(),
		apply: func(next *Snapshot) (string, error) {
			if next.Skeleton.State == StateRatified {
				return "", rules.Refusef(rules.SkeletonNotCandidate, "", "skeleton %s is ratified; candidate_edit changes a candidate skeleton only", next.Skeleton.SkeletonID)
			}
			ops, err := DecodeOps(req.Ops)
			if err != nil {
				return "", err
			}
			before, _ := json.Marshal(next.Blocks)
			e := &editor{snap: next, files: files, seat: req.Seat, touched: map[string]bool{}, created: map[string]bool{}, renamed: map[string]bool{}}
			if err := e.run(ops); err != nil {
				return "", err
			}
			if after, _ := json.Marshal(next.Blocks); bytes.Equal(before, after) {
				return "", errUnchanged // every op restated what the store already says
			}
			res.Applied = len(ops)
			res.Blocks, res.Removed = e.changed(), e.removed
			next.Skeleton.Version++
			return fmt.Sprintf("candidate_edit %s (%s)", rules.Count(len(ops), "op"), req.Seat), nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.MutationResult = *mres
	return res, nil
}

// editor applies one batch to a private snapshot.
type editor struct {
	snap    *Snapshot
	files   []string
	seat    string
	touched map[string]bool // blocks whose membership changed
	created map[string]bool // blocks the batch made
	renamed map[string]bool
	removed []string
}

func (e *editor) run(ops []Op) error {
	before := map[string]bool{}
	for _, f := range ownership(e.snap.Blocks, e.files).Contested {
		before[f] = true
	}
	ordered := append([]Op(nil), ops...)
	sort.SliceStable(ordered, func(i, j int) bool { return opPhase(ordered[i].Op) < opPhase(ordered[j].Op) })
	for _, op := range ordered {
		if err := e.apply(op); err != nil {
			return rejectAt(op.Index, "%s", err)
		}
	}
	return e.finalChecks(before)
}

func (e *editor) apply(op Op) error {
	switch op.Op {
	case OpRename:
		return e.rename(op)
	case OpMerge:
		return e.merge(op)
	case OpSplit:
		return e.split(op)
	case OpMoveMember:
		return e.moveMember(op)
	case OpResolveSeam:
		return e.resolveSeam(op)
	case OpAssignUnmapped:
		return e.assignUnmapped(op)
	}
	return fmt.Errorf("unknown op %q", op.Op)
}

// block finds a block the batch may change: it exists and is not ratified.
func (e *editor) block(id string) (*Block, error) {
	b := e.snap.Block(id)
	if b == nil {
		return nil, fmt.Errorf("no block %s", rules.Echo(id))
	}
	if b.State == StateRatified {
		return nil, fmt.Errorf("block %s is ratified", id)
	}
	return b, nil
}

func (e *editor) rename(op Op) error {
	b, err := e.block(op.BlockID)
	if err != nil {
		return err
	}
	if e.seat == SeatRunner {
		// o5: a runner's text is LLM output and must read as plain prose.
		if op.Name != nil {
			if err := rules.SanitizeName(*op.Name); err != nil {
				return err
			}
		}
		if op.Purpose != nil {
			if err := rules.SanitizePurpose(*op.Purpose); err != nil {
				return err
			}
		}
	}
	if op.Name != nil && strings.TrimSpace(*op.Name) == "" {
		return errors.New("name: empty")
	}
	if op.Name != nil {
		b.Name = *op.Name
	}
	if op.Purpose != nil {
		b.Purpose = *op.Purpose
	}
	b.CandidateMeta = CandidateMeta{NamedBy: e.seat, NeedsOwnerNaming: false}
	e.renamed[b.BlockID] = true
	return nil
}

func (e *editor) merge(op Op) error {
	into, err := e.block(op.Into)
	if err != nil {
		return err
	}
	if len(op.BlockIDs) == 0 {
		return errors.New("merge needs at least one block in block_ids")
	}
	group := map[string]*Block{}
	for _, id := range op.BlockIDs {
		if id == op.Into {
			return fmt.Errorf("cannot merge %s into itself", id)
		}
		if group[id] != nil {
			return fmt.Errorf("%s is listed twice", id)
		}
		b, err := e.block(id)
		if err != nil {
			return err
		}
		group[id] = b
	}
	// A path one block excluded because another covers it stays covered
	// by the merged block: keep an exclusion only for files no merged
	// block covered.
	covered := map[string]bool{}
	for _, b := range append([]*Block{into}, mapValues(group)...) {
		for _, f := range b.resolve(e.files) {
			covered[f] = true
		}
	}
	var members []Member
	for _, b := range append([]*Block{into}, mapValues(group)...) {
		for _, m := range b.Membership {
			if m.Role == RoleExcluded && e.coversAny(m.Path, covered) {
				continue
			}
			members = appendMember(members, m)
		}
	}
	into.Membership = members
	for _, b := range mapValues(group) {
		into.Sockets = append(into.Sockets, b.Sockets...)
	}
	e.remove(group)
	// The socket rewrite: whatever pointed at a merged block points at the
	// block it merged into.
	for _, b := range e.snap.Blocks {
		b.Sockets = rewriteSockets(b.BlockID, b.Sockets, func(to string) []string {
			if group[to] != nil {
				return []string{into.BlockID}
			}
			return []string{to}
		})
	}
	e.touched[into.BlockID] = true
	return nil
}

func (e *editor) coversAny(pattern string, covered map[string]bool) bool {
	for f := range covered {
		if matchMember(pattern, f) {
			return true
		}
	}
	return false
}

// split replaces a block with one new candidate per group of paths.
// The groups must part the block's files cleanly before any child is
// made, and whatever pointed at the block then points at every child.
func (e *editor) split(op Op) error {
	parent, err := e.block(op.BlockID)
	if err != nil {
		return err
	}
	groups := op.By.Paths
	if err := checkSplitGroups(groups); err != nil {
		return err
	}
	if err := e.checkSplitCover(parent, groups); err != nil {
		return err
	}
	var children []string
	for g, globs := range groups {
		child, err := e.splitChild(parent, g, globs)
		if err != nil {
			return err
		}
		e.snap.Blocks = append(e.snap.Blocks, child)
		e.created[child.BlockID] = true
		children = append(children, child.BlockID)
	}
	e.remove(map[string]*Block{parent.BlockID: parent})
	for _, b := range e.snap.Blocks {
		b.Sockets = rewriteSockets(b.BlockID, b.Sockets, func(to string) []string {
			if to == parent.BlockID {
				return children
			}
			return []string{to}
		})
	}
	return nil
}

// checkSplitGroups refuses groups that cannot make a split on their own:
// fewer than two, an empty one, or a path no member could hold.
func checkSplitGroups(groups [][]string) error {
	if len(groups) < 2 {
		return errors.New("split needs at least 2 groups of paths")
	}
	for g, globs := range groups {
		if len(globs) == 0 {
			return fmt.Errorf("group %d of the split is empty", g+1)
		}
		for _, p := range globs {
			if problem := memberPatternProblem(p); problem != "" {
				return fmt.Errorf("split path %q: %s", rules.Echo(p), problem)
			}
		}
	}
	return nil
}

// checkSplitCover refuses groups that do not part parent's files: each
// file is in exactly one group, and each group holds a file, so no file
// is lost or claimed twice and no child starts empty.
func (e *editor) checkSplitCover(parent *Block, groups [][]string) error {
	files := parent.resolve(e.files)
	hits := make([]int, len(groups))
	for _, f := range files {
		in := -1
		for g, globs := range groups {
			if !matchesAny(globs, f) {
				continue
			}
			if in >= 0 {
				return fmt.Errorf("the split groups are not disjoint: %s is in groups %d and %d", rules.Echo(f), in+1, g+1)
			}
			in = g
		}
		if in < 0 {
			return fmt.Errorf("the split groups do not cover every member: %s is in none", rules.Echo(f))
		}
		hits[in]++
	}
	for g, n := range hits {
		if n == 0 {
			return fmt.Errorf("group %d of the split covers no file of %s", g+1, parent.BlockID)
		}
	}
	return nil
}

// splitChild makes the candidate for group g of parent's split: a new
// block, named after its parent for the owner to rename, that takes the
// group's paths and inherits the parent's sockets, contract and kind.
func (e *editor) splitChild(parent *Block, g int, globs []string) (*Block, error) {
	id := fmt.Sprintf("%s_split%d", parent.BlockID, g+1)
	if !ValidBlockID(id) || e.snap.Block(id) != nil {
		return nil, fmt.Errorf("cannot name the new block %s: the id is taken or too long", rules.Echo(id))
	}
	child := &Block{
		BlockID: id, Name: fmt.Sprintf("%s part %d", parent.Name, g+1), Purpose: parent.Purpose,
		Kind: parent.Kind, State: StateCandidate, BoundaryVersion: 1, ContractVersion: parent.ContractVersion,
		Sockets: append([]Socket{}, parent.Sockets...), Receipts: []StoredReceipt{},
		ReceiptContract: ReceiptContract{Required: append([]string{}, parent.ReceiptContract.Required...)},
		CandidateMeta:   CandidateMeta{NamedBy: NamedByHeuristic, NeedsOwnerNaming: true},
	}
	if e.seat == SeatRunner {
		if err := rules.SanitizeName(child.Name); err != nil {
			return nil, fmt.Errorf("the new block %s would carry %s's name, which is not plain prose (%v): rename %s first", id, parent.BlockID, err, parent.BlockID)
		}
	}
	for _, p := range globs {
		child.Membership = appendMember(child.Membership, Member{Path: p, Role: RolePrimary})
	}
	// What the parent carved out stays carved out; what it shared is
	// shared by the child that takes it.
	for _, m := range parent.Membership {
		switch {
		case m.Role == RoleExcluded:
			child.Membership = appendMember(child.Membership, m)
		case m.Role == RoleShared && e.anyFileIn(m.Path, globs):
			child.Membership = appendMember(child.Membership, m)
		}
	}
	return child, nil
}

func (e *editor) anyFileIn(pattern string, globs []string) bool {
	for _, f := range e.files {
		if matchMember(pattern, f) && matchesAny(globs, f) {
			return true
		}
	}
	return false
}

func (e *editor) moveMember(op Op) error {
	from, err := e.block(op.From)
	if err != nil {
		return err
	}
	to, err := e.block(op.To)
	if err != nil {
		return err
	}
	if from == to {
		return errors.New("from and to are the same block")
	}
	if problem := memberPatternProblem(op.Path); problem != "" {
		return fmt.Errorf("path %q: %s", rules.Echo(op.Path), problem)
	}
	if i := from.entry(op.Path); i >= 0 && from.Membership[i].Role != RoleExcluded {
		m := from.Membership[i]
		from.Membership = append(from.Membership[:i:i], from.Membership[i+1:]...)
		to.Membership = appendMember(removeEntry(to.Membership, op.Path), m)
	} else if contains(e.files, op.Path) && from.covers(op.Path) {
		// A file covered through a directory or glob entry: carve it out of
		// from and give it to to.
		from.Membership = appendMember(removeEntry(from.Membership, op.Path), Member{Path: op.Path, Role: RoleExcluded})
		to.Membership = appendMember(removeEntry(to.Membership, op.Path), Member{Path: op.Path, Role: RolePrimary})
	} else {
		return fmt.Errorf("%s is not a member of %s", rules.Echo(op.Path), from.BlockID)
	}
	e.touched[from.BlockID], e.touched[to.BlockID] = true, true
	return nil
}

func (e *editor) resolveSeam(op Op) error {
	owners := ownership(e.snap.Blocks, e.files).Owners[op.Path]
	if len(owners) < 2 {
		return fmt.Errorf("%s is not a seam: it belongs to %s", rules.Echo(op.Path), rules.Count(len(owners), "block"))
	}
	blocks := make([]*Block, len(owners))
	for i, id := range owners {
		b, err := e.block(id)
		if err != nil {
			return err
		}
		blocks[i] = b
	}
	switch primary, isPrimary := strings.CutPrefix(op.Resolution, "primary:"); {
	case op.Resolution == "both":
		for _, b := range blocks {
			b.Membership = appendMember(removeEntry(b.Membership, op.Path), Member{Path: op.Path, Role: RoleShared})
		}
	case isPrimary:
		if !contains(owners, primary) {
			return fmt.Errorf("primary %s is not one of the blocks holding %s", rules.Echo(primary), rules.Echo(op.Path))
		}
		for _, b := range blocks {
			role := RoleExcluded
			if b.BlockID == primary {
				role = RolePrimary
			}
			b.Membership = appendMember(removeEntry(b.Membership, op.Path), Member{Path: op.Path, Role: role})
		}
	default:
		return fmt.Errorf(`resolution must be "both" or "primary:<block_id>"`)
	}
	for _, b := range blocks {
		e.touched[b.BlockID] = true
	}
	return nil
}

func (e *editor) assignUnmapped(op Op) error {
	b, err := e.block(op.BlockID)
	if err != nil {
		return err
	}
	if problem := memberPatternProblem(op.Path); problem != "" {
		return fmt.Errorf("path %q: %s", rules.Echo(op.Path), problem)
	}
	own := ownership(e.snap.Blocks, e.files)
	matched := 0
	for _, f := range e.files {
		if !matchMember(op.Path, f) {
			continue
		}
		if owners := own.Owners[f]; len(owners) > 0 {
			return fmt.Errorf("%s is not unmapped: %s holds it", rules.Echo(f), owners[0])
		}
		matched++
	}
	if matched == 0 {
		return fmt.Errorf("no file at HEAD matches %s", rules.Echo(op.Path))
	}
	b.Membership = appendMember(b.Membership, Member{Path: op.Path, Role: RolePrimary})
	e.touched[b.BlockID] = true
	return nil
}

// finalChecks run on the whole result: no changed block left without
// files, no socket to a missing block, no contested path that was not
// contested before.
func (e *editor) finalChecks(contestedBefore map[string]bool) error {
	final := func(format string, args ...any) error { return rejectBatch("final check: "+format, args...) }
	for _, b := range e.snap.Blocks {
		if (e.touched[b.BlockID] || e.created[b.BlockID]) && len(b.resolve(e.files)) == 0 {
			return final("block %s would cover no file at HEAD", b.BlockID)
		}
	}
	for _, b := range e.snap.Blocks {
		for _, s := range b.Sockets {
			if e.snap.Block(s.To) == nil {
				return final("block %s would keep a socket to %s, which does not exist", b.BlockID, rules.Echo(s.To))
			}
		}
	}
	for _, f := range ownership(e.snap.Blocks, e.files).Contested {
		if !contestedBefore[f] {
			return final("%s would belong to several blocks that do not share it (resolve_seam decides)", rules.Echo(f))
		}
	}
	// A changed membership is a new boundary, with this HEAD its baseline.
	for _, b := range e.snap.Blocks {
		if e.touched[b.BlockID] && !e.created[b.BlockID] {
			b.BoundaryVersion++
		}
		if e.touched[b.BlockID] || e.created[b.BlockID] {
			b.Fingerprint = fingerprint(b.resolve(e.files))
		}
	}
	return nil
}

// changed lists the surviving blocks the batch renamed, touched or made,
// sorted.
func (e *editor) changed() []string {
	out := []string{}
	for _, b := range e.snap.Blocks {
		if e.touched[b.BlockID] || e.created[b.BlockID] || e.renamed[b.BlockID] {
			out = append(out, b.BlockID)
		}
	}
	sort.Strings(out)
	return out
}

func (e *editor) remove(gone map[string]*Block) {
	kept := e.snap.Blocks[:0]
	for _, b := range e.snap.Blocks {
		if gone[b.BlockID] == nil {
			kept = append(kept, b)
		} else {
			e.removed = append(e.removed, b.BlockID)
			delete(e.touched, b.BlockID)
			delete(e.created, b.BlockID)
			delete(e.renamed, b.BlockID)
		}
	}
	e.snap.Blocks = kept
	e.snap.index()
	sort.Strings(e.removed)
}

// rewriteSockets maps every socket target through to, dropping sockets to
// the block itself and duplicates.
func rewriteSockets(self string, sockets []Socket, to func(string) []string) []Socket {
	out := []Socket{}
	seen := map[string]bool{}
	for _, s := range sockets {
		for _, target := range to(s.To) {
			if target == self || seen[target] {
				continue
			}
			seen[target] = true
			out = append(out, Socket{To: target, Note: s.Note})
		}
	}
	return out
}

// appendMember adds m unless an entry with the same path exists.
func appendMember(members []Member, m Member) []Member {
	for _, have := range members {
		if have.Path == m.Path {
			return members
		}
	}
	return append(members, m)
}

func removeEntry(members []Member, p string) []Member {
	out := members[:0:0]
	for _, m := range members {
		if m.Path != p {
			out = append(out, m)
		}
	}
	return out
}

func matchesAny(globs []string, file string) bool {
	for _, g := range globs {
		if matchMember(g, file) {
			return true
		}
	}
	return false
}

func mapValues(m map[string]*Block) []*Block {
	out := make([]*Block, 0, len(m))
	for _, b := range m {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BlockID < out[j].BlockID })
	return out
}

func contains(set []string, v string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}
