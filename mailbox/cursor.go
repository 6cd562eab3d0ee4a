package mailbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
)

// cursor records, per mail ref, the newest commit already delivered to one
// agent. Refs are append-only chains, so everything up to that commit has
// been delivered and everything after it has not. It lives in the runtime
// dir (never a ref, never pushed): delivery is about this machine's
// sessions.
type cursor struct {
	Refs map[string]string `json:"refs"`
}

// cursorLockTimeout is how long a delivery waits for another delivery to
// the same agent (Claude Code runs matching hooks in parallel).
const cursorLockTimeout = 10 * time.Second

func cursorPath(repo *gitstore.Repo, agent string) (string, error) {
	path, _, err := agentFile(repo, cursorFile, agent)
	return path, err
}

// lockCursor takes the lock on agent's delivery cursor, at path, which
// also guards its in-flight record: every change to either is made under
// it.
func (b *Mailbox) lockCursor(ctx context.Context, agent string) (path string, unlock func(), err error) {
	if path, err = cursorPath(b.Repo, agent); err != nil {
		return "", nil, err
	}
	unlock, err = gitstore.LockFile(ctx, path, cursorLockTimeout)
	return path, unlock, err
}

// readDelivered reads what agent was delivered: its cursor, then its
// in-flight record.
func readDelivered(repo *gitstore.Repo, agent string) (*cursor, *inflight, error) {
	cur, err := readCursor(repo, agent)
	if err != nil {
		return nil, nil, err
	}
	in, err := readInflight(repo, agent)
	if err != nil {
		return nil, nil, err
	}
	return cur, in, nil
}

func readCursor(repo *gitstore.Repo, agent string) (*cursor, error) {
	cur := &cursor{Refs: map[string]string{}}
	if err := readAgentJSON(repo, cursorFile, agent, "delivery cursor", "remove it to deliver everything again", cur); err != nil {
		return nil, err
	}
	if cur.Refs == nil {
		cur.Refs = map[string]string{}
	}
	return cur, nil
}

// deliveredSet returns the commits of ref delivered up to through.
func (b *Mailbox) deliveredSet(ref, through string) (map[gitstore.Hash]bool, error) {
	set := map[gitstore.Hash]bool{}
	if through == "" {
		return set, nil
	}
	head, ok, err := b.Repo.ReadRef(ref)
	if err != nil || !ok {
		return set, err
	}
	entries, err := letters(b.Repo, ref, head)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		set[e.Commit] = true
		if e.Commit.String() == through {
			return set, nil
		}
	}
	// The cursor left the history (the ref was rewound): what counts as
	// delivered is the chain the cursor names, where this repository
	// still holds it.
	set = map[gitstore.Hash]bool{}
	if h, err := gitstore.ParseHash(through); err == nil {
		if old, err := letters(b.Repo, ref, h); err == nil {
			for _, e := range old {
				set[e.Commit] = true
			}
		}
	}
	return set, nil
}

// Budget bounds one delivery. At least one letter is always delivered when
// any is waiting, whatever it costs.
type Budget struct {
	Letters int                // at most this many letters
	Bytes   int                // at most this many bytes, as Cost counts them
	Cost    func(s Stored) int // what a letter costs; Size when nil
}

// Size is a letter's text size: what it costs when the caller shows it whole.
func Size(s Stored) int {
	l := s.Letter
	return len(l.What) + len(l.Snippet) + len(l.Expected) + 80
}

// Delivery is what one call put into an agent's session.
type Delivery struct {
	Letters   []Stored   // oldest first: those delivered again first, then the new
	Again     int        // how many of Letters are delivered again, after a failed turn
	Remaining int        // letters still waiting for the next call
	GaveUp    []InFlight // letters given up as undeliverable: delivered into MaxAttempts turns that all failed
	// Dropped are entries of the agent's in-flight record that no mail ref
	// for it holds (forged, or left by a rewritten ref): never delivered,
	// removed from the record, reported.
	Dropped []Dropped
}

// queue is one ref's undelivered letters, oldest first.
type queue struct {
	ref     string
	letters []Stored
	skipTo  gitstore.Hash // the newest entry, so undecodable ones are passed over too
}

