package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// Prefix is what sync carries.
const Prefix = chain.RefRoot

// ConflictsPrefix is where local history that lost a race is kept. It is
// never pushed.
const ConflictsPrefix = chain.ConflictsPrefix

// TrackingPrefix is where a remote's m1nd refs are fetched to: outside
// refs/m1nd/, so fetching never touches the brain's own refs.
func TrackingPrefix(remote string) string { return chain.TrackingRoot + remote + "/" }

// Conflict is a ref whose local and remote chains forked: the remote's
// chain is kept, the local one is parked under ParkedRef.
type Conflict struct {
	Ref       string   `json:"ref"`
	ParkedRef string   `json:"parked_ref"`
	Letters   []string `json:"letters"` // the local commits after the fork, oldest first
	Code      string   `json:"refused"`
	Lesson    string   `json:"lesson"`
}

// Report says what a sync did.
type Report struct {
	OK            bool             `json:"ok"`
	Remote        string           `json:"remote"`
	FastForwarded []string         `json:"fast_forwarded"`
	Created       []string         `json:"created"`
	Pushed        []string         `json:"pushed"`
	Unchanged     int              `json:"unchanged"`
	Conflicts     []Conflict       `json:"conflicts"`
	RefusedRemote []*laws.RefFault `json:"refused_remote"` // remote history that breaks the laws: not taken
	RefusedLocal  []*laws.RefFault `json:"refused_local"`  // local history that breaks the laws: not pushed
	PushError     string           `json:"push_error,omitempty"`
	// Batches is how many pushes carried Pushed (at most MaxBatch refs
	// each); FailedBatch the one that failed ("2 of 3"), PushCutShort
	// whether it failed as a server or proxy that timed out or hung up
	// rather than a refusal. What earlier batches pushed stays pushed.
	Batches int `json:"batches,omitempty"`
	// Held is every ref this sync did not carry, with why: the refused of
	// both sides, as m1nd status lists them until resolved.
	Held []HeldRef `json:"held"`
	// Folded are live refs of missions the archive folds that this sync
	// removed here; RemoteFolded those it removed on the remote.
	Folded       []string `json:"folded"`
	RemoteFolded []string `json:"remote_folded"`
	FailedBatch  string   `json:"failed_batch,omitempty"`
	PushCutShort bool     `json:"push_cut_short,omitempty"`
	progress     io.Writer
}

// EnvelopeOK is whether the sync did all it was asked: the report says its
// own ok (rules.Enveloped).
func (r Report) EnvelopeOK() bool { return r.OK }

func (r *Report) say(format string, args ...any) {
	if r.progress != nil {
		fmt.Fprintf(r.progress, "m1nd sync: "+format+"\n", args...)
	}
}

// ValidRemote reports whether name can be a remote's name here (it becomes
// part of a ref name).
func ValidRemote(name string) bool {
	if name == "" || len(name) > 100 || strings.HasPrefix(name, "-") || strings.HasPrefix(name, ".") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-", c)) {
			return false
		}
	}
	return gitstore.ValidRefName(TrackingPrefix(name) + "x")
}

// Options are how one sync runs.
type Options struct {
	// Progress takes the progress lines (nil: none).
	Progress io.Writer
	// Trust is the fingerprint (brain.ParseFingerprint's form) of the
	// first key set a remote's keys are taken from when this clone holds
	// none (sync --trust): the person checked it with its owner.
	Trust string
	// Ask, when set, shows a person at a terminal the remote's key set
	// this clone would take, and returns whether they trust it. Without
	// Trust or a yes, the keys are held, never taken in silence.
	Ask func(KeysOffer) (bool, error)
	// Kinds are the kinds the laws judge what crosses by (nil:
	// laws.Shipped).
	Kinds chain.Kinds
}

// KeysOffer is a remote's key set, offered to a clone that holds none:
// its first set, whose fingerprint names the chain, and its keys now.
type KeysOffer struct {
	Remote string          `json:"remote"`
	First  *brain.KeySet   `json:"first"`
	Keys   []brain.Passkey `json:"keys"`
}

