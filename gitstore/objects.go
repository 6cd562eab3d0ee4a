package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrObjectNotFound is returned when an object is neither loose nor in a pack.
var ErrObjectNotFound = errors.New("object not found")

// ObjectType names git's four object kinds.
type ObjectType string

// The object kinds m1nd reads and writes.
const (
	BlobObject   ObjectType = "blob"
	TreeObject   ObjectType = "tree"
	CommitObject ObjectType = "commit"
	TagObject    ObjectType = "tag"
)

// valid reports whether t is one of git's four object kinds.
func (t ObjectType) valid() bool {
	switch t {
	case BlobObject, TreeObject, CommitObject, TagObject:
		return true
	}
	return false
}

// HashObject is the name git gives an object of type t holding data: the
// SHA-1 of "<type> <size>\0" and data (git hash-object).
func HashObject(t ObjectType, data []byte) Hash {
	d := sha1.New()
	d.Write(objectHeader(t, len(data)))
	d.Write(data)
	var h Hash
	d.Sum(h[:0])
	return h
}

// objectHeader is what git puts before an object's bytes, in its name's
// hash and in its loose file: "<type> <size>\0".
func objectHeader(t ObjectType, size int) []byte {
	return fmt.Appendf(nil, "%s %d\x00", t, size)
}

// WriteObject stores data as an object of type t and returns its name. Loose
// objects are written to a temporary file and renamed into place, so a crash
// never leaves a torn object behind.
func (r *Repo) WriteObject(t ObjectType, data []byte) (Hash, error) {
	if !t.valid() {
		return ZeroHash, fmt.Errorf("unknown object type %q", t)
	}
	h := HashObject(t, data)
	if _, err := os.Stat(r.loosePath(h)); err == nil {
		return h, nil
	}
	if err := r.writeLoose(h, t, data); err != nil {
		return ZeroHash, fmt.Errorf("write %s %s: %w", t, h, err)
	}
	return h, nil
}

