package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// Memory is a memory as it stands now: its state derived from the events
// after it (resolutions, a newer memory superseding it), never stored.
type Memory struct {
	ID           string   `json:"id"`
	Agent        string   `json:"agent"`
	Sort         string   `json:"sort"`
	Text         string   `json:"text"`
	About        []string `json:"about,omitempty"`
	Source       []string `json:"source,omitempty"`
	Private      bool     `json:"private,omitempty"`
	TS           string   `json:"ts"`
	State        string   `json:"state"`
	Supersedes   string   `json:"supersedes,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	Rationale    string   `json:"rationale,omitempty"`
	Followup     string   `json:"followup,omitempty"`
}

// Followup is a brief someone owes an answer to, closed by its result.
type Followup struct {
	ID         string `json:"id"`
	Opener     string `json:"opener"`
	Owner      string `json:"owner"`
	Brief      string `json:"brief"`
	TS         string `json:"ts"`
	Mission    string `json:"mission,omitempty"`
	State      string `json:"state"`
	Result     string `json:"result,omitempty"`
	ResolvedBy string `json:"resolved_by,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`
}

// View is every memory and follow-up with its state.
type View struct {
	Memories  []*Memory
	Followups []*Followup
	byID      map[string]*Memory
	fuByID    map[string]*Followup
}

// Derive replays events (oldest first) into the current view.
func Derive(events []Stored) *View {
	v := &View{byID: map[string]*Memory{}, fuByID: map[string]*Followup{}}
	seen := map[string]bool{}
	for _, s := range events {
		if seen[s.ID] {
			continue // an identical replay says nothing new
		}
		seen[s.ID] = true
		v.apply(s.ID, s.Value)
	}
	return v
}

// apply is one event of id on the view.
func (v *View) apply(id string, e *Event) {
	switch e.Kind {
	case KindMemory:
		m := &Memory{ID: id, Agent: e.Agent, Sort: e.Sort, Text: e.Text, About: e.About, Source: e.Source,
			Private: e.Private, TS: e.TS, State: StateInForce, Supersedes: e.Supersedes}
		if old := v.byID[e.Supersedes]; old != nil && old.Agent == e.Agent && old.State == StateInForce {
			old.State, old.SupersededBy = StateSuperseded, id
		}
		v.Memories = append(v.Memories, m)
		v.byID[id] = m
	case KindFollowup:
		f := &Followup{ID: id, Opener: e.Agent, Owner: e.Owner, Brief: e.Text, TS: e.TS, Mission: e.Mission, State: StateOpen}
		v.Followups = append(v.Followups, f)
		v.fuByID[id] = f
	case KindLink:
		if f := v.fuByID[e.Target]; f != nil && (e.Agent == f.Opener || e.Agent == f.Owner) {
			f.Mission = e.Mission
		}
	case KindResolution:
		v.resolve(e)
	}
}

// resolve is a resolution event: of a memory by its agent, or of an open
// follow-up by its opener or owner.
func (v *View) resolve(e *Event) {
	if m := v.byID[e.Target]; m != nil && m.Agent == e.Agent && m.State == StateInForce {
		m.State, m.Rationale, m.Followup = e.As, e.Rationale, e.Followup
	}
	if f := v.fuByID[e.Target]; f != nil && f.State == StateOpen && (e.Agent == f.Opener || e.Agent == f.Owner) {
		f.State, f.Result, f.ResolvedBy, f.ResolvedAt = e.As, e.Rationale, e.Agent, e.TS
	}
}

// View reads the brain's memory refs and derives their state.
func (b *Book) View(ctx context.Context) (*View, error) {
	events, err := b.All(ctx)
	if err != nil {
		return nil, err
	}
	return Derive(events), nil
}

// AddRequest is a new memory.
type AddRequest struct {
	Agent, Sort, Text string
	About, Source     []string
	Private           bool
	Supersedes        string
	Now               time.Time
}

