package formats

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
)

// inflate.go decodes DEFLATE (RFC 1951) a block at a time from any bit of its input, for
// gzpar.go, which inflates one gzip member on every core. A block decoded without the 32 KiB
// before it (a chunk of the member started at a block found by search, findBlock) writes each
// byte copied from that window as a marker, markerBase plus the byte's index in the window, into
// 16-bit output; the markers are filled in once the window is known (resolveMarked). Where the
// last 32 KiB of a chunk's output hold no marker, the rest of it is decoded into bytes.
//
// What it accepts is what compress/flate accepts: the same Huffman codes (complete, or a single
// code of one bit), the same limits on the counts of codes, the same checks of stored blocks and
// of distances.

const (
	winSize    = 32768 // DEFLATE's window
	markerBase = 256   // a 16-bit output value at or above it is a byte of the unknown window
	tableBits  = 10    // bits of a Huffman table's first level
	maxCodeLen = 15
)

var (
	errCorrupt = errors.New("corrupt deflate block")
	errShort   = errors.New("deflate block runs past its input")
	errTooBig  = errors.New("deflate block over the output limit")
)

// huffTable decodes one Huffman code. An entry holds the code's length (bits 0-3; 0 for a code
// that is not assigned) and its symbol (bits 16-31); an entry of the first level with linkFlag
// holds instead the start of a second-level table in sub (bits 16-31) and that table's bits (bits
// 8-11), looked up by the bits after the first tableBits.
type huffTable struct {
	primary [1 << tableBits]uint32
	sub     []uint32
}

const linkFlag = 0x10

var zeroEntries [1 << (maxCodeLen - tableBits)]uint32

// codeOK reports whether code lengths of these counts (count[l] codes of l bits) are a code
// compress/flate accepts: complete, or a single code of one bit (zlib's degenerate code), or none.
func codeOK(count *[maxCodeLen + 1]int) bool {
	maxLen := 0
	sum := 0 // the Kraft sum in units of 2^-maxCodeLen
	for l := 1; l <= maxCodeLen; l++ {
		if count[l] != 0 {
			maxLen = l
			sum += count[l] << (maxCodeLen - l)
		}
	}
	return maxLen == 0 || sum == 1<<maxCodeLen || (maxLen == 1 && count[1] == 1)
}

// build makes h decode the canonical code of these lengths; it reports false where compress/flate
// would refuse them (codeOK). An empty code builds a table every lookup of which fails.
func (h *huffTable) build(lengths []uint8) bool {
	var count [maxCodeLen + 1]int
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	if !codeOK(&count) {
		return false
	}
	clear(h.primary[:])
	h.sub = h.sub[:0]
	maxLen := 0
	for l := maxCodeLen; l > 0; l-- {
		if count[l] != 0 {
			maxLen = l
			break
		}
	}
	var next [maxCodeLen + 1]int
	code := 0
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	subBits := max(maxLen-tableBits, 0)
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		r := int(bits.Reverse16(uint16(c)) >> (16 - l))
		e := uint32(sym)<<16 | uint32(l)
		if int(l) <= tableBits {
			for i := r; i < 1<<tableBits; i += 1 << l {
				h.primary[i] = e
			}
			continue
		}
		lo := r & (1<<tableBits - 1)
		link := h.primary[lo]
		if link == 0 {
			link = uint32(len(h.sub))<<16 | linkFlag | uint32(subBits)<<8
			h.sub = append(h.sub, zeroEntries[:1<<subBits]...)
			h.primary[lo] = link
		}
		base := int(link >> 16)
		for i := r >> tableBits; i < 1<<subBits; i += 1 << (int(l) - tableBits) {
			h.sub[base+i] = e
		}
	}
	return true
}

// lookup returns the entry of the code at the start of b.
func (h *huffTable) lookup(b uint64) uint32 {
	e := h.primary[b&(1<<tableBits-1)]
	if e&linkFlag != 0 {
		e = h.sub[e>>16+uint32(b>>tableBits)&(1<<(e>>8&15)-1)]
	}
	return e
}

// bitReader reads src's bits, lowest first, from any bit. Past the end it reads zero bits, and
// past it by more than a word refill reports false, so that no loop runs on without input.
type bitReader struct {
	src []byte
	pos int    // the next byte of src to load
	b   uint64 // loaded bits not yet consumed, the next lowest
	n   uint   // how many
}

