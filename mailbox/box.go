package mailbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// RefPrefix is where every mail ref lives.
const RefPrefix = chain.RefRoot + "mail/"

// Ref names the ref a writer's letters to a recipient are appended to.
func Ref(recipient, writer string) (string, error) {
	folder, err := recipientFolder(recipient)
	if err != nil {
		return "", err
	}
	from, err := chain.AgentRefName(writer)
	if err != nil {
		return "", fmt.Errorf("writer: %w", err)
	}
	return folder + from, nil
}

// recipientFolder is where the refs of every writer's letters to
// recipient live.
func recipientFolder(recipient string) (string, error) {
	to := recipient
	if recipient != ToAll {
		var err error
		if to, err = chain.AgentRefName(recipient); err != nil {
			return "", fmt.Errorf("recipient: %w", err)
		}
	}
	return RefPrefix + to + "/", nil
}

// parseRef splits a mail ref into recipient and writer ids; ok is false
// for anything else under the prefix.
func parseRef(ref string) (recipient, writer string, ok bool) {
	rest, found := strings.CutPrefix(ref, RefPrefix)
	to, from, two := strings.Cut(rest, "/")
	if !found || !two || strings.Contains(from, "/") {
		return "", "", false
	}
	if to != ToAll {
		var err error
		if to, err = chain.AgentFromRefName(to); err != nil {
			return "", "", false
		}
	}
	from, err := chain.AgentFromRefName(from)
	if err != nil {
		return "", "", false
	}
	return to, from, true
}

// Mailbox is one brain's mail.
type Mailbox struct {
	Repo    *gitstore.Repo
	Brain   string   // this brain's display name; letters carry it
	Foreign []string // tools outside this brain: letters about them are "external"
}

// New returns brain's mail with the foreign tools the repository names in
// git config m1nd.foreignTools (comma separated), so every front end works
// out the same fates.
func New(repo *gitstore.Repo, brain string) *Mailbox {
	box := &Mailbox{Repo: repo, Brain: brain}
	if v, ok := repo.ConfigValue("m1nd", "foreignTools"); ok {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				box.Foreign = append(box.Foreign, t)
			}
		}
	}
	return box
}

// SendResult is the reply to a sent letter.
type SendResult struct {
	ID      string `json:"id"`
	To      string `json:"to"`
	Ref     string `json:"ref"`
	Commit  string `json:"commit"`
	Deduped bool   `json:"deduped"`
}

// Send validates a letter and appends it to its writer's ref for its
// recipient. The identical letter already there is ok with deduped.
func (b *Mailbox) Send(ctx context.Context, l *Letter) (*SendResult, error) {
	if l.Brain != b.Brain {
		return nil, rules.Refusef(rules.BrainMismatch, "brain", "the letter names brain %q but this is brain %q", rules.Clip(l.Brain), b.Brain)
	}
	if err := Validate(l); err != nil {
		return nil, err
	}
	ref, err := Ref(l.To, l.Agent)
	if err != nil {
		return nil, err
	}
	body := l.Canonical()
	id := chain.DocID(body)
	when, _ := time.Parse(time.RFC3339, l.TS)
	commit, deduped, err := chain.Chain{Repo: b.Repo, Kind: Kind, Ref: ref}.AppendUnique(ctx, body, chain.Commit{
		Agent: l.Agent,
		When:  when,
		Doc:   l,
	})
	if err != nil {
		return nil, fmt.Errorf("send %s: %w", id, err)
	}
	return &SendResult{ID: id, To: l.To, Ref: ref, Commit: commit.String(), Deduped: deduped}, nil
}

// letters returns ref's letters at head, oldest first, through the
// chain's index.
func letters(repo *gitstore.Repo, ref string, head gitstore.Hash) ([]chain.Doc, error) {
	return chain.Chain{Repo: repo, Kind: Kind, Ref: ref}.Docs(head)
}

// Stored is a letter as read from the mailbox.
type Stored struct {
	ID     string        `json:"id"`
	Letter *Letter       `json:"letter"`
	Ref    string        `json:"ref"`
	Commit gitstore.Hash `json:"-"`
}

// All returns every letter in the mailbox, oldest first by ts (ties by
// id). Letters that do not decode (written by hand) are skipped.
func (b *Mailbox) All(ctx context.Context) ([]Stored, error) {
	docs, err := chain.ReadAll(ctx, b.Repo, Kind)
	if err != nil {
		return nil, err
	}
	var out []Stored
	for _, d := range docs {
		if l, err := Decode(d.Body); err == nil {
			out = append(out, Stored{ID: d.ID, Letter: l, Ref: d.Ref, Commit: d.Commit})
		}
	}
	sortStored(out)
	return out, nil
}

