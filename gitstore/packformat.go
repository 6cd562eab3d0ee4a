package gitstore

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"sync"
)

// This file decodes git's pack formats from byte slices (the mapped .idx
// and .pack files): the version 2 index, the entry headers and git's delta
// encoding. Every function here checks its bounds and returns an error on
// malformed input; none may panic, whatever the bytes (the fuzz targets in
// pack_test.go hold them to that), because a pack is data someone else
// wrote.

// errPackUnsupported marks a pack the reader leaves to git (an index
// version other than 2), as opposed to a corrupt one.
var errPackUnsupported = errors.New("pack format not handled by m1nd's reader")

// Pack object types, as stored in an entry header.
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

var packObjectTypes = [...]ObjectType{packCommit: CommitObject, packTree: TreeObject, packBlob: BlobObject, packTag: TagObject}

const (
	idxHeaderLen  = 8               // magic and version
	idxFanoutEnd  = 8 + 256*4       // end of the fanout table
	idxTrailerLen = 2 * 20          // pack checksum and index checksum
	packHeaderLen = 12              // "PACK", version, object count
	packTrailer   = 20              // pack checksum
	inflateRatio  = 1032            // deflate's largest expansion: a size above it is a lie
	maxDeltaChain = 10000           // git writes at most --depth 4095; above is a loop or hostile
	maxVarintLen  = 9               // 63 bits: no git object is larger
	idxMagic      = "\xfftOc"       // version 2 index; version 1 has no magic
	copyZeroSize  = 0x10000         // a copy op of size 0 means 64 KiB
	largeOffset   = uint32(1 << 31) // offset flag: the rest indexes the 64-bit table
)

// packIndex is a version 2 .idx, decoded lazily: a view of its tables, never
// a map of its names, so opening a pack of a million objects costs nothing
// until a lookup.
type packIndex struct {
	fanout []byte // 256 big-endian counts: objects whose first byte is ≤ i
	names  []byte // n sorted 20-byte names
	off32  []byte // n 4-byte offsets, or flagged indexes into off64
	off64  []byte // 8-byte offsets of objects past 2 GiB
	trail  []byte // the pack's checksum, then the index's
	n      uint32
}

// parseIdx checks an index's framing (magic, version, a non-decreasing
// fanout, room for every table) so that lookups can index it unchecked.
func parseIdx(b []byte) (packIndex, error) {
	var ix packIndex
	if len(b) < idxHeaderLen || string(b[:4]) != idxMagic {
		if len(b) >= idxFanoutEnd-idxHeaderLen+idxTrailerLen {
			return ix, fmt.Errorf("pack index version 1: %w", errPackUnsupported)
		}
		return ix, errors.New("pack index: too short")
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != 2 {
		return ix, fmt.Errorf("pack index version %d: %w", v, errPackUnsupported)
	}
	if len(b) < idxFanoutEnd+idxTrailerLen {
		return ix, errors.New("pack index: too short")
	}
	ix.fanout = b[idxHeaderLen:idxFanoutEnd]
	var prev uint32
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(ix.fanout[4*i:])
		if v < prev {
			return ix, errors.New("pack index: fanout table decreases")
		}
		prev = v
	}
	ix.n = prev
	n := uint64(ix.n)
	if uint64(len(b)) < idxFanoutEnd+n*28+idxTrailerLen {
		return ix, fmt.Errorf("pack index: %d objects do not fit in %d bytes", n, len(b))
	}
	at := uint64(idxFanoutEnd)
	ix.names = b[at : at+20*n]
	at += 24 * n // names, then CRCs (unused)
	ix.off32 = b[at : at+4*n]
	at += 4 * n
	ix.off64 = b[at : uint64(len(b))-idxTrailerLen]
	if len(ix.off64)%8 != 0 {
		return ix, errors.New("pack index: large offset table is not a multiple of 8 bytes")
	}
	ix.trail = b[len(b)-idxTrailerLen:]
	return ix, nil
}

