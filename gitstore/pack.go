package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// m1nd's own pack reader. After `git gc` nearly every object lives in a
// pack, and reading them through go-git's storage was most of the CPU of a
// whole-repository read (a seek, a new zlib reader and copies per object),
// all behind r.mu because that storage is not safe for concurrent use: the
// parallel readers (laws.Verify, chain heads) queued on one lock. This
// reader maps the .idx and .pack files read-only and decodes entries from
// the mapping; its read path takes no lock, so Parallel's workers read
// packs side by side.
//
// It handles what git writes by default: SHA-1, index version 2, whole and
// OFS/REF-delta entries. Anything else (an index of version 1, a SHA-256
// repository, objects/info/alternates, a pack it cannot open or decode)
// falls back to git's own reader (a `git cat-file --batch` behind r.mu),
// so nothing that read before stops reading.

// packFile is one mapped pack and its index; immutable once opened.
type packFile struct {
	id   uint64 // distinct per opened pack: the base cache's key
	path string // the .idx path: how a rescan recognises it
	idx  packIndex
	data []byte // the mapped .pack
	maps [][]byte
}

// packSet is the list of packs one scan found. It is replaced, never
// changed, so readers use it without a lock.
type packSet struct {
	packs    []*packFile
	fallback string // non-empty: git reads every packed object, and why
}

// packReader holds the repository's current packSet and the base cache.
type packReader struct {
	set      atomic.Pointer[packSet]
	inflight atomic.Int64 // reads using a set's mappings now
	closed   atomic.Bool
	mu       sync.Mutex  // scans and Close only; never taken on the read path
	retired  []*packFile // dropped by a rescan, unmapped once no read can use them
	nextID   uint64
	cache    baseCache
	// fallbacks counts reads git answered (tests check the reader's share).
	fallbacks atomic.Int64
}

// errPackMiss means no pack of the current set holds the object.
var errPackMiss = errors.New("not in any pack")

// errPackFallback means the reader leaves this repository to git.
var errPackFallback = errors.New("packs read by git")

// readPack reads h from the packs, scanning them on first use. It returns
// errPackMiss when no pack holds h (the caller may rescan), errPackFallback
// when git must answer, and a wrapped error for a pack that does not
// decode.
func (r *Repo) readPack(h Hash) (ObjectType, []byte, error) {
	pr := &r.packs
	pr.inflight.Add(1)
	defer pr.inflight.Add(-1)
	if pr.closed.Load() {
		return "", nil, errPackFallback
	}
	set := pr.set.Load()
	if set == nil {
		// The first packed read scans. The scan waits for no read, so
		// holding inflight meanwhile is fine.
		set = r.scanPacks(false)
	}
	if set.fallback != "" {
		return "", nil, errPackFallback
	}
	for _, p := range set.packs {
		off, ok, err := p.idx.find(h)
		if err != nil {
			return "", nil, fmt.Errorf("read %s from %s: %w", h, filepath.Base(p.path), err)
		}
		if ok {
			t, data, err := r.readPackedAt(set, p, off)
			if err != nil {
				return "", nil, fmt.Errorf("read %s from %s at %d: %w", h, filepath.Base(p.path), off, err)
			}
			return t, data, nil
		}
	}
	return "", nil, errPackMiss
}

// rescanPacks looks at objects/pack again (after a miss: someone may have
// run git gc or git repack behind our back).
func (r *Repo) rescanPacks() { r.scanPacks(true) }

// scanPacks lists the packs and installs a new set, reusing the packs
// already mapped. With again false it only fills an empty set (another
// goroutine may have scanned first).
func (r *Repo) scanPacks(again bool) *packSet {
	pr := &r.packs
	pr.mu.Lock()
	defer pr.mu.Unlock()
	old := pr.set.Load()
	if pr.closed.Load() {
		return &packSet{fallback: "repository closed"}
	}
	if old != nil && !again {
		return old
	}
	set := r.listPacks(old)
	pr.set.Store(set)
	if old != nil {
		keep := make(map[*packFile]bool, len(set.packs))
		for _, p := range set.packs {
			keep[p] = true
		}
		for _, p := range old.packs {
			if !keep[p] {
				pr.retired = append(pr.retired, p)
			}
		}
	}
	// A pack dropped from the set (gc deleted it) stays mapped while a
	// read may still use it: reads that start after the Store above see
	// the new set, so once no read is in flight none can hold a retired
	// pack. Busy readers defer the unmap to a later scan or to Close.
	if len(pr.retired) > 0 && pr.inflight.Load() == 0 {
		for _, p := range pr.retired {
			p.unmap()
		}
		pr.retired = nil
	}
	return set
}

