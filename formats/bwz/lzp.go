package bwz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/sapipe/sapipe/internal/bytecount"
)

// LZP: long repeats taken out of a block before its transform (format version 4).
//
// In each segment of the block, every position i from 8 on predicts that the segment continues as
// it did after the last position whose Context bytes before it hashed the same (a table of
// 2^HashBits positions, updated at every position where a token starts). Where the prediction holds
// for at least MinLen bytes, the block's text has the Escape byte and the length instead of the
// bytes; anywhere else a byte stands for itself, and an Escape byte of the input is written as
// Escape and 0. A length is l - MinLen + 1 >= 1 written in bytes of 255 and a last byte under 255.
//
// A transform sorts and codes every byte of its block, however predictable, and repeats of tens
// of kilobytes are common in archives (the same license, file or header again and again): the
// Linux sources' first 100 MiB lose 28% of their bytes this way, which the transform no longer
// sorts or codes, and come out 0.7% smaller in one block (kernels/cpu/NOTES.md has the figures).
// Segments of 8 MiB, each with its own table, cost 0.1% against one table for the block and let
// the threads share the work both ways.

// LZP is how a block's text was made from its bytes: segment by segment, each on its own (a
// table of its own, matches within it), so that segments are made and undone in parallel; the
// text is their texts one after the other.
type LZP struct {
	Escape      byte  // the byte that starts a match (the block's rarest byte)
	MinLen      int   // the shortest match taken
	HashBits    uint8 // log2 of the number of table entries
	Context     uint8 // bytes of context hashed, 1..8
	SegmentSize int   // bytes of block per segment
	Texts       []int // the length of each segment's text
}

const (
	lzpStart      = 8  // the first position that predicts: the context is read as one word
	lzpAhead      = 32 // positions whose table entries the encoder loads ahead
	lzpMinLen     = 64 // MinLen written by this package
	lzpContext    = 6  // Context written by this package
	lzpMinBlock   = 64 << 10
	lzpSegment    = 8 << 20 // SegmentSize written by this package
	lzpMinMinLen  = 8       // at least the 8 bytes the encoder loads at a position
	lzpMaxMinLen  = 1 << 16
	lzpMinHash    = 10
	lzpMaxHash    = 22
	lzpHashFactor = 0x9E3779B97F4A7C15

	// The encoder's table entries: a position in the low lzpPosBits, lzpCheckBits of check above.
	lzpPosBits   = 23
	lzpCheckBits = 32 - lzpPosBits
	lzpPosMask   = 1<<lzpPosBits - 1
)

// A segment's positions fit the encoder's entries.
var _ [1<<lzpPosBits - lzpSegment]struct{}

// lzpHashBits is the table size this package uses for a block of n bytes: an entry for every 32
// bytes of block, 2^12 to 2^18 entries of 4 bytes (larger tables took a few more repeats out of
// the Linux sources but missed the caches more).
func lzpHashBits(n int) uint8 {
	return uint8(min(max(bits.Len(uint(n))-5, 12), 18))
}

// maxLZPHashBits is the largest table a reader accepts for a block of n bytes, so that a lying
// payload cannot make it allocate much more than the block.
func maxLZPHashBits(n int) uint8 {
	return uint8(min(max(bits.Len(uint(n)), 12), lzpMaxHash))
}

// lzpHash hashes the Context bytes before a position into the table; its shifts are taken out
// of the LZP once, so that the encoder's and decoder's loops keep them in registers.
type lzpHash struct{ ctxShift, hashShift uint }

func (p *LZP) hasher() lzpHash {
	return lzpHash{64 - 8*uint(p.Context), 64 - uint(p.HashBits)}
}

// of is the table entry of word, the 8 bytes before a position read little-endian (the context
// is its top bytes).
func (h lzpHash) of(word uint64) uint64 {
	return ((word >> (h.ctxShift & 63)) * lzpHashFactor) >> (h.hashShift & 63)
}

