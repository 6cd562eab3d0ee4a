package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
)

// maxDocumentBytes caps what a verb reads as a submitted document (a
// letter, a receipt, an ops file): each is a few hundred bytes to a few
// kilobytes, and a runaway pipe should not fill memory.
const maxDocumentBytes = 1 << 20

// missionGroup is the mission command with the subcommands it is given: all of them
// (missionCommand), or the hot ones the small m1nd runs itself (front.go).
func missionGroup(inv *Invocation, subs ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "mission",
		Usage: "open, post to and read mission chains (refs/m1nd/missions/<id>)",
		Description: `A mission is a chain of letters (m1nd-mission-letter-v0): each letter is one
commit on refs/m1nd/missions/<id> whose tree holds letter.json, its parent the
previous letter. A new letter must extend the head: mission_seq = head + 1 and
prev_letter_id = the head's letter id, or it is refused stale_head.`,
		Subcommands: subs,
	}
}

// missionCommand is the mission command with every subcommand.
func missionCommand(inv *Invocation) *cli.Command {
	return missionGroup(inv,
		newMissionNewCmd(inv, nil),
		newMissionPostCmd(inv, nil),
		newMissionShowCmd(inv, nil),
		newMissionLogCmd(inv, nil),
		newMissionGateCmd(inv, nil),
		newMissionOutputCmd(inv, nil),
		newMissionDiffCmd(inv, nil),
		newMissionHeadsCmd(inv, nil),
		newMissionNextCmd(inv, nil),
		newMissionReviewCmd(inv, nil),
		newMissionArchiveCmd(inv, nil),
		newMissionFoldCmd(inv, nil),
	)
}

// missionNewOptions is what mission new runs on.
type missionNewOptions struct {
	IO         *IOStreams
	JSON       bool
	Agent      func() (string, error)
	Flows      func() (*ops.Flows, error)
	Block      string
	Seat       string
	Capability string
	Runner     string
	Packet     string // a FILE, or - for stdin; "" for none
	Synthetic  bool
	DeliverTo  string
	Followup   string
}

func newMissionNewCmd(inv *Invocation, runF func(context.Context, *missionNewOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "open a mission: post its first (judging) letter",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "block", Usage: "the block `ID` the mission is about (required)"},
			&cli.StringFlag{Name: "seat", Value: "hand", Usage: "seat: oracle or hand"},
			&cli.StringFlag{Name: "capability", Value: "hand-runner", Usage: "capability: " + strings.Join(chain.Capabilities, ", ")},
			&cli.StringFlag{Name: "runner", Usage: "pinned runner `ID`, when a runner runs the mission"},
			&cli.StringFlag{Name: "packet", Usage: "mission packet markdown `FILE`; its sha256 becomes packet_ref"},
			&cli.BoolFlag{Name: "synthetic", Usage: "mark a probe or smoke test (skips the block check)"},
			&cli.StringFlag{Name: "deliver-to", Usage: "deliver the packet to agent `ID`'s inbox as a packet letter (direct delivery)"},
			&cli.StringFlag{Name: "followup", Usage: "the follow-up `ID` this mission carries: its end closes it"},
			agentFlag, JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			if c.String("block") == "" {
				return Usagef("missing --block: name the block the mission is about")
			}
			opts := &missionNewOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Flows: inv.Flows,
				Block: c.String("block"), Seat: c.String("seat"), Capability: c.String("capability"), Runner: c.String("runner"),
				Packet: c.String("packet"), Synthetic: c.Bool("synthetic"), DeliverTo: c.String("deliver-to"), Followup: c.String("followup")}
			return RunWith(c.Context, opts, runF, runMissionNew)
		},
	}
}

