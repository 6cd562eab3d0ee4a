package brain

import (
	"context"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

func edit(t *testing.T, s *Store, seat, ops string) (*EditResult, error) {
	t.Helper()
	v, _, _ := StoreVersion(s.Repo)
	return s.Edit(context.Background(), EditRequest{WriteRequest: write(v), Seat: seat, Ops: []byte(ops)})
}

func mustEdit(t *testing.T, s *Store, seat, ops string) *EditResult {
	t.Helper()
	res, err := edit(t, s, seat, ops)
	if err != nil {
		t.Fatalf("edit %s: %v", ops, err)
	}
	return res
}

func TestEditOps(t *testing.T) {
	for _, tt := range []struct {
		label string
		seat  string
		ops   string
		// reject is the expected lesson fragment, "" when the batch applies.
		reject string
		check  func(t *testing.T, sn *Snapshot)
	}{
		{"rename by the owner, verbatim", "owner", `[{"op":"rename","block_id":"sb_shop_core","name":"Ledger / core","purpose":"sums <everything>"}]`, "",
			func(t *testing.T, sn *Snapshot) {
				b := sn.Block("sb_shop_core")
				if b.Name != "Ledger / core" || b.Purpose != "sums <everything>" || b.CandidateMeta != (CandidateMeta{SeatOwner, false}) {
					t.Fatalf("renamed block %+v", b)
				}
			}},
		{"rename by a runner, plain prose", "runner", `[{"op":"rename","block_id":"sb_shop_core","name":"Ledger core"}]`, "",
			func(t *testing.T, sn *Snapshot) {
				if b := sn.Block("sb_shop_core"); b.Name != "Ledger core" || b.CandidateMeta.NamedBy != SeatRunner {
					t.Fatalf("renamed block %+v", b)
				}
			}},
		{"rename by a runner, URL", "runner", `[{"op":"rename","block_id":"sb_shop_core","purpose":"see https://evil.example"}]`, "at op 0: purpose: URL", nil},
		{"rename of a missing block", "owner", `[{"op":"rename","block_id":"sb_shop_nope","name":"x"}]`, "at op 0: no block sb_shop_nope", nil},
		{"rename with nothing", "owner", `[{"op":"rename","block_id":"sb_shop_core"}]`, "needs a name, a purpose or both", nil},
		{"rename to blank", "owner", `[{"op":"rename","block_id":"sb_shop_core","name":"  "}]`, "name: empty", nil},
		{"unknown op", "owner", `[{"op":"delete","block_id":"sb_shop_core"}]`, `unknown op "delete"`, nil},
		{"unknown field", "owner", `[{"op":"rename","block_id":"sb_shop_core","name":"x","colour":"red"}]`, `rename takes no field "colour"`, nil},
		{"missing field", "owner", `[{"op":"merge","into":"sb_shop_core"}]`, `merge needs "block_ids"`, nil},
		{"not an array", "owner", `{"op":"rename"}`, "candidate_edit rejected: the ops file must be a JSON array", nil},
		{"merge", "owner", `[{"op":"merge","into":"sb_shop_core","block_ids":["sb_shop_cmd"]}]`, "",
			func(t *testing.T, sn *Snapshot) {
				core := sn.Block("sb_shop_core")
				if sn.Block("sb_shop_cmd") != nil || len(core.Membership) != 2 || core.BoundaryVersion != 2 {
					t.Fatalf("after merge: %+v", core)
				}
			}},
		{"merge into itself", "owner", `[{"op":"merge","into":"sb_shop_core","block_ids":["sb_shop_core"]}]`, "cannot merge sb_shop_core into itself", nil},
		{"split", "owner", `[{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/*.go"],["core/deep/"]]}}]`, "",
			func(t *testing.T, sn *Snapshot) {
				one, two := sn.Block("sb_shop_core_split1"), sn.Block("sb_shop_core_split2")
				if sn.Block("sb_shop_core") != nil || one == nil || two == nil || one.Membership[0].Path != "core/*.go" || !one.CandidateMeta.NeedsOwnerNaming {
					t.Fatalf("after split: %+v %+v", one, two)
				}
			}},
		{"split not covering", "owner", `[{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/*.go"],["core/other/"]]}}]`, "core/deep/x.go is in none", nil},
		{"split overlapping", "owner", `[{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/**"],["core/deep/"]]}}]`, "not disjoint", nil},
		{"split into one group", "owner", `[{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/"]]}}]`, "at least 2 groups", nil},
		{"split then rename a child", "owner", `[{"op":"rename","block_id":"sb_shop_core_split2","name":"Deep"},{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/*.go"],["core/deep/**"]]}}]`, "",
			func(t *testing.T, sn *Snapshot) {
				if b := sn.Block("sb_shop_core_split2"); b == nil || b.Name != "Deep" {
					t.Fatalf("renamed child %+v", b)
				}
			}},
		{"move a whole entry", "owner", `[{"op":"move_member","path":"go.mod","from":"sb_shop_root","to":"sb_shop_cmd"}]`, "",
			func(t *testing.T, sn *Snapshot) {
				if sn.Block("sb_shop_cmd").entry("go.mod") < 0 || sn.Block("sb_shop_root").entry("go.mod") >= 0 {
					t.Fatal("go.mod did not move")
				}
			}},
		{"move one file out of a directory", "owner", `[{"op":"move_member","path":"core/deep/x.go","from":"sb_shop_core","to":"sb_shop_cmd"}]`, "",
			func(t *testing.T, sn *Snapshot) {
				files := []string{"core/deep/x.go", "core/ledger.go"}
				if got := sn.Block("sb_shop_core").resolve(files); strings.Join(got, ",") != "core/ledger.go" {
					t.Fatalf("core now covers %v", got)
				}
				if got := sn.Block("sb_shop_cmd").resolve(files); strings.Join(got, ",") != "core/deep/x.go" {
					t.Fatalf("cmd now covers %v", got)
				}
			}},
		{"move a non-member", "owner", `[{"op":"move_member","path":"go.mod","from":"sb_shop_core","to":"sb_shop_cmd"}]`, "go.mod is not a member of sb_shop_core", nil},
		{"move the last member", "owner", `[{"op":"move_member","path":"cmd/","from":"sb_shop_cmd","to":"sb_shop_core"}]`, "final check: block sb_shop_cmd would cover no file at HEAD", nil},
		{"assign an unmapped path", "owner", `[{"op":"assign_unmapped","path":"core/","block_id":"sb_shop_cmd"}]`, "core/deep/x.go is not unmapped", nil},
		{"a new seam is refused", "owner", `[{"op":"split","block_id":"sb_shop_core","by":{"paths":[["core/*.go"],["core/deep/","cmd/"]]}}]`,
			"final check: cmd/shop/main.go would belong to several blocks", nil},
		{"resolve a path that is no seam", "owner", `[{"op":"resolve_seam","path":"go.mod","resolution":"both"}]`, "go.mod is not a seam", nil},
		{"a ratified block is not edited", "owner", "ratified", "sb_shop_github is ratified", nil},
	} {
		t.Run(tt.label, func(t *testing.T) {
			s, g := newStore(t)
			mustScan(t, s)
			ops := tt.ops
			if ops == "ratified" {
				mustEdit(t, s, "owner", `[{"op":"rename","block_id":"sb_shop_github","name":"CI"}]`)
				if _, err := s.Ratify(context.Background(), RatifyRequest{WriteRequest: write(2), BlockIDs: []string{"sb_shop_github"}, Origin: rules.OriginHumanTTY}); err != nil {
					t.Fatal(err)
				}
				ops = `[{"op":"merge","into":"sb_shop_core","block_ids":["sb_shop_github"]}]`
			}
			before := g.Git("rev-parse", StoreRef)
			res, err := edit(t, s, tt.seat, ops)
			if tt.reject != "" {
				r := wantRefusal(t, err, rules.CandidateEditRejected, "*")
				if !strings.Contains(r.Lesson, tt.reject) || !strings.HasPrefix(r.Lesson, "candidate_edit rejected") {
					t.Fatalf("lesson %q, want %q", r.Lesson, tt.reject)
				}
				if g.Git("rev-parse", StoreRef) != before {
					t.Fatal("a rejected batch moved the store")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Applied == 0 {
				t.Fatalf("result %+v", res)
			}
			if tt.check != nil {
				tt.check(t, snap(t, s))
			}
		})
	}
}

// A hostile rename as the last op of a runner's batch refuses the whole
// batch: the ops before it are not applied and the store ref does not move.
// The same batch from the owner applies, verbatim.
func TestHostileRenameInLastOpLeavesTheStoreUnchanged(t *testing.T) {
	s, g := newStore(t)
	mustScan(t, s)
	batch := `[
	  {"op":"rename","block_id":"sb_shop_core","name":"Ledger core","purpose":"sums entries"},
	  {"op":"merge","into":"sb_shop_root","block_ids":["sb_shop_github"]},
	  {"op":"rename","block_id":"sb_shop_cmd","name":"cmd/shop","purpose":"the binary"}
	]`
	before := g.Git("rev-parse", StoreRef)
	_, err := edit(t, s, SeatRunner, batch)
	r := wantRefusal(t, err, rules.CandidateEditRejected, "ops[2]")
	if r.Lesson != "candidate_edit rejected at op 2: name: path separator; nothing was applied" {
		t.Fatalf("lesson %q", r.Lesson)
	}
	if strings.Contains(r.Lesson, "cmd/shop") {
		t.Fatal("the refusal echoes the hostile value")
	}
	if after := g.Git("rev-parse", StoreRef); after != before {
		t.Fatalf("store moved from %s to %s", before, after)
	}
	sn := snap(t, s)
	if sn.Block("sb_shop_core").Name != "core" || sn.Block("sb_shop_github") == nil {
		t.Fatal("an op before the hostile one was applied")
	}
	res := mustEdit(t, s, SeatOwner, batch)
	if res.StoreVersion != 2 || snap(t, s).Block("sb_shop_cmd").Name != "cmd/shop" {
		t.Fatalf("owner batch = %+v", res)
	}
}

func TestSeamsAndUnmappedPaths(t *testing.T) {
	s, g := newStore(t)
	mustScan(t, s)
	// A new root file is unmapped after the scan; assign it.
	g.CommitFiles("notes", map[string]string{"NOTES.md": "x\n"})
	lay, err := s.Layout(snap(t, s))
	if err != nil || strings.Join(lay.Unmapped, ",") != "NOTES.md" {
		t.Fatalf("unmapped = %v %v", lay.Unmapped, err)
	}
	mustEdit(t, s, SeatOwner, `[{"op":"assign_unmapped","path":"NOTES.md","block_id":"sb_shop_root"}]`)
	// A path some block holds is not unmapped.
	_, err = edit(t, s, SeatOwner, `[{"op":"assign_unmapped","path":"core/ledger.go","block_id":"sb_shop_cmd"}]`)
	wantRefusal(t, err, rules.CandidateEditRejected, "ops[0]")
	// A seam that predates the batch (here written directly) is the
	// owner's to resolve.
	sn := snap(t, s)
	cmd := sn.Block("sb_shop_cmd")
	cmd.Membership = append(cmd.Membership, Member{Path: "core/ledger.go", Role: RolePrimary})
	if _, _, err := s.mutate(context.Background(), mutation{expected: sn.StoreVersion, agent: "owner", now: testNow, apply: func(next *Snapshot) (string, error) {
		next.Block("sb_shop_cmd").Membership = cmd.Membership
		return "test seam", nil
	}}); err != nil {
		t.Fatal(err)
	}
	lay, _ = s.Layout(snap(t, s))
	if strings.Join(lay.Contested, ",") != "core/ledger.go" {
		t.Fatalf("contested = %v", lay.Contested)
	}
	mustEdit(t, s, SeatOwner, `[{"op":"resolve_seam","path":"core/ledger.go","resolution":"both"}]`)
	if lay, _ = s.Layout(snap(t, s)); len(lay.Contested) != 0 || len(lay.Owners["core/ledger.go"]) != 2 {
		t.Fatalf("after both: contested %v owners %v", lay.Contested, lay.Owners["core/ledger.go"])
	}
	mustEdit(t, s, SeatOwner, `[{"op":"resolve_seam","path":"core/ledger.go","resolution":"primary:sb_shop_core"}]`)
	if lay, _ = s.Layout(snap(t, s)); strings.Join(lay.Owners["core/ledger.go"], ",") != "sb_shop_core" {
		t.Fatalf("after primary: owners %v", lay.Owners["core/ledger.go"])
	}
	_, err = edit(t, s, SeatOwner, `[{"op":"resolve_seam","path":"core/ledger.go","resolution":"primary:sb_shop_cmd"}]`)
	wantRefusal(t, err, rules.CandidateEditRejected, "ops[0]")
}

func TestMergeRewritesSocketsAndDanglingSocketsAreRefused(t *testing.T) {
	s, _ := newStore(t)
	mustScan(t, s)
	if _, _, err := s.mutate(context.Background(), mutation{expected: 1, agent: "owner", now: testNow, apply: func(next *Snapshot) (string, error) {
		next.Block("sb_shop_root").Sockets = []Socket{{To: "sb_shop_cmd"}, {To: "sb_shop_core"}}
		next.Block("sb_shop_cmd").Sockets = []Socket{{To: "sb_shop_core"}}
		return "test sockets", nil
	}}); err != nil {
		t.Fatal(err)
	}
	mustEdit(t, s, SeatOwner, `[{"op":"merge","into":"sb_shop_core","block_ids":["sb_shop_cmd"]}]`)
	sn := snap(t, s)
	if got := sn.Block("sb_shop_root").Sockets; len(got) != 1 || got[0].To != "sb_shop_core" {
		t.Fatalf("root sockets after merge: %+v", got)
	}
	if got := sn.Block("sb_shop_core").Sockets; len(got) != 0 {
		t.Fatalf("merged block keeps a socket to itself: %+v", got)
	}
}

// Whatever a runner's op carries, a rejection repeats only plain ids and
// paths: no link, markup or override goes back to the proposer.
func TestRejectionsDoNotEchoHostileFields(t *testing.T) {
	s, _ := newStore(t)
	mustScan(t, s)
	for _, ops := range []string{
		`[{"op":"rename","block_id":"see https://evil.example/x \u202e <b>","name":"x"}]`,
		`[{"op":"assign_unmapped","path":"<img src=x onerror=alert(1)>","block_id":"sb_shop_core"}]`,
		`[{"op":"https://evil.example/pwn"}]`,
		`[{"op":"rename","block_id":"sb_shop_core","<script>":1}]`,
		`[{"op":"merge","into":"sb_shop_core","block_ids":["javascript:alert(1)"]}]`,
	} {
		_, err := edit(t, s, SeatRunner, ops)
		r := wantRefusal(t, err, rules.CandidateEditRejected, "*")
		for _, bad := range []string{"http", "<", "\u202e", "javascript", "script"} {
			if strings.Contains(r.Lesson, bad) {
				t.Errorf("lesson %q echoes %q", r.Lesson, bad)
			}
		}
	}
}

func TestAnEditThatChangesNothingWritesNothing(t *testing.T) {
	s, _ := newStore(t)
	mustScan(t, s)
	mustEdit(t, s, SeatOwner, `[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]`)
	res := mustEdit(t, s, SeatOwner, `[{"op":"rename","block_id":"sb_shop_core","name":"Core"}]`)
	if res.Changed || res.StoreVersion != 2 {
		t.Fatalf("restating edit = %+v", res)
	}
}