// writeLoose writes a loose object as git does: a zlib stream of "<type>
// <size>\0<data>" (stored when it fits a disk block, else compressed for
// speed) into a temporary file in its folder, created read-only
// (0444 less the umask, with a shared repository's bits), then linked into
// place; an object already there wins. A crash leaves at most a temporary
// file git's gc removes.
func (r *Repo) writeLoose(h Hash, t ObjectType, data []byte) error {
	path := r.loosePath(h)
	dir := filepath.Dir(path)
	if err := r.mkdirShared(dir); err != nil {
		return err
	}
	var tmp *os.File
	var tmpPath string
	for i := 0; ; i++ {
		tmpPath = filepath.Join(dir, fmt.Sprintf("tmp_obj_%d_%d", os.Getpid(), rand.Uint64()))
		f, err := os.OpenFile(tmpPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		if err == nil {
			tmp = f
			break
		}
		if i == 10 {
			return err
		}
		// git gc removes an object folder it emptied; make it again, as
		// git does when it writes an object.
		if errors.Is(err, fs.ErrNotExist) {
			if err := r.mkdirShared(dir); err != nil {
				return err
			}
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	defer os.Remove(tmpPath)
	header := objectHeader(t, len(data))
	var err error
	if len(header)+len(data) <= storedMax {
		err = writeStored(tmp, header, data)
	} else {
		err = writeDeflated(tmp, header, data)
	}
	// No fsync, as git (core.fsync leaves loose objects out by default): a
	// killed process loses nothing the kernel holds, and a post stays one
	// fsync (its ref's) long.
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.adjustShared(tmpPath)
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmpPath, path); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: rename, as git falls back to.
		if rerr := os.Rename(tmpPath, path); rerr != nil {
			return err
		}
	}
	return nil
}

// WriteBlob stores data as a blob.
func (r *Repo) WriteBlob(data []byte) (Hash, error) { return r.WriteObject(BlobObject, data) }

// ReadObject returns an object's type and contents. It reads loose objects
// and packed ones (m1nd's pack reader, pack.go) directly, safe from many
// goroutines without a lock; git itself (readPacked), behind r.mu, reads
// the packs the reader leaves to it. A miss rescans the packs once: someone may have run
// `git gc` or `git repack` since the last look.
func (r *Repo) ReadObject(h Hash) (ObjectType, []byte, error) {
	// After a gc most objects are packed: once a read was answered by a
	// pack, ask the packs first and spare the failing open of a loose file.
	if r.packFirst.Load() {
		t, data, err := r.readFromPacks(h)
		if err == nil {
			return t, data, nil
		}
	}
	t, data, err := r.readLoose(h)
	if !errors.Is(err, os.ErrNotExist) {
		r.packFirst.Store(false)
		return t, data, err
	}
	t, data, err = r.readFromPacks(h)
	if err == nil {
		r.packFirst.Store(true)
	}
	if errors.Is(err, errPackMiss) {
		r.rescanPacks()
		t, data, err = r.readFromPacks(h)
	}
	if errors.Is(err, errPackMiss) {
		// The object may have been loosened (or written) meanwhile.
		if t, data, err := r.readLoose(h); err == nil {
			return t, data, nil
		}
		return "", nil, fmt.Errorf("read %s: %w", h, ErrObjectNotFound)
	}
	return t, data, err
}

// readFromPacks asks m1nd's pack reader, then git itself (readPacked)
// where the reader leaves the packs to git or could not decode an entry
// (git's answer wins when it has one: nothing that read before stops
// reading). A miss is errPackMiss.
func (r *Repo) readFromPacks(h Hash) (ObjectType, []byte, error) {
	t, data, err := r.readPack(h)
	switch {
	case err == nil:
		return t, data, nil
	case errors.Is(err, errPackMiss):
		return "", nil, err
	}
	gt, gdata, gerr := r.readPacked(h)
	if gerr == nil {
		r.packs.fallbacks.Add(1)
		return gt, gdata, nil
	}
	if errors.Is(gerr, ErrObjectNotFound) {
		gerr = errPackMiss
	}
	if errors.Is(err, errPackFallback) {
		return "", nil, gerr
	}
	return "", nil, err
}

// ReadTyped reads an object and checks its type.
func (r *Repo) ReadTyped(want ObjectType, h Hash) ([]byte, error) { return readTyped(r, want, h) }

// objectReader reads raw objects: a Repo, or a CatFile in a git hook. The
// typed readers below are written once over it.
type objectReader interface {
	ReadObject(h Hash) (ObjectType, []byte, error)
}

func readTyped(r objectReader, want ObjectType, h Hash) ([]byte, error) {
	t, data, err := r.ReadObject(h)
	if err != nil {
		return nil, err
	}
	if t != want {
		return nil, fmt.Errorf("object %s is a %s, not a %s", h, t, want)
	}
	return data, nil
}

func readCommit(r objectReader, h Hash) (*Commit, error) {
	data, err := readTyped(r, CommitObject, h)
	if err != nil {
		return nil, err
	}
	c, err := ParseCommit(data)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return c, nil
}

func treeEntries(r objectReader, tree Hash) ([]TreeEntry, error) {
	data, err := readTyped(r, TreeObject, tree)
	if err != nil {
		return nil, err
	}
	entries, err := ParseTree(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", tree, err)
	}
	return entries, nil
}

// fileInTree finds name (a slash path) below tree.
func fileInTree(r objectReader, tree Hash, name string) ([]byte, error) {
	dir, base, nested := strings.Cut(name, "/")
	list, err := treeEntries(r, tree)
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		switch {
		case e.Name != dir:
		case nested && e.Mode == ModeTree:
			return fileInTree(r, e.Hash, base)
		case !nested && e.Mode != ModeTree:
			return readTyped(r, BlobObject, e.Hash)
		}
	}
	return nil, ErrNoSuchFile
}

// ReadBlob reads a blob's contents.
func (r *Repo) ReadBlob(h Hash) ([]byte, error) { return r.ReadTyped(BlobObject, h) }

func (r *Repo) loosePath(h Hash) string {
	hex := h.String()
	return filepath.Join(r.commonDir, "objects", hex[:2], hex[2:])
}

// looseBufs are the buffered readers loose objects are read through: a
// call reads a handful of objects, and each new 4 KB buffer is a fresh
// page to fault in.
var looseBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

var zlibPool sync.Pool

// zlibWriters are the loose-object compressors, reused across writes.
var zlibWriters sync.Pool

// storedMax is the largest loose object (header included) written
// uncompressed. One that fits a 4 KB file-system block takes that block
// compressed or not, and compressing it was most of a post's object cost:
// a fresh compressor's tables are hundreds of KB to allocate and touch.
const storedMax = 4096 - 64

// writeStored writes header and data as one zlib stream holding one
// stored (uncompressed) deflate block (RFC 1950; RFC 1951 §3.2.4), which
// git, like any zlib reader, inflates as any other. The two together must
// fit one block (64 KB).
func writeStored(w io.Writer, header, data []byte) error {
	n := len(header) + len(data)
	if n > 0xffff {
		return fmt.Errorf("a stored block holds at most 65535 bytes, not %d", n)
	}
	buf := make([]byte, 0, 2+5+n+4)
	buf = append(buf, 0x78, 0x01)                                       // deflate, 32 KB window, fastest level, no dictionary
	buf = append(buf, 0x01, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8)) // the final block, stored: LEN, then NLEN
	buf = append(buf, header...)
	buf = append(buf, data...)
	sum := adler32.New()
	sum.Write(header)
	sum.Write(data)
	buf = binary.BigEndian.AppendUint32(buf, sum.Sum32())
	_, err := w.Write(buf)
	return err
}