// listPacks builds a set from objects/pack/*.idx under the common dir,
// where every worktree's objects live.
func (r *Repo) listPacks(old *packSet) *packSet {
	objects := filepath.Join(r.commonDir, "objects")
	set := &packSet{}
	if _, err := os.Stat(filepath.Join(objects, "info", "alternates")); err == nil {
		set.fallback = "objects/info/alternates"
		return set
	}
	if format, ok := r.ConfigValue("extensions", "objectformat"); ok && !strings.EqualFold(format, "sha1") {
		set.fallback = "object format " + format
		return set
	}
	dir := filepath.Join(objects, "pack")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return set
	}
	if err != nil {
		set.fallback = err.Error()
		return set
	}
	reuse := map[string]*packFile{}
	if old != nil {
		for _, p := range old.packs {
			reuse[p.path] = p
		}
	}
	type found struct {
		p     *packFile
		mtime time.Time
	}
	var list []found
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".idx") || !strings.HasPrefix(name, "pack-") {
			continue
		}
		idxPath := filepath.Join(dir, name)
		var mtime time.Time
		if info, err := e.Info(); err == nil {
			mtime = info.ModTime()
		}
		// Packs are named by their contents' checksum: the same name is
		// the same objects.
		if p, ok := reuse[idxPath]; ok {
			list = append(list, found{p, mtime})
			continue
		}
		r.packs.nextID++
		p, err := openPack(r.packs.nextID, idxPath, strings.TrimSuffix(idxPath, ".idx")+".pack")
		if errors.Is(err, fs.ErrNotExist) {
			continue // being deleted by a gc right now
		}
		if err != nil {
			set.fallback = err.Error()
			continue
		}
		list = append(list, found{p, mtime})
	}
	// Newest first: after a gc the newest pack holds almost everything.
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].mtime.After(list[j-1].mtime); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	for _, f := range list {
		set.packs = append(set.packs, f.p)
	}
	return set
}

// openPack maps a pack and its index and checks that they belong together.
func openPack(id uint64, idxPath, packPath string) (*packFile, error) {
	p := &packFile{id: id, path: idxPath}
	idx, err := mapFile(idxPath)
	if err != nil {
		return nil, err
	}
	p.maps = append(p.maps, idx)
	data, err := mapFile(packPath)
	if err != nil {
		p.unmap()
		return nil, err
	}
	p.maps = append(p.maps, data)
	if err := p.init(idx, data); err != nil {
		p.unmap()
		return nil, fmt.Errorf("%s: %w", filepath.Base(idxPath), err)
	}
	return p, nil
}

// init checks a pack's framing against its index; the mapped or in-memory
// bytes are then read without further whole-file checks.
func (p *packFile) init(idx, data []byte) error {
	ix, err := parseIdx(idx)
	if err != nil {
		return err
	}
	if len(data) < packHeaderLen+packTrailer || string(data[:4]) != "PACK" {
		return errors.New("pack: bad header")
	}
	if v := uint32(data[4])<<24 | uint32(data[5])<<16 | uint32(data[6])<<8 | uint32(data[7]); v != 2 && v != 3 {
		return fmt.Errorf("pack version %d: %w", v, errPackUnsupported)
	}
	if n := uint32(data[8])<<24 | uint32(data[9])<<16 | uint32(data[10])<<8 | uint32(data[11]); n != ix.n {
		return fmt.Errorf("pack holds %d objects, its index %d", n, ix.n)
	}
	if !bytes.Equal(ix.trail[:20], data[len(data)-packTrailer:]) {
		return errors.New("pack checksum differs from its index's")
	}
	p.idx, p.data = ix, data
	return nil
}

