// Package mcpserver is m1nd as a Model Context Protocol server: the tools
// an agent may call on its own behalf (missions, mail, memory, follow-ups,
// the atlas, sessions), each running the flow the CLI's verb runs (ops and
// the kinds below it), as one agent, the one the session's hooks name.
//
// Nothing here performs a human gesture: receipt import, ratify, archive
// and land are not tools, and a letter that would need one is refused by
// its law like any other (human_gesture_required). A refusal comes back as
// a tool error carrying the refusal's envelope, so the model reads the
// lesson and corrects itself.
//
// It sits above ops and session in the layout; only cli imports
// it (m1nd mcp).
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/review"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/session"
)

// maxLetterBytes caps a posted letter, as `m1nd mission post` caps it.
const maxLetterBytes = 1 << 20

// DefaultPoll is how often a server looks for new letters to announce to
// its client, unless told otherwise (Server.Poll).
const DefaultPoll = 2 * time.Second

// InboxURI is the resource holding the agent's unread letters; a client
// that subscribes to it is told when new ones arrive.
const InboxURI = "m1nd://inbox"

// Server is m1nd's MCP server for one agent of one brain.
type Server struct {
	Flows   *ops.Flows
	Agent   string           // who every tool acts as; never the human's name
	Now     func() time.Time // nil: the system clock
	Poll    time.Duration    // how often new letters are looked for; 0: DefaultPoll
	Version string           // the m1nd version the server reports

	once sync.Once
	srv  *mcp.Server

	mu sync.Mutex // one tool-result note at a time (newLetters)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Instructions is what the server tells the client about itself.
func (s *Server) Instructions() string {
	return fmt.Sprintf(`m1nd is the shared memory of the coding agents working in brain %q; you act in it as agent %q.
Missions are chains of letters: mission_heads lists them, mission_show and mission_log read one, mission_next drafts the letter that extends a head and mission_post appends it (edit the draft first: phase, verdict, gate).
Mail reaches other agents (mail_send, to an agent id or all); mail_inbox and mail_show read yours. New letters also arrive in your session through m1nd's hooks; every tool result ends with a note of the letters that arrived since the last one (id, sender, class), and mail_show reads one; this server never marks a letter read.
memory_add, memory_recall and memory_resolve keep what you decided or learned; followup_open asks another agent for something and followup_list shows what is owed; the atlas holds shared documents owned by their publisher; sessions lists the live agent sessions.
A refused call comes back as a tool error {"ok":false,"refused":CODE,"field":…,"lesson":…}: nothing was written; read the lesson, fix the call and try again (stale_head: call mission_next again and re-post).
No tool performs a human gesture: importing a receipt, ratifying the skeleton, archiving a mission and landing one are the human's, in the tray or at their terminal. Ask for them by mail; never try to work around it.`, s.Flows.Name(), s.Agent)
}

// MCP is the SDK server with every tool, built once.
func (s *Server) MCP() *mcp.Server {
	s.once.Do(func() {
		s.srv = mcp.NewServer(&mcp.Implementation{Name: "m1nd", Title: "m1nd", Version: s.Version}, &mcp.ServerOptions{
			Instructions:     s.Instructions(),
			SubscribeHandler: func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error {
				return nil
			},
		})
		s.addTools(s.srv)
		s.srv.AddReceivingMiddleware(s.noteLetters)
		s.srv.AddResource(&mcp.Resource{URI: InboxURI, Name: "inbox", MIMEType: "application/json",
			Description: "your unread letters, newest first (reading it marks nothing read)"}, s.readInbox)
	})
	return s.srv
}

// Run serves one client on t until it goes away or ctx ends, announcing
// new letters while it runs.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	srv := s.MCP()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.announce(ctx)
	return srv.Run(ctx, t)
}

// announce polls what the hooks would hand the agent's session
// (mailbox.Pending: it claims nothing) and, when it grew, tells every
// connected client: a log message, and an update of InboxURI to those
// subscribed. The letters themselves still reach the session once,
// through the hooks' delivery cursor.
func (s *Server) announce(ctx context.Context) {
	poll := s.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	last, _ := s.Flows.Pending(s.Agent) // the hooks hand these over at the session's start
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Flows.Pending(s.Agent)
		if err != nil {
			continue
		}
		if n > last {
			s.tell(ctx, n-last, n)
		}
		last = n
	}
}

// maxNoted is how many new letters one tool result names; the rest are
// counted.
const maxNoted = 8

