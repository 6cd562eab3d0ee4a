package chain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

const hash = "sha256:abababababababababababababababababababababababababababababababab"

var t0 = time.Date(2026, 7, 9, 12, 0, 0, 0, time.UTC)

func newMissions(t *testing.T, name string) (*chain.Missions, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, name)
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &chain.Missions{Repo: repo, Brain: name}, g
}

func first(brain, id string) *chain.Letter {
	return &chain.Letter{
		Schema: chain.LetterSchema, MissionID: id, MissionSeq: 1, BlockID: "sb_x_core",
		BrainRef: brain, Seat: "hand", Capability: "build-runner", Phase: chain.PhaseJudging,
		StartedAt: chain.Timestamp(t0), UpdatedAt: chain.Timestamp(t0),
	}
}

func post(t *testing.T, m *chain.Missions, l *chain.Letter, origin string) (*chain.PostResult, error) {
	t.Helper()
	return m.Post(context.Background(), chain.PostRequest{Body: l.Canonical(), Agent: "agent-1", Origin: origin})
}

func mustPost(t *testing.T, m *chain.Missions, l *chain.Letter) *chain.PostResult {
	t.Helper()
	res, err := post(t, m, l, "")
	if err != nil {
		t.Fatalf("post #%d %s: %v", l.MissionSeq, l.Phase, err)
	}
	return res
}

func next(l *chain.Letter, phase string) *chain.Letter {
	n := chain.Next(l, l.ID(), t0.Add(time.Duration(l.MissionSeq)*time.Minute))
	n.Phase = phase
	n.Verdict = nil
	return n
}

func withGate(l *chain.Letter) *chain.Letter {
	exit := int64(0)
	l.Gate = &chain.Gate{Command: "go test ./...", ExitStatus: &exit, ArtifactHash: hash}
	return l
}

// chainTo posts judging → executing → gate → merge_wait and returns the head letter.
func chainTo(t *testing.T, m *chain.Missions, id string) *chain.Letter {
	t.Helper()
	l := first(m.Brain, id)
	mustPost(t, m, l)
	l = next(l, "executing")
	mustPost(t, m, l)
	l = withGate(next(l, "gate"))
	mustPost(t, m, l)
	l = next(l, chain.PhaseMergeWait)
	mustPost(t, m, l)
	return l
}

func refValue(t *testing.T, g *gittest.Repo) string {
	t.Helper()
	return g.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/m1nd/")
}

func wantRefusal(t *testing.T, err error, code rules.Code, field string) {
	t.Helper()
	r, ok := rules.AsRefusal(err)
	if !ok || r.Code != code || (field != "" && r.Field != field) {
		t.Fatalf("got %v, want refusal %s (%s)", err, code, field)
	}
}

func TestFullChainAndHeads(t *testing.T) {
	m, g := newMissions(t, "Repo-B1")
	head := chainTo(t, m, "msn_0000000000aa")
	view, err := m.Heads(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Missions) != 1 || view.ServedBrain != "Repo-B1" {
		t.Fatalf("heads = %+v", view)
	}
	h := view.Missions[0]
	if h.HeadLetterID != head.ID() || h.SupersededCount != 3 || h.Letter.Phase != chain.PhaseMergeWait {
		t.Fatalf("head = %+v", h)
	}
	if string(h.Head) != string(head.Canonical()) {
		t.Fatalf("head bytes differ")
	}
	if chain.LandingBell(view.Missions) != 1 {
		t.Fatal("landing bell should ring for one merge_wait head")
	}
	subjects := g.Git("log", "--format=%s", "refs/m1nd/missions/msn_0000000000aa")
	want := "msn_0000000000aa #4 merge_wait sb_x_core\nmsn_0000000000aa #3 gate sb_x_core\nmsn_0000000000aa #2 executing sb_x_core\nmsn_0000000000aa #1 judging sb_x_core"
	if subjects != want {
		t.Fatalf("git log subjects:\n%s", subjects)
	}
	if body := g.Git("log", "-1", "--format=%b", "refs/m1nd/missions/msn_0000000000aa"); !strings.Contains(body, "M1nd-Letter: "+head.ID()) || !strings.Contains(body, "M1nd-Agent: agent-1") || strings.Contains(body, "M1nd-Origin") {
		t.Fatalf("trailers:\n%s", body)
	}
	log, err := m.Log(context.Background(), "msn_0000000000aa")
	if err != nil || len(log) != 4 || log[0].Decoded.MissionSeq != 1 || log[3].LetterID != head.ID() || log[0].Agent != "agent-1" {
		t.Fatalf("log = %+v, %v", log, err)
	}
	g.Git("fsck", "--strict")
}