// mapFile maps a whole file read-only. The mapping outlives the file's
// unlink (a gc deleting the pack), and git never rewrites a pack in place.
func mapFile(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("map %s: size %d", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return b, nil
}

func (p *packFile) unmap() {
	for _, m := range p.maps {
		syscall.Munmap(m)
	}
	p.maps, p.data, p.idx = nil, nil, packIndex{}
}

// closePacks unmaps every pack once no read is using them. Reads that
// start afterwards go to git. It waits for reads in flight without
// holding pr.mu, which a read's first scan takes.
func (r *Repo) closePacks() {
	pr := &r.packs
	pr.closed.Store(true)
	for pr.inflight.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if set := pr.set.Load(); set != nil {
		for _, p := range set.packs {
			p.unmap()
		}
	}
	for _, p := range pr.retired {
		p.unmap()
	}
	pr.retired = nil
	pr.set.Store(nil)
}

// deltaLink is one delta on the way from the wanted object to its base.
type deltaLink struct {
	p    *packFile
	off  uint64 // the entry's offset (its cache key)
	data uint64 // where its compressed delta starts
	size uint64 // the delta's inflated size
}

var linkPool = sync.Pool{New: func() any { s := make([]deltaLink, 0, 64); return &s }}

// readPackedAt decodes the entry at off in p. Deltas are resolved without
// recursion: walk down the chain (OFS_DELTA to an earlier offset, REF_DELTA
// by name in this pack, another pack, or a loose object) until a whole
// object or a cached base, then apply the deltas back up. The walk stops
// after maxDeltaChain links, so a looping or hostile chain is an error.
func (r *Repo) readPackedAt(set *packSet, p *packFile, off uint64) (ObjectType, []byte, error) {
	lp := linkPool.Get().(*[]deltaLink)
	links := (*lp)[:0]
	defer func() { *lp = links[:0]; linkPool.Put(lp) }()
	// cached: base is shared with the cache: never hand it out.
	typ, base, cached, err := r.walkChain(set, p, off, &links)
	if err != nil {
		return "", nil, err
	}
	if len(links) == 0 && cached {
		return typ, bytes.Clone(base), nil
	}
	base, err = r.applyDeltas(links, typ, base)
	if err != nil {
		return "", nil, err
	}
	return typ, base, nil
}

// walkChain is the way down of readPackedAt. It appends each delta it
// passes to links and stops at the base: a whole object, a cached one, or
// a loose one. The links go through a pointer so the pooled slice keeps
// whatever capacity the walk grew, even when it fails.
func (r *Repo) walkChain(set *packSet, p *packFile, off uint64, links *[]deltaLink) (ObjectType, []byte, bool, error) {
	for {
		if len(*links) > maxDeltaChain {
			return "", nil, false, fmt.Errorf("delta chain longer than %d", maxDeltaChain)
		}
		if t, data, ok := r.packs.cache.get(p, off); ok {
			return t, data, true, nil
		}
		end := uint64(len(p.data)) - packTrailer
		if off < packHeaderLen || off >= end {
			return "", nil, false, fmt.Errorf("entry offset %d outside the pack", off)
		}
		kind, size, n, err := parseEntryHeader(p.data[off:end])
		if err != nil {
			return "", nil, false, fmt.Errorf("entry at %d: %w", off, err)
		}
		at := off + uint64(n)
		switch kind {
		case packCommit, packTree, packBlob, packTag:
			typ := packObjectTypes[kind]
			base, err := inflateWhole(p, off, at, end, size)
			if err != nil {
				return "", nil, false, err
			}
			if len(*links) > 0 {
				r.packs.cache.put(p, off, typ, base)
			}
			return typ, base, false, nil
		case packOfsDelta:
			back, m, err := parseOfsDelta(p.data[at:end])
			if err != nil {
				return "", nil, false, fmt.Errorf("entry at %d: %w", off, err)
			}
			if back == 0 || back > off-packHeaderLen {
				return "", nil, false, fmt.Errorf("entry at %d: delta base %d bytes back is outside the pack", off, back)
			}
			*links = append(*links, deltaLink{p, off, at + uint64(m), size})
			off -= back
		case packRefDelta:
			if end-at < 20 {
				return "", nil, false, fmt.Errorf("entry at %d: truncated base name", off)
			}
			var name Hash
			copy(name[:], p.data[at:at+20])
			*links = append(*links, deltaLink{p, off, at + 20, size})
			bp, boff, ok, err := findInSet(set, p, name)
			if err != nil {
				return "", nil, false, fmt.Errorf("entry at %d: base %s: %w", off, name, err)
			}
			if ok {
				p, off = bp, boff
				continue
			}
			// A thin pack's base outside the packs: loose.
			t, data, err := r.readLoose(name)
			if err != nil {
				return "", nil, false, fmt.Errorf("entry at %d: base %s: %w", off, name, err)
			}
			return t, data, false, nil
		default:
			return "", nil, false, fmt.Errorf("entry at %d: invalid type %d", off, kind)
		}
	}
}

// inflateWhole inflates a whole (non-delta) entry. The declared size is
// checked against what the pack can hold before anything is allocated.
func inflateWhole(p *packFile, off, at, end, size uint64) ([]byte, error) {
	if !inflateSizeOK(size, int(end-at)) {
		return nil, fmt.Errorf("entry at %d: declared size %d cannot fit", off, size)
	}
	base := make([]byte, size)
	if err := inflate(base, p.data[at:end]); err != nil {
		return nil, fmt.Errorf("entry at %d: %w", off, err)
	}
	return base, nil
}

// applyDeltas is the way back up of readPackedAt: it applies links to base
// from the innermost delta out. Each result but the last goes in the cache,
// as chains often share their lower links.
func (r *Repo) applyDeltas(links []deltaLink, typ ObjectType, base []byte) ([]byte, error) {
	for i := len(links) - 1; i >= 0; i-- {
		l := links[i]
		end := uint64(len(l.p.data)) - packTrailer
		if !inflateSizeOK(l.size, int(end-l.data)) {
			return nil, fmt.Errorf("delta at %d: declared size %d cannot fit", l.off, l.size)
		}
		buf := deltaBuf(l.size)
		err := inflate(*buf, l.p.data[l.data:end])
		if err == nil {
			base, err = applyDelta(base, *buf)
		}
		putDeltaBuf(buf)
		if err != nil {
			return nil, fmt.Errorf("delta at %d: %w", l.off, err)
		}
		if i > 0 {
			r.packs.cache.put(l.p, l.off, typ, base)
		}
	}
	return base, nil
}

// findInSet finds a REF_DELTA base: in its own pack first, then any other.
func findInSet(set *packSet, p *packFile, h Hash) (*packFile, uint64, bool, error) {
	if off, ok, err := p.idx.find(h); ok || err != nil {
		return p, off, ok, err
	}
	for _, q := range set.packs {
		if q == p {
			continue
		}
		if off, ok, err := q.idx.find(h); ok || err != nil {
			return q, off, ok, err
		}
	}
	return nil, 0, false, nil
}

var deltaBufs sync.Pool

// deltaBuf is scratch for one inflated delta, reused across reads.
func deltaBuf(size uint64) *[]byte {
	b, _ := deltaBufs.Get().(*[]byte)
	if b == nil {
		b = new([]byte)
	}
	if uint64(cap(*b)) < size {
		*b = make([]byte, size)
	}
	*b = (*b)[:size]
	return b
}

func putDeltaBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		deltaBufs.Put(b)
	}
}