// writeDeflated writes header and data compressed for speed, as git
// compresses loose objects by default (core.looseCompression 1). A
// compressor is large, so they are reused.
func writeDeflated(w io.Writer, header, data []byte) error {
	zw, _ := zlibWriters.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(w, zlib.BestSpeed)
	} else {
		zw.Reset(w)
	}
	defer zlibWriters.Put(zw)
	if _, err := zw.Write(header); err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}

func (r *Repo) readLoose(h Hash) (ObjectType, []byte, error) {
	f, err := OpenRegular(r.loosePath(h))
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	br := looseBufs.Get().(*bufio.Reader)
	br.Reset(f)
	defer looseBufs.Put(br)
	var zr io.ReadCloser
	if pooled, ok := zlibPool.Get().(io.ReadCloser); ok {
		if err := pooled.(zlib.Resetter).Reset(br, nil); err != nil {
			return "", nil, fmt.Errorf("read loose object %s: %w", h, err)
		}
		zr = pooled
	} else if zr, err = zlib.NewReader(br); err != nil {
		return "", nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	defer zlibPool.Put(zr)
	raw, err := io.ReadAll(zr)
	if err != nil {
		return "", nil, fmt.Errorf("read loose object %s: %w", h, err)
	}
	nul := bytes.IndexByte(raw, 0)
	if nul < 0 {
		return "", nil, fmt.Errorf("loose object %s: no header", h)
	}
	typ, size, ok := strings.Cut(string(raw[:nul]), " ")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n != len(raw)-nul-1 {
		return "", nil, fmt.Errorf("loose object %s: bad header %q", h, raw[:nul])
	}
	return ObjectType(typ), raw[nul+1:], nil
}

// readPacked reads an object through one `git cat-file --batch` the
// repository keeps (started at the first such read, ended by Close): what
// m1nd's pack reader leaves to git (alternates, a version 1 index, a pack
// it could not decode) is read by git itself.
func (r *Repo) readPacked(h Hash) (ObjectType, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.catFile == nil {
		c, err := newCatFile(r.gitDir, []string{"GIT_DIR=" + r.gitDir})
		if err != nil {
			return "", nil, fmt.Errorf("read %s: %w", h, err)
		}
		r.catFile = c
	}
	t, data, err := r.catFile.ReadObject(h)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		// A broken pipe or a dead git: the next read starts another.
		r.catFile.Close()
		r.catFile = nil
	}
	return t, data, err
}

// Tree entry modes, as git spells them in a tree object.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeTree       = "40000"
)

// TreeEntry is one name in a tree.
type TreeEntry struct {
	Name string
	Mode string // ModeFile, ModeExecutable or ModeTree
	Hash Hash
}

// Objects reads typed objects: a Repo, or a CatFile in a git hook (whose
// pushed objects wait in git's quarantine, where only git can read them).
type Objects interface {
	ReadCommit(h Hash) (*Commit, error)
	ReadFileInTree(tree Hash, name string) ([]byte, error)
	TreeEntries(tree Hash) ([]TreeEntry, error)
	ReadBlob(h Hash) ([]byte, error)
}

