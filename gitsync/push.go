package gitsync

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules"
)

// How the push keeps a compare-and-swap per ref with few refspecs.
//
// Sync pushes only refs whose local value differs from the value it has
// just fetched, and only two kinds of them: creations (absent on the
// remote) and fast-forwards (the fetched value is on the local chain).
// Everything else was settled locally first (taken, parked or refused).
// So no push needs force, and none is forced: git refuses a non-forced
// update unless the remote's value at push time is an ancestor of the
// pushed one, and receive-pack applies it as a compare-and-swap on the
// value the client checked, under the ref's lock, all refs or none
// (--atomic). That is the per-ref CAS: a remote ref that moved since the
// fetch to anything that is not already part of the pushed chain is
// rejected, never overwritten, and no remote commit can be dropped — the
// next sync fetches it and parks the local letters as it parks any fork.
// The only pushes this admits that an exact lease (--force-with-lease)
// would refuse are those a sync that fetched a moment later would make
// itself: the remote moved along our own chain, or the ref was deleted
// there (a sync pushes a ref the remote lacks).
//
// Leases and explicit refspecs cost git O(refs × refspecs) with a large
// constant (every explicit refspec and every lease is matched against every
// ref through the abbreviation rules): 1,000 of each took 1.5 s of a
// 1.74 s sync, where one glob refspec pushing the same refs takes a fifth
// of that. So the push names namespaces, not refs: one glob refspec per
// namespace that has something to push (refs/m1nd/missions/* …; a ref
// directly under refs/m1nd/, like the store, is named), with a negative
// refspec for each held ref (local and remote differ but nothing is to be
// pushed: the remote's history was refused) in those namespaces. The glob
// also carries every ref that is already equal on both sides: git sends
// nothing for those. Conflicts (refs/m1nd/conflicts/) are never in a
// glob. When there are at most as many held refs as refs to push, the refs
// are named one by one instead, as cheap then.
//
// A glob carries refs sync did not mean to push, so a ref another clone
// moved on the remote since our fetch (one we have not changed) is
// rejected too and fails the atomic push. Those rejections are read from
// --porcelain: the push is retried without them (as negatives), a few
// times, so only a race on a ref we push fails the sync, as with leases.

// maxPushAttempts bounds the retries after refs outside the push set moved
// on the remote.
const maxPushAttempts = 3

// MaxBatch is the most refs one push carries. A forge runs its update hook
// once per pushed ref (Gitea ~0.1 s, gitolite ~0.05 s) inside one HTTP
// request, so a push of thousands outlives a proxy's timeout (nginx: 60 s
// by default) and says nothing meanwhile; batches keep each request short
// and give progress between them.
const MaxBatch = 500

// pushBatch is one push: the refs it means to push and the glob prefixes
// that carry them ("" prefix list: the refs are named).
type pushBatch struct {
	refs     []string
	prefixes []string
}

// pushOutcome is what pushRefs did: the refs the remote now holds at their
// local value, and, when a batch failed, which and what git said.
type pushOutcome struct {
	pushed  []string
	batches int
	failed  int    // the batch that failed, from 1; 0 when none did
	timeout bool   // it failed as a server or proxy that timed out or hung up
	said    string // what git said, cut
}

// A push's first batch, when there are more refs than minBatch, carries
// at most probeBatch refs and is timed; every later batch is sized from
// the slowest rate seen so far to take about batchBudget (at least
// minBatch refs, at most MaxBatch). A forge that pays ~0.1 s per ref
// (Gitea's update hook) then gets batches of ~100 refs, ten seconds each,
// well inside a proxy's 30 s timeout, while a bare remote gets full
// batches. A batch a server or proxy cuts short (a timeout, a hang-up) is
// pushed again at half its size, down to one ref, before the push gives
// up: what went before stays pushed.
const (
	probeBatch  = 100
	minBatch    = 20
	batchBudget = 10 * time.Second
)