// noteLetters adds to every tool result a note of the letters that
// arrived for the agent since the last result named any: each letter
// once, with its id, sender and class. A client that neither sets a log
// level nor subscribes to the inbox hears of letters this way, at its
// next call, whether or not its session runs m1nd's hooks. It claims
// nothing: the hooks still hand each letter over once.
func (s *Server) noteLetters(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		call, ok := res.(*mcp.CallToolResult)
		if !ok || call == nil {
			return res, err
		}
		if note := s.newLetters(ctx); note != "" {
			call.Content = append(call.Content, &mcp.TextContent{Text: note})
		}
		return res, err
	}
}

// newLetters is the note of the letters waiting for the agent that no
// tool result named yet — in this server process or an earlier one (the
// agent's record beside its cursor, mailbox.Unnoted) — marking them
// named; "" when there are none.
func (s *Server) newLetters(ctx context.Context) string {
	waiting, err := s.Flows.Unread(s.Agent)
	if err != nil {
		return ""
	}
	s.mu.Lock() // one note at a time: two concurrent calls never name a letter twice
	defer s.mu.Unlock()
	fresh, err := s.Flows.Unnoted(ctx, s.Agent, waiting)
	if err != nil || len(fresh) == 0 {
		return ""
	}
	var named []string
	for _, l := range fresh[:min(len(fresh), maxNoted)] {
		named = append(named, fmt.Sprintf("%s from %s (%s)", l.ID, l.Letter.Agent, l.Letter.Class))
	}
	more := ""
	if len(fresh) > len(named) {
		more = fmt.Sprintf(" and %d more", len(fresh)-len(named))
	}
	return fmt.Sprintf("m1nd: %s for you since your last call: %s%s; mail_show ID reads one, mail_inbox lists them",
		rules.Count(len(fresh), "new letter"), strings.Join(named, ", "), more)
}

// tell announces fresh new letters (pending in all) to every client.
func (s *Server) tell(ctx context.Context, fresh, pending int) {
	msg := fmt.Sprintf("m1nd: %s for %s (%d unread in all); mail_inbox lists them, and your session's hooks hand them over at the next tool call",
		rules.Count(fresh, "new letter"), s.Agent, pending)
	for ss := range s.srv.Sessions() {
		// Logging is deprecated from protocol 2026-07-28 but stays during its
		// window for the clients that subscribe; the tool-result note
		// (noteLetters) is what every client reads.
		//lint:ignore SA1019 kept for subscribed clients until the window closes
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "m1nd", Data: msg})
	}
	_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: InboxURI})
}