// Sync runs one sync of repo's refs/m1nd/ with remote, writing progress
// lines to opts.Progress. Local refs move only by compare-and-swap; the push is
// atomic and carries only creations and fast-forwards of what was
// fetched, never forced, so git checks each ref against the remote's value
// (a compare-and-swap per ref, see push.go); nothing accepted locally is
// dropped.
//
// A sync is four steps: fetch what the remote holds (asking first, so a
// steady sync fetches nothing), settle each ref (the keys, the store and
// the archive first, since every other ref is judged against them), judge
// and push what this clone has that the remote lacks, and report.
func Sync(ctx context.Context, repo *gitstore.Repo, remote string, opts Options) (*Report, error) {
	if !ValidRemote(remote) {
		return nil, fmt.Errorf("remote %q: name a configured remote (git remote -v)", remote)
	}
	s := &run{ctx: ctx, repo: repo, remote: remote, dir: repo.RemoteDir(), tracking: TrackingPrefix(remote), began: time.Now(), opts: opts,
		rep: &Report{OK: true, Remote: remote, FastForwarded: []string{}, Created: []string{}, Pushed: []string{}, Conflicts: []Conflict{},
			RefusedRemote: []*laws.RefFault{}, RefusedLocal: []*laws.RefFault{}, Folded: []string{}, RemoteFolded: []string{}, progress: opts.Progress}}
	steady, err := s.fetch()
	if err != nil || steady {
		return s.repOrNil(err), err
	}
	if err := s.settle(); err != nil {
		return nil, err
	}
	if err := s.judgeOutgoing(); err != nil {
		return nil, err
	}
	if err := s.pushOutgoing(); err != nil {
		return nil, err
	}
	s.keepPacked()
	return s.report()
}

// keepPacked packs the tracking refs the fetch wrote loose, and m1nd's own
// (gitstore.KeepPacked says why): housekeeping, whose failure loses
// nothing, so the sync's report does not carry it.
func (s *run) keepPacked() {
	s.repo.PackLoose(s.ctx, s.tracking, Prefix)
}

// run is one sync under way: what it read and what it has decided.
type run struct {
	ctx      context.Context
	repo     *gitstore.Repo
	remote   string
	dir      string // where git's transport commands run
	tracking string
	rep      *Report
	opts     Options

	// began and localStamp are when this sync read the local refs and what
	// their folder looked like then: the record of a clean sync keeps them.
	began      time.Time
	localStamp gitstore.FolderStamp
	stampErr   error

	// local are the refs under refs/m1nd/ by full name; remoteRefs the
	// remote's as fetched, by name relative to refs/m1nd/.
	local, remoteRefs map[string]gitstore.Hash
	judge             *laws.Laws
	// folded is what the archive folds, once it is settled; unfold the
	// live refs of folded missions to remove here and on the remote.
	folded map[string]chain.Folded
	unfold liveFolded
	// push: creations and fast-forwards of what was fetched. held: refs
	// whose local value differs from the remote's but that are not pushed
	// (the remote's history was refused and the local chain stands, or the
	// local history breaks the laws). creations: the remote's refs this
	// clone lacks, judged, created together once every ref is settled.
	push, held []string
	creations  []gitstore.Ref
}

func (s *run) repOrNil(err error) *Report {
	if err != nil {
		return nil
	}
	return s.rep
}

// firstRefs are settled before every other ref, in this order: the other
// refs' history is judged against the keys, runner pins and store this
// clone holds once they are taken (a landed letter names one of the
// store's versions, a gesture was proven by one of the keys, a runner's
// merge_wait signed under one of the pin sets), and if the remote's are
// refused, the local ones stand and what leans on them is refused too; a
// mission the archive folds has its live refs removed, here and on the
// remote, instead of being carried.
var firstRefs = map[string]int{brain.KeysRef: 0, brain.PinsRef: 1, brain.StoreRef: 2, chain.ArchiveRef: 3}