// pushRefs pushes push (creations and fast-forwards of what was fetched)
// to remote, never carrying held, in batches of at most MaxBatch refs
// sized as the remote answers, each one atomic and non-forced; say gets a
// progress line per batch when there is more than one. It stops at the
// first batch that fails: what earlier batches pushed stays pushed.
func pushRefs(ctx context.Context, dir, remote string, push, held []string, say func(string, ...any)) (pushOutcome, error) {
	var out pushOutcome
	size := MaxBatch
	if len(push) > minBatch {
		size = probeBatch
	}
	var perRef time.Duration // the slowest rate seen
	ceiling := MaxBatch      // the size a cut-short batch was halved to: never more after it
	cut, cutSaid := 0, ""    // the batch just cut short: a retry must carry fewer refs
	settled := 0             // refusals explained by a cut-short push that landed after all
	for left := push; len(left) > 0; {
		rest := splitBatches(left, size)
		b := rest[0]
		out.batches++
		planned := out.batches - 1 + len(rest)
		if cut > 0 && len(b.refs) >= cut {
			// No smaller batch can carry these refs (named refs travel
			// together): the cut stands.
			return out.fail(planned, true, cutSaid), nil
		}
		announce(say, remote, out.batches, planned, len(b.refs), len(push), ceiling < MaxBatch || settled > 0)
		start := time.Now()
		pushed, failure, timeout, err := pushOne(ctx, dir, remote, b, held)
		if err != nil {
			return out, err
		}
		out.pushed = append(out.pushed, pushed...)
		left = without(left, pushed)
		if failure != "" {
			switch {
			case timeout && len(b.refs) > 1:
				// Cut short, not refused: the same refs again, in halves.
				size = (len(b.refs) + 1) / 2
				ceiling, cut, cutSaid = size, len(b.refs), failure
				say("batch %d was cut short (%s timed out or hung up); pushing it again in batches of %s", out.batches, remote, rules.Count(size, "ref"))
			case ceiling < MaxBatch && settled < maxPushAttempts:
				// A push cut short earlier may have landed since (the
				// server finished what the proxy stopped waiting for):
				// its refs are refused here as taken.
				landed := landedAnyway(ctx, dir, remote, b.refs)
				if len(landed) == 0 {
					return out.fail(planned, timeout, failure), nil
				}
				settled++
				out.pushed = append(out.pushed, landed...)
				left = without(left, landed)
				say("%s of batch %d landed from the push that was cut short; pushing the rest", rules.Count(len(landed), "ref"), out.batches)
			default:
				return out.fail(planned, timeout, failure), nil
			}
			out.batches--
			continue
		}
		cut = 0
		perRef = max(perRef, time.Since(start)/time.Duration(len(b.refs)))
		size = ceiling
		if perRef > 0 {
			size = min(ceiling, max(minBatch, int(batchBudget/perRef)))
		}
		left = without(left, b.refs)
	}
	return out, nil
}

// announce says which batch of planned is pushed now, of n refs out of
// total; the first one, unless a retry came before it, says how the push
// is paced.
func announce(say func(string, ...any), remote string, batch, planned, n, total int, retried bool) {
	switch {
	case batch == 1 && planned == 1 && !retried:
		say("pushing %s to %s in one batch", rules.Count(n, "ref"), remote)
	case batch == 1 && total > minBatch && !retried:
		say("pushing batch 1 (%s of %d, timing the remote to size the rest)", rules.Count(n, "ref"), total)
	case planned > 1:
		say("pushing batch %d of %d (%s)", batch, planned, rules.Count(n, "ref"))
	}
}

// fail is out ending at its current batch, which failed (timeout: cut
// short), out of planned.
func (out pushOutcome) fail(planned int, timeout bool, said string) pushOutcome {
	out.failed, out.timeout, out.said, out.batches = out.batches, timeout, said, planned
	return out
}

// landedAnyway are those of refs that remote holds at their local value
// after a push of them was cut short: a server finishes a push whose
// answer a proxy stopped waiting for. On any doubt, none.
func landedAnyway(ctx context.Context, dir, remote string, refs []string) []string {
	there, err := lsRemote(ctx, dir, remote)
	if err != nil {
		return nil
	}
	local, err := gitstore.Git(ctx, dir, "for-each-ref", "--format=%(objectname) %(refname)", Prefix)
	if err != nil {
		return nil
	}
	want := make(map[string]bool, len(refs))
	for _, ref := range refs {
		want[ref] = true
	}
	var out []string
	for _, line := range strings.Split(local, "\n") {
		hash, name, ok := strings.Cut(line, " ")
		if !ok || !want[name] {
			continue
		}
		if h, err := gitstore.ParseHash(hash); err == nil && there[strings.TrimPrefix(name, Prefix)] == h {
			out = append(out, name)
		}
	}
	return out
}

// without is refs less those in done, in order.
func without(refs, done []string) []string {
	gone := make(map[string]bool, len(done))
	for _, ref := range done {
		gone[ref] = true
	}
	var out []string
	for _, ref := range refs {
		if !gone[ref] {
			out = append(out, ref)
		}
	}
	return out
}

