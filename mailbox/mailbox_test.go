package mailbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newBox(t testing.TB) (*Mailbox, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &Mailbox{Repo: repo, Brain: "brain", Foreign: []string{"jira"}}, g
}

func letter(from, to, class, what string, i int, answers ...string) *Letter {
	return &Letter{TS: t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339), Agent: from, To: to, Class: class, Brain: "brain", What: what, Answers: answers}
}

func send(t testing.TB, b *Mailbox, l *Letter) *SendResult {
	t.Helper()
	res, err := b.Send(context.Background(), l)
	if err != nil {
		t.Fatalf("send %+v: %v", l, err)
	}
	return res
}

func TestSendWritesOneRefPerRecipientAndWriter(t *testing.T) {
	b, g := newBox(t)
	l := letter("alice", "bob", "note", "the ledger test is flaky", 1)
	res := send(t, b, l)
	if res.Ref != "refs/m1nd/mail/bob/alice" || res.ID != l.ID() || res.Deduped {
		t.Fatalf("send = %+v", res)
	}
	// The blob is the canonical bytes: sha256 gives the id.
	body := g.Git("cat-file", "blob", res.Ref+":mail.json")
	if body != string(l.Canonical()) || !strings.HasPrefix(body, `{"ts":"2026-11-30T12:00:01Z","agent":"alice","to":"bob","class":"note","brain":"brain","what":`) {
		t.Fatalf("blob %s", body)
	}
	if subj := g.Git("log", "-1", "--format=%s", res.Ref); subj != "mail "+res.ID+" note to bob" {
		t.Fatalf("subject %q", subj)
	}
	again := send(t, b, l)
	if !again.Deduped || again.Commit != res.Commit {
		t.Fatalf("replay = %+v", again)
	}
	if n := g.Git("rev-list", "--count", res.Ref); n != "1" {
		t.Fatalf("%s commits after a replay", n)
	}
	runner := send(t, b, letter("runnerd:build-1", ToAll, "note", "gate green", 2))
	if runner.Ref != "refs/m1nd/mail/all/runnerd+build-1" {
		t.Fatalf("ref %s", runner.Ref)
	}
}

func TestSendRefusesBadLetters(t *testing.T) {
	b, g := newBox(t)
	for _, tt := range []struct {
		edit  func(l *Letter)
		code  rules.Code
		field string
	}{
		{func(l *Letter) { l.Brain = "other" }, rules.BrainMismatch, "brain"},
		{func(l *Letter) { l.TS = "yesterday" }, rules.InvalidLetter, "ts"},
		{func(l *Letter) { l.Agent = "Alice" }, rules.InvalidLetter, "agent"},
		{func(l *Letter) { l.To = "../bob" }, rules.InvalidLetter, "to"},
		{func(l *Letter) { l.Class = "Note!" }, rules.InvalidLetter, "class"},
		{func(l *Letter) { l.What = "  " }, rules.InvalidLetter, "what"},
		{func(l *Letter) { l.What = "a\x1b[31m" }, rules.InvalidLetter, "what"},
		{func(l *Letter) { l.What = strings.Repeat("x", MaxWhat+1) }, rules.InvalidLetter, "what"},
		{func(l *Letter) { l.Answers = []string{"nope"} }, rules.InvalidLetter, "answers"},
		{func(l *Letter) { l.Tool = "Jira Cloud" }, rules.InvalidLetter, "tool"},
		{func(l *Letter) { l.To = "alice" }, rules.InvalidLetter, "to"},
		{func(l *Letter) { l.Agent = "all" }, rules.InvalidLetter, "agent"},
		{func(l *Letter) { l.What = "bad \xff byte" }, rules.InvalidLetter, "what"},
		{func(l *Letter) { l.What = "csi \u009b2J" }, rules.InvalidLetter, "what"},
		{func(l *Letter) { l.Snippet = "exe\u202etxt.sh" }, rules.InvalidLetter, "snippet"},
		{func(l *Letter) { l.What = "two\nlines\tand a tab" }, "", ""},
	} {
		l := letter("alice", "bob", "note", "hello", 1)
		tt.edit(l)
		if tt.code == "" {
			if err := Validate(l); err != nil {
				t.Errorf("%+v refused: %v", l, err)
			}
			continue
		}
		_, err := b.Send(context.Background(), l)
		if r, ok := rules.AsRefusal(err); !ok || r.Code != tt.code || r.Field != tt.field {
			t.Errorf("%+v: got %v, want %s on %s", l, err, tt.code, tt.field)
		}
	}
	if refs := g.Git("for-each-ref", "refs/m1nd/"); refs != "" {
		t.Fatalf("a refused letter wrote %s", refs)
	}
}