func TestPostOrderAndNothingWritten(t *testing.T) {
	m, g := newMissions(t, "brain")
	head := chainTo(t, m, "msn_0000000000aa")
	judging := first("brain", "msn_0000000000bb")
	mustPost(t, m, judging)
	before := refValue(t, g)

	archivedOnMergeWait := next(head, chain.PhaseArchived)
	tests := []struct {
		name   string
		letter *chain.Letter
		origin string
		code   rules.Code
		field  string
	}{
		// 1 before 2: an agent's archive of another brain's letter is still a gesture refusal first.
		{"archive without origin wins over brain", func() *chain.Letter { l := next(head, chain.PhaseArchived); l.BrainRef = "other"; return l }(), "", rules.HumanGestureRequired, "archived_via"},
		{"archive with forged origin", archivedOnMergeWait, "runnerd", rules.HumanGestureRequired, "archived_via"},
		{"archive with empty origin", archivedOnMergeWait, "", rules.HumanGestureRequired, "archived_via"},
		// 2 before 4: the brain guard comes before validation.
		{"brain before validation", func() *chain.Letter { l := next(head, "executing"); l.BrainRef = "other"; l.Seat = "chair"; return l }(), "", rules.BrainMismatch, "brain_ref"},
		// 4 before 6: an invalid letter at a stale position is invalid, not stale.
		{"validation before CAS", func() *chain.Letter { l := first("brain", "msn_0000000000aa"); l.Phase = "landed"; return l }(), "", rules.LandedLaw, ""},
		{"stale seq", func() *chain.Letter { l := next(head, "executing"); l.MissionSeq = 9; return l }(), "", rules.StaleHead, "mission_seq"},
		{"stale prev", func() *chain.Letter { l := next(head, "executing"); p := "000000000000"; l.PrevLetterID = &p; return l }(), "", rules.StaleHead, "prev_letter_id"},
		{"seq 2 on empty mission", func() *chain.Letter { l := next(head, "executing"); l.MissionID = "msn_0000000000cc"; return l }(), "", rules.StaleHead, "mission_seq"},
		{"seq 1 with prev on empty mission", func() *chain.Letter {
			l := first("brain", "msn_0000000000cc")
			p := "000000000000"
			l.PrevLetterID = &p
			return l
		}(), "", rules.StaleHead, "prev_letter_id"},
		{"seq 1 on existing mission, different letter", func() *chain.Letter { l := first("brain", "msn_0000000000aa"); l.BlockID = "sb_other"; return l }(), "", rules.StaleHead, "mission_seq"},
		// 7: archive only supersedes merge_wait.
		{"archive a judging head", next(judging, chain.PhaseArchived), rules.OriginHumanTTY, rules.InvalidTransition, "phase"},
		{"archive a fresh mission", func() *chain.Letter { l := first("brain", "msn_0000000000dd"); l.Phase = chain.PhaseArchived; return l }(), rules.OriginHumanTTY, rules.InvalidTransition, "phase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := post(t, m, tt.letter, tt.origin)
			wantRefusal(t, err, tt.code, tt.field)
			if after := refValue(t, g); after != before {
				t.Fatalf("refs changed on refusal:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

func TestIdenticalReplayIsDeduped(t *testing.T) {
	m, g := newMissions(t, "brain")
	l1 := first("brain", "msn_0000000000aa")
	r1 := mustPost(t, m, l1)
	l2 := next(l1, "executing")
	r2 := mustPost(t, m, l2)
	for _, tt := range []struct {
		letter *chain.Letter
		want   *chain.PostResult
	}{{l1, r1}, {l2, r2}} {
		res := mustPost(t, m, tt.letter)
		if !res.Deduped || res.Commit != tt.want.Commit || res.LetterID != tt.want.LetterID {
			t.Fatalf("replay of #%d = %+v, want dedup of %+v", tt.letter.MissionSeq, res, tt.want)
		}
	}
	if n := g.Git("rev-list", "--count", "refs/m1nd/missions/msn_0000000000aa"); n != "2" {
		t.Fatalf("chain has %s letters after replays", n)
	}
}

func TestArchiveDropsTheBell(t *testing.T) {
	m, g := newMissions(t, "brain")
	head := chainTo(t, m, "msn_0000000000aa")
	if _, err := m.Archive(context.Background(), "msn_0000000000aa", "owner", "", t0); err == nil {
		t.Fatal("archive without origin accepted")
	}
	res, err := m.Archive(context.Background(), "msn_0000000000aa", "owner", rules.OriginHumanTTY, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.MissionSeq != head.MissionSeq+1 || res.Phase != chain.PhaseArchived {
		t.Fatalf("archive = %+v", res)
	}
	view, _ := m.Heads(context.Background(), "")
	if chain.LandingBell(view.Missions) != 0 {
		t.Fatal("bell still rings after archive")
	}
	if body := g.Git("log", "-1", "--format=%b", "refs/m1nd/missions/msn_0000000000aa"); !strings.Contains(body, "M1nd-Origin: human-tty") {
		t.Fatalf("archive commit lacks origin trailer:\n%s", body)
	}
	// Nothing follows an archived head but another valid letter, and archive twice is a transition error.
	_, err = m.Archive(context.Background(), "msn_0000000000aa", "owner", rules.OriginHumanTTY, t0.Add(2*time.Hour))
	wantRefusal(t, err, rules.InvalidTransition, "phase")
}

type refuseBlocks struct{ calls int }

func (r *refuseBlocks) CheckLetterBlock(blockID string, _ *chain.ReceiptCandidate) error {
	r.calls++
	if blockID != "sb_known" {
		return rules.Refuse(rules.UnknownBlock, "block_id")
	}
	return nil
}

// CheckLanding refuses every landing: these tests post none.
func (r *refuseBlocks) CheckLanding(chain.LandingClaim) error {
	return rules.Refuse(rules.LandedLaw, "receipt.store_version")
}

// CheckCommit lets every origin through: these tests are about blocks.
func (r *refuseBlocks) CheckCommit(*chain.Doc, string, []byte) error { return nil }

func TestBlockGuardHookAndSynthetic(t *testing.T) {
	m, _ := newMissions(t, "brain")
	guard := &refuseBlocks{}
	m.Blocks = guard
	l := first("brain", "msn_0000000000aa")
	_, err := post(t, m, l, "")
	wantRefusal(t, err, rules.UnknownBlock, "block_id")
	// The guard runs before validation.
	bad := first("brain", "msn_0000000000aa")
	bad.Seat = "chair"
	_, err = post(t, m, bad, "")
	wantRefusal(t, err, rules.UnknownBlock, "block_id")
	l.Synthetic = true
	mustPost(t, m, l)
	if guard.calls != 2 {
		t.Fatalf("guard called %d times, want 2 (never for synthetic)", guard.calls)
	}
	known := first("brain", "msn_0000000000bb")
	known.BlockID = "sb_known"
	mustPost(t, m, known)
}

func TestSameLetterSameParentSameCommit(t *testing.T) {
	m1, _ := newMissions(t, "brain")
	m2, _ := newMissions(t, "brain")
	l := first("brain", "msn_0000000000aa")
	a, b := mustPost(t, m1, l), mustPost(t, m2, l)
	if a.Commit != b.Commit {
		t.Fatalf("commits differ: %s vs %s", a.Commit, b.Commit)
	}
}

func TestHeadsFilterOrderAndStrayRefs(t *testing.T) {
	m, g := newMissions(t, "brain")
	chainTo(t, m, "msn_0000000000cc")
	mustPost(t, m, first("brain", "msn_0000000000aa"))
	mustPost(t, m, first("brain", "msn_0000000000bb"))
	// A stray ref under the prefix that is not a mission id is skipped.
	g.Git("update-ref", "refs/m1nd/missions/not-a-mission", g.Git("rev-parse", "HEAD"))
	view, err := m.Heads(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range view.Missions {
		ids = append(ids, h.MissionID)
	}
	if strings.Join(ids, ",") != "msn_0000000000aa,msn_0000000000bb,msn_0000000000cc" {
		t.Fatalf("order = %v", ids)
	}
	mw, _ := m.Heads(context.Background(), chain.PhaseMergeWait)
	if len(mw.Missions) != 1 || mw.Missions[0].MissionID != "msn_0000000000cc" {
		t.Fatalf("merge_wait filter = %+v", mw.Missions)
	}
	counts := chain.PhaseCounts(view.Missions)
	if counts["judging"] != 2 || counts["merge_wait"] != 1 {
		t.Fatalf("counts = %v", counts)
	}
}

func TestNewMission(t *testing.T) {
	m, _ := newMissions(t, "brain")
	res, err := m.New(context.Background(), chain.NewMission{BlockID: "sb_x", Agent: "owner", Now: t0, Packet: []byte("# Mission packet — x\n"), RunnerID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	head, ok, err := m.HeadOf(res.MissionID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	l := head.Letter
	if l.Phase != chain.PhaseJudging || l.MissionSeq != 1 || l.BrainRef != "brain" || *l.PacketRef != chain.PacketRef([]byte("# Mission packet — x\n")) || *l.RunnerID != "r1" || l.Seat != "hand" {
		t.Fatalf("first letter = %s", head.Head)
	}
	_, err = m.New(context.Background(), chain.NewMission{BlockID: "sb_x", Seat: "chair", Agent: "owner", Now: t0})
	wantRefusal(t, err, rules.InvalidLetter, "seat")
}

// The heads cache is keyed by commit: refs moved by plain git, a damaged
// cache file or a missing one never change what Heads answers.
func TestHeadsCacheFollowsPlainGit(t *testing.T) {
	m, g := newMissions(t, "brain")
	l1 := first("brain", "msn_0000000000aa")
	r1 := mustPost(t, m, l1)
	l2 := next(l1, "executing")
	mustPost(t, m, l2)
	headID := func() string {
		t.Helper()
		view, err := m.Heads(context.Background(), "")
		if err != nil || len(view.Missions) != 1 {
			t.Fatalf("heads: %v", err)
		}
		return view.Missions[0].HeadLetterID
	}
	cold := headID()
	if warm := headID(); cold != l2.ID() || warm != l2.ID() {
		t.Fatalf("head is %s cold and %s warm, want letter 2 (%s)", cold, warm, l2.ID())
	}
	cache := chain.HeadCachePath(m.Repo.RuntimeDir())
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	// Someone rewinds the ref with plain git.
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000aa", r1.Commit)
	if got := headID(); got != l1.ID() {
		t.Fatalf("after git update-ref, head = %s, want %s", got, l1.ID())
	}
	// A damaged cache is ignored.
	os.WriteFile(cache, []byte("garbage\nmore"), 0o600)
	if got := headID(); got != l1.ID() {
		t.Fatalf("with a damaged cache, head = %s", got)
	}
	// After gc the cache still answers, and so do the objects.
	g.Git("gc", "-q")
	os.Remove(cache)
	if got := headID(); got != l1.ID() {
		t.Fatalf("after gc, head = %s", got)
	}
}

// TestColdHeadsAgreeWithWarm: many cold letters, read in parallel, give
// the view the warm cache gives, loose and after gc, and a head whose
// commit holds no letter is an error, not a silent gap.
func TestColdHeadsAgreeWithWarm(t *testing.T) {
	m, g := newMissions(t, "brain")
	const n = 80
	for i := range n {
		l := first("brain", fmt.Sprintf("msn_%012x", i+1))
		mustPost(t, m, l)
		if i%3 == 0 {
			mustPost(t, m, next(l, "executing"))
		}
	}
	ctx := context.Background()
	view := func() string {
		t.Helper()
		v, err := m.Heads(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Missions) != n {
			t.Fatalf("%d heads, want %d", len(v.Missions), n)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	cache := chain.HeadCachePath(m.Repo.RuntimeDir())
	os.Remove(cache)
	cold := view()
	if warm := view(); warm != cold {
		t.Fatal("the cold view differs from the warm one")
	}
	g.Git("gc", "-q")
	os.Remove(cache)
	if packed := view(); packed != cold {
		t.Fatal("after gc the cold view differs")
	}
	// A head that is no letter at all, written by plain git.
	tree := g.Git("mktree") // an empty tree: no letter.json
	bad := g.Git("commit-tree", "-m", "not a letter", tree)
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000ff", bad)
	os.Remove(cache)
	if _, err := m.Heads(ctx, ""); err == nil {
		t.Fatal("a head without a letter read as nothing")
	}
}

// TestHeadsAppendJSONIsEncodingJSON: the hand-written heads reply is byte
// for byte what encoding/json (HTML left as is) writes for the same view,
// cold and warm, with a letter stored with spaces by plain git, an empty
// view, and a brain name that needs escaping.
func TestHeadsAppendJSONIsEncodingJSON(t *testing.T) {
	m, g := newMissions(t, "brain")
	for i := range 3 {
		mustPost(t, m, first("brain", fmt.Sprintf("msn_%012x", i+1)))
	}
	// A letter written with git's plumbing, indented: a reply sends it
	// compacted, as encoding/json would.
	l := first("brain", "msn_0000000000ee")
	var indented bytes.Buffer
	json.Indent(&indented, l.Canonical(), "", "  ")
	blob := g.GitStdin(indented.String(), "hash-object", "-w", "--stdin")
	tree := g.GitStdin("100644 blob "+blob+"\tletter.json\n", "mktree")
	g.Git("update-ref", "refs/m1nd/missions/msn_0000000000ee", g.Git("commit-tree", "-m", "indented", tree))
	encodingJSON := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
	ctx := context.Background()
	for _, state := range []string{"cold", "warm"} {
		for _, brain := range []string{"brain", `a "quoted" <brain> & \ name`} {
			m.Brain = brain
			for _, phase := range []string{"", chain.PhaseJudging, chain.PhaseMergeWait} {
				view, err := m.HeadsRaw(ctx, phase)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := "{"+string(view.AppendJSON(nil))+"}", encodingJSON(view); got != want {
					t.Fatalf("%s, brain %q, phase %q:\n got %s\nwant %s", state, brain, phase, got, want)
				}
			}
		}
	}
	if view, _ := m.HeadsRaw(ctx, ""); len(view.Missions) != 4 || strings.Contains(string(view.Missions[3].Head), "\n") {
		t.Fatalf("heads: %d, last %s", len(view.Missions), view.Missions[3].Head)
	}
}

func TestCheckTransitionReturnsToWork(t *testing.T) {
	letter := func(phase, decision string) *chain.Letter {
		l := &chain.Letter{MissionID: "msn_0123456789ab", Phase: phase}
		if decision != "" {
			l.Verdict = &chain.Verdict{Decision: decision}
		}
		return l
	}
	for _, tc := range []struct {
		head, headDecision, next string
		refused                  bool
	}{
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseExecuting, true},
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseGate, true},
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseJudging, true},
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseReview, false},
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseMergeWait, false},
		{chain.PhaseMergeWait, "APPROVE", chain.PhaseFailed, false},
		{chain.PhaseReview, chain.DecisionChange, chain.PhaseExecuting, false},
		{chain.PhaseReview, chain.DecisionChange, chain.PhaseJudging, false},
		{chain.PhaseReview, "APPROVE", chain.PhaseExecuting, true},
		{chain.PhaseReview, "", chain.PhaseExecuting, true},
		{chain.PhaseReview, "REJECT", chain.PhaseGate, true},
		{chain.PhaseReview, "APPROVE", chain.PhaseMergeWait, false},
		{chain.PhaseFailed, "REJECT", chain.PhaseExecuting, false},
		{chain.PhaseJudging, "", chain.PhaseExecuting, false},
		{chain.PhaseLanded, "", chain.PhaseReview, true},
		{chain.PhaseLanded, "", chain.PhaseExecuting, true},
	} {
		err := chain.CheckTransition(letter(tc.next, ""), letter(tc.head, tc.headDecision))
		r, isRefusal := rules.AsRefusal(err)
		if tc.refused != (err != nil) || (err != nil && (!isRefusal || r.Code != rules.InvalidTransition)) {
			t.Errorf("%s (%s) → %s: got %v, refused want %v", tc.head, tc.headDecision, tc.next, err, tc.refused)
		}
	}
}