// find returns the pack offset of h: fanout narrows to the names sharing
// h's first byte, then a binary search.
func (ix *packIndex) find(h Hash) (uint64, bool, error) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = binary.BigEndian.Uint32(ix.fanout[4*(int(h[0])-1):])
	}
	hi := binary.BigEndian.Uint32(ix.fanout[4*int(h[0]):])
	for lo < hi {
		mid := lo + (hi-lo)/2
		switch c := bytes.Compare(ix.names[20*uint64(mid):20*uint64(mid)+20], h[:]); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			return ix.offset(mid)
		}
	}
	return 0, false, nil
}

func (ix *packIndex) offset(i uint32) (uint64, bool, error) {
	o := binary.BigEndian.Uint32(ix.off32[4*uint64(i):])
	if o&largeOffset == 0 {
		return uint64(o), true, nil
	}
	k := uint64(o &^ largeOffset)
	if k >= uint64(len(ix.off64))/8 {
		return 0, false, fmt.Errorf("pack index: large offset %d out of range", k)
	}
	return binary.BigEndian.Uint64(ix.off64[8*k:]), true, nil
}

// parseEntryHeader reads a pack entry's header: type in bits 4-6 of the
// first byte, size in its low 4 bits and 7 more bits per following byte
// while the high bit is set. n is the header's length.
func parseEntryHeader(b []byte) (typ byte, size uint64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, errors.New("entry header: truncated")
	}
	c := b[0]
	typ, size, n = (c>>4)&7, uint64(c&15), 1
	for shift := uint(4); c&0x80 != 0; shift += 7 {
		if n >= len(b) {
			return 0, 0, 0, errors.New("entry header: truncated")
		}
		if shift > 57 {
			return 0, 0, 0, errors.New("entry header: size overflows 64 bits")
		}
		c = b[n]
		n++
		size |= uint64(c&0x7f) << shift
	}
	return typ, size, n, nil
}

// parseOfsDelta reads an OFS_DELTA's distance back to its base: big-endian
// 7-bit groups, each continuation adding one (git's "offset encoding").
func parseOfsDelta(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errors.New("delta base offset: truncated")
	}
	c := b[0]
	off, n := uint64(c&0x7f), 1
	for c&0x80 != 0 {
		if n >= len(b) {
			return 0, 0, errors.New("delta base offset: truncated")
		}
		if off >= (1<<57)-1 {
			return 0, 0, errors.New("delta base offset: overflows 64 bits")
		}
		c = b[n]
		n++
		off = (off+1)<<7 | uint64(c&0x7f)
	}
	return off, n, nil
}

// deltaVarint reads one of a delta's two leading sizes (little-endian 7-bit
// groups).
func deltaVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < maxVarintLen; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("delta size: truncated or too long")
}

// copyOp decodes a copy instruction's operands: the low 4 bits of cmd say
// which offset bytes follow, the next 3 which size bytes.
func copyOp(cmd byte, b []byte) (off, size uint64, n int, err error) {
	for bit := uint(0); bit < 7; bit++ {
		if cmd&(1<<bit) == 0 {
			continue
		}
		if n >= len(b) {
			return 0, 0, 0, errors.New("delta copy: truncated")
		}
		if bit < 4 {
			off |= uint64(b[n]) << (8 * bit)
		} else {
			size |= uint64(b[n]) << (8 * (bit - 4))
		}
		n++
	}
	if size == 0 {
		size = copyZeroSize
	}
	return off, size, n, nil
}