// same reports whether m says what req would: same agent, sort, text,
// subjects, sources and privacy.
func (req *AddRequest) same(m *Memory) bool {
	return m.Agent == req.Agent && m.Sort == req.Sort && m.Text == req.Text && m.Private == req.Private &&
		slices.Equal(m.About, req.About) && slices.Equal(m.Source, req.Source)
}

// Add records a memory. A decided or learned memory may supersede an older
// in-force memory of the same agent: the old one stays in history, marked
// superseded, never overwritten. A memory the agent already holds in force,
// word for word, is not written again: Add returns it as existing (nil
// when the new memory was written).
func (b *Book) Add(ctx context.Context, req AddRequest) (id string, existing *Memory, err error) {
	v, err := b.View(ctx)
	if err != nil {
		return "", nil, err
	}
	if req.Supersedes != "" {
		old := v.byID[req.Supersedes]
		if old == nil || old.Agent != req.Agent {
			return "", nil, invalid("supersedes", "%s is not one of your memories", rules.Echo(req.Supersedes))
		}
		if old.State == StateSuperseded {
			if by := v.byID[old.SupersededBy]; by != nil && by.State == StateInForce && req.same(by) {
				return by.ID, by, nil // this very memory superseded it already
			}
		}
		if old.State != StateInForce {
			return "", nil, invalid("supersedes", "memory %s is %s; nothing was written", old.ID, settled(v, old))
		}
	} else {
		for _, m := range v.Memories {
			if m.State == StateInForce && req.same(m) {
				return m.ID, m, nil
			}
		}
	}
	e := &Event{TS: chain.Timestamp(req.Now), Agent: req.Agent, Kind: KindMemory, Sort: req.Sort, Text: req.Text,
		About: req.About, Source: req.Source, Private: req.Private, Supersedes: req.Supersedes}
	id, deduped, err := b.appendEvent(ctx, e)
	if err != nil || !deduped {
		return id, nil, err
	}
	// The same event, to the second, is already on the ref (settled since,
	// or it would have been found in force above).
	if v, err = b.View(ctx); err != nil {
		return "", nil, err
	}
	if m := v.byID[id]; m != nil {
		return id, m, nil
	}
	return id, nil, nil
}

// settled says how a memory that is no longer in force was settled:
// "superseded already, by ID (\"text\"): …" or "withdrawn already".
func settled(v *View, m *Memory) string {
	if m.State != StateSuperseded {
		return m.State + " already"
	}
	by := v.byID[m.SupersededBy]
	if by == nil {
		return "superseded already"
	}
	return fmt.Sprintf("superseded already, by %s (%s, %s: %q): act on %s instead", by.ID, by.Sort, by.TS, cutRunes(by.Text, 60), by.ID)
}

// Resolve settles one of the agent's in-force memories, named by its id or
// a unique start of it: recorded, withdrawn, or deferred — which opens a
// follow-up owned by the agent whose brief is the rationale.
func (b *Book) Resolve(ctx context.Context, agent, id, as, rationale string, now time.Time) (string, error) {
	v, err := b.View(ctx)
	if err != nil {
		return "", err
	}
	m, err := abbreviated(v.byID, "memory", id)
	if err != nil {
		return "", err
	}
	if m == nil || m.Agent != agent {
		return "", invalid("id", "%s is not one of your memories", rules.Echo(id))
	}
	id = m.ID
	if m.State != StateInForce {
		return "", invalid("id", "memory %s is %s; nothing was written", id, settled(v, m))
	}
	e := &Event{TS: chain.Timestamp(now), Agent: agent, Kind: KindResolution, Target: id, As: as, Rationale: rationale}
	if as == StateDeferred {
		fid, err := b.Append(ctx, &Event{TS: chain.Timestamp(now), Agent: agent, Kind: KindFollowup, Owner: agent, Text: cutRunes(rationale, MaxBrief)})
		if err != nil {
			return "", err
		}
		e.Followup = fid
	}
	return b.Append(ctx, e)
}