// WriteTree stores a tree of entries, sorted the way git sorts them.
func (r *Repo) WriteTree(entries []TreeEntry) (Hash, error) {
	sorted := append([]TreeEntry(nil), entries...)
	key := func(e TreeEntry) string {
		if e.Mode == ModeTree {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	var buf bytes.Buffer
	for _, e := range sorted {
		if e.Name == "" || strings.ContainsAny(e.Name, "/\x00") {
			return ZeroHash, fmt.Errorf("write tree: bad entry name %q", e.Name)
		}
		buf.WriteString(e.Mode)
		buf.WriteByte(' ')
		buf.WriteString(e.Name)
		buf.WriteByte(0)
		buf.Write(e.Hash[:])
	}
	return r.WriteObject(TreeObject, buf.Bytes())
}

// ParseTree decodes a tree object's contents.
func ParseTree(data []byte) ([]TreeEntry, error) {
	var out []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+21 {
			return nil, errors.New("malformed tree")
		}
		var e TreeEntry
		e.Mode = string(data[:sp])
		e.Name = string(data[sp+1 : nul])
		copy(e.Hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// Signature is a commit's author or committer.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

func (s Signature) encode() string {
	_, off := s.When.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", s.Name, s.Email, s.When.Unix(), sign, off/3600, off%3600/60)
}

func parseSignature(s string) (Signature, error) {
	lt := strings.LastIndexByte(s, '<')
	gt := strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return Signature{}, fmt.Errorf("malformed signature %q", s)
	}
	sig := Signature{Name: strings.TrimSpace(s[:lt]), Email: s[lt+1 : gt]}
	fields := strings.Fields(s[gt+1:])
	if len(fields) == 2 {
		sec, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return sig, fmt.Errorf("malformed signature time %q", s)
		}
		tz, err := time.Parse("-0700", fields[1])
		loc := time.UTC
		if err == nil {
			_, off := tz.Zone()
			loc = time.FixedZone("", off)
		}
		sig.When = time.Unix(sec, 0).In(loc)
	}
	return sig, nil
}

// Commit is the part of a commit object m1nd reads and writes.
type Commit struct {
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// Encode returns the commit's raw object contents.
func (c *Commit) Encode() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", c.Tree)
	for _, p := range c.Parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", c.Author.encode(), c.Committer.encode(), c.Message)
	return []byte(b.String())
}

// ParseCommit decodes a commit object's contents. Headers m1nd does not use
// (gpgsig, encoding, mergetag) are skipped.
func ParseCommit(data []byte) (*Commit, error) {
	c := &Commit{}
	header, msg, ok := bytes.Cut(data, []byte("\n\n"))
	if !ok {
		header, msg = bytes.TrimSuffix(data, []byte("\n")), nil
	}
	c.Message = string(msg)
	sawTree := false
	for _, line := range strings.Split(string(header), "\n") {
		if strings.HasPrefix(line, " ") {
			continue // continuation of a multi-line header
		}
		key, val, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "tree":
			c.Tree, err = ParseHash(val)
			sawTree = true
		case "parent":
			var p Hash
			p, err = ParseHash(val)
			c.Parents = append(c.Parents, p)
		case "author":
			c.Author, err = parseSignature(val)
		case "committer":
			c.Committer, err = parseSignature(val)
		}
		if err != nil {
			return nil, fmt.Errorf("parse commit: %w", err)
		}
	}
	if !sawTree {
		return nil, errors.New("parse commit: no tree")
	}
	return c, nil
}

// WriteCommit stores a commit.
func (r *Repo) WriteCommit(c *Commit) (Hash, error) {
	return r.WriteObject(CommitObject, c.Encode())
}

// ReadCommit reads and decodes a commit.
func (r *Repo) ReadCommit(h Hash) (*Commit, error) { return readCommit(r, h) }

// ErrNoSuchFile is returned by ReadFileAt when the commit's tree lacks the name.
var ErrNoSuchFile = errors.New("no such file in tree")

// ReadFileAt returns the contents of the top-level file name in commit h's
// tree, like `git cat-file blob <h>:<name>`, together with the decoded commit.
func (r *Repo) ReadFileAt(h Hash, name string) ([]byte, *Commit, error) {
	c, err := r.ReadCommit(h)
	if err != nil {
		return nil, nil, err
	}
	blob, err := r.ReadFileInTree(c.Tree, name)
	if err != nil {
		return nil, c, fmt.Errorf("%s:%s: %w", h, name, err)
	}
	return blob, c, nil
}

// ReadFileInTree returns the contents of the file at name in tree; name may
// be a slash-separated path ("blocks/sb_x.json").
func (r *Repo) ReadFileInTree(tree Hash, name string) ([]byte, error) {
	return fileInTree(r, tree, name)
}

// TreeEntries reads and decodes one tree object.
func (r *Repo) TreeEntries(tree Hash) ([]TreeEntry, error) { return treeEntries(r, tree) }

// ListFiles returns the path of every file in commit h's tree, recursively
// and sorted, like `git ls-tree -r --name-only`. Symlinks and submodules
// count as files.
func (r *Repo) ListFiles(h Hash) ([]string, error) {
	c, err := r.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(tree Hash, prefix string) error
	walk = func(tree Hash, prefix string) error {
		entries, err := r.TreeEntries(tree)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Mode == ModeTree {
				if err := walk(e.Hash, prefix+e.Name+"/"); err != nil {
					return err
				}
				continue
			}
			out = append(out, prefix+e.Name)
		}
		return nil
	}
	if err := walk(c.Tree, ""); err != nil {
		return nil, fmt.Errorf("list files of %s: %w", h, err)
	}
	sort.Strings(out)
	return out, nil
}
