package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newBook(t *testing.T) (*Book, *gittest.Repo) {
	t.Helper()
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &Book{Repo: repo}, g
}

func add(t *testing.T, b *Book, agent, sort, text string, i int, opts ...func(*AddRequest)) string {
	t.Helper()
	req := AddRequest{Agent: agent, Sort: sort, Text: text, Now: t0.Add(time.Duration(i) * time.Minute)}
	for _, o := range opts {
		o(&req)
	}
	id, _, err := b.Add(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSupersedeKeepsHistory(t *testing.T) {
	b, g := newBook(t)
	old := add(t, b, "alice", "decided", "store receipts as raw bytes", 1)
	newer := add(t, b, "alice", "decided", "store receipts compacted", 2, func(r *AddRequest) { r.Supersedes = old })
	v, err := b.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m := v.byID[old]; m.State != StateSuperseded || m.SupersededBy != newer || m.Text != "store receipts as raw bytes" {
		t.Fatalf("old memory %+v", m)
	}
	if v.byID[newer].State != StateInForce {
		t.Fatal("the newer memory is not in force")
	}
	// The old one is still in git history, word for word.
	if log := g.Git("log", "-p", "refs/m1nd/memory/alice"); !strings.Contains(log, "store receipts as raw bytes") {
		t.Fatal("the superseded memory left history")
	}
	for _, tt := range []struct {
		req  AddRequest
		want string
	}{
		{AddRequest{Agent: "alice", Sort: "idea", Text: "x", Supersedes: newer, Now: t0}, "supersedes"},          // not decided/learned
		{AddRequest{Agent: "bob", Sort: "decided", Text: "x", Supersedes: newer, Now: t0}, "supersedes"},         // not bob's
		{AddRequest{Agent: "alice", Sort: "decided", Text: "x", Supersedes: old, Now: t0}, "superseded already"}, // already superseded
		{AddRequest{Agent: "alice", Sort: "mood", Text: "x", Now: t0}, "sort"},
		{AddRequest{Agent: "alice", Sort: "did", Text: " ", Now: t0}, "text"},
	} {
		_, _, err := b.Add(context.Background(), tt.req)
		if r, ok := rules.AsRefusal(err); !ok || !strings.Contains(r.Field+" "+r.Lesson, tt.want) {
			t.Errorf("%+v: %v, want a refusal about %s", tt.req, err, tt.want)
		}
	}
}

func TestRecallRanksAndBounds(t *testing.T) {
	b, _ := newBook(t)
	add(t, b, "alice", "learned", "the ledger rounds half to even", 1, func(r *AddRequest) { r.About = []string{"sb_x_core"} })
	add(t, b, "alice", "learned", "the ledger test is flaky under -race", 2)
	add(t, b, "alice", "idea", "rename the web block", 3)
	add(t, b, "bob", "learned", "ledger totals overflow at 2^63", 4)
	add(t, b, "bob", "learned", "bob's private ledger note", 5, func(r *AddRequest) { r.Private = true })
	withdrawn := add(t, b, "alice", "learned", "ledger is fine", 6)
	if _, err := b.Resolve(context.Background(), "alice", withdrawn, StateWithdrawn, "it was not", t0.Add(7*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, cut, err := b.Recall(context.Background(), RecallRequest{Agent: "alice", Query: "ledger flaky"})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text)
	}
	want := "the ledger test is flaky under -race|ledger totals overflow at 2^63|the ledger rounds half to even"
	if strings.Join(texts, "|") != want || cut != 0 {
		t.Fatalf("recall = %q (cut %d), want %q", texts, cut, want)
	}
	if got, cut, _ := b.Recall(context.Background(), RecallRequest{Agent: "alice", Query: "ledger", Limit: 1}); len(got) != 1 || cut != 2 {
		t.Fatalf("limit 1: %d, cut %d", len(got), cut)
	}
	if got, cut, _ := b.Recall(context.Background(), RecallRequest{Agent: "alice", Query: "ledger", MaxBytes: 150}); len(got) != 1 || cut != 2 {
		t.Fatalf("max bytes: %d, cut %d", len(got), cut)
	}
	if got, _, _ := b.Recall(context.Background(), RecallRequest{Agent: "alice", About: "sb_x_core"}); len(got) != 1 {
		t.Fatalf("about: %d", len(got))
	}
	if got, _, _ := b.Recall(context.Background(), RecallRequest{Agent: "bob", Query: "private"}); len(got) != 1 {
		t.Fatal("bob does not recall his own private memory")
	}
}

func TestABriefIsClosedByItsMissionsResult(t *testing.T) {
	b, _ := newBook(t)
	ctx := context.Background()
	m := &chain.Missions{Repo: b.Repo, Brain: "brain"}
	res, err := m.New(ctx, chain.NewMission{BlockID: "sb_brain_core", Agent: "runnerd:b1", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	fid, err := b.OpenFollowup(ctx, "alice", "bob", "find out why the gate is red", "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Link(ctx, "carol", fid, res.MissionID, t0); err == nil {
		t.Fatal("a stranger linked the follow-up")
	}
	if _, err := b.Link(ctx, "bob", fid, res.MissionID, t0); err != nil {
		t.Fatal(err)
	}
	if _, closed, _ := b.CloseEnded(ctx, m, t0); len(closed) != 0 {
		t.Fatal("closed while the mission is judging")
	}
	head, _ := m.Current(res.MissionID)
	next := chain.Next(head.Letter, head.HeadLetterID, t0.Add(time.Hour))
	next.Phase = "failed"
	exit := int64(1)
	next.Gate = &chain.Gate{Command: "go test ./...", ExitStatus: &exit, ArtifactHash: "sha256:" + strings.Repeat("b", 64)}
	next.Verdict = &chain.Verdict{Decision: "REJECT", Gist: "gate exited 1 " + strings.Repeat("é", 3000)}
	if _, err := m.Post(ctx, chain.PostRequest{Body: next.Canonical(), Agent: "runnerd:b1"}); err != nil {
		t.Fatal(err)
	}
	v, closed, err := b.CloseEnded(ctx, m, t0.Add(2*time.Hour))
	if err != nil || len(closed) != 1 || closed[0] != fid {
		t.Fatalf("closed %v %v", closed, err)
	}
	// The view CloseEnded returns is the one after closing, as View reads it.
	if again, _ := b.View(context.Background()); again.fuByID[fid].State != v.fuByID[fid].State {
		t.Fatalf("CloseEnded's view says %s, View says %s", v.fuByID[fid].State, again.fuByID[fid].State)
	}
	f := v.fuByID[fid]
	if f.State != StateRecorded || !strings.HasPrefix(f.Result, "mission "+res.MissionID+" ended failed") || len(f.Result) > MaxResult || !utf8Valid(f.Result) {
		t.Fatalf("follow-up %+v (%d bytes)", f.State, len(f.Result))
	}
	if _, err := b.ResolveFollowup(ctx, "bob", fid, StateWithdrawn, "late", t0); err == nil {
		t.Fatal("a closed follow-up was resolved again")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

func TestAtlasPublisherIsProven(t *testing.T) {
	b, g := newBook(t)
	ctx := context.Background()
	keys := Keys{Dir: KeysDir(b.Repo.RuntimeDir())}
	a := &Atlas{Repo: b.Repo, Keys: keys}
	if _, err := a.Publish(ctx, "alice", "plan", "ship the tray", t0); err == nil {
		t.Fatal("published without a key")
	}
	for _, who := range []string{"alice", "bob"} {
		if _, err := keys.Create(who); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := keys.Create("alice"); err == nil {
		t.Fatal("a key was replaced")
	}
	d, err := a.Publish(ctx, "alice", "plan", "ship the tray", t0)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := keys.CheckProof(d); p != ProofVerified {
		t.Fatalf("proof %s", p)
	}
	_, err = a.Amend(ctx, "bob", d.DocID, "ship the runner first", false, t0)
	if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.NotPublisher {
		t.Fatalf("bob amending alice's plan: %v", err)
	}
	if d2, err := a.Amend(ctx, "alice", d.DocID, "ship the tray, then the runner", false, t0.Add(time.Minute)); err != nil || d2.Version != 2 {
		t.Fatalf("alice amends: %+v %v", d2, err)
	}
	// A version forged with raw git (bob's text under alice's name, a
	// made-up proof) reads as bad, and alice cannot build on it.
	forged := &Doc{DocID: d.DocID, Version: 3, Kind: "plan", Publisher: "alice", State: "open", Text: "bob was here", TS: chain.Timestamp(t0), Proof: strings.Repeat("0", 64)}
	head, _, _ := b.Repo.ReadRef(DocRef(d.DocID))
	g.Git("update-ref", DocRef(d.DocID), g.CommitFile(head.String(), AtlasFile, forged.canonical(true), "forged"))
	cur, _, _ := a.Read(d.DocID)
	if p, _ := keys.CheckProof(cur); p != ProofBad {
		t.Fatalf("a forged proof reads %s", p)
	}
	_, err = a.Amend(ctx, "alice", d.DocID, "fix", false, t0)
	if r, ok := rules.AsRefusal(err); !ok || r.Code != rules.BadPublisherProof {
		t.Fatalf("building on a forged version: %v", err)
	}
	// Keys never enter a ref.
	key, _ := os.ReadFile(filepath.Join(keys.Dir, "alice.key"))
	for _, ref := range strings.Fields(g.Git("for-each-ref", "--format=%(refname)", "refs/")) {
		if strings.Contains(g.Git("log", "-p", ref), strings.TrimSpace(string(key))) {
			t.Fatalf("alice's key is in %s", ref)
		}
	}
	if fi, _ := os.Stat(filepath.Join(keys.Dir, "alice.key")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v", fi.Mode().Perm())
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{`{"ts":"2026-11-30T12:00:00Z","agent":"a","kind":"memory","sort":"idea","text":"x"}`,
		`{"ts":"2026-11-30T12:00:00Z","agent":"a","kind":"resolution","target":"0123456789ab","as":"recorded","rationale":"r"}`,
		`{"kind":"followup"}`, `[]`, `{`, `{"extra":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		if Validate(e) == nil {
			again, err := Decode(e.Canonical())
			if err != nil || string(again.Canonical()) != string(e.Canonical()) {
				t.Fatalf("canonical bytes do not round-trip: %s", e.Canonical())
			}
		}
	})
}