func (r *bitReader) seek(bit int) {
	r.pos, r.b, r.n = bit>>3, 0, 0
	r.refill()
	r.b >>= uint(bit & 7)
	r.n -= uint(bit & 7)
}

// bit is the position of the next bit to consume.
func (r *bitReader) bit() int { return r.pos*8 - int(r.n) }

// refill loads bits until at least 56 are held; false once it has read a word past src's end.
func (r *bitReader) refill() bool {
	if r.pos+8 <= len(r.src) {
		r.b |= binary.LittleEndian.Uint64(r.src[r.pos:]) << r.n
		r.pos += int(63-r.n) >> 3
		r.n |= 56
		return true
	}
	return r.refillEnd()
}

// refillEnd is refill near src's end, a byte at a time. (Not inlined, so that refill is.)
//
//go:noinline
func (r *bitReader) refillEnd() bool {
	for r.n <= 56 {
		if r.pos < len(r.src) {
			r.b |= uint64(r.src[r.pos]) << r.n
		} else if r.pos > len(r.src)+8 {
			return false
		}
		r.pos++
		r.n += 8
	}
	return true
}

func (r *bitReader) take(n uint) uint64 {
	v := r.b & (1<<n - 1)
	r.b >>= n
	r.n -= n
	return v
}

// inflater holds the tables of the block being decoded.
type inflater struct {
	lit, dist, cl huffTable
	lens          [286 + 30]uint8
	fixed         bool // lit and dist hold the fixed code
}

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

var fixedTables = sync.OnceValue(func() *inflater {
	f := new(inflater)
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	f.lit.build(l[:])
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	f.dist.build(d[:])
	return f
})

// blockHeader reads a block's header at r: its final flag and type, and for a dynamic block its
// codes into f's tables. For a stored block it reads up to its length and checks it, leaving r at
// its first byte, and returns the length. strict (for findBlock) also wants the padding before
// a stored block's length zero and a dynamic block to have an end-of-block code.
func (f *inflater) blockHeader(r *bitReader, strict bool) (final bool, typ int, stored int, err error) {
	if !r.refill() {
		return false, 0, 0, errShort
	}
	final = r.take(1) == 1
	typ = int(r.take(2))
	switch typ {
	case 0:
		pad := r.n & 7
		if r.take(pad) != 0 && strict {
			return final, typ, 0, errCorrupt
		}
		v := r.take(32)
		n, nn := uint16(v), uint16(v>>16)
		if r.bit() > 8*len(r.src) {
			return final, typ, 0, errShort
		}
		if n != ^nn {
			return final, typ, 0, errCorrupt
		}
		// Back to whole bytes: the rest of the held bits are the block's first bytes.
		r.pos -= int(r.n >> 3)
		r.b, r.n = 0, 0
		return final, typ, int(n), nil
	case 1:
		f.fixed = true
		return final, typ, 0, nil
	case 2:
		f.fixed = false
		err := f.dynamicHeader(r, strict)
		if r.bit() > 8*len(r.src) {
			err = errShort
		}
		return final, typ, 0, err
	}
	return final, typ, 0, errCorrupt
}

func (f *inflater) dynamicHeader(r *bitReader, strict bool) error {
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	nclen := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errCorrupt
	}
	var cl [19]uint8
	var count [maxCodeLen + 1]int
	for i := 0; i < nclen; i++ {
		if r.n < 3 && !r.refill() {
			return errShort
		}
		l := uint8(r.take(3))
		cl[clOrder[i]] = l
		count[l]++
	}
	count[0] = 0
	if !codeOK(&count) {
		return errCorrupt
	}
	f.cl.build(cl[:])
	lens := f.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if r.n < 16 && !r.refill() {
			return errShort
		}
		e := f.cl.lookup(r.b)
		l := uint(e & 15)
		if l == 0 {
			return errCorrupt
		}
		r.take(l)
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var v uint8
		switch sym {
		case 16:
			if i == 0 {
				return errCorrupt
			}
			v = lens[i-1]
			rep = 3 + int(r.take(2))
		case 17:
			rep = 3 + int(r.take(3))
		default:
			rep = 11 + int(r.take(7))
		}
		if i+rep > len(lens) {
			return errCorrupt
		}
		for range rep {
			lens[i] = v
			i++
		}
	}
	if strict && lens[256] == 0 {
		return errCorrupt
	}
	if !f.lit.build(lens[:nlit]) || !f.dist.build(lens[nlit:]) {
		return errCorrupt
	}
	return nil
}

