package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

func memoryCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "typed memories of an agent (refs/m1nd/memory/<agent>): memory is the truth, a session its cache",
		Subcommands: []*cli.Command{
			newMemoryAddCmd(inv, nil),
			newMemoryRecallCmd(inv, nil),
			newMemoryResolveCmd(inv, nil),
		},
	}
}

// memoryResolveOptions is what memory resolve runs on.
type memoryResolveOptions struct {
	IO        *IOStreams
	JSON      bool
	Agent     func() (string, error)
	Book      func() (*ops.Flows, error)
	ID        string
	As        string // recorded, withdrawn or deferred
	Rationale string
}

// newMemoryResolveCmd parses memory resolve; a test's runF sees the
// options instead of running it.
func newMemoryResolveCmd(inv *Invocation, runF func(context.Context, *memoryResolveOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "settle one of your memories: recorded, withdrawn or deferred (to a follow-up)",
		ArgsUsage: "MEMORY_ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "as", Usage: "recorded, withdrawn or deferred (required)"},
			&cli.StringFlag{Name: "rationale", Usage: "why (required)"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			id, err := OneArg(c, "memory id")
			if err != nil {
				return err
			}
			if c.String("as") == "" || c.String("rationale") == "" {
				return Usagef("memory resolve needs --as and --rationale")
			}
			opts := &memoryResolveOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Book: inv.Flows,
				ID: id, As: c.String("as"), Rationale: c.String("rationale")}
			return RunWith(c.Context, opts, runF, runMemoryResolve)
		},
	}
}

// runMemoryResolve settles the memory as the acting agent, who must be
// its writer.
func runMemoryResolve(ctx context.Context, opts *memoryResolveOptions) error {
	b, agent, err := OpenAs(opts.Agent, opts.Book)
	if err != nil {
		return err
	}
	rid, err := b.Resolve(ctx, agent, opts.ID, opts.As, opts.Rationale, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"id": opts.ID, "resolution": rid, "as": opts.As}, func(w io.Writer) error {
		fmt.Fprintf(w, "memory %s %s\n", opts.ID, opts.As)
		return nil
	})
}

// memoryAddOptions is what memory add runs on.
type memoryAddOptions struct {
	IO         *IOStreams
	JSON       bool
	Agent      func() (string, error)
	Flows      func() (*ops.Flows, error)
	Text       string
	Sort       string
	About      []string
	Source     []string
	Private    bool
	Supersedes string
}

func newMemoryAddCmd(inv *Invocation, runF func(context.Context, *memoryAddOptions) error) *cli.Command {
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
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			text, err := OneArg(c, "memory text")
			if err != nil {
				return err
			}
			if c.String("sort") == "" {
				return Usagef("missing --sort: one of %s", strings.Join(memory.Sorts, ", "))
			}
			opts := &memoryAddOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows, Text: text, Sort: c.String("sort"),
				About: c.StringSlice("about"), Source: c.StringSlice("source"), Private: c.Bool("private"), Supersedes: c.String("supersedes")}
			return RunWith(c.Context, opts, runF, runMemoryAdd)
		},
	}
}

// runMemoryAdd records the memory as the acting agent.
func runMemoryAdd(ctx context.Context, opts *memoryAddOptions) error {
	b, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	reply, err := b.AddMemory(ctx, memory.AddRequest{Agent: agent, Sort: opts.Sort, Text: opts.Text, About: opts.About,
		Source: opts.Source, Private: opts.Private, Supersedes: opts.Supersedes, Now: opts.IO.Time()})
	if err != nil {
		return err
	}
	id, existing := reply.ID, reply.Existing
	return opts.IO.Reply(opts.JSON, reply, func(w io.Writer) error {
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
	Book     func() (*ops.Flows, error)
	About    string
	Sort     string
	Query    string
	Limit    int
	MaxBytes int
}

func newMemoryRecallCmd(inv *Invocation, runF func(context.Context, *memoryRecallOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "recall",
		Usage: "in-force memories, ranked by query match then recency, bounded",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "about", Usage: "only memories about `ID`"},
			&cli.StringFlag{Name: "sort", Usage: "only this sort"},
			&cli.StringFlag{Name: "query", Usage: "words to rank by"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "at most `N` memories"},
			&cli.IntFlag{Name: "max-bytes", Value: 4096, Usage: "at most `B` bytes of memory text"},
			asAgentFlag, JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &memoryRecallOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Book: inv.Flows, About: c.String("about"),
				Sort: c.String("sort"), Query: c.String("query"), Limit: c.Int("limit"), MaxBytes: c.Int("max-bytes")}
			return RunWith(c.Context, opts, runF, runMemoryRecall)
		},
	}
}