func TestFates(t *testing.T) {
	b, _ := newBox(t)
	ask := send(t, b, letter("alice", "bob", "ask", "why is the gate red?", 1))
	settled := send(t, b, letter("alice", "bob", "ask", "is the store ratified?", 2))
	open := send(t, b, letter("alice", "bob", "ask", "who owns web/?", 3))
	ext := &Letter{TS: t0.Format(time.RFC3339), Agent: "alice", To: "bob", Class: "note", Brain: "brain", Tool: "jira", What: "JIRA-12 moved"}
	external := send(t, b, ext)
	send(t, b, letter("bob", "alice", "note", "looking", 4, ask.ID))
	send(t, b, letter("bob", "alice", ClassTriage, "yes, v3", 5, settled.ID))
	all, err := b.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fates := b.Fates(all)
	for id, want := range map[string]string{ask.ID: FateInFlight, settled.ID: FateFiredClay, open.ID: FateWetInk, external.ID: FateExternal} {
		if fates[id] != want {
			t.Errorf("fate of %s = %s, want %s", id, fates[id], want)
		}
	}
	if !Open(FateWetInk) || !Open(FateInFlight) || Open(FateFiredClay) || Open(FateExternal) {
		t.Error("open = wet_ink + in_flight")
	}
}

func TestDeliverOnceOldestFirstWithinBudget(t *testing.T) {
	b, g := newBox(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		send(t, b, letter("alice", "bob", "note", fmt.Sprintf("from alice %d", i), 2*i))
		send(t, b, letter("carol", ToAll, "note", fmt.Sprintf("from carol %d", i), 2*i+1))
	}
	send(t, b, letter("bob", ToAll, "note", "bob's own letter is not delivered to bob", 20))
	send(t, b, letter("alice", "dave", "note", "not for bob", 21))
	if n, _ := b.Pending("bob"); n != 10 {
		t.Fatalf("pending = %d, want 10", n)
	}
	d, err := b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 4, Bytes: 1 << 20})
	if err != nil || len(d.Letters) != 4 || d.Remaining != 6 {
		t.Fatalf("first delivery: %d letters, %d remaining, %v", len(d.Letters), d.Remaining, err)
	}
	var order []string
	for _, s := range d.Letters {
		order = append(order, s.Letter.What)
	}
	if strings.Join(order, "|") != "from alice 0|from carol 0|from alice 1|from carol 1" {
		t.Fatalf("order %v", order)
	}
	d, _ = b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 100, Bytes: 1 << 20})
	if len(d.Letters) != 6 || d.Remaining != 0 {
		t.Fatalf("second delivery: %d, %d remaining", len(d.Letters), d.Remaining)
	}
	if d, _ = b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 100, Bytes: 1 << 20}); len(d.Letters) != 0 {
		t.Fatalf("third delivery repeated %d letters", len(d.Letters))
	}
	// A byte budget still lets one big letter through.
	send(t, b, letter("alice", "bob", "note", strings.Repeat("x", 5000), 30))
	if d, _ = b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 10, Bytes: 100}); len(d.Letters) != 1 {
		t.Fatalf("a big letter was held back: %d", len(d.Letters))
	}
	// Inbox: newest first, every letter for bob read now.
	inbox, err := b.Inbox(ctx, "bob")
	if err != nil || len(inbox) != 11 || !strings.HasPrefix(inbox[0].Letter.What, "xxx") {
		t.Fatalf("inbox %d %v", len(inbox), err)
	}
	for _, e := range inbox {
		if !e.Read {
			t.Errorf("%s unread after delivery", e.ID)
		}
	}
	// Cursors are runtime state, never refs.
	if refs := g.Git("for-each-ref", "--format=%(refname)", "refs/m1nd/"); strings.Contains(refs, "cursor") {
		t.Fatalf("a cursor became a ref: %s", refs)
	}
}