// pending collects the letters addressed to agent that come after its
// cursor, per ref.
func (b *Mailbox) pending(agent string, cur *cursor) ([]*queue, int, error) {
	refs, err := b.Repo.ListRefs(RefPrefix)
	if err != nil {
		return nil, 0, err
	}
	var queues []*queue
	total := 0
	for _, r := range refs {
		through := cur.Refs[r.Name]
		if !addressedTo(r.Name, agent) || through == r.Hash.String() {
			continue
		}
		entries, err := letters(b.Repo, r.Name, r.Hash)
		if err != nil {
			return nil, 0, err
		}
		start, found := 0, through == ""
		for i, e := range entries {
			if e.Commit.String() == through {
				start, found = i+1, true
				break
			}
		}
		// The cursor is not in the ref's history: the ref was deleted and
		// made again, or rewritten. What was delivered from the chain the
		// cursor names is not delivered again (verify reports the rewind).
		delivered := map[string]bool{}
		if !found {
			if h, err := gitstore.ParseHash(through); err == nil {
				if old, err := letters(b.Repo, r.Name, h); err == nil {
					for _, e := range old {
						delivered[e.ID] = true
					}
				}
			}
		}
		q := &queue{ref: r.Name, skipTo: r.Hash}
		for _, e := range entries[start:] {
			if delivered[e.ID] {
				continue
			}
			if l, err := Decode(e.Body); err == nil {
				q.letters = append(q.letters, Stored{ID: e.ID, Letter: l, Ref: r.Name, Commit: e.Commit})
			}
		}
		total += len(q.letters)
		queues = append(queues, q)
	}
	return queues, total, nil
}

// waiting reports whether any ref addressed to agent moved past its
// cursor: a comparison of heads, nothing decoded.
func (b *Mailbox) waiting(agent string, cur *cursor) (bool, error) {
	refs, err := b.Repo.ListRefs(RefPrefix)
	if err != nil {
		return false, err
	}
	for _, r := range refs {
		if addressedTo(r.Name, agent) && cur.Refs[r.Name] != r.Hash.String() {
			return true, nil
		}
	}
	return false, nil
}

