package laws

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/chain/chaintest"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
)

type chainRig struct {
	t    *testing.T
	g    *gittest.Repo
	repo *gitstore.Repo
	m    *chain.Missions
}

func newChainRig(t *testing.T) *chainRig {
	g := gittest.Init(t, "brain")
	repo, err := gitstore.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return &chainRig{t: t, g: g, repo: repo, m: &chain.Missions{Repo: repo, Brain: "brain"}}
}

// commit writes one file into a commit on parent, the way raw git could.
func (r *chainRig) commit(parent gitstore.Hash, file string, body []byte, message string) gitstore.Hash {
	r.t.Helper()
	return r.commitFiles(parent, map[string][]byte{file: body}, message)
}

// commitFiles writes files into a commit on parent, the way raw git could.
func (r *chainRig) commitFiles(parent gitstore.Hash, files map[string][]byte, message string) gitstore.Hash {
	r.t.Helper()
	var entries []gitstore.TreeEntry
	dirs := map[string][]gitstore.TreeEntry{} // one level of folders: blocks/x.json
	for name, body := range files {
		blob, _ := r.repo.WriteBlob(body)
		if dir, base, ok := strings.Cut(name, "/"); ok {
			dirs[dir] = append(dirs[dir], gitstore.TreeEntry{Name: base, Mode: gitstore.ModeFile, Hash: blob})
			continue
		}
		entries = append(entries, gitstore.TreeEntry{Name: name, Mode: gitstore.ModeFile, Hash: blob})
	}
	for dir, list := range dirs {
		sub, err := r.repo.WriteTree(list)
		if err != nil {
			r.t.Fatal(err)
		}
		entries = append(entries, gitstore.TreeEntry{Name: dir, Mode: gitstore.ModeTree, Hash: sub})
	}
	tree, err := r.repo.WriteTree(entries)
	if err != nil {
		r.t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "forger", Email: "f@x", When: time.Unix(1, 0)}
	c := &gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: message}
	if !parent.IsZero() {
		c.Parents = []gitstore.Hash{parent}
	}
	h, err := r.repo.WriteCommit(c)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// mergeWait makes a mission whose head is merge_wait and returns it.
func (r *chainRig) mergeWait() (*chain.Head, string) {
	r.t.Helper()
	return chaintest.MergeWait(r.t, r.m, "sb_brain_core")
}

