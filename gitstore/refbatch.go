package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// packedCreateMin is the fewest creations CreateRefs writes through
// packed-refs; fewer go one by one through UpdateRef, whose cost does not
// grow with packed-refs.
const packedCreateMin = 16

// packedBytesPerCreate caps how much of packed-refs CreateRefs rewrites
// per ref it creates (a loose creation costs about as much as writing
// this much): past it, the refs are created loose, one by one.
const packedBytesPerCreate = 16 << 10

// CreateRefs creates refs that do not exist yet, each a compare-and-swap
// from nothing, as UpdateRef with a zero old value would, and returns the
// names it did not create because they exist (loose or packed) or another
// writer held their lock past the lock timeout.
//
// Many at once (a newcomer's first sync brings every mission) go into
// packed-refs in one rename, as git clone writes the refs it brings: a
// loose creation is several file operations and a sync of a thousand refs
// spent nine tenths of its time on them. While it writes, CreateRefs holds
// each ref's loose lock (stamped, as UpdateRef's) and packed-refs.lock, so
// no writer, git's or m1nd's, changes a ref it creates meanwhile, and a
// killed CreateRefs leaves packed-refs whole (the old file or the new) and
// locks the next writer clears.
func (r *Repo) CreateRefs(ctx context.Context, refs []Ref) (notCreated []string, err error) {
	for _, ref := range refs {
		if !ValidRefName(ref.Name) {
			return nil, fmt.Errorf("create refs: invalid ref name %q", ref.Name)
		}
		if ref.Hash.IsZero() {
			return nil, fmt.Errorf("create %s: refusing to write the zero hash", ref.Name)
		}
	}
	refs = sortedRefs(refs)
	if !r.packedCreatePays(len(refs)) {
		return r.createLoose(ctx, refs)
	}

	stamp, err := newStamp(r.tmpDir())
	if err != nil {
		return nil, fmt.Errorf("create refs: %w", err)
	}
	defer os.Remove(stamp)
	// Each ref's lock, stamped: one hard link of one stamp file each. A
	// ref whose lock is held goes one by one after, waiting as UpdateRef
	// waits.
	var locked, busy []Ref
	defer func() { r.unlockRefs(locked) }()
	made := map[string]bool{} // ref folders known to exist
	locked, busy, err = r.lockStamped(stamp, refs, made)
	if err != nil {
		return nil, err
	}
	pk, unlock, err := r.lockPacked(ctx)
	if err != nil {
		return nil, fmt.Errorf("create refs: %w", err)
	}
	defer unlock()
	// Which loose refs exist, one listing per folder: no writer can make
	// one of the locked refs now, git included (it takes the same lock).
	loose, err := listLoose(made)
	if err != nil {
		return nil, fmt.Errorf("create refs: %w", err)
	}
	fresh, notCreated := r.splitFresh(locked, loose, pk)
	if len(fresh) > 0 {
		if err := r.writePacked(pk, fresh, nil); err != nil {
			return nil, fmt.Errorf("create refs: %w", err)
		}
	}
	if len(busy) > 0 {
		more, err := r.createLoose(ctx, busy)
		if err != nil {
			return nil, err
		}
		notCreated = append(notCreated, more...)
	}
	slices.Sort(notCreated)
	return notCreated, nil
}

// sortedRefs is a copy of refs sorted by name with each name once, so
// locks are always taken in one order and never twice.
func sortedRefs(refs []Ref) []Ref {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b Ref) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(refs, func(a, b Ref) bool { return a.Name == b.Name })
}

// packedCreatePays says whether creating n refs through packed-refs beats
// creating them loose: only for many refs, and only while packed-refs is
// small enough that rewriting it costs less than the loose files would.
func (r *Repo) packedCreatePays(n int) bool {
	var packedSize int64
	if fi, err := os.Stat(filepath.Join(r.commonDir, "packed-refs")); err == nil {
		packedSize = fi.Size()
	}
	return n >= packedCreateMin && packedSize <= int64(n)*packedBytesPerCreate
}

