// Package review is a human's (or a reviewing agent's) word on a mission's
// work: a verdict, a body and comments anchored to lines of the diff. A
// review travels as one mail letter to the mission's agent, whose text is
// the review rendered as Markdown (Render), so an agent that reads only its
// inbox or its packet sees every comment with its anchor; Parse reads that
// text back, so the thread is rebuilt from what was sent and from nothing
// else. A review that requests changes is also recorded on the mission's
// chain as a review letter (verdict CHANGE) whose packet_ref is the
// sha256 of the rendered text: the law that lets work return to a mission
// waiting to land (chain.CheckTransition).
//
// The package is pure: it reads and writes nothing.
package review

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// Decisions a review makes. Change and Approve are the mission letter's
// verdict decisions; CommentOnly is a review that decides nothing (only mail).
const (
	Change      = "CHANGE"
	Approve     = "APPROVE"
	CommentOnly = "COMMENT"
)

// Limits on a review, so that its rendering fits in one mail letter (16
// KiB) with room to spare.
const (
	MaxComments = 50
	MaxBody     = 8 << 10
	MaxText     = 2 << 10
	MaxPath     = 256
	MaxRound    = 999
)

// Review is one review of a mission's work.
type Review struct {
	MissionID string `json:"mission_id"`
	// Round is which round of the work it reviews: 1 for the work first
	// gated, one more after each review that requested changes.
	Round int `json:"round"`
	// Letter is the id of the letter reviewed (the merge_wait, or a failed
	// letter for a retry).
	Letter string `json:"letter"`
	// Commit is the commit the reviewer read, full hex; "" when the work
	// has no commit (a mission that failed before its agent committed).
	Commit   string    `json:"commit,omitempty"`
	Decision string    `json:"decision"`
	Body     string    `json:"body,omitempty"`
	Comments []Comment `json:"comments"`
}

// Comment is one comment on a line of the diff, anchored to the file,
// the line (in the new version of the file) and the commit it was read at.
type Comment struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Commit string `json:"commit"`
	Text   string `json:"text"`
}

// state is how a decision reads in a review's title.
func state(decision string) string {
	switch decision {
	case Change:
		return "changes requested"
	case Approve:
		return "approved"
	case CommentOnly:
		return "comments"
	}
	return ""
}

// decisionOf is state's inverse ("" for none).
func decisionOf(s string) string {
	for _, d := range []string{Change, Approve, CommentOnly} {
		if state(d) == s {
			return d
		}
	}
	return ""
}

// commentsHeading opens a review's comments; a body cannot hold it.
const commentsHeading = "## Comments"

func invalid(field, format string, args ...any) error {
	return rules.Refusef(rules.InvalidLetter, field, format, args...)
}

