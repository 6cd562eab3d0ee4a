package gitstore

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StaleRefError reports a compare-and-swap whose expected old value was not
// the ref's value. It is never retried here: the caller decided on a head
// that has since moved.
type StaleRefError struct {
	Ref      string
	Expected Hash // ZeroHash: the caller expected the ref not to exist
	Actual   Hash // ZeroHash: the ref does not exist
}

func (e *StaleRefError) Error() string {
	return fmt.Sprintf("update %s: expected %s, found %s", e.Ref, describe(e.Expected), describe(e.Actual))
}

func describe(h Hash) string {
	if h.IsZero() {
		return "no ref"
	}
	return h.String()
}

// Ref is a name and the object it points at.
type Ref struct {
	Name string
	Hash Hash
}

// ValidRefName applies the subset of git's check-ref-format rules that
// matter for names m1nd builds: refs/ prefix, no empty or dot-leading
// components, no "..", no ".lock" suffix, no control or special characters.
func ValidRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.HasSuffix(name, "/") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

// ReadRef returns the value of a ref, looking at the loose file first and
// then at packed-refs, in the same order as git so that a concurrent
// `git pack-refs` never makes a ref vanish. ok is false when it does not exist.
func (r *Repo) ReadRef(name string) (h Hash, ok bool, err error) {
	if !ValidRefName(name) {
		return ZeroHash, false, fmt.Errorf("read ref: invalid ref name %q", name)
	}
	path := filepath.Join(r.commonDir, filepath.FromSlash(name))
	r.clearDeadLockOf(path)
	h, ok, err = readLooseRef(path)
	if err != nil || ok {
		return h, ok, err
	}
	return r.packedRef(name)
}

// clearDeadLockOf clears the lock of the ref file at path when a killed
// m1nd left it: one killed after its rename and before removing its lock
// leaves the ref updated and nobody who must write it again, while git's
// own commands on that ref would wait on the lock. Reading the ref is
// enough to clear it (a lock git holds, or a live m1nd's, is left alone).
func (r *Repo) clearDeadLockOf(path string) {
	if _, err := os.Lstat(path + ".lock"); err == nil {
		clearDeadLock(path+".lock", r.tmpDir())
	}
}

// packedRef looks one ref up in packed-refs without reading the whole
// file: a post on a packed brain needs one line of a file that holds every
// ref (770 KB at 10,000 missions, 7.7 MB at 100,000). packed-refs is
// mapped, and when git wrote it sorted (its header says so, as every git
// since 2.15 writes it) the line is found by binary search, as git itself
// does; otherwise it is scanned.
func (r *Repo) packedRef(name string) (Hash, bool, error) {
	f, err := OpenRegular(filepath.Join(r.commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, false, nil
	}
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read packed-refs: %w", err)
	}
	if fi.Size() == 0 {
		return ZeroHash, false, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		// A file system that cannot map: read it.
		if data, err = io.ReadAll(f); err != nil {
			return ZeroHash, false, fmt.Errorf("read packed-refs: %w", err)
		}
		return findPackedRef(data, name)
	}
	defer syscall.Munmap(data)
	return findPackedRef(data, name)
}

// cutLine splits data after its first line (the new line dropped).
func cutLine(data []byte) (line, rest []byte) {
	line, rest, _ = bytes.Cut(data, []byte("\n"))
	return line, rest
}

// findPackedRef finds name's line in packed-refs data.
func findPackedRef(data []byte, name string) (Hash, bool, error) {
	hexLen := 2 * len(ZeroHash)
	match := func(line []byte) (Hash, bool, error) {
		if len(line) != hexLen+1+len(name) || line[hexLen] != ' ' || string(line[hexLen+1:]) != name {
			return ZeroHash, false, nil
		}
		h, err := ParseHash(string(line[:hexLen]))
		if err != nil {
			return ZeroHash, false, fmt.Errorf("packed-refs: %w", err)
		}
		return h, true, nil
	}
	header, _, _ := bytes.Cut(data, []byte("\n"))
	// data may be a read-only mapping: never append to a slice of it.
	if traits, ok := strings.CutPrefix(string(header), "# pack-refs with:"); ok && slices.Contains(strings.Fields(traits), "sorted") {
		return searchPackedRefs(data, name, match)
	}
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if h, ok, err := match(line); ok || err != nil {
			return h, ok, err
		}
	}
	return ZeroHash, false, nil
}