// Waiting lists the letters waiting for agent, oldest first, claiming
// nothing: what a session would be handed next (those to deliver again
// after a failed turn first).
func (b *Mailbox) Waiting(agent string) ([]Stored, error) {
	cur, in, err := readDelivered(b.Repo, agent)
	if err != nil {
		return nil, err
	}
	queues, _, err := b.pending(agent, cur)
	if err != nil {
		return nil, err
	}
	var fresh []Stored
	for _, q := range queues {
		for _, s := range q.letters {
			if !in.has(s.ID) {
				fresh = append(fresh, s)
			}
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool { return older(fresh[i], fresh[j]) })
	out := make([]Stored, 0, len(in.Again)+len(fresh))
	for _, f := range in.Again {
		out = append(out, f.Stored)
	}
	return append(out, fresh...), nil
}

// Pending counts the letters waiting for agent, claiming nothing.
func (b *Mailbox) Pending(agent string) (int, error) {
	waiting, err := b.Waiting(agent)
	return len(waiting), err
}

// Deliver claims the letters waiting for agent within budget — first those
// a failed turn never answered (delivered again, once), then the new ones,
// oldest first across all its refs — and moves the agent's cursor past
// them. With turn.Session they go into that session's turn, in flight
// until it answers (Answered); the letters in flight in the turns of
// sessions that no longer run (turn.Alive) are given back first. The claim
// holds the cursor's lock, so concurrent deliveries (parallel hook
// processes) each get different letters and every letter goes into one
// turn at a time.
func (b *Mailbox) Deliver(ctx context.Context, agent string, turn Turn, budget Budget) (*Delivery, error) {
	// Most calls find nothing new: say so without taking the lock (a
	// letter that lands meanwhile goes with the next call).
	cur, in, err := readDelivered(b.Repo, agent)
	if err != nil {
		return nil, err
	}
	if moved, err := b.waiting(agent, cur); err != nil || (!moved && len(in.Again) == 0 && !in.others(turn) && len(in.dropped) == 0) {
		return &Delivery{}, err
	}
	_, unlock, err := b.lockCursor(ctx, agent)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cur, in, err = readDelivered(b.Repo, agent); err != nil {
		return nil, err
	}
	released, gaveUp := in.release(turn)
	queues, _, err := b.pending(agent, cur)
	if err != nil {
		return nil, err
	}
	c := newClaim(turn, budget, gaveUp)
	c.d.Dropped = in.dropped
	c.takeAgain(in)
	fresh := c.takeFresh(queues, in, cur)
	c.d.Remaining = len(in.Again) + fresh
	cur.passDrained(queues)
	if turn.Session != "" {
		in.Turns = append(in.Turns, c.taken...)
	}
	// The record first, then the cursor: cut short between them, the
	// letters are delivered again, never lost.
	if released || len(c.taken) > 0 || len(in.dropped) > 0 {
		if err := writeInflight(b.Repo, agent, in); err != nil {
			return nil, fmt.Errorf("deliver to %s: %w", agent, err)
		}
	}
	if err := writeCursor(b.Repo, agent, cur); err != nil {
		return nil, fmt.Errorf("deliver to %s: %w", agent, err)
	}
	return c.d, nil
}

// claim is one delivery as Deliver fills it under the cursor's lock: the
// letters taken so far, what they cost against the budget, and the record
// of each for the in-flight file. It only decides; Deliver writes.
type claim struct {
	d       *Delivery
	budget  Budget
	cost    func(s Stored) int
	used    int
	session string
	held    bool   // the letters wait in a batch not sent yet (Turn.Held)
	at      string // when the letters go into the turn (RFC 3339)
	taken   []InFlight
}

// newClaim starts a claim for turn within budget, with Size as the cost
// and now as the time when the caller names neither.
func newClaim(turn Turn, budget Budget, gaveUp []InFlight) *claim {
	c := &claim{d: &Delivery{GaveUp: gaveUp}, budget: budget, cost: budget.Cost, session: turn.Session, held: turn.Held && turn.Session != ""}
	if c.cost == nil {
		c.cost = Size
	}
	if turn.Now.IsZero() {
		turn.Now = time.Now()
	}
	c.at = chain.Timestamp(turn.Now)
	return c
}

// fits says whether s still fits the budget. The first letter always
// fits, so a letter larger than the budget is delivered rather than stuck.
func (c *claim) fits(s Stored) bool {
	return len(c.d.Letters) == 0 || (len(c.d.Letters) < c.budget.Letters && c.used+c.cost(s) <= c.budget.Bytes)
}

// take adds s to the delivery, recorded in flight as f.
func (c *claim) take(s Stored, f InFlight) {
	c.d.Letters = append(c.d.Letters, s)
	c.used += c.cost(s)
	c.taken = append(c.taken, f)
}

// took reports whether letter id is in the claim already (delivered
// again): a record that put a letter ahead of the cursor there, by hand,
// still hands it over once.
func (c *claim) took(id string) bool {
	for _, f := range c.taken {
		if f.ID == id {
			return true
		}
	}
	return false
}

// takeAgain takes from in what a failed turn never answered, in order,
// while it fits: those go first.
func (c *claim) takeAgain(in *inflight) {
	for len(in.Again) > 0 && c.fits(in.Again[0].Stored) {
		f := in.Again[0]
		in.Again = in.Again[1:]
		f.Attempt++
		f.Session, f.At, f.Held = c.session, c.at, c.held
		c.d.Again++
		c.take(f.Stored, f)
	}
}

// takeFresh then takes the new letters while they fit, and moves cur past
// each, returning how many are left. It takes the oldest waiting of any
// ref, each ref in its own order so its cursor stays a prefix. One already
// in flight (a delivery cut short before its cursor moved) is passed over.
func (c *claim) takeFresh(queues []*queue, in *inflight, cur *cursor) int {
	fresh := 0
	for _, q := range queues {
		kept := q.letters[:0]
		for _, s := range q.letters {
			if !in.has(s.ID) && !c.took(s.ID) {
				kept = append(kept, s)
			}
		}
		q.letters = kept
		fresh += len(kept)
	}
	for {
		next := oldestQueue(queues)
		if next == nil || !c.fits(next.letters[0]) {
			return fresh
		}
		s := next.letters[0]
		next.letters = next.letters[1:]
		cur.Refs[next.ref] = s.Commit.String()
		fresh--
		c.take(s, InFlight{Stored: s, Commit: s.Commit.String(), Session: c.session, Attempt: 1, At: c.at, Held: c.held})
	}
}

// passDrained moves the cursor of each ref whose queue is empty to the
// ref's newest entry, so entries that never decode are passed over rather
// than read again on every call.
func (cur *cursor) passDrained(queues []*queue) {
	for _, q := range queues {
		if len(q.letters) == 0 {
			cur.Refs[q.ref] = q.skipTo.String() // all delivered, or only undecodable entries were left
		}
	}
}

// oldestQueue is the queue whose first letter is the oldest waiting, or
// nil when every queue is empty.
func oldestQueue(queues []*queue) *queue {
	var next *queue
	for _, q := range queues {
		if len(q.letters) > 0 && (next == nil || older(q.letters[0], next.letters[0])) {
			next = q
		}
	}
	return next
}

// MarkRead moves agent's cursor to the head of every ref addressed to it:
// what the hooks would deliver is marked read, shown nowhere.
func (b *Mailbox) MarkRead(ctx context.Context, agent string) error {
	_, unlock, err := b.lockCursor(ctx, agent)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := readCursor(b.Repo, agent)
	if err != nil {
		return err
	}
	refs, err := b.Repo.ListRefs(RefPrefix)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if addressedTo(r.Name, agent) {
			cur.Refs[r.Name] = r.Hash.String()
		}
	}
	// What a failed turn gave back, or gave up, is read now too.
	in, err := readInflight(b.Repo, agent)
	if err != nil {
		return err
	}
	if len(in.Again)+len(in.Undeliverable) > 0 {
		in.Again, in.Undeliverable = nil, nil
		if err := writeInflight(b.Repo, agent, in); err != nil {
			return fmt.Errorf("mark read for %s: %w", agent, err)
		}
	}
	if err := writeCursor(b.Repo, agent, cur); err != nil {
		return fmt.Errorf("mark read for %s: %w", agent, err)
	}
	return nil
}

