package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
)

// The flows an agent runs on its own behalf, shared by the CLI's verbs
// and the MCP server (mcpserver): one flow, one refusal, whichever door
// the agent came through.

// MailRequest is one letter an agent sends.
type MailRequest struct {
	Agent    string // the writer
	To       string // the recipient, or all
	Class    string // note when ""
	What     string
	Expected string
	Snippet  string
	Tool     string
	Answers  []string
	Now      time.Time
}

// MailSent is a sent letter as `m1nd mail send --json` answers it: the
// letter, and the follow-ups its answer closed.
type MailSent struct {
	*mailbox.SendResult
	ClosedFollowups []string `json:"closed_followups,omitempty"`
}

// SendMail sends the letter as req.Agent. A letter that answers the
// letter announcing a follow-up req.Agent owes, one no mission carries,
// closes that follow-up as recorded with the answer (the opener is told):
// otherwise nothing would ever close it but a resolve few owners think of.
func (b *Flows) SendMail(ctx context.Context, req MailRequest) (*MailSent, error) {
	class := req.Class
	if class == "" {
		class = mailbox.ClassNote
	}
	l := &mailbox.Letter{
		TS: chain.Timestamp(req.Now), Agent: req.Agent, To: req.To, Class: class, Brain: b.Name(),
		Tool: req.Tool, What: req.What, Expected: req.Expected, Snippet: req.Snippet, Answers: req.Answers,
	}
	res, err := b.box.Send(ctx, l)
	if err != nil {
		return nil, err
	}
	sent := &MailSent{SendResult: res}
	if len(req.Answers) > 0 && !res.Deduped {
		sent.ClosedFollowups, err = b.closeAnswered(ctx, req.Agent, req.Answers, req.What, req.Now)
	}
	return sent, err
}

// InboxView is an agent's inbox as `m1nd mail inbox --json` answers it.
type InboxView struct {
	Agent   string          `json:"agent"`
	Unread  int             `json:"unread"`
	Letters []mailbox.Entry `json:"letters"`
	Total   int             `json:"-"` // every letter for the agent, listed or not
}

// Inbox lists the letters for agent, newest first: only the unread ones
// when unread, at most limit (0: all). markRead marks every letter for the
// agent read first, so the listing shows the state after marking.
func (b *Flows) Inbox(ctx context.Context, agent string, unread bool, limit int, markRead bool) (*InboxView, error) {
	if markRead {
		if err := b.box.MarkRead(ctx, agent); err != nil {
			return nil, err
		}
	}
	entries, err := b.box.Inbox(ctx, agent)
	if err != nil {
		return nil, err
	}
	v := &InboxView{Agent: agent, Letters: []mailbox.Entry{}, Total: len(entries)}
	for _, e := range entries {
		if !e.Read {
			v.Unread++
		}
		if (unread && e.Read) || (limit > 0 && len(v.Letters) >= limit) {
			continue
		}
		v.Letters = append(v.Letters, e)
	}
	return v, nil
}

// ShownLetter is one letter as `m1nd mail show --json` answers it.
type ShownLetter struct {
	mailbox.Stored
	Fate string `json:"fate"`
}

// ShowLetter reads one letter by id, or by a unique start of it;
// invalid_letter on field id when no single letter has it.
func (b *Flows) ShowLetter(ctx context.Context, id string) (*ShownLetter, error) {
	s, fate, matches, err := b.box.Find(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case len(matches) > 1:
		return nil, rules.Refusef(rules.InvalidLetter, "id", "%s", rules.AmbiguousLesson("letter", id, matches))
	case len(matches) == 0:
		return nil, rules.Refusef(rules.InvalidLetter, "id", "no single letter has the id %s; m1nd mail inbox lists them", rules.Echo(id))
	}
	return &ShownLetter{Stored: s, Fate: fate}, nil
}

// CheckPhase says whether phase is a mission phase ("" is: it means none
// asked).
func CheckPhase(phase string) error {
	if phase == "" || slices.Contains(chain.Phases, phase) {
		return nil
	}
	return fmt.Errorf("phase %q: want one of %s", phase, strings.Join(chain.Phases, ", "))
}

// NextLetter is the letter that would extend a mission's head: seq + 1,
// prev_letter_id the head's id, updated_at now, and phase when not "".
// It posts nothing.
func (b *Flows) NextLetter(missionID, phase string, now time.Time) (*chain.Letter, error) {
	if err := CheckPhase(phase); err != nil {
		return nil, err
	}
	head, err := b.missions.Current(missionID)
	if err != nil {
		return nil, err
	}
	next := chain.Next(head.Letter, head.HeadLetterID, now)
	if phase != "" {
		next.SetPhase(phase)
	}
	return next, nil
}

// HeadsReply is every mission's head as `m1nd mission heads --json`
// answers it: the view, "ok" first.
type HeadsReply struct {
	*chain.HeadsView
}

// AppendJSON writes the reply as encoding/json would, letters as stored.
func (r HeadsReply) AppendJSON(b []byte) []byte {
	b = append(b, `{"ok":true,`...)
	return append(r.HeadsView.AppendJSON(b), '}')
}