func (s *Server) readInbox(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v, err := s.Flows.Inbox(ctx, s.Agent, true, 0, false)
	if err != nil {
		return nil, err
	}
	b, err := rules.EncodeReply(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: InboxURI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// result is a tool's answer: v as one JSON text, the CLI's --json reply.
func result(v any, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return failure(err), nil, nil
	}
	b, err := rules.EncodeReply(rules.Success(v))
	if err != nil {
		return failure(err), nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

// failure is a tool error: a refusal's envelope, so the model sees the
// code, the field and the lesson; any other failure as one line.
func failure(err error) *mcp.CallToolResult {
	text := "m1nd: error: " + rules.OneLine(err.Error())
	if r, ok := rules.AsRefusal(err); ok {
		b, _ := rules.EncodeReply(r.Envelope())
		text = string(b)
	}
	res := &mcp.CallToolResult{}
	res.SetError(err)
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return res
}

// usage is a call whose arguments are wrong in a way the schema cannot say.
func usage(format string, args ...any) (*mcp.CallToolResult, any, error) {
	return failure(fmt.Errorf(format, args...)), nil, nil
}

func checkMission(id string) error {
	if !chain.ValidMissionID(id) {
		return fmt.Errorf("%q is not a mission id (msn_ followed by 12 lowercase hex digits); mission_heads lists them", id)
	}
	return nil
}

// Tool names, in the order tools/list gives them.
var ToolNames = []string{
	"mission_heads", "mission_show", "mission_log", "mission_next", "mission_post", "mission_review",
	"mail_send", "mail_inbox", "mail_show",
	"memory_add", "memory_recall", "memory_resolve",
	"followup_open", "followup_resolve", "followup_list",
	"atlas_read", "atlas_publish", "atlas_amend",
	"sessions",
}

type missionID struct {
	MissionID string `json:"mission_id" jsonschema:"the mission id: msn_ followed by 12 lowercase hex digits"`
}

type headsIn struct {
	Phase string `json:"phase,omitempty" jsonschema:"only heads in this phase: judging, executing, gate, review, merge_wait, landed, failed or archived"`
}

type nextIn struct {
	MissionID string `json:"mission_id" jsonschema:"the mission id: msn_ followed by 12 lowercase hex digits"`
	Phase     string `json:"phase,omitempty" jsonschema:"the next letter's phase (default: the head's): judging, executing, gate, review, merge_wait or failed"`
}

type postIn struct {
	Letter json.RawMessage `json:"letter"`
}

var postSchema = json.RawMessage(`{"type":"object","required":["letter"],"additionalProperties":false,"properties":{"letter":{"type":"object",` +
	`"description":"one m1nd-mission-letter-v0 document: best the letter mission_next returned, edited (phase, verdict {decision APPROVE|CHANGE|REJECT, gist}, gate {command, exit_status, artifact_hash}, receipt_candidate). mission_seq must be the head's + 1 and prev_letter_id the head's letter id, else stale_head."}}}`)

type reviewIn struct {
	MissionID string           `json:"mission_id" jsonschema:"the mission id: msn_ followed by 12 lowercase hex digits"`
	Decision  string           `json:"decision" jsonschema:"CHANGE (request changes: the agent works again and its fix is gated again), APPROVE (lands nothing) or COMMENT"`
	Body      string           `json:"body,omitempty" jsonschema:"the review on the whole work (Markdown)"`
	Comments  []review.Comment `json:"comments,omitempty" jsonschema:"comments on lines of the diff: {path, line, text}; commit defaults to the one the gate tested"`
}

type mailSendIn struct {
	To       string   `json:"to" jsonschema:"the recipient agent id, or all"`
	Class    string   `json:"class,omitempty" jsonschema:"the letter's class: note (default), ask, triage (settles the letters it answers), packet, …"`
	What     string   `json:"what" jsonschema:"the letter's text"`
	Expected string   `json:"expected,omitempty" jsonschema:"what you expect back"`
	Snippet  string   `json:"snippet,omitempty" jsonschema:"an excerpt the letter is about"`
	Tool     string   `json:"tool,omitempty" jsonschema:"the tool the letter is about"`
	Answers  []string `json:"answers,omitempty" jsonschema:"the ids of the letters this one answers"`
}

type inboxIn struct {
	Unread   bool `json:"unread,omitempty" jsonschema:"only unread letters"`
	MarkRead bool `json:"mark_read,omitempty" jsonschema:"mark every letter for you read, so the hooks will not hand them over again"`
	Limit    *int `json:"limit,omitempty" jsonschema:"at most this many letters (default 50; 0: all)"`
}

type letterID struct {
	LetterID string `json:"letter_id" jsonschema:"the letter's id (12 hex digits), as mail_inbox lists it"`
}

type memoryAddIn struct {
	Text       string   `json:"text" jsonschema:"the memory, one self-contained statement"`
	Sort       string   `json:"sort" jsonschema:"what it is: asked, decided, committed, learned, did, idea or rapport"`
	About      []string `json:"about,omitempty" jsonschema:"ids it is about: a mission, a block, a letter"`
	Source     []string `json:"source,omitempty" jsonschema:"ids it rests on"`
	Private    bool     `json:"private,omitempty" jsonschema:"only you recall it"`
	Supersedes string   `json:"supersedes,omitempty" jsonschema:"an older decided or learned memory id this one replaces"`
}

type recallIn struct {
	About    string `json:"about,omitempty" jsonschema:"only memories about this id"`
	Sort     string `json:"sort,omitempty" jsonschema:"only this sort"`
	Query    string `json:"query,omitempty" jsonschema:"words to rank by"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"at most this many memories (default 20)"`
	MaxBytes *int   `json:"max_bytes,omitempty" jsonschema:"at most this many bytes of memory text (default 4096)"`
}

type resolveIn struct {
	ID        string `json:"id" jsonschema:"the memory id"`
	As        string `json:"as" jsonschema:"recorded, withdrawn or deferred (to a follow-up)"`
	Rationale string `json:"rationale" jsonschema:"why"`
}

type followupOpenIn struct {
	Brief   string `json:"brief" jsonschema:"what you ask for"`
	Owner   string `json:"owner" jsonschema:"the agent who owes the answer"`
	Mission string `json:"mission,omitempty" jsonschema:"the mission id whose end closes it"`
}

type followupResolveIn struct {
	ID        string `json:"id" jsonschema:"the follow-up id"`
	Recorded  string `json:"recorded,omitempty" jsonschema:"the result (give this or withdrawn)"`
	Withdrawn string `json:"withdrawn,omitempty" jsonschema:"why it no longer matters (give this or recorded)"`
}

type followupListIn struct {
	Owner string `json:"owner,omitempty" jsonschema:"only those owed by this agent"`
	Open  bool   `json:"open,omitempty" jsonschema:"only open ones"`
}

type atlasReadIn struct {
	ID string `json:"id,omitempty" jsonschema:"a document id to read in full; absent: list every document"`
}

type atlasPublishIn struct {
	Text string `json:"text" jsonschema:"the document"`
	Kind string `json:"kind" jsonschema:"plan, part, agreement, open_item or idea"`
}

type atlasAmendIn struct {
	ID      string `json:"id" jsonschema:"the id of a document you published"`
	Text    string `json:"text,omitempty" jsonschema:"the new text (required unless resolve)"`
	Resolve bool   `json:"resolve,omitempty" jsonschema:"mark the document resolved instead of amending its text"`
}

type sessionsIn struct {
	All bool `json:"all,omitempty" jsonschema:"include the dead sessions not swept yet"`
}

func orDefault(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func tool(name, desc string, readOnly bool) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: desc, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly}}
	if !readOnly {
		f := false
		t.Annotations.DestructiveHint = &f
	}
	return t
}

// addTools adds every tool, area by area, in the order of ToolNames.
func (s *Server) addTools(srv *mcp.Server) {
	s.addMissionTools(srv)
	s.addMailTools(srv)
	s.addMemoryTools(srv)
	s.addFollowupTools(srv)
	s.addAtlasTools(srv)
	s.addSessionTools(srv)
}

// addMissionTools adds the tools that read a mission's chain and extend
// it. Landing and archiving are the human's: no tool does them.
func (s *Server) addMissionTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("mission_heads", "List every mission's head letter (its newest), by mission id, optionally only those in one phase. Same as `m1nd mission heads --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in headsIn) (*mcp.CallToolResult, any, error) {
			if err := ops.CheckPhase(in.Phase); err != nil {
				return usage("%v", err)
			}
			view, err := s.Flows.Heads(ctx, in.Phase, false)
			if err != nil {
				return result(nil, err)
			}
			return result(ops.HeadsReply{HeadsView: view}, nil)
		})
	mcp.AddTool(srv, tool("mission_show", "Show one mission: its head letter, its letters as a timeline, the gate's output and the work on its branch. Same as `m1nd mission show --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in missionID) (*mcp.CallToolResult, any, error) {
			if err := checkMission(in.MissionID); err != nil {
				return usage("%v", err)
			}
			return result(s.Flows.ShowMission(ctx, in.MissionID))
		})
	mcp.AddTool(srv, tool("mission_log", "List one mission's letters, oldest first, each with its letter id and commit. Same as `m1nd mission log --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in missionID) (*mcp.CallToolResult, any, error) {
			if err := checkMission(in.MissionID); err != nil {
				return usage("%v", err)
			}
			entries, err := s.Flows.Log(ctx, in.MissionID)
			if err != nil {
				return result(nil, err)
			}
			return result(struct {
				MissionID string        `json:"mission_id"`
				Letters   []chain.Entry `json:"letters"`
			}{in.MissionID, entries}, nil)
		})
	mcp.AddTool(srv, tool("mission_next", "Draft the letter that would extend a mission's head: mission_seq + 1, prev_letter_id the head's id, updated_at now, and the phase if given. Posts nothing: edit it (verdict, gate, …) and pass it to mission_post. Same as `m1nd mission next`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in nextIn) (*mcp.CallToolResult, any, error) {
			if err := checkMission(in.MissionID); err != nil {
				return usage("%v", err)
			}
			next, err := s.Flows.NextLetter(in.MissionID, in.Phase, s.now())
			if err != nil {
				return result(nil, err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(next.Canonical())}}}, nil, nil
		})
	post := tool("mission_post", "Append a letter to its mission's chain, as you. Replies {ok, mission_id, letter_id, mission_seq, phase, deduped, ref, commit}; posting the identical letter again is ok with deduped true. Archived and landed letters are the human's gestures and are refused. Same as `m1nd mission post`.", false)
	post.InputSchema = postSchema
	mcp.AddTool(srv, post,
		func(ctx context.Context, _ *mcp.CallToolRequest, in postIn) (*mcp.CallToolResult, any, error) {
			if len(in.Letter) > maxLetterBytes {
				return result(nil, rules.Refusef(rules.InvalidLetter, "", "the letter is larger than %d bytes; a letter is a small JSON document", maxLetterBytes))
			}
			return result(s.Flows.PostLetter(ctx, in.Letter, s.Agent))
		})
	mcp.AddTool(srv, tool("mission_review", "Review a mission's work, as you: a mission waiting in merge_wait, or a failed one to retry it. Its agent gets one letter holding the body and every comment with its anchor; CHANGE also records a review letter, after which the agent works again and its fix is gated as the next round. Replies {ok, id, review, to, mail, letter?}. Same as `m1nd mission review --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in reviewIn) (*mcp.CallToolResult, any, error) {
			if err := checkMission(in.MissionID); err != nil {
				return usage("%v", err)
			}
			return result(s.Flows.Review(ctx, ops.ReviewRequest{MissionID: in.MissionID, Decision: in.Decision, Body: in.Body, Comments: in.Comments, Agent: s.Agent, Now: s.now()}))
		})
}