// runMissionNew opens the mission and, with --deliver-to, delivers its packet.
func runMissionNew(ctx context.Context, opts *missionNewOptions) error {
	req := ops.MissionRequest{
		BlockID: opts.Block, Seat: opts.Seat, Capability: opts.Capability,
		RunnerID: opts.Runner, Synthetic: opts.Synthetic, Now: opts.IO.Time(),
		DeliverTo: opts.DeliverTo, Followup: opts.Followup,
	}
	if opts.Packet != "" {
		packet, err := ReadPacket(opts.Packet, opts.IO.In)
		if err != nil {
			return err
		}
		req.Packet = packet
	}
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	req.Agent = agent
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	opened, err := flows.OpenMission(ctx, req)
	if err != nil {
		return err
	}
	res, delivered := opened.Mission, opened.Delivered
	var v any = res
	if delivered != nil {
		v = struct {
			*chain.PostResult
			Delivered any `json:"delivered"` // a result in its own envelope
		}{res, rules.Success(delivered)}
	}
	return opts.IO.Reply(opts.JSON, v, func(w io.Writer) error {
		fmt.Fprintf(w, "opened %s (letter %s, judging) on %s\n", res.MissionID, res.LetterID, res.Ref)
		if delivered != nil {
			fmt.Fprintf(w, "delivered to %s's inbox as letter %s — delivery is not execution\n", req.DeliverTo, delivered.ID)
		}
		return nil
	})
}

// missionPostOptions is what mission post runs on.
type missionPostOptions struct {
	IO     *IOStreams
	Agent  func() (string, error)
	Flows  func() (*ops.Flows, error)
	Letter string // a FILE, or "" or - for stdin
}

func newMissionPostCmd(inv *Invocation, runF func(context.Context, *missionPostOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "post",
		Usage:     "post a letter (JSON from FILE or stdin); always replies in JSON",
		ArgsUsage: "[FILE|-]",
		Description: `Reads one m1nd-mission-letter-v0 document and appends it to its mission's
chain. The reply is JSON on stdout: {"ok":true,"mission_id",…,"letter_id",
"deduped"} on success, {"ok":false,"refused","field","lesson"} on refusal
(exit 3). Posting the identical letter again is ok with "deduped":true.
An archived letter is a human gesture: use 'm1nd mission archive'.`,
		Flags: []cli.Flag{agentFlag},
		Action: func(c *cli.Context) error {
			inv.jsonOut = true
			if c.NArg() > 1 {
				return Usagef("too many arguments: want one FILE (or - for stdin)")
			}
			opts := &missionPostOptions{IO: inv.io, Agent: inv.AgentOf(c), Flows: inv.Flows, Letter: c.Args().First()}
			return RunWith(c.Context, opts, runF, runMissionPost)
		},
	}
}

// runMissionPost appends the letter to its chain; the reply is always JSON.
func runMissionPost(ctx context.Context, opts *missionPostOptions) error {
	body, err := readLetter(opts.Letter, opts.IO.In)
	if err != nil {
		return err
	}
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	res, err := b.PostLetter(ctx, body, agent)
	if err != nil {
		return err
	}
	return opts.IO.printJSON(res)
}

// ReadPacket reads a mission packet (markdown) from path, or stdin for "-".
func ReadPacket(path string, stdin io.Reader) ([]byte, error) {
	return readDocument(path, stdin, "packet", Usagef("the packet is larger than %d bytes", maxDocumentBytes))
}

func readLetter(path string, stdin io.Reader) ([]byte, error) {
	return readDocument(path, stdin, "letter", rules.Refusef(rules.InvalidLetter, "",
		"the letter is larger than %d bytes; a letter is a small JSON document", maxDocumentBytes))
}

// readDocument reads a submitted JSON document from path, or stdin for ""
// and "-", refusing with tooBig anything over maxDocumentBytes.
func readDocument(path string, stdin io.Reader, what string, tooBig error) ([]byte, error) {
	var r io.Reader = stdin
	if path != "" && path != "-" {
		f, err := openDocument(path)
		if err != nil {
			return nil, Usagef("read %s: %v", what, err)
		}
		defer f.Close()
		r = f
	}
	body, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, Usagef("read %s: %v", what, err)
	}
	if len(body) > maxDocumentBytes {
		return nil, tooBig
	}
	return body, nil
}

