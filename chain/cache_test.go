package chain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// Docs follows the ref wherever it moves: extended when it grew, rebuilt
// when it was rewound, right again when its index file is damaged.
func TestDocsFollowTheRef(t *testing.T) {
	m, g := newMissions(t, "docs")
	c := chain.Chain{Repo: m.Repo, Kind: toyKind, Ref: "refs/m1nd/toy/notes"}
	var commits []gitstore.Hash
	add := func(i int) {
		t.Helper()
		parent, _, _ := m.Repo.ReadRef(c.Ref)
		h, err := c.Append(context.Background(), parent, []byte(fmt.Sprintf(`{"n":%d}`, i)),
			chain.Commit{Agent: "alice", When: t0})
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
	}
	bodies := func(docs []chain.Doc) string {
		var out []string
		for _, d := range docs {
			if d.ID != chain.LetterID(d.Body) {
				t.Fatalf("doc %s has id %s", d.Body, d.ID)
			}
			out = append(out, string(d.Body))
		}
		return strings.Join(out, " ")
	}
	read := func(want string) {
		t.Helper()
		head, _, _ := m.Repo.ReadRef(c.Ref)
		docs, err := c.Docs(head)
		if err != nil || bodies(docs) != want {
			t.Fatalf("docs = %q, %v; want %q", bodies(docs), err, want)
		}
	}
	for i := 1; i <= 3; i++ {
		add(i)
	}
	read(`{"n":1} {"n":2} {"n":3}`)
	index := filepath.Join(m.Repo.RuntimeDir(), "cache", "docs-v1", "toy", "notes")
	add(4)
	read(`{"n":1} {"n":2} {"n":3} {"n":4}`) // extended from the cached head
	if data, err := os.ReadFile(index); err != nil || !strings.HasPrefix(string(data), commits[3].String()+"\n") {
		t.Fatalf("the index is not at the new head: %q %v", data, err)
	}
	g.Git("update-ref", c.Ref, commits[1].String())
	read(`{"n":1} {"n":2}`) // rewound by plain git: rebuilt
	if err := os.WriteFile(index, []byte(commits[1].String()+"\nnot a line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read(`{"n":1} {"n":2}`) // a damaged index is rebuilt, never trusted
}

// DecodeCanonical takes a stored document only in its canonical bytes.
func TestDecodeCanonical(t *testing.T) {
	type doc struct {
		Kind string `json:"kind"`
		Text string `json:"text,omitempty"`
	}
	for _, tt := range []struct {
		label, data string
		ok          bool
	}{
		{"canonical", `{"kind":"note","text":"a & b"}`, true},
		{"text left out", `{"kind":"note"}`, true},
		{"spaced", `{"kind": "note"}`, false},
		{"keys out of order", `{"text":"x","kind":"note"}`, false},
		{"a key in other case", `{"Kind":"note"}`, false},
		{"a key twice", `{"kind":"note","kind":"ask"}`, false},
		{"an unknown key", `{"kind":"note","extra":1}`, false},
		{"an empty optional written", `{"kind":"note","text":""}`, false},
		{"trailing data", `{"kind":"note"}{}`, false},
		{"HTML escaped", `{"kind":"note","text":"a \u0026 b"}`, false},
		{"invalid UTF-8", "{\"kind\":\"n\xffte\"}", false},
		{"not JSON", `{`, false},
	} {
		var d doc
		err := chain.DecodeCanonical([]byte(tt.data), &d, "x.json")
		if tt.ok != (err == nil) {
			t.Errorf("%s: %v", tt.label, err)
			continue
		}
		if r, isRefusal := rules.AsRefusal(err); err != nil && (!isRefusal || r.Code != rules.InvalidLetter || !strings.HasPrefix(r.Lesson, "x.json ")) {
			t.Errorf("%s: %v is not an invalid_letter refusal naming x.json", tt.label, err)
		}
	}
}