// EncodeLZP returns the LZP text of src and how it was made, or nil and src itself when the
// text would not be at least 1/32 shorter (or src is under 64 KiB): the transform of src is then
// taken as it is. Segments are made on up to threads goroutines; one whose first eighth loses
// under 1/64 of its bytes is given up early and its bytes written as they are. dst, when it has
// room for len(src) bytes, holds the text.
//
// Each segment's text is written in its segment's place in one buffer, and the texts then moved
// down to follow each other: with a buffer of its own for each and a copy into a new one for the
// whole, the Linux tar's 100 MiB block spent ~0.5 s of CPU in the copy, most of it faulting the
// new buffer's pages in.
func EncodeLZP(dst, src []byte, threads int) (*LZP, []byte) {
	n := len(src)
	if n < lzpMinBlock {
		return nil, src
	}
	nseg := (n + lzpSegment - 1) / lzpSegment
	counts := make([][256]uint32, nseg)
	parallel(nseg, threads, func(k int) {
		lo, hi := segment(k, lzpSegment, n)
		counts[k] = bytecount.Of(src[lo:hi])
	})
	var count [256]int
	for k := range counts {
		for c, x := range counts[k] {
			count[c] += int(x)
		}
	}
	esc := 0
	for c := 1; c < 256; c++ {
		if count[c] < count[esc] {
			esc = c
		}
	}
	p := &LZP{Escape: byte(esc), MinLen: lzpMinLen, HashBits: lzpHashBits(min(n, lzpSegment)), Context: lzpContext,
		SegmentSize: lzpSegment, Texts: make([]int, nseg)}
	buf := dst[:cap(dst)]
	if len(buf) < n {
		buf = make([]byte, n)
	}
	// A text's room ends where the next segment's begins: one that would grow past it is moved
	// elsewhere by append. The segments given up are written as literals only once the block
	// is known to keep its LZP text (DNA, say, never does).
	texts := make([][]byte, nseg)
	parallel(nseg, threads, func(k int) {
		lo, hi := segment(k, lzpSegment, n)
		texts[k] = p.encode(buf[lo:lo:hi], src[lo:hi], hi-lo, true)
	})
	m := 0
	for k, t := range texts {
		p.Texts[k] = len(t)
		if t == nil { // its literals: each byte, and a 0 after each escape byte
			lo, hi := segment(k, lzpSegment, n)
			p.Texts[k] = hi - lo + int(counts[k][esc])
		}
		m += p.Texts[k]
	}
	if m > n-n/32 {
		return nil, src
	}
	parallel(nseg, threads, func(k int) {
		if lo, hi := segment(k, lzpSegment, n); texts[k] == nil {
			texts[k] = p.literals(buf[lo:lo:hi], src[lo:hi])
		}
	})
	// Move the texts down in order. Text k goes to [off, off+len): that must end before the
	// next segment's place, where its text may still be; if a text longer than its segment
	// makes it go past, the texts are joined in a new buffer instead.
	off := 0
	for k, t := range texts {
		if off+len(t) > (k+1)*lzpSegment {
			out := make([]byte, 0, m)
			for _, t := range texts {
				out = append(out, t...)
			}
			return p, out
		}
		off += len(t)
	}
	off = 0
	for _, t := range texts {
		copy(buf[off:], t)
		off += len(t)
	}
	return p, buf[:m]
}

// segment returns the bounds of segment k of a block of n bytes in segments of size.
func segment(k, size, n int) (lo, hi int) { return k * size, min((k+1)*size, n) }

// literals writes src as an LZP text without matches.
func (p *LZP) literals(out, src []byte) []byte {
	for _, c := range src {
		out = append(out, c)
		if c == p.Escape {
			out = append(out, 0)
		}
	}
	return out
}