// Between returns the letters writer wrote to recipient (one ref),
// oldest first; none when there are none. Letters that do not decode are
// skipped.
func (b *Mailbox) Between(ctx context.Context, recipient, writer string) ([]Stored, error) {
	ref, err := Ref(recipient, writer)
	if err != nil {
		return nil, err
	}
	head, ok, err := b.Repo.ReadRef(ref)
	if err != nil || !ok {
		return nil, err
	}
	return b.onRef(ctx, ref, head)
}

// To returns every letter written to recipient by name (not those to
// all), oldest first by ts: its refs only, not the whole mailbox.
func (b *Mailbox) To(ctx context.Context, recipient string) ([]Stored, error) {
	folder, err := recipientFolder(recipient)
	if err != nil {
		return nil, err
	}
	refs, err := b.Repo.ListRefs(folder)
	if err != nil {
		return nil, err
	}
	var out []Stored
	for _, r := range refs {
		if _, _, ok := parseRef(r.Name); !ok {
			continue
		}
		got, err := b.onRef(ctx, r.Name, r.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	sortStored(out)
	return out, nil
}

// onRef reads the letters of one mail ref at head, oldest first.
func (b *Mailbox) onRef(ctx context.Context, ref string, head gitstore.Hash) ([]Stored, error) {
	docs, err := letters(b.Repo, ref, head)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	out := make([]Stored, 0, len(docs))
	for _, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if l, err := Decode(d.Body); err == nil {
			out = append(out, Stored{ID: d.ID, Letter: l, Ref: ref, Commit: d.Commit})
		}
	}
	return out, nil
}

func sortStored(s []Stored) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Letter.TS != s[j].Letter.TS {
			return s[i].Letter.TS < s[j].Letter.TS
		}
		return s[i].ID < s[j].ID
	})
}

// addressedTo reports whether a letter on ref is for agent: sent to the
// agent or to all, and not written by the agent itself.
func addressedTo(ref, agent string) bool {
	to, from, ok := parseRef(ref)
	return ok && from != agent && (to == agent || to == ToAll)
}

// The fates of a letter, derived when read and never stored.
const (
	FateExternal  = "external"   // about a tool outside this brain
	FateFiredClay = "fired_clay" // answered by a triage letter: settled
	FateInFlight  = "in_flight"  // answered by some other letter
	FateWetInk    = "wet_ink"    // not answered yet
	// FateUndeliverable: not answered, and its recipient's sessions failed
	// every turn it went into (MaxAttempts); derived from this machine's
	// delivery record, where the reason is.
	FateUndeliverable = "undeliverable"
)

// Fates maps every letter id to its fate.
func (b *Mailbox) Fates(all []Stored) map[string]string {
	answeredBy := map[string][]*Letter{}
	for _, s := range all {
		for _, id := range s.Letter.Answers {
			answeredBy[id] = append(answeredBy[id], s.Letter)
		}
	}
	foreign := map[string]bool{}
	for _, t := range b.Foreign {
		foreign[t] = true
	}
	fates := make(map[string]string, len(all))
	for _, s := range all {
		fate := FateWetInk
		switch {
		case s.Letter.Tool != "" && foreign[s.Letter.Tool]:
			fate = FateExternal
		case len(answeredBy[s.ID]) > 0:
			fate = FateInFlight
			for _, a := range answeredBy[s.ID] {
				if a.Class == ClassTriage {
					fate = FateFiredClay
				}
			}
		}
		fates[s.ID] = fate
	}
	for id := range b.givenUp() {
		if fates[id] == FateWetInk {
			fates[id] = FateUndeliverable
		}
	}
	return fates
}

// givenUp is the set of letters some agent's delivery record gave up as
// undeliverable; a record that cannot be read gives none. The records are
// read as written, not checked against the mail refs (readInflight): a
// fate is shown only for a letter a ref holds, and every view of fates
// would otherwise walk each agent's mail chains again.
func (b *Mailbox) givenUp() map[string]bool {
	agents, err := recordAgents(b.Repo, inflightFile)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, agent := range agents {
		in := &inflight{}
		if err := readAgentJSON(b.Repo, inflightFile, agent, "letters in flight", "remove the file", in); err == nil {
			for _, f := range in.Undeliverable {
				out[f.ID] = true
			}
		}
	}
	return out
}

