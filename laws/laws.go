package laws

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/mailbox"
	"github.com/m1nd/m1nd/memory"
	"github.com/m1nd/m1nd/rules"
)

// Objects reads what the ref laws look at: a gitstore.Repo (m1nd verify)
// or a gitstore.CatFile (a git hook, whose pushed objects wait in git's
// quarantine).
type Objects = gitstore.Objects

// Update is one ref moving from Old to New (ZeroHash for none).
type Update struct {
	Old, New gitstore.Hash
	Ref      string
}

// RefFault is a ref law broken at one commit.
type RefFault struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit,omitempty"`
	Code   string `json:"refused"`
	Lesson string `json:"lesson"`
}

func (f *RefFault) Error() string {
	at := ""
	if f.Commit != "" {
		at = " at " + f.Commit[:12]
	}
	return fmt.Sprintf("%s%s: %s: %s", f.Ref, at, f.Code, f.Lesson)
}

func fault(u Update, commit gitstore.Hash, code rules.Code, format string, args ...any) *RefFault {
	f := &RefFault{Ref: u.Ref, Code: string(code), Lesson: fmt.Sprintf(format, args...)}
	if !commit.IsZero() {
		f.Commit = commit.String()
	}
	return f
}

// CheckUpdate applies the laws of m1nd history to one raw ref update:
// chains are append-only (no deletion but of a kind that allows it, no
// rewrite), and every new commit must be a valid link of its chain.
// packing says whether a deletion is `git pack-refs` removing the loose
// copy of a ref that lives on in packed-refs — no deletion at all; nil
// means never.
func CheckUpdate(objs Objects, u Update, packing func(Update) bool) *RefFault {
	return (&Laws{Packing: packing, Strict: true, Kinds: Shipped()}).Check(objs, u)
}

// Laws are the ref laws with what this machine knows: which deletions are
// pack-refs at work, its runtime dir (where the agent keys that prove
// shared documents' publishers live), and the store's and the keys' heads
// as of the update, which a landed letter must be backed by and a gesture
// proven by (ZeroHash: none).
type Laws struct {
	Packing   func(Update) bool
	Env       chain.Env
	StoreHead gitstore.Hash
	// KeysHead is the brain's passkeys as of the update (ZeroHash: none ever
	// registered): once a key exists, a gesture needs its proof, or a place
	// in the history a key change anchored (brain.KeysAt).
	KeysHead gitstore.Hash
	// Strict judges commits being written (a git hook, a remote's
	// pre-receive): the tray's unsigned human-ui claim of before passkeys
	// counts in history only.
	Strict bool
	// RequirePasskey refuses every terminal gesture, before the first key
	// too (hooks install --bare --require-passkey).
	RequirePasskey bool
	// ArchiveHead is the archive as of the update (ZeroHash: none): a
	// mission it folds takes no more letters, and its live ref may be
	// deleted at exactly the head folded.
	ArchiveHead gitstore.Hash
	// PinsHead is the approved runner pins as of the update (ZeroHash:
	// none): a runner's merge_wait stands on a signature by the key they
	// approve for it (brain.PinsAt).
	PinsHead gitstore.Hash
	// Kinds are the kinds judged: a ref none of them owns is none of the
	// laws' business. Nil: Shipped, the kinds m1nd ships; a test judges
	// its own list.
	Kinds chain.Kinds

	mu       sync.Mutex
	folded   map[string]chain.Folded // the archive at archived, read once
	archived gitstore.Hash
	gestures *brain.KeysAt                           // one judge of gestures for every update, read once
	gateJ    *brain.PinsAt                           // one judge of runners' signatures, read once
	landings *brain.StoreAt                          // the store for every landing, walked once
	gated    map[string]map[string][]brain.Landing   // store head and protected branch → its gated trees, read once
	head     func(ref string) (gitstore.Hash, error) // the heads SetHeads was given: any ref as the update leaves it
}

