package mailbox

import (
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// File is the one file in a mail commit's tree.
const File = "mail.json"

// ToAll addresses a letter to every agent of the brain.
const ToAll = "all"

// Classes with a meaning of their own; any other class is plain mail.
const (
	ClassTriage = "triage" // answering with triage fires the clay: the matter is settled
	ClassPacket = "packet" // a mission packet delivered to an agent's inbox
	ClassNote   = "note"
	ClassAsk    = "ask" // a question or an ask the recipient owes an answer to
)

// Limits on a letter's text, in bytes.
const (
	MaxWhat     = 16 << 10
	MaxExpected = 1000
	MaxSnippet  = 4000
	MaxAnswers  = 32
)

// Letter is one mail letter. Field order is the canonical key order; its id
// is the first 12 hex digits of the sha256 of its canonical bytes, which
// are what the commit's mail.json holds.
type Letter struct {
	TS       string   `json:"ts"`
	Agent    string   `json:"agent"` // the writer
	To       string   `json:"to"`    // an agent id, or "all"
	Class    string   `json:"class"`
	Brain    string   `json:"brain"`
	Tool     string   `json:"tool,omitempty"`
	What     string   `json:"what"`
	Expected string   `json:"expected,omitempty"`
	Snippet  string   `json:"snippet,omitempty"`
	Answers  []string `json:"answers,omitempty"` // ids of the letters this one answers
}

// Canonical returns the letter's canonical bytes: compact JSON in key
// order, optional fields absent, no HTML escaping.
func (l *Letter) Canonical() []byte { return chain.CanonicalJSON(l) }

// ID is the letter's content id.
func (l *Letter) ID() string { return chain.DocID(l.Canonical()) }

func invalid(field, format string, args ...any) error {
	return rules.Refusef(rules.InvalidLetter, field, format, args...)
}

// Decode parses a stored mail letter: its canonical bytes and nothing
// else.
func Decode(data []byte) (*Letter, error) { return chain.DecodeAs[Letter](data, File) }

// Validate applies the mail laws: a UTC timestamp, valid agent ids (the
// recipient may be "all"), a class, a bare brain name, an optional tool
// name, non-empty text within bounds and on no control characters but new
// lines and tabs, and answers that are letter ids.
func Validate(l *Letter) error {
	if !rules.ValidDocTime(l.TS) {
		return invalid("ts", "ts must be an RFC 3339 timestamp such as 2026-07-09T12:00:00Z, 1970 or later")
	}
	if !rules.ValidAgentID(l.Agent) || l.Agent == ToAll {
		return invalid("agent", `agent is the writer's id: `+rules.AgentIDRule+`, and not "all"`)
	}
	if l.To != ToAll && !rules.ValidAgentID(l.To) {
		return invalid("to", `to is an agent id or "all"`)
	}
	if l.To == l.Agent {
		return invalid("to", "a letter to yourself reaches no one: write to another agent or to all")
	}
	if !rules.IsToken(l.Class, false, "_-", 32) {
		return invalid("class", "class is a short lowercase word such as note, ask, triage or packet")
	}
	if problem := rules.DisplayNameProblem(l.Brain); problem != "" {
		return invalid("brain", "brain is the brain's bare display name: this one is %s", problem)
	}
	if l.Tool != "" && !rules.IsToken(l.Tool, true, "._-", 64) {
		return invalid("tool", "tool is a short lowercase name such as m1nd, github or jira")
	}
	for _, f := range []struct {
		field, value string
		max          int
		required     bool
	}{{"what", l.What, MaxWhat, true}, {"expected", l.Expected, MaxExpected, false}, {"snippet", l.Snippet, MaxSnippet, false}} {
		switch {
		case f.required && strings.TrimSpace(f.value) == "":
			return invalid(f.field, "what says what the letter is about; it cannot be blank")
		case len(f.value) > f.max:
			return invalid(f.field, "%s is longer than %d bytes", f.field, f.max)
		case rules.HasUnsafeText(f.value):
			return invalid(f.field, "%s holds invalid UTF-8, a control character or a bidirectional override", f.field)
		}
	}
	if len(l.Answers) > MaxAnswers {
		return invalid("answers", "a letter answers at most %d letters", MaxAnswers)
	}
	for _, id := range l.Answers {
		if !chain.ValidLetterID(id) {
			return invalid("answers", "answers holds letter ids: 12 lowercase hex digits")
		}
	}
	return nil
}
