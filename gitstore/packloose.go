package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LooseMax is how many loose refs one ref folder may hold before
// KeepPacked packs them. git's reference-transaction hook runs twice for
// every loose ref `git pack-refs` (and so `git gc`) prunes, whatever the
// hook does: 10,000 loose refs cost 20,000 hook starts. Kept under this,
// a folder of loose refs is also one small listing per write.
const LooseMax = 32

// KeepPacked packs the loose refs under prefix (PackLoose) when the
// folder of the ref just written, name, holds more than LooseMax loose
// refs: one listing of that folder per write, and a packing every
// LooseMax writes or so. Packing is housekeeping: a ref another writer
// holds is left loose for the next time, and an error leaves every ref at
// its value.
func (r *Repo) KeepPacked(ctx context.Context, name, prefix string) error {
	entries, err := os.ReadDir(filepath.Dir(r.refPath(name)))
	if err != nil {
		return nil // the folder went (git pruned it): nothing loose to count
	}
	loose := 0
	for _, e := range entries {
		if e.Type().IsRegular() && filepath.Ext(e.Name()) != ".lock" {
			loose++
		}
	}
	if loose <= LooseMax {
		return nil
	}
	_, err = r.packLoose(ctx, packBatch, prefix)
	return err
}

// packBatch caps how many refs one KeepPacked packs: each is locked from
// the start of the packing to its end, so a brain left with 100,000 loose
// refs by an older m1nd is packed over a few writes, never keeping a
// writer of one of them waiting near its lock timeout.
const packBatch = 16 << 10

// PackLoose moves the loose refs under each prefix into packed-refs, in
// one rewrite of it, and returns how many it moved: what `git pack-refs` does for them, without
// git, and so without starting git's reference-transaction hook.
//
// It follows git's protocol. Each loose ref's lock is taken first (a hard
// link of one stamp file, so a killed packer's locks are cleared by the
// next writer) and a ref whose lock is held is left loose; then
// packed-refs.lock; the values are read under the locks, written into
// packed-refs through a synced file renamed over it, and only then are the
// loose files removed. A reader looks at the loose file before
// packed-refs, as git does, so a kill at any point leaves every ref
// readable at its value: loose and packed alike, or packed alone.
func (r *Repo) PackLoose(ctx context.Context, prefixes ...string) (int, error) {
	return r.packLoose(ctx, 0, prefixes...)
}

// packLoose is PackLoose of at most limit refs (0: all), the first by name.
func (r *Repo) packLoose(ctx context.Context, limit int, prefixes ...string) (int, error) {
	prefix := strings.Join(prefixes, ", ") // for errors
	names, err := r.looseUnder(prefixes, limit)
	if err != nil || len(names) == 0 {
		return 0, err
	}
	stamp, err := newStamp(r.tmpDir())
	if err != nil {
		return 0, fmt.Errorf("pack %s: %w", prefix, err)
	}
	defer os.Remove(stamp)
	locked, err := r.lockLoose(ctx, stamp, names)
	defer func() {
		for _, name := range locked {
			os.Remove(r.refPath(name) + ".lock")
		}
	}()
	if err != nil {
		return 0, fmt.Errorf("pack %s: %w", prefix, err)
	}
	if len(locked) == 0 {
		return 0, nil
	}
	pk, unlock, err := r.lockPacked(ctx)
	if err != nil {
		return 0, fmt.Errorf("pack %s: %w", prefix, err)
	}
	defer unlock()
	fresh, drop, err := r.looseValues(pk, locked)
	if err != nil {
		return 0, fmt.Errorf("pack %s: %w", prefix, err)
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	if err := r.writePacked(pk, fresh, drop); err != nil {
		return 0, fmt.Errorf("pack %s: %w", prefix, err)
	}
	for _, ref := range fresh {
		if err := os.Remove(r.refPath(ref.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("pack %s: prune %s: %w", prefix, ref.Name, err)
		}
	}
	return len(fresh), nil
}

// looseUnder is the names of the loose refs under prefixes, sorted, each
// once (locks are always taken in one order), at most limit (0: all).
func (r *Repo) looseUnder(prefixes []string, limit int) ([]string, error) {
	var names []string
	for _, prefix := range prefixes {
		more, _, err := r.looseRefNames(prefix)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", prefix, err)
		}
		names = append(names, more...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if limit > 0 && len(names) > limit {
		names = names[:limit]
	}
	return names, nil
}

// lockLoose takes each named ref's lock with stamp and returns those it
// holds, which the caller releases: a ref a writer holds, or whose folder
// git pruned, is left as it is, and a killed m1nd's lock is cleared as
// any writer clears it.
func (r *Repo) lockLoose(ctx context.Context, stamp string, names []string) (locked []string, err error) {
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return locked, err
		}
		lock := r.refPath(name) + ".lock"
		err := lockWithStamp(stamp, lock)
		if errors.Is(err, fs.ErrExist) {
			if cleared, _ := clearDeadLock(lock, r.tmpDir()); cleared {
				err = lockWithStamp(stamp, lock)
			}
		}
		switch {
		case err == nil:
			locked = append(locked, name)
		case errors.Is(err, fs.ErrExist), errors.Is(err, fs.ErrNotExist):
		default:
			return locked, fmt.Errorf("lock %s: %w", name, err)
		}
	}
	return locked, nil
}

// looseValues reads each locked loose ref's value, which no writer can
// change while its lock is held: fresh are the values to pack, drop the
// names whose older packed value they replace. A symbolic ref stays loose
// (m1nd writes none), and one deleted before its lock was taken is gone.
func (r *Repo) looseValues(pk *packedFile, locked []string) (fresh []Ref, drop map[string]bool, err error) {
	drop = map[string]bool{}
	for _, name := range locked {
		h, ok, err := readLooseRef(r.refPath(name))
		if errors.Is(err, ErrSymbolicRef) || (err == nil && !ok) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", name, err)
		}
		fresh = append(fresh, Ref{Name: name, Hash: h})
		if _, packed := pk.values[name]; packed {
			drop[name] = true
		}
	}
	return fresh, drop, nil
}
