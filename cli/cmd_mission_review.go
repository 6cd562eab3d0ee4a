package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/review"
	"github.com/m1nd/m1nd/rules"
)

// missionReviewOptions is what mission review runs on.
type missionReviewOptions struct {
	IO        *IOStreams
	JSON      bool
	Agent     func() (string, error)
	Flows     func() (*ops.Flows, error)
	MissionID string
	Decision  string
	Body      string
	Comments  []review.Comment
}

// newMissionReviewCmd parses mission review; a test's runF sees the
// options instead of running it.
func newMissionReviewCmd(inv *Invocation, runF func(context.Context, *missionReviewOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "review",
		Usage:     "review a mission's work: comment on lines, request changes, approve",
		ArgsUsage: "MISSION_ID",
		Description: `Sends the mission's agent (the one that wrote its head letter) one letter of
class ask holding the review: its body and each comment with its anchor, the
file, the line and the commit it was read at (the commit the gate tested).
A live session hears it at its next tool call; the keeper wakes an idle one.

--request-changes also records the review on the mission's chain (a review
letter, verdict CHANGE): only after it may work return to a mission that
waits to land. For a runner's mission runnerd then runs the agent again in
the same worktree and branch, its packet the ask followed by the review, and
gates the new commit (round 2). On a failed mission it retries: with no body
and no comment the review carries the gate's failing output.

--approve says the work is good (it lands nothing: landing is yours, in the
tray or with m1nd land). Without either, the review only comments.

A review is not a human gesture, and claims none: it is written as --agent,
$M1ND_AGENT or git config m1nd.agent, and as "reviewer" when none is set.

   m1nd mission review msn_0123 --comment hello.go:3='use a constant' \
       --request-changes --body 'handle the empty input too'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "comment", Usage: "comment `FILE:LINE=TEXT` on a line of the diff (repeatable)"},
			&cli.StringFlag{Name: "body", Aliases: []string{"b"}, Usage: "the review's `TEXT` on the whole work"},
			&cli.StringFlag{Name: "body-file", Aliases: []string{"F"}, Usage: "read the body from `FILE` (- for stdin)"},
			&cli.BoolFlag{Name: "request-changes", Aliases: []string{"r"}, Usage: "request changes: the agent works again and its work is gated again"},
			&cli.BoolFlag{Name: "approve", Aliases: []string{"a"}, Usage: "approve the work (lands nothing)"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			opts := &missionReviewOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.reviewerOf(c), Flows: inv.Flows, MissionID: id, Decision: review.CommentOnly}
			switch {
			case c.Bool("request-changes") && c.Bool("approve"):
				return Usagef("--request-changes and --approve: a review does one or the other")
			case c.Bool("request-changes"):
				opts.Decision = review.Change
			case c.Bool("approve"):
				opts.Decision = review.Approve
			}
			if opts.Body, err = reviewBody(c, inv.io.In); err != nil {
				return err
			}
			for _, s := range c.StringSlice("comment") {
				comment, err := ParseComment(s)
				if err != nil {
					return err
				}
				opts.Comments = append(opts.Comments, comment)
			}
			return RunWith(c.Context, opts, runF, runMissionReview)
		},
	}
}

// reviewBody is the body --body or --body-file gives ("" for none); the
// review's own law (review.MaxBody, invalid_letter) judges its length.
func reviewBody(c *cli.Context, stdin io.Reader) (string, error) {
	path := c.String("body-file")
	switch {
	case path != "" && c.IsSet("body"):
		return "", Usagef("--body and --body-file: give the body once")
	case path == "":
		return c.String("body"), nil
	}
	data, err := readDocument(path, stdin, "review body", rules.Refusef(rules.InvalidLetter, "body", "the review body is longer than %d bytes", review.MaxBody))
	return string(data), err
}

// ParseComment reads a comment as --comment gives it: FILE:LINE=TEXT. The
// file may hold ':' and '=': the anchor ends at the first '=' that follows
// ":LINE".
func ParseComment(s string) (review.Comment, error) {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		at := s[:i]
		colon := strings.LastIndexByte(at, ':')
		if colon <= 0 {
			continue
		}
		line, err := strconv.Atoi(at[colon+1:])
		if err != nil || line < 1 {
			continue
		}
		return review.Comment{Path: at[:colon], Line: line, Text: s[i+1:]}, nil
	}
	return review.Comment{}, Usagef("--comment %q: want FILE:LINE=TEXT (a line number from 1), such as hello.go:3='use a constant'", rules.Clip(s))
}

// reviewerOf is who writes a review: the agent, else (none set)
// "reviewer", a name that claims no human's word (a review is no
// gesture). An agent named owner is passed on, for ops to refuse.
func (inv *Invocation) reviewerOf(c *cli.Context) func() (string, error) {
	return func() (string, error) {
		if ambient, _ := inv.ambientAgent(); c.String("agent") == "" && ambient == "" {
			return ops.ReviewerName, nil
		}
		return inv.agent(c)
	}
}

// runMissionReview sends the review and, for a request for changes,
// records it on the mission.
func runMissionReview(ctx context.Context, opts *missionReviewOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	res, err := b.Review(ctx, ops.ReviewRequest{
		MissionID: opts.MissionID, Decision: opts.Decision, Body: opts.Body, Comments: opts.Comments,
		Agent: agent, Now: opts.IO.Time(),
	})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		r := res.Review
		sent := "sent"
		if res.Mail.Deduped {
			sent = "already sent"
		}
		fmt.Fprintf(w, "review of %s, round %d: %s (%s) — %s to %s as letter %s\n", r.MissionID, r.Round, r.State(), r.Gist(), sent, res.To, res.Mail.ID)
		if res.Letter != nil {
			fmt.Fprintf(w, "recorded    review letter %s (#%d): the agent works again, and its work is gated as round %d (m1nd mission show %s)\n", res.Letter.LetterID, res.Letter.MissionSeq, r.Round+1, r.MissionID)
		}
		return nil
	})
}