// applyDelta rebuilds a target from base and a git delta (source size,
// target size, then copy-from-base and insert instructions). A first pass
// checks every instruction against the base and the declared sizes, so the
// target is allocated only for a delta that is sound and only as large as
// its instructions can fill. The result is a new slice.
func applyDelta(base, delta []byte) ([]byte, error) {
	src, n, err := deltaVarint(delta)
	if err != nil {
		return nil, err
	}
	tgt, m, err := deltaVarint(delta[n:])
	if err != nil {
		return nil, err
	}
	if src != uint64(len(base)) {
		return nil, fmt.Errorf("delta: base is %d bytes, delta wants %d", len(base), src)
	}
	ops := delta[n+m:]
	var total uint64
	for i := 0; i < len(ops); {
		cmd := ops[i]
		i++
		switch {
		case cmd&0x80 != 0:
			off, size, k, err := copyOp(cmd, ops[i:])
			if err != nil {
				return nil, err
			}
			i += k
			if off+size > uint64(len(base)) {
				return nil, fmt.Errorf("delta: copy of %d bytes at %d past a %d-byte base", size, off, len(base))
			}
			total += size
		case cmd != 0:
			if int(cmd) > len(ops)-i {
				return nil, errors.New("delta: insert past the end")
			}
			i += int(cmd)
			total += uint64(cmd)
		default:
			return nil, errors.New("delta: reserved instruction 0")
		}
		if total > tgt {
			return nil, fmt.Errorf("delta: instructions overrun the %d-byte target", tgt)
		}
	}
	if total != tgt {
		return nil, fmt.Errorf("delta: instructions fill %d bytes of a %d-byte target", total, tgt)
	}
	out := make([]byte, 0, tgt)
	for i := 0; i < len(ops); {
		cmd := ops[i]
		i++
		if cmd&0x80 != 0 {
			off, size, k, _ := copyOp(cmd, ops[i:])
			i += k
			out = append(out, base[off:off+size]...)
			continue
		}
		out = append(out, ops[i:i+int(cmd)]...)
		i += int(cmd)
	}
	return out, nil
}

// inflater is a pooled raw deflate reader over a bytes.Reader: a new zlib
// reader per object was a large share of go-git's cost, and even a reset
// zlib reader allocates a new checksum per stream. The zlib framing (a
// 2-byte header, an Adler-32 trailer) is checked here instead.
type inflater struct {
	src bytes.Reader
	fr  io.ReadCloser
	one [1]byte
}

var inflaters sync.Pool

// inflate decompresses the zlib stream at the start of src into dst, which
// must be exactly the declared size: a stream that ends early or runs long
// is an error, as is a bad header or checksum.
func inflate(dst, src []byte) error {
	if len(src) < 2 {
		return errors.New("inflate: truncated zlib header")
	}
	if cmf, flg := src[0], src[1]; cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0 || flg&0x20 != 0 {
		return fmt.Errorf("inflate: bad zlib header %02x%02x", cmf, flg)
	}
	inf, _ := inflaters.Get().(*inflater)
	if inf == nil {
		inf = &inflater{}
	}
	defer inflaters.Put(inf)
	body := src[2:]
	// bytes.Reader is an io.ByteReader, so flate reads no byte past the
	// end of the deflate stream and the checksum follows where it stopped.
	inf.src.Reset(body)
	if inf.fr == nil {
		inf.fr = flate.NewReader(&inf.src)
	} else if err := inf.fr.(flate.Resetter).Reset(&inf.src, nil); err != nil {
		return fmt.Errorf("inflate: %w", err)
	}
	if _, err := io.ReadFull(inf.fr, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("inflate: stream shorter than the declared %d bytes", len(dst))
		}
		return fmt.Errorf("inflate: %w", err)
	}
	for i := 0; ; i++ {
		n, err := inf.fr.Read(inf.one[:])
		if n > 0 {
			return fmt.Errorf("inflate: stream longer than the declared %d bytes", len(dst))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("inflate: %w", err)
		}
		if i == 4 {
			return errors.New("inflate: stream does not end")
		}
	}
	trailer := body[len(body)-inf.src.Len():]
	if len(trailer) < 4 {
		return errors.New("inflate: truncated checksum")
	}
	if binary.BigEndian.Uint32(trailer) != adler32.Checksum(dst) {
		return errors.New("inflate: checksum mismatch")
	}
	return nil
}

// inflateSizeOK reports whether a declared size can come out of a
// compressed stream of at most avail bytes, before anything is allocated
// for it.
func inflateSizeOK(size uint64, avail int) bool {
	return size <= uint64(avail)*inflateRatio+64
}
