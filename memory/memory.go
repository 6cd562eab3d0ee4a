package memory

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// RefPrefix is where every agent's memory ref lives.
const RefPrefix = chain.RefRoot + "memory/"

// File is the one file in a memory commit's tree.
const File = "memory.json"

// Sorts of memory.
var Sorts = []string{"asked", "decided", "committed", "learned", "did", "idea", "rapport"}

// Kinds of event on a memory ref.
const (
	KindMemory     = "memory"
	KindResolution = "resolution"
	KindFollowup   = "followup"
	KindLink       = "link" // a follow-up carried by a mission
)

// States of a memory or follow-up.
const (
	StateInForce    = "in_force"
	StateOpen       = "open"
	StateRecorded   = "recorded"
	StateWithdrawn  = "withdrawn"
	StateDeferred   = "deferred"
	StateSuperseded = "superseded"
)

// Limits, in bytes.
const (
	MaxText   = 8000
	MaxBrief  = 1000 // a follow-up's brief, in characters
	MaxResult = 3800 // a result recorded on a follow-up, cut on a character boundary
)

// Event is one commit of a memory ref. Field order is the canonical key
// order; its id is the first 12 hex of sha256 of the canonical bytes.
type Event struct {
	TS         string   `json:"ts"`
	Agent      string   `json:"agent"`
	Kind       string   `json:"kind"`
	Target     string   `json:"target,omitempty"` // resolution, link: the memory or follow-up id
	Sort       string   `json:"sort,omitempty"`
	Text       string   `json:"text,omitempty"` // a memory's text, a follow-up's brief
	About      []string `json:"about,omitempty"`
	Source     []string `json:"source,omitempty"`
	Private    bool     `json:"private,omitempty"`
	Supersedes string   `json:"supersedes,omitempty"`
	Owner      string   `json:"owner,omitempty"`   // follow-up
	Mission    string   `json:"mission,omitempty"` // follow-up, link
	As         string   `json:"as,omitempty"`      // resolution: recorded | withdrawn | deferred
	Rationale  string   `json:"rationale,omitempty"`
	Followup   string   `json:"followup,omitempty"` // resolution deferred to this follow-up
}

// Canonical returns the event's canonical bytes.
func (e *Event) Canonical() []byte { return chain.CanonicalJSON(e) }

// ID is the event's content id.
func (e *Event) ID() string { return chain.DocID(e.Canonical()) }

func invalid(field, format string, args ...any) error {
	return rules.Refusef(rules.InvalidLetter, field, format, args...)
}

// Decode parses a stored event: its canonical bytes and nothing else.
func Decode(data []byte) (*Event, error) { return chain.DecodeAs[Event](data, File) }

func validID(id string) bool { return chain.ValidLetterID(id) }

// Validate applies the memory laws to one event: first the laws every
// kind obeys, then its kind's own. The first failure wins.
func Validate(e *Event) error {
	if err := validateShared(e); err != nil {
		return err
	}
	switch e.Kind {
	case KindMemory:
		return validateMemory(e)
	case KindFollowup:
		return validateFollowup(e)
	case KindResolution:
		return validateResolution(e)
	case KindLink:
		if !validID(e.Target) || !chain.ValidMissionID(e.Mission) {
			return invalid("mission", "a link names a follow-up and the mission that carries it")
		}
	default:
		return invalid("kind", "kind is memory, followup, resolution or link")
	}
	return nil
}

// validateShared holds the laws of every kind: who wrote the event and
// when, prose that is safe to show, and references that name ids.
func validateShared(e *Event) error {
	if !rules.ValidDocTime(e.TS) {
		return invalid("ts", "ts is an RFC 3339 timestamp, 1970 or later")
	}
	if !rules.ValidAgentID(e.Agent) {
		return invalid("agent", "agent is the writer's id")
	}
	for _, f := range []struct{ name, value string }{{"text", e.Text}, {"rationale", e.Rationale}} {
		if len(f.value) > MaxText {
			return invalid(f.name, "%s is longer than %d bytes", f.name, MaxText)
		}
		if rules.HasUnsafeText(f.value) {
			return invalid(f.name, "%s holds invalid UTF-8, a control character or a bidirectional override", f.name)
		}
	}
	for _, ref := range append(append([]string{}, e.About...), e.Source...) {
		if strings.TrimSpace(ref) == "" || len(ref) > 200 || rules.HasControl(ref) {
			return invalid("about", "about and source name ids: a mission, a block, a letter, a memory")
		}
	}
	return nil
}