// inflateBlock decodes the block at bit pos of src, appending its bytes to out, which holds the
// window before them (out may be longer than a window). It returns the bit after the block, out
// with its new length, and whether the block was the last of its stream; on an error, out as it
// was (none of the block's bytes). errShort means src ends within the block; errTooBig that out
// would grow past limit bytes (at most a length's 258 past it).
func inflateBlock[T byte | uint16](f *inflater, src []byte, pos int, out []T, strict bool, limit int) (int, []T, bool, error) {
	n0 := len(out)
	r := bitReader{src: src}
	r.seek(pos)
	final, typ, stored, err := f.blockHeader(&r, strict)
	if err != nil {
		return pos, out, final, err
	}
	if typ == 0 {
		if r.pos+stored > len(src) {
			return pos, out, final, errShort
		}
		if len(out)+stored > limit {
			return pos, out, final, errTooBig
		}
		for _, c := range src[r.pos : r.pos+stored] {
			out = append(out, T(c))
		}
		return (r.pos + stored) * 8, out, final, nil
	}
	lit, dist := &f.lit, &f.dist
	if f.fixed {
		t := fixedTables()
		lit, dist = &t.lit, &t.dist
	}
	n := len(out)
	out = out[:cap(out)]
	for {
		if r.n < 48 {
			// refill, written out: it is not inlined.
			if r.pos+8 <= len(src) {
				r.b |= binary.LittleEndian.Uint64(src[r.pos:]) << r.n
				r.pos += int(63-r.n) >> 3
				r.n |= 56
			} else if !r.refillEnd() {
				return pos, out[:n0], final, errShort
			}
		}
		e := lit.lookup(r.b)
		l := uint(e & 15)
		if l == 0 {
			return pos, out[:n0], final, errCorrupt
		}
		r.b >>= l
		r.n -= l
		sym := e >> 16
		if sym < 256 {
			if n >= len(out) {
				if n >= limit {
					return pos, out[:n0], final, errTooBig
				}
				out = growOut(out, n, 1, limit)
			}
			out[n] = T(sym)
			n++
			continue
		}
		if sym == 256 {
			break
		}
		sym -= 257
		if sym >= 29 {
			return pos, out[:n0], final, errCorrupt
		}
		x := uint(lenExtra[sym])
		length := int(lenBase[sym]) + int(r.b&(1<<x-1))
		r.b >>= x
		r.n -= x
		e = dist.lookup(r.b)
		l = uint(e & 15)
		if l == 0 {
			return pos, out[:n0], final, errCorrupt
		}
		r.b >>= l
		r.n -= l
		ds := e >> 16
		if ds >= 30 {
			return pos, out[:n0], final, errCorrupt
		}
		x = uint(distExtra[ds])
		d := int(distBase[ds]) + int(r.b&(1<<x-1))
		r.b >>= x
		r.n -= x
		if d > n {
			return pos, out[:n0], final, errCorrupt
		}
		if n+length > len(out) {
			if n >= limit {
				return pos, out[:n0], final, errTooBig
			}
			out = growOut(out, n, length, limit)
		}
		if length > 32 && d >= length {
			copy(out[n:n+length], out[n-d:])
		} else {
			// Short copies (most of them) in a loop rather than memmove's call; forward, which
			// is also what an overlapping copy (d < length) means.
			o := out[n-d : n-d+length]
			for i, v := range o {
				out[n+i] = v
			}
		}
		n += length
	}
	end := r.bit()
	if end > len(src)*8 {
		return pos, out[:n0], final, errShort
	}
	return end, out[:n], final, nil
}

// growOut returns out, whose first n are kept, with room for at least k more, and for no more
// than limit in all where k leaves room.
func growOut[T byte | uint16](out []T, n, k, limit int) []T {
	c := max(min(max(2*cap(out), 1<<16), limit), n+k)
	o := make([]T, c)
	copy(o, out[:n])
	return o
}