// addMailTools adds the tools that send letters and read the agent's own.
// Reading marks nothing read unless asked: the hooks still hand each
// letter over once.
func (s *Server) addMailTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("mail_send", "Send a letter, as you, to another agent (or to all). It reaches their live session at its next tool call. Replies {ok, id, to, ref, deduped}. Same as `m1nd mail send`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in mailSendIn) (*mcp.CallToolResult, any, error) {
			return result(s.Flows.SendMail(ctx, ops.MailRequest{Agent: s.Agent, To: in.To, Class: in.Class, What: in.What,
				Expected: in.Expected, Snippet: in.Snippet, Tool: in.Tool, Answers: in.Answers, Now: s.now()}))
		})
	mcp.AddTool(srv, tool("mail_inbox", "List the letters for you (or for all), newest first, each with its fate and whether it was read. Reading the inbox marks nothing read unless mark_read. Same as `m1nd mail inbox --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in inboxIn) (*mcp.CallToolResult, any, error) {
			return result(s.Flows.Inbox(ctx, s.Agent, in.Unread, orDefault(in.Limit, 50), in.MarkRead))
		})
	mcp.AddTool(srv, tool("mail_show", "Show one letter in full, with its fate. Same as `m1nd mail show --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in letterID) (*mcp.CallToolResult, any, error) {
			return result(s.Flows.ShowLetter(ctx, in.LetterID))
		})
}

