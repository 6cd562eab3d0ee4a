package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/brain/pinstest"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/mcpserver"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// connect serves a real repository "brain" as agent bob over an
// in-memory transport pair and returns the SDK client's session, with
// the log messages the server sent.
func connect(t *testing.T) (*gittest.Repo, *ops.Flows, *mcp.ClientSession, chan string) {
	t.Helper()
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	flows := ops.New(repo, "brain")
	cs, logs := serve(t, flows)
	return g, flows, cs, logs
}

// serve runs one server process's worth of m1nd's MCP server on flows, as
// agent bob, and connects a client to it.
func serve(t *testing.T, flows *ops.Flows) (*mcp.ClientSession, chan string) {
	t.Helper()
	srv := &mcpserver.Server{Flows: flows, Agent: "bob", Poll: 50 * time.Millisecond, Version: "test"}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	logs := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 the server still announces letters as log messages to clients that ask, during the deprecation window
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params.Data.(string)
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs, logs
}

// call calls a tool and returns its text and whether it is a tool error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	text, _, isErr := callNoted(t, cs, name, args)
	return text, isErr
}

// callNoted is call, with the note of new letters the result ends with
// ("" when none).
func callNoted(t *testing.T, cs *mcp.ClientSession, name string, args any) (text, note string, isErr bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) == 2 {
		note = res.Content[1].(*mcp.TextContent).Text
		if !strings.HasPrefix(note, "m1nd: ") {
			t.Fatalf("%s: a second content that is no note of letters: %q", name, note)
		}
	} else if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents, want 1, or 2 with a note", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, note, res.IsError
}

func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return m
}