// Shipped is every kind m1nd ships, the list the laws judge by wherever
// m1nd runs (the CLI, its hooks, a remote's pre-receive, sync, verify):
// a kind is judged because it is named here, never because the binary
// happens to link its package.
func Shipped() chain.Kinds {
	return chain.Kinds{ // by prefix, as NewKinds orders them (TestShippedKinds)
		chain.ArchiveKind, memory.AtlasKind, brain.RegistrationKind, brain.KeysKind, mailbox.Kind,
		memory.Kind, chain.MissionKind, brain.PinsKind, brain.StoreKind,
	}
}

// kinds is the list the laws judge by.
func (laws *Laws) kinds() chain.Kinds {
	if laws.Kinds == nil {
		return Shipped()
	}
	return laws.Kinds
}

// HeadRefs are the refs the laws judge others against: the store (a
// landed letter's import), the keys (a gesture's proof), the archive
// (what is folded) and the runner pins (a gate's signature). Their heads
// are the Laws' StoreHead, KeysHead, ArchiveHead and PinsHead.
var HeadRefs = []string{brain.StoreRef, brain.KeysRef, chain.ArchiveRef, brain.PinsRef}

// SetHeads sets StoreHead, KeysHead, ArchiveHead and PinsHead to what
// head says each of HeadRefs is as the updates are judged (ZeroHash:
// none).
func (laws *Laws) SetHeads(head func(ref string) (gitstore.Hash, error)) error {
	laws.head = head
	for i, dst := range []*gitstore.Hash{&laws.StoreHead, &laws.KeysHead, &laws.ArchiveHead, &laws.PinsHead} {
		h, err := head(HeadRefs[i])
		if err != nil {
			return fmt.Errorf("read %s: %w", HeadRefs[i], err)
		}
		*dst = h
	}
	return nil
}

// RepoHeads is the head function of SetHeads for refs as they stand.
func RepoHeads(repo *gitstore.Repo) func(string) (gitstore.Hash, error) {
	return func(ref string) (gitstore.Hash, error) {
		h, _, err := repo.ReadRef(ref)
		return h, err
	}
}

// archive is what the archive at ArchiveHead folds, read once per head.
func (laws *Laws) archive(objs Objects) (map[string]chain.Folded, error) {
	laws.mu.Lock()
	defer laws.mu.Unlock()
	if laws.folded == nil || laws.archived != laws.ArchiveHead {
		index, err := chain.ArchiveIndex(objs, laws.ArchiveHead)
		if err != nil {
			return nil, err
		}
		laws.folded, laws.archived = index, laws.ArchiveHead
	}
	return laws.folded, nil
}

// ForRepo is the judge of repo's refs as they stand: the store and the
// keys at their heads now, the runtime dir for agent keys. Verify, sync
// and the views read with it; the git hooks build theirs from the heads a
// transaction moves to (ForTransaction).
func ForRepo(repo *gitstore.Repo) (*Laws, error) {
	return judgeAt(repo.RuntimeDir(), RepoHeads(repo), false)
}

// ForSync is ForRepo judging strictly, as a git hook judges a commit being
// written: the judge of what crosses between a clone and a remote (sync,
// a repair, the registration init adopts), which this clone takes or
// pushes as new.
func ForSync(repo *gitstore.Repo) (*Laws, error) {
	return judgeAt(repo.RuntimeDir(), RepoHeads(repo), true)
}

// ForTransaction is the judge of a ref transaction, as the git hooks
// judge one: strictly (every commit it brings is new), against the heads
// the transaction leaves (head), with the agent keys of runtimeDir ("" on
// a remote, which holds none).
func ForTransaction(runtimeDir string, head func(ref string) (gitstore.Hash, error)) (*Laws, error) {
	return judgeAt(runtimeDir, head, true)
}

// judgeAt is the one way a judge is made: the heads first (the keys, the
// store and the archive every other ref is judged against), then the rest.
func judgeAt(runtimeDir string, head func(ref string) (gitstore.Hash, error), strict bool) (*Laws, error) {
	l := &Laws{Env: chain.Env{RuntimeDir: runtimeDir}, Strict: strict, Kinds: Shipped()}
	if err := l.SetHeads(head); err != nil {
		return nil, err
	}
	return l, nil
}