// unlockRefs removes the loose lock of each ref in locked.
func (r *Repo) unlockRefs(locked []Ref) {
	for _, ref := range locked {
		os.Remove(r.refPath(ref.Name) + ".lock")
	}
}

// ensureRefDir makes the folder of the ref file at path. made records the
// folders known to exist, so each is made once however many refs it holds.
func (r *Repo) ensureRefDir(made map[string]bool, path string) error {
	dir := filepath.Dir(path)
	if made[dir] {
		return nil
	}
	if err := r.mkdirShared(dir); err != nil {
		return err
	}
	made[dir] = true
	return nil
}

// lockStamped takes each ref's loose lock for CreateRefs, as a hard link
// of stamp, without waiting: a ref whose lock is held goes to busy. It
// returns every lock it took even when it fails, so the caller can
// release them.
func (r *Repo) lockStamped(stamp string, refs []Ref, made map[string]bool) (locked, busy []Ref, err error) {
	for _, ref := range refs {
		path := r.refPath(ref.Name)
		if err := r.ensureRefDir(made, path); err != nil {
			return locked, busy, fmt.Errorf("create %s: %w", ref.Name, err)
		}
		err := lockWithStamp(stamp, path+".lock")
		switch {
		case err == nil:
			locked = append(locked, ref)
		case errors.Is(err, fs.ErrExist):
			busy = append(busy, ref)
		default:
			return locked, busy, fmt.Errorf("create %s: lock: %w", ref.Name, err)
		}
	}
	return locked, busy, nil
}

// listLoose is the set of paths in the folders of made: which loose refs
// exist, found with one listing per folder rather than one look per ref.
func listLoose(made map[string]bool) (map[string]bool, error) {
	loose := map[string]bool{}
	for dir := range made {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			loose[filepath.Join(dir, e.Name())] = true
		}
	}
	return loose, nil
}

// splitFresh parts the locked refs into those CreateRefs may write and the
// names of those that exist already, loose or packed.
func (r *Repo) splitFresh(locked []Ref, loose map[string]bool, pk *packedFile) (fresh []Ref, exist []string) {
	for _, ref := range locked {
		inLoose := loose[r.refPath(ref.Name)]
		if _, inPacked := pk.values[ref.Name]; inLoose || inPacked {
			exist = append(exist, ref.Name)
			continue
		}
		fresh = append(fresh, ref)
	}
	return fresh, exist
}

// createLoose creates refs one by one through UpdateRef.
func (r *Repo) createLoose(ctx context.Context, refs []Ref) ([]string, error) {
	var notCreated []string
	for _, ref := range refs {
		err := r.UpdateRef(ctx, ref.Name, ZeroHash, ref.Hash)
		var stale *StaleRefError
		switch {
		case err == nil:
		case errors.As(err, &stale), errors.Is(err, ErrRefLocked):
			notCreated = append(notCreated, ref.Name)
		default:
			return nil, err
		}
	}
	return notCreated, nil
}

func (r *Repo) refPath(name string) string {
	return filepath.Join(r.commonDir, filepath.FromSlash(name))
}

// packedHeader is what git writes at the top of packed-refs it makes.
const packedHeader = "# pack-refs with: peeled fully-peeled sorted \n"

// packedFile is packed-refs as read under its lock: its bytes, its
// header line ("" when it has none) and every ref's value by name.
type packedFile struct {
	path   string
	data   []byte
	header string
	values map[string]Hash
}