// abbreviated is the entry of byID that id names, whole or by a unique
// start (rules.Abbreviated); nil when it names none, invalid_letter when
// it names several.
func abbreviated[T any](byID map[string]*T, what, id string) (*T, error) {
	ids := make([]string, 0, len(byID))
	for k := range byID {
		ids = append(ids, k)
	}
	switch matches := rules.Abbreviated(id, ids); len(matches) {
	case 0:
		return nil, nil
	case 1:
		return byID[matches[0]], nil
	default:
		return nil, invalid("id", "%s", rules.AmbiguousLesson(what, id, matches))
	}
}

// RecallRequest asks for memories.
type RecallRequest struct {
	Agent    string // who asks: their own memories and others' shared ones
	About    string
	Sort     string
	Query    string
	Limit    int
	MaxBytes int
}

// Recall is the in-force memories an agent may see, ranked by how many
// query words they hold, then newest first, bounded by count and bytes.
// cut says how many matching memories were left out.
func (b *Book) Recall(ctx context.Context, req RecallRequest) (out []*Memory, cut int, err error) {
	v, err := b.View(ctx)
	if err != nil {
		return nil, 0, err
	}
	hits := recallHits(v.Memories, req)
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].m.TS > hits[j].m.TS
	})
	out, cut = recallBudget(hits, req.Limit, req.MaxBytes)
	return out, cut, nil
}

// rankedMemory is a memory Recall matched, with how many query words it
// holds.
type rankedMemory struct {
	m     *Memory
	score int
}

// recallHits is the memories req may see and asks for, in the order of
// memories, each scored by the query words it holds. With a query, a
// memory that holds none of its words is no hit.
func recallHits(memories []*Memory, req RecallRequest) []rankedMemory {
	words := strings.Fields(strings.ToLower(req.Query))
	var hits []rankedMemory
	for _, m := range memories {
		if !recallable(m, req) {
			continue
		}
		score := 0
		text := strings.ToLower(m.Text + " " + strings.Join(m.About, " "))
		for _, w := range words {
			if strings.Contains(text, w) {
				score++
			}
		}
		if len(words) > 0 && score == 0 {
			continue
		}
		hits = append(hits, rankedMemory{m, score})
	}
	return hits
}

// recallable says whether req may see m and asked for its sort and
// subject: private memories stay with their writer.
func recallable(m *Memory, req RecallRequest) bool {
	if m.State != StateInForce || (m.Private && m.Agent != req.Agent) {
		return false
	}
	if req.Sort != "" && m.Sort != req.Sort {
		return false
	}
	return req.About == "" || oneOf(req.About, m.About)
}

// recallBudget keeps ranked hits in order while they fit limit (a count)
// and maxBytes (each hit costs its text and 80 bytes more); zero means no
// bound. The first hit is kept whatever its size, so a recall is never
// empty for bytes alone. cut counts the hits left out.
func recallBudget(hits []rankedMemory, limit, maxBytes int) (out []*Memory, cut int) {
	used := 0
	for _, h := range hits {
		size := len(h.m.Text) + 80
		if (limit > 0 && len(out) >= limit) || (maxBytes > 0 && used+size > maxBytes && len(out) > 0) {
			cut++
			continue
		}
		out = append(out, h.m)
		used += size
	}
	return out, cut
}

// OpenFollowup records a brief someone owes an answer to.
func (b *Book) OpenFollowup(ctx context.Context, opener, owner, brief, mission string, now time.Time) (string, error) {
	return b.Append(ctx, &Event{TS: chain.Timestamp(now), Agent: opener, Kind: KindFollowup, Owner: owner, Text: brief, Mission: mission})
}

// Link records that a mission carries a follow-up: the mission's end
// closes it.
func (b *Book) Link(ctx context.Context, agent, followup, mission string, now time.Time) (string, error) {
	if err := b.CheckLink(ctx, agent, followup); err != nil {
		return "", err
	}
	return b.Append(ctx, &Event{TS: chain.Timestamp(now), Agent: agent, Kind: KindLink, Target: followup, Mission: mission})
}

