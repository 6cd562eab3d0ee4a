package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
)

func (inv *invocation) book() (*memory.Book, error) {
	repo, err := inv.openRepo()
	if err != nil {
		return nil, err
	}
	return &memory.Book{Repo: repo}, nil
}

func memoryCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "typed memories of an agent (refs/m1nd/memory/<agent>): memory is the truth, a session its cache",
		Subcommands: []*cli.Command{
			newMemoryAddCmd(inv, nil),
			newMemoryRecallCmd(inv, nil),
			{
				Name:      "resolve",
				Usage:     "settle one of your memories: recorded, withdrawn or deferred (to a follow-up)",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "as", Usage: "recorded, withdrawn or deferred (required)"},
					&cli.StringFlag{Name: "rationale", Usage: "why (required)"},
					agentFlag, jsonFlag,
				},
				Action: func(c *cli.Context) error {
					id, err := oneArg(c, "memory id")
					if err != nil {
						return err
					}
					if c.String("as") == "" || c.String("rationale") == "" {
						return usagef("memory resolve needs --as and --rationale")
					}
					b, agent, err := openAs(inv.writerOf(c), inv.book)
					if err != nil {
						return err
					}
					rid, err := b.Resolve(c.Context, agent, id, c.String("as"), c.String("rationale"), inv.now())
					if err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "id": id, "resolution": rid, "as": c.String("as")}, func(w io.Writer) error {
						fmt.Fprintf(w, "memory %s %s\n", id, c.String("as"))
						return nil
					})
				},
			},
		},
	}
}

// memoryAddOptions is what memory add runs on.
type memoryAddOptions struct {
	IO         *IOStreams
	JSON       bool
	Agent      func() (string, error)
	Flows      func() (*ops.Brain, error)
	Text       string
	Sort       string
	About      []string
	Source     []string
	Private    bool
	Supersedes string
}