// lockPacked takes packed-refs.lock (stamped, as a ref's lock, so a
// killed holder's is cleared) and reads packed-refs; unlock releases it.
func (r *Repo) lockPacked(ctx context.Context) (*packedFile, func(), error) {
	path := filepath.Join(r.commonDir, "packed-refs")
	if err := acquireLock(ctx, path+".lock", r.tmpDir(), r.LockTimeout); err != nil {
		return nil, nil, fmt.Errorf("packed-refs: %w", err)
	}
	unlock := func() { os.Remove(path + ".lock") }
	data, err := ReadRegular(path, -1)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		unlock()
		return nil, nil, fmt.Errorf("read packed-refs: %w", err)
	}
	pk, err := parsePackedFile(path, data)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return pk, unlock, nil
}

// parsePackedFile indexes packed-refs data.
func parsePackedFile(path string, data []byte) (*packedFile, error) {
	pk := &packedFile{path: path, data: data, values: map[string]Hash{}}
	if bytes.HasPrefix(data, []byte("# pack-refs with:")) {
		line, _ := cutLine(data)
		pk.header = string(line) + "\n"
	}
	hexLen := 2 * len(ZeroHash)
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest = cutLine(rest)
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if len(line) < hexLen+2 || line[hexLen] != ' ' {
			return nil, fmt.Errorf("packed-refs: malformed line %q", line)
		}
		h, err := ParseHash(string(line[:hexLen]))
		if err != nil {
			return nil, fmt.Errorf("packed-refs: %w", err)
		}
		pk.values[string(line[hexLen+1:])] = h
	}
	return pk, nil
}