// runMemoryRecall lists the in-force memories the agent may recall.
func runMemoryRecall(ctx context.Context, opts *memoryRecallOptions) error {
	b, agent, err := OpenAs(opts.Agent, opts.Book)
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
	return opts.IO.Reply(opts.JSON, map[string]any{"memories": ms, "cut": cut}, func(w io.Writer) error {
		for _, m := range ms {
			fmt.Fprintf(w, "%s  %-9s %s  %s: %s\n", m.ID, m.Sort, m.TS, m.Agent, m.Text)
		}
		if cut > 0 {
			fmt.Fprintf(w, "… %s more matched but were cut (--limit, --max-bytes)\n", rules.Count(cut, "memory"))
		}
		if len(ms) == 0 {
			fmt.Fprintf(w, "no memory matches\n")
		}
		return nil
	})
}

func followupCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:  "followup",
		Usage: "briefs someone owes an answer to; a brief is closed by its result",
		Description: `A follow-up linked to a mission (open --mission, or mission new --followup)
is resolved recorded, with the mission's result, when that mission ends in
merge_wait, landed or failed. One no mission carries is resolved recorded
when its owner answers the letter that announced it (m1nd mail send
--answers LETTER), with the answer as its result.`,
		Subcommands: []*cli.Command{
			newFollowupOpenCmd(inv, nil),
			newFollowupResolveCmd(inv, nil),
			newFollowupListCmd(inv, nil),
		},
	}
}

// followupOpenOptions is what followup open runs on.
type followupOpenOptions struct {
	IO      *IOStreams
	JSON    bool
	Agent   func() (string, error)
	Flows   func() (*ops.Flows, error)
	Brief   string
	Owner   string
	Mission string
}

func newFollowupOpenCmd(inv *Invocation, runF func(context.Context, *followupOpenOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "open",
		Usage:     "open a follow-up for an owner",
		ArgsUsage: "BRIEF",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "owner", Usage: "the agent who owes the answer (required)"},
			&cli.StringFlag{Name: "mission", Usage: "the mission `ID` whose end closes it"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			brief, err := OneArg(c, "brief")
			if err != nil {
				return err
			}
			if c.String("owner") == "" {
				return Usagef("missing --owner")
			}
			opts := &followupOpenOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows,
				Brief: brief, Owner: c.String("owner"), Mission: c.String("mission")}
			return RunWith(c.Context, opts, runF, runFollowupOpen)
		},
	}
}

// runFollowupOpen opens the follow-up as the acting agent; its owner is
// told by letter.
func runFollowupOpen(ctx context.Context, opts *followupOpenOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	id, err := flows.OpenFollowup(ctx, agent, opts.Owner, opts.Brief, opts.Mission, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"id": id}, func(w io.Writer) error {
		fmt.Fprintf(w, "follow-up %s opened for %s\n", id, opts.Owner)
		return nil
	})
}

// followupResolveOptions is what followup resolve runs on: As and Text
// are the resolution ops.FollowupResolution read from the flags.
type followupResolveOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Flows func() (*ops.Flows, error)
	ID    string
	As    string
	Text  string
}

func newFollowupResolveCmd(inv *Invocation, runF func(context.Context, *followupResolveOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "resolve",
		Usage:     "close a follow-up with its result, or withdraw it",
		ArgsUsage: "FOLLOWUP_ID",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "recorded", Usage: "the `RESULT`"},
			&cli.StringFlag{Name: "withdrawn", Usage: "`WHY` it no longer matters"},
			agentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			id, err := OneArg(c, "follow-up id")
			if err != nil {
				return err
			}
			as, text, ok := ops.FollowupResolution(c.String("recorded"), c.String("withdrawn"))
			if !ok {
				return Usagef("give exactly one of --recorded RESULT or --withdrawn WHY")
			}
			opts := &followupResolveOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows, ID: id, As: as, Text: text}
			return RunWith(c.Context, opts, runF, runFollowupResolve)
		},
	}
}

// runFollowupResolve resolves the follow-up as the acting agent; its
// opener is told by letter.
func runFollowupResolve(ctx context.Context, opts *followupResolveOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	if _, err := flows.ResolveFollowup(ctx, agent, opts.ID, opts.As, opts.Text, opts.IO.Time()); err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"id": opts.ID, "state": opts.As}, func(w io.Writer) error {
		fmt.Fprintf(w, "follow-up %s %s\n", opts.ID, opts.As)
		return nil
	})
}

// followupListOptions is what followup list runs on.
type followupListOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	Owner string
	Open  bool
}