func newMemoryAddCmd(inv *invocation, runF func(context.Context, *memoryAddOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "record a memory",
		ArgsUsage: "TEXT",
		Description: `A decided or committed memory that names another agent (--about agent:ID,
or @ID in its text) sends that agent a letter quoting it, so it reaches
the agent's session and wakes it through the keeper. A private memory
names no one.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sort", Usage: "what it is: " + strings.Join(memory.Sorts, ", ") + " (required)"},
			&cli.StringSliceFlag{Name: "about", Usage: "an `ID` it is about: a mission, a block, a letter, agent:AGENT (repeatable)"},
			&cli.StringSliceFlag{Name: "source", Usage: "an `ID` it rests on (repeatable)"},
			&cli.BoolFlag{Name: "private", Usage: "only this agent recalls it"},
			&cli.StringFlag{Name: "supersedes", Usage: "an older memory `ID` this decided/learned memory replaces (it stays in history, superseded)"},
			agentFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			text, err := oneArg(c, "memory text")
			if err != nil {
				return err
			}
			if c.String("sort") == "" {
				return usagef("missing --sort: one of %s", strings.Join(memory.Sorts, ", "))
			}
			opts := &memoryAddOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.writerOf(c), Flows: inv.flows, Text: text, Sort: c.String("sort"),
				About: c.StringSlice("about"), Source: c.StringSlice("source"), Private: c.Bool("private"), Supersedes: c.String("supersedes")}
			return runWith(c.Context, opts, runF, runMemoryAdd)
		},
	}
}

// runMemoryAdd records the memory as the acting agent.
func runMemoryAdd(ctx context.Context, opts *memoryAddOptions) error {
	b, agent, err := openAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	reply, err := b.AddMemory(ctx, memory.AddRequest{Agent: agent, Sort: opts.Sort, Text: opts.Text, About: opts.About,
		Source: opts.Source, Private: opts.Private, Supersedes: opts.Supersedes, Now: opts.IO.now()})
	if err != nil {
		return err
	}
	id, existing := reply.ID, reply.Existing
	return opts.IO.reply(opts.JSON, reply, func(w io.Writer) error {
		switch {
		case existing == nil:
			fmt.Fprintf(w, "memory %s recorded (%s)\n", id, opts.Sort)
			for _, to := range reply.Told {
				fmt.Fprintf(w, "  %s, whom it names, was sent a letter\n", to)
			}
		case existing.State == memory.StateInForce:
			fmt.Fprintf(w, "memory %s is already in force (%s, since %s): nothing was written\n", id, existing.Sort, existing.TS)
		default:
			fmt.Fprintf(w, "memory %s, the same to the second, is already recorded and now %s: nothing was written\n", id, existing.State)
		}
		return nil
	})
}

// memoryRecallOptions is what memory recall runs on.
type memoryRecallOptions struct {
	IO       *IOStreams
	JSON     bool
	Agent    func() (string, error)
	Book     func() (*memory.Book, error)
	About    string
	Sort     string
	Query    string
	Limit    int
	MaxBytes int
}

func newMemoryRecallCmd(inv *invocation, runF func(context.Context, *memoryRecallOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "recall",
		Usage: "in-force memories, ranked by query match then recency, bounded",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "about", Usage: "only memories about `ID`"},
			&cli.StringFlag{Name: "sort", Usage: "only this sort"},
			&cli.StringFlag{Name: "query", Usage: "words to rank by"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most `N` memories"},
			&cli.IntFlag{Name: "max-bytes", Value: 4096, Usage: "at most `B` bytes of memory text"},
			asAgentFlag, jsonFlag,
		},
		Before: noArgs,
		Action: func(c *cli.Context) error {
			opts := &memoryRecallOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.agentOf(c), Book: inv.book, About: c.String("about"),
				Sort: c.String("sort"), Query: c.String("query"), Limit: c.Int("limit"), MaxBytes: c.Int("max-bytes")}
			return runWith(c.Context, opts, runF, runMemoryRecall)
		},
	}
}

// runMemoryRecall lists the in-force memories the agent may recall.
func runMemoryRecall(ctx context.Context, opts *memoryRecallOptions) error {
	b, agent, err := openAs(opts.Agent, opts.Book)
	if err != nil {
		return err
	}
	ms, cut, err := b.Recall(ctx, memory.RecallRequest{Agent: agent, About: opts.About, Sort: opts.Sort,
		Query: opts.Query, Limit: opts.Limit, MaxBytes: opts.MaxBytes})
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []*memory.Memory{}
	}
	return opts.IO.reply(opts.JSON, map[string]any{"ok": true, "memories": ms, "cut": cut}, func(w io.Writer) error {
		for _, m := range ms {
			fmt.Fprintf(w, "%s  %-9s %s  %s: %s\n", m.ID, m.Sort, m.TS, m.Agent, m.Text)
		}
		if cut > 0 {
			fmt.Fprintf(w, "… %s more matched but were cut (--limit, --max-bytes)\n", gates.Count(cut, "memory"))
		}
		if len(ms) == 0 {
			fmt.Fprintf(w, "no memory matches\n")
		}
		return nil
	})
}

func followupCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "followup",
		Usage: "briefs someone owes an answer to; a brief is closed by its result",
		Description: `A follow-up linked to a mission (open --mission, or mission new --followup)
is resolved recorded, with the mission's result, when that mission ends in
merge_wait, landed or failed. One no mission carries is resolved recorded
when its owner answers the letter that announced it (m1nd mail send
--answers LETTER), with the answer as its result.`,
		Subcommands: []*cli.Command{
			{
				Name:      "open",
				Usage:     "open a follow-up for an owner",
				ArgsUsage: "BRIEF",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "owner", Usage: "the agent who owes the answer (required)"},
					&cli.StringFlag{Name: "mission", Usage: "the mission `ID` whose end closes it"},
					agentFlag, jsonFlag,
				},
				Action: func(c *cli.Context) error {
					brief, err := oneArg(c, "brief")
					if err != nil {
						return err
					}
					if c.String("owner") == "" {
						return usagef("missing --owner")
					}
					flows, agent, err := openAs(inv.writerOf(c), inv.flows)
					if err != nil {
						return err
					}
					id, err := flows.OpenFollowup(c.Context, agent, c.String("owner"), brief, c.String("mission"), inv.now())
					if err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "id": id}, func(w io.Writer) error {
						fmt.Fprintf(w, "follow-up %s opened for %s\n", id, c.String("owner"))
						return nil
					})
				},
			},
			{
				Name:      "resolve",
				Usage:     "close a follow-up with its result, or withdraw it",
				ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "recorded", Usage: "the `RESULT`"},
					&cli.StringFlag{Name: "withdrawn", Usage: "`WHY` it no longer matters"},
					agentFlag, jsonFlag,
				},
				Action: func(c *cli.Context) error {
					id, err := oneArg(c, "follow-up id")
					if err != nil {
						return err
					}
					as, text := "recorded", c.String("recorded")
					if c.String("withdrawn") != "" {
						as, text = "withdrawn", c.String("withdrawn")
					}
					if (c.String("recorded") == "") == (c.String("withdrawn") == "") {
						return usagef("give exactly one of --recorded RESULT or --withdrawn WHY")
					}
					flows, agent, err := openAs(inv.writerOf(c), inv.flows)
					if err != nil {
						return err
					}
					if _, err := flows.ResolveFollowup(c.Context, agent, id, as, text, inv.now()); err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "id": id, "state": as}, func(w io.Writer) error {
						fmt.Fprintf(w, "follow-up %s %s\n", id, as)
						return nil
					})
				},
			},
			{
				Name:  "list",
				Usage: "follow-ups, with their state (closing those whose mission ended)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "owner", Usage: "only those owed by `AGENT`"},
					&cli.BoolFlag{Name: "open", Usage: "only open ones"},
					jsonFlag,
				},
				Before: noArgs,
				Action: func(c *cli.Context) error {
					flows, err := inv.flows()
					if err != nil {
						return err
					}
					out, err := flows.Followups(c.Context, c.String("owner"), c.Bool("open"), inv.now())
					if err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "followups": out}, func(w io.Writer) error {
						for _, f := range out {
							fmt.Fprintf(w, "%s  %-9s for %-12s from %-12s %s\n", f.ID, f.State, f.Owner, f.Opener, clipText(firstLine(f.Brief), 60))
							if f.Result != "" {
								fmt.Fprintf(w, "    → %s\n", clipText(firstLine(f.Result), 100))
							}
						}
						if len(out) == 0 {
							fmt.Fprintf(w, "no follow-ups\n")
						}
						return nil
					})
				},
			},
		},
	}
}

func atlasCommand(inv *invocation) *cli.Command {
	atlas := func() (*memory.Atlas, error) {
		flows, err := inv.flows()
		if err != nil {
			return nil, err
		}
		return flows.Atlas(), nil
	}
	amend := func(resolve bool) cli.ActionFunc {
		return func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usagef("want a document ID and, to amend, the new TEXT")
			}
			if !resolve && c.NArg() != 2 {
				return usagef("atlas amend ID TEXT")
			}
			agent, err := inv.writer(c)
			if err != nil {
				return err
			}
			a, err := atlas()
			if err != nil {
				return err
			}
			d, err := a.Amend(c.Context, agent, c.Args().Get(0), c.Args().Get(1), resolve, inv.now())
			if err != nil {
				return err
			}
			return inv.reply(map[string]any{"ok": true, "doc": d}, func(w io.Writer) error {
				fmt.Fprintf(w, "%s v%d (%s)\n", d.DocID, d.Version, d.State)
				return nil
			})
		}
	}
	return &cli.Command{
		Name:  "atlas",
		Usage: "shared documents owned by their publisher, proven by the publisher's agent key",
		Description: `Each document (refs/m1nd/atlas/<doc_id>) records its publisher and carries an
HMAC-SHA256 over its bytes made with the publisher's agent key (m1nd agent key
create NAME). Only the publisher may amend or resolve it (not_publisher); a
proof that does not verify is refused on write and flagged on read.`,
		Subcommands: []*cli.Command{
			{
				Name: "publish", Usage: "publish a document", ArgsUsage: "TEXT",
				Flags: []cli.Flag{&cli.StringFlag{Name: "kind", Usage: strings.Join(memory.DocKinds, ", ") + " (required)"}, agentFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					text, err := oneArg(c, "document text")
					if err != nil {
						return err
					}
					if c.String("kind") == "" {
						return usagef("missing --kind: one of %s", strings.Join(memory.DocKinds, ", "))
					}
					agent, err := inv.writer(c)
					if err != nil {
						return err
					}
					a, err := atlas()
					if err != nil {
						return err
					}
					d, err := a.Publish(c.Context, agent, c.String("kind"), text, inv.now())
					if err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "doc": d}, func(w io.Writer) error {
						fmt.Fprintf(w, "published %s (%s)\n", d.DocID, d.Kind)
						return nil
					})
				},
			},
			{Name: "amend", Usage: "publish the next version of your document", ArgsUsage: "ID TEXT", Flags: []cli.Flag{agentFlag, jsonFlag}, Action: amend(false)},
			{Name: "resolve", Usage: "mark your document resolved", ArgsUsage: "ID", Flags: []cli.Flag{agentFlag, jsonFlag}, Action: amend(true)},
			{
				Name: "show", Usage: "show a document and whether its proof verifies here", ArgsUsage: "ID", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					id, err := oneArg(c, "document id")
					if err != nil {
						return err
					}
					flows, err := inv.flows()
					if err != nil {
						return err
					}
					shown, err := flows.ShowDoc(id)
					if err != nil {
						return err
					}
					d, proof := shown.Doc, shown.Proof
					return inv.reply(shown, func(w io.Writer) error {
						fmt.Fprintf(w, "%s v%d %s (%s) by %s, %s — proof %s\n%s\n", d.DocID, d.Version, d.Kind, d.State, d.Publisher, d.TS, proof, d.Text)
						return nil
					})
				},
			},
			{
				Name: "list", Usage: "every document, newest version", Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					flows, err := inv.flows()
					if err != nil {
						return err
					}
					rows, err := flows.ListDocs()
					if err != nil {
						return err
					}
					return inv.reply(map[string]any{"ok": true, "docs": rows}, func(w io.Writer) error {
						for _, r := range rows {
							fmt.Fprintf(w, "%s v%d %-10s %-8s %-12s proof %-8s %s\n", r.DocID, r.Version, r.Kind, r.State, r.Publisher, r.ProofState, clipText(firstLine(r.Text), 50))
						}
						return nil
					})
				},
			},
		},
	}
}

func agentCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "agent keys: what proves a shared document's publisher",
		Subcommands: []*cli.Command{{
			Name: "key", Usage: "agent keys",
			Subcommands: []*cli.Command{{
				Name: "create", Usage: "create NAME's key (0600, in .git/m1nd/keys; never a ref, never pushed)", ArgsUsage: "NAME",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					name, err := oneArg(c, "agent name")
					if err != nil {
						return err
					}
					repo, err := inv.openRepo()
					if err != nil {
						return err
					}
					path, err := memory.Keys{Dir: memory.KeysDir(repo.RuntimeDir())}.Create(name)
					if err != nil {
						return usagef("%v", err)
					}
					return inv.reply(map[string]any{"ok": true, "agent": name, "path": path}, func(w io.Writer) error {
						fmt.Fprintf(w, "key for %s: %s (mode 0600)\n", name, path)
						return nil
					})
				},
			}},
		}},
	}
}