// openDocument opens a submitted document: a regular file, or a pipe
// (`<(…)`, a named FIFO). The open never blocks: a FIFO nobody writes to
// reads as empty instead of hanging the process, and a device, a socket
// or a folder is refused.
func openDocument(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeNamedPipe == 0 {
		err = fmt.Errorf("%s is not a file or a pipe", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// missionShowOptions is what mission show runs on.
type missionShowOptions struct {
	IO        *IOStreams
	JSON      bool
	Flows     func() (*ops.Flows, error)
	MissionID string
}

// newMissionShowCmd parses mission show; a test's runF sees the options
// instead of running it.
func newMissionShowCmd(inv *Invocation, runF func(context.Context, *missionShowOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a mission: its head letter, its letters as a timeline, the gate and the work",
		ArgsUsage: "MISSION_ID",
		Description: `Prints the head letter, then every letter as a timeline (seq, phase, who,
when, verdict), the gate's last lines when it failed, and the work: the
commits on m1nd/<mission_id> since its base, with files changed and +/-
counts. --json replies {ok, mission_id, head_letter_id, head, superseded_count,
view}, as the tray's GET /api/missions/<id> does.`,
		Flags: []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			return RunWith(c.Context, &missionShowOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, MissionID: id}, runF, runMissionShow)
		},
	}
}

// runMissionShow shows the mission as the tray does: its head, timeline,
// gate and work.
func runMissionShow(ctx context.Context, opts *missionShowOptions) error {
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	shown, err := b.ShowMission(ctx, opts.MissionID)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, shown, func(w io.Writer) error {
		if f := shown.Fault; f != nil {
			fmt.Fprintf(w, "BROKEN      its history breaks the laws at %.12s: %s: %s — nothing proceeds on it (m1nd verify)\n", f.Commit, f.Refused, f.Lesson)
		}
		switch {
		case shown.Folded && shown.Fault == nil:
			fmt.Fprintf(w, "folded      into %s: finished, it has no live ref\n", chain.ArchiveRef)
		case shown.Folded:
			fmt.Fprintf(w, "folded      into %s, which is not to be trusted for it (BROKEN, above)\n", chain.ArchiveRef)
		}
		if shown.View.Title != "" {
			fmt.Fprintf(w, "ask         %s\n", shown.View.Title)
		}
		printLetter(w, shown.HeadLetterID, shown.Letter, shown.Proof)
		fmt.Fprintf(w, "superseded  %s\n", rules.Count(int(shown.SupersededCount), "earlier letter"))
		if q := shown.Queue; q != nil {
			fmt.Fprintf(w, "queue       %s: %s\n", q.State, q.Why)
			if q.Output != "" {
				for _, line := range strings.Split(q.Output, "\n") {
					fmt.Fprintf(w, "  %s\n", line)
				}
			}
		}
		printView(w, shown.View)
		return nil
	})
}