func writeCursor(repo *gitstore.Repo, agent string, cur *cursor) error {
	data, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	return writeAgentJSON(repo, cursorFile, agent, data)
}

func older(a, b Stored) bool {
	if a.Letter.TS != b.Letter.TS {
		return a.Letter.TS < b.Letter.TS
	}
	return a.ID < b.ID
}

// RewoundRef is a mail ref that no longer holds what this machine
// delivered from it.
type RewoundRef struct {
	Ref       string        // the mail ref
	Agent     string        // whose delivery cursor remembers more
	Delivered gitstore.Hash // the newest commit delivered from it, no longer on it
}

// Rewound lists the mail refs whose head does not hold the newest commit
// delivered from them: deleted and made again at an older commit, or
// rewritten. Letters after the rewind point are gone from the ref, though
// the hooks and the laws saw nothing wrong with either write. A ref that
// is gone is pruned, not rewound.
func Rewound(repo *gitstore.Repo) ([]RewoundRef, error) {
	agents, err := recordAgents(repo, cursorFile)
	if err != nil {
		return nil, err
	}
	var out []RewoundRef
	for _, agent := range agents {
		cur, err := readCursor(repo, agent)
		if err != nil {
			continue // CheckRecords reports a cursor that does not read
		}
		refs := make([]string, 0, len(cur.Refs))
		for ref := range cur.Refs {
			refs = append(refs, ref)
		}
		sort.Strings(refs)
		for _, ref := range refs {
			delivered, err := gitstore.ParseHash(cur.Refs[ref])
			if err != nil {
				continue
			}
			head, ok, err := repo.ReadRef(ref)
			if err != nil || !ok || head == delivered {
				continue
			}
			entries, err := letters(repo, ref, head)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(entries, func(d chain.Doc) bool { return d.Commit == delivered }) {
				out = append(out, RewoundRef{Ref: ref, Agent: agent, Delivered: delivered})
			}
		}
	}
	return out, nil
}
