package review

import (
	"strings"
	"testing"

	"github.com/m1nd/m1nd/rules"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	commitB = "89abcdef0123456789abcdef0123456789abcdef"
)

func sample() *Review {
	return &Review{
		MissionID: "msn_0123456789ab", Round: 1, Letter: "a1b2c3d4e5f6", Commit: commitA, Decision: Change,
		Body: "Handle the empty input too.\n\nAnd say so in the README.",
		Comments: []Comment{
			{Path: "hello.go", Line: 3, Commit: commitA, Text: "Use a constant here."},
			{Path: "docs/a b:c.md", Line: 12, Commit: commitB, Text: "Two lines:\n\n- one\n  - indented"},
		},
	}
}

func TestRenderParsesBack(t *testing.T) {
	approve := &Review{MissionID: "msn_0123456789ab", Round: 2, Letter: "a1b2c3d4e5f6", Decision: Approve, Comments: []Comment{}}
	onlyComments := sample()
	onlyComments.Body, onlyComments.Decision = "", CommentOnly
	onlyBody := sample()
	onlyBody.Comments = []Comment{}
	for _, r := range []*Review{sample(), approve, onlyComments, onlyBody} {
		if err := r.Validate(); err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		text := r.Render()
		got, ok := Parse(text)
		if !ok {
			t.Fatalf("Parse of its own rendering failed:\n%s", text)
		}
		if got.Render() != text || got.Gist() != r.Gist() || len(got.Comments) != len(r.Comments) {
			t.Fatalf("round trip changed the review:\n%s\n---\n%s", text, got.Render())
		}
		for i := range r.Comments {
			if got.Comments[i] != r.Comments[i] {
				t.Fatalf("comment %d: got %+v, want %+v", i, got.Comments[i], r.Comments[i])
			}
		}
	}
}

func TestRenderReadsForAnAgent(t *testing.T) {
	text := sample().Render()
	for _, want := range []string{
		"# Review of msn_0123456789ab: changes requested\n",
		"Round 1 · letter a1b2c3d4e5f6 · commit " + commitA + "\n",
		"\nHandle the empty input too.\n",
		"## Comments\n",
		"- hello.go:3 · commit " + commitA + "\n  Use a constant here.\n",
		"- docs/a b:c.md:12 · commit " + commitB + "\n  Two lines:\n  \n  - one\n    - indented\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rendering lacks %q:\n%s", want, text)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(r *Review)
		field string
	}{
		{"bad mission", func(r *Review) { r.MissionID = "msn_X" }, "mission_id"},
		{"round 0", func(r *Review) { r.Round = 0 }, "round"},
		{"bad letter", func(r *Review) { r.Letter = "abc" }, "letter"},
		{"short commit", func(r *Review) { r.Commit = "0123456" }, "commit"},
		{"unknown decision", func(r *Review) { r.Decision = "REJECT" }, "decision"},
		{"says nothing", func(r *Review) { r.Body, r.Comments = "", nil }, "body"},
		{"body holds the heading", func(r *Review) { r.Body = "x\n## Comments\ny" }, "body"},
		{"body untrimmed", func(r *Review) { r.Body = " x" }, "body"},
		{"body escape", func(r *Review) { r.Body = "x\x1b[31m" }, "body"},
		{"body tab", func(r *Review) { r.Body = "a\tb" }, "body"},
		{"absolute path", func(r *Review) { r.Comments[0].Path = "/etc/passwd" }, "comments[0].path"},
		{"dotdot path", func(r *Review) { r.Comments[0].Path = "../x" }, "comments[0].path"},
		{"unclean path", func(r *Review) { r.Comments[0].Path = "a//b" }, "comments[0].path"},
		{"path with newline", func(r *Review) { r.Comments[0].Path = "a\nb" }, "comments[0].path"},
		{"path with separator", func(r *Review) { r.Comments[0].Path = "a · commit b" }, "comments[0].path"},
		{"line 0", func(r *Review) { r.Comments[1].Line = 0 }, "comments[1].line"},
		{"comment without commit", func(r *Review) { r.Comments[0].Commit = "" }, "comments[0].commit"},
		{"empty comment", func(r *Review) { r.Comments[0].Text = "" }, "comments[0].text"},
		{"long comment", func(r *Review) { r.Comments[0].Text = strings.Repeat("x", MaxText+1) }, "comments[0].text"},
		{"too many comments", func(r *Review) {
			for len(r.Comments) <= MaxComments {
				r.Comments = append(r.Comments, r.Comments[0])
			}
		}, "comments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sample()
			tc.edit(r)
			err := r.Validate()
			ref, ok := rules.AsRefusal(err)
			if !ok || ref.Code != rules.InvalidLetter || ref.Field != tc.field {
				t.Fatalf("got %v, want invalid_letter on %s", err, tc.field)
			}
		})
	}
}

func TestParseRefusesOtherText(t *testing.T) {
	good := sample().Render()
	for _, text := range []string{
		"",
		"hello",
		"# Review of msn_0123456789ab: changes requested\n",
		strings.Replace(good, "changes requested", "maybe", 1),
		strings.Replace(good, "Round 1", "Round 01", 1),
		strings.Replace(good, ":3 ·", ":03 ·", 1),
		strings.Replace(good, "  Use a constant", "Use a constant", 1),
		strings.TrimSuffix(good, "\n"),
		good + "\n",
	} {
		if r, ok := Parse(text); ok {
			t.Errorf("Parse(%q) = %+v, want not a review", text, r)
		}
	}
}

func TestGist(t *testing.T) {
	r := sample()
	if got, want := r.Gist(), "2 comments: Handle the empty input too."; got != want {
		t.Errorf("Gist = %q, want %q", got, want)
	}
	r.Body = strings.Repeat("é", 200)
	if g := r.Gist(); len(g) > 163 || !strings.HasSuffix(g, "…") || strings.ContainsRune(g, '\uFFFD') {
		t.Errorf("a long gist is cut on a rune: %q", g)
	}
	r.Body, r.Comments = "", nil
	r.Decision = Approve
	if got := r.Gist(); got != "approved" {
		t.Errorf("an empty approval's gist = %q", got)
	}
}

func TestTidy(t *testing.T) {
	r := sample()
	r.Body = "  a\r\nb \n"
	r.Comments[0].Text = "\n x\r\n"
	r.Tidy()
	if r.Body != "a\nb" || r.Comments[0].Text != "x" {
		t.Errorf("Tidy: body %q, text %q", r.Body, r.Comments[0].Text)
	}
}

// FuzzParse holds Parse to its contract on any text: it never panics,
// and what it accepts is a valid review that renders back to the text.
func FuzzParse(f *testing.F) {
	f.Add(sample().Render())
	f.Add("# Review of msn_0123456789ab: approved\n\nRound 1 · letter a1b2c3d4e5f6\n")
	f.Add("hello\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, ok := Parse(text)
		if !ok {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid review: %v", err)
		}
		if r.Render() != text {
			t.Fatalf("Parse accepted text its review does not render to")
		}
	})
}