// printView prints a mission view's timeline, gate tail and work.
func printView(w io.Writer, v *ops.MissionView) {
	fmt.Fprintf(w, "\ntimeline\n")
	for _, m := range v.Timeline {
		verdict := ""
		if m.Verdict != nil {
			verdict = m.Verdict.Decision + " " + m.Verdict.Gist
		}
		fmt.Fprintf(w, "  #%-3d %-10s %s  %-16s %s\n", m.Seq, m.Phase, m.At, m.Agent, verdict)
	}
	printReviews(w, v.Reviews)
	if g := v.Gate; g != nil && g.ExitStatus != nil && *g.ExitStatus != 0 && g.Output != "" {
		fmt.Fprintf(w, "\ngate output (last lines; m1nd mission gate %s prints it all)\n", v.MissionID)
		for _, l := range ops.LastLines(g.Output, 8) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if a := v.Agent; a != nil && a.Output != "" {
		fmt.Fprintf(w, "\nagent output (last lines; m1nd mission output %s prints it all)\n", v.MissionID)
		for _, l := range ops.LastLines(a.Output, 8) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if wk := v.Work; wk != nil {
		target := ""
		if wk.Target != "" {
			target = ", lands in " + wk.Target
		}
		fmt.Fprintf(w, "\nwork        %s: %s, %s (+%d -%d) since %.12s%s\n", wk.Branch, rules.Count(len(wk.Commits), "commit"), rules.Count(len(wk.Files), "file"), wk.Added, wk.Deleted, wk.Base, target)
		for _, c := range wk.Commits {
			fmt.Fprintf(w, "  %.12s %s\n", c.Commit, c.Subject)
		}
		for _, f := range wk.Files {
			if f.Added < 0 {
				fmt.Fprintf(w, "  %s (binary)\n", f.Path)
				continue
			}
			fmt.Fprintf(w, "  %s +%d -%d\n", f.Path, f.Added, f.Deleted)
		}
		fmt.Fprintf(w, "  (m1nd mission diff %s prints the diff)\n", v.MissionID)
	}
}

// reviewLines is how many lines of a review's body and of an answer
// mission show prints (--json carries them whole).
const reviewLines = 6

// printReviews prints a mission's review thread: each review with its
// comments by file and line, the agent's answers, and the commit that
// addressed it.
func printReviews(w io.Writer, reviews []ops.ReviewView) {
	if len(reviews) == 0 {
		return
	}
	fmt.Fprintf(w, "\nreviews\n")
	for _, r := range reviews {
		recorded := ""
		if r.Recorded != "" {
			recorded = ", recorded as " + r.Recorded
		}
		fmt.Fprintf(w, "  round %d · %s by %s, %s (letter %s%s)\n", r.Round, r.State(), r.By, r.At, r.MailID, recorded)
		printIndented(w, "    ", r.Body)
		for _, c := range r.Comments {
			fmt.Fprintf(w, "    %s:%d (at %.12s)\n", c.Path, c.Line, c.Commit)
			printIndented(w, "      ", c.Text)
		}
		for _, a := range r.Answers {
			fmt.Fprintf(w, "    answer from the agent, %s (letter %s)\n", a.At, a.ID)
			printIndented(w, "      ", a.What)
		}
		if r.AddressedBy != "" {
			fmt.Fprintf(w, "    addressed by %.12s, gated as round %d\n", r.AddressedBy, r.Round+1)
		}
	}
}

// printIndented prints text's first reviewLines lines under indent, and
// how many more there are.
func printIndented(w io.Writer, indent, text string) {
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if i == reviewLines {
			fmt.Fprintf(w, "%s… %s more (--json has them)\n", indent, rules.Count(len(lines)-i, "line"))
			return
		}
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
}

// printLetter prints a head letter; proof is what its gate stands on (a
// merge_wait's, a landed one's), whose words replace an agent's claim
// wherever the letter repeats it.
func printLetter(w io.Writer, id string, l *chain.Letter, proof *ops.GateWord) {
	claim := proof != nil && !proof.Proven()
	fmt.Fprintf(w, "mission     %s #%d  (letter %s)\n", l.MissionID, l.MissionSeq, id)
	fmt.Fprintf(w, "phase       %s\n", l.Phase)
	fmt.Fprintf(w, "block       %s  (brain %s)\n", l.BlockID, l.BrainRef)
	role := l.Seat + " · " + l.Capability
	if l.RunnerID != nil {
		role += " · runner " + *l.RunnerID
	}
	fmt.Fprintf(w, "seat        %s\n", role)
	if v := l.Verdict; v != nil {
		said := ""
		if claim {
			said = fmt.Sprintf("  (%s's own words, not proven)", proof.Agent)
		}
		fmt.Fprintf(w, "verdict     %s %s%s\n", v.Decision, v.Gist, said)
	}
	if g := l.Gate; g != nil {
		line := g.Command
		if g.ExitStatus != nil {
			line += fmt.Sprintf(" · exit %d", *g.ExitStatus)
		}
		if claim {
			line += " (claimed)"
		}
		fmt.Fprintf(w, "gate        %s\n", line)
	}
	if proof != nil {
		fmt.Fprintf(w, "proof       %s\n", proof.Says)
	}
	if l.Phase == chain.PhaseMergeWait {
		state := "receipt not landed"
		if c := l.ReceiptCandidate; claim && c != nil && rules.NamesTree(c.Evidence) {
			state = "not landable as it is: m1nd land asks runnerd to run an approved gate on exactly its tree"
		}
		fmt.Fprintf(w, "            %s\n", state)
	}
	if r := l.Receipt; r != nil && r.Imported {
		fmt.Fprintf(w, "receipt     ✓ store v%d\n", r.StoreVersion)
	}
	if l.PacketRef != nil {
		fmt.Fprintf(w, "packet      %s\n", *l.PacketRef)
	}
	if l.Synthetic {
		fmt.Fprintf(w, "synthetic   yes\n")
	}
	fmt.Fprintf(w, "started     %s\nupdated     %s\n", l.StartedAt, l.UpdatedAt)
}

// logReply is what mission log answers.
type logReply struct {
	ID        string        `json:"id"`
	MissionID string        `json:"mission_id"`
	Letters   []chain.Entry `json:"letters"`
}

// missionLogOptions is what mission log runs on.
type missionLogOptions struct {
	IO        *IOStreams
	JSON      bool
	Missions  func() (*ops.Flows, error)
	MissionID string
}

// newMissionLogCmd parses mission log; a test's runF sees the options
// instead of running it.
func newMissionLogCmd(inv *Invocation, runF func(context.Context, *missionLogOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "list a mission's letters, oldest first",
		ArgsUsage: "MISSION_ID",
		Flags:     []cli.Flag{JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			return RunWith(c.Context, &missionLogOptions{IO: inv.io, JSON: c.Bool("json"), Missions: inv.Flows, MissionID: id}, runF, runMissionLog)
		},
	}
}

// runMissionLog lists the mission's letters, oldest first.
func runMissionLog(ctx context.Context, opts *missionLogOptions) error {
	m, err := opts.Missions()
	if err != nil {
		return err
	}
	id := opts.MissionID
	entries, err := m.Log(ctx, id)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, logReply{ID: id, MissionID: id, Letters: entries}, func(w io.Writer) error {
		for _, e := range entries {
			l := e.Decoded
			gist := ""
			if l.Verdict != nil {
				gist = l.Verdict.Decision + " " + l.Verdict.Gist
			}
			fmt.Fprintf(w, "#%-3d %-10s %s  %s  %-12s %s\n", l.MissionSeq, l.Phase, e.LetterID, l.UpdatedAt, e.Agent, gist)
		}
		return nil
	})
}

// missionHeadsOptions is what mission heads runs on.
type missionHeadsOptions struct {
	IO    *IOStreams
	JSON  bool
	Flows func() (*ops.Flows, error)
	Phase string // "" for every phase
}

// newMissionHeadsCmd parses mission heads; a test's runF sees the options
// instead of running it.
func newMissionHeadsCmd(inv *Invocation, runF func(context.Context, *missionHeadsOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "heads",
		Usage:     "list every mission's head letter, by mission id",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "only heads in phase `P`"},
			JSONFlag,
		},
		Before: NoArgs,
		Action: func(c *cli.Context) error {
			phase, err := phaseFlag(c)
			if err != nil {
				return err
			}
			return RunWith(c.Context, &missionHeadsOptions{IO: inv.io, JSON: c.Bool("json"), Flows: inv.Flows, Phase: phase}, runF, runMissionHeads)
		},
	}
}