// fetch brings the remote's refs/m1nd/ to the tracking refs and reads both
// sides. steady is true when the remote holds what the last clean sync
// left and no local ref moved since: there is nothing to do.
func (s *run) fetch() (steady bool, err error) {
	s.localStamp, s.stampErr = s.repo.RefsStamp(Prefix)
	seen, hasSeen := lastSeenOf(s.repo.RuntimeDir(), s.remote)
	tracked, err := refMap(s.repo, s.tracking)
	if err != nil {
		return false, err
	}
	// A steady sync asks first: when the remote's refs/m1nd/ is exactly
	// what the tracking refs hold (sync keeps them current, pushes
	// included), there is nothing to fetch. A clone that has seen nothing
	// of the remote (a newcomer's first sync: no record, no tracking refs)
	// fetches at once: there is nothing to compare an answer with.
	var advertised map[string]gitstore.Hash
	if hasSeen || len(tracked) > 0 {
		if advertised, err = lsRemote(s.ctx, s.dir, s.remote); err != nil {
			return false, err
		}
	}
	if s.stampErr == nil && hasSeen && seen.matches(advertised, s.localStamp) {
		s.rep.Unchanged = len(advertised)
		s.rep.say("%s holds what the last sync left and no ref here moved since: nothing to do", s.remote)
		return true, nil
	}
	// Whatever this sync finds, the record of the last clean one is stale
	// once it reads on; it is written again at the end of a clean sync.
	if hasSeen {
		if err := forgetSeen(s.repo.RuntimeDir(), s.remote); err != nil {
			return false, err
		}
	}
	if advertised != nil && sameRefs(advertised, tracked) {
		s.rep.say("%s holds what this clone last saw: nothing to fetch", s.remote)
	} else {
		s.rep.say("fetching %s", s.remote)
		// --atomic: one ref transaction for the whole fetch. Without it git
		// 2.39 runs one per ref, and m1nd's reference-transaction hook
		// starts twice for each (a newcomer's first sync of 600 missions:
		// 2.3 s against a 63 ms hookless fetch). One glob refspec. No
		// FETCH_HEAD: sync never reads it, and writing a line per ref cost
		// a third of a fetch that brought nothing.
		if _, err := gitstore.Git(s.ctx, s.dir, "fetch", "--quiet", "--atomic", "--no-tags", "--prune", "--no-write-fetch-head", s.remote, "+"+Prefix+"*:"+s.tracking+"*"); err != nil {
			return false, fmt.Errorf("fetch %s: %w", s.remote, err)
		}
	}
	if s.remoteRefs, err = refMap(s.repo, s.tracking); err != nil {
		return false, err
	}
	// A brain that init could not register (its remote did not answer)
	// registers at the first sync that finds none on the remote either; a
	// registration on the remote is taken like any new ref.
	if _, onRemote := s.remoteRefs[strings.TrimPrefix(brain.RegistrationRef, Prefix)]; !onRemote {
		if err := registerOwn(s.ctx, s.repo); err != nil {
			return false, err
		}
	}
	s.local, err = refMap(s.repo, Prefix)
	return false, err
}