// pushOne pushes one batch in one atomic, non-forced push, retrying when
// only refs outside it that a glob carried moved on the remote.
func pushOne(ctx context.Context, dir, remote string, b pushBatch, held []string) (pushed []string, failure string, timeout bool, err error) {
	want := make(map[string]bool, len(b.refs))
	for _, ref := range b.refs {
		want[ref] = true
	}
	exclude := append([]string(nil), held...)
	for attempt := 1; ; attempt++ {
		args, glob := pushArgs(remote, b, exclude)
		out, gitErr := gitstore.Git(ctx, dir, args...)
		results := parsePorcelain(out)
		if gitErr == nil {
			return pushedRefs(b.refs, want, results), "", false, nil
		}
		if len(results) == 0 && ctx.Err() != nil {
			return nil, "", false, fmt.Errorf("push to %s: %w", remote, gitErr)
		}
		said := lastLines(withoutHints(gitErr.Error())+"\n"+rejections(results), 6)
		if len(results) == 0 && cutShort(gitErr.Error()) {
			return nil, said, true, nil
		}
		// Retry only when every ref git itself rejected lies outside the
		// batch: refs the glob carried that moved on the remote.
		var moved []string
		retry := glob && attempt < maxPushAttempts
		for _, r := range results {
			if r.flag != '!' || strings.Contains(r.summary, "(atomic ") {
				continue
			}
			if want[r.ref] || !strings.HasPrefix(r.summary, "[rejected]") {
				retry = false
				break
			}
			moved = append(moved, r.ref)
		}
		if !retry || len(moved) == 0 {
			return nil, said, false, nil
		}
		exclude = append(exclude, moved...)
	}
}

// cutShort reports whether git's error is a server or proxy that timed
// out or dropped the connection mid-push, not a refusal: smart HTTP's
// "RPC failed; HTTP 504", a hung-up remote, an early EOF.
func cutShort(said string) bool {
	for _, sign := range []string{"RPC failed", "HTTP 502", "HTTP 503", "HTTP 504", "error: 502", "error: 503", "error: 504", "Gateway", "timed out", "hung up unexpectedly", "early EOF", "unexpected disconnect"} {
		if strings.Contains(said, sign) {
			return true
		}
	}
	return false
}

// splitBatches cuts push into batches of at most max refs. A namespace's
// refs (refs/m1nd/missions/…) are carried by glob prefixes, a namespace
// that holds more than max being split by the characters after its
// prefix (msn_0*, msn_1*, …) until each part fits: a glob costs git little
// where named refs cost it per ref and refspec. Refs directly under
// refs/m1nd/ are named, in the first batch.
func splitBatches(push []string, max int) []pushBatch {
	byNS := map[string][]string{}
	var named []string
	for _, ref := range push {
		if ns, ok := namespaceOf(ref); ok {
			byNS[ns] = append(byNS[ns], ref)
		} else {
			named = append(named, ref)
		}
	}
	type group struct {
		prefix string
		refs   []string
	}
	var groups []group
	var split func(prefix string, refs []string)
	split = func(prefix string, refs []string) {
		if len(refs) <= max {
			groups = append(groups, group{prefix, refs})
			return
		}
		byNext := map[string][]string{}
		for _, ref := range refs {
			if len(ref) == len(prefix) {
				named = append(named, ref) // the prefix itself: named
				continue
			}
			next := prefix + ref[len(prefix):len(prefix)+1]
			byNext[next] = append(byNext[next], ref)
		}
		for _, next := range sortedKeys(byNext) {
			split(next, byNext[next])
		}
	}
	for _, ns := range sortedKeys(byNS) {
		split(ns, byNS[ns])
	}
	var batches []pushBatch
	cur := pushBatch{refs: named}
	for _, g := range groups {
		if len(cur.refs)+len(g.refs) > max && len(cur.refs) > 0 {
			batches = append(batches, cur)
			cur = pushBatch{}
		}
		cur.refs = append(cur.refs, g.refs...)
		cur.prefixes = append(cur.prefixes, g.prefix)
	}
	if len(cur.refs) > 0 {
		batches = append(batches, cur)
	}
	return batches
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pushArgs builds a batch's push: one glob refspec per prefix, the
// batch's other refs named, negatives for the excluded refs its globs
// would carry; or, when that needs as many negatives as the globs carry
// refs to push, every ref named. glob says which.
func pushArgs(remote string, b pushBatch, exclude []string) (args []string, glob bool) {
	// No --quiet: it hides the per-ref lines of a push that succeeded.
	args = []string{"push", "--atomic", "--porcelain", remote}
	under := func(ref string) bool {
		for _, p := range b.prefixes {
			if strings.HasPrefix(ref, p) {
				return true
			}
		}
		return false
	}
	var named []string
	for _, ref := range b.refs {
		if !under(ref) {
			named = append(named, ref)
		}
	}
	var negatives []string
	for _, ref := range exclude {
		if under(ref) {
			negatives = append(negatives, ref)
		}
	}
	if len(b.prefixes) == 0 || len(negatives) >= len(b.refs)-len(named) {
		for _, ref := range b.refs {
			args = append(args, ref+":"+ref)
		}
		return args, false
	}
	for _, p := range b.prefixes {
		args = append(args, p+"*:"+p+"*")
	}
	for _, ref := range named {
		args = append(args, ref+":"+ref)
	}
	for _, ref := range negatives {
		args = append(args, "^"+ref)
	}
	return args, true
}

// namespaceOf is the folder of refs/m1nd/ a ref lies in (with its final
// slash), e.g. refs/m1nd/missions/; false for a ref directly under
// refs/m1nd/ and for the conflicts, which are never pushed.
func namespaceOf(ref string) (string, bool) {
	rest := strings.TrimPrefix(ref, Prefix)
	i := strings.IndexByte(rest, '/')
	if i < 0 || !strings.HasPrefix(ref, Prefix) {
		return "", false
	}
	ns := Prefix + rest[:i+1]
	if ns == ConflictsPrefix {
		return "", false
	}
	return ns, true
}

// pushResult is one ref line of `git push --porcelain`.
type pushResult struct {
	flag    byte // ' ' fast-forward, '+' forced, '*' new, '-' deleted, '!' rejected, '=' up to date
	ref     string
	summary string
}

// parsePorcelain reads git push --porcelain's per-ref lines:
// "<flag>\t<from>:<to>\t<summary>[ (<reason>)]".
func parsePorcelain(out string) []pushResult {
	var results []pushResult
	for _, line := range strings.Split(out, "\n") {
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) != 3 || len(fields[0]) != 1 {
			continue
		}
		_, to, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		results = append(results, pushResult{flag: fields[0][0], ref: to, summary: fields[2]})
	}
	return results
}