// runMissionHeads lists every mission's head letter.
func runMissionHeads(ctx context.Context, opts *missionHeadsOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	phase := opts.Phase
	// The text names fields of each letter; the JSON reply re-sends
	// the letters' bytes.
	view, err := flows.Heads(ctx, phase, !opts.JSON)
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, ops.HeadsReply{HeadsView: view}, func(w io.Writer) error {
		if len(view.Missions) == 0 && phase != "" {
			fmt.Fprintf(w, "no mission heads in phase %s\n", phase)
			return nil
		}
		if len(view.Missions) == 0 {
			fmt.Fprintf(w, "no missions yet — open one with: m1nd mission new --block ID\n")
			return nil
		}
		for _, h := range view.Missions {
			l := h.Letter
			broken := ""
			if h.Fault != nil {
				broken = "  BROKEN " + h.Fault.Refused + ": " + h.Fault.Lesson
			}
			fmt.Fprintf(w, "%s  #%-3d %s %-28s %s  %s%s\n", h.MissionID, l.MissionSeq, paint(opts.IO.colorOut, phaseStyle(l.Phase), l.Phase, 10), l.BlockID, h.HeadLetterID, l.UpdatedAt, broken)
		}
		return nil
	})
}

// phaseFlag reads and checks --phase ("" when unset).
func phaseFlag(c *cli.Context) (string, error) {
	phase := c.String("phase")
	if phase == "" {
		return "", nil
	}
	if err := ops.CheckPhase(phase); err != nil {
		return "", Usagef("--%v", err)
	}
	return phase, nil
}

