package chain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// toyNote is the document of a kind no m1nd package ships: a test declares
// it to the engine the way mailbox or memory declare theirs.
type toyNote struct {
	N    int    `json:"n"`
	Text string `json:"text,omitempty"`
}

var toyKind = chain.Define(chain.Spec[*toyNote, *toyNote]{
	Shape: chain.Shape{
		Name:   "toy",
		Prefix: "refs/m1nd/toy/",
		File:   "toy.json",
		Race:   chain.RaceRetry,
	},
	Decode: func(body []byte) (*toyNote, error) {
		var n toyNote
		if err := json.Unmarshal(body, &n); err != nil {
			return nil, rules.Refusef(rules.InvalidLetter, "", "not a toy note")
		}
		return &n, nil
	},
	Describe: func(n *toyNote) (string, []chain.Trailer) {
		if n == nil {
			return "toy", nil
		}
		return fmt.Sprintf("toy %d", n.N), []chain.Trailer{{Key: "M1nd-Toy", Value: strconv.Itoa(n.N)}}
	},
})

func TestKindsOf(t *testing.T) {
	kinds, err := chain.NewKinds(chain.MissionKind, toyKind, chain.ArchiveKind)
	if err != nil {
		t.Fatal(err)
	}
	if kinds[0] != chain.ArchiveKind || kinds[1] != chain.MissionKind || kinds[2] != toyKind {
		t.Errorf("NewKinds kept %s, %s, %s; want them by prefix", kinds[0].Name, kinds[1].Name, kinds[2].Name)
	}
	for ref, want := range map[string]string{
		"refs/m1nd/toy/a":                         "toy",
		"refs/m1nd/missions/msn_0123456789ab":     "mission",
		"refs/m1nd/archive":                       "archive",
		"refs/m1nd/archive/x":                     "",
		"refs/m1nd/toy/":                          "",
		"refs/m1nd/toys/a":                        "",
		"refs/heads/main":                         "",
		"refs/m1nd/conflicts/missions/msn_0/abcd": "",
	} {
		k, ok := kinds.Of(ref)
		got := ""
		if ok {
			got = k.Name
		}
		if got != want {
			t.Errorf("Of(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestDefineRefusesWhatTheEngineCannotUse: a kind with no name, a prefix
// outside refs/m1nd/, or no way to read or name a commit panics as it is
// defined; a list of kinds whose names or refs overlap is refused.
func TestDefineRefusesWhatTheEngineCannotUse(t *testing.T) {
	decode := func([]byte) (*toyNote, error) { return nil, nil }
	describe := func(*toyNote) (string, []chain.Trailer) { return "x", nil }
	type spec = chain.Spec[*toyNote, *toyNote]
	for label, s := range map[string]spec{
		"no name":          {Shape: chain.Shape{Prefix: "refs/m1nd/x/", File: "x.json"}, Decode: decode, Describe: describe},
		"outside":          {Shape: chain.Shape{Name: "x", Prefix: "refs/heads/", File: "x.json"}, Decode: decode, Describe: describe},
		"no slash":         {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/x", File: "x.json"}, Decode: decode, Describe: describe},
		"no reader":        {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/x/", File: "x.json"}, Describe: describe},
		"file and no file": {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/x/"}, Decode: decode, Describe: describe},
		"no describe":      {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/x/", File: "x.json"}, Decode: decode},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: defined", label)
				}
			}()
			chain.Define(s)
		}()
	}
	for label, s := range map[string]spec{
		"same prefix":    {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/toy/", File: "x.json"}, Decode: decode, Describe: describe},
		"inside another": {Shape: chain.Shape{Name: "x", Prefix: "refs/m1nd/toy/deep/", File: "x.json"}, Decode: decode, Describe: describe},
		"same name":      {Shape: chain.Shape{Name: "toy", Prefix: "refs/m1nd/x/", File: "x.json"}, Decode: decode, Describe: describe},
	} {
		if _, err := chain.NewKinds(toyKind, chain.Define(s)); err == nil {
			t.Errorf("%s: listed beside the toy kind", label)
		}
	}
}

// TestAppendUniqueDedupsAndRetries: an identical document is appended once;
// writers racing on one RaceRetry chain all land, each exactly once.
func TestAppendUniqueDedupsAndRetries(t *testing.T) {
	m, _ := newMissions(t, "toys")
	c := chain.Chain{Repo: m.Repo, Kind: toyKind, Ref: "refs/m1nd/toy/race"}
	ctx := context.Background()
	meta := chain.Commit{Agent: "runnerd:r1", When: t0}
	first, deduped, err := c.AppendUnique(ctx, []byte(`{"n":1}`), meta)
	if err != nil || deduped {
		t.Fatalf("first: %v %v", deduped, err)
	}
	again, deduped, err := c.AppendUnique(ctx, []byte(`{"n":1}`), meta)
	if err != nil || !deduped || again != first {
		t.Fatalf("replay: %s %v %v, want %s deduped", again, deduped, err, first)
	}
	head, _, _ := c.Head()
	if head.Meta.Author.Name != "runnerd+r1" || head.Meta.Author.Email != "runnerd+r1@m1nd" {
		t.Errorf("signed as %+v, want the ref-safe runnerd+r1", head.Meta.Author)
	}
	// The toy kind hands no trailer: the engine writes the writer's.
	if agent, ok := chain.AgentOf(head.Meta.Message); !ok || agent != "runnerd:r1" {
		t.Errorf("message %q names agent %q (%v), want runnerd:r1", head.Meta.Message, agent, ok)
	}
	const writers = 4
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(toyNote{N: 10 + i})
			_, _, errs[i] = c.AppendUnique(ctx, body, meta)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d lost: %v", i, err)
		}
	}
	docs, err := chain.ReadAll(ctx, m.Repo, toyKind)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, d := range docs {
		seen[string(d.Body)]++
		if d.Ref != c.Ref || d.ID != chain.DocID(d.Body) {
			t.Errorf("doc %+v", d)
		}
	}
	for body, n := range seen {
		if n != 1 {
			t.Errorf("%s appended %d times", body, n)
		}
	}
	if len(seen) != writers+1 || seen[`{"n":1}`] != 1 {
		t.Errorf("the chain holds %v, want the first note and one per writer", seen)
	}
}

func TestMessageCarriesTheKindsTrailersThenTheAgent(t *testing.T) {
	proof := &rules.Proof{CredentialID: "c1", AuthenticatorData: "a", ClientDataJSON: "j", Signature: "s"}
	for name, tc := range map[string]struct {
		meta chain.Commit
		want string
	}{
		"no trailers":   {chain.Commit{Agent: "a1"}, "toy\n\nM1nd-Agent: a1\n"},
		"kind trailers": {chain.Commit{Agent: "owner", Doc: &toyNote{N: 3}}, "toy 3\n\nM1nd-Toy: 3\nM1nd-Agent: owner\n"},
		"a gesture": {chain.Commit{Agent: "human", Doc: &toyNote{N: 4}, Origin: rules.OriginHumanTTY, Proof: proof},
			"toy 4\n\nM1nd-Toy: 4\nM1nd-Origin: human-tty\nM1nd-Proof: " + rules.EncodeProof(proof) + "\nM1nd-Agent: human\n"},
	} {
		got := toyKind.Message(tc.meta)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
		if agent, _ := chain.AgentOf(got); agent != tc.meta.Agent {
			t.Errorf("%s: AgentOf %q, want %q", name, agent, tc.meta.Agent)
		}
		origin, p, err := chain.GestureOf(got)
		if err != nil || origin != tc.meta.Origin || (p == nil) != (tc.meta.Proof == nil) || (p != nil && *p != *proof) {
			t.Errorf("%s: GestureOf = %q %+v %v, want %q %+v", name, origin, p, err, tc.meta.Origin, tc.meta.Proof)
		}
	}
	if _, ok := chain.AgentOf("raw commit\n"); ok {
		t.Error("a message without the trailer names an agent")
	}
}
