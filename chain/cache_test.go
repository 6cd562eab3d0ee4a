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
)

// Docs follows the ref wherever it moves: extended when it grew, rebuilt
// when it was rewound, right again when its index file is damaged.
func TestDocsFollowTheRef(t *testing.T) {
	m, g := newMissions(t, "docs")
	c := chain.Chain{Repo: m.Repo, Ref: "refs/m1nd/mail/bob/alice", File: "mail.json"}
	var commits []gitstore.Hash
	add := func(i int) {
		t.Helper()
		parent, _, _ := m.Repo.ReadRef(c.Ref)
		h, err := c.Append(context.Background(), parent, []byte(fmt.Sprintf(`{"n":%d}`, i)),
			chain.Commit{Author: gitstore.Signature{Name: "alice", Email: "alice@m1nd", When: t0}, Message: "doc\n"})
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
	index := filepath.Join(m.Repo.RuntimeDir(), "cache", "docs-v1", "mail", "bob", "alice")
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
