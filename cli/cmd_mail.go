package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// mailGroup is the mail command with the subcommands it is given: all of them
// (mailCommand), or the hot ones the small m1nd runs itself (front.go).
func mailGroup(inv *Invocation, subs ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "mail",
		Usage: "letters between agents (refs/m1nd/mail/<recipient>/<writer>)",
		Description: `Each writer appends to its own ref per recipient, so writers never race.
A letter's id is the first 12 hex digits of the sha256 of its canonical bytes:

   git cat-file blob refs/m1nd/mail/<to>/<from>:mail.json | sha256sum

Fates are worked out when read, never stored: external (about a tool named in
git config m1nd.foreignTools), fired_clay (answered by a triage letter),
in_flight (answered by any other letter), wet_ink (not answered). Open means
wet_ink or in_flight. With the agent-session hooks installed
('m1nd hook install claude'), letters drop into the recipient's live session
at its next tool call, exactly once.`,
		Subcommands: subs,
	}
}

// mailCommand is the mail command with every subcommand.
func mailCommand(inv *Invocation) *cli.Command {
	return mailGroup(inv,
		newMailSendCmd(inv, nil),
		newMailInboxCmd(inv, nil),
		newMailShowCmd(inv, nil),
		newMailFatesCmd(inv, nil),
	)
}

// mailSendOptions is what mail send runs on.
type mailSendOptions struct {
	IO       *IOStreams
	JSON     bool
	Agent    func() (string, error)
	Flows    func() (*ops.Flows, error)
	To       string
	Class    string
	What     string
	Expected string
	Snippet  string
	Tool     string
	Answers  []string
}

func newMailSendCmd(inv *Invocation, runF func(context.Context, *mailSendOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "send a letter to an agent, or to all",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "the recipient agent `ID`, or all (required)"},
			&cli.StringFlag{Name: "class", Value: mailbox.ClassNote, Usage: "the letter's `CLASS`: note, ask, triage (settles what it answers), packet, …"},
			&cli.StringFlag{Name: "what", Usage: "the letter's `TEXT` (required)"},
			&cli.StringFlag{Name: "expected", Usage: "what you expect back"},
			&cli.StringFlag{Name: "snippet", Usage: "an excerpt the letter is about"},
			&cli.StringFlag{Name: "tool", Usage: "the tool the letter is about (letters about foreign tools are external)"},
			&cli.StringSliceFlag{Name: "answers", Usage: "the letter `ID` this one answers (repeatable)"},
			agentFlag, JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			if c.String("to") == "" || c.String("what") == "" {
				return Usagef("mail send needs --to AGENT (or all) and --what TEXT")
			}
			opts := &mailSendOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows,
				To: c.String("to"), Class: c.String("class"), What: c.String("what"), Expected: c.String("expected"),
				Snippet: c.String("snippet"), Tool: c.String("tool"), Answers: c.StringSlice("answers")}
			return RunWith(c.Context, opts, runF, runMailSend)
		},
	}
}

// runMailSend sends the letter as the acting agent.
func runMailSend(ctx context.Context, opts *mailSendOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	res, err := flows.SendMail(ctx, ops.MailRequest{Agent: agent, To: opts.To, Class: opts.Class, What: opts.What,
		Expected: opts.Expected, Snippet: opts.Snippet, Tool: opts.Tool, Answers: opts.Answers, Now: opts.IO.Time()})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		if res.Deduped {
			fmt.Fprintf(w, "letter %s was already sent (%s)\n", res.ID, res.Ref)
		} else {
			fmt.Fprintf(w, "sent letter %s to %s (%s)\n", res.ID, res.To, res.Ref)
		}
		for _, id := range res.ClosedFollowups {
			fmt.Fprintf(w, "follow-up %s closed as recorded: this letter answers it\n", id)
		}
		return nil
	})
}

// mailInboxOptions is what mail inbox runs on.
type mailInboxOptions struct {
	IO       *IOStreams
	JSON     bool
	Agent    func() (string, error)
	Flows    func() (*ops.Flows, error)
	Unread   bool
	MarkRead bool
	Limit    int // 0: all
}