// Open reports whether a fate still wants attention.
func Open(fate string) bool {
	return fate == FateWetInk || fate == FateInFlight || fate == FateUndeliverable
}

// Tally counts letters per fate and how many of them are open.
func Tally(fates map[string]string) (counts map[string]int, open int) {
	counts = map[string]int{}
	for _, f := range fates {
		counts[f]++
		if Open(f) {
			open++
		}
	}
	return counts, open
}

// Entry is one letter in an agent's inbox.
type Entry struct {
	Stored
	Fate string `json:"fate"`
	Read bool   `json:"read"` // delivered into the agent's session (or marked read)
	// Turn is where a delivered letter stands: "in_turn" while the turn it
	// went into has not answered, "again" once a failed turn gave it back
	// for the next, "undeliverable" once MaxAttempts turns failed (then
	// Read is false, and Reason says why); absent otherwise.
	Turn   string `json:"turn,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// The turn states of a delivered letter (Entry.Turn).
const (
	TurnInTurn        = "in_turn"
	TurnAgain         = "again"
	TurnUndeliverable = "undeliverable"
)

// Inbox lists the letters for agent, newest first, with fate and whether
// they were delivered.
func (b *Mailbox) Inbox(ctx context.Context, agent string) ([]Entry, error) {
	all, err := b.All(ctx)
	if err != nil {
		return nil, err
	}
	fates := b.Fates(all)
	cur, in, err := readDelivered(b.Repo, agent)
	if err != nil {
		return nil, err
	}
	delivered := map[string]map[gitstore.Hash]bool{}
	var out []Entry
	for i := len(all) - 1; i >= 0; i-- {
		s := all[i]
		if !addressedTo(s.Ref, agent) {
			continue
		}
		if delivered[s.Ref] == nil {
			if delivered[s.Ref], err = b.deliveredSet(s.Ref, cur.Refs[s.Ref]); err != nil {
				return nil, err
			}
		}
		e := Entry{Stored: s, Fate: fates[s.ID], Read: delivered[s.Ref][s.Commit]}
		switch f := in.undeliverable(s.ID); {
		case f != nil:
			e.Turn, e.Read, e.Reason = TurnUndeliverable, false, f.Reason
		case in.waitsAgain(s.ID):
			e.Turn, e.Read = TurnAgain, false
		case in.inTurn(s.ID):
			e.Turn = TurnInTurn
		}
		out = append(out, e)
	}
	return out, nil
}

// Find returns the letter id names: whole, or by a unique start
// (rules.Abbreviated). matches are the ids it names; the letter and its
// fate are found when there is exactly one.
func (b *Mailbox) Find(ctx context.Context, id string) (s Stored, fate string, matches []string, err error) {
	all, err := b.All(ctx)
	if err != nil {
		return Stored{}, "", nil, err
	}
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.ID
	}
	if matches = rules.Abbreviated(id, ids); len(matches) != 1 {
		return Stored{}, "", matches, nil
	}
	for _, s := range all {
		if s.ID == matches[0] {
			return s, b.Fates(all)[s.ID], matches, nil
		}
	}
	return Stored{}, "", matches, nil
}

// SendPacket delivers a mission packet to an agent's inbox as a letter of
// class packet (direct delivery): the packet markdown is the letter's text
// and the mission id names it. Delivery is not execution: the agent reads
// it at its next tool call and decides.
func (b *Mailbox) SendPacket(ctx context.Context, from, to, missionID string, packet []byte, now time.Time) (*SendResult, error) {
	return b.Send(ctx, b.packetLetter(from, to, missionID, packet, now))
}

// CheckPacket refuses, before the mission is opened, a packet its delivery
// would refuse (a bad recipient, the sender itself, a packet too long or
// with unsafe text), so a mission is never opened with a packet that
// cannot follow it. The letter is checked with a stand-in mission id.
func (b *Mailbox) CheckPacket(from, to string, packet []byte, now time.Time) error {
	return Validate(b.packetLetter(from, to, "msn_000000000000", packet, now))
}

func (b *Mailbox) packetLetter(from, to, missionID string, packet []byte, now time.Time) *Letter {
	what := string(packet)
	if strings.TrimSpace(what) == "" {
		what = fmt.Sprintf("Mission %s is yours; it came without a packet: m1nd mission show %s", missionID, missionID)
	}
	return &Letter{
		TS: chain.Timestamp(now), Agent: from, To: to, Class: ClassPacket, Brain: b.Brain, Tool: "m1nd",
		What: what, Expected: fmt.Sprintf("post the next letter of %s (m1nd mission next %s)", missionID, missionID),
	}
}
