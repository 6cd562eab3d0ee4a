package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/m1nd/m1nd/testkit/gittest"
)

// letterJSON is a few hundred bytes of mission letter that differ slightly
// from one i to the next, so git stores most of them as deltas.
func letterJSON(i int) string {
	phases := []string{"judging", "executing", "gate", "review", "merge_wait"}
	return fmt.Sprintf(`{"schema":"m1nd-mission-letter-v0","mission_id":"msn_%012x","mission_seq":%d,"prev_letter_id":"%012x",`+
		`"block_id":"sb_bench_core","brain_ref":"bench","seat":"hand","runner_id":"runner-%d","capability":"hand-runner",`+
		`"phase":"%s","started_at":"2026-07-09T12:00:00Z","updated_at":"2026-07-09T12:%02d:%02dZ","tokens_total":%d}`+"\n",
		i%7, i+1, i*7919, i%3, phases[i%len(phases)], i/60%60, i%60, i*37)
}

// fastImport writes n letters as commits on a few mission refs (and a
// nested file now and then, and an annotated tag) with git fast-import.
func fastImport(t testing.TB, g *gittest.Repo, n int) {
	t.Helper()
	var s strings.Builder
	rng := rand.New(rand.NewPCG(7, 7))
	board := make([]string, 60)
	for i := range board {
		board[i] = fmt.Sprintf("%08x a line of the board, long enough to matter\n", rng.Uint32())
	}
	for i := 0; i < n; i++ {
		ref := fmt.Sprintf("refs/m1nd/missions/msn_%012x", i%7)
		msg := fmt.Sprintf("msn_%012x #%d judging sb_bench_core\n\nM1nd-Letter: %012x\n", i%7, i/7+1, i)
		fmt.Fprintf(&s, "commit %s\nmark :%d\ncommitter bench <bench@m1nd> %d +0000\ndata %d\n%s", ref, i+1, 1752062400+i, len(msg), msg)
		if i >= 7 {
			fmt.Fprintf(&s, "from :%d\n", i+1-7)
		}
		body := letterJSON(i)
		fmt.Fprintf(&s, "M 100644 inline letter.json\ndata %d\n%s\n", len(body), body)
		// A board of lines, one line rewritten per letter: git chains
		// its versions deep (each is nearest to the one before).
		board[rng.IntN(len(board))] = fmt.Sprintf("%08x a line of the board, long enough to matter\n", rng.Uint32())
		b := strings.Join(board, "")
		fmt.Fprintf(&s, "M 100644 inline board.txt\ndata %d\n%s\n", len(b), b)
		if i%5 == 0 {
			note := strings.Repeat(fmt.Sprintf("note %d of mission %d\n", i, i%7), 1+i%4)
			fmt.Fprintf(&s, "M 100644 inline notes/deep/n.txt\ndata %d\n%s\n", len(note), note)
		}
		s.WriteString("\n")
	}
	fmt.Fprintf(&s, "tag v1\nfrom :%d\ntagger bench <bench@m1nd> 1752062400 +0000\ndata 8\nrelease\n\n", n)
	g.GitStdin(s.String(), "fast-import", "--quiet")
}

// gitObjects is every object in the repository, as git reads it.
type gitObject struct {
	typ  ObjectType
	data []byte
}

func gitObjects(t testing.TB, g *gittest.Repo) map[Hash]gitObject {
	t.Helper()
	cmd := g.Command("cat-file", "--batch-all-objects", "--batch")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cat-file --batch: %v", err)
	}
	objs := map[Hash]gitObject{}
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file line %q", line)
		}
		h, err := ParseHash(f[0])
		if err != nil {
			t.Fatal(err)
		}
		size, _ := strconv.Atoi(f[2])
		data := make([]byte, size+1)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		objs[h] = gitObject{ObjectType(f[1]), data[:size]}
	}
	if len(objs) == 0 {
		t.Fatal("no objects")
	}
	return objs
}