// withoutHints drops git's advice lines ("hint: …": pull, integrate)
// from what it said: sync's own answer is to sync again.
func withoutHints(s string) string {
	lines := strings.Split(s, "\n")
	kept := lines[:0]
	for _, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "hint:") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// rejections names the refs git refused and why, one a line, leaving out
// those refused only because another ref was (atomic).
func rejections(results []pushResult) string {
	var b strings.Builder
	for _, r := range results {
		if r.flag == '!' && !strings.Contains(r.summary, "(atomic ") {
			fmt.Fprintf(&b, "%s %s\n", r.ref, r.summary)
		}
	}
	return b.String()
}

// pushedRefs lists, after a successful push, the refs of push in their
// order, then any other ref the push updated (one written here while sync
// ran, carried by a glob), in git's order.
func pushedRefs(push []string, want map[string]bool, results []pushResult) []string {
	updated := map[string]bool{}
	var extra []string
	for _, r := range results {
		switch r.flag {
		case ' ', '*', '+':
			updated[r.ref] = true
			if !want[r.ref] {
				extra = append(extra, r.ref)
			}
		case '=':
			if want[r.ref] {
				updated[r.ref] = true // the remote reached our value by itself
			}
		}
	}
	pushed := make([]string, 0, len(push)+len(extra))
	for _, ref := range push {
		if updated[ref] {
			pushed = append(pushed, ref)
		}
	}
	return append(pushed, extra...)
}

// pushDeletions deletes refs on remote, each under a lease on the value
// this clone fetched (a ref that moved there meanwhile is kept, and the
// batch refused), in atomic batches of at most MaxBatch. They are the live
// refs of folded missions, pushed after the archive that folds them: the
// remote's laws allow exactly those deletions. It stops at the first
// batch that fails and returns what was deleted before it.
func pushDeletions(ctx context.Context, dir, remote string, dels []gitstore.Ref, say func(string, ...any)) (deleted []string, failure string, timeout bool, err error) {
	for start := 0; start < len(dels); start += MaxBatch {
		batch := dels[start:min(start+MaxBatch, len(dels))]
		say("deleting %s of folded missions on %s", rules.Count(len(batch), "live ref"), remote)
		args := []string{"push", "--atomic", "--porcelain", remote}
		for _, d := range batch {
			args = append(args, "--force-with-lease="+d.Name+":"+d.Hash.String())
		}
		for _, d := range batch {
			args = append(args, ":"+d.Name)
		}
		out, gitErr := gitstore.Git(ctx, dir, args...)
		if gitErr != nil {
			results := parsePorcelain(out)
			if len(results) == 0 && ctx.Err() != nil {
				return deleted, "", false, fmt.Errorf("push to %s: %w", remote, gitErr)
			}
			said := lastLines(withoutHints(gitErr.Error())+"\n"+rejections(results), 6)
			return deleted, said, len(results) == 0 && cutShort(gitErr.Error()), nil
		}
		for _, d := range batch {
			deleted = append(deleted, d.Name)
		}
	}
	return deleted, "", false, nil
}