// Concurrent deliveries from separate handles (as parallel hook processes
// are) each claim different letters; together they deliver each once.
func TestConcurrentDeliveriesClaimEachLetterOnce(t *testing.T) {
	b, g := newBox(t)
	const n = 120
	for i := 0; i < n; i++ {
		send(t, b, letter(fmt.Sprintf("w%d", i%3), "bob", "note", fmt.Sprintf("letter %d", i), i))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			repo, err := gitstore.Open(g.Dir)
			if err != nil {
				t.Error(err)
				return
			}
			defer repo.Close()
			box := &Mailbox{Repo: repo, Brain: "brain"}
			for {
				d, err := box.Deliver(context.Background(), "bob", Turn{}, Budget{Letters: 7, Bytes: 1 << 20})
				if err != nil {
					t.Error(err)
					return
				}
				if len(d.Letters) == 0 {
					return
				}
				mu.Lock()
				for _, s := range d.Letters {
					seen[s.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct letters delivered, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s delivered %d times", id, c)
		}
	}
}

func TestIndexFollowsRefsMovedByPlainGit(t *testing.T) {
	b, g := newBox(t)
	first := send(t, b, letter("alice", "bob", "note", "one", 1))
	send(t, b, letter("alice", "bob", "note", "two", 2))
	if all, _ := b.All(context.Background()); len(all) != 2 {
		t.Fatalf("%d letters", len(all))
	}
	// Rewind the ref with git: the cache is rebuilt, not trusted.
	g.Git("update-ref", first.Ref, first.Commit)
	all, err := b.All(context.Background())
	if err != nil || len(all) != 1 || all[0].Letter.What != "one" {
		t.Fatalf("after a rewind: %d %v", len(all), err)
	}
}

// New reads the foreign tools from git config, as every front end does.
func TestNewReadsForeignTools(t *testing.T) {
	g := gittest.Init(t, "brain")
	g.Git("config", "m1nd.foreignTools", " jira, ,slack ")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	box := New(repo, "brain")
	if strings.Join(box.Foreign, "|") != "jira|slack" || box.Brain != "brain" {
		t.Fatalf("New = %+v", box)
	}
	send(t, box, &Letter{TS: chain.Timestamp(t0), Agent: "alice", To: "bob", Class: "note", Brain: "brain", Tool: "slack", What: "the slack bot is down"})
	all, err := box.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	counts, open := Tally(box.Fates(all))
	if counts[FateExternal] != 1 || open != 0 {
		t.Fatalf("fates of a letter about a foreign tool: %v, %d open", counts, open)
	}
}

// MarkRead moves the cursor to every addressed head; only later letters
// are delivered. A ref whose only new entry does not decode (a raw git
// write) moves the cursor too, so later calls do not read it again.
func TestMarkReadAndUndecodableEntries(t *testing.T) {
	b, g := newBox(t)
	ctx := context.Background()
	send(t, b, letter("alice", "bob", "note", "one", 1))
	send(t, b, letter("carol", ToAll, "note", "two", 2))
	if err := b.MarkRead(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if d, err := b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 10, Bytes: 1 << 20}); err != nil || len(d.Letters) != 0 {
		t.Fatalf("after mark read: %+v %v", d, err)
	}
	inbox, err := b.Inbox(ctx, "bob")
	if err != nil || len(inbox) != 2 || !inbox[0].Read || !inbox[1].Read {
		t.Fatalf("inbox after mark read: %+v %v", inbox, err)
	}
	later := send(t, b, letter("alice", "bob", "note", "three", 3))
	if d, _ := b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 10, Bytes: 1 << 20}); len(d.Letters) != 1 || d.Letters[0].Letter.What != "three" {
		t.Fatalf("a letter after mark read: %+v", d)
	}
	// A raw commit whose mail.json is not a letter, on top of bob's ref.
	commit := g.CommitFile(later.Commit, File, []byte("not a letter"), "raw")
	g.Git("update-ref", later.Ref, commit)
	if d, err := b.Deliver(ctx, "bob", Turn{}, Budget{Letters: 10, Bytes: 1 << 20}); err != nil || len(d.Letters) != 0 {
		t.Fatalf("an undecodable entry was delivered: %+v %v", d, err)
	}
	cur, err := readCursor(b.Repo, "bob")
	if err != nil || cur.Refs[later.Ref] != commit {
		t.Fatalf("the cursor stayed before the undecodable entry: %v %v", cur.Refs[later.Ref], err)
	}
}