// addMemoryTools adds the tools that keep, recall and settle what the
// agent decided or learned.
func (s *Server) addMemoryTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("memory_add", "Record a memory, as you: what you decided, learned, did, … Other agents recall it unless private. Same as `m1nd memory add --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in memoryAddIn) (*mcp.CallToolResult, any, error) {
			return result(s.Flows.AddMemory(ctx, memory.AddRequest{Agent: s.Agent, Sort: in.Sort, Text: in.Text, About: in.About,
				Source: in.Source, Private: in.Private, Supersedes: in.Supersedes, Now: s.now()}))
		})
	mcp.AddTool(srv, tool("memory_recall", "Recall in-force memories (yours and the shared ones of others), ranked by query words then recency, bounded. Same as `m1nd memory recall --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in recallIn) (*mcp.CallToolResult, any, error) {
			ms, cut, err := s.Flows.Recall(ctx, memory.RecallRequest{Agent: s.Agent, About: in.About, Sort: in.Sort, Query: in.Query,
				Limit: orDefault(in.Limit, 20), MaxBytes: orDefault(in.MaxBytes, 4096)})
			if ms == nil {
				ms = []*memory.Memory{}
			}
			return result(struct {
				Cut      int              `json:"cut"`
				Memories []*memory.Memory `json:"memories"`
			}{cut, ms}, err)
		})
	mcp.AddTool(srv, tool("memory_resolve", "Settle one of your memories: recorded, withdrawn or deferred. Same as `m1nd memory resolve --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in resolveIn) (*mcp.CallToolResult, any, error) {
			rid, err := s.Flows.Resolve(ctx, s.Agent, in.ID, in.As, in.Rationale, s.now())
			return result(struct {
				As         string `json:"as"`
				ID         string `json:"id"`
				Resolution string `json:"resolution"`
			}{in.As, in.ID, rid}, err)
		})
}

