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
	"github.com/m1nd/m1nd/gates"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
)

// Prefix is what sync carries.
const Prefix = "refs/m1nd/"

// ConflictsPrefix is where local history that lost a race is kept. It is
// never pushed.
const ConflictsPrefix = chain.ConflictsPrefix

// TrackingPrefix is where a remote's m1nd refs are fetched to: outside
// refs/m1nd/, so fetching never touches the brain's own refs.
func TrackingPrefix(remote string) string { return "refs/m1nd-sync/" + remote + "/" }

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

// Sync runs one sync of repo's refs/m1nd/ with remote, writing progress
// lines to progress. Local refs move only by compare-and-swap; the push is
// atomic and carries only creations and fast-forwards of what was
// fetched, never forced, so git checks each ref against the remote's value
// (a compare-and-swap per ref, see push.go); nothing accepted locally is
// dropped.
func Sync(ctx context.Context, repo *gitstore.Repo, remote string, progress io.Writer) (*Report, error) {
	rep := &Report{OK: true, Remote: remote, FastForwarded: []string{}, Created: []string{}, Pushed: []string{},
		Conflicts: []Conflict{}, RefusedRemote: []*laws.RefFault{}, RefusedLocal: []*laws.RefFault{}, Folded: []string{}, RemoteFolded: []string{}, progress: progress}
	if !ValidRemote(remote) {
		return nil, fmt.Errorf("remote %q: name a configured remote (git remote -v)", remote)
	}
	dir := repo.RemoteDir()
	tracking := TrackingPrefix(remote)
	// A steady sync asks first: when the remote's refs/m1nd/ is exactly
	// what the tracking refs hold (sync keeps them current, pushes
	// included), there is nothing to fetch.
	began := time.Now()
	localStamp, stampErr := repo.RefsStamp(Prefix)
	seen, hasSeen := lastSeenOf(repo.RuntimeDir(), remote)
	tracked, err := refMap(repo, tracking)
	if err != nil {
		return nil, err
	}
	// A clone that has seen nothing of the remote (a newcomer's first
	// sync: no record, no tracking refs) fetches at once: there is nothing
	// to compare an answer with.
	var advertised map[string]gitstore.Hash
	if hasSeen || len(tracked) > 0 {
		if advertised, err = lsRemote(ctx, dir, remote); err != nil {
			return nil, err
		}
	}
	if stampErr == nil && hasSeen && seen.matches(advertised, localStamp) {
		rep.Unchanged = len(advertised)
		rep.say("%s holds what the last sync left and no ref here moved since: nothing to do", remote)
		return rep, nil
	}
	// Whatever this sync finds, the record of the last clean one is stale
	// once it reads on; it is written again at the end of a clean sync.
	if hasSeen {
		if err := forgetSeen(repo.RuntimeDir(), remote); err != nil {
			return nil, err
		}
	}
	if advertised != nil && sameRefs(advertised, tracked) {
		rep.say("%s holds what this clone last saw: nothing to fetch", remote)
	} else {
		rep.say("fetching %s", remote)
		// --atomic: one ref transaction for the whole fetch. Without it git
		// 2.39 runs one per ref, and m1nd's reference-transaction hook
		// starts twice for each (a newcomer's first sync of 600 missions:
		// 2.3 s against a 63 ms hookless fetch). One glob refspec. No
		// FETCH_HEAD: sync never reads it, and writing a line per ref cost
		// a third of a fetch that brought nothing.
		if _, err := gitstore.Git(ctx, dir, "fetch", "--quiet", "--atomic", "--no-tags", "--prune", "--no-write-fetch-head", remote, "+"+Prefix+"*:"+tracking+"*"); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", remote, err)
		}
	}
	remoteRefs, err := refMap(repo, tracking)
	if err != nil {
		return nil, err
	}
	// A brain that init could not register (its remote did not answer)
	// registers at the first sync that finds none on the remote either; a
	// registration on the remote is taken below like any new ref.
	if _, onRemote := remoteRefs[strings.TrimPrefix(brain.RegistrationRef, Prefix)]; !onRemote {
		if err := registerOwn(ctx, repo); err != nil {
			return nil, err
		}
	}
	local, err := refMap(repo, Prefix)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for name := range local {
		if !strings.HasPrefix(name, ConflictsPrefix) {
			names[name] = true
		}
	}
	for name := range remoteRefs {
		if !strings.HasPrefix(Prefix+name, ConflictsPrefix) {
			names[Prefix+name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	// The keys, the store and the archive go first: every other ref's
	// history is judged against the keys and store this clone holds once
	// they are taken (a landed letter names one of the store's versions, a
	// gesture was proven by one of the keys), and if the remote's are
	// refused, the local ones stand and what leans on them is refused too;
	// a mission the archive folds has its live refs removed, here and on
	// the remote, instead of being carried.
	first := map[string]int{brain.KeysRef: 0, brain.StoreRef: 1, chain.ArchiveRef: 2}
	sort.Slice(sorted, func(i, j int) bool {
		fi, iFirst := first[sorted[i]]
		fj, jFirst := first[sorted[j]]
		if iFirst != jFirst {
			return iFirst
		}
		if iFirst {
			return fi < fj
		}
		return sorted[i] < sorted[j]
	})
	// Everything sync takes or pushes is judged against the keys and the
	// store this clone holds once they are settled (the keys trusted on
	// first sight here, per clone), as its git hook would judge it.
	judge, err := laws.ForSync(repo)
	if err != nil {
		return nil, err
	}
	headsRead := false
	// push: creations and fast-forwards of what was fetched. held: refs
	// whose local value differs from the remote's but that are not pushed
	// (the remote's history was refused and the local chain stands, or the
	// local history breaks the laws).
	var push, held []string
	// creations: the remote's refs this clone lacks, judged, created
	// together once the loop is done (the keys and the store at once: what
	// follows is judged against them).
	var creations []gitstore.Ref
	// folded: what the archive folds, once it is settled; the live refs of
	// folded missions to remove here and on the remote.
	var folded map[string]chain.Folded
	var unfold liveFolded
	for _, ref := range sorted {
		l, hasL := local[ref]
		r, hasR := remoteRefs[strings.TrimPrefix(ref, Prefix)]
		// The heads are read once the keys and the store are settled (and
		// before each of those two, for the next one).
		if _, isFirst := first[ref]; isFirst || !headsRead {
			if err := judge.SetHeads(laws.RepoHeads(repo)); err != nil {
				return nil, err
			}
			if !isFirst {
				if folded, err = chain.ArchiveIndex(repo, judge.ArchiveHead); err != nil {
					return nil, err
				}
			}
			headsRead = !isFirst
		}
		if id, isMission := strings.CutPrefix(ref, chain.MissionRefPrefix); isMission {
			if m, isFolded := folded[id]; isFolded {
				if err := unfold.settle(ctx, repo, rep, ref, m, l, hasL, r, hasR); err != nil {
					return nil, err
				}
				continue
			}
		}
		switch {
		case hasL && !hasR:
			push = append(push, ref)
		case hasR && !hasL:
			if f := judge.Check(repo, laws.Update{New: r, Ref: ref}); f != nil {
				rep.RefusedRemote = append(rep.RefusedRemote, f)
				continue
			}
			if _, isFirst := first[ref]; !isFirst {
				creations = append(creations, gitstore.Ref{Name: ref, Hash: r})
				continue
			}
			if err := repo.UpdateRef(ctx, ref, gitstore.ZeroHash, r); err != nil {
				return nil, fmt.Errorf("create %s: %w", ref, err)
			}
			rep.Created = append(rep.Created, ref)
		case l == r:
			rep.Unchanged++
		default:
			fork, lAfter, err := forkPoint(repo, l, r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			switch {
			case fork == r: // the remote is behind: push
				push = append(push, ref)
			case fork == l: // we are behind: fast-forward after checking the new links
				if f := judge.Check(repo, laws.Update{Old: l, New: r, Ref: ref}); f != nil {
					rep.RefusedRemote = append(rep.RefusedRemote, f)
					held = append(held, ref)
					continue
				}
				if err := repo.UpdateRef(ctx, ref, l, r); err != nil {
					return nil, fmt.Errorf("fast-forward %s: %w", ref, err)
				}
				rep.FastForwarded = append(rep.FastForwarded, ref)
			case ref == brain.KeysRef:
				// Trust on first key is per clone: a key set that does not
				// extend the one this clone holds was written without a key
				// it trusts. It is refused and reported, never adopted, and
				// never parked as an ordinary race.
				rep.RefusedRemote = append(rep.RefusedRemote, keysNotExtended(remote, r))
				held = append(held, ref)
			default: // forked: take the remote's chain if it keeps the laws, park ours
				// Judged from the fork on: what came before is this side's
				// own, already judged.
				if f := judge.Check(repo, laws.Update{Old: fork, New: r, Ref: ref}); f != nil {
					rep.RefusedRemote = append(rep.RefusedRemote, f)
					held = append(held, ref)
					continue
				}
				c, err := park(ctx, repo, ref, l, r, lAfter)
				if err != nil {
					return nil, err
				}
				rep.Conflicts = append(rep.Conflicts, *c)
			}
		}
	}
	if len(creations) > 0 {
		notCreated, err := repo.CreateRefs(ctx, creations)
		if err != nil {
			return nil, err
		}
		for _, name := range notCreated {
			rep.say("%s was written here meanwhile: the next sync compares it", name)
		}
		rep.Created = append(rep.Created, without(refNames(creations), notCreated)...)
	}
	// Before anything is pushed: a glob push carries every live ref here.
	if len(unfold.local) > 0 {
		notDeleted, err := repo.DeleteRefs(ctx, unfold.local)
		if err != nil {
			return nil, fmt.Errorf("remove the live refs of folded missions: %w", err)
		}
		rep.Folded = append(rep.Folded, without(refNames(unfold.local), notDeleted)...)
	}
	// Sync judges what it pushes as well as what it takes: local history
	// written past this clone's hook, or made before a key change that
	// anchors it nowhere, stays here and is reported.
	if err := judge.SetHeads(laws.RepoHeads(repo)); err != nil {
		return nil, err
	}
	judged := push[:0]
	for _, ref := range push {
		old := gitstore.ZeroHash
		if r, ok := remoteRefs[strings.TrimPrefix(ref, Prefix)]; ok {
			old = r
		}
		if f := judge.Check(repo, laws.Update{Old: old, New: local[ref], Ref: ref}); f != nil {
			rep.RefusedLocal = append(rep.RefusedLocal, f)
			held = append(held, ref)
			continue
		}
		judged = append(judged, ref)
	}
	push = judged
	rep.say("%s fast-forwarded, %s created, %s in conflict, %s to push",
		gates.Count(len(rep.FastForwarded), "ref"), gates.Count(len(rep.Created), "ref"), gates.Count(len(rep.Conflicts), "ref"), gates.Count(len(push), "ref"))
	if len(push) > 0 {
		out, err := pushRefs(ctx, dir, remote, push, held, rep.say)
		if err != nil {
			return nil, err
		}
		rep.Pushed = append(rep.Pushed, out.pushed...)
		rep.Batches = out.batches
		if err := track(ctx, repo, tracking, out.pushed, local, remoteRefs); err != nil {
			rep.say("%v", err) // costs the next sync a fetch, nothing more
		}
		if out.failed > 0 {
			rep.PushError, rep.OK = out.said, false
			rep.FailedBatch = fmt.Sprintf("%d of %d", out.failed, out.batches)
			rep.PushCutShort = out.timeout
			if out.timeout {
				rep.say("push cut short in batch %s: the server or a proxy timed out or hung up", rep.FailedBatch)
			} else {
				rep.say("push refused in batch %s: %s", rep.FailedBatch, rep.PushError)
			}
		}
	}
	if len(unfold.remote) > 0 && rep.PushError == "" {
		deleted, failure, timeout, err := pushDeletions(ctx, dir, remote, unfold.remote, rep.say)
		if err != nil {
			return nil, err
		}
		rep.RemoteFolded = append(rep.RemoteFolded, deleted...)
		var gone []gitstore.Ref
		for _, d := range unfold.remote[:len(deleted)] {
			gone = append(gone, gitstore.Ref{Name: tracking + strings.TrimPrefix(d.Name, Prefix), Hash: d.Hash})
			delete(remoteRefs, strings.TrimPrefix(d.Name, Prefix))
		}
		if _, err := repo.DeleteRefs(ctx, gone); err != nil {
			rep.say("%v", err) // costs the next sync a fetch, nothing more
		}
		if failure != "" {
			rep.PushError, rep.OK, rep.PushCutShort = failure, false, timeout
			rep.say("deleting the live refs of folded missions on %s failed: %s", remote, failure)
		}
	}
	if len(rep.Conflicts) > 0 || len(rep.RefusedRemote) > 0 || len(rep.RefusedLocal) > 0 {
		rep.OK = false
	}
	// What is held back stays listed (here and in m1nd status) until a
	// sync finds it resolved: never in silence.
	rep.Held = heldOf(rep)
	if err := writeHeld(repo.RuntimeDir(), remote, rep.Held); err != nil {
		return rep, fmt.Errorf("record what sync held back: %w", err)
	}
	if rep.OK && len(rep.Held) == 0 && stampErr == nil {
		after := maps.Clone(remoteRefs)
		for _, ref := range rep.Pushed {
			after[strings.TrimPrefix(ref, Prefix)] = local[ref]
		}
		if err := recordSeen(repo, remote, after, localStamp, began); err != nil {
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
			rep.RefusedRemote = append(rep.RefusedRemote, &laws.RefFault{Ref: ref, Commit: r.String(), Code: string(gates.InvalidTransition),
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

// keysNotExtended is the refusal of a remote key set that does not extend
// the one this clone holds.
func keysNotExtended(remote string, r gitstore.Hash) *laws.RefFault {
	return &laws.RefFault{Ref: brain.KeysRef, Commit: r.String(), Code: string(gates.HumanGestureRequired),
		Lesson: fmt.Sprintf("%s's passkeys do not extend the ones this clone trusts (someone registered or changed keys there without a key this clone holds): this clone keeps its own and takes nothing that leans on %s's; compare the keys with whoever runs it, and have the remote's admin restore refs/m1nd/keys", remote, remote)}
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
	c := &Conflict{Ref: ref, ParkedRef: parked, Letters: []string{}, Code: string(gates.StaleHead)}
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