// baseCache keeps recently resolved delta bases, as git's delta base cache
// does: without it every read of an object deep in a chain (git packs 50
// deep by default) inflates the whole chain again. It is direct-mapped over
// atomic pointers to immutable entries, so readers share it without a
// lock; a collision simply replaces the older entry. Its 64 KB of slots
// are made on the first put: a call that reads no delta (most hot verbs)
// never touches them.
type baseCache struct {
	table atomic.Pointer[[baseCacheSlots]atomic.Pointer[baseEntry]]
	bytes atomic.Int64
}

const (
	baseCacheSlots  = 1 << 13
	baseCacheBudget = 16 << 20 // bytes of cached bases, roughly
	baseCacheMax    = 64 << 10 // larger bases are not kept
)

type baseEntry struct {
	p    *packFile
	off  uint64
	typ  ObjectType
	data []byte // never modified
}

func baseSlot(p *packFile, off uint64) uint64 {
	return ((p.id*0x9e3779b97f4a7c15 ^ off) * 0x9e3779b97f4a7c15) >> (64 - 13)
}

func (c *baseCache) get(p *packFile, off uint64) (ObjectType, []byte, bool) {
	t := c.table.Load()
	if t == nil {
		return "", nil, false
	}
	e := t[baseSlot(p, off)].Load()
	if e == nil || e.p != p || e.off != off {
		return "", nil, false
	}
	return e.typ, e.data, true
}

func (c *baseCache) put(p *packFile, off uint64, typ ObjectType, data []byte) {
	if len(data) > baseCacheMax {
		return
	}
	t := c.table.Load()
	if t == nil {
		c.table.CompareAndSwap(nil, new([baseCacheSlots]atomic.Pointer[baseEntry]))
		t = c.table.Load()
	}
	slot := &t[baseSlot(p, off)]
	grow := int64(len(data))
	if old := slot.Load(); old != nil {
		grow -= int64(len(old.data))
	}
	if grow > 0 && c.bytes.Load()+grow > baseCacheBudget {
		return
	}
	// Racing puts may misjudge the budget by a few entries; the swap's
	// own answer keeps the count exact.
	old := slot.Swap(&baseEntry{p, off, typ, data})
	n := int64(len(data))
	if old != nil {
		n -= int64(len(old.data))
	}
	c.bytes.Add(n)
}