// encode writes src's LZP text to out; it gives up, returning nil, once the text is longer than
// limit, or if early, an eighth of the way in, if under 1/64 of it was taken out. Its table
// keeps beside each position (in the 9 bits of a 4-byte entry that a position under 2^23 leaves
// free) a hash of the 8 bytes that start there and the 8 that end a match of MinLen bytes there,
// so that a candidate that cannot match is nearly always passed over without reading the text at
// its position (a cache miss) and without a branch that goes either way: in the Linux sources,
// 31% of the candidates have the same next 4 bytes, few the same 16. The entries are 4 bytes, so
// that a segment's table fits the caches better (1 MiB for 8 MiB of segment); with 8-byte
// entries and 32-bit hashes the encoder was ~15% slower.
func (p *LZP) encode(out, src []byte, limit int, early bool) []byte {
	n := len(src)
	// what the loads through pointers below rely on: a position fits an entry, and the 8 bytes
	// at every position checked (at most n-MinLen) are in src
	if n > 1<<lzpPosBits || p.MinLen < lzpMinMinLen {
		panic(fmt.Sprintf("bwz: LZP encoder for %d bytes with a minimum match of %d", n, p.MinLen))
	}
	tab := make([]uint32, 1<<p.HashBits)
	esc := p.Escape
	minLen := p.MinLen
	hash := p.hasher()
	i := min(lzpStart, n)
	out = p.literals(out, src[:i])
	// No match starts in the last minLen-1 bytes, so the table is not needed there.
	// The table entries of the next lzpAhead positions are loaded ahead, all at once: they are
	// cache misses whichever way, but then many at a time. sink keeps the loads.
	var hs [lzpAhead]uint32
	var sink uint32
	last := n - minLen
	checked := false
	sp := unsafe.Pointer(unsafe.SliceData(src))
	zp := unsafe.Add(sp, minLen-8) // the last 8 bytes of a match of minLen bytes at zp+i
	tp := unsafe.Pointer(unsafe.SliceData(tab))
	for i <= last {
		if len(out) > limit {
			return nil
		}
		if early && i >= n/8 && !checked {
			// An eighth of the block in, give up if under 1/64 of it was taken out: no full
			// pass over text with few long repeats (DNA, most binaries).
			checked = true
			if len(out) > i-i/64 {
				return nil
			}
		}
		end := min(i+lzpAhead, last+1)
		for k := i; k < end; k++ {
			h := uint32(hash.of(binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(sp, k-8))[:])))
			hs[k&(lzpAhead-1)] = h
			sink += *(*uint32)(unsafe.Add(tp, uintptr(h)*4))
		}
		// The positions of the batch go through pointers, with no call in the loop: Go keeps no
		// register across a call, and with appends, bounds checks and the match's calls in it
		// the loop spilled and reloaded most of its values at every position. 8 MiB of the Linux
		// tar took 958M instructions that way, 451M this way (callgrind). What makes the
		// pointers safe: every position i is at most last, so src[i-8:i+minLen] is in src; an
		// entry h is under 1<<HashBits, the table's length, by the hash's last shift; out is
		// given room first for the batch's literals, two bytes at most for each of its
		// positions. The check loads the bytes in the machine's order: it is compared only with
		// checks made the same way.
		out = slices.Grow(out, 2*lzpAhead)
		ob := out[:cap(out)]
		o := len(out)
		op := unsafe.Pointer(unsafe.SliceData(ob))
		l := 0
		for i < end {
			for ; i < end; i++ {
				ep := (*uint32)(unsafe.Add(tp, uintptr(hs[i&(lzpAhead-1)])*4))
				e := *ep
				// A match of minLen bytes has the same first and last 8 bytes.
				a, z := *(*uint64)(unsafe.Add(sp, i)), *(*uint64)(unsafe.Add(zp, i))
				check := uint32((a*lzpHashFactor^z)*lzpHashFactor>>(64-lzpCheckBits)) << lzpPosBits
				*ep = uint32(i) | check
				if e&lzpPosMask != 0 && e&^lzpPosMask == check {
					l = int(e & lzpPosMask) // the candidate, for now
					break
				}
				c := *(*byte)(unsafe.Add(sp, i))
				*(*byte)(unsafe.Add(op, o)) = c
				o++
				if c == esc {
					*(*byte)(unsafe.Add(op, o)) = 0
					o++
				}
			}
			if l == 0 {
				break
			}
			if l = matchLen(src, l, i); l >= minLen {
				break
			}
			l = 0 // a false candidate: a literal
			c := src[i]
			ob[o] = c
			o++
			if c == esc {
				ob[o] = 0
				o++
			}
			i++
		}
		out = ob[:o]
		if l > 0 {
			out = append(out, esc)
			v := l - minLen + 1
			for ; v >= 255; v -= 255 {
				out = append(out, 255)
			}
			out = append(out, byte(v))
			i += l
		}
	}
	out = p.literals(out, src[i:])
	lzpSink.Store(sink)
	if len(out) > limit {
		return nil
	}
	return out
}

// lzpSink keeps the encoder's loads ahead from being optimised away (segments are made on
// several goroutines at once, hence atomic).
var lzpSink atomic.Uint32

// matchLen is the length of the common prefix of src[a:] and src[b:], a < b.
func matchLen(src []byte, a, b int) int {
	n := len(src)
	l := 0
	for b+l+8 <= n {
		x := binary.LittleEndian.Uint64(src[a+l:]) ^ binary.LittleEndian.Uint64(src[b+l:])
		if x != 0 {
			return l + bits.TrailingZeros64(x)>>3
		}
		l += 8
	}
	for b+l < n && src[a+l] == src[b+l] {
		l++
	}
	return l
}

