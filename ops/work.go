package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
)

// The caps of what the mission view carries: a view is read in a browser
// and by agents, never a firehose. The CLI's `mission gate` and `mission
// diff` print the whole.
const (
	GateOutputCap  = 64 << 10  // the tail of the gate's output
	AgentOutputCap = 64 << 10  // the tail of the agent's own output
	DiffCap        = 512 << 10 // the head of the diff
	packetCap      = 64 << 10
)

// MissionView is everything a human looks at before landing a mission:
// its letters as a timeline, the ask, the gate's proof and the work.
type MissionView struct {
	MissionID string   `json:"mission_id"`
	BlockID   string   `json:"block_id"`
	Phase     string   `json:"phase"`
	Timeline  []Moment `json:"timeline"`
	PacketRef string   `json:"packet_ref,omitempty"`
	Packet    string   `json:"packet,omitempty"` // the ask, when this machine ran the mission
	// Title is the ask's first line (brain.AskLine), what a card is
	// titled by; "" when this machine holds no packet of the mission.
	Title string    `json:"title,omitempty"`
	Gate  *GateView `json:"gate,omitempty"`
	// Agent is the agent's own output, as the runner kept it; absent when
	// no runner here ran the mission.
	Agent     *RunOutput              `json:"agent,omitempty"`
	Work      *WorkView               `json:"work,omitempty"`
	Candidate *chain.ReceiptCandidate `json:"receipt_candidate,omitempty"`
	// Reviews is the review thread: each review its agent was sent, with
	// the agent's answers and the commit that addressed it, oldest first.
	Reviews []ReviewView `json:"reviews,omitempty"`
}

// Moment is one letter of the timeline.
type Moment struct {
	Seq      int64          `json:"seq"`
	Phase    string         `json:"phase"`
	Agent    string         `json:"agent"`
	At       string         `json:"at"`
	Verdict  *chain.Verdict `json:"verdict,omitempty"`
	LetterID string         `json:"letter_id"`
	Commit   string         `json:"commit"`
}