// Followups lists the follow-ups, closing first those whose mission
// ended: only owner's when owner is not "", only open ones when open.
func (b *Flows) Followups(ctx context.Context, owner string, open bool, now time.Time) ([]*memory.Followup, error) {
	v, _, err := b.CloseEndedFollowups(ctx, now)
	if err != nil {
		return nil, err
	}
	out := []*memory.Followup{}
	for _, f := range v.Followups {
		if (owner != "" && f.Owner != owner) || (open && f.State != memory.StateOpen) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// MemoryAdded is what recording a memory did. Written is false when the
// agent already held the same memory: nothing new was recorded.
type MemoryAdded struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Written bool   `json:"written"`
	State   string `json:"state"`
	// Told lists the agents a decision or commitment named, each sent a
	// letter quoting it.
	Told []string `json:"told,omitempty"`

	Existing *memory.Memory `json:"-"` // the memory already held, when not written
}

// AddMemory records a memory as req.Agent. A decision or a commitment
// that names another agent (about "agent:ID", or "@ID" in its text) is
// that agent's business too: each named agent gets a letter quoting it,
// which reaches its session through the hooks and wakes it through the
// keeper. A private memory names no one.
func (b *Flows) AddMemory(ctx context.Context, req memory.AddRequest) (*MemoryAdded, error) {
	id, existing, err := b.book.Add(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &MemoryAdded{ID: id, Agent: req.Agent, Written: existing == nil, State: memory.StateInForce, Existing: existing}
	if existing != nil {
		out.State = existing.State
		return out, nil
	}
	if req.Private || (req.Sort != "decided" && req.Sort != "committed") {
		return out, nil
	}
	for _, to := range NamedAgents(req.Text, req.About) {
		if to == req.Agent || to == rules.HumanName {
			continue
		}
		what := fmt.Sprintf("%s %s, naming you (memory %s): %s", req.Agent, req.Sort, id, req.Text)
		l := &mailbox.Letter{TS: chain.Timestamp(req.Now), Agent: req.Agent, To: to, Class: mailbox.ClassNote, Brain: b.Name(), What: rules.CutBytes(what, mailbox.MaxWhat)}
		if _, err := b.box.Send(ctx, l); err != nil {
			return out, fmt.Errorf("memory %s recorded, but %s, whom it names, was not told: %w", id, to, err)
		}
		out.Told = append(out.Told, to)
	}
	return out, nil
}

// agentIDChars are the characters of an agent id (rules.ValidAgentID).
const agentIDChars = "abcdefghijklmnopqrstuvwxyz0123456789._-"

// NamedAgents lists the agents a memory names, each once, in order: its
// about entries "agent:ID" and the "@ID" mentions in its text.
func NamedAgents(text string, about []string) []string {
	var named []string
	add := func(id string) {
		if rules.ValidAgentID(id) && !strings.HasPrefix(id, "runnerd:") && !slices.Contains(named, id) {
			named = append(named, id)
		}
	}
	for _, a := range about {
		if id, ok := strings.CutPrefix(a, "agent:"); ok {
			add(id)
		}
	}
	for _, word := range strings.Fields(text) {
		if id, ok := strings.CutPrefix(word, "@"); ok {
			// "@carol's," names carol: the id is the run of id characters,
			// less a sentence's closing dot.
			if end := strings.IndexFunc(id, func(r rune) bool { return !strings.ContainsRune(agentIDChars, r) }); end >= 0 {
				id = id[:end]
			}
			add(strings.TrimRight(id, "."))
		}
	}
	return named
}

// Atlas is the brain's shared documents, proven by the agent keys in its
// runtime folder.
func (b *Flows) Atlas() *memory.Atlas {
	return &memory.Atlas{Repo: b.repo, Keys: memory.Keys{Dir: memory.KeysDir(b.repo.RuntimeDir())}}
}

// ShownDoc is one shared document as `m1nd atlas show --json` answers it,
// with whether its publisher's proof verifies here.
type ShownDoc struct {
	// ID is the document's id again (its doc_id is part of what the
	// publisher signed), under the key every reply names its object by.
	ID    string      `json:"id"`
	Doc   *memory.Doc `json:"doc"`
	Proof string      `json:"proof"`
}

// ShowDoc reads a shared document and checks its proof.
func (b *Flows) ShowDoc(id string) (*ShownDoc, error) {
	a := b.Atlas()
	d, _, err := a.Read(id)
	if err != nil {
		return nil, err
	}
	proof, err := a.Keys.CheckProof(d)
	if err != nil {
		return nil, err
	}
	return &ShownDoc{ID: d.DocID, Doc: d, Proof: proof}, nil
}

// ListedDoc is a shared document's newest version in a listing, with
// whether its proof verifies here.
type ListedDoc struct {
	// ID is the document's id again (its doc_id is part of what the
	// publisher signed), under the key every reply names its object by.
	ID string `json:"id"`
	*memory.Doc
	ProofState string `json:"proof_state"`
}

// ListDocs lists every shared document, newest version.
func (b *Flows) ListDocs() ([]ListedDoc, error) {
	a := b.Atlas()
	docs, err := a.List()
	if err != nil {
		return nil, err
	}
	rows := []ListedDoc{}
	for _, d := range docs {
		p, _ := a.Keys.CheckProof(d)
		rows = append(rows, ListedDoc{ID: d.DocID, Doc: d, ProofState: p})
	}
	return rows, nil
}