// newMailInboxCmd parses mail inbox; a test's runF sees the options
// instead of running it.
func newMailInboxCmd(inv *Invocation, runF func(context.Context, *mailInboxOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "inbox",
		Usage: "the letters for an agent, newest first, read or unread",
		Description: `Lists the letters sent to the agent or to all (not its own), newest first,
each with its fate and whether it was read: delivered into the agent's session
by a hook, or marked read here. A * marks an unread letter, a ~ one delivered
into a session's turn that has not answered yet (a turn that fails gives it
back, and it is delivered again), a ! one given up as undeliverable after
3 failed turns (with why; no hook hands it over again). --mark-read marks
everything listed as read, so the hooks will not deliver it again.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "unread", Usage: "only unread letters"},
			&cli.BoolFlag{Name: "mark-read", Usage: "mark every letter for the agent read"},
			&cli.IntFlag{Name: "limit", Value: 50, Usage: "show at most `N` letters (0: all)"},
			asAgentFlag, JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &mailInboxOptions{IO: inv.io, JSON: c.Bool("json"), Agent: func() (string, error) { return inv.ownAgent(c) }, Flows: inv.Flows,
				Unread: c.Bool("unread"), MarkRead: c.Bool("mark-read"), Limit: c.Int("limit")}
			return RunWith(c.Context, opts, runF, runMailInbox)
		},
	}
}

// runMailInbox lists the agent's letters, newest first, marking them read
// when asked.
func runMailInbox(ctx context.Context, opts *mailInboxOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	reply, err := flows.Inbox(ctx, agent, opts.Unread, opts.Limit, opts.MarkRead)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "inbox of %s: %s, %d unread\n", agent, rules.Count(reply.Total, "letter"), reply.Unread)
		for _, e := range reply.Letters {
			mark := " "
			switch {
			case e.Turn == mailbox.TurnUndeliverable:
				mark = "!"
			case !e.Read:
				mark = "*"
			case e.Turn == mailbox.TurnInTurn:
				mark = "~"
			}
			fmt.Fprintf(w, "%s %s  %s  %-10s %-8s from %-16s %s\n", mark, e.ID, e.Letter.TS, e.Fate, e.Letter.Class, e.Letter.Agent, ClipText(firstLine(e.Letter.What), 60))
			if e.Reason != "" {
				fmt.Fprintf(w, "    undeliverable: %s\n", e.Reason)
			}
		}
		if n := reply.Total - len(reply.Letters); n > 0 && !opts.Unread {
			fmt.Fprintf(w, "… %d older (--limit 0 shows all)\n", n)
		}
		return nil
	})
}

// mailShowOptions is what mail show runs on.
type mailShowOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	ID    string
}

// newMailShowCmd parses mail show; a test's runF sees the options instead
// of running it.
func newMailShowCmd(inv *Invocation, runF func(context.Context, *mailShowOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one letter in full",
		ArgsUsage: "LETTER_ID",
		Flags:     []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := OneArg(c, "letter id")
			if err != nil {
				return err
			}
			return RunWith(c.Context, &mailShowOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, ID: id}, runF, runMailShow)
		},
	}
}

// runMailShow shows the letter in full, with its fate.
func runMailShow(ctx context.Context, opts *mailShowOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	s, err := flows.ShowLetter(ctx, opts.ID)
	if err != nil {
		return err
	}
	fate := s.Fate
	return opts.IO.Reply(opts.JSON, s, func(w io.Writer) error {
		l := s.Letter
		fmt.Fprintf(w, "letter %s  %s\nfrom %s to %s, class %s, %s\n", s.ID, fate, l.Agent, l.To, l.Class, l.TS)
		if l.Tool != "" {
			fmt.Fprintf(w, "tool %s\n", l.Tool)
		}
		if len(l.Answers) > 0 {
			fmt.Fprintf(w, "answers %s\n", strings.Join(l.Answers, ", "))
		}
		fmt.Fprintf(w, "\n%s\n", l.What)
		if l.Expected != "" {
			fmt.Fprintf(w, "\nexpected: %s\n", l.Expected)
		}
		if l.Snippet != "" {
			fmt.Fprintf(w, "\n%s\n", l.Snippet)
		}
		return nil
	})
}

// fatesReply is what mail fates answers.
type fatesReply struct {
	Counts map[string]int    `json:"counts"`
	Open   int               `json:"open"`
	Fates  map[string]string `json:"fates"`
	// Delivery is, per agent, the letters delivered into a session's turn
	// that has not answered yet, and those a failed turn gave back.
	Delivery []mailbox.AgentInFlight `json:"delivery"`
}

// mailFatesOptions is what mail fates runs on.
type mailFatesOptions struct {
	IO      *IOStreams
	JSON    bool
	Mailbox func() (*ops.Flows, error)
}

// newMailFatesCmd parses mail fates; a test's runF sees the options
// instead of running it.
func newMailFatesCmd(inv *Invocation, runF func(context.Context, *mailFatesOptions) error) *cli.Command {
	return &cli.Command{
		Name:   "fates",
		Usage:  "every letter's fate, and how many are open",
		Flags:  []cli.Flag{JSONFlag},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &mailFatesOptions{IO: inv.io, JSON: c.Bool("json"), Mailbox: inv.Flows}, runF, runMailFates)
		},
	}
}

// runMailFates works out every letter's fate, and what waits in a turn.
func runMailFates(ctx context.Context, opts *mailFatesOptions) error {
	box, err := opts.Mailbox()
	if err != nil {
		return err
	}
	all, fates, err := box.Mail(ctx)
	if err != nil {
		return err
	}
	delivery, err := box.InFlight()
	if err != nil {
		return err
	}
	reply := fatesReply{Fates: fates, Delivery: delivery}
	if reply.Delivery == nil {
		reply.Delivery = []mailbox.AgentInFlight{}
	}
	reply.Counts, reply.Open = mailbox.Tally(fates)
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
		fmt.Fprintf(w, "%s, %d open\n", rules.Count(len(all), "letter"), reply.Open)
		for _, f := range []string{mailbox.FateWetInk, mailbox.FateInFlight, mailbox.FateUndeliverable, mailbox.FateFiredClay, mailbox.FateExternal} {
			fmt.Fprintf(w, "  %-10s %d\n", f, reply.Counts[f])
		}
		for _, a := range delivery {
			for _, f := range a.Turns {
				fmt.Fprintf(w, "  in a turn %s to %s: delivered into session %s at %s (turn %d), not answered yet\n", f.ID, a.Agent, f.Session, f.At, f.Attempt)
			}
			for _, f := range a.Again {
				fmt.Fprintf(w, "  again     %s to %s: its turn failed; delivered again at the next\n", f.ID, a.Agent)
			}
			for _, f := range a.Undeliverable {
				fmt.Fprintf(w, "  given up  %s to %s: undeliverable: %s (m1nd mail show %s; m1nd mail inbox --agent %s --mark-read)\n", f.ID, a.Agent, f.Reason, f.ID, a.Agent)
			}
		}
		for i := len(all) - 1; i >= 0; i-- {
			s := all[i]
			if mailbox.Open(fates[s.ID]) {
				fmt.Fprintf(w, "  open %s %-9s %s → %s: %s\n", s.ID, fates[s.ID], s.Letter.Agent, s.Letter.To, ClipText(firstLine(s.Letter.What), 50))
			}
		}
		return nil
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