// CheckLink refuses what Link would: a follow-up that does not exist, or
// one the agent neither opened nor owes. Callers that open the mission
// first ask it before, so a refused link leaves no mission behind.
func (b *Book) CheckLink(ctx context.Context, agent, followup string) error {
	v, err := b.View(ctx)
	if err != nil {
		return err
	}
	if f := v.fuByID[followup]; f == nil || (f.Opener != agent && f.Owner != agent) {
		return rules.Refusef(rules.NotPublisher, "followup", "only the opener or the owner of follow-up %s links it to a mission", rules.Echo(followup))
	}
	return nil
}

// ResolveFollowup closes a follow-up, named by its id or a unique start of
// it: recorded with its result, or withdrawn with why. Only its opener or
// owner may.
func (b *Book) ResolveFollowup(ctx context.Context, agent, id, as, text string, now time.Time) (string, error) {
	v, err := b.View(ctx)
	if err != nil {
		return "", err
	}
	f, err := abbreviated(v.fuByID, "follow-up", id)
	if err != nil {
		return "", err
	}
	if f == nil {
		return "", invalid("id", "no follow-up %s", rules.Echo(id))
	}
	id = f.ID
	if f.Opener != agent && f.Owner != agent {
		return "", rules.Refusef(rules.NotPublisher, "id", "only the opener (%s) or the owner (%s) resolves follow-up %s", f.Opener, f.Owner, id)
	}
	if f.State != StateOpen {
		return "", invalid("id", "follow-up %s is %s already", id, f.State)
	}
	if as != StateRecorded && as != StateWithdrawn {
		return "", invalid("as", "a follow-up is resolved recorded or withdrawn")
	}
	return b.Append(ctx, &Event{TS: chain.Timestamp(now), Agent: agent, Kind: KindResolution, Target: id, As: as, Rationale: rules.CutBytes(text, MaxResult)})
}

// CloseEnded resolves, recorded, every open follow-up whose mission has
// ended (merge_wait, landed or failed), with the mission's result cut at
// MaxResult bytes on a character boundary: a brief is closed by its result.
// It returns the view after closing and the follow-ups it closed.
func (b *Book) CloseEnded(ctx context.Context, m *chain.Missions, now time.Time) (*View, []string, error) {
	v, err := b.View(ctx)
	if err != nil {
		return nil, nil, err
	}
	var closed []string
	for _, f := range v.Followups {
		if f.State != StateOpen || f.Mission == "" {
			continue
		}
		head, ok, err := m.HeadOf(f.Mission)
		if err != nil || !ok {
			continue
		}
		l := head.Letter
		if l.Phase != chain.PhaseMergeWait && l.Phase != chain.PhaseLanded && l.Phase != chain.PhaseFailed {
			continue
		}
		if _, err := b.Append(ctx, &Event{TS: chain.Timestamp(now), Agent: f.Opener, Kind: KindResolution, Target: f.ID,
			As: StateRecorded, Rationale: rules.CutBytes(missionResult(l), MaxResult)}); err != nil {
			return nil, closed, err
		}
		closed = append(closed, f.ID)
	}
	if len(closed) > 0 {
		v, err = b.View(ctx)
	}
	return v, closed, err
}

// missionResult is what a mission's end says, for the follow-up it closes.
func missionResult(l *chain.Letter) string {
	parts := []string{fmt.Sprintf("mission %s ended %s on %s", l.MissionID, l.Phase, l.BlockID)}
	if l.Verdict != nil {
		parts = append(parts, fmt.Sprintf("%s: %s", l.Verdict.Decision, l.Verdict.Gist))
	}
	if l.Gate != nil {
		g := "gate " + l.Gate.Command
		if l.Gate.ExitStatus != nil {
			g += fmt.Sprintf(" · exit %d", *l.Gate.ExitStatus)
		}
		parts = append(parts, g)
	}
	if l.Receipt != nil && l.Receipt.Imported {
		parts = append(parts, fmt.Sprintf("receipt ✓ store v%d", l.Receipt.StoreVersion))
	}
	return strings.Join(parts, "; ")
}

// cutRunes cuts s to at most n characters.
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