// Validate says what is wrong with a review, as an invalid_letter refusal
// naming the field, or nil. A review that requests changes or comments
// says something (a body or a comment); text is trimmed, on safe
// characters, within the limits.
func (r *Review) Validate() error {
	switch {
	case !chain.ValidMissionID(r.MissionID):
		return invalid("mission_id", "a review names its mission: msn_ and 12 lowercase hex digits")
	case r.Round < 1 || r.Round > MaxRound:
		return invalid("round", "a review's round is 1 to %d", MaxRound)
	case !chain.ValidLetterID(r.Letter):
		return invalid("letter", "a review names the letter it reviews: 12 lowercase hex digits")
	case r.Commit != "" && !fullHash(r.Commit):
		return invalid("commit", "a review's commit is a full commit hash (40 or 64 lowercase hex digits)")
	case state(r.Decision) == "":
		return invalid("decision", "a review's decision is CHANGE, APPROVE or COMMENT")
	case r.Decision != Approve && r.Body == "" && len(r.Comments) == 0:
		return invalid("body", "a review that requests changes or comments says what: give a body or a comment on a line")
	case len(r.Comments) > MaxComments:
		return invalid("comments", "a review holds at most %d comments", MaxComments)
	}
	if err := checkText("body", r.Body, MaxBody); err != nil {
		return err
	}
	for _, line := range strings.Split(r.Body, "\n") {
		if line == commentsHeading {
			return invalid("body", "the body cannot hold the line %q, which opens the comments", commentsHeading)
		}
	}
	for i, c := range r.Comments {
		if err := c.validate(fmt.Sprintf("comments[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Comment) validate(field string) error {
	switch {
	case c.Path == "" || len(c.Path) > MaxPath || rules.HasUnsafeText(c.Path) || strings.ContainsAny(c.Path, "\n\t\\"):
		return invalid(field+".path", "a comment's path is a file of the diff, on one line, at most %d bytes", MaxPath)
	case path.IsAbs(c.Path) || path.Clean(c.Path) != c.Path || c.Path == "." || c.Path == ".." || strings.HasPrefix(c.Path, "../"):
		return invalid(field+".path", "a comment's path is relative to the repository's root, clean (no ./, .. or //)")
	case strings.Contains(c.Path, " · "):
		return invalid(field+".path", "a comment's path cannot hold \" · \", which separates its anchor")
	case c.Line < 1 || c.Line > 1e7:
		return invalid(field+".line", "a comment's line is a line number of the file, from 1")
	case !fullHash(c.Commit):
		return invalid(field+".commit", "a comment names the commit it was read at: a full commit hash")
	case c.Text == "":
		return invalid(field+".text", "a comment says something")
	}
	return checkText(field+".text", c.Text, MaxText)
}

// checkText holds text to what a review may carry: trimmed, safe, short.
func checkText(field, s string, max int) error {
	switch {
	case len(s) > max:
		return invalid(field, "%s is longer than %d bytes", field, max)
	case rules.HasUnsafeText(s) || strings.Contains(s, "\t"):
		return invalid(field, "%s holds invalid UTF-8, a tab, a control character or a bidirectional override", field)
	case s != strings.TrimSpace(s):
		return invalid(field, "%s starts or ends with white space", field)
	}
	return nil
}

func fullHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// Tidy trims a review's body and comment texts and turns the line ends
// of a Windows editor into new lines, as Validate wants them.
func (r *Review) Tidy() {
	r.Body = tidy(r.Body)
	for i := range r.Comments {
		r.Comments[i].Text = tidy(r.Comments[i].Text)
	}
}

func tidy(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// Gist is the review in one line, as the review letter's verdict carries
// it: how many comments, and the body's first line.
func (r *Review) Gist() string {
	var parts []string
	if n := len(r.Comments); n > 0 {
		parts = append(parts, rules.Count(n, "comment"))
	}
	if first, _, _ := strings.Cut(r.Body, "\n"); first != "" {
		parts = append(parts, first)
	}
	gist := strings.Join(parts, ": ")
	if gist == "" {
		gist = state(r.Decision)
	}
	if len(gist) > 160 {
		gist = strings.ToValidUTF8(gist[:157], "") + "…"
	}
	return gist
}

// State is how the review's decision reads: changes requested, approved,
// comments.
func (r *Review) State() string { return state(r.Decision) }

// Title is the first line of a review's rendering.
func (r *Review) Title() string {
	return "# Review of " + r.MissionID + ": " + r.State()
}

// Render is the review as the agent reads it: Markdown, every comment
// with its anchor (file:line and the commit it was read at). Parse reads
// it back.
func (r *Review) Render() string {
	var b strings.Builder
	b.WriteString(r.Title())
	b.WriteString("\n\nRound " + strconv.Itoa(r.Round) + " · letter " + r.Letter)
	if r.Commit != "" {
		b.WriteString(" · commit " + r.Commit)
	}
	b.WriteString("\n")
	if r.Body != "" {
		b.WriteString("\n" + r.Body + "\n")
	}
	if len(r.Comments) > 0 {
		b.WriteString("\n" + commentsHeading + "\n\n")
		for _, c := range r.Comments {
			fmt.Fprintf(&b, "- %s:%d · commit %s\n", c.Path, c.Line, c.Commit)
			for _, line := range strings.Split(c.Text, "\n") {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	return b.String()
}

// Parse reads a rendered review back; ok is false when text is not one
// (any other letter), and a text that is one but breaks its laws is not
// one either.
func Parse(text string) (*Review, bool) {
	lines := strings.Split(text, "\n")
	if len(lines) < 4 || lines[1] != "" || lines[len(lines)-1] != "" {
		return nil, false
	}
	lines = lines[:len(lines)-1]
	r := &Review{Comments: []Comment{}}
	title, ok := strings.CutPrefix(lines[0], "# Review of ")
	if !ok {
		return nil, false
	}
	id, st, ok := strings.Cut(title, ": ")
	if !ok {
		return nil, false
	}
	r.MissionID, r.Decision = id, decisionOf(st)
	if !r.parseMeta(lines[2]) {
		return nil, false
	}
	rest := lines[3:]
	body, comments := rest, []string(nil)
	for i, line := range rest {
		if line == commentsHeading {
			body, comments = rest[:i], rest[i+1:]
			break
		}
	}
	r.Body = strings.TrimSpace(strings.Join(body, "\n"))
	if !r.parseComments(comments) || r.Validate() != nil || r.Render() != text {
		return nil, false
	}
	return r, true
}

// parseMeta reads "Round N · letter ID[ · commit HASH]".
func (r *Review) parseMeta(line string) bool {
	f := strings.Split(line, " · ")
	if len(f) < 2 || len(f) > 3 {
		return false
	}
	round, ok := strings.CutPrefix(f[0], "Round ")
	n, err := strconv.Atoi(round)
	if !ok || err != nil || strconv.Itoa(n) != round {
		return false
	}
	r.Round = n
	if r.Letter, ok = strings.CutPrefix(f[1], "letter "); !ok {
		return false
	}
	if len(f) == 3 {
		if r.Commit, ok = strings.CutPrefix(f[2], "commit "); !ok {
			return false
		}
	}
	return true
}

// parseComments reads the comments' lines: "- PATH:LINE · commit HASH",
// then the text, each line indented by two spaces.
func (r *Review) parseComments(lines []string) bool {
	if len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for _, line := range lines {
		if text, ok := strings.CutPrefix(line, "  "); ok && len(r.Comments) > 0 {
			c := &r.Comments[len(r.Comments)-1]
			if c.Text != "" {
				c.Text += "\n"
			}
			c.Text += text
			continue
		}
		anchor, ok := strings.CutPrefix(line, "- ")
		if !ok {
			return false
		}
		at, commit, ok := strings.Cut(anchor, " · commit ")
		i := strings.LastIndexByte(at, ':')
		if !ok || i < 0 {
			return false
		}
		n, err := strconv.Atoi(at[i+1:])
		if err != nil || strconv.Itoa(n) != at[i+1:] {
			return false
		}
		r.Comments = append(r.Comments, Comment{Path: at[:i], Line: n, Commit: commit})
	}
	return true
}