// GateView is the gate a runner ran and what it printed.
type GateView struct {
	Command    string `json:"command"`
	ExitStatus *int64 `json:"exit_status,omitempty"`
	// Output is the tail of the log (GateOutputCap), control characters
	// made visible and the machine's paths replaced; "" when this machine
	// holds no log of the run.
	Output    string `json:"output,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Kept      bool   `json:"kept"` // a log of the run is on this machine
	// Pin is the runner pin whose gate proved the work (pin:sha256:…, from
	// the candidate's evidence), and PinApproved whether a passkey approved
	// that pin (refs/m1nd/pins): the gate that proves work is the human's.
	Pin         string `json:"pin,omitempty"`
	PinApproved bool   `json:"pin_approved"`
}

// RunOutput is the tail of a run's log (the agent's, a gate's), made safe
// to show (Printable).
type RunOutput struct {
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
}

// WorkView is what the agent did: the commits on its branch since the
// base, and their diff.
type WorkView struct {
	Branch    string       `json:"branch"`
	Base      string       `json:"base"`
	Target    string       `json:"target,omitempty"`
	Commits   []WorkCommit `json:"commits"`
	Files     []FileChange `json:"files"`
	Added     int          `json:"added"`
	Deleted   int          `json:"deleted"`
	Diff      string       `json:"diff"`
	Truncated bool         `json:"truncated,omitempty"`
}

// WorkCommit is one commit of the work.
type WorkCommit struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
	At      string `json:"at"`
}

// FileChange is one file of the diff with its line counts (-1 for a
// binary file).
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
}

// ShownMission is a mission as `m1nd mission show --json` and the tray's
// GET /api/missions/<id> answer it: its head, and its view.
type ShownMission struct {
	*chain.Head
	View *MissionView `json:"view"`
	// Queue is where the mission stands in the landing queue, while it
	// waits in merge_wait.
	Queue *QueueView `json:"queue,omitempty"`
	// Proof is what its gate stands on — proven by a runner the human
	// approved, or an agent's claim — for a mission in merge_wait, or
	// landed (the gate it landed).
	Proof *GateWord `json:"proof,omitempty"`
}

// ShowMission reads a mission's head and view; unknown_mission when there
// is none.
func (b *Flows) ShowMission(ctx context.Context, missionID string) (*ShownMission, error) {
	head, err := b.missions.Current(missionID)
	if err != nil {
		return nil, err
	}
	if err := b.markHeads([]*chain.Head{head}); err != nil {
		return nil, err
	}
	view, err := b.MissionView(ctx, missionID)
	if err != nil {
		return nil, err
	}
	shown := &ShownMission{Head: head, View: view}
	switch head.Phase {
	case chain.PhaseMergeWait:
		queue, err := b.Queue(ctx, []*chain.Head{head})
		if err != nil {
			return nil, err
		}
		shown.Queue = queue[missionID]
		shown.Proof = shown.Queue.Proof
	case chain.PhaseLanded:
		if shown.Proof, err = b.landedWord(head); err != nil {
			return nil, err
		}
	}
	return shown, nil
}

// MissionView reads a mission's view; unknown_mission when there is none.
func (b *Flows) MissionView(ctx context.Context, missionID string) (*MissionView, error) {
	log, err := b.missions.Log(ctx, missionID)
	if err != nil {
		return nil, err
	}
	v := &MissionView{MissionID: missionID, Timeline: make([]Moment, 0, len(log))}
	var gate *chain.Gate
	for _, e := range log {
		l := e.Decoded
		v.Timeline = append(v.Timeline, Moment{Seq: l.MissionSeq, Phase: l.Phase, Agent: e.Agent, At: l.UpdatedAt, Verdict: l.Verdict, LetterID: e.LetterID, Commit: e.Commit})
		v.BlockID, v.Phase = l.BlockID, l.Phase
		if l.PacketRef != nil {
			v.PacketRef = *l.PacketRef
		}
		if l.Gate != nil {
			gate = l.Gate
		}
		if l.ReceiptCandidate != nil {
			v.Candidate = l.ReceiptCandidate
		}
	}
	runtime := b.repo.RuntimeDir()
	side, ran, err := runs.ReadSide(runtime, missionID)
	if err != nil {
		return nil, fmt.Errorf("mission %s: side record: %w", missionID, err)
	}
	if ran {
		if packet, err := readHead(runs.SidePacket(runtime, missionID), packetCap); err == nil {
			v.Packet = strings.ToValidUTF8(string(packet), "\uFFFD")
			v.Title = brain.Ask(packet, brain.TitleBytes)
		}
		if out, cut, err := b.runOutput(missionID, side, runs.LogAgent, AgentOutputCap); err == nil {
			v.Agent = &RunOutput{Output: out, Truncated: cut}
		} else if !errors.Is(err, ErrNoRunLog) {
			return nil, fmt.Errorf("mission %s: %w", missionID, err)
		}
	}
	if gate != nil {
		if v.Gate, err = b.gateView(missionID, gate, v.Candidate, side); err != nil {
			return nil, err
		}
	}
	if v.Work, err = b.work(ctx, missionID, side); err != nil {
		return nil, err
	}
	if v.Reviews, err = b.Reviews(ctx, log); err != nil {
		return nil, fmt.Errorf("mission %s: reviews: %w", missionID, err)
	}
	return v, nil
}

// gateView is the gate a mission's letters last name, with the pin that
// proved it (from the candidate's evidence) and whether a passkey approved
// that pin, and its output when this machine keeps it.
func (b *Flows) gateView(missionID string, gate *chain.Gate, cand *chain.ReceiptCandidate, side *runs.Side) (*GateView, error) {
	g := &GateView{Command: gate.Command, ExitStatus: gate.ExitStatus}
	if cand != nil && cand.Emitter != nil {
		for _, ref := range cand.Evidence.EvidenceRefs {
			if pin, ok := strings.CutPrefix(ref, "pin:"); ok {
				g.Pin = ref
				approved, err := brain.ApprovedPins(b.repo)
				if err != nil {
					return nil, fmt.Errorf("mission %s: %w", missionID, err)
				}
				g.PinApproved = approved.Approved(cand.Emitter.ID, pin)
			}
		}
	}
	if out, cut, err := b.gateOutput(missionID, side, GateOutputCap); err == nil {
		g.Output, g.Truncated, g.Kept = out, cut, true
	}
	return g, nil
}

// ErrNoRunLog means this machine holds no such log of the mission: no
// runner here ran it (or that part of it: a gate that ran elsewhere, or
// never).
var ErrNoRunLog = errors.New("no such output is kept on this machine for this mission (it ran elsewhere, or never)")

// Output is the tail of one of a mission's run logs (runs.LogAgent,
// runs.LogGate, runs.LogRegate), at most limit bytes, made safe to show: control characters
// visible, the machine's paths replaced. truncated says the head was cut;
// ErrNoRunLog when this machine keeps no such log.
func (b *Flows) Output(missionID, log string, limit int64) (out string, truncated bool, err error) {
	if !chain.ValidMissionID(missionID) {
		return "", false, fmt.Errorf("output: %q is not a mission id", missionID)
	}
	switch log {
	case runs.LogAgent, runs.LogGate, runs.LogRegate:
	default:
		return "", false, fmt.Errorf("output: %q is not a run log (agent, gate or regate)", log)
	}
	side, _, err := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	if err != nil {
		return "", false, err
	}
	return b.runOutput(missionID, side, log, limit)
}

// gateOutput is the gate's Output with the mission's side record already
// read (nil when this machine never ran it).
func (b *Flows) gateOutput(missionID string, side *runs.Side, limit int64) (out string, truncated bool, err error) {
	return b.runOutput(missionID, side, runs.LogGate, limit)
}

// runOutput is Output with the mission's side record already read.
func (b *Flows) runOutput(missionID string, side *runs.Side, log string, limit int64) (out string, truncated bool, err error) {
	raw, truncated, err := readTail(runs.SideLog(b.repo.RuntimeDir(), missionID, log), limit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, ErrNoRunLog
	}
	if err != nil {
		return "", false, err
	}
	return b.printable(side, raw), truncated, nil
}

// Printable makes a run's output safe to show: invalid UTF-8 replaced,
// control characters other than new line and tab shown as their Unicode
// pictures (an escape sequence cannot move a terminal's cursor or colour a
// page), and the machine's paths — the mission's worktree, the repository,
// the home folder — spelled <worktree>, <repo> and ~.
func (b *Flows) Printable(missionID string, raw []byte) string {
	side, _, _ := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	return b.printable(side, raw)
}

// printable is Printable with the side record already read (nil: no
// worktree of this machine to name).
func (b *Flows) printable(side *runs.Side, raw []byte) string {
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	var paths []string
	if side != nil && side.Worktree != "" {
		paths = append(paths, side.Worktree, "<worktree>")
	}
	if main := b.repo.MainWorkTree(); main != "" {
		paths = append(paths, main, "<repo>")
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		paths = append(paths, home, "~")
	}
	if len(paths) > 0 {
		s = strings.NewReplacer(paths...).Replace(s)
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20:
			return 0x2400 + r // ␀ … ␟
		case r == 0x7f:
			return '\u2421' // ␡
		case r >= 0x80 && r < 0xa0, r == '\u2028', r == '\u2029', r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			return '\uFFFD'
		}
		return r
	}, s)
}

// readTail reads at most limit bytes from the end of path, starting at a
// line when it cut.
func readTail(path string, limit int64) ([]byte, bool, error) {
	f, err := gitstore.OpenRuntime(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	off := int64(0)
	if fi.Size() > limit {
		off = fi.Size() - limit
	}
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && n < len(buf) {
		return nil, false, err
	}
	buf = buf[:n]
	if off > 0 {
		if i := strings.IndexByte(string(buf), '\n'); i >= 0 {
			buf = buf[i+1:]
		}
		for len(buf) > 0 && !utf8.RuneStart(buf[0]) {
			buf = buf[1:]
		}
	}
	return buf, off > 0, nil
}

// WorkBranchPrefix is the folder of the branches runners work on.
const WorkBranchPrefix = "m1nd/"

// WorkBranch is the branch a runner's work is on.
func WorkBranch(missionID string) string { return WorkBranchPrefix + missionID }

// workRange is the mission's work: its branch's tip and the base it
// started from (recorded at spawn, else where the branch leaves HEAD); a
// landed mission's is the work as it landed (landedRange). ok is false
// when the repository has no work branch for the mission.
func (b *Flows) workRange(ctx context.Context, missionID string, side *runs.Side) (base, tip string, ok bool, err error) {
	if base, tip, ok, err = b.landedRange(ctx, missionID, side); ok || err != nil {
		return base, tip, ok, err
	}
	h, ok, err := b.repo.ReadRef("refs/heads/" + WorkBranch(missionID))
	if err != nil || !ok {
		return "", "", false, err
	}
	// The work as a reviewer reads it: from where the branch meets its
	// target now (after the target was merged into it, that merge base is
	// the target's tip), else from where it started.
	against := "HEAD"
	if side != nil && side.Target != "" {
		if _, ok, err := b.repo.ReadRef("refs/heads/" + side.Target); err == nil && ok {
			against = "refs/heads/" + side.Target
		} else if side.Base != "" {
			against = side.Base
		}
	} else if side != nil && side.Base != "" {
		against = side.Base
	}
	if base, err = b.gitOut(ctx, "merge-base", against, h.String()); err != nil {
		return "", "", false, fmt.Errorf("mission %s: the base of %s: %w", missionID, WorkBranch(missionID), err)
	}
	return base, h.String(), true, nil
}

// landedRange is a landed mission's work as it landed, read from the
// target's history, so it outlives the branch (worktrees prune deletes
// it): the commit its gate tested, from where the work last met the
// target — the target merged into it by a re-gate (the newest such merge's
// second parent), else the commit its worktree started from. ok is false
// for a mission that is not landed, or whose start this machine does not
// know (no runner here worked on it).
func (b *Flows) landedRange(ctx context.Context, missionID string, side *runs.Side) (base, tip string, ok bool, err error) {
	if side == nil || side.Base == "" {
		return "", "", false, nil
	}
	head, found, err := b.missions.HeadOf(missionID)
	if err != nil || !found || head.Letter.Phase != chain.PhaseLanded || head.Letter.ReceiptCandidate == nil {
		return "", "", false, err
	}
	tested, _ := head.Letter.ReceiptCandidate.Evidence.Tested()
	if tested == "" {
		return "", "", false, nil
	}
	// Each line: a commit of the work, newest first, then its parents.
	out, err := b.gitOut(ctx, "rev-list", "--first-parent", "--parents", tested, "^"+side.Base)
	if err != nil {
		return "", "", false, fmt.Errorf("mission %s: the landed work: %w", missionID, err)
	}
	base = side.Base
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			base = f[2]
			break
		}
	}
	return base, tested, true, nil
}

// ErrNoWork means the repository has no work branch for the mission.
var ErrNoWork = errors.New("no work branch: no runner on this machine worked on this mission (its letters are all there is)")

// Diff writes the mission's work as git prints it (`git diff base tip`,
// or its --stat), so it pipes into a pager or a diff viewer, and returns
// the two commits it compared.
func (b *Flows) Diff(ctx context.Context, missionID string, w io.Writer, stat bool) (base, tip string, err error) {
	side, _, err := runs.ReadSide(b.repo.RuntimeDir(), missionID)
	if err != nil {
		return "", "", err
	}
	base, tip, ok, err := b.workRange(ctx, missionID, side)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", fmt.Errorf("mission %s: %w", missionID, ErrNoWork)
	}
	args := []string{"--no-pager", "diff", "--no-ext-diff"}
	if stat {
		args = append(args, "--stat")
	}
	if _, _, err := (gitstore.GitCmd{Dir: b.repo.CommandDir(), Stdout: w}).Run(ctx, append(args, base, tip)...); err != nil {
		return "", "", fmt.Errorf("mission %s: %w", missionID, err)
	}
	return base, tip, nil
}

// work reads the commits on the mission's branch since its base; nil when
// the repository has no such branch (a mission carried by hand).
func (b *Flows) work(ctx context.Context, missionID string, side *runs.Side) (*WorkView, error) {
	base, tip, ok, err := b.workRange(ctx, missionID, side)
	if err != nil || !ok {
		return nil, err
	}
	branch := WorkBranch(missionID)
	w := &WorkView{Branch: branch, Base: base, Commits: []WorkCommit{}, Files: []FileChange{}}
	if side != nil {
		w.Target = side.Target
	}
	out, err := b.gitOut(ctx, "log", "--no-color", "--format=%H%x00%s%x00%an%x00%aI", w.Base+".."+tip)
	if err != nil {
		return nil, fmt.Errorf("mission %s: the commits of %s: %w", missionID, branch, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Split(line, "\x00"); len(f) == 4 {
			w.Commits = append(w.Commits, WorkCommit{Commit: f[0], Subject: f[1], Author: f[2], At: f[3]})
		}
	}
	if out, err = b.gitOut(ctx, "diff", "--no-color", "--no-ext-diff", "--numstat", "-z", w.Base, tip); err != nil {
		return nil, fmt.Errorf("mission %s: the diff of %s: %w", missionID, branch, err)
	}
	w.Files = parseNumstat(out)
	for _, f := range w.Files {
		w.Added += max(f.Added, 0)
		w.Deleted += max(f.Deleted, 0)
	}
	diff, err := b.gitOut(ctx, "diff", "--no-color", "--no-ext-diff", w.Base, tip)
	if err != nil {
		return nil, fmt.Errorf("mission %s: the diff of %s: %w", missionID, branch, err)
	}
	if len(diff) > DiffCap {
		cut := strings.LastIndexByte(diff[:DiffCap], '\n')
		diff, w.Truncated = diff[:cut+1], true
	}
	w.Diff = strings.ToValidUTF8(diff, "\uFFFD")
	return w, nil
}

// parseNumstat reads `git diff --numstat -z`: "added\tdeleted\tpath\0",
// or for a rename "added\tdeleted\t\0from\0to\0". An entry without a
// name (output cut short) is left out.
func parseNumstat(out string) []FileChange {
	files := []FileChange{}
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		if path == "" {
			if i+2 >= len(fields) || fields[i+1] == "" || fields[i+2] == "" {
				break // a rename cut short: its names are the last fields
			}
			path = fields[i+1] + " → " + fields[i+2]
			i += 2
		}
		added, err1 := strconv.Atoi(parts[0])
		deleted, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			added, deleted = -1, -1 // binary
		}
		files = append(files, FileChange{Path: path, Added: added, Deleted: deleted})
	}
	return files
}

// gitOut is gitRun for a command whose exit code says nothing more than
// its error.
func (b *Flows) gitOut(ctx context.Context, args ...string) (string, error) {
	out, _, err := b.gitRun(ctx, nil, args...)
	return out, err
}