// searchPackedRefs binary-searches sorted packed-refs data for name, as
// git does: the search is over records (a ref line and the "^" peeled line
// that may follow it), between record starts lo and hi; a probe backs up
// to the start of its record.
func searchPackedRefs(data []byte, name string, match func([]byte) (Hash, bool, error)) (Hash, bool, error) {
	hexLen := 2 * len(ZeroHash)
	lineStart := func(p, floor int) int {
		return max(bytes.LastIndexByte(data[:p], '\n')+1, floor)
	}
	lineEnd := func(p int) int { // just past the line's new line
		if j := bytes.IndexByte(data[p:], '\n'); j >= 0 {
			return p + j + 1
		}
		return len(data)
	}
	lo, hi := 0, len(data)
	if len(data) > 0 && data[0] == '#' {
		lo = lineEnd(0)
	}
	for lo < hi {
		start := lineStart(lo+(hi-lo)/2, lo)
		if data[start] == '^' && start > lo {
			start = lineStart(start-1, lo)
		}
		end := lineEnd(start)
		line := bytes.TrimSuffix(data[start:end], []byte("\n"))
		if end < len(data) && data[end] == '^' {
			end = lineEnd(end)
		}
		if len(line) < hexLen+1 || line[0] == '^' {
			return ZeroHash, false, fmt.Errorf("packed-refs: malformed line %q", line)
		}
		switch c := strings.Compare(string(line[hexLen+1:]), name); {
		case c == 0:
			return match(line)
		case c < 0:
			lo = end
		default:
			hi = start
		}
	}
	return ZeroHash, false, nil
}

// MainHead returns the commit the main worktree's HEAD names (the common
// HEAD of a bare repository), following one level of symbolic ref. ok is
// false on an unborn branch.
func (r *Repo) MainHead() (h Hash, ok bool, err error) {
	b, err := ReadRegular(filepath.Join(r.commonDir, "HEAD"), 64<<10)
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read HEAD: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if target, symbolic := strings.CutPrefix(s, "ref:"); symbolic {
		return r.ReadRef(strings.TrimSpace(target))
	}
	h, err = ParseHash(s)
	if err != nil {
		return ZeroHash, false, fmt.Errorf("HEAD: %w", err)
	}
	return h, true, nil
}

// looseRefMax is more than any loose ref file git or m1nd writes (a hash
// or "ref: " and a name, and a new line); readLooseRefQuick leaves a
// larger file to readLooseRef.
const looseRefMax = 256

// readLooseRefQuick is readLooseRef in three system calls and no
// allocation, for listing thousands of refs: open non-blocking (a FIFO
// never hangs it; reading one answers EAGAIN), one read, close.
func readLooseRefQuick(path string) (Hash, bool, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return readLooseRef(path) // the slow path names every error as before
	}
	var buf [looseRefMax]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 || n == len(buf) {
		return readLooseRef(path)
	}
	line := bytes.TrimSpace(buf[:n])
	if len(line) != 2*len(ZeroHash) {
		return readLooseRef(path)
	}
	var h Hash
	if _, err := hex.Decode(h[:], line); err != nil {
		return readLooseRef(path)
	}
	return h, true, nil
}

func readLooseRef(path string) (Hash, bool, error) {
	b, err := ReadRuntime(path, 64<<10) // never through a link: its error would quote the target
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		return ZeroHash, false, nil
	}
	if err != nil {
		return ZeroHash, false, fmt.Errorf("read ref %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, "ref:") {
		return ZeroHash, false, fmt.Errorf("ref %s: %w", path, ErrSymbolicRef)
	}
	h, err := ParseHash(s)
	if err != nil {
		return ZeroHash, false, fmt.Errorf("ref %s: %w", path, err)
	}
	return h, true, nil
}

func (r *Repo) readPackedRefs() (map[string]Hash, error) {
	refs, _, err := r.readPackedFile("packed-refs")
	return refs, err
}