// Decode returns the n bytes whose LZP text is text, its segments undone on up to threads
// goroutines. Each segment's bytes are allocated as they come, so that a lying n costs no more
// memory than the bytes the text really holds. An error wraps ErrCorrupt.
func (p *LZP) Decode(text []byte, n, threads int) ([]byte, error) {
	if err := p.check(n); err != nil {
		return nil, err
	}
	if len(p.Texts) != (n+p.SegmentSize-1)/p.SegmentSize {
		return nil, corruptf("%d LZP segments for %d bytes in segments of %d", len(p.Texts), n, p.SegmentSize)
	}
	offs := make([]int, len(p.Texts)+1)
	for k, l := range p.Texts {
		if l < 1 || l > len(text)-offs[k] {
			return nil, corruptf("LZP segment %d: text length %d out of range", k, l)
		}
		offs[k+1] = offs[k] + l
	}
	if offs[len(p.Texts)] != len(text) {
		return nil, corruptf("LZP segments hold %d bytes of a text of %d", offs[len(p.Texts)], len(text))
	}
	// A text a little shorter than its bytes, as an encoder writes (72% of them for the Linux
	// sources), has its n bytes allocated at once and each segment decoded in its place; a text
	// that claims to stand for many more bytes has its segments grow as their bytes come, then
	// joined.
	var whole []byte
	if n <= 4*len(text)+1<<20 {
		whole = make([]byte, n)
	}
	outs := make([][]byte, len(p.Texts))
	errs := make([]error, len(p.Texts))
	parallel(len(p.Texts), threads, func(k int) {
		lo, hi := segment(k, p.SegmentSize, n)
		var dst []byte
		if whole != nil {
			dst = whole[lo:lo:hi]
		}
		outs[k], errs[k] = p.decodeSegment(dst, text[offs[k]:offs[k+1]], hi-lo)
	})
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("LZP segment %d: %w", k, err)
		}
	}
	if whole != nil {
		return whole, nil // each segment filled its place: it was exactly its size, and never grew
	}
	out := make([]byte, 0, n)
	for _, o := range outs {
		out = append(out, o...)
	}
	return out, nil
}

// decodeSegment returns the n bytes whose LZP text is text, appended to dst[:0]: in place when
// dst has room for n bytes (they never go past n), else in a buffer that grows as they come.
//
// The text between escapes is copied a stretch at a time; its positions only update the table
// (a store each, which does not wait), since a position's candidate is needed only where a match
// starts: loading it at every byte (a cache miss in a table of 1 MiB) made decoding 1.5x slower.
func (p *LZP) decodeSegment(dst, text []byte, n int) ([]byte, error) {
	out := dst[:0]
	if cap(out) < n && cap(out) < 4*len(text)+1<<20 {
		out = make([]byte, 0, min(n, 4*len(text)+1<<20))
	}
	tab := make([]uint32, 1<<p.HashBits)
	esc := p.Escape
	var ctx uint64 // the 8 bytes before the next one, little-endian
	hash := p.hasher()
	j := 0
	for j < len(text) {
		// the bytes up to the next escape stand for themselves
		k := bytes.IndexByte(text[j:], esc)
		if k < 0 {
			k = len(text) - j
		}
		i := len(out)
		if k > n-i {
			return nil, corruptf("LZP text goes on after its %d bytes", n)
		}
		out = append(out, text[j:j+k]...)
		for _, c := range text[j : j+k] {
			if i >= lzpStart {
				tab[hash.of(ctx)] = uint32(i)
			}
			ctx = ctx>>8 | uint64(c)<<56
			i++
		}
		j += k
		if j == len(text) {
			break
		}
		// an escape: the escape byte itself, or a match
		if i >= n {
			return nil, corruptf("LZP text goes on after its %d bytes", n)
		}
		cand := 0
		if i >= lzpStart {
			h := hash.of(ctx)
			cand = int(tab[h])
			tab[h] = uint32(i)
		}
		j++
		if j >= len(text) {
			return nil, corruptf("LZP text ends in an escape")
		}
		if text[j] == 0 {
			j++
			out = append(out, esc)
			ctx = ctx>>8 | uint64(esc)<<56
			continue
		}
		l, k, err := p.matchLength(text[j:], n)
		if err != nil {
			return nil, err
		}
		j += k
		if cand == 0 || l > n-i {
			return nil, corruptf("LZP match of %d bytes at byte %d with nothing to copy", l, i)
		}
		if cand+l <= i {
			out = append(out, out[cand:cand+l]...)
		} else {
			for k := 0; k < l; k++ { // the match overlaps what it writes
				out = append(out, out[cand+k])
			}
		}
		ctx = binary.LittleEndian.Uint64(out[len(out)-8:])
	}
	if len(out) != n {
		return nil, corruptf("LZP text holds %d bytes, want %d", len(out), n)
	}
	return out, nil
}

