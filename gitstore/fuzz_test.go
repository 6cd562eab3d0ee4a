package gitstore_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/m1nd/m1nd/gitstore"
)

// FuzzParseCommit: the commit parser never panics, and whatever it accepts
// and re-encodes parses back to the same commit.
func FuzzParseCommit(f *testing.F) {
	sig := gitstore.Signature{Name: "agent", Email: "agent@m1nd", When: time.Unix(1752062400, 0).In(time.FixedZone("", -5*3600))}
	c := &gitstore.Commit{Tree: gitstore.Hash{1}, Parents: []gitstore.Hash{{2}}, Author: sig, Committer: sig, Message: "msn_0123456789ab #2 executing sb_x\n\nM1nd-Letter: 0123456789ab\n"}
	f.Add(c.Encode())
	f.Add([]byte("tree 0000000000000000000000000000000000000000\n\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig -----BEGIN\n continued\n -----END\nauthor a <b> 1 +0000\n\nmsg"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := gitstore.ParseCommit(data)
		if err != nil {
			return
		}
		again, err := gitstore.ParseCommit(c.Encode())
		if err != nil {
			t.Fatalf("re-encoded commit does not parse: %v", err)
		}
		if again.Tree != c.Tree || len(again.Parents) != len(c.Parents) {
			t.Fatalf("round trip changed the commit: %+v vs %+v", again, c)
		}
	})
}

// FuzzParseTree: the tree parser never panics and round-trips entries.
func FuzzParseTree(f *testing.F) {
	f.Add([]byte("100644 letter.json\x00aaaaaaaaaaaaaaaaaaaa"))
	f.Add([]byte("40000 dir\x00bbbbbbbbbbbbbbbbbbbb100644 f\x00cccccccccccccccccccc"))
	f.Add([]byte("100644 short\x00abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := gitstore.ParseTree(data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		for _, e := range entries {
			buf.WriteString(e.Mode + " " + e.Name + "\x00")
			buf.Write(e.Hash[:])
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("tree did not round-trip")
		}
	})
}

// FuzzValidRefName: whatever ValidRefName accepts is also a name git's
// check-ref-format rules that matter to m1nd would accept.
func FuzzValidRefName(f *testing.F) {
	for _, s := range []string{"refs/m1nd/missions/msn_0123456789ab", "refs/m1nd/../x", "refs/a.lock", "refs/m1nd/mail/runnerd+r1/owner"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !gitstore.ValidRefName(name) {
			return
		}
		if bytes.ContainsAny([]byte(name), " ~^:?*[\\\x00\x7f") || bytes.Contains([]byte(name), []byte("..")) || bytes.Contains([]byte(name), []byte("//")) {
			t.Fatalf("accepted %q", name)
		}
	})
}