// packStats reads git verify-pack: how many entries are deltas and the
// longest chain.
func packStats(t testing.TB, g *gittest.Repo) (deltas, depth int) {
	t.Helper()
	idxs, _ := filepath.Glob(filepath.Join(g.Dir, ".git", "objects", "pack", "*.idx"))
	for _, idx := range idxs {
		out := g.Git(append([]string{"verify-pack", "-v"}, idx)...)
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 7 && len(f[0]) == 40 {
				deltas++
				if d, _ := strconv.Atoi(f[5]); d > depth {
					depth = d
				}
			}
		}
	}
	return deltas, depth
}

// Every object git has reads back the same through ReadObject, and the
// pack reader itself (not the fallback to git) answers, across the pack
// shapes git writes.
func TestPackReaderAgreesWithGit(t *testing.T) {
	g := gittest.Init(t, "packs")
	fastImport(t, g, 400)
	tests := []struct {
		name      string
		git       [][]string
		minDepth  int
		refDeltas bool // the packs hold REF_DELTA entries, not OFS_DELTA
		fallsBack bool
	}{
		{name: "fast-import's pack"},
		{name: "gc", git: [][]string{{"gc", "-q", "--prune=now"}}},
		{name: "deep chains", git: [][]string{{"repack", "-adf", "-q", "--depth=50", "--window=250"}}, minDepth: 30},
		{name: "index v2 asked", git: [][]string{{"-c", "pack.indexVersion=2", "repack", "-adf", "-q"}}, minDepth: 2},
		{name: "ref deltas", git: [][]string{{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adf", "-q", "--depth=50"}}, minDepth: 2, refDeltas: true},
		{name: "several packs and loose", git: [][]string{{"repack", "-adf", "-q"}, {"commit", "-q", "--allow-empty", "-m", "loose"}, {"tag", "-a", "-m", "more", "v2"}, {"repack", "-d", "-q"}, {"commit", "-q", "--allow-empty", "-m", "loose again"}}, minDepth: 2},
		{name: "index v1 falls back", git: [][]string{{"-c", "pack.indexVersion=1", "repack", "-adf", "-q"}}, minDepth: 2, fallsBack: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range tt.git {
				g.Git(args...)
			}
			if deltas, depth := packStats(t, g); depth < tt.minDepth {
				t.Fatalf("want deltas at least %d deep, got %d deltas, depth %d", tt.minDepth, deltas, depth)
			}
			want := gitObjects(t, g)
			r, err := Open(g.Dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			packed := 0
			for h, w := range want {
				// A version 1 index is read by git itself (the fallback).
				typ, data, err := r.ReadObject(h)
				if err != nil || typ != w.typ || !bytes.Equal(data, w.data) {
					t.Fatalf("ReadObject %s: %s %q %v, git says %s %q", h, typ, data, err, w.typ, w.data)
				}
				typ, data, err = r.readPack(h)
				switch {
				case tt.fallsBack:
					if !errors.Is(err, errPackFallback) {
						t.Fatalf("readPack %s on an index v1: %v, want the fallback to git", h, err)
					}
				case errors.Is(err, errPackMiss):
					if _, _, lerr := r.readLoose(h); lerr != nil {
						t.Fatalf("%s is neither in a pack nor loose: %v", h, lerr)
					}
				case err != nil || typ != w.typ || !bytes.Equal(data, w.data):
					t.Fatalf("readPack %s: %s %q %v, git says %s %q", h, typ, data, err, w.typ, w.data)
				default:
					packed++
				}
			}
			if kinds := entryKinds(r); tt.minDepth > 0 && !tt.fallsBack {
				if tt.refDeltas && (kinds[packRefDelta] == 0 || kinds[packOfsDelta] > 0) || !tt.refDeltas && kinds[packOfsDelta] == 0 {
					t.Fatalf("pack entry kinds %v", kinds)
				}
			}
			fallbacks := r.packs.fallbacks.Load()
			if tt.fallsBack != (fallbacks > 0) || (!tt.fallsBack && packed < len(want)/2) {
				t.Fatalf("%d objects, %d read by the pack reader, %d by git", len(want), packed, fallbacks)
			}
		})
	}
}

// entryKinds counts the entry types in the reader's packs.
func entryKinds(r *Repo) map[byte]int {
	kinds := map[byte]int{}
	set := r.packs.set.Load()
	if set == nil {
		return kinds
	}
	for _, p := range set.packs {
		for i := uint32(0); i < p.idx.n; i++ {
			off, _, _ := p.idx.offset(i)
			if kind, _, _, err := parseEntryHeader(p.data[off:]); err == nil {
				kinds[kind]++
			}
		}
	}
	return kinds
}

// A repository borrowing objects through objects/info/alternates is left
// to git: its own packed objects read as before.
func TestPackReaderLeavesAlternatesToGoGit(t *testing.T) {
	src := gittest.Init(t, "src")
	fastImport(t, src, 20)
	dst := gittest.Init(t, "dst")
	alt := filepath.Join(dst.Dir, ".git", "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(filepath.Join(src.Dir, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst.CommitFiles("own", map[string]string{"a.json": "dst's own a", "b/c.json": "dst's own c"})
	dst.Git("gc", "-q")
	r, err := Open(dst.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	own := strings.Fields(dst.Git("rev-list", "--objects", "--no-object-names", "HEAD"))
	for _, name := range own {
		h, _ := ParseHash(name)
		want, _ := dst.TryGit("cat-file", "-p", name)
		if _, _, err := r.ReadObject(h); err != nil {
			t.Fatalf("ReadObject %s: %v (%s)", h, err, want)
		}
		if _, _, err := r.readPack(h); !errors.Is(err, errPackFallback) {
			t.Fatalf("readPack %s with alternates: %v, want the fallback to git", h, err)
		}
	}
	if r.packs.fallbacks.Load() == 0 {
		t.Fatal("alternates were not left to git")
	}
}

// openWithObjects opens g and lists its objects as git reads them, and
// their names; the repository closes with the test.
func openWithObjects(t *testing.T, g *gittest.Repo) (*Repo, map[Hash]gitObject, []Hash) {
	t.Helper()
	want := gitObjects(t, g)
	hashes := make([]Hash, 0, len(want))
	for h := range want {
		hashes = append(hashes, h)
	}
	r, err := Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, want, hashes
}

// Eight goroutines read every object at once (run with -race).
func TestPackReaderConcurrentReads(t *testing.T) {
	g := gittest.Init(t, "concurrent")
	fastImport(t, g, 300)
	g.Git("repack", "-adf", "-q", "--depth=50")
	r, want, hashes := openWithObjects(t, g)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < 2*len(hashes); i++ {
				h := hashes[rng.IntN(len(hashes))]
				typ, data, err := r.ReadObject(h)
				if err != nil || typ != want[h].typ || !bytes.Equal(data, want[h].data) {
					errs <- fmt.Errorf("%s: %s %v", h, typ, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := r.packs.fallbacks.Load(); n != 0 {
		t.Fatalf("%d reads fell back to git", n)
	}
}

// Reads keep answering while git repacks and gcs the repository under
// them: the mapped packs outlive their deletion, and a miss rescans. Once
// no read is in flight, a rescan unmaps the packs gc deleted.
func TestPackReadsDuringGC(t *testing.T) {
	g := gittest.Init(t, "gcrace")
	fastImport(t, g, 200)
	r, want, hashes := openWithObjects(t, g)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				h := hashes[i%len(hashes)]
				typ, data, err := r.ReadObject(h)
				if err != nil || typ != want[h].typ || !bytes.Equal(data, want[h].data) {
					errs <- fmt.Errorf("%s during gc: %s %v", h, typ, err)
					return
				}
			}
		}()
	}
	for i := 0; i < 3; i++ {
		g.Git("repack", "-adf", "-q")
		g.Git("gc", "-q", "--prune=now")
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Objects written after the last look are found by a rescan.
	g.Git("commit", "-q", "--allow-empty", "-m", "new")
	g.Git("gc", "-q", "--prune=now")
	head, _ := ParseHash(g.Git("rev-parse", "HEAD"))
	if typ, _, err := r.ReadObject(head); err != nil || typ != CommitObject {
		t.Fatalf("commit packed after the last scan: %s %v", typ, err)
	}
	r.rescanPacks()
	if n := len(r.packs.retired); n != 0 {
		t.Fatalf("%d deleted packs still mapped with no read in flight", n)
	}
}

// testObject is one object of a test pack (buildTestPack, which builds a
// pack and its version 2 index in memory, every offset through the 64-bit
// table when large is set): whole, or a delta (OFS or REF) on an earlier
// one.
type testObject struct {
	typ  byte
	data []byte
	base int // index of the delta base, or -1
	ref  bool
}

func objectName(typ byte, data []byte) Hash {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", packObjectTypes[typ], len(data))
	h.Write(data)
	var out Hash
	copy(out[:], h.Sum(nil))
	return out
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func deltaVarintBytes(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// makeDelta copies the common prefix from base, then inserts the rest.
func makeDelta(base, target []byte) []byte {
	d := append(deltaVarintBytes(uint64(len(base))), deltaVarintBytes(uint64(len(target)))...)
	n := 0
	for n < len(base) && n < len(target) && base[n] == target[n] && n < 0xffff {
		n++
	}
	if n > 0 {
		d = append(d, 0x80|0x10|0x20, byte(n), byte(n>>8))
	}
	for rest := target[n:]; len(rest) > 0; {
		k := min(len(rest), 127)
		d = append(d, byte(k))
		d = append(d, rest[:k]...)
		rest = rest[k:]
	}
	return d
}

func entryHeader(typ byte, size uint64) []byte {
	c := typ<<4 | byte(size&15)
	size >>= 4
	var out []byte
	for size > 0 {
		out = append(out, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(out, c)
}

func ofsBytes(back uint64) []byte {
	out := []byte{byte(back & 0x7f)}
	for back >>= 7; back > 0; back >>= 7 {
		back--
		out = append([]byte{0x80 | byte(back&0x7f)}, out...)
	}
	return out
}

func buildTestPack(objs []testObject, large bool) (pack, idx []byte, names []Hash, types []byte) {
	pack = []byte("PACK\x00\x00\x00\x02")
	pack = binary.BigEndian.AppendUint32(pack, uint32(len(objs)))
	offsets := make([]uint64, len(objs))
	for i, o := range objs {
		typ := o.typ
		if o.base >= 0 {
			typ = types[o.base]
		}
		types = append(types, typ)
		names = append(names, objectName(typ, o.data))
		offsets[i] = uint64(len(pack))
		if o.base < 0 {
			pack = append(pack, entryHeader(o.typ, uint64(len(o.data)))...)
			pack = append(pack, deflate(o.data)...)
			continue
		}
		d := makeDelta(objs[o.base].data, o.data)
		if o.ref {
			pack = append(pack, entryHeader(packRefDelta, uint64(len(d)))...)
			pack = append(pack, names[o.base][:]...)
		} else {
			pack = append(pack, entryHeader(packOfsDelta, uint64(len(d)))...)
			pack = append(pack, ofsBytes(offsets[i]-offsets[o.base])...)
		}
		pack = append(pack, deflate(d)...)
	}
	sum := sha1.Sum(pack)
	pack = append(pack, sum[:]...)
	order := make([]int, len(objs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bytes.Compare(names[order[a]][:], names[order[b]][:]) < 0 })
	idx = []byte(idxMagic + "\x00\x00\x00\x02")
	for b := 0; b < 256; b++ {
		n := 0
		for _, i := range order {
			if int(names[i][0]) <= b {
				n++
			}
		}
		idx = binary.BigEndian.AppendUint32(idx, uint32(n))
	}
	for _, i := range order {
		idx = append(idx, names[i][:]...)
	}
	for range order {
		idx = append(idx, 0, 0, 0, 0) // CRCs, unused
	}
	for k, i := range order {
		if large {
			idx = binary.BigEndian.AppendUint32(idx, largeOffset|uint32(k))
		} else {
			idx = binary.BigEndian.AppendUint32(idx, uint32(offsets[i]))
		}
	}
	if large {
		for _, i := range order {
			idx = binary.BigEndian.AppendUint64(idx, offsets[i])
		}
	}
	idx = append(idx, sum[:]...)
	isum := sha1.Sum(idx)
	idx = append(idx, isum[:]...)
	return pack, idx, names, types
}

var testObjects = []testObject{
	{typ: packBlob, data: []byte(letterJSON(1)), base: -1},
	{data: []byte(letterJSON(2)), base: 0},
	{data: []byte(letterJSON(3)), base: 1, ref: true},
	{data: []byte(letterJSON(4)), base: 2},
	{typ: packTree, data: []byte("100644 letter.json\x00aaaaaaaaaaaaaaaaaaaa"), base: -1},
	{typ: packCommit, data: []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nx\n"), base: -1},
	{typ: packTag, data: []byte("object 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ntype tree\ntag v\n\nx\n"), base: -1},
	{typ: packBlob, data: nil, base: -1},
}

// readTestPack reads every object of an in-memory pack as the reader
// would from a mapped one.
func readTestPack(t testing.TB, pack, idx []byte, names []Hash) ([]ObjectType, [][]byte, []error) {
	r := &Repo{commonDir: filepath.Join(os.TempDir(), "m1nd-no-such-repo")}
	p := &packFile{id: 1, path: "test.idx"}
	if err := p.init(idx, pack); err != nil {
		return nil, nil, []error{err}
	}
	set := &packSet{packs: []*packFile{p}}
	var types []ObjectType
	var datas [][]byte
	var errs []error
	for _, h := range names {
		off, ok, err := p.idx.find(h)
		if err != nil || !ok {
			errs = append(errs, fmt.Errorf("find %s: %v %v", h, ok, err))
			continue
		}
		typ, data, err := r.readPackedAt(set, p, off)
		types, datas, errs = append(types, typ), append(datas, data), append(errs, err)
	}
	return types, datas, errs
}

// The in-memory pack builder and the reader agree, with 32-bit and
// 64-bit offsets, OFS and REF deltas, and all four types.
func TestPackReaderSyntheticPacks(t *testing.T) {
	for _, large := range []bool{false, true} {
		pack, idx, names, types := buildTestPack(testObjects, large)
		gotTypes, got, errs := readTestPack(t, pack, idx, names)
		for i := range names {
			if errs[i] != nil || gotTypes[i] != packObjectTypes[types[i]] || !bytes.Equal(got[i], testObjects[i].data) {
				t.Fatalf("large=%v object %d: %s %q %v", large, i, gotTypes[i], got[i], errs[i])
			}
		}
	}
}

func TestApplyDelta(t *testing.T) {
	base := []byte("hello, world")
	tests := []struct {
		name  string
		delta []byte
		want  string
		err   bool
	}{
		{"copy and insert", []byte{12, 8, 0x90, 5, 3, '!', '!', '!'}, "hello!!!", false},
		{"copy with offset", []byte{12, 5, 0x91, 7, 5}, "world", false},
		{"empty target", []byte{12, 0}, "", false},
		{"wrong source size", []byte{11, 5, 0x90, 5}, "", true},
		{"copy past base", []byte{12, 6, 0x91, 8, 6}, "", true},
		{"insert past end", []byte{12, 3, 5, 'a'}, "", true},
		{"reserved op", []byte{12, 1, 0}, "", true},
		{"short of target", []byte{12, 9, 0x90, 5}, "", true},
		{"over target", []byte{12, 2, 0x90, 5}, "", true},
		{"copy of 64 KiB on a small base", []byte{12, 0x80, 0x80, 4, 0x80}, "", true},
		{"size varint too long", bytes.Repeat([]byte{0xff}, 12), "", true},
		{"truncated copy", []byte{12, 5, 0xb0, 5}, "", true},
	}
	for _, tt := range tests {
		got, err := applyDelta(base, tt.delta)
		if (err != nil) != tt.err || string(got) != tt.want {
			t.Errorf("%s: %q %v", tt.name, got, err)
		}
	}
}

func TestParseEntryHeader(t *testing.T) {
	tests := []struct {
		in   []byte
		typ  byte
		size uint64
		n    int
		err  bool
	}{
		{entryHeader(packBlob, 5), packBlob, 5, 1, false},
		{entryHeader(packCommit, 300), packCommit, 300, 2, false},
		{entryHeader(packOfsDelta, 1<<40), packOfsDelta, 1 << 40, 7, false},
		{[]byte{0xb5}, 0, 0, 0, true},
		{nil, 0, 0, 0, true},
		{bytes.Repeat([]byte{0xff}, 12), 0, 0, 0, true},
	}
	for _, tt := range tests {
		typ, size, n, err := parseEntryHeader(tt.in)
		if (err != nil) != tt.err || typ != tt.typ || size != tt.size || n != tt.n {
			t.Errorf("%x: %d %d %d %v", tt.in, typ, size, n, err)
		}
	}
	for _, back := range []uint64{1, 127, 128, 16511, 16512, 1 << 40} {
		got, n, err := parseOfsDelta(ofsBytes(back))
		if err != nil || got != back || n != len(ofsBytes(back)) {
			t.Errorf("ofs %d: %d %d %v", back, got, n, err)
		}
	}
}

// Corrupt packs are errors, never panics, and never a wrong object.
func TestPackReaderRefusesCorruptPacks(t *testing.T) {
	pack, idx, names, _ := buildTestPack(testObjects, false)
	loop, loopIdx, loopNames, _ := buildTestPack([]testObject{{typ: packBlob, data: []byte("a"), base: -1}, {data: []byte("ab"), base: 0, ref: true}}, false)
	// Point the REF delta at itself: a chain that never ends.
	at := bytes.Index(loop, loopNames[0][:])
	copy(loop[at:], loopNames[1][:])
	sum := sha1.Sum(loop[:len(loop)-20])
	copy(loop[len(loop)-20:], sum[:])
	copy(loopIdx[len(loopIdx)-40:], sum[:])
	tests := []struct {
		name        string
		pack, idx   []byte
		names       []Hash
		errContains string
	}{
		{"self-referencing delta", loop, loopIdx, loopNames[1:], "delta chain longer"},
		{"flipped compressed byte", flip(pack, 40), idx, names[:1], "inflate"},
		{"idx of another pack", pack, flip(idx, len(idx)-21), names, "checksum"},
		{"idx v1", pack, idx[8:], names, "version 1"},
		{"fanout decreasing", pack, flip(idx, 8+4*200+3), names, "fanout"},
	}
	for _, tt := range tests {
		_, _, errs := readTestPack(t, tt.pack, tt.idx, tt.names)
		var failed error
		for _, err := range errs {
			if err != nil {
				failed = err
			}
		}
		if failed == nil || !strings.Contains(failed.Error(), tt.errContains) {
			t.Errorf("%s: %v, want an error with %q", tt.name, failed, tt.errContains)
		}
	}
}

func flip(b []byte, i int) []byte {
	out := bytes.Clone(b)
	out[i] ^= 0x55
	return out
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello, world"), []byte{12, 8, 0x90, 5, 3, '!', '!', '!'})
	f.Add([]byte(letterJSON(1)), makeDelta([]byte(letterJSON(1)), []byte(letterJSON(2))))
	f.Add([]byte("x"), []byte{1, 0x80, 0x80, 4, 0x80})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, n, _ := deltaVarint(delta)
		if want, _, _ := deltaVarint(delta[n:]); uint64(len(out)) != want {
			t.Fatalf("target of %d bytes, declared %d", len(out), want)
		}
	})
}

func FuzzPackEntryHeader(f *testing.F) {
	f.Add(entryHeader(packBlob, 300))
	f.Add(append(entryHeader(packOfsDelta, 1<<20), ofsBytes(16512)...))
	f.Add(bytes.Repeat([]byte{0xff}, 12))
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, _, n, err := parseEntryHeader(b)
		if err != nil {
			return
		}
		if n < 1 || n > len(b) || typ > 7 {
			t.Fatalf("header of %d bytes from %d", n, len(b))
		}
		if back, m, err := parseOfsDelta(b[n:]); err == nil && (m < 1 || n+m > len(b)) {
			t.Fatalf("offset %d of %d bytes", back, m)
		}
	})
}

// FuzzPackIndex: lookups over any index bytes that parse never panic.
func FuzzPackIndex(f *testing.F) {
	_, idx, names, _ := buildTestPack(testObjects, false)
	_, large, _, _ := buildTestPack(testObjects, true)
	f.Add(idx, names[0][:])
	f.Add(large, names[3][:])
	f.Add(idx[:1100], []byte{0xff})
	f.Fuzz(func(t *testing.T, idx, name []byte) {
		ix, err := parseIdx(idx)
		if err != nil {
			return
		}
		var h Hash
		copy(h[:], name)
		ix.find(h)
		for i := uint32(0); i < ix.n && i < 1000; i++ {
			ix.offset(i)
		}
	})
}

// FuzzPackRead: reading every object of a mutated pack never panics.
func FuzzPackRead(f *testing.F) {
	pack, seedIdx, names, _ := buildTestPack(testObjects, false)
	f.Add(pack)
	f.Fuzz(func(t *testing.T, pack []byte) {
		if len(pack) < packHeaderLen+packTrailer {
			return
		}
		pack = bytes.Clone(pack)
		// Index the mutated pack as the seed was, with its new checksum.
		idx := bytes.Clone(seedIdx)
		copy(idx[len(idx)-40:], pack[len(pack)-20:])
		binary.BigEndian.PutUint32(pack[8:], uint32(len(names)))
		readTestPack(t, pack, idx, names)
	})
}

// BenchmarkReadPackedObject reads every object of a gc'ed repository in a
// shuffled order, by m1nd's pack reader and by git cat-file, alone and from
// four goroutines.
func BenchmarkReadPackedObject(b *testing.B) {
	g := gittest.Init(b, "bench")
	fastImport(b, g, 3000)
	g.Git("gc", "-q", "--prune=now")
	var hashes []Hash
	for _, line := range strings.Split(g.Git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)"), "\n") {
		h, _ := ParseHash(line)
		hashes = append(hashes, h)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(hashes), func(i, j int) { hashes[i], hashes[j] = hashes[j], hashes[i] })
	r, err := Open(g.Dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	readers := []struct {
		name string
		read func(Hash) (ObjectType, []byte, error)
	}{
		{"m1nd", r.readPack},
		{"git", r.readPacked},
	}
	for _, rd := range readers {
		b.Run(rd.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := rd.read(hashes[i%len(hashes)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(rd.name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(2) // 4 goroutines on 2 cores, as gitstore.Parallel
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := rd.read(hashes[int(next.Add(1))%len(hashes)]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func TestInflate(t *testing.T) {
	data := []byte(letterJSON(3))
	z := deflate(data)
	tests := []struct {
		name string
		size int
		src  []byte
		err  string
	}{
		{"whole", len(data), z, ""},
		{"trailing bytes ignored", len(data), append(bytes.Clone(z), "next entry"...), ""},
		{"declared too small", len(data) - 1, z, "longer than"},
		{"declared too large", len(data) + 1, z, "shorter than"},
		{"bad checksum", len(data), flip(z, len(z)-1), "checksum mismatch"},
		{"truncated checksum", len(data), z[:len(z)-2], "truncated checksum"},
		{"truncated stream", len(data), z[:len(z)/2], "inflate"},
		{"bad header", len(data), flip(z, 0), "bad zlib header"},
		{"empty", 0, nil, "truncated zlib header"},
	}
	for _, tt := range tests {
		err := inflate(make([]byte, tt.size), tt.src)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}