// PackedRefsLock reads packed-refs.lock, the packed-refs a running git is
// writing (it writes the whole new file into the lock before the rename);
// ok is false when no git holds the lock. A lock read mid-write may hold
// part of the file.
func (r *Repo) PackedRefsLock() (refs map[string]Hash, ok bool, err error) {
	return r.readPackedFile("packed-refs.lock")
}

func (r *Repo) readPackedFile(file string) (map[string]Hash, bool, error) {
	refs, err := r.parsePacked(file)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Hash{}, false, nil
	}
	return refs, err == nil, err
}

func (r *Repo) parsePacked(file string) (map[string]Hash, error) {
	f, err := OpenRegular(filepath.Join(r.commonDir, file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	out := map[string]Hash{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		hexPart, name, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("packed-refs: malformed line %q", line)
		}
		h, err := ParseHash(string(hexPart))
		if err != nil {
			return nil, fmt.Errorf("packed-refs: %w", err)
		}
		out[string(name)] = h
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	return out, nil
}

// ErrSymbolicRef is wrapped when a ref m1nd reads is a symbolic ref: m1nd
// refs never are, and only plain git can make one.
var ErrSymbolicRef = errors.New("a symbolic ref, which m1nd refs never are")

// ListRefs returns every ref whose name starts with prefix (which should end
// in "/"), loose refs overriding packed ones, sorted by name. Loose files are
// read concurrently: with thousands of missions this is the heads hot path.
// Symbolic refs are left out (ListRefsAndSymbolic names them).
func (r *Repo) ListRefs(prefix string) ([]Ref, error) {
	refs, _, _, err := r.listRefs(prefix)
	return refs, err
}

// ListRefsAndSymbolic is ListRefs and, from the same walk, the names of
// the symbolic refs under prefix (which m1nd never writes, and plain git
// can): one read of every loose ref for a caller that wants both.
func (r *Repo) ListRefsAndSymbolic(prefix string) (refs []Ref, odd []OddRef, err error) {
	refs, symbolic, odd, err := r.listRefs(prefix)
	for _, name := range symbolic {
		odd = append(odd, OddRef{Name: name, Kind: "symbolic ref"})
	}
	slices.SortFunc(odd, func(a, b OddRef) int { return strings.Compare(a.Name, b.Name) })
	return refs, odd, err
}

func (r *Repo) listRefs(prefix string) ([]Ref, []string, []OddRef, error) {
	names, odd, err := r.looseRefNames(prefix)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	loose := make([]Ref, len(names))
	errs := make([]error, len(names))
	symbolic := make([]bool, len(names))
	Parallel(len(names), func(i int) {
		h, ok, err := readLooseRefQuick(filepath.Join(r.commonDir, filepath.FromSlash(names[i])))
		if errors.Is(err, ErrSymbolicRef) {
			symbolic[i], err = true, nil
		}
		if err == nil && ok {
			loose[i] = Ref{Name: names[i], Hash: h}
		}
		errs[i] = err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	var symbolicNames []string
	for i, sym := range symbolic {
		if sym {
			symbolicNames = append(symbolicNames, names[i])
		}
	}
	packed, err := r.packedRefsUnder(prefix)
	if err != nil {
		return nil, nil, nil, err
	}
	// Loose refs override packed ones, and a loose symbolic ref hides a
	// packed value, as in git. Both lists are sorted: one merge.
	shadow := make(map[string]bool, len(names))
	for _, name := range symbolicNames {
		shadow[name] = true
	}
	for _, o := range odd { // an odd entry hides a packed value, as a loose ref would
		shadow[o.Name] = true
	}
	// A name left empty was symbolic, or pruned between the walk and the
	// read (then the packed value is the ref's).
	loose = slices.DeleteFunc(loose, func(ref Ref) bool { return ref.Name == "" })
	for _, ref := range loose {
		shadow[ref.Name] = true
	}
	slices.SortFunc(loose, func(a, b Ref) int { return strings.Compare(a.Name, b.Name) })
	out := make([]Ref, 0, len(packed)+len(loose))
	i := 0
	for _, p := range packed {
		for i < len(loose) && loose[i].Name < p.Name {
			out = append(out, loose[i])
			i++
		}
		if !shadow[p.Name] {
			out = append(out, p)
		}
	}
	out = append(out, loose[i:]...)
	return out, symbolicNames, odd, nil
}

// looseRefNames walks prefix's folder for the names of its loose refs.
func (r *Repo) looseRefNames(prefix string) ([]string, []OddRef, error) {
	var names []string
	var odd []OddRef
	var walk func(dir, name string) error
	walk = func(dir, name string) error {
		// Unsorted (os.ReadDir sorts): the caller sorts what it keeps.
		d, err := os.Open(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		entries, err := d.ReadDir(-1)
		d.Close()
		if errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			child := name + "/" + e.Name()
			if e.IsDir() {
				if err := walk(filepath.Join(dir, e.Name()), child); err != nil {
					return err
				}
				continue
			}
			if strings.HasSuffix(child, ".lock") || !ValidRefName(child) {
				continue
			}
			// A FIFO, a socket, a device or a symbolic link where a ref
			// should be is never read (it could block, or point anywhere):
			// it is named, for verify to report.
			if t := e.Type(); !t.IsRegular() {
				odd = append(odd, OddRef{Name: child, Kind: KindOf(t)})
				continue
			}
			names = append(names, child)
		}
		return nil
	}
	root := strings.TrimSuffix(prefix, "/")
	err := walk(filepath.Join(r.commonDir, filepath.FromSlash(root)), root)
	return names, odd, err
}

// OddRef is a name under a ref folder that is no plain ref: a symbolic ref
// (git symbolic-ref), or a file that is not a regular one.
type OddRef struct {
	Name string
	Kind string // "symbolic ref", "symbolic link", "named pipe (FIFO)", …
}

// packedRefsUnder returns the refs packed-refs holds under prefix, sorted
// by name, without a map of every packed ref (packed-refs holds the whole
// repository's refs: 7.7 MB at 100,000 missions).
func (r *Repo) packedRefsUnder(prefix string) ([]Ref, error) {
	data, err := ReadRegular(filepath.Join(r.commonDir, "packed-refs"), -1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	hexLen := 2 * len(ZeroHash)
	var out []Ref
	sorted := true
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		if len(line) < hexLen+2 || line[hexLen] != ' ' {
			return nil, fmt.Errorf("packed-refs: malformed line %q", line)
		}
		name := line[hexLen+1:]
		if !bytes.HasPrefix(name, []byte(prefix)) {
			continue
		}
		h, err := ParseHash(string(line[:hexLen]))
		if err != nil {
			return nil, fmt.Errorf("packed-refs: %w", err)
		}
		if n := len(out); n > 0 && out[n-1].Name >= string(name) {
			sorted = false
		}
		out = append(out, Ref{Name: string(name), Hash: h})
	}
	if !sorted { // git writes it sorted; a hand-made one may not be
		slices.SortFunc(out, func(a, b Ref) int { return strings.Compare(a.Name, b.Name) })
		out = slices.CompactFunc(out, func(a, b Ref) bool { return a.Name == b.Name })
	}
	return out, nil
}

// Workers is how many goroutines parallel reads use: the machines m1nd runs
// on have few cores, and file reads stop scaling soon after.
const Workers = 4

// Parallel runs fn for every index in [0, n) on up to Workers goroutines
// and returns when all are done; small n runs inline. Callers use it to
// read many refs or objects at once.
func Parallel(n int, fn func(i int)) {
	if n < 64 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := int(next.Add(1) - 1); j < n; j = int(next.Add(1) - 1) {
				fn(j)
			}
		}()
	}
	wg.Wait()
}

// RefsStamp summarises, cheaply, the state of every ref under prefix: the
// modification times of the folders that hold its loose refs and of
// packed-refs. A ref written by m1nd or by git (a lock renamed into place,
// a packing) changes the stamp's Key; an unchanged Key means no ref under
// the prefix moved (see FolderStamp for the tick this holds within), so a
// watcher lists refs only when it differs.
func (r *Repo) RefsStamp(prefix string) (FolderStamp, error) {
	paths := []string{}
	root := r.prefixDir(prefix)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return FolderStamp{}, fmt.Errorf("stamp %s: %w", prefix, err)
	}
	paths = append(paths, filepath.Join(r.commonDir, "packed-refs"))
	st, err := StampFolders(paths...) // a folder gone meanwhile is stamped missing
	if err != nil {
		return FolderStamp{}, fmt.Errorf("stamp %s: %w", prefix, err)
	}
	return st, nil
}

// PackedRefs returns every ref in packed-refs with its value. The file is
// parsed whole, so a caller that looks up many refs (a git hook judging a
// transaction) reads it once and keeps the map.
func (r *Repo) PackedRefs() (map[string]Hash, error) {
	return r.readPackedRefs()
}

// LooseRef returns name's value in its loose file, if there is one.
func (r *Repo) LooseRef(name string) (Hash, bool, error) {
	if !ValidRefName(name) {
		return ZeroHash, false, fmt.Errorf("read ref: invalid ref name %q", name)
	}
	return readLooseRef(filepath.Join(r.commonDir, filepath.FromSlash(name)))
}

// FolderStamp summarises, with two stats however many refs there are, the
// refs that sit directly in prefix's folder (mission refs: a mission id
// holds no "/") and packed-refs. Every write of such a ref, by m1nd or by
// git, renames a file into that folder, deletes one from it, or replaces
// packed-refs, so a different Key means refs moved.
//
// The converse needs care: a folder's modification time ticks with the
// kernel's coarse clock (milliseconds; whole seconds on some file
// systems), so two writes within one tick leave one Key. Newest is the
// latest modification time in the stamp; a caller that keeps something
// built from the refs keyed by Key trusts it only when Newest is older, by
// more than a tick, than the moment it began reading (git's racy-index
// rule).
type FolderStamp struct {
	Key    string
	Newest time.Time
	// Coarse is true when a time in the stamp falls on a whole second:
	// the file system keeps seconds only (or the clock ticked exactly
	// then), so a tick may be a second or two long.
	Coarse bool
}

// prefixDir is the folder of the loose refs under prefix.
func (r *Repo) prefixDir(prefix string) string {
	return filepath.Join(r.commonDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
}

// RefsFolderStamp returns the FolderStamp of the refs directly under prefix.
func (r *Repo) RefsFolderStamp(prefix string) (FolderStamp, error) {
	st, err := StampFolders(
		r.prefixDir(prefix),
		filepath.Join(r.commonDir, "packed-refs"),
	)
	if err != nil {
		return FolderStamp{}, fmt.Errorf("stamp %s: %w", prefix, err)
	}
	return st, nil
}

// StampFolders returns the FolderStamp of paths (folders whose entries are
// written by rename, or files replaced whole): one stat each, a missing
// path stamped as missing.
func StampFolders(paths ...string) (FolderStamp, error) {
	var st FolderStamp
	var b strings.Builder
	for _, path := range paths {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			b.WriteString("-\n")
			continue
		}
		if err != nil {
			return FolderStamp{}, err
		}
		fmt.Fprintf(&b, "%d %d\n", fi.ModTime().UnixNano(), fi.Size())
		st.add(fi.ModTime())
	}
	st.Key = b.String()
	return st, nil
}

// Settle is how long the paths of a stamp must have been still before a
// Key read at a moment stands for what was read then: longer than a
// modification-time tick of the file system (Linux's coarse clock ticks
// every 1-10 ms; SettleCoarse where times fall on whole seconds).
const (
	Settle       = 50 * time.Millisecond
	SettleCoarse = 2 * time.Second
)

// SettledBefore reports whether every path of st was last written longer
// than a tick before start, so that what was read from start on is all
// that an equal Key can stand for: a write in the same tick as the read
// would leave the Key unchanged (git's racy-index rule).
func (st FolderStamp) SettledBefore(start time.Time) bool {
	settle := Settle
	if st.Coarse {
		settle = SettleCoarse
	}
	return st.Newest.Before(start.Add(-settle))
}

// Join is the stamp of both st's and o's paths.
func (st FolderStamp) Join(o FolderStamp) FolderStamp {
	st.Key += o.Key
	st.Coarse = st.Coarse || o.Coarse
	if o.Newest.After(st.Newest) {
		st.Newest = o.Newest
	}
	return st
}

func (st *FolderStamp) add(t time.Time) {
	if t.After(st.Newest) {
		st.Newest = t
	}
	st.Coarse = st.Coarse || t.Nanosecond() == 0
}
