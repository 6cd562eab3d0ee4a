package testscripts

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// e2eToy is the document of a kind m1nd does not ship. This test binary,
// which is also the m1nd that testscript puts on PATH, hands the CLI the
// shipped kinds and this one (testKinds), so the git hook and m1nd verify
// started as processes judge it the way they judge missions: defined once,
// listed, and nothing else changed.
type e2eToy struct {
	N int64 `json:"n"`
}

var e2eToyKind = chain.Define(chain.Spec[*e2eToy, *e2eToy]{
	Shape: chain.Shape{
		Name:   "e2etoy",
		Prefix: "refs/m1nd/e2etoy/",
		File:   "toy.json",
	},
	Decode: func(body []byte) (*e2eToy, error) {
		var n e2eToy
		if err := json.Unmarshal(body, &n); err != nil {
			return nil, rules.Refusef(rules.InvalidLetter, "", "not a toy count")
		}
		return &n, nil
	},
	Describe: func(n *e2eToy) (string, []chain.Trailer) { return fmt.Sprintf("toy %d", n.N), nil },
	Follows: func(prev, next *chain.Decoded[*e2eToy], _ chain.Env) error {
		want := int64(1)
		if prev != nil {
			want = prev.Value.N + 1
		}
		if got := next.Value.N; got != want {
			return rules.Refusef(rules.StaleHead, "n", "a toy count goes up by one: this one says %d, want %d", got, want)
		}
		return nil
	},
})

// testKinds are the kinds every m1nd this binary runs judges by: the
// shipped ones and the toy.
func testKinds() (chain.Kinds, error) {
	return chain.NewKinds(append(laws.Shipped(), e2eToyKind)...)
}

// TestToyKindThroughGitHookAndVerify: with only the kind above, listed,
// the reference-transaction hook that m1nd init installs refuses a raw git
// write that breaks the toy kind's law, and m1nd verify finds one written
// past the hook.
func TestToyKindThroughGitHookAndVerify(t *testing.T) {
	g := gittest.Init(t, "toys")
	m1nd := func(args ...string) (string, error) {
		cmd := exec.Command(m1ndBin(t), args...)
		cmd.Dir, cmd.Env = g.Dir, gittest.Env(t)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := m1nd("init"); err != nil {
		t.Fatalf("m1nd init: %v\n%s", err, out)
	}
	if out, err := m1nd("hooks", "install"); err != nil { // the guard, as where agents write
		t.Fatalf("m1nd hooks install: %v\n%s", err, out)
	}
	one := g.CommitFile("", "toy.json", []byte(`{"n":1}`), "one")
	g.Git("update-ref", "refs/m1nd/e2etoy/a", one)
	skip := g.CommitFile(one, "toy.json", []byte(`{"n":3}`), "three")
	out, err := g.TryGit("update-ref", "refs/m1nd/e2etoy/a", skip)
	if err == nil || !strings.Contains(out, "m1nd: refused: stale_head: a toy count goes up by one: this one says 3, want 2 (refs/m1nd/e2etoy/a)") {
		t.Fatalf("the hook let a skipped count through: %v\n%s", err, out)
	}
	if head := g.Git("rev-parse", "refs/m1nd/e2etoy/a"); head != one {
		t.Fatalf("the refused update moved the ref to %s", head)
	}
	g.Git("-c", "core.hooksPath=/dev/null", "update-ref", "refs/m1nd/e2etoy/a", skip)
	out, err = m1nd("verify")
	if code := exitCode(err); code != 3 || !strings.Contains(out, "refs/m1nd/e2etoy/a") || !strings.Contains(out, "stale_head") {
		t.Fatalf("verify (exit %d) did not find the skipped count:\n%s", code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