// addFollowupTools adds the tools for what one agent owes another.
func (s *Server) addFollowupTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("followup_open", "Open a follow-up: a brief the owner owes you an answer to. The owner gets a letter naming it; when a linked mission ends, it closes with the mission's result. Same as `m1nd followup open --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in followupOpenIn) (*mcp.CallToolResult, any, error) {
			id, err := s.Flows.OpenFollowup(ctx, s.Agent, in.Owner, in.Brief, in.Mission, s.now())
			return result(struct {
				ID string `json:"id"`
			}{id}, err)
		})
	mcp.AddTool(srv, tool("followup_resolve", "Close a follow-up you owe (recorded, with its result) or withdraw one. Its opener is told by letter. Same as `m1nd followup resolve --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in followupResolveIn) (*mcp.CallToolResult, any, error) {
			as, text, ok := ops.FollowupResolution(in.Recorded, in.Withdrawn)
			if !ok {
				return usage("give exactly one of recorded (the result) or withdrawn (why)")
			}
			_, err := s.Flows.ResolveFollowup(ctx, s.Agent, in.ID, as, text, s.now())
			return result(struct {
				ID    string `json:"id"`
				State string `json:"state"`
			}{in.ID, as}, err)
		})
	mcp.AddTool(srv, tool("followup_list", "List follow-ups with their state (closing those whose mission ended). Same as `m1nd followup list --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in followupListIn) (*mcp.CallToolResult, any, error) {
			fs, err := s.Flows.Followups(ctx, in.Owner, in.Open, s.now())
			return result(struct {
				Followups []*memory.Followup `json:"followups"`
			}{fs}, err)
		})
}

// addAtlasTools adds the tools that read the shared documents and publish
// the agent's own: only their publisher may amend them.
func (s *Server) addAtlasTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("atlas_read", "Read the atlas of shared documents: one document in full with whether its publisher's proof verifies here (id), or every document's newest version. Same as `m1nd atlas show|list --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in atlasReadIn) (*mcp.CallToolResult, any, error) {
			if in.ID != "" {
				return result(s.Flows.ShowDoc(in.ID))
			}
			docs, err := s.Flows.ListDocs()
			return result(struct {
				Docs []ops.ListedDoc `json:"docs"`
			}{docs}, err)
		})
	mcp.AddTool(srv, tool("atlas_publish", "Publish a shared document, as you: only you may amend or resolve it. It is proven with your agent key (a human makes it once: m1nd agent key create <agent>). Same as `m1nd atlas publish --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in atlasPublishIn) (*mcp.CallToolResult, any, error) {
			d, err := s.Flows.Atlas().Publish(ctx, s.Agent, in.Kind, in.Text, s.now())
			return result(docReply(d), err)
		})
	mcp.AddTool(srv, tool("atlas_amend", "Publish the next version of a document you published (text), or mark it resolved (resolve). Same as `m1nd atlas amend|resolve --json`.", false),
		func(ctx context.Context, _ *mcp.CallToolRequest, in atlasAmendIn) (*mcp.CallToolResult, any, error) {
			if !in.Resolve && in.Text == "" {
				return usage("atlas_amend needs the new text, or resolve true")
			}
			d, err := s.Flows.Atlas().Amend(ctx, s.Agent, in.ID, in.Text, in.Resolve, s.now())
			return result(docReply(d), err)
		})
}

// addSessionTools adds the tool that lists the live agent sessions.
func (s *Server) addSessionTools(srv *mcp.Server) {
	mcp.AddTool(srv, tool("sessions", "List the live Claude Code and Codex sessions m1nd's hooks recorded: agent, client, state, what waits for each, and the refresh decider's reading. Same as `m1nd sessions --json`.", true),
		func(ctx context.Context, _ *mcp.CallToolRequest, in sessionsIn) (*mcp.CallToolResult, any, error) {
			views, err := session.Views(ctx, s.Flows.RuntimeDir(), func() (*ops.Flows, error) { return s.Flows, nil }, s.now(), in.All)
			return result(struct {
				Sessions []session.View `json:"sessions"`
			}{views}, err)
		})
}

func docReply(d *memory.Doc) any {
	return struct {
		Doc *memory.Doc `json:"doc"`
	}{d}
}
