package gitsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// HeldRef is a ref a sync did not carry, and why: the remote's history
// breaks the laws (side remote: not taken, and this clone's value is not
// pushed over it), or this clone's does (side local: not pushed). It is
// recorded in the runtime folder after every sync, and listed by every
// sync and by m1nd status until a sync finds it resolved.
type HeldRef struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref"`
	Side   string `json:"side"` // remote or local
	Commit string `json:"commit,omitempty"`
	Code   string `json:"refused"`
	Lesson string `json:"lesson"`
}

// heldPath is where sync records what it holds back from remote.
func heldPath(runtimeDir, remote string) string {
	return filepath.Join(runtimeDir, "sync", remote+".held.json")
}

// heldOf lists what rep held back.
func heldOf(rep *Report) []HeldRef {
	held := []HeldRef{}
	for _, f := range rep.RefusedRemote {
		held = append(held, HeldRef{Remote: rep.Remote, Ref: f.Ref, Side: "remote", Commit: f.Commit, Code: f.Code, Lesson: f.Lesson})
	}
	for _, f := range rep.RefusedLocal {
		held = append(held, HeldRef{Remote: rep.Remote, Ref: f.Ref, Side: "local", Commit: f.Commit, Code: f.Code, Lesson: f.Lesson})
	}
	return held
}

// writeHeld records what a sync with remote held back, replacing the last
// record (a ref resolved since is no longer listed); none removes it.
func writeHeld(runtimeDir, remote string, held []HeldRef) error {
	path := heldPath(runtimeDir, remote)
	if len(held) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.Marshal(held)
	if err != nil {
		return err
	}
	return gitstore.WriteFileAtomic(path, data, 0o600)
}

// dropHeld takes ref out of what the last sync with remote held back: a
// repair resolved it, and m1nd status should not offer it again.
func dropHeld(runtimeDir, remote, ref string) error {
	data, err := gitstore.ReadRuntime(heldPath(runtimeDir, remote), 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var held, kept []HeldRef
	if err := json.Unmarshal(data, &held); err != nil {
		return writeHeld(runtimeDir, remote, nil) // damaged: the next sync writes it again
	}
	for _, h := range held {
		if h.Ref != ref {
			kept = append(kept, h)
		}
	}
	return writeHeld(runtimeDir, remote, kept)
}

// HeldBack lists what the last sync with each remote held back, from the
// runtime folder: what m1nd status shows until a sync resolves it.
func HeldBack(runtimeDir string) ([]HeldRef, error) {
	paths, err := filepath.Glob(filepath.Join(runtimeDir, "sync", "*.held.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var all []HeldRef
	for _, p := range paths {
		data, err := gitstore.ReadRuntime(p, 16<<20)
		if err != nil {
			return nil, fmt.Errorf("what sync held back: %w", err)
		}
		var held []HeldRef
		if err := json.Unmarshal(data, &held); err != nil {
			return nil, fmt.Errorf("what sync held back (%s is damaged; the next sync writes it again): %w", p, err)
		}
		all = append(all, held...)
	}
	return all, nil
}

// Repaired is what Repair did.
type Repaired struct {
	Remote string `json:"remote"`
	Ref    string `json:"ref"`
	Was    string `json:"was"` // the remote's value, replaced
	Now    string `json:"now"` // this clone's, pushed
}

// ValidRepairRef reports whether ref is one Repair can replace: a ref
// under refs/m1nd/, not a parked conflict.
func ValidRepairRef(ref string) bool {
	return strings.HasPrefix(ref, Prefix) && !strings.HasPrefix(ref, ConflictsPrefix) && gitstore.ValidRefName(ref)
}

// Repair replaces remote's ref, whose history breaks the laws or rewrites
// this clone's (rewriteOf: a new root, a dropped final letter), with this
// clone's, which keeps them: a push with a lease on the value just
// fetched, so a remote that moved meanwhile is refused, never
// overwritten. It is refused when the remote's history keeps the laws
// (sync takes or parks it), when this clone's does not, and for the key
// set (trust on first key is per clone: no push replaces a remote's keys).
// A repair that is not one (nothing to replace, a lawful remote history)
// is invalid_transition: it would rewrite history the laws let stand.
func Repair(ctx context.Context, repo *gitstore.Repo, remote, ref string) (*Repaired, error) {
	if !ValidRemote(remote) {
		return nil, fmt.Errorf("remote %q: name a configured remote (git remote -v)", remote)
	}
	if !ValidRepairRef(ref) {
		return nil, rules.Refusef(rules.InvalidTransition, "ref", "repair names one ref under %s (not a parked conflict): the one sync lists as refused from %s", Prefix, remote)
	}
	if ref == brain.KeysRef {
		return nil, rules.Refusef(rules.HumanGestureRequired, "ref", "a remote's key set is never replaced by a push: each clone trusts its keys on first sight; settle it in the tray of a clone that holds a key")
	}
	dir := repo.RemoteDir()
	tracking := TrackingPrefix(remote) + strings.TrimPrefix(ref, Prefix)
	if _, err := gitstore.Git(ctx, dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, "+"+ref+":"+tracking); err != nil {
		return nil, fmt.Errorf("fetch %s from %s: %w", ref, remote, err)
	}
	l, okL, err := repo.ReadRef(ref)
	if err != nil {
		return nil, err
	}
	r, okR, err := repo.ReadRef(tracking)
	if err != nil {
		return nil, err
	}
	if !okL {
		return nil, rules.Refusef(rules.InvalidTransition, "ref", "this clone has no %s to put in its place", ref)
	}
	if !okR || r == l {
		return nil, rules.Refusef(rules.InvalidTransition, "ref", "%s on %s already holds this clone's value or nothing: nothing to repair; run m1nd sync", ref, remote)
	}
	judge, err := laws.ForSync(repo)
	if err != nil {
		return nil, err
	}
	fork, lAfter, err := forkPoint(repo, l, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	rewrite, err := rewriteOf(repo, remote, ref, fork, lAfter, r)
	if err != nil {
		return nil, err
	}
	if f := judge.Check(repo, laws.Update{New: r, Ref: ref}); f == nil && rewrite == nil {
		return nil, rules.Refusef(rules.InvalidTransition, "ref", "%s on %s keeps the laws and extends or races this clone's: nothing to repair; m1nd sync takes it, or parks this clone's letters when the two forked", ref, remote)
	}
	if f := judge.Check(repo, laws.Update{New: l, Ref: ref}); f != nil {
		return nil, rules.Refusef(rules.Code(f.Code), "ref", "this clone's %s breaks the laws too, so it cannot replace the remote's: %s", ref, f.Lesson)
	}
	lease := fmt.Sprintf("--force-with-lease=%s:%s", ref, r)
	if out, err := gitstore.Git(ctx, dir, "push", "--porcelain", lease, remote, l.String()+":"+ref); err != nil {
		return nil, fmt.Errorf("push %s to %s (refused: the remote moved since the fetch, or its hook said no): %s", ref, remote, lastLines(withoutHints(err.Error())+"\n"+rejections(parsePorcelain(out)), 6))
	}
	if err := repo.UpdateRef(ctx, tracking, r, l); err != nil {
		return nil, fmt.Errorf("%s repaired on %s, but its tracking ref did not move: %w", ref, remote, err)
	}
	if err := dropHeld(repo.RuntimeDir(), remote, ref); err != nil {
		return nil, fmt.Errorf("%s repaired on %s, but the record of what sync held back still names it: %w", ref, remote, err)
	}
	return &Repaired{Remote: remote, Ref: ref, Was: r.String(), Now: l.String()}, nil
}