// writePacked writes packed-refs as pk plus fresh (none of which pk
// holds) less the refs drop names, sorted by name as git keeps it,
// through a synced file renamed over it; the caller holds
// packed-refs.lock (lockPacked). Each old ref keeps the
// lines that follow it (a peeled tag's "^" line) and the header keeps
// old's traits, with "sorted" added: fresh refs are commits, which peel
// to nothing.
func (r *Repo) writePacked(pk *packedFile, fresh []Ref, drop map[string]bool) error {
	old, header := pk.data, pk.header
	type record struct {
		name  string
		lines []byte
	}
	var records []record
	hexLen := 2 * len(ZeroHash)
	for rest := old; len(rest) > 0; {
		var line []byte
		line, rest = cutLine(rest)
		switch {
		case len(line) == 0 || line[0] == '#':
		case line[0] == '^':
			if n := len(records); n > 0 {
				records[n-1].lines = append(append(records[n-1].lines, line...), '\n')
			}
		case drop[string(line[hexLen+1:])]:
			records = append(records, record{name: "", lines: nil}) // its "^" line goes with it
		default:
			records = append(records, record{name: string(line[hexLen+1:]), lines: append(slices.Clone(line), '\n')})
		}
	}
	for _, ref := range fresh {
		records = append(records, record{name: ref.Name, lines: []byte(ref.Hash.String() + " " + ref.Name + "\n")})
	}
	slices.SortStableFunc(records, func(a, b record) int { return strings.Compare(a.name, b.name) })
	switch {
	case header == "":
		header = packedHeader
	case !strings.Contains(header, " sorted "):
		header = strings.TrimSuffix(header, "\n")
		if !strings.HasSuffix(header, " ") {
			header += " "
		}
		header += "sorted \n"
	}
	var b bytes.Buffer
	b.Grow(len(old) + len(fresh)*(hexLen+64))
	b.WriteString(header)
	for _, rec := range records {
		if rec.name != "" {
			b.Write(rec.lines)
		}
	}
	tmp := filepath.Join(r.tmpDir(), fmt.Sprintf("packed-%d-%d", os.Getpid(), rand.Uint64()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.adjustShared(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, pk.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write packed-refs: %w", err)
	}
	return nil
}

// DeleteRefs deletes refs, each a compare-and-swap from the value it
// names (loose or packed), and returns the names it did not delete
// because they moved, were gone already, or another writer held their
// lock past the lock timeout. It holds each ref's loose lock (stamped) and
// packed-refs.lock while it works, and removes a ref from packed-refs
// before its loose file, as git does, so a kill at any point leaves each
// ref at its value or gone, never at an older packed one.
func (r *Repo) DeleteRefs(ctx context.Context, refs []Ref) (notDeleted []string, err error) {
	for _, ref := range refs {
		if !ValidRefName(ref.Name) {
			return nil, fmt.Errorf("delete refs: invalid ref name %q", ref.Name)
		}
	}
	refs = sortedRefs(refs)
	if len(refs) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(r.tmpDir(), 0o700); err != nil {
		return nil, fmt.Errorf("delete refs: %w", err)
	}
	var locked []Ref
	defer func() { r.unlockRefs(locked) }()
	made := map[string]bool{} // ref folders known to exist (a packed ref's may not)
	locked, notDeleted, err = r.lockForDelete(ctx, refs, made)
	if err != nil {
		return nil, err
	}
	pk, unlock, err := r.lockPacked(ctx)
	if err != nil {
		return nil, fmt.Errorf("delete refs: %w", err)
	}
	defer unlock()
	drop, loose, moved, err := r.planDeletes(pk, locked)
	if err != nil {
		return nil, err
	}
	notDeleted = append(notDeleted, moved...)
	if len(drop) > 0 {
		if err := r.writePacked(pk, nil, drop); err != nil {
			return nil, fmt.Errorf("delete refs: %w", err)
		}
	}
	for _, name := range loose {
		if err := os.Remove(r.refPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("delete %s: %w", name, err)
		}
	}
	slices.Sort(notDeleted)
	return notDeleted, nil
}

// lockForDelete takes each ref's loose lock for DeleteRefs, waiting as
// UpdateRef waits; a ref whose lock stays held, or that is neither loose
// nor packed, goes to busy (not deleted). It returns
// every lock it took even when it fails, so the caller can release them.
func (r *Repo) lockForDelete(ctx context.Context, refs []Ref, made map[string]bool) (locked []Ref, busy []string, err error) {
	for _, ref := range refs {
		path := r.refPath(ref.Name)
		if dir := filepath.Dir(path); !made[dir] {
			// A ref whose folder is missing is packed or nowhere: one
			// nowhere is not deleted, and no folder is made for it.
			if _, err := os.Lstat(dir); err != nil {
				if _, inPacked, perr := r.packedRef(ref.Name); perr != nil || !inPacked {
					busy = append(busy, ref.Name)
					continue
				}
			}
			if err := r.ensureRefDir(made, path); err != nil {
				return locked, busy, fmt.Errorf("delete %s: %w", ref.Name, err)
			}
		}
		err := acquireLock(ctx, path+".lock", r.tmpDir(), r.LockTimeout)
		switch {
		case err == nil:
			locked = append(locked, ref)
		case errors.Is(err, ErrRefLocked):
			busy = append(busy, ref.Name)
		default:
			return locked, busy, fmt.Errorf("delete %s: %w", ref.Name, err)
		}
	}
	return locked, busy, nil
}

// planDeletes decides, for each locked ref, whether DeleteRefs may delete
// it: only at the value it names, loose or else packed. drop is what
// leaves packed-refs, loose the loose files to remove, moved the names
// left alone because they moved or were gone.
func (r *Repo) planDeletes(pk *packedFile, locked []Ref) (drop map[string]bool, loose, moved []string, err error) {
	drop = map[string]bool{}
	for _, ref := range locked {
		cur, inLoose, err := readLooseRef(r.refPath(ref.Name))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("delete %s: %w", ref.Name, err)
		}
		p, inPacked := pk.values[ref.Name]
		if !inLoose {
			cur = p
		}
		if (!inLoose && !inPacked) || cur != ref.Hash {
			moved = append(moved, ref.Name)
			continue
		}
		if inPacked {
			drop[ref.Name] = true
		}
		if inLoose {
			loose = append(loose, ref.Name)
		}
	}
	return drop, loose, moved, nil
}