func TestCheckUpdateLaws(t *testing.T) {
	r := newChainRig(t)
	head, ref := r.mergeWait()
	archived := chain.Next(head.Letter, head.HeadLetterID, time.Now())
	archived.Phase = chain.PhaseArchived
	forged := r.commit(head.Commit, chain.LetterFile, archived.Canonical(), "archived without the gesture\n")
	honest := r.commit(head.Commit, chain.LetterFile, archived.Canonical(), "archived\n\nM1nd-Origin: human-tty\n")
	skipped := chain.Next(head.Letter, head.HeadLetterID, time.Now())
	skipped.MissionSeq += 1
	gap := r.commit(head.Commit, chain.LetterFile, skipped.Canonical(), "gap\n")
	notALetter := r.commit(head.Commit, "notes.txt", []byte("hi"), "junk\n")
	pretty := r.commit(head.Commit, chain.LetterFile, append(archived.Canonical(), '\n'), "archived\n\nM1nd-Origin: human-tty\n")
	crowded := r.commitFiles(head.Commit, map[string][]byte{chain.LetterFile: archived.Canonical(), "notes.txt": []byte("hi")}, "archived\n\nM1nd-Origin: human-tty\n")
	root := r.commit(gitstore.ZeroHash, chain.LetterFile, []byte("{}"), "root\n")
	// A mission that starts archived: no merge_wait head to supersede.
	archivedFirst := *archived
	archivedFirst.MissionID, archivedFirst.MissionSeq, archivedFirst.PrevLetterID = "msn_00000000a5c1", 1, nil
	archivedRoot := r.commit(gitstore.ZeroHash, chain.LetterFile, archivedFirst.Canonical(), "archived\n\nM1nd-Origin: human-tty\n")
	first, _ := r.repo.ReadCommit(head.Commit)
	never := func(Update) bool { return false }
	for _, tt := range []struct {
		label string
		u     Update
		code  rules.Code // "" = allowed
	}{
		{"extend with a human archive", Update{Old: head.Commit, New: honest, Ref: ref}, ""},
		{"a forged archive", Update{Old: head.Commit, New: forged, Ref: ref}, rules.HumanGestureRequired},
		{"a seq gap", Update{Old: head.Commit, New: gap, Ref: ref}, rules.StaleHead},
		{"an archived first letter", Update{New: archivedRoot, Ref: chain.MissionRefPrefix + archivedFirst.MissionID}, rules.InvalidTransition},
		{"not a letter", Update{Old: head.Commit, New: notALetter, Ref: ref}, rules.InvalidLetter},
		{"not canonical bytes", Update{Old: head.Commit, New: pretty, Ref: ref}, rules.InvalidLetter},
		{"letter.json and another file", Update{Old: head.Commit, New: crowded, Ref: ref}, rules.InvalidLetter},
		{"a rewrite", Update{Old: head.Commit, New: first.Parents[0], Ref: ref}, rules.InvalidTransition},
		{"another history", Update{Old: head.Commit, New: root, Ref: ref}, rules.InvalidTransition},
		{"a deletion", Update{Old: head.Commit, Ref: ref}, rules.InvalidTransition},
		{"a deletion with no old value", Update{Ref: ref}, rules.InvalidTransition},
		{"a store deletion", Update{Old: head.Commit, Ref: brain.StoreRef}, rules.InvalidTransition},
		{"a memory deletion", Update{Old: head.Commit, Ref: "refs/m1nd/memory/a"}, rules.InvalidTransition},
		{"an atlas deletion", Update{Old: head.Commit, Ref: "refs/m1nd/atlas/atl_0123456789ab"}, rules.InvalidTransition},
		{"a mail deletion", Update{Old: head.Commit, Ref: "refs/m1nd/mail/b/a"}, ""},
		{"a conflicts ref", Update{Old: head.Commit, Ref: "refs/m1nd/conflicts/x/y"}, ""},
		{"a branch is none of m1nd's business", Update{Old: head.Commit, Ref: "refs/heads/main"}, ""},
		{"no move", Update{Old: head.Commit, New: head.Commit, Ref: ref}, ""},
	} {
		f := CheckUpdate(r.repo, tt.u, never)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
	// pack-refs removing a loose copy is no deletion.
	if f := CheckUpdate(r.repo, Update{Old: head.Commit, Ref: ref}, func(Update) bool { return true }); f != nil {
		t.Errorf("pack-refs noise refused: %v", f)
	}
}

// storeFiles copies the files of store commit base, at version, with
// edit applied to its blocks/ files: the way raw git could forge a store
// commit on a real store.
func (r *chainRig) storeFiles(base gitstore.Hash, version int64, edit func(blocks map[string][]byte)) map[string][]byte {
	r.t.Helper()
	c, err := r.repo.ReadCommit(base)
	if err != nil {
		r.t.Fatal(err)
	}
	doc, _ := r.repo.ReadFileInTree(c.Tree, brain.StoreFile)
	var snap map[string]any
	if err := json.Unmarshal(doc, &snap); err != nil {
		r.t.Fatal(err)
	}
	snap["store_version"] = version
	doc, _ = json.MarshalIndent(snap, "", "  ")
	out := map[string][]byte{brain.StoreFile: doc}
	blocks := map[string][]byte{}
	names, _ := r.repo.ListFiles(base)
	for _, name := range names {
		if strings.HasPrefix(name, "blocks/") {
			blocks[name], _ = r.repo.ReadFileInTree(c.Tree, name)
		}
	}
	if edit != nil {
		edit(blocks)
	}
	for k, v := range blocks {
		out[k] = v
	}
	return out
}

// scanned is a rig whose store is one scan of core/ and web/.
func scanned(t *testing.T) (*chainRig, gitstore.Hash) {
	r := newChainRig(t)
	r.g.CommitFiles("files", map[string]string{"core/a.go": "package core\n", "web/a.go": "package web\n"})
	store := &brain.Store{Repo: r.repo, Brain: "brain"}
	if _, err := store.Scan(context.Background(), brain.WriteRequest{Agent: "owner"}); err != nil {
		t.Fatal(err)
	}
	v1, _, _ := r.repo.ReadRef(brain.StoreRef)
	return r, v1
}

func TestStoreLinksAddExactlyOne(t *testing.T) {
	r, v1 := scanned(t)
	jump := r.commitFiles(v1, r.storeFiles(v1, 3, nil), "store v3: reconcile\n")
	step := r.commitFiles(v1, r.storeFiles(v1, 2, nil), "store v2: reconcile\n")
	never := func(Update) bool { return false }
	if f := CheckUpdate(r.repo, Update{Old: v1, New: jump, Ref: brain.StoreRef}, never); f == nil || f.Code != string(rules.StoreVersionConflict) {
		t.Errorf("a jump of 2: %v", f)
	}
	if f := CheckUpdate(r.repo, Update{Old: v1, New: step, Ref: brain.StoreRef}, never); f != nil {
		t.Errorf("a step of 1: %v", f)
	}
	other := r.commit(v1, brain.StoreFile, []byte(`{"schema":"m1nd-system-block-store-v9","store_version":2}`), "store v2 of another schema\n")
	if f := CheckUpdate(r.repo, Update{Old: v1, New: other, Ref: brain.StoreRef}, never); f == nil || f.Code != string(rules.SchemaMismatch) {
		t.Errorf("another schema: %v", f)
	}
}

// TestStoreCommitsAreJudgedWhole: a store commit is judged as the store
// writes it (store.json and valid blocks/ only), and a receipt enters it
// only by a human import recorded in that commit. Each forged commit below
// is one raw git could write on a real store.
func TestStoreCommitsAreJudgedWhole(t *testing.T) {
	r, v1 := scanned(t)
	files := func(version int64, edit func(blocks map[string][]byte), extra map[string][]byte) map[string][]byte {
		out := r.storeFiles(v1, version, edit)
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	receipt := `{"block_id":"sb_brain_core","type":"test","scope":{"block_id":"sb_brain_core","boundary_version":1,"contract_version":1},"evidence":{"artifact_hash":"sha256:ab","evidence_refs":["gate://x"],"command":"go test","cwd":".","exit_status":0,"started_at":"2026-11-30T10:00:00Z","ended_at":"2026-11-30T10:01:00Z"}}`
	addReceipt := func(via string) func(map[string][]byte) {
		return func(blocks map[string][]byte) {
			b := blocks["blocks/sb_brain_core.json"]
			b = []byte(strings.Replace(string(b), `"receipts": []`, `"receipts": [{"receipt":`+receipt+`,"store_version":2,"imported_by":"owner","imported_via":"`+via+`","imported_at":"2026-11-30T10:02:00Z"}]`, 1))
			blocks["blocks/sb_brain_core.json"] = b
		}
	}
	ratify := func(blocks map[string][]byte) {
		b := blocks["blocks/sb_brain_core.json"]
		blocks["blocks/sb_brain_core.json"] = []byte(strings.Replace(string(b), `"state": "candidate"`, `"state": "ratified"`, 1))
	}
	// ratified records, in store.json, a ratification of sb_brain_core at v2
	// made via origin ("" for none).
	ratified := func(files map[string][]byte, via string) map[string][]byte {
		if via == "" {
			return files
		}
		var doc map[string]any
		json.Unmarshal(files[brain.StoreFile], &doc)
		doc["skeleton"].(map[string]any)["ratification"] = map[string]any{"ratifier": "owner", "ratified_via": via, "ratified_at": "2026-11-30T10:02:00Z", "store_version": 2, "block_ids": []string{"sb_brain_core"}}
		files[brain.StoreFile], _ = json.MarshalIndent(doc, "", "  ")
		return files
	}
	for _, tt := range []struct {
		label   string
		files   map[string][]byte
		message string
		code    rules.Code // "" = allowed
	}{
		{"a faithful copy at v2", files(2, nil, nil), "store v2: reconcile\n", ""},
		{"an extra file", files(2, nil, map[string][]byte{"notes.txt": []byte("hi")}), "store v2\n", rules.SchemaMismatch},
		{"a block file of junk", files(2, func(b map[string][]byte) { b["blocks/sb_brain_core.json"] = []byte("junk") }, nil), "store v2\n", rules.SchemaMismatch},
		{"a block file that is no block id", files(2, nil, map[string][]byte{"blocks/Not A Block.json": []byte("{}")}), "store v2\n", rules.SchemaMismatch},
		{"an unknown field in a block", files(2, func(b map[string][]byte) {
			b["blocks/sb_brain_core.json"] = []byte(strings.Replace(string(b["blocks/sb_brain_core.json"]), `"name":`, `"colour":"evidence-backed","name":`, 1))
		}, nil), "store v2\n", rules.SchemaMismatch},
		{"a receipt no human imported", files(2, addReceipt("human-tty"), nil), "store v2: receipt_import sb_brain_core test\n", rules.HumanGestureRequired},
		{"a receipt claiming an agent's origin", files(2, addReceipt("agent"), nil), "store v2: receipt_import\n\nM1nd-Origin: agent\n", rules.HumanGestureRequired},
		{"a receipt with the human trailer", files(2, addReceipt("human-tty"), nil), "store v2: receipt_import sb_brain_core test\n\nM1nd-Origin: human-tty\n", ""},
		{"a block ratified with no ratification", ratified(files(2, ratify, nil), ""), "store v2: ratify\n\nM1nd-Origin: human-tty\n", rules.InvalidTransition},
		{"a block ratified by a reconcile", ratified(files(2, ratify, nil), "human-tty"), "store v2: reconcile\n\nM1nd-Origin: human-tty\n", rules.InvalidTransition},
		{"a ratification with no human trailer", ratified(files(2, ratify, nil), "human-tty"), "store v2: ratify\n", rules.HumanGestureRequired},
		{"a ratification by an agent", ratified(files(2, ratify, nil), "agent"), "store v2: ratify\n\nM1nd-Origin: agent\n", rules.HumanGestureRequired},
		{"a human ratification", ratified(files(2, ratify, nil), "human-tty"), "store v2: ratify\n\nM1nd-Origin: human-tty\n", ""},
	} {
		c := r.commitFiles(v1, tt.files, tt.message)
		f := CheckUpdate(r.repo, Update{Old: v1, New: c, Ref: brain.StoreRef}, nil)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
	// Evidence is never taken back: on a store whose v2 holds a receipt, a
	// v3 that drops it from a block still there is refused; the same v3
	// with the receipt kept passes.
	v2 := r.commitFiles(v1, files(2, addReceipt("human-tty"), nil), "store v2: receipt_import sb_brain_core test\n\nM1nd-Origin: human-tty\n")
	dropped := r.commitFiles(v2, files(3, nil, nil), "store v3: reconcile\n")
	if f := CheckUpdate(r.repo, Update{Old: v1, New: dropped, Ref: brain.StoreRef}, nil); f == nil || f.Code != string(rules.InvalidTransition) {
		t.Errorf("a dropped receipt: %v", f)
	}
	for label, edit := range map[string]func(map[string][]byte){
		"a boundary moved back": func(b map[string][]byte) {
			addReceipt("human-tty")(b)
			b["blocks/sb_brain_core.json"] = []byte(strings.Replace(string(b["blocks/sb_brain_core.json"]), `"boundary_version": 1`, `"boundary_version": 0`, 1))
		},
		"a contract emptied": func(b map[string][]byte) {
			addReceipt("human-tty")(b)
			b["blocks/sb_brain_core.json"] = []byte(strings.Replace(string(b["blocks/sb_brain_core.json"]), `"required": [
      "test"
    ]`, `"required": []`, 1))
		},
	} {
		c := r.commitFiles(v2, files(3, edit, nil), "store v3: reconcile\n")
		if f := CheckUpdate(r.repo, Update{Old: v1, New: c, Ref: brain.StoreRef}, nil); f == nil || f.Code != string(rules.InvalidTransition) {
			t.Errorf("%s: %v", label, f)
		}
	}
	copied := r.commitFiles(v2, files(3, func(b map[string][]byte) {
		addReceipt("human-tty")(b)
		entry := `"receipts": [{"receipt":` + receipt + `,"store_version":2,"imported_by":"owner","imported_via":"human-tty","imported_at":"2026-11-30T10:02:00Z"}]`
		for name, body := range b {
			if name != "blocks/sb_brain_core.json" {
				b[name] = []byte(strings.Replace(string(body), `"receipts": []`, entry, 1))
			}
		}
	}, nil), "store v3: receipt_import\n\nM1nd-Origin: human-tty\n")
	if f := CheckUpdate(r.repo, Update{Old: v1, New: copied, Ref: brain.StoreRef}, nil); f == nil || f.Code != string(rules.HumanGestureRequired) {
		t.Errorf("a receipt copied to another block: %v", f)
	}
	kept := r.commitFiles(v2, files(3, addReceipt("human-tty"), nil), "store v3: reconcile\n")
	if f := CheckUpdate(r.repo, Update{Old: v1, New: kept, Ref: brain.StoreRef}, nil); f != nil {
		t.Errorf("a kept receipt: %v", f)
	}
}

func TestVerifyFindsACorruptedChain(t *testing.T) {
	r := newChainRig(t)
	head, ref := r.mergeWait()
	if faults, checked, err := Verify(context.Background(), r.repo, nil); err != nil || len(faults) != 0 || checked != 1 {
		t.Fatalf("clean brain: %v %d %v", faults, checked, err)
	}
	bad := chain.Next(head.Letter, head.HeadLetterID, time.Now())
	bad.MissionSeq = 9
	r.g.Git("update-ref", ref, r.commit(head.Commit, chain.LetterFile, bad.Canonical(), "forged\n").String()) // no hook here
	faults, _, err := Verify(context.Background(), r.repo, nil)
	if err != nil || len(faults) != 1 || faults[0].Ref != ref || faults[0].Code != string(rules.StaleHead) {
		t.Fatalf("faults %v %v", faults, err)
	}
	// A symbolic ref (git writes one without any hook) is a fault, not a crash.
	r.g.Git("symbolic-ref", "refs/m1nd/missions/msn_00000000dead", "refs/heads/main")
	faults, checked, err := Verify(context.Background(), r.repo, nil)
	if err != nil || len(faults) != 2 || checked != 2 || faults[0].Ref != "refs/m1nd/missions/msn_00000000dead" {
		t.Fatalf("with a symbolic ref: %v %d %v", faults, checked, err)
	}
}

func TestVerifyChecksPublisherProofs(t *testing.T) {
	r := newChainRig(t)
	ctx := context.Background()
	keys := memory.Keys{Dir: memory.KeysDir(r.repo.RuntimeDir())}
	keys.Create("alice")
	a := &memory.Atlas{Repo: r.repo, Keys: keys}
	d, err := a.Publish(ctx, "alice", "plan", "ship it", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if faults, _, _ := Verify(context.Background(), r.repo, nil); len(faults) != 0 {
		t.Fatalf("a proven document: %v", faults)
	}
	ref := memory.DocRef(d.DocID)
	head, _, _ := r.repo.ReadRef(ref)
	forged := strings.Replace(string(mustRead(t, r.repo, head)), `"version":1`, `"version":2`, 1)
	forged = strings.Replace(forged, "ship it", "ship nothing", 1)
	r.g.Git("update-ref", ref, r.commit(head, memory.AtlasFile, []byte(forged), "forged\n").String())
	faults, _, _ := Verify(context.Background(), r.repo, nil)
	if len(faults) != 1 || faults[0].Code != string(rules.BadPublisherProof) {
		t.Fatalf("a forged version: %v", faults)
	}
}

func mustRead(t *testing.T, repo *gitstore.Repo, h gitstore.Hash) []byte {
	t.Helper()
	body, _, err := repo.ReadFileAt(h, memory.AtlasFile)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// toyNote is the document of a kind m1nd does not ship, declared the way
// mailbox and memory declare theirs: the laws judge it with no change.
type toyNote struct {
	N    int64  `json:"n"`
	Text string `json:"text"`
}

var toyKind = chain.Define(chain.Spec[*toyNote, any]{
	Shape: chain.Shape{
		Name:   "toy",
		Prefix: "refs/m1nd/lawtoy/",
		File:   "toy.json",
	},
	Decode: func(body []byte) (*toyNote, error) {
		var n toyNote
		if err := json.Unmarshal(body, &n); err != nil {
			return nil, rules.Refusef(rules.InvalidLetter, "", "not a toy note")
		}
		if n.Text == "decode-boom" {
			return nil, errors.New("boom")
		}
		return &n, nil
	},
	Describe: func(any) (string, []chain.Trailer) { return "toy", nil },
	Follows: func(prev, next *chain.Decoded[*toyNote], _ chain.Env) error {
		n := next.Value
		if n.Text == "follow-boom" {
			return errors.New("boom")
		}
		want := int64(1)
		if prev != nil {
			want = prev.Value.N + 1
		}
		if n.N != want {
			return rules.Refusef(rules.StaleHead, "n", "toy notes count up by one: want %d", want)
		}
		return nil
	},
})

// TestToyKindIsJudged: a kind defined outside the laws, in the list they
// are given, is judged by Check and Verify like the kinds m1nd ships; a
// decoder or follow rule error that is not a refusal is an invalid_letter
// fault naming it. Left out of the list, it is none of their business.
func TestToyKindIsJudged(t *testing.T) {
	r := newChainRig(t)
	kinds, err := chain.NewKinds(append(Shipped(), toyKind)...)
	if err != nil {
		t.Fatal(err)
	}
	note := func(parent gitstore.Hash, n int64, text string) gitstore.Hash {
		body, _ := json.Marshal(toyNote{N: n, Text: text})
		return r.commit(parent, "toy.json", body, "toy\n")
	}
	one := note(gitstore.ZeroHash, 1, "first")
	two := note(one, 2, "second")
	for _, tt := range []struct {
		label  string
		u      Update
		code   rules.Code // "" = allowed
		lesson string
	}{
		{"a good chain", Update{New: two, Ref: "refs/m1nd/lawtoy/a"}, "", ""},
		{"a good extension", Update{Old: one, New: two, Ref: "refs/m1nd/lawtoy/a"}, "", ""},
		{"a skipped count", Update{Old: one, New: note(one, 3, "third"), Ref: "refs/m1nd/lawtoy/a"}, rules.StaleHead, "toy notes count up by one: want 2"},
		{"not a note", Update{New: r.commit(gitstore.ZeroHash, "toy.json", []byte("[]"), "x\n"), Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidLetter, "not a toy note"},
		{"no toy.json", Update{New: r.commit(gitstore.ZeroHash, "x.json", []byte("{}"), "x\n"), Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidLetter, "a toy commit holds toy.json: no such file in tree"},
		{"a decoder error", Update{New: note(gitstore.ZeroHash, 1, "decode-boom"), Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidLetter, "boom"},
		{"a follow error", Update{New: note(gitstore.ZeroHash, 1, "follow-boom"), Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidLetter, "boom"},
		{"a deletion", Update{Old: two, Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidTransition, ""},
		{"a rewrite", Update{Old: two, New: one, Ref: "refs/m1nd/lawtoy/a"}, rules.InvalidTransition, ""},
	} {
		f := (&Laws{Strict: true, Kinds: kinds}).Check(r.repo, tt.u)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code) || tt.lesson != "" && f.Lesson != tt.lesson):
			t.Errorf("%s: got %v, want %s %q", tt.label, f, tt.code, tt.lesson)
		}
		if f := CheckUpdate(r.repo, tt.u, nil); f != nil {
			t.Errorf("%s: the shipped laws judged a kind they do not list: %v", tt.label, f)
		}
	}
	r.g.Git("update-ref", "refs/m1nd/lawtoy/good", two.String())
	r.g.Git("update-ref", "refs/m1nd/lawtoy/bad", note(one, 5, "fifth").String())
	faults, checked, err := Verify(context.Background(), r.repo, kinds)
	if err != nil || checked != 2 || len(faults) != 1 || faults[0].Ref != "refs/m1nd/lawtoy/bad" || faults[0].Code != string(rules.StaleHead) {
		t.Fatalf("verify: %d checked, %v %v", checked, faults, err)
	}
	if faults, checked, err := Verify(context.Background(), r.repo, nil); err != nil || checked != 0 || len(faults) != 0 {
		t.Fatalf("verify of the shipped kinds: %d checked, %v %v", checked, faults, err)
	}
}

// TestShippedKinds: the shipped list names every kind m1nd defines once,
// none overlapping another, in the order NewKinds keeps.
func TestShippedKinds(t *testing.T) {
	got, err := chain.NewKinds(Shipped()...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, k := range got {
		names = append(names, k.Name)
		if k != Shipped()[i] {
			t.Errorf("Shipped()[%d] is %s; by prefix it is %s", i, Shipped()[i].Name, k.Name)
		}
	}
	want := []string{"archive", "atlas", "brain", "keys", "mail", "memory", "mission", "pins", "store"}
	if !slices.Equal(names, want) {
		t.Errorf("shipped kinds %v, want %v", names, want)
	}
}

// TestOneDocumentCommitsHoldOneFile: a mail or atlas commit whose tree holds
// its document and anything else is refused invalid_letter, like a mission
// commit; the same document alone passes.
func TestOneDocumentCommitsHoldOneFile(t *testing.T) {
	r := newChainRig(t)
	mail := &mailbox.Letter{TS: "2026-11-30T12:00:00Z", Agent: "alice", To: "bob", Class: mailbox.ClassNote, Brain: "brain", What: "hello"}
	keys := memory.Keys{Dir: memory.KeysDir(r.repo.RuntimeDir())}
	keys.Create("alice")
	d, err := (&memory.Atlas{Repo: r.repo, Keys: keys}).Publish(context.Background(), "alice", "plan", "ship it", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	atlasRef := memory.DocRef(d.DocID)
	head, _, _ := r.repo.ReadRef(atlasRef)
	for _, tt := range []struct {
		ref, file string
		body      []byte
	}{
		{"refs/m1nd/mail/bob/alice", mailbox.File, mail.Canonical()},
		{atlasRef, memory.AtlasFile, mustRead(t, r.repo, head)},
	} {
		alone := r.commit(gitstore.ZeroHash, tt.file, tt.body, "alone\n")
		if f := CheckUpdate(r.repo, Update{New: alone, Ref: tt.ref}, nil); f != nil {
			t.Errorf("%s alone: %v", tt.file, f)
		}
		crowded := r.commitFiles(gitstore.ZeroHash, map[string][]byte{tt.file: tt.body, "notes.txt": []byte("hi")}, "crowded\n")
		f := CheckUpdate(r.repo, Update{New: crowded, Ref: tt.ref}, nil)
		if f == nil || f.Code != string(rules.InvalidLetter) || !strings.Contains(f.Lesson, "not "+tt.file+" alone") {
			t.Errorf("%s and another file: %v", tt.file, f)
		}
	}
}

// countingObjects counts the reads of each object.
type countingObjects struct {
	Objects
	reads map[gitstore.Hash]int
}

func (c *countingObjects) ReadCommit(h gitstore.Hash) (*gitstore.Commit, error) {
	c.reads[h]++
	return c.Objects.ReadCommit(h)
}

func (c *countingObjects) ReadFileInTree(tree gitstore.Hash, name string) ([]byte, error) {
	c.reads[tree]++
	return c.Objects.ReadFileInTree(tree, name)
}

func (c *countingObjects) TreeEntries(tree gitstore.Hash) ([]gitstore.TreeEntry, error) {
	c.reads[tree]++
	return c.Objects.TreeEntries(tree)
}

// TestCheckReadsEachCommitOnce: a check walks the new commits once, oldest
// first, and reads the old head's commit and document once.
func TestCheckReadsEachCommitOnce(t *testing.T) {
	r := newChainRig(t)
	head, ref := r.mergeWait()
	objs := &countingObjects{Objects: r.repo, reads: map[gitstore.Hash]int{}}
	second, _ := r.repo.ReadCommit(head.Commit)
	first, _ := r.repo.ReadCommit(second.Parents[0])
	for _, u := range []Update{{New: head.Commit, Ref: ref}, {Old: second.Parents[0], New: head.Commit, Ref: ref}} {
		clear(objs.reads)
		if f := CheckUpdate(objs, u, nil); f != nil {
			t.Fatalf("%v: %v", u, f)
		}
		for _, h := range []gitstore.Hash{head.Commit, second.Tree, second.Parents[0], first.Tree} {
			if objs.reads[h] != 1 {
				t.Errorf("from %v: %s read %d times", u.Old, h, objs.reads[h])
			}
		}
	}
}

// TestMemoryAndAtlasDocuments: a memory commit is judged like mail (it
// decodes, validates, holds canonical bytes and sits on its writer's ref)
// and an atlas commit holds its document's canonical bytes.
func TestMemoryAndAtlasDocuments(t *testing.T) {
	r := newChainRig(t)
	good := &memory.Event{TS: "2026-11-30T12:00:00Z", Agent: "alice", Kind: memory.KindMemory, Sort: "learned", Text: "raw git can write memories"}
	gossip := *good
	gossip.Sort = "gossip"
	ref, _ := memory.Ref("alice")
	pretty := strings.Replace(string(good.Canonical()), `,"kind"`, `, "kind"`, 1)
	for _, tt := range []struct {
		label string
		ref   string
		file  string
		body  []byte
		code  rules.Code // "" = allowed
	}{
		{"a memory", ref, memory.File, good.Canonical(), ""},
		{"no memory.json", ref, "notes.txt", good.Canonical(), rules.InvalidLetter},
		{"not a memory", ref, memory.File, []byte(`{"hello":"world"}`), rules.InvalidLetter},
		{"a sort that is none", ref, memory.File, gossip.Canonical(), rules.InvalidLetter},
		{"not canonical bytes", ref, memory.File, []byte(pretty), rules.InvalidLetter},
		{"on another agent's ref", "refs/m1nd/memory/bob", memory.File, good.Canonical(), rules.InvalidLetter},
	} {
		c := r.commit(gitstore.ZeroHash, tt.file, tt.body, tt.label+"\n")
		f := CheckUpdate(r.repo, Update{New: c, Ref: tt.ref}, nil)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
	keys := memory.Keys{Dir: memory.KeysDir(r.repo.RuntimeDir())}
	keys.Create("alice")
	d, err := (&memory.Atlas{Repo: r.repo, Keys: keys}).Publish(context.Background(), "alice", "plan", "ship it", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := r.repo.ReadRef(memory.DocRef(d.DocID))
	body := mustRead(t, r.repo, head)
	for _, bad := range [][]byte{append(append([]byte{}, body...), '\n'), []byte(strings.Replace(string(body), `,"version"`, `, "version"`, 1))} {
		c := r.commit(gitstore.ZeroHash, memory.AtlasFile, bad, "v1 again\n")
		if f := CheckUpdate(r.repo, Update{New: c, Ref: memory.DocRef(d.DocID)}, nil); f == nil || f.Code != string(rules.InvalidLetter) || !strings.Contains(f.Lesson, "canonical bytes") {
			t.Errorf("atlas %q: %v", bad, f)
		}
	}
}

// TestKeySetChanges: the first key set registers one key; every later set
// is proven by a key of the set before it, over exactly the new set.
func TestKeySetChanges(t *testing.T) {
	r := newChainRig(t)
	alice, bob, eve := rulestest.New(t, "es256"), rulestest.New(t, "ed25519"), rulestest.New(t, "es256")
	set := func(version int64, keys ...*rulestest.Authenticator) *brain.KeySet {
		k := &brain.KeySet{Schema: brain.KeysSchema, Version: version, Keys: []brain.Passkey{}}
		for _, a := range keys {
			k.Keys = append(k.Keys, brain.Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, AddedAt: "2026-12-01T10:00:00Z"})
		}
		return k
	}
	proven := func(by *rulestest.Authenticator, over *brain.KeySet) string {
		p := by.Assert(rules.GestureChallenge(rules.GestureKeys, over.Canonical()), nil)
		return "keys v2\n\n" + rules.ProofTrailer + ": " + rules.EncodeProof(p) + "\n"
	}
	first := r.commit(gitstore.ZeroHash, brain.KeysFile, set(1, alice).Canonical(), "keys v1\n")
	two := set(2, alice, bob)
	none := set(2)
	none.Removed = []brain.RemovedKey{{Passkey: set(1, alice).Keys[0], RemovedIn: 2}}
	for _, tt := range []struct {
		label string
		u     Update
		code  rules.Code // "" = allowed
	}{
		{"the first key", Update{New: first, Ref: brain.KeysRef}, ""},
		{"two keys at once, first", Update{New: r.commit(gitstore.ZeroHash, brain.KeysFile, set(1, alice, bob).Canonical(), "keys v1\n"), Ref: brain.KeysRef}, rules.InvalidLetter},
		{"a key added with no proof", Update{Old: first, New: r.commit(first, brain.KeysFile, two.Canonical(), "keys v2\n"), Ref: brain.KeysRef}, rules.HumanGestureRequired},
		{"a key added, proven by a registered key", Update{Old: first, New: r.commit(first, brain.KeysFile, two.Canonical(), proven(alice, two)), Ref: brain.KeysRef}, ""},
		{"a key added, proven by the key it adds", Update{Old: first, New: r.commit(first, brain.KeysFile, two.Canonical(), proven(bob, two)), Ref: brain.KeysRef}, rules.HumanGestureRequired},
		{"a proof over another set", Update{Old: first, New: r.commit(first, brain.KeysFile, set(2, alice, eve).Canonical(), proven(alice, two)), Ref: brain.KeysRef}, rules.HumanGestureRequired},
		{"the only key removed, proven: a brain keeps one", Update{Old: first, New: r.commit(first, brain.KeysFile, none.Canonical(), proven(alice, none)), Ref: brain.KeysRef}, rules.InvalidTransition},
		{"a key dropped off the record, proven", Update{Old: first, New: r.commit(first, brain.KeysFile, set(2, bob).Canonical(), proven(alice, set(2, bob))), Ref: brain.KeysRef}, rules.InvalidLetter},
		{"a version skipped", Update{Old: first, New: r.commit(first, brain.KeysFile, set(3, alice, bob).Canonical(), proven(alice, set(3, alice, bob))), Ref: brain.KeysRef}, rules.InvalidLetter},
		{"a key that is none", Update{New: r.commit(gitstore.ZeroHash, brain.KeysFile, []byte(`{"schema":"m1nd-passkeys-v0","version":1,"keys":[{"credential_id":"AA","public_key":"AA","added_at":"2026-12-01T10:00:00Z"}]}`), "keys v1\n"), Ref: brain.KeysRef}, rules.InvalidLetter},
		{"a deletion", Update{Old: first, Ref: brain.KeysRef}, rules.InvalidTransition},
	} {
		f := CheckUpdate(r.repo, tt.u, nil)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
}

// TestArchiveWithAKeyNeedsItsProof: once a passkey is registered, an
// archived letter's commit counts only with a proof by it over the
// letter's canonical bytes; a terminal origin counts only on a commit the
// first key's registration anchored (made before it), wherever the commit
// is read — a hook, a fresh remote, verify. No clock is consulted.
func TestArchiveWithAKeyNeedsItsProof(t *testing.T) {
	r := newChainRig(t)
	head, ref := r.mergeWait()
	key := rulestest.New(t, "ed25519")
	archived := chain.Next(head.Letter, head.HeadLetterID, time.Now())
	archived.SetPhase(chain.PhaseArchived)
	body := archived.Canonical()
	proven := func(p *rules.Proof) string {
		return "archived\n\nM1nd-Origin: human-passkey\n" + rules.ProofTrailer + ": " + rules.EncodeProof(p) + "\n"
	}
	// A terminal archive made before the first key: the registration
	// anchors it.
	before := r.commit(head.Commit, chain.LetterFile, body, "archived before the key\n\nM1nd-Origin: human-tty\n")
	passkey := brain.Passkey{CredentialID: key.ID, PublicKey: key.Key.PKIX, AddedAt: "2026-12-01T10:00:00Z"}
	set := &brain.KeySet{Schema: brain.KeysSchema, Version: 1, Keys: []brain.Passkey{passkey}, BeforeFirstKey: brain.Anchors{ref: before.String()}}
	keys := r.commit(gitstore.ZeroHash, brain.KeysFile, set.Canonical(), "keys v1\n")
	good := key.Assert(rules.GestureChallenge(rules.GestureArchive, body), nil)
	for _, tt := range []struct {
		label   string
		message string
		laws    *Laws
		code    rules.Code // "" = allowed
	}{
		{"signed", proven(good), &Laws{KeysHead: keys, Strict: true}, ""},
		{"at a terminal, after the first key", "archived\n\nM1nd-Origin: human-tty\n", &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"the tray's old claim, after the first key", "archived\n\nM1nd-Origin: human-ui\n", &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"signed over another letter", proven(key.Assert(rules.GestureChallenge(rules.GestureArchive, []byte("{}")), nil)), &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"signed by another key", proven(rulestest.New(t, "ed25519").Assert(rules.GestureChallenge(rules.GestureArchive, body), nil)), &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"a passkey origin with no proof", "archived\n\nM1nd-Origin: human-passkey\n", &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"a proof with a terminal origin", "archived\n\nM1nd-Origin: human-tty\n" + rules.ProofTrailer + ": " + rules.EncodeProof(good) + "\n", &Laws{KeysHead: keys}, rules.HumanGestureRequired},
		{"at a terminal, no key ever", "archived\n\nM1nd-Origin: human-tty\n", &Laws{Strict: true}, ""},
		{"at a terminal, no key, a remote that requires one", "archived\n\nM1nd-Origin: human-tty\n", &Laws{Strict: true, RequirePasskey: true}, rules.HumanGestureRequired},
		{"the tray's old claim, no key, new", "archived\n\nM1nd-Origin: human-ui\n", &Laws{Strict: true}, rules.HumanGestureRequired},
		{"the tray's old claim, no key, history", "archived\n\nM1nd-Origin: human-ui\n", &Laws{}, ""},
	} {
		c := r.commit(head.Commit, chain.LetterFile, body, tt.message)
		f := tt.laws.Check(r.repo, Update{Old: head.Commit, New: c, Ref: ref})
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
	// The anchored terminal archive stands with the key held, read as new
	// (a fresh remote) or from its root (verify); a remote that requires a
	// passkey still refuses it.
	for _, judge := range []*Laws{{KeysHead: keys, Strict: true}, {KeysHead: keys}} {
		if f := judge.Check(r.repo, Update{New: before, Ref: ref}); f != nil {
			t.Errorf("the terminal archive the first key anchored (strict %v): %v", judge.Strict, f)
		}
	}
	if f := (&Laws{KeysHead: keys, Strict: true, RequirePasskey: true}).Check(r.repo, Update{New: before, Ref: ref}); f == nil || f.Code != string(rules.HumanGestureRequired) {
		t.Errorf("the anchored terminal archive, on a remote that requires a passkey: %v", f)
	}

	// The key is removed (keys v2 holds a new one, proven by the old, and
	// keeps the old on record with the archive it signed as its anchor):
	// what the old key signed before its removal stands wherever it is
	// read; what it signs after proves nothing, wherever it is read.
	signed := r.commit(head.Commit, chain.LetterFile, body, proven(good))
	next := rulestest.New(t, "es256")
	rotated := &brain.KeySet{Schema: brain.KeysSchema, Version: 2, BeforeFirstKey: set.BeforeFirstKey,
		Keys:    []brain.Passkey{{CredentialID: next.ID, PublicKey: next.Key.PKIX, AddedAt: "2026-12-01T11:00:00Z"}},
		Removed: []brain.RemovedKey{{Passkey: passkey, RemovedIn: 2, Anchors: brain.Anchors{ref: signed.String()}}}}
	byOld := key.Assert(rules.GestureChallenge(rules.GestureKeys, rotated.Canonical()), nil)
	keys2 := r.commit(keys, brain.KeysFile, rotated.Canonical(), "keys v2\n\n"+rules.ProofTrailer+": "+rules.EncodeProof(byOld)+"\n")
	if f := CheckUpdate(r.repo, Update{Old: keys, New: keys2, Ref: brain.KeysRef}, nil); f != nil {
		t.Fatalf("the key replaced: %v", f)
	}
	for _, judge := range []*Laws{{KeysHead: keys2, Strict: true}, {KeysHead: keys2}} {
		if f := judge.Check(r.repo, Update{New: signed, Ref: ref}); f != nil {
			t.Errorf("signed by the removed key before its removal (strict %v): %v", judge.Strict, f)
		}
		after := r.commit(head.Commit, chain.LetterFile, body, proven(good)+"M1nd-Note: made after the removal\n")
		if f := judge.Check(r.repo, Update{New: after, Ref: ref}); f == nil || f.Code != string(rules.HumanGestureRequired) || !strings.Contains(f.Lesson, "removed in key set v2") {
			t.Errorf("signed by the removed key after its removal (strict %v): %v", judge.Strict, f)
		}
		byNew := r.commit(head.Commit, chain.LetterFile, body, proven(next.Assert(rules.GestureChallenge(rules.GestureArchive, body), nil)))
		if f := judge.Check(r.repo, Update{Old: head.Commit, New: byNew, Ref: ref}); f != nil {
			t.Errorf("signed by the new key (strict %v): %v", judge.Strict, f)
		}
	}
}

// TestStoreCommitsAreOneOperation: a store commit is the operation it
// names and no more. Each forged commit changes what that operation may
// not (or names none); each honest one is what the writer could write.
func TestStoreCommitsAreOneOperation(t *testing.T) {
	r, v1 := scanned(t)
	const core, web = "blocks/sb_brain_core.json", "blocks/sb_brain_web.json"
	// block edits the named block files of v1 as JSON; the store at
	// version 2 around them.
	block := func(edits map[string]func(b map[string]any)) map[string][]byte {
		return r.storeFiles(v1, 2, func(blocks map[string][]byte) {
			for name, edit := range edits {
				var b map[string]any
				if err := json.Unmarshal(blocks[name], &b); err != nil {
					t.Fatal(err)
				}
				edit(b)
				blocks[name], _ = json.MarshalIndent(b, "", "  ")
			}
		})
	}
	skeleton := func(files map[string][]byte, edit func(s map[string]any)) map[string][]byte {
		var doc map[string]any
		json.Unmarshal(files[brain.StoreFile], &doc)
		edit(doc["skeleton"].(map[string]any))
		files[brain.StoreFile], _ = json.MarshalIndent(doc, "", "  ")
		return files
	}
	nextVersion := func(s map[string]any) { s["version"] = s["version"].(float64) + 1 }
	rename := func(name string) func(b map[string]any) {
		return func(b map[string]any) {
			b["name"] = name
			b["candidate_meta"] = map[string]any{"named_by": "runner", "needs_owner_naming": false}
		}
	}
	set := func(key string, value any) func(b map[string]any) {
		return func(b map[string]any) { b[key] = value }
	}
	const edit = "store v2: candidate_edit 1 op (runner)\n\nM1nd-Agent: runnerd:r1\n"
	for _, tt := range []struct {
		label   string
		files   map[string][]byte
		message string
		code    rules.Code // "" = allowed
	}{
		{"no operation named", r.storeFiles(v1, 2, nil), "store v2: tidy\n", rules.InvalidTransition},
		{"a runner's rename", skeleton(block(map[string]func(map[string]any){core: rename("core engine")}), nextVersion), edit, ""},
		{"the same rename by trailer", skeleton(block(map[string]func(map[string]any){core: rename("core engine")}), nextVersion),
			"store v2: tidy\n\nM1nd-Store-Op: candidate_edit\nM1nd-Seat: runner\n", ""},
		{"an edit with no seat", skeleton(block(map[string]func(map[string]any){core: rename("core engine")}), nextVersion),
			"store v2: tidy\n\nM1nd-Store-Op: candidate_edit\n", rules.InvalidTransition},
		{"a runner's name in markdown", skeleton(block(map[string]func(map[string]any){core: rename("see [docs](https://evil.example)")}), nextVersion), edit, rules.InvalidTransition},
		{"a runner in the owner's seat", skeleton(block(map[string]func(map[string]any){core: rename("core engine")}), nextVersion),
			"store v2: candidate_edit 1 op (owner)\n\nM1nd-Agent: runnerd:r1\n", rules.InvalidTransition},
		{"a runner naming as the owner", skeleton(block(map[string]func(map[string]any){core: func(b map[string]any) {
			b["name"] = "core engine"
			b["candidate_meta"] = map[string]any{"named_by": "owner", "needs_owner_naming": false}
		}}), nextVersion), edit, rules.InvalidTransition},
		{"an owner's name is kept verbatim", skeleton(block(map[string]func(map[string]any){core: func(b map[string]any) {
			b["name"] = "**core**"
			b["candidate_meta"] = map[string]any{"named_by": "owner", "needs_owner_naming": false}
		}}), nextVersion), "store v2: candidate_edit 1 op (owner)\n", ""},
		{"an edit that leaves the skeleton version", block(map[string]func(map[string]any){core: rename("core engine")}), edit, rules.InvalidTransition},
		{"an edit with a socket to nowhere", skeleton(block(map[string]func(map[string]any){core: set("sockets", []any{map[string]any{"to": "sb_brain_gone"}})}), nextVersion), edit, rules.InvalidTransition},
		{"an edit that empties a block", skeleton(block(map[string]func(map[string]any){core: set("membership", []any{})}), nextVersion), edit, rules.InvalidTransition},
		{"a scan that renames", block(map[string]func(map[string]any){core: rename("core engine")}), "store v2: scan\n", rules.InvalidTransition},
		{"a scan that adds a block", r.storeFiles(v1, 2, func(b map[string][]byte) {
			b["blocks/sb_brain_docs.json"] = []byte(strings.ReplaceAll(string(b[core]), "core", "docs"))
		}), "store v2: scan\n", ""},
		{"a scan that adds a named block", r.storeFiles(v1, 2, func(b map[string][]byte) {
			b["blocks/sb_brain_docs.json"] = []byte(strings.Replace(strings.ReplaceAll(string(b[core]), "core", "docs"), `"heuristic"`, `"owner"`, 1))
		}), "store v2: scan\n", rules.InvalidTransition},
		{"a reconcile that bumps a changed block", block(map[string]func(map[string]any){core: func(b map[string]any) {
			b["membership_fingerprint"], b["boundary_version"] = "sha256:00", 2
		}}), "store v2: reconcile: bumped sb_brain_core\n", ""},
		{"a reconcile that bumps by 2", block(map[string]func(map[string]any){core: func(b map[string]any) {
			b["membership_fingerprint"], b["boundary_version"] = "sha256:00", 3
		}}), "store v2: reconcile\n", rules.InvalidTransition},
		{"a reconcile that bumps an unchanged block", block(map[string]func(map[string]any){core: set("boundary_version", 2)}), "store v2: reconcile\n", rules.InvalidTransition},
		{"a reconcile that moves a member", block(map[string]func(map[string]any){core: set("membership", []any{map[string]any{"path": "web/", "role": "primary"}})}),
			"store v2: reconcile\n", rules.InvalidTransition},
		{"a reconcile that drops a block", r.storeFiles(v1, 2, func(b map[string][]byte) { delete(b, web) }), "store v2: reconcile\n", rules.InvalidTransition},
		{"a reconcile by a runner", r.storeFiles(v1, 2, nil), "store v2: reconcile\n\nM1nd-Agent: runnerd:r1\n", rules.InvalidTransition},
		{"a first commit that is no scan", r.storeFiles(v1, 1, nil), "store v1: reconcile\n", rules.InvalidTransition},
	} {
		parent := v1
		if strings.HasPrefix(tt.message, "store v1") {
			parent = gitstore.ZeroHash
		}
		c := r.commitFiles(parent, tt.files, tt.message)
		f := CheckUpdate(r.repo, Update{Old: parent, New: c, Ref: brain.StoreRef}, nil)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
}

// TestFoldLaws: a fold is judged as the live refs it folds were: each
// folded chain from its root, its head letter as the fold lists it, each
// mission once; a folded mission takes no more letters, and its live ref
// goes only at a value on the folded chain.
func TestFoldLaws(t *testing.T) {
	r := newChainRig(t)
	// Two finished missions (archived at a terminal, no key ever) and one
	// still judging.
	finished := func() (chain.Folded, gitstore.Hash, gitstore.Hash) {
		head, _ := r.mergeWait()
		l := chain.Next(head.Letter, head.HeadLetterID, time.Now())
		l.SetPhase(chain.PhaseArchived)
		c := r.commit(head.Commit, chain.LetterFile, l.Canonical(), "archived\n\nM1nd-Origin: human-tty\n")
		return chain.Folded{MissionID: l.MissionID, Head: c.String(), Phase: l.Phase, BlockID: l.BlockID, UpdatedAt: l.UpdatedAt}, c, head.Commit
	}
	a, aHead, aBefore := finished()
	b, bHead, _ := finished()
	judging, _ := r.mergeWait()
	foldCommit := func(prev gitstore.Hash, n int64, folded ...chain.Folded) gitstore.Hash {
		folded = append([]chain.Folded{}, folded...)
		sort.Slice(folded, func(i, j int) bool { return folded[i].MissionID < folded[j].MissionID })
		body := (&chain.Fold{Schema: chain.ArchiveSchema, Fold: n, Folded: append([]chain.Folded{}, folded...)}).Canonical()
		blob, _ := r.repo.WriteBlob(body)
		tree, _ := r.repo.WriteTree([]gitstore.TreeEntry{{Name: chain.ArchiveFile, Mode: gitstore.ModeFile, Hash: blob}})
		sig := gitstore.Signature{Name: "owner", Email: "owner@m1nd", When: time.Unix(1, 0)}
		c := &gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "fold\n"}
		if !prev.IsZero() {
			c.Parents = []gitstore.Hash{prev}
		}
		for _, m := range folded {
			h, _ := gitstore.ParseHash(m.Head)
			c.Parents = append(c.Parents, h)
		}
		h, err := r.repo.WriteCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	open := foldCommit(gitstore.ZeroHash, 0)
	one := foldCommit(open, 1, a)
	lied := a
	lied.Phase = chain.PhaseLanded
	wrongHead := a
	wrongHead.Head = aBefore.String() // its merge_wait letter, said to be archived
	judgingFolded := chain.Folded{MissionID: judging.MissionID, Head: judging.Commit.String(), Phase: chain.PhaseLanded, BlockID: "sb_brain_core", UpdatedAt: judging.Letter.UpdatedAt}
	for _, tt := range []struct {
		label string
		old   gitstore.Hash
		new   gitstore.Hash
		code  rules.Code // "" = allowed
	}{
		{"the opening", gitstore.ZeroHash, open, ""},
		{"a fold of two", open, foldCommit(open, 1, a, b), ""},
		{"folds one by one", gitstore.ZeroHash, foldCommit(one, 2, b), ""},
		{"a mission folded twice", one, foldCommit(one, 2, a), rules.InvalidTransition},
		{"a phase the head letter does not have", open, foldCommit(open, 1, lied), rules.InvalidLetter},
		{"a head that is not finished", open, foldCommit(open, 1, wrongHead), rules.InvalidLetter},
		{"a judging mission said to be landed", open, foldCommit(open, 1, judgingFolded), rules.InvalidLetter},
		{"a fold that skips a number", open, foldCommit(open, 2, a), rules.StaleHead},
	} {
		f := (&Laws{Strict: true}).Check(r.repo, Update{Old: tt.old, New: tt.new, Ref: chain.ArchiveRef})
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
	// Parents that are not the heads listed.
	body := (&chain.Fold{Schema: chain.ArchiveSchema, Fold: 1, Folded: []chain.Folded{a}}).Canonical()
	swapped := r.commit(open, chain.ArchiveFile, body, "fold\n") // no head among its parents
	if f := (&Laws{}).Check(r.repo, Update{Old: open, New: swapped, Ref: chain.ArchiveRef}); f == nil || f.Code != string(rules.InvalidLetter) {
		t.Errorf("a fold whose parents are not its heads: %v", f)
	}

	// The live refs of a folded mission, judged with the archive.
	refA := chain.MissionRefPrefix + a.MissionID
	withArchive := &Laws{ArchiveHead: one}
	for _, tt := range []struct {
		label string
		u     Update
		code  rules.Code
	}{
		{"deleted at its folded head", Update{Old: aHead, Ref: refA}, ""},
		{"deleted behind it", Update{Old: aBefore, Ref: refA}, ""},
		{"deleted at a value off its chain", Update{Old: bHead, Ref: refA}, rules.InvalidTransition},
		{"a letter past its folded head", Update{Old: aHead, New: r.commit(aHead, chain.LetterFile, []byte("{}"), "more\n"), Ref: refA}, rules.InvalidTransition},
		{"an unfolded mission deleted", Update{Old: bHead, Ref: chain.MissionRefPrefix + b.MissionID}, rules.InvalidTransition},
	} {
		f := withArchive.Check(r.repo, tt.u)
		switch {
		case tt.code == "" && f != nil:
			t.Errorf("%s: refused %v", tt.label, f)
		case tt.code != "" && (f == nil || f.Code != string(tt.code)):
			t.Errorf("%s: got %v, want %s", tt.label, f, tt.code)
		}
	}
}