// missionArchiveOptions is what mission archive runs on.
type missionArchiveOptions struct {
	IO        *IOStreams
	JSON      bool
	Agent     func() (string, error)
	Missions  func() (*ops.Flows, error)
	MissionID string
}

func newMissionArchiveCmd(inv *Invocation, runF func(context.Context, *missionArchiveOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "archive",
		Usage:     "archive a merge_wait mission (a human gesture: asks at the terminal)",
		ArgsUsage: "MISSION_ID",
		Description: `Posts an archived letter that supersedes a merge_wait head whose receipt will
not be landed; the landing bell drops. This is a human gesture: it runs only
at an interactive terminal, asks you to type the mission id, and only while
the brain has no registered passkey (then archive in the tray). Agents cannot
archive their own work.`,
		Flags: []cli.Flag{agentFlag, JSONFlag},
		Action: func(c *cli.Context) error {
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			opts := &missionArchiveOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Missions: inv.Flows, MissionID: id}
			return RunWith(c.Context, opts, runF, runMissionArchive)
		},
	}
}

// runMissionArchive asks for the gesture at the terminal and posts the
// archived letter; without the gesture the law refuses it.
func runMissionArchive(ctx context.Context, opts *missionArchiveOptions) error {
	m, err := opts.Missions()
	if err != nil {
		return err
	}
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	id := opts.MissionID
	if ref, err := chain.MissionRef(id); err == nil {
		if err := m.CheckSound(ctx, ref); err != nil {
			return err
		}
	}
	origin, err := opts.IO.Gesture(m.TerminalGesture, rules.GestureArchive, fmt.Sprintf("Archive %s? Its merge_wait head is superseded and the landing bell drops.", id), "mission id", id)
	if err != nil {
		return err
	}
	res, err := m.Archive(ctx, id, agent, origin, opts.IO.Time())
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		fmt.Fprintf(w, "archived %s (letter %s, #%d)\n", res.MissionID, res.LetterID, res.MissionSeq)
		return nil
	})
}

// missionNextOptions is what mission next runs on.
type missionNextOptions struct {
	IO        *IOStreams
	Flows     func() (*ops.Flows, error)
	MissionID string
	Phase     string // "" keeps the head's phase
}