// Keys is the key set the laws judge gestures by (nil: none registered).
func (laws *Laws) Keys(objs Objects) (*brain.KeySet, error) {
	return laws.gestureJudge(objs).Keys()
}

func (laws *Laws) storeAt(objs Objects) *brain.StoreAt {
	laws.mu.Lock()
	defer laws.mu.Unlock()
	if laws.landings == nil || laws.landings.Objects != objs || laws.landings.Head != laws.StoreHead {
		laws.landings = brain.NewStoreAt(objs, laws.StoreHead)
	}
	return laws.landings
}

func (laws *Laws) gestureJudge(objs Objects) *brain.KeysAt {
	laws.mu.Lock()
	defer laws.mu.Unlock()
	if laws.gestures == nil || laws.gestures.Objects != objs || laws.gestures.Head != laws.KeysHead {
		laws.gestures = &brain.KeysAt{Objects: objs, Head: laws.KeysHead, Strict: laws.Strict, RequirePasskey: laws.RequirePasskey}
	}
	return laws.gestures
}

// refHead is ref's head as the updates being judged leave it (ZeroHash:
// none), through the head function SetHeads was given.
func (laws *Laws) refHead(ref string) (gitstore.Hash, error) {
	if laws.head == nil {
		return gitstore.ZeroHash, fmt.Errorf("the laws were given no heads to read %s by", ref)
	}
	return laws.head(ref)
}

// gateJudge is the judge of runners' signatures at PinsHead, read once.
func (laws *Laws) gateJudge(objs Objects) *brain.PinsAt {
	laws.mu.Lock()
	defer laws.mu.Unlock()
	if laws.gateJ == nil || laws.gateJ.Objects != objs || laws.gateJ.Head != laws.PinsHead {
		laws.gateJ = &brain.PinsAt{Objects: objs, Head: laws.PinsHead}
	}
	return laws.gateJ
}

// Check applies the laws to one update (see CheckUpdate). A ref of no
// kind judged (conflicts, tracking refs) is none of the laws' business.
func (laws *Laws) Check(objs Objects, u Update) *RefFault {
	kind, ok := laws.kinds().Of(u.Ref)
	if !ok || (u.Old == u.New && !u.New.IsZero()) {
		return nil
	}
	if kind == chain.MissionKind {
		if folded, f := laws.checkFolded(objs, u); f != nil || folded && u.New.IsZero() {
			return f
		}
	}
	if u.New.IsZero() {
		if kind.Deletable || (laws.Packing != nil && laws.Packing(u)) {
			return nil
		}
		return fault(u, gitstore.ZeroHash, rules.InvalidTransition, "m1nd history is append-only: deleting %s would bury its letters", u.Ref)
	}
	fresh, f := newCommits(objs, u, kind)
	if f != nil || len(fresh) == 0 {
		return f
	}
	if f := laws.judgeFresh(objs, u, kind, fresh); f != nil {
		return f
	}
	if kind == chain.ArchiveKind {
		return laws.checkFolds(objs, u, fresh)
	}
	return nil
}

// judgeFresh judges the new commits of u's chain, oldest first.
func (laws *Laws) judgeFresh(objs Objects, u Update, kind *chain.Kind, fresh []link) *RefFault {
	// Oldest first, each against the document before it, which is read
	// once: the old head's for the first new commit, then each new one's as
	// it was checked.
	env := laws.Env
	if env.Landings == nil {
		env.Landings = laws.storeAt(objs)
	}
	if env.Gestures == nil {
		env.Gestures = laws.gestureJudge(objs)
	}
	if env.Gates == nil {
		env.Gates = laws.gateJudge(objs)
	}
	prev, err := kind.ReadParent(objs, u.Ref, fresh[0].commit)
	if err != nil {
		return fault(u, fresh[0].hash, rules.InvalidLetter, "%v", err)
	}
	for _, l := range fresh {
		next, err := kind.JudgeNext(objs, u.Ref, prev, l.hash, l.commit, env)
		if err != nil {
			if _, ok := rules.AsRefusal(err); !ok && next.Body == nil && kind.File != "" {
				return fault(u, l.hash, rules.InvalidLetter, "%s %s commit holds %s: %v", article(kind.Name), kind.Name, kind.File, err)
			}
			return asFault(u, l.hash, err)
		}
		prev = next
	}
	return nil
}