func TestToolsAndFlows(t *testing.T) {
	g, flows, cs, logs := connect(t)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		got[tl.Name] = tl
	}
	for _, name := range mcpserver.ToolNames {
		tl := got[name]
		if tl == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s has no description or no schema", name)
		}
	}
	for _, gesture := range []string{"land", "receipt_import", "skeleton_ratify", "mission_archive"} {
		if got[gesture] != nil {
			t.Errorf("tool %s is a human gesture", gesture)
		}
	}
	if len(got) != len(mcpserver.ToolNames) {
		t.Errorf("%d tools, want %d", len(got), len(mcpserver.ToolNames))
	}
	if init := cs.InitializeResult(); init == nil || !strings.Contains(init.Instructions, "No tool performs a human gesture") {
		t.Errorf("the instructions do not say no tool performs a human gesture")
	}

	// A mission (m1nd mission new --block core --synthetic), then its next
	// letter drafted and posted through the tools.
	opened, err := flows.OpenMission(ctx, ops.MissionRequest{BlockID: "core", Synthetic: true, Agent: "alice", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	id := opened.Mission.MissionID
	draft, isErr := call(t, cs, "mission_next", map[string]any{"mission_id": id, "phase": "executing"})
	if isErr {
		t.Fatalf("mission_next: %s", draft)
	}
	var letter map[string]any
	if err := json.Unmarshal([]byte(draft), &letter); err != nil {
		t.Fatal(err)
	}
	posted, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(draft)})
	if isErr {
		t.Fatalf("mission_post: %s", posted)
	}
	if p := decode(t, posted); p["ok"] != true || p["mission_seq"] != 2.0 || p["phase"] != "executing" || p["deduped"] != false {
		t.Errorf("mission_post: %s", posted)
	}
	if out := g.Git("-C", g.Dir, "log", "-1", "--format=%B", "refs/m1nd/missions/"+id); !strings.Contains(out, "M1nd-Agent: bob") {
		t.Errorf("the posted letter is not bob's:\n%s", out)
	}

	// The same draft again extends a head that moved: stale_head, as a
	// tool error carrying the refusal's envelope.
	letter["updated_at"] = "2026-01-01T00:00:00Z"
	stale, _ := json.Marshal(letter)
	refused, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(stale)})
	if r := decode(t, refused); !isErr || r["ok"] != false || r["refused"] != "stale_head" || r["lesson"] == "" {
		t.Errorf("a stale post: error %v, %s", isErr, refused)
	}
	// An archived letter is the human's gesture.
	letter["phase"], letter["mission_seq"] = "archived", 3.0
	archived, _ := json.Marshal(letter)
	if refused, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(archived)}); !isErr || decode(t, refused)["refused"] != "human_gesture_required" {
		t.Errorf("an archived post: error %v, %s", isErr, refused)
	}

	heads, _ := call(t, cs, "mission_heads", map[string]any{})
	if !strings.Contains(heads, `"mission_id":"`+id+`"`) {
		t.Errorf("mission_heads: %s", heads)
	}
	if log, _ := call(t, cs, "mission_log", map[string]any{"mission_id": id}); len(decode(t, log)["letters"].([]any)) != 2 {
		t.Errorf("mission_log: %s", log)
	}

	// Mail: bob writes alice; alice's letter to bob is announced, read.
	sent, isErr := call(t, cs, "mail_send", map[string]any{"to": "alice", "class": "ask", "what": "who owns core?"})
	if isErr || decode(t, sent)["ok"] != true {
		t.Fatalf("mail_send: %s", sent)
	}
	if refs := g.Git("-C", g.Dir, "for-each-ref", "--format=%(refname)", "refs/m1nd/mail/"); !strings.Contains(refs, "refs/m1nd/mail/alice/bob") {
		t.Errorf("no letter on refs/m1nd/mail/alice/bob:\n%s", refs)
	}
	//lint:ignore SA1019 the test asks for the log messages the server announces letters with
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := flows.SendMail(ctx, ops.MailRequest{Agent: "alice", To: "bob", What: "I do", Answers: []string{decode(t, sent)["id"].(string)}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-logs:
		if !strings.Contains(msg, "1 new letter for bob") {
			t.Errorf("announcement: %q", msg)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("no announcement of the new letter")
	}
	inbox, _ := call(t, cs, "mail_inbox", map[string]any{"unread": true})
	if in := decode(t, inbox); in["unread"] != 1.0 || !strings.Contains(inbox, res.ID) {
		t.Errorf("mail_inbox: %s", inbox)
	}
	if n, err := flows.Pending("bob"); err != nil || n != 1 {
		t.Errorf("the announcement claimed the letter: %d pending (%v), want 1", n, err)
	}
	shown, _ := call(t, cs, "mail_show", map[string]any{"letter_id": res.ID})
	if !strings.Contains(shown, `"what":"I do"`) {
		t.Errorf("mail_show: %s", shown)
	}
	if bad, isErr := call(t, cs, "mail_show", map[string]any{"letter_id": "000000000000"}); !isErr || decode(t, bad)["refused"] != "invalid_letter" {
		t.Errorf("mail_show of no letter: %s", bad)
	}

	// Memory and follow-ups, as bob.
	added, _ := call(t, cs, "memory_add", map[string]any{"text": "core is alice's", "sort": "learned"})
	if a := decode(t, added); a["agent"] != "bob" || a["written"] != true {
		t.Errorf("memory_add: %s", added)
	}
	if recalled, _ := call(t, cs, "memory_recall", map[string]any{"query": "core"}); !strings.Contains(recalled, "core is alice's") {
		t.Errorf("memory_recall: %s", recalled)
	}
	if fu, isErr := call(t, cs, "followup_open", map[string]any{"brief": "review core", "owner": "alice"}); isErr {
		t.Errorf("followup_open: %s", fu)
	}
	if list, _ := call(t, cs, "followup_list", map[string]any{"owner": "alice"}); !strings.Contains(list, "review core") {
		t.Errorf("followup_list: %s", list)
	}
	// Publishing needs bob's agent key: the refusal says how to make one.
	if refused, isErr := call(t, cs, "atlas_publish", map[string]any{"text": "plan: core first", "kind": "plan"}); !isErr || decode(t, refused)["refused"] != "bad_publisher_proof" {
		t.Errorf("atlas_publish without a key: %s", refused)
	}
	if _, err := (memory.Keys{Dir: memory.KeysDir(flows.RuntimeDir())}).Create("bob"); err != nil {
		t.Fatal(err)
	}
	doc, isErr := call(t, cs, "atlas_publish", map[string]any{"text": "plan: core first", "kind": "plan"})
	if isErr {
		t.Fatalf("atlas_publish: %s", doc)
	}
	docID := decode(t, doc)["doc"].(map[string]any)["doc_id"].(string)
	if amended, isErr := call(t, cs, "atlas_amend", map[string]any{"id": docID, "text": "plan: web first"}); isErr {
		t.Errorf("atlas_amend: %s", amended)
	}
	if read, _ := call(t, cs, "atlas_read", map[string]any{"id": docID}); !strings.Contains(read, "web first") {
		t.Errorf("atlas_read: %s", read)
	}
	if sessions, isErr := call(t, cs, "sessions", map[string]any{}); isErr || decode(t, sessions)["ok"] != true {
		t.Errorf("sessions: %s", sessions)
	}
}

// TestMissionPostOfABorrowedLanding: an agent talking MCP posts, for its
// mission B, a landed letter naming the import a human made for mission A
// (the same candidate): refused landed_law as a tool error, nothing
// written; B's own head stays merge_wait.
func TestMissionPostOfABorrowedLanding(t *testing.T) {
	g, flows, cs, _ := connect(t)
	ctx := context.Background()
	g.CommitFiles("files", map[string]string{"core/a.go": "package core\n"})
	if _, err := flows.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	cand := &rules.Receipt{BlockID: "sb_brain_core", Type: "test", Scope: rules.Scope{BlockID: "sb_brain_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: []string{"gate://shared"}, Command: "go test", Cwd: ".", ExitStatus: &exit,
			StartedAt: now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	runner := pinstest.Approve(t, repoOf(t, flows), "b1", "go test")
	mergeWait := func() (string, *chain.Letter, string) {
		opened, err := flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_brain_core", Agent: "runnerd:b1", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		head, _ := flows.Current(opened.Mission.MissionID)
		mw := chain.Next(head.Letter, head.HeadLetterID, now)
		mw.Phase, mw.ReceiptCandidate = chain.PhaseMergeWait, cand
		mw.Gate = &chain.Gate{Command: "go test", ExitStatus: &exit, ArtifactHash: hash}
		att := runner.Sign(t, mw)
		posted, err := flows.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: "runnerd:b1", Attestation: att})
		if err != nil {
			t.Fatal(err)
		}
		return opened.Mission.MissionID, mw, posted.LetterID
	}
	a, _, _ := mergeWait()
	landedA, err := flows.Land(ctx, ops.LandRequest{MissionID: a, Agent: "owner", Origin: rules.OriginHumanTTY, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	b, mwB, mwBID := mergeWait()
	before := g.Git("rev-parse", "refs/m1nd/missions/"+b)
	landed := chain.Next(mwB, mwBID, now)
	landed.Phase = chain.PhaseLanded
	landed.Receipt = &chain.Receipt{Imported: true, StoreVersion: landedA.StoreVersion}
	refused, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(landed.Canonical())})
	if r := decode(t, refused); !isErr || r["refused"] != "landed_law" || !strings.Contains(r["lesson"].(string), "mission "+a+"'s import") {
		t.Fatalf("a borrowed landing through MCP: error %v, %s", isErr, refused)
	}
	if after := g.Git("rev-parse", "refs/m1nd/missions/"+b); after != before {
		t.Fatalf("a refused post moved %s", b)
	}
}

// TestMissionPostOfASelfCertifiedGate: an agent talking MCP posts its own
// merge_wait naming the approved runner b1, its pin and a runnerd
// emitter, with no signature: refused unproven_gate as a tool error,
// nothing written. Naming no runner, the same gate is its claim.
func TestMissionPostOfASelfCertifiedGate(t *testing.T) {
	g, flows, cs, _ := connect(t)
	ctx := context.Background()
	g.CommitFiles("files", map[string]string{"core/a.go": "package core\n"})
	if _, err := flows.Scan(ctx, brain.WriteRequest{Agent: "owner", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	runner := pinstest.Approve(t, repoOf(t, flows), "b1", "go test")
	now := time.Now().UTC().Truncate(time.Second)
	opened, err := flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_brain_core", Agent: "bob", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := flows.Current(opened.Mission.MissionID)
	// bob's work: his branch, whose tip his letters say a gate tested.
	g.Git("branch", "m1nd/"+opened.Mission.MissionID)
	tested := []string{rules.TestedCommitRef + g.Git("rev-parse", "HEAD"), rules.TestedTreeRef + g.Git("rev-parse", "HEAD^{tree}")}
	exit := int64(0)
	hash := "sha256:" + strings.Repeat("ab", 32)
	mw := chain.Next(head.Letter, head.HeadLetterID, now)
	b1 := "b1"
	mw.Phase, mw.RunnerID = chain.PhaseMergeWait, &b1
	mw.Gate = &chain.Gate{Command: "go test", ExitStatus: &exit, ArtifactHash: hash}
	mw.ReceiptCandidate = &rules.Receipt{BlockID: "sb_brain_core", Type: "test", Emitter: &rules.Emitter{Kind: "runnerd", ID: "b1"},
		Scope: rules.Scope{BlockID: "sb_brain_core", BoundaryVersion: 1, ContractVersion: 1},
		Evidence: rules.Evidence{ArtifactHash: hash, EvidenceRefs: append([]string{"gate://" + opened.Mission.MissionID, "pin:" + runner.Pin}, tested...), Command: "go test", Cwd: ".", ExitStatus: &exit,
			StartedAt: now.Add(-time.Minute).Format(rules.WindowLayout), EndedAt: now.Add(-30 * time.Second).Format(rules.WindowLayout)}}
	before := g.Git("rev-parse", "refs/m1nd/missions/"+opened.Mission.MissionID)
	refused, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(mw.Canonical())})
	if r := decode(t, refused); !isErr || r["refused"] != "unproven_gate" || !strings.Contains(r["lesson"].(string), "names runner b1") {
		t.Fatalf("a self-certified gate through MCP: error %v, %s", isErr, refused)
	}
	if after := g.Git("rev-parse", "refs/m1nd/missions/"+opened.Mission.MissionID); after != before {
		t.Fatalf("a refused post moved the mission to %s", after)
	}
	mw.RunnerID, mw.ReceiptCandidate.Emitter = nil, nil
	mw.ReceiptCandidate.Evidence.EvidenceRefs = append([]string{"gate://" + opened.Mission.MissionID}, tested...)
	if claimed, isErr := call(t, cs, "mission_post", map[string]any{"letter": json.RawMessage(mw.Canonical())}); isErr || decode(t, claimed)["phase"] != "merge_wait" {
		t.Fatalf("bob's own claim through MCP: error %v, %s", isErr, claimed)
	}
}

// An agent that talks to m1nd only through MCP, with a client that sets
// no log level and subscribes to nothing, hears of a letter in its next
// tool result, once.
func TestToolResultsNoteNewLetters(t *testing.T) {
	_, flows, cs, _ := connect(t)
	ctx := context.Background()
	send := func(from, what, class string) string {
		t.Helper()
		res, err := flows.SendMail(ctx, ops.MailRequest{Agent: from, To: "bob", What: what, Class: class, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	if _, note, _ := callNoted(t, cs, "followup_list", map[string]any{}); note != "" {
		t.Fatalf("a note with no letter: %q", note)
	}
	first := send("alice", "the port is 7420", "note")
	second := send("carol", "can you review?", "ask")
	_, note, _ := callNoted(t, cs, "followup_list", map[string]any{})
	for _, want := range []string{"2 new letters for you", first + " from alice (note)", second + " from carol (ask)", "mail_show"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	// Once per letter: the next result is quiet, then names only the new one.
	if _, note, _ := callNoted(t, cs, "followup_list", map[string]any{}); note != "" {
		t.Fatalf("the same letters noted twice: %q", note)
	}
	third := send("alice", "and the host is loopback", "note")
	_, note, _ = callNoted(t, cs, "mail_inbox", map[string]any{})
	if !strings.Contains(note, "1 new letter for you since your last call: "+third+" from alice (note)") || strings.Contains(note, first) {
		t.Fatalf("note %q, want only %s", note, third)
	}
	// A refused call carries the note too: the agent hears of letters
	// however its calls go.
	fourth := send("alice", "one more", "note")
	if _, note, isErr := callNoted(t, cs, "mission_show", map[string]any{"mission_id": "msn_0000000000000009"}); !isErr || !strings.Contains(note, fourth) {
		t.Fatalf("refused call: error %v, note %q", isErr, note)
	}
	// Noting claims nothing: the letters still wait for the hooks.
	if n, err := flows.Pending("bob"); err != nil || n != 4 {
		t.Fatalf("pending after the notes: %d, %v; want 4", n, err)
	}
	// A second server process (the client's next session) does not name
	// them again: the agent's record beside its cursor says it was told.
	again, _ := serve(t, flows)
	if _, note, _ := callNoted(t, again, "followup_list", map[string]any{}); note != "" {
		t.Fatalf("a new server process named told letters again: %q", note)
	}
	fifth := send("carol", "after the restart", "note")
	if _, note, _ := callNoted(t, again, "followup_list", map[string]any{}); !strings.Contains(note, "1 new letter for you since your last call: "+fifth) {
		t.Fatalf("note %q, want only %s", note, fifth)
	}
}

// An agent reviews another's work through MCP: alice gets the letter, the
// chain records the request for changes; bob may not review his own.
func TestMissionReviewThroughMCP(t *testing.T) {
	_, flows, cs, _ := connect(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	waiting := func(agent string) string {
		t.Helper()
		opened, err := flows.OpenMission(ctx, ops.MissionRequest{BlockID: "sb_brain_core", Agent: agent, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		head, _ := flows.Current(opened.Mission.MissionID)
		mw := chain.Next(head.Letter, head.HeadLetterID, now)
		mw.Phase = chain.PhaseMergeWait
		exit := int64(0)
		mw.Gate = &chain.Gate{Command: "go test", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("ab", 32)}
		if _, err := flows.Post(ctx, chain.PostRequest{Body: mw.Canonical(), Agent: agent}); err != nil {
			t.Fatal(err)
		}
		return opened.Mission.MissionID
	}
	hers := waiting("alice")
	out, isErr := call(t, cs, "mission_review", map[string]any{"mission_id": hers, "decision": "CHANGE", "body": "name the error"})
	r := decode(t, out)
	if isErr || r["to"] != "alice" || r["letter"] == nil {
		t.Fatalf("mission_review: error %v, %s", isErr, out)
	}
	sent, err := mailbox.New(repoOf(t, flows), flows.Name()).Between(ctx, "alice", "bob")
	if err != nil || len(sent) != 1 || !strings.Contains(sent[0].Letter.What, "# Review of "+hers+": changes requested") {
		t.Fatalf("alice's letter: %v %+v", err, sent)
	}
	if head, _ := flows.Current(hers); !chain.RequestsChanges(head.Letter) {
		t.Fatalf("the head after the review: %s", head.Letter.Phase)
	}
	his := waiting("bob")
	refused, isErr := call(t, cs, "mission_review", map[string]any{"mission_id": his, "decision": "APPROVE"})
	if r := decode(t, refused); !isErr || r["refused"] != "invalid_letter" || r["field"] != "agent" {
		t.Fatalf("bob reviewing his own: error %v, %s", isErr, refused)
	}
}

// repoOf opens the brain's repository again, as another process would, for
// a test that writes as a runner or reads mail between others.
func repoOf(t *testing.T, flows *ops.Flows) *gitstore.Repo {
	t.Helper()
	repo, err := gitstore.Open(flows.WorkTree())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo
}