// matchLength reads a match's length from b, its bytes after the escape: it returns the length
// and the number of bytes read.
func (p *LZP) matchLength(b []byte, n int) (l, k int, err error) {
	v := 0
	for {
		if k >= len(b) {
			return 0, 0, corruptf("LZP text ends in a match length")
		}
		c := b[k]
		k++
		v += int(c)
		if v > n {
			return 0, 0, corruptf("LZP match longer than the block")
		}
		if c < 255 {
			return v + p.MinLen - 1, k, nil
		}
	}
}

// appendFields appends p's fields as a version-4 payload holds them (doc.go), for an LZP text of
// m bytes.
func (p *LZP) appendFields(dst []byte, m int) []byte {
	dst = append(dst, p.Escape)
	dst = binary.AppendUvarint(dst, uint64(p.MinLen))
	dst = append(dst, p.HashBits, p.Context)
	dst = binary.AppendUvarint(dst, uint64(m))
	dst = binary.AppendUvarint(dst, uint64(p.SegmentSize))
	for _, l := range p.Texts {
		dst = binary.AppendUvarint(dst, uint64(l))
	}
	return dst
}

// readLZPFields reads what appendFields writes, for a block of n bytes: the LZP, the length m of
// its text (1..n), and what follows the fields in b. It checks every field before it allocates
// the segments' lengths, which b must hold.
func readLZPFields(b []byte, n int) (p *LZP, m int, rest []byte, err error) {
	uvarint := func() int {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > MaxBlockSize {
			return -1 // out of every range below
		}
		b = b[k:]
		return int(v)
	}
	if len(b) < 1 {
		return nil, 0, nil, corruptf("payload ends in its LZP fields")
	}
	p = &LZP{Escape: b[0]}
	b = b[1:]
	p.MinLen = uvarint()
	if len(b) < 2 {
		return nil, 0, nil, corruptf("payload ends in its LZP fields")
	}
	p.HashBits, p.Context = b[0], b[1]
	b = b[2:]
	m = uvarint()
	p.SegmentSize = uvarint()
	if err := p.check(n); err != nil {
		return nil, 0, nil, err
	}
	if m < 1 || m > n {
		return nil, 0, nil, corruptf("LZP text length out of range 1..%d", n)
	}
	nseg := (n + p.SegmentSize - 1) / p.SegmentSize
	if len(b) < nseg {
		return nil, 0, nil, corruptf("payload ends in the LZP segments' lengths")
	}
	p.Texts = make([]int, nseg)
	for i := range p.Texts {
		if p.Texts[i] = uvarint(); p.Texts[i] < 1 || p.Texts[i] > m {
			return nil, 0, nil, corruptf("LZP segment %d: bad text length", i)
		}
	}
	return p, m, b, nil
}

// check tells whether p could have been written for a block of n bytes.
func (p *LZP) check(n int) error {
	switch {
	case p.MinLen < lzpMinMinLen || p.MinLen > lzpMaxMinLen:
		return corruptf("LZP minimum match %d out of range %d..%d", p.MinLen, lzpMinMinLen, lzpMaxMinLen)
	case p.Context < 1 || p.Context > 8:
		return corruptf("LZP context of %d bytes out of range 1..8", p.Context)
	case p.SegmentSize < lzpMinBlock || p.SegmentSize > MaxBlockSize:
		return corruptf("LZP segments of %d bytes out of range %d..%d", p.SegmentSize, lzpMinBlock, MaxBlockSize)
	case p.HashBits < lzpMinHash || p.HashBits > maxLZPHashBits(min(n, p.SegmentSize)):
		return corruptf("LZP table of 2^%d entries out of range 2^%d..2^%d", p.HashBits, lzpMinHash, maxLZPHashBits(min(n, p.SegmentSize)))
	}
	return nil
}