// link is one commit of a chain, read once.
type link struct {
	hash   gitstore.Hash
	commit *gitstore.Commit
}

// newCommits reads the commits from New back to (not including) Old along
// first parents and returns them oldest first; Old must be on that line,
// or the update rewrites history.
func newCommits(objs Objects, u Update, kind *chain.Kind) ([]link, *RefFault) {
	var out []link
	rewrite := !u.Old.IsZero()
	for h := u.New; !h.IsZero(); {
		if h == u.Old {
			rewrite = false
			break
		}
		c, err := objs.ReadCommit(h)
		if err != nil {
			return nil, fault(u, h, rules.InvalidLetter, "the commit cannot be read: %v", err)
		}
		if len(c.Parents) > 1 && !kind.KeepParents {
			return nil, fault(u, h, rules.InvalidLetter, "an m1nd chain has one parent per commit; this one has %d", len(c.Parents))
		}
		out = append(out, link{hash: h, commit: c})
		if len(out) > 1_000_000 {
			return nil, fault(u, h, rules.InvalidLetter, "the chain is too long to check")
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	if rewrite {
		return nil, fault(u, u.New, rules.InvalidTransition, "this update rewrites %s: m1nd history only grows (the old head is not an ancestor of the new one)", u.Ref)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// asFault is the fault at commit h for an error of a document check: a
// refusal keeps its code and lesson, anything else is invalid_letter.
func asFault(u Update, h gitstore.Hash, err error) *RefFault {
	if err == nil {
		return nil
	}
	if r, ok := rules.AsRefusal(err); ok {
		return fault(u, h, r.Code, "%s", r.Lesson)
	}
	return fault(u, h, rules.InvalidLetter, "%v", err)
}

// Verify checks every chain under refs/m1nd/ from its root, as the hooks
// would have checked each update, judging kinds (nil: Shipped). It
// returns the faults found and how many refs it checked.
func Verify(ctx context.Context, repo *gitstore.Repo, kinds chain.Kinds) ([]*RefFault, int, error) {
	refs, odd, err := repo.ListRefsAndSymbolic(chain.RefRoot)
	if err != nil {
		return nil, 0, err
	}
	var faults []*RefFault
	for _, o := range odd {
		lesson := "a symbolic ref (git symbolic-ref made it): m1nd refs hold commits; point it back at its chain with git update-ref --no-deref"
		if o.Kind != "symbolic ref" {
			lesson = "a " + o.Kind + " where a ref file should be: m1nd never reads it (it could block, or point anywhere); remove it and restore the ref with git update-ref"
		}
		faults = append(faults, &RefFault{Ref: o.Name, Code: string(rules.InvalidLetter), Lesson: lesson})
	}
	checked := len(odd)
	laws, err := ForRepo(repo)
	if err != nil {
		return nil, 0, err
	}
	laws.Kinds = kinds
	judged := laws.kinds()
	if _, err := laws.Keys(repo); err != nil {
		return nil, 0, err // read once, before the judges run side by side
	}
	// Each chain is judged on its own (reads only), so many at once; the
	// faults keep the refs' order.
	found := make([]*RefFault, len(refs))
	ours := make([]bool, len(refs))
	gitstore.Parallel(len(refs), func(i int) {
		r := refs[i]
		kind, ok := judged.Of(r.Name)
		if !ok || ctx.Err() != nil {
			return
		}
		ours[i] = true
		if kind.ValidName != nil && !kind.ValidName(strings.TrimPrefix(r.Name, kind.Prefix)) {
			found[i] = &RefFault{Ref: r.Name, Code: string(rules.InvalidLetter), Lesson: fmt.Sprintf("not %s %s id", article(kind.Name), kind.Name)}
			return
		}
		found[i] = laws.Check(repo, Update{New: r.Hash, Ref: r.Name})
	})
	if err := ctx.Err(); err != nil {
		return nil, checked, err
	}
	for i, f := range found {
		if ours[i] {
			checked++
		}
		if f != nil {
			faults = append(faults, f)
		}
	}
	more, err := hiddenRewrites(repo)
	if err != nil {
		return nil, checked, err
	}
	return append(faults, more...), checked, nil
}

// hiddenRewrites finds what the chain walk cannot see: a replace ref that
// makes plain git show another object in place of an m1nd commit (m1nd
// reads the original; `git log` does not), and a mail ref that lost
// letters this machine delivered from it (deleted and made again at an
// older commit: each write alone is legal).
func hiddenRewrites(repo *gitstore.Repo) ([]*RefFault, error) {
	var faults []*RefFault
	replaces, err := repo.ListRefs("refs/replace/")
	if err != nil {
		return nil, err
	}
	for _, r := range replaces {
		h, err := gitstore.ParseHash(strings.TrimPrefix(r.Name, "refs/replace/"))
		if err != nil {
			continue
		}
		c, err := repo.ReadCommit(h)
		if err != nil {
			continue // not a commit this repository holds
		}
		if _, ours := chain.AgentOf(c.Message); ours {
			faults = append(faults, &RefFault{Ref: r.Name, Commit: h.String(), Code: string(rules.InvalidTransition),
				Lesson: fmt.Sprintf("replaces m1nd commit %.12s: plain git (git log, git show) shows another object in its place, m1nd reads the original; remove it with git replace -d %s", h, h)})
		}
	}
	rewound, err := mailbox.Rewound(repo)
	if err != nil {
		return nil, err
	}
	for _, rw := range rewound {
		faults = append(faults, &RefFault{Ref: rw.Ref, Commit: rw.Delivered.String(), Code: string(rules.InvalidTransition),
			Lesson: fmt.Sprintf("the ref no longer holds %.12s, which was delivered from it to %s: it was deleted and made again at an older commit, or rewritten, and the letters after that point are gone from it; or %s's delivery cursor was written by hand or by another agent", rw.Delivered, rw.Agent, rw.Agent)})
	}
	// The delivery records are caches of what the mail refs hold: one that
	// disagrees with them was forged or damaged.
	records, err := mailbox.CheckRecords(repo)
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		faults = append(faults, &RefFault{Ref: r.Path, Code: string(rules.InvalidLetter), Lesson: r.Lesson})
	}
	return faults, nil
}

// ProtectedRef is the ref of a branch a remote protects (hooks install
// --bare --protect NAME).
func ProtectedRef(branch string) string { return "refs/heads/" + branch }

// CheckProtected judges a push that moves a protected branch (u.Ref is
// ProtectedRef(branch)): it may only move to a commit whose tree the gate
// of a landing into that branch tested, as the store at StoreHead records
// it (brain.GatedTrees), and only where that gate's merge_wait carries a
// valid signature by a runner key the pins at PinsHead approve — so any
// remote holding the pins judges it without trusting the pusher (DESIGN
// §10). main only ever holds proven trees. It is never deleted.
func (laws *Laws) CheckProtected(objs Objects, u Update, branch string) *RefFault {
	if u.New.IsZero() {
		return fault(u, u.Old, rules.StaleGate, "%s is protected on this remote: it is never deleted", branch)
	}
	c, err := objs.ReadCommit(u.New)
	if err != nil {
		return fault(u, u.New, rules.StaleGate, "%s is protected on this remote, and %.12s is not a commit this push carries: %v", branch, u.New, err)
	}
	trees, err := laws.gatedTrees(objs, branch)
	if err != nil {
		return fault(u, u.New, rules.StaleGate, "%s is protected on this remote, and the brain's store could not be read to see what was gated: %v", branch, err)
	}
	landings := trees[c.Tree.String()]
	if len(landings) == 0 {
		return fault(u, u.New, rules.StaleGate, "%s is protected on this remote: it only moves to a tree the gate of a landed mission passed on, and %.12s's tree %.12s is none — land the work with m1nd land (its gate runs on exactly what lands), push the brain first (m1nd sync), then %s", branch, u.New, c.Tree, branch)
	}
	why := ""
	for _, l := range landings {
		err := laws.provenGate(objs, l)
		if err == nil {
			return nil
		}
		why = rules.OneLine(err.Error())
	}
	return fault(u, u.New, rules.UnprovenGate, "%s is protected on this remote: %.12s's tree %.12s was landed, but no runner whose key the pins approve proved its gate (%s) — push the brain first (m1nd sync), or land work a runner you approved proved", branch, u.New, c.Tree, why)
}

// gatedTrees is brain.GatedTrees for branch at StoreHead, read once per
// branch for every update of one push.
func (laws *Laws) gatedTrees(objs Objects, branch string) (map[string][]brain.Landing, error) {
	laws.mu.Lock()
	defer laws.mu.Unlock()
	if laws.gated == nil {
		laws.gated = map[string]map[string][]brain.Landing{}
	}
	key := laws.StoreHead.String() + " " + branch
	if trees, ok := laws.gated[key]; ok {
		return trees, nil
	}
	trees, err := brain.GatedTrees(objs, laws.StoreHead, branch)
	if err != nil {
		return nil, err
	}
	laws.gated[key] = trees
	return trees, nil
}

// provenGate checks that the merge_wait letter a landing names carries a
// valid signature by the runner key the pins at PinsHead approve: the
// letter is found on its mission's chain (its live ref as the push leaves
// it, or the archive's fold of it).
func (laws *Laws) provenGate(objs Objects, l brain.Landing) error {
	ref := chain.MissionRefPrefix + l.MissionID
	head, err := laws.refHead(ref)
	if err != nil {
		return err
	}
	if head.IsZero() {
		folded, err := laws.archive(objs)
		if err != nil {
			return err
		}
		m, ok := folded[l.MissionID]
		if !ok {
			return fmt.Errorf("this remote holds no mission %s", l.MissionID)
		}
		if head, err = gitstore.ParseHash(m.Head); err != nil {
			return err
		}
	}
	for h := head; !h.IsZero(); {
		c, err := objs.ReadCommit(h)
		if err != nil {
			return err
		}
		body, letter, err := chain.ReadLetter(objs, c)
		if err != nil {
			return err
		}
		if chain.DocID(body) == l.LetterID {
			agent, _ := chain.AgentOf(c.Message)
			if runner, err := chain.NamedRunner(letter, agent); err != nil || runner == "" {
				return rules.Refusef(rules.UnprovenGate, "gate", "%s's merge_wait %s is %s's claim", l.MissionID, l.LetterID, agent)
			}
			if _, signed, err := chain.AttestationOf(c.Message); err != nil || !signed {
				return rules.Refusef(rules.UnprovenGate, "gate", "%s's merge_wait %s carries no runner's signature", l.MissionID, l.LetterID)
			}
			return laws.gateJudge(objs).CheckGateProof(&chain.Doc{Ref: ref, Commit: h, Meta: c, Body: body, ID: l.LetterID}, letter)
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return fmt.Errorf("mission %s holds no merge_wait letter %s", l.MissionID, l.LetterID)
}

// checkFolded is the archive's law for a mission ref: a mission the
// archive folds takes no letter past its folded head, and its live ref
// may be deleted at exactly that head (the fold that removes it). A
// mission the archive does not fold is judged as ever.
func (laws *Laws) checkFolded(objs Objects, u Update) (folded bool, f *RefFault) {
	if laws.ArchiveHead.IsZero() {
		return false, nil
	}
	index, err := laws.archive(objs)
	if err != nil {
		return false, fault(u, laws.ArchiveHead, rules.InvalidLetter, "the archive cannot be read: %v", err)
	}
	m, ok := index[strings.TrimPrefix(u.Ref, chain.MissionRefPrefix)]
	if !ok {
		return false, nil
	}
	head, _ := gitstore.ParseHash(m.Head)
	switch {
	case u.New.IsZero():
		// The live ref goes: at the head folded, or behind it (a clone that
		// had not seen the last letters before the fold).
		if on, err := chain.OnChain(objs, head, u.Old); err != nil || !on {
			return true, fault(u, gitstore.ZeroHash, rules.InvalidTransition, "the archive folds %s at %s, and %s is not on that chain: deleting it would bury its letters", u.Ref, m.Head[:12], u.Old)
		}
		return true, nil
	case u.New != head:
		return true, fault(u, u.New, rules.InvalidTransition, "%s is folded into %s at %s (finished: %s): it takes no more letters", u.Ref, chain.ArchiveRef, m.Head[:12], m.Phase)
	}
	return true, nil
}

// checkFolds is the archive's law for its own new commits (fresh, oldest
// first, each already judged by foldFollows): each mission a fold lists
// was not folded before, ends at the head letter the fold says (its id,
// phase, block and last update), and its whole chain keeps the mission
// laws from its root, as a live ref of it would be judged. A fold that
// breaks any is refused at its commit, naming the mission.
func (laws *Laws) checkFolds(objs Objects, u Update, fresh []link) *RefFault {
	before := gitstore.ZeroHash // fold 0 is a root: the first parent of any other is the fold before
	if ps := fresh[0].commit.Parents; len(ps) > 0 {
		before = ps[0]
	}
	seen, err := chain.ArchiveIndex(objs, before)
	if err != nil {
		return fault(u, fresh[0].hash, rules.InvalidLetter, "the archive before this fold cannot be read: %v", err)
	}
	for _, l := range fresh {
		body, err := objs.ReadFileInTree(l.commit.Tree, chain.ArchiveFile)
		if err != nil {
			return fault(u, l.hash, rules.InvalidLetter, "%v", err)
		}
		fold, err := chain.DecodeFold(body)
		if err != nil {
			return asFault(u, l.hash, err)
		}
		for _, m := range fold.Folded {
			if _, again := seen[m.MissionID]; again {
				return fault(u, l.hash, rules.InvalidTransition, "mission %s is folded already (at %s): a mission folds once", m.MissionID, seen[m.MissionID].Head[:12])
			}
			seen[m.MissionID] = m
			if f := laws.checkFoldedChain(objs, m); f != nil {
				return fault(u, l.hash, rules.Code(f.Code), "folded mission %s: %s", m.MissionID, f.Lesson)
			}
		}
	}
	return nil
}

// checkFoldedChain judges one folded mission: its head letter is the one
// the fold lists, and its chain keeps the mission laws from its root.
func (laws *Laws) checkFoldedChain(objs Objects, m chain.Folded) *RefFault {
	ref := chain.MissionRefPrefix + m.MissionID
	head, _ := gitstore.ParseHash(m.Head)
	u := Update{New: head, Ref: ref}
	c, err := objs.ReadCommit(head)
	if err != nil {
		return fault(u, head, rules.InvalidLetter, "its head commit cannot be read: %v", err)
	}
	_, l, err := chain.ReadLetter(objs, c)
	if err != nil {
		return asFault(u, head, err)
	}
	if l.MissionID != m.MissionID || l.Phase != m.Phase || l.BlockID != m.BlockID || l.UpdatedAt != m.UpdatedAt {
		return fault(u, head, rules.InvalidLetter, "its head letter is mission %s, %s on %s at %s; the fold says %s, %s on %s at %s", l.MissionID, l.Phase, l.BlockID, l.UpdatedAt, m.MissionID, m.Phase, m.BlockID, m.UpdatedAt)
	}
	return laws.Check(objs, u)
}