func newFollowupListCmd(inv *Invocation, runF func(context.Context, *followupListOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "follow-ups, with their state (closing those whose mission ended)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "owner", Usage: "only those owed by `AGENT`"},
			&cli.BoolFlag{Name: "open", Usage: "only open ones"},
			JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			opts := &followupListOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, Owner: c.String("owner"), Open: c.Bool("open")}
			return RunWith(c.Context, opts, runF, runFollowupList)
		},
	}
}

// runFollowupList lists the follow-ups, closing those whose mission ended.
func runFollowupList(ctx context.Context, opts *followupListOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	out, err := flows.Followups(ctx, opts.Owner, opts.Open, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"followups": out}, func(w io.Writer) error {
		for _, f := range out {
			fmt.Fprintf(w, "%s  %-9s for %-12s from %-12s %s\n", f.ID, f.State, f.Owner, f.Opener, ClipText(firstLine(f.Brief), 60))
			if f.Result != "" {
				fmt.Fprintf(w, "    → %s\n", ClipText(firstLine(f.Result), 100))
			}
		}
		if len(out) == 0 {
			fmt.Fprintf(w, "no follow-ups\n")
		}
		return nil
	})
}

func atlasCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:  "atlas",
		Usage: "shared documents owned by their publisher, proven by the publisher's agent key",
		Description: `Each document (refs/m1nd/atlas/<doc_id>) records its publisher and carries an
HMAC-SHA256 over its bytes made with the publisher's agent key (m1nd agent key
create NAME). Only the publisher may amend or resolve it (not_publisher); a
proof that does not verify is refused on write and flagged on read.`,
		Subcommands: []*cli.Command{
			newAtlasPublishCmd(inv, nil),
			newAtlasAmendCmd(inv, false, nil),
			newAtlasAmendCmd(inv, true, nil),
			newAtlasShowCmd(inv, nil),
			newAtlasListCmd(inv, nil),
		},
	}
}

// atlasPublishOptions is what atlas publish runs on.
type atlasPublishOptions struct {
	IO    *IOStreams
	JSON  bool
	Agent func() (string, error)
	Flows func() (*ops.Flows, error)
	Kind  string
	Text  string
}

func newAtlasPublishCmd(inv *Invocation, runF func(context.Context, *atlasPublishOptions) error) *cli.Command {
	return &cli.Command{
		Name: "publish", Usage: "publish a document", ArgsUsage: "TEXT",
		Flags: []cli.Flag{&cli.StringFlag{Name: "kind", Usage: strings.Join(memory.DocKinds, ", ") + " (required)"}, agentFlag, JSONFlag},
		Action: func(c *cli.Context) error {
			text, err := OneArg(c, "document text")
			if err != nil {
				return err
			}
			if c.String("kind") == "" {
				return Usagef("missing --kind: one of %s", strings.Join(memory.DocKinds, ", "))
			}
			opts := &atlasPublishOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows, Kind: c.String("kind"), Text: text}
			return RunWith(c.Context, opts, runF, runAtlasPublish)
		},
	}
}

// runAtlasPublish publishes the document as the acting agent, proven by
// its agent key.
func runAtlasPublish(ctx context.Context, opts *atlasPublishOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	d, err := flows.Atlas().Publish(ctx, agent, opts.Kind, opts.Text, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"id": d.DocID, "doc": d}, func(w io.Writer) error {
		fmt.Fprintf(w, "published %s (%s)\n", d.DocID, d.Kind)
		return nil
	})
}

// atlasAmendOptions is what atlas amend and atlas resolve run on.
type atlasAmendOptions struct {
	IO      *IOStreams
	JSON    bool
	Agent   func() (string, error)
	Flows   func() (*ops.Flows, error)
	ID      string
	Text    string // the next version's text; "" for resolve
	Resolve bool
}

// newAtlasAmendCmd is atlas amend or, with resolve, atlas resolve: both
// publish the next version of the agent's own document.
func newAtlasAmendCmd(inv *Invocation, resolve bool, runF func(context.Context, *atlasAmendOptions) error) *cli.Command {
	cmd := &cli.Command{Name: "amend", Usage: "publish the next version of your document", ArgsUsage: "DOC_ID TEXT", Flags: []cli.Flag{agentFlag, JSONFlag}}
	if resolve {
		cmd.Name, cmd.Usage, cmd.ArgsUsage = "resolve", "mark your document resolved", "ID"
	}
	cmd.Action = func(c *cli.Context) error {
		if c.NArg() < 1 || c.NArg() > 2 {
			return Usagef("want a document ID and, to amend, the new TEXT")
		}
		if !resolve && c.NArg() != 2 {
			return Usagef("atlas amend ID TEXT")
		}
		opts := &atlasAmendOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.WriterOf(c), Flows: inv.Flows, ID: c.Args().Get(0), Text: c.Args().Get(1), Resolve: resolve}
		return RunWith(c.Context, opts, runF, runAtlasAmend)
	}
	return cmd
}