// order is every ref either side holds (parked conflicts aside), the
// first refs first.
func (s *run) order() []string {
	names := map[string]bool{}
	for name := range s.local {
		names[name] = true
	}
	for name := range s.remoteRefs {
		names[Prefix+name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		if !strings.HasPrefix(n, ConflictsPrefix) {
			sorted = append(sorted, n)
		}
	}
	sort.Slice(sorted, func(i, j int) bool {
		fi, iFirst := firstRefs[sorted[i]]
		fj, jFirst := firstRefs[sorted[j]]
		switch {
		case iFirst != jFirst:
			return iFirst
		case iFirst:
			return fi < fj
		}
		return sorted[i] < sorted[j]
	})
	return sorted
}

// settle decides every ref: what to take from the remote (judged against
// the keys and the store this clone holds once they are settled, as its
// git hook would judge it; the keys trusted on first sight here, per
// clone), what to push, what to park, what to hold.
func (s *run) settle() error {
	var err error
	if s.judge, err = laws.ForSync(s.repo); err != nil {
		return err
	}
	if s.opts.Kinds != nil {
		s.judge.Kinds = s.opts.Kinds
	}
	headsRead := false
	for _, ref := range s.order() {
		// The heads are read once the keys and the store are settled (and
		// before each of those two, for the next one).
		if _, isFirst := firstRefs[ref]; isFirst || !headsRead {
			if err := s.judge.SetHeads(laws.RepoHeads(s.repo)); err != nil {
				return err
			}
			if !isFirst {
				if s.folded, err = chain.ArchiveIndex(s.repo, s.judge.ArchiveHead); err != nil {
					return err
				}
			}
			headsRead = !isFirst
		}
		if err := s.settleRef(ref); err != nil {
			return err
		}
	}
	if err := s.createTaken(); err != nil {
		return err
	}
	// Before anything is pushed: a glob push carries every live ref here.
	if len(s.unfold.local) > 0 {
		notDeleted, err := s.repo.DeleteRefs(s.ctx, s.unfold.local)
		if err != nil {
			return fmt.Errorf("remove the live refs of folded missions: %w", err)
		}
		s.rep.Folded = append(s.rep.Folded, without(refNames(s.unfold.local), notDeleted)...)
	}
	return nil
}

// settleRef decides one ref, at l here and r on the remote.
func (s *run) settleRef(ref string) error {
	l, hasL := s.local[ref]
	r, hasR := s.remoteRefs[strings.TrimPrefix(ref, Prefix)]
	if id, isMission := strings.CutPrefix(ref, chain.MissionRefPrefix); isMission {
		if m, isFolded := s.folded[id]; isFolded {
			return s.unfold.settle(s.ctx, s.repo, s.rep, ref, m, l, hasL, r, hasR)
		}
	}
	switch {
	case hasL && !hasR:
		s.push = append(s.push, ref)
	case hasR && !hasL && ref == brain.KeysRef:
		return s.takeKeys(r)
	case hasR && !hasL:
		return s.take(ref, r)
	case l == r:
		s.rep.Unchanged++
	default:
		return s.reconcile(ref, l, r)
	}
	return nil
}

// take creates here a ref only the remote has, once it keeps the laws.
// The first refs are created at once, what follows being judged against
// them; the rest together, once every ref is settled.
func (s *run) take(ref string, r gitstore.Hash) error {
	if f := s.judge.Check(s.repo, laws.Update{New: r, Ref: ref}); f != nil {
		s.rep.RefusedRemote = append(s.rep.RefusedRemote, f)
		return nil
	}
	if _, isFirst := firstRefs[ref]; !isFirst {
		s.creations = append(s.creations, gitstore.Ref{Name: ref, Hash: r})
		return nil
	}
	if err := s.repo.UpdateRef(s.ctx, ref, gitstore.ZeroHash, r); err != nil {
		return fmt.Errorf("create %s: %w", ref, err)
	}
	s.rep.Created = append(s.rep.Created, ref)
	return nil
}

// takeKeys takes the remote's key set into a clone that holds none, once
// a person trusts it: by its first set's fingerprint, given (Trust) or
// confirmed at a terminal (Ask), as ssh asks for a host's key. Everything
// the keys prove is judged against them, so a key set taken in silence
// would let whoever pushed the first one (an agent) sign as the human
// here. Without trust it is held, and what leans on it with it.
func (s *run) takeKeys(r gitstore.Hash) error {
	first, err := brain.FirstSet(s.repo, r)
	if err != nil {
		s.refuseRemote(brain.KeysRef, &laws.RefFault{Ref: brain.KeysRef, Commit: r.String(), Code: string(rules.InvalidLetter), Lesson: err.Error()})
		return nil
	}
	fp := first.Fingerprint()
	trusted := s.opts.Trust == fp
	if !trusted && s.opts.Trust == "" && s.opts.Ask != nil {
		set, err := brain.ReadKeys(s.repo, r)
		if err != nil {
			return err
		}
		if trusted, err = s.opts.Ask(KeysOffer{Remote: s.remote, First: first, Keys: set.Keys}); err != nil {
			return err
		}
	}
	if !trusted {
		s.refuseRemote(brain.KeysRef, keysNotTrusted(s.remote, r, first, s.opts.Trust))
		return nil
	}
	return s.take(brain.KeysRef, r)
}

// reconcile settles a ref both sides hold at different commits: push when
// the remote is behind, fast-forward when this clone is, and on a fork
// take the remote's chain if it keeps the laws and park this clone's.
func (s *run) reconcile(ref string, l, r gitstore.Hash) error {
	fork, lAfter, err := forkPoint(s.repo, l, r)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	switch {
	case fork == r:
		s.push = append(s.push, ref)
		return nil
	case ref == brain.KeysRef && fork != l:
		// Trust on first key is per clone: a key set that does not extend
		// the one this clone holds was written without a key it trusts. It
		// is refused and reported, never adopted, and never parked as an
		// ordinary race.
		s.refuseRemote(ref, keysNotExtended(s.remote, r))
		return nil
	}
	if f, err := rewriteOf(s.repo, s.remote, ref, fork, lAfter, r); err != nil || f != nil {
		if f != nil {
			s.refuseRemote(ref, f)
		}
		return err
	}
	// Judged from the fork on: what came before is this side's own,
	// already judged.
	if f := s.judge.Check(s.repo, laws.Update{Old: fork, New: r, Ref: ref}); f != nil {
		s.refuseRemote(ref, f)
		return nil
	}
	if fork == l {
		if err := s.repo.UpdateRef(s.ctx, ref, l, r); err != nil {
			return fmt.Errorf("fast-forward %s: %w", ref, err)
		}
		s.rep.FastForwarded = append(s.rep.FastForwarded, ref)
		return nil
	}
	c, err := park(s.ctx, s.repo, ref, l, r, lAfter)
	if err != nil {
		return err
	}
	s.rep.Conflicts = append(s.rep.Conflicts, *c)
	return nil
}

// refuseRemote holds ref at this clone's value: the remote's history
// breaks the laws (f says how).
func (s *run) refuseRemote(ref string, f *laws.RefFault) {
	s.rep.RefusedRemote = append(s.rep.RefusedRemote, f)
	s.held = append(s.held, ref)
}

// createTaken creates the refs take set aside, in one write.
func (s *run) createTaken() error {
	if len(s.creations) == 0 {
		return nil
	}
	notCreated, err := s.repo.CreateRefs(s.ctx, s.creations)
	if err != nil {
		return err
	}
	for _, name := range notCreated {
		s.rep.say("%s was written here meanwhile: the next sync compares it", name)
	}
	s.rep.Created = append(s.rep.Created, without(refNames(s.creations), notCreated)...)
	return nil
}

// judgeOutgoing judges what sync would push as well as what it takes:
// local history written past this clone's hook, or made before a key
// change that anchors it nowhere, stays here and is reported.
func (s *run) judgeOutgoing() error {
	if err := s.judge.SetHeads(laws.RepoHeads(s.repo)); err != nil {
		return err
	}
	judged := s.push[:0]
	for _, ref := range s.push {
		old := s.remoteRefs[strings.TrimPrefix(ref, Prefix)] // zero when the remote lacks it
		if f := s.judge.Check(s.repo, laws.Update{Old: old, New: s.local[ref], Ref: ref}); f != nil {
			s.rep.RefusedLocal = append(s.rep.RefusedLocal, f)
			s.held = append(s.held, ref)
			continue
		}
		judged = append(judged, ref)
	}
	s.push = judged
	s.rep.say("%s fast-forwarded, %s created, %s in conflict, %s to push",
		rules.Count(len(s.rep.FastForwarded), "ref"), rules.Count(len(s.rep.Created), "ref"), rules.Count(len(s.rep.Conflicts), "ref"), rules.Count(len(s.push), "ref"))
	return nil
}

// pushOutgoing pushes what was judged, in batches, then removes the live
// refs of folded missions on the remote once nothing failed.
func (s *run) pushOutgoing() error {
	if len(s.push) > 0 {
		out, err := pushRefs(s.ctx, s.dir, s.remote, s.push, s.held, s.rep.say)
		if err != nil {
			return err
		}
		s.rep.Pushed = append(s.rep.Pushed, out.pushed...)
		s.rep.Batches = out.batches
		if err := track(s.ctx, s.repo, s.tracking, out.pushed, s.local, s.remoteRefs); err != nil {
			s.rep.say("%v", err) // costs the next sync a fetch, nothing more
		}
		if out.failed > 0 {
			s.rep.PushError, s.rep.OK = out.said, false
			s.rep.FailedBatch = fmt.Sprintf("%d of %d", out.failed, out.batches)
			s.rep.PushCutShort = out.timeout
			if out.timeout {
				s.rep.say("push cut short in batch %s: the server or a proxy timed out or hung up", s.rep.FailedBatch)
			} else {
				s.rep.say("push refused in batch %s: %s", s.rep.FailedBatch, s.rep.PushError)
			}
		}
	}
	if len(s.unfold.remote) == 0 || s.rep.PushError != "" {
		return nil
	}
	deleted, failure, timeout, err := pushDeletions(s.ctx, s.dir, s.remote, s.unfold.remote, s.rep.say)
	if err != nil {
		return err
	}
	s.rep.RemoteFolded = append(s.rep.RemoteFolded, deleted...)
	var gone []gitstore.Ref
	for _, d := range s.unfold.remote[:len(deleted)] {
		gone = append(gone, gitstore.Ref{Name: s.tracking + strings.TrimPrefix(d.Name, Prefix), Hash: d.Hash})
		delete(s.remoteRefs, strings.TrimPrefix(d.Name, Prefix))
	}
	if _, err := s.repo.DeleteRefs(s.ctx, gone); err != nil {
		s.rep.say("%v", err) // costs the next sync a fetch, nothing more
	}
	if failure != "" {
		s.rep.PushError, s.rep.OK, s.rep.PushCutShort = failure, false, timeout
		s.rep.say("deleting the live refs of folded missions on %s failed: %s", s.remote, failure)
	}
	return nil
}

// report finishes the report: what is held back stays listed (here and in
// m1nd status) until a sync finds it resolved, never in silence; a clean
// sync leaves the record that lets the next one skip its fetch.
func (s *run) report() (*Report, error) {
	rep := s.rep
	if len(rep.Conflicts) > 0 || len(rep.RefusedRemote) > 0 || len(rep.RefusedLocal) > 0 {
		rep.OK = false
	}
	rep.Held = heldOf(rep)
	if err := writeHeld(s.repo.RuntimeDir(), s.remote, rep.Held); err != nil {
		return rep, fmt.Errorf("record what sync held back: %w", err)
	}
	if rep.OK && len(rep.Held) == 0 && s.stampErr == nil {
		after := maps.Clone(s.remoteRefs)
		for _, ref := range rep.Pushed {
			after[strings.TrimPrefix(ref, Prefix)] = s.local[ref]
		}
		if err := recordSeen(s.repo, s.remote, after, s.localStamp, s.began); err != nil {
			rep.say("%v", err) // costs the next sync a full read, nothing more
		}
	}
	return rep, nil
}

// liveFolded are the live refs of missions the archive folds, which a
// sync removes: here, and on the remote (with a lease on the value it
// fetched) once the archive is there.
type liveFolded struct{ local, remote []gitstore.Ref }

// settle decides what becomes of the live refs of ref, a mission the
// archive folds as m, at l here and r on the remote: each goes when it is
// on the folded chain (at its head or behind it). A local chain forked
// from it is parked first, as any fork; a remote one is refused and held.
func (lf *liveFolded) settle(ctx context.Context, repo *gitstore.Repo, rep *Report, ref string, m chain.Folded, l gitstore.Hash, hasL bool, r gitstore.Hash, hasR bool) error {
	head, _ := gitstore.ParseHash(m.Head)
	if hasL {
		on, err := chain.OnChain(repo, head, l)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		if !on {
			_, lAfter, err := forkPoint(repo, l, head)
			if err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			c, err := park(ctx, repo, ref, l, head, lAfter)
			if err != nil {
				return err
			}
			rep.Conflicts = append(rep.Conflicts, *c)
			l = head
		}
		lf.local = append(lf.local, gitstore.Ref{Name: ref, Hash: l})
	}
	if hasR {
		on, err := chain.OnChain(repo, head, r)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		if !on {
			rep.RefusedRemote = append(rep.RefusedRemote, &laws.RefFault{Ref: ref, Commit: r.String(), Code: string(rules.InvalidTransition),
				Lesson: fmt.Sprintf("%s folds this mission at %s; %s's ref is not on that chain (written past its hook): it is left there, and not taken", chain.ArchiveRef, m.Head[:12], rep.Remote)})
			return nil
		}
		lf.remote = append(lf.remote, gitstore.Ref{Name: ref, Hash: r})
	}
	return nil
}

// registerOwn registers the brain's own name when it has no registration.
func registerOwn(ctx context.Context, repo *gitstore.Repo) error {
	if _, ok, err := brain.Registered(repo); err != nil || ok {
		return err
	}
	name, err := brain.DisplayName(repo)
	if err != nil {
		return err
	}
	if _, _, err := brain.Register(ctx, repo, name); err != nil {
		return fmt.Errorf("register the brain before its first sync: %w", err)
	}
	return nil
}

// lsRemote is what remote advertises under refs/m1nd/, by name relative
// to it, as refMap names a prefix's refs.
func lsRemote(ctx context.Context, dir, remote string) (map[string]gitstore.Hash, error) {
	out, err := gitstore.Git(ctx, dir, "ls-remote", "--refs", remote, Prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("ls-remote %s: %w", remote, err)
	}
	refs := map[string]gitstore.Hash{}
	for _, line := range strings.Split(out, "\n") {
		hash, name, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasPrefix(name, Prefix) {
			continue
		}
		h, err := gitstore.ParseHash(hash)
		if err != nil {
			return nil, fmt.Errorf("ls-remote %s: %q: %w", remote, line, err)
		}
		refs[strings.TrimPrefix(name, Prefix)] = h
	}
	return refs, nil
}

func sameRefs(a, b map[string]gitstore.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for name, h := range a {
		if b[name] != h {
			return false
		}
	}
	return true
}

// track moves the tracking refs of what a push carried from the values
// the remote had (remoteRefs, names relative to refs/m1nd/) to the values
// pushed, so the next sync finds the remote as its tracking refs say and
// fetches nothing. They are written here, not by git update-ref: a first
// push creates one per ref, which git wrote loose, through this clone's
// hook, in a second (CreateRefs packs them). A tracking ref that moved
// meanwhile is left: the next sync fetches it.
func track(ctx context.Context, repo *gitstore.Repo, tracking string, pushed []string, local, remoteRefs map[string]gitstore.Hash) error {
	var creations []gitstore.Ref
	for _, ref := range pushed {
		h, ok := local[ref]
		if !ok {
			continue
		}
		name := strings.TrimPrefix(ref, Prefix)
		old, had := remoteRefs[name]
		if !had {
			creations = append(creations, gitstore.Ref{Name: tracking + name, Hash: h})
			continue
		}
		var stale *gitstore.StaleRefError
		if err := repo.UpdateRef(ctx, tracking+name, old, h); err != nil && !errors.As(err, &stale) {
			return fmt.Errorf("pushed, but the tracking refs did not follow (the next sync fetches them again): %w", err)
		}
	}
	if _, err := repo.CreateRefs(ctx, creations); err != nil {
		return fmt.Errorf("pushed, but the tracking refs did not follow (the next sync fetches them again): %w", err)
	}
	return nil
}

// keysNotTrusted is the refusal of a remote key set this clone was not
// told to trust: trusted (sync --trust) names another first key, or none.
func keysNotTrusted(remote string, r gitstore.Hash, first *brain.KeySet, trusted string) *laws.RefFault {
	fp := first.Fingerprint()
	lesson := fmt.Sprintf("%s's passkeys are not trusted here yet: their first key set has %s; compare it with whoever registered it (m1nd brain keys shows it), then run m1nd sync --trust '%s' (at a terminal, m1nd sync asks); until then nothing they prove is taken", remote, first.Named(), fp)
	if trusted != "" {
		lesson = fmt.Sprintf("%s's passkeys begin with a key set of %s, not %s, the one you trusted: not taken (an agent may have pushed its own key set first); ask the team which is theirs", remote, first.Named(), trusted)
	}
	return &laws.RefFault{Ref: brain.KeysRef, Commit: r.String(), Code: string(rules.HumanGestureRequired), Lesson: lesson}
}

// keysNotExtended is the refusal of a remote key set that does not extend
// the one this clone holds.
func keysNotExtended(remote string, r gitstore.Hash) *laws.RefFault {
	return &laws.RefFault{Ref: brain.KeysRef, Commit: r.String(), Code: string(rules.HumanGestureRequired),
		Lesson: fmt.Sprintf("%s's passkeys do not extend the ones this clone trusts (someone registered or changed keys there without a key this clone holds): this clone keeps its own and takes nothing that leans on %s's; compare the keys with whoever runs it, and have the remote's admin restore refs/m1nd/keys", remote, remote)}
}

// rewriteOf is the refusal of r, the remote's value of ref, when it
// rewrites this clone's chain rather than racing it: a chain that shares
// no commit with it (a new history pushed by force: for refs/m1nd/brain,
// another brain's identity, whose registration root never changes), or
// one that forks below a landed or archived letter of this clone's
// (letters nothing follows and no history may drop). A hookless remote
// takes such a push; a sync never adopts it as a race. fork and lAfter
// are forkPoint's answer for this clone's value and r; nil for an
// extension or an honest fork.
func rewriteOf(repo *gitstore.Repo, remote, ref string, fork gitstore.Hash, lAfter []gitstore.Hash, r gitstore.Hash) (*laws.RefFault, error) {
	repair := fmt.Sprintf("this clone keeps its own and takes nothing of it; m1nd sync --repair %s puts this clone's back on %s", ref, remote)
	if fork.IsZero() {
		what := "a new history pushed over it by force"
		if ref == brain.RegistrationRef {
			what = "another brain's registration pushed over it by force: a brain's registration root is its identity and never changes"
		}
		return &laws.RefFault{Ref: ref, Commit: r.String(), Code: string(rules.BrokenHistory),
			Lesson: fmt.Sprintf("%s's %s shares no commit with this clone's (%s): a rewrite, not a race; %s", remote, ref, what, repair)}, nil
	}
	if !strings.HasPrefix(ref, chain.MissionRefPrefix) {
		return nil, nil
	}
	for _, h := range lAfter {
		final, err := chain.Final(repo, h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		if final {
			return &laws.RefFault{Ref: ref, Commit: r.String(), Code: string(rules.BrokenHistory),
				Lesson: fmt.Sprintf("%s's %s drops this clone's final letter at %s (landed and archived letters are never replaced): a rewrite, not a race; %s", remote, ref, h.String()[:12], repair)}, nil
		}
	}
	return nil, nil
}

// forkPoint finds where two first-parent chains meet: the newest commit of
// b's line that is on a's line, and a's commits after it (oldest first).
func forkPoint(repo *gitstore.Repo, a, b gitstore.Hash) (gitstore.Hash, []gitstore.Hash, error) {
	var line []gitstore.Hash
	onA := map[gitstore.Hash]int{}
	err := repo.WalkFirstParent(a, func(h gitstore.Hash, _ *gitstore.Commit) error {
		onA[h] = len(line)
		line = append(line, h)
		return nil
	})
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	fork := gitstore.ZeroHash
	err = repo.WalkFirstParent(b, func(h gitstore.Hash, _ *gitstore.Commit) error {
		if _, ok := onA[h]; ok {
			fork = h
			return gitstore.ErrStopWalk
		}
		return nil
	})
	if err != nil {
		return gitstore.ZeroHash, nil, err
	}
	end := len(line)
	if !fork.IsZero() {
		end = onA[fork]
	}
	after := make([]gitstore.Hash, 0, end)
	for i := end - 1; i >= 0; i-- {
		after = append(after, line[i])
	}
	return fork, after, nil
}

// park keeps the local chain under refs/m1nd/conflicts/ and moves the ref
// to the remote's chain, whose links the caller checked.
func park(ctx context.Context, repo *gitstore.Repo, ref string, l, r gitstore.Hash, after []gitstore.Hash) (*Conflict, error) {
	parked := ConflictsPrefix + strings.TrimPrefix(ref, Prefix) + "/" + l.String()[:12]
	if err := repo.UpdateRef(ctx, parked, gitstore.ZeroHash, l); err != nil {
		var stale *gitstore.StaleRefError
		if !errors.As(err, &stale) {
			return nil, fmt.Errorf("park %s: %w", ref, err)
		}
	}
	if err := repo.UpdateRef(ctx, ref, l, r); err != nil {
		return nil, fmt.Errorf("take the remote's %s: %w", ref, err)
	}
	c := &Conflict{Ref: ref, ParkedRef: parked, Letters: []string{}, Code: string(rules.StaleHead)}
	for _, h := range after {
		c.Letters = append(c.Letters, h.String())
	}
	what := "re-post them"
	if id, ok := strings.CutPrefix(ref, chain.MissionRefPrefix); ok {
		what = fmt.Sprintf("re-post them on the new head (m1nd mission next %s)", id)
	}
	c.Lesson = fmt.Sprintf("another clone extended %s first; its chain is kept, and your commits after the fork (%d) are parked at %s: %s", ref, len(after), parked, what)
	return c, nil
}

// refNames are the names of refs, in order.
func refNames(refs []gitstore.Ref) []string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.Name
	}
	return names
}

func refMap(repo *gitstore.Repo, prefix string) (map[string]gitstore.Hash, error) {
	refs, err := repo.ListRefs(prefix)
	if err != nil {
		return nil, err
	}
	m := make(map[string]gitstore.Hash, len(refs))
	for _, r := range refs {
		name := r.Name
		if prefix != Prefix {
			name = strings.TrimPrefix(name, prefix)
		}
		m[name] = r.Hash
	}
	return m, nil
}

// git runs the git CLI: transport (fetch, push) is git's job, with its ssh,
// credentials and helpers.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