func newMissionNextCmd(inv *Invocation, runF func(context.Context, *missionNextOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "next",
		Usage:     "print the letter that would extend a mission's head (posts nothing)",
		ArgsUsage: "MISSION_ID",
		Description: `Prints the head letter moved one step on: mission_seq + 1, prev_letter_id set
to the head's id, updated_at now, and --phase if given. Edit it (add a verdict,
a gate, …) and post it, or pipe it straight in:

   m1nd mission next msn_0123456789ab --phase executing | m1nd mission post`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "the next letter's phase `P`"},
		},
		Action: func(c *cli.Context) error {
			phase, err := phaseFlag(c)
			if err != nil {
				return err
			}
			id, err := inv.missionArg(c)
			if err != nil {
				return err
			}
			opts := &missionNextOptions{IO: inv.io, Flows: inv.Flows, MissionID: id, Phase: phase}
			return RunWith(c.Context, opts, runF, runMissionNext)
		},
	}
}

// runMissionNext prints the head letter moved one step on.
func runMissionNext(_ context.Context, opts *missionNextOptions) error {
	flows, err := opts.Flows()
	if err != nil {
		return err
	}
	next, err := flows.NextLetter(opts.MissionID, opts.Phase, opts.IO.Time())
	if err != nil {
		return err
	}
	_, err = opts.IO.Out.Write(append(next.Canonical(), '\n'))
	return err
}

// missionFoldOptions is what mission fold runs on.
type missionFoldOptions struct {
	IO        *IOStreams
	JSON      bool
	Agent     func() (string, error)
	Flows     func() (*ops.Flows, error)
	OlderThan time.Duration
}

// newMissionFoldCmd parses mission fold; a test's runF sees the options
// instead of running it.
func newMissionFoldCmd(inv *Invocation, runF func(context.Context, *missionFoldOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "fold",
		Usage: "fold finished missions out of the live refs into refs/m1nd/archive (housekeeping)",
		Description: `Folds every mission that landed or was archived, and whose last letter is
older than --older-than, into refs/m1nd/archive, then deletes its live ref
refs/m1nd/missions/<id>. A fold commit lists the missions it folds, and its
parents are the previous fold and those missions' head commits: every letter
stays reachable with its proofs, mission show and mission log read it as
before, and verify, the git hooks and sync judge it as they judged it live.
A mission whose history breaks the laws is named and not folded. Sync
carries the archive and deletes the folded missions' refs on the remote.
--json replies {ok, folded, folds, removed, broken, live, archived}.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Value: "30d", Usage: "fold missions finished longer ago than `AGE` (30d, 12h, 0 for all)"},
			asAgentFlag, JSONFlag,
		},
		Action: func(c *cli.Context) error {
			age, err := parseAge(c.String("older-than"))
			if err != nil {
				return Usagef("--older-than: %v", err)
			}
			opts := &missionFoldOptions{IO: inv.io, JSON: c.Bool("json"), Agent: inv.AgentOf(c), Flows: inv.Flows, OlderThan: age}
			return RunWith(c.Context, opts, runF, runMissionFold)
		},
	}
}

// runMissionFold folds the finished missions as the acting agent.
func runMissionFold(ctx context.Context, opts *missionFoldOptions) error {
	agent, err := opts.Agent()
	if err != nil {
		return err
	}
	b, err := opts.Flows()
	if err != nil {
		return err
	}
	res, err := b.Fold(ctx, ops.FoldRequest{OlderThan: opts.OlderThan, Agent: agent, Now: opts.IO.Time()})
	if err != nil {
		return err
	}
	return opts.IO.Reply(opts.JSON, res, func(w io.Writer) error {
		for _, f := range res.Broken {
			fmt.Fprintf(w, "not folded  %s: its history breaks the laws at %.12s: %s (m1nd verify)\n", f.Ref, f.Commit, f.Code)
		}
		fmt.Fprintf(w, "folded %s in %s into %s; %s removed\n", rules.Count(len(res.Folded), "mission"), rules.Count(res.Folds, "fold"), chain.ArchiveRef, rules.Count(res.Removed, "live ref"))
		fmt.Fprintf(w, "%s live, %s in the archive\n", rules.Count(res.Live, "mission"), rules.Count(res.Archived, "mission"))
		return nil
	})
}

// parseAge reads an age as a Go duration, or a whole number of days
// ("30d"); "0" is no age at all.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age (30d, 12h)", s)
	}
	return d, nil
}