// runAtlasAmend writes the next version of the document, as its publisher.
func runAtlasAmend(ctx context.Context, opts *atlasAmendOptions) error {
	flows, agent, err := OpenAs(opts.Agent, opts.Flows)
	if err != nil {
		return err
	}
	d, err := flows.Atlas().Amend(ctx, agent, opts.ID, opts.Text, opts.Resolve, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"id": d.DocID, "doc": d}, func(w io.Writer) error {
		fmt.Fprintf(w, "%s v%d (%s)\n", d.DocID, d.Version, d.State)
		return nil
	})
}

// atlasShowOptions is what atlas show runs on.
type atlasShowOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	ID    string
}

func newAtlasShowCmd(inv *Invocation, runF func(context.Context, *atlasShowOptions) error) *cli.Command {
	return &cli.Command{
		Name: "show", Usage: "show a document and whether its proof verifies here", ArgsUsage: "DOC_ID", Flags: []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := inv.docArg(c)
			if err != nil {
				return err
			}
			return RunWith(c.Context, &atlasShowOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, ID: id}, runF, runAtlasShow)
		},
	}
}

// runAtlasShow shows the document and whether its proof verifies here.
func runAtlasShow(_ context.Context, opts *atlasShowOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	shown, err := flows.ShowDoc(opts.ID)
	if err != nil {
		return err
	}
	d, proof := shown.Doc, shown.Proof
	return opts.IO.Reply(opts.JSON, shown, func(w io.Writer) error {
		fmt.Fprintf(w, "%s v%d %s (%s) by %s, %s — proof %s\n%s\n", d.DocID, d.Version, d.Kind, d.State, d.Publisher, d.TS, proof, d.Text)
		return nil
	})
}

// atlasListOptions is what atlas list runs on.
type atlasListOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
}

func newAtlasListCmd(inv *Invocation, runF func(context.Context, *atlasListOptions) error) *cli.Command {
	return &cli.Command{
		Name: "list", Usage: "every document, newest version", Flags: []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			return RunWith(c.Context, &atlasListOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows}, runF, runAtlasList)
		},
	}
}

// runAtlasList lists every document at its newest version.
func runAtlasList(_ context.Context, opts *atlasListOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	rows, err := flows.ListDocs()
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"docs": rows}, func(w io.Writer) error {
		for _, r := range rows {
			fmt.Fprintf(w, "%s v%d %-10s %-8s %-12s proof %-8s %s\n", r.DocID, r.Version, r.Kind, r.State, r.Publisher, r.ProofState, ClipText(firstLine(r.Text), 50))
		}
		return nil
	})
}

func agentCommand(inv *Invocation) *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "agent keys: what proves a shared document's publisher",
		Subcommands: []*cli.Command{{
			Name: "key", Usage: "agent keys",
			Subcommands: []*cli.Command{newAgentKeyCreateCmd(inv, nil)},
		}},
	}
}

// agentKeyCreateOptions is what agent key create runs on.
type agentKeyCreateOptions struct {
	IO   *IOStreams
	JSON bool
	Repo func() (*gitstore.Repo, error)
	Name string
}

// newAgentKeyCreateCmd parses agent key create; a test's runF sees the
// options instead of running it.
func newAgentKeyCreateCmd(inv *Invocation, runF func(context.Context, *agentKeyCreateOptions) error) *cli.Command {
	return &cli.Command{
		Name: "create", Usage: "create NAME's key (0600, in .git/m1nd/keys; never a ref, never pushed)", ArgsUsage: "NAME",
		Flags: []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			name, err := OneArg(c, "agent name")
			if err != nil {
				return err
			}
			return RunWith(c.Context, &agentKeyCreateOptions{IO: inv.io, JSON: c.Bool("json"), Repo: inv.OpenRepo, Name: name}, runF, runAgentKeyCreate)
		},
	}
}

// runAgentKeyCreate makes the agent's key in this clone's runtime folder;
// a name the keys refuse is the caller's to fix, a usage error.
func runAgentKeyCreate(_ context.Context, opts *agentKeyCreateOptions) error {
	repo, err := opts.Repo()
	if err != nil {
		return err
	}
	path, err := memory.Keys{Dir: memory.KeysDir(repo.RuntimeDir())}.Create(opts.Name)
	if err != nil {
		return Usagef("%v", err)
	}
	return opts.IO.Reply(opts.JSON, map[string]any{"agent": opts.Name, "path": path}, func(w io.Writer) error {
		fmt.Fprintf(w, "key for %s: %s (mode 0600)\n", opts.Name, path)
		return nil
	})
}