// validateMemory: a memory has a sort and says something, and only the
// sorts that can be overturned supersede another memory.
func validateMemory(e *Event) error {
	if !oneOf(e.Sort, Sorts) {
		return invalid("sort", "sort is one of %s", strings.Join(Sorts, ", "))
	}
	if strings.TrimSpace(e.Text) == "" {
		return invalid("text", "a memory says something: text cannot be blank")
	}
	if e.Supersedes != "" && (!validID(e.Supersedes) || (e.Sort != "decided" && e.Sort != "learned")) {
		return invalid("supersedes", "only a decided or learned memory supersedes, and it names a memory id")
	}
	return nil
}

// validateFollowup: a follow-up is a short brief owed by an agent, and
// may name the mission it belongs to.
func validateFollowup(e *Event) error {
	if strings.TrimSpace(e.Text) == "" || utf8.RuneCountInString(e.Text) > MaxBrief {
		return invalid("text", "a follow-up's brief is 1 to %d characters", MaxBrief)
	}
	if !rules.ValidAgentID(e.Owner) {
		return invalid("owner", "owner is the agent the follow-up is for")
	}
	if e.Mission != "" && !chain.ValidMissionID(e.Mission) {
		return invalid("mission", "mission is a mission id")
	}
	return nil
}

// validateResolution: a resolution names what it resolves, how, and why.
func validateResolution(e *Event) error {
	if !validID(e.Target) {
		return invalid("target", "a resolution names the memory or follow-up it resolves")
	}
	if !oneOf(e.As, []string{StateRecorded, StateWithdrawn, StateDeferred}) {
		return invalid("as", "as is recorded, withdrawn or deferred")
	}
	if strings.TrimSpace(e.Rationale) == "" {
		return invalid("rationale", "a resolution says why")
	}
	return nil
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Ref names an agent's memory ref.
func Ref(agent string) (string, error) {
	name, err := chain.AgentRefName(agent)
	if err != nil {
		return "", err
	}
	return RefPrefix + name, nil
}

// Book is a brain's memories, follow-ups and their resolutions.
type Book struct {
	Repo *gitstore.Repo
}

// Append validates an event and appends it to its agent's memory ref; an
// identical replay is recorded once.
func (b *Book) Append(ctx context.Context, e *Event) (string, error) {
	id, _, err := b.appendEvent(ctx, e)
	return id, err
}

// appendEvent is Append, saying whether the event was on the ref already.
func (b *Book) appendEvent(ctx context.Context, e *Event) (id string, deduped bool, err error) {
	if err := Validate(e); err != nil {
		return "", false, err
	}
	ref, err := Ref(e.Agent)
	if err != nil {
		return "", false, err
	}
	body := e.Canonical()
	id = chain.DocID(body)
	when, _ := time.Parse(time.RFC3339, e.TS)
	_, deduped, err = chain.Chain{Repo: b.Repo, Kind: Kind, Ref: ref}.AppendUnique(ctx, body, chain.Commit{
		Agent: e.Agent,
		When:  when,
		Doc:   e,
	})
	if err != nil {
		return "", false, fmt.Errorf("memory %s: %w", id, err)
	}
	return id, deduped, nil
}

// Stored is an event as read: its document and the decoded event.
type Stored = chain.Decoded[*Event]

// All reads every event of every memory ref, oldest first.
func (b *Book) All(ctx context.Context) ([]Stored, error) {
	docs, err := chain.ReadAll(ctx, b.Repo, Kind)
	if err != nil {
		return nil, err
	}
	var out []Stored
	for _, d := range docs {
		if e, err := Decode(d.Body); err == nil {
			out = append(out, Stored{Doc: d, Value: e})
		}
	}
	sortByTS(out)
	return out, nil
}

// sortByTS orders events by time; within one agent's ref the chain order
// already holds, and the stable sort keeps it for equal times.
func sortByTS(s []Stored) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Value.TS < s[j].Value.TS })
}
