package cpu

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// The keyed search is the forward search from a pattern's first K-mer with one more array: beside
// each suffix-array row the row's key, the symbols that follow its first K as a 32-bit number
// (see RowKeys; an index file holds them, else they are computed), in keyedIndex.rows. A K-mer's
// rows are adjacent and sorted, and so are their keys, so the rows whose next symbols are the
// pattern's are a run of them, found in the cache line or two that holds the K-mer's rows with
// their text positions, instead of by reading the text of every row. In E. coli a 10-mer has
// about ten rows and a 25-mer almost always one: a
// pattern then costs three dependent memory accesses (k-mer table, rows, text), where the search
// of fmsearch_forward.go makes one more for the suffix array and reads the text of every row of
// the K-mer it chose. (The text packed two bits a base was tried for the last step: fewer cache
// lines, but packing each pattern cost more than they saved.)
//
// SearchLetters runs the same search on patterns that are not encoded, their letters as read,
// over a copy of a DNA text in letters (keyedIndex.letters): the K-mer and the key are computed
// from the letters, eight at a time, and the comparison with the text is of eight letters at a
// time, in either case (see letterBits8 and equalLetters), which spares the caller encoding
// every byte of its input.
//
// A key is the digits of the keyLen symbols after the row's first K (base sigma-2, the first most
// significant, 15 of them for DNA), times two, plus one when the key is exact: all of them there
// and matchable. A row whose symbols run into a separator or the end of the text takes digit 0
// from there on and is not exact (the least key of the suffixes that share what it has before),
// which keeps the keys of a K-mer's rows in order. The table and an exact key vouch for the
// first K+keyLen symbols of a row, which the comparison with the text then skips; a row of an
// inexact key is compared whole.

// keyedIndex is what the keyed search reads beyond the k-mer table and the text.
type keyedIndex struct {
	k      int      // the k-mer table's K: a key starts K symbols into its row's suffix
	keyLen int      // symbols a key holds (15 for DNA)
	base   int      // matchable symbols
	rows   []uint64 // row r: its key << 32 | SA[r]
	// For DNA (base 4): the text as the letters a, c, g, t, 0 for a separator, which
	// SearchLetters compares patterns of letters with.
	letters []byte
	// The K-mer table refined by the first sub digits of the keys, for fewer rows to narrow:
	// for K-mer c, whose rows are [lo, hi), and each string d of sub symbols (in base `base`, the
	// first most significant), table[c*(parts+1)+d] is the first of its rows whose key starts
	// with d or a later string, and table[c*(parts+1)+parts] is hi, so that the rows of the
	// string c·d are [table[j], table[j+1]) for j = c*(parts+1)+d (parts = base^sub). subDiv is
	// 2*base^(keyLen-sub): a key divided by it gives those digits.
	sub      int
	subDiv   uint64
	subShift int // log2 of subDiv when base is a power of two (a shift for a division), else -1
	table    []int32
}

// maxSubEntries bounds the refined table: at most as many strings as the text has symbols (as
// many bytes of table as the rows take), and at most 2^26 of them.
const maxSubEntries = 1 << 26

// KeyLength returns how many symbols a row's key holds for an alphabet of base matchable symbols:
// as many digits of base as fit in 31 bits (15 for DNA), or 0 when that is no use.
func KeyLength(base int) int {
	if base < 2 {
		return 0
	}
	m, v := 0, uint64(1)
	for v*uint64(base) < 1<<31 {
		v *= uint64(base)
		m++
	}
	return m
}

// keyAhead is how many rows ahead the keys' computation asks for a row's text.
const keyAhead = 64

// RowKeys returns the key of every row of p (see the top of this file) for the K-mers of kt (K
// and the alphabet), on up to threads goroutines: for an index file, which then saves every
// search the work (the rows' texts read at random, tens of milliseconds on E. coli). nil when
// keys would be of no use.
func RowKeys(p *Page, kt *KmerTable, threads int) []int32 {
	m := KeyLength(kt.base)
	if m == 0 || kt.K == 0 {
		return nil
	}
	keys := make([]int32, len(p.sa))
	storeParallel(len(keys), threads, func(_, lo, hi int) error {
		var pf prefetcher
		for r := lo; r < hi; r++ {
			keyPrefetch(&pf, p, kt.K, r, hi)
			keys[r] = int32(rowKey(p.w, int(p.sa[r])+kt.K, m, kt.base))
		}
		return nil
	})
	return keys
}

// keyPrefetch asks, every eight rows, for the texts of the eight rows keyAhead further on (before
// end), so that many of the rows' texts, read at random, are in flight at once (twice as fast).
func keyPrefetch(pf *prefetcher, p *Page, k, r, end int) {
	if r%8 != 0 {
		return
	}
	for a := r + keyAhead; a < min(r+keyAhead+8, end); a++ {
		if q := int(p.sa[a]) + k; q < len(p.w) {
			pf.add(unsafe.Pointer(&p.w[q]))
		}
	}
	pf.flush()
}

// rowKey returns the key of the symbols of w from q on: their m digits in base base, times two,
// plus one if the key is exact (see the top of this file).
func rowKey(w []byte, q, m, base int) uint32 {
	if base == 4 && m == 15 && q+16 <= len(w) {
		a, oka := dnaBits8(binary.BigEndian.Uint64(w[q:]))
		b, okb := dnaBits8(binary.BigEndian.Uint64(w[q+8:]))
		if oka && okb { // 16 bases, of which the key holds 15
			return uint32(a<<16|b)>>2<<1 | 1
		}
	}
	key, pad := uint32(0), false
	for i := range m {
		d := 0
		if x := q + i; !pad && x < len(w) && int(w[x]) >= kernels.FirstCode && int(w[x]) < kernels.FirstCode+base {
			d = int(w[x]) - kernels.FirstCode
		} else {
			pad = true
		}
		key = key*uint32(base) + uint32(d)
	}
	if pad {
		return key << 1
	}
	return key<<1 | 1
}

// buildKeyedIndex builds the keyed search's arrays for p and its k-mer table kt (with its rows'
// keys, or else computing them), on up to threads goroutines; nil when keys would be of no use.
// Only the rows of K-mers get keys: the search never reads the others.
func buildKeyedIndex(p *Page, kt *KmerTable, threads int) *keyedIndex {
	m := KeyLength(kt.base)
	if m == 0 {
		return nil
	}
	w, sa, k := p.w, p.sa, kt.K
	kmers := len(kt.Rows) / 2
	x := &keyedIndex{k: k, keyLen: m, base: kt.base, rows: hugeSlice[uint64](len(sa))}
	parts := x.refinement(kmers, len(w))
	x.table = hugeSlice[int32](kmers * (parts + 1))
	if x.base == 4 {
		x.letters = hugeSlice[byte](len(w))
		storeParallel(len(w), threads, func(_, lo, hi int) error {
			for i, c := range w[lo:hi] {
				if c -= kernels.FirstCode; c < 4 {
					x.letters[lo+i] = "acgt"[c]
				}
			}
			return nil
		})
	}
	keys := kt.Keys
	// Each K-mer's rows, and in the same pass its part of the refined table.
	storeParallel(kmers, threads, func(_, lo, hi int) error {
		var pf prefetcher
		for c := lo; c < hi; c++ {
			start, end := kt.Rows[2*c], kt.Rows[2*c+1]
			t := x.table[c*(parts+1) : (c+1)*(parts+1)]
			d := 0
			for r := start; r < end; r++ {
				var key uint32
				if keys != nil {
					key = uint32(keys[r])
				} else {
					keyPrefetch(&pf, p, k, int(r), len(sa))
					key = rowKey(w, int(sa[r])+k, m, x.base)
				}
				x.rows[r] = uint64(key)<<32 | uint64(uint32(sa[r]))
				// The keys are in order within the K-mer: r is the first row of the strings
				// of sub symbols up to its own.
				for sub := int(x.subDigits(uint64(key))); d <= sub; d++ {
					t[d] = r
				}
			}
			for ; d <= parts; d++ {
				t[d] = end
			}
		}
		return nil
	})
	return x
}

// refinement sets how many digits of the keys refine the table of kmers K-mers over a text of n
// symbols (sub, subDiv, subShift), and returns base^sub.
func (x *keyedIndex) refinement(kmers, n int) int {
	parts := 1 // strings of sub symbols after a K-mer
	for x.sub < x.keyLen && kmers*parts*x.base <= min(n, maxSubEntries) {
		x.sub++
		parts *= x.base
	}
	x.subDiv = 2 // the exact bit
	for range x.keyLen - x.sub {
		x.subDiv *= uint64(x.base)
	}
	x.subShift = -1
	if x.base&(x.base-1) == 0 {
		x.subShift = bits.TrailingZeros64(x.subDiv)
	}
	return parts
}

// rowPos returns the text position of a row of keyedIndex.rows.
func rowPos(v uint64) int { return int(uint32(v)) }

// rowExact reports whether the key of a row of keyedIndex.rows is exact.
func rowExact(v uint64) bool { return v>>32&1 != 0 }

// patternKeys returns the range [lo, hi) of the keys of the rows whose suffix from offset K on
// starts with pat (the pattern's symbols after its first K), and false when pat holds a symbol
// that never matches.
func (x *keyedIndex) patternKeys(pat []byte, letters bool) (lo, hi uint64, ok bool) {
	m, base := x.keyLen, uint64(x.base)
	if base == 4 && m == 15 && len(pat) >= 16 {
		u, v := binary.BigEndian.Uint64(pat), binary.BigEndian.Uint64(pat[8:])
		var a, b int
		var oka, okb bool
		if letters {
			a, oka = letterBits8(u)
			b, okb = letterBits8(v)
		} else {
			a, oka = dnaBits8(u)
			b, okb = dnaBits8(v)
		}
		// The 16th symbol is the pattern's too: one that never matches is no match anyway.
		lo = uint64(a<<16|b) >> 2 << 1
		return lo, lo + 2, oka && okb
	}
	var key uint64
	p := min(len(pat), m)
	for _, c := range pat[:p] {
		d := uint64(c) - kernels.FirstCode
		if letters {
			d = uint64(letterDigit[c])
		}
		if d >= base {
			return 0, 0, false
		}
		key = key*base + d
	}
	span := uint64(2)
	for range m - p {
		key *= base
		span *= base
	}
	return 2 * key, 2*key + span, true
}

// keyScan is the most rows whose keys narrow scans; it binary searches more.
const keyScan = 64

// narrow returns the rows [a, b) within [lo, hi) whose keys lie in [klo, khi).
func (x *keyedIndex) narrow(lo, hi int32, klo, khi uint64) (int32, int32) {
	rows := x.rows
	if hi-lo <= keyScan {
		// The keys are in order: count those below each bound, without branches.
		a, b := lo, lo
		for _, v := range rows[lo:hi] {
			key := v >> 32
			if key < klo {
				a++
			}
			if key < khi {
				b++
			}
		}
		return a, b
	}
	return x.lowerKey(lo, hi, klo), x.lowerKey(lo, hi, khi)
}

// lowerKey returns the first row of [lo, hi) whose key is at least key, or hi.
func (x *keyedIndex) lowerKey(lo, hi int32, key uint64) int32 {
	for lo < hi {
		mid := int32(uint32(lo+hi) >> 1)
		if x.rows[mid]>>32 < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// keySlot is one pattern in the keyed pipeline.
type keySlot struct {
	live     bool
	idx      int32  // the pattern's index
	from, to int32  // its codes in Patterns.Codes
	code     int32  // its first K-mer
	lo, hi   int32  // rows: of the K-mer, then of the keys
	skip     int32  // the symbols the comparison with a row of an exact key skips
	klo, khi uint64 // the keys of the pattern's next symbols
}

// subDigits returns the first sub digits of a key.
func (x *keyedIndex) subDigits(key uint64) uint64 {
	if x.subShift >= 0 {
		return key >> uint(x.subShift)
	}
	return key / x.subDiv
}

// table2Parts returns base^sub: the strings of sub symbols that refine a K-mer.
func (x *keyedIndex) table2Parts() uint64 {
	p := uint64(1)
	for range x.sub {
		p *= uint64(x.base)
	}
	return p
}

// keyStages is the depth of the keyed pipeline: codes, k-mer table, rows, text.
const keyStages = 4

// searchKeyed settles every pattern of b that the keyed search can (see above), writing its
// outcome to iv, and appends the indices of the others (shorter than K, or with more than
// fwdMaxRows rows left after the keys) to rest, which it returns.
// With letters, b holds letters rather than codes (see SearchLetters; x.letters is not nil), and
// with starts, pattern i is b.Codes[starts[i]:b.Ends[i]].
func (p *Page) searchKeyed(b *kernels.Patterns, starts []int, kt *KmerTable, x *keyedIndex, letters, seps bool, iv []Interval, rest []int32, pf *prefetcher) []int32 {
	var ring [fwdRing]keySlot
	np := b.Len()
	codes, ends := b.Codes, b.Ends
	table, rows, w := x.table, x.rows, p.w
	k2, parts := kt.K+x.sub, int(x.table2Parts())
	if letters {
		w = x.letters
	}
	k := kt.K
	dna := kt.base == 4 && k >= 8 && k <= 16
	dnaShift := uint(2*k-16) & 63
	dnaMask := 1<<dnaShift - 1
	for t := 0; t < np+(keyStages-1)*fwdDist; t++ {
		// Stage 4: compare the pattern with the text of the rows left (asked for by stage 3).
		// Those rows hold the pattern's interval: the rows whose text is the pattern are a run.
		if sl := &ring[(t-3*fwdDist)&(fwdRing-1)]; t >= 3*fwdDist && sl.live {
			pat := codes[sl.from:sl.to]
			first, last := int32(-1), int32(-2)
			for r := sl.lo; r < sl.hi; r++ {
				q, from := rowPos(rows[r]), int(sl.skip)
				if !rowExact(rows[r]) {
					from = 0
				}
				if q+len(pat) > len(w) {
					continue
				}
				var eq bool
				if letters {
					eq = equalLetters(w[q+from:q+len(pat)], pat[from:])
				} else {
					// The text holds separators (CodeNone), which never match.
					eq = bytes.Equal(w[q+from:q+len(pat)], pat[from:]) && !(seps && bytes.IndexByte(pat, kernels.CodeNone) >= 0)
				}
				if eq {
					if first < 0 {
						first = r
					}
					last = r
				}
			}
			if first < 0 {
				iv[sl.idx] = Interval{}
			} else {
				iv[sl.idx] = Interval{Lo: first, Hi: last + 1}
			}
		}
		// Stage 3: the K-mer's rows (asked for by stage 2): keep those whose keys are the
		// pattern's and ask for their text.
		if sl := &ring[(t-2*fwdDist)&(fwdRing-1)]; t >= 2*fwdDist && sl.live {
			a, b := x.narrow(sl.lo, sl.hi, sl.klo, sl.khi)
			l := int(sl.to - sl.from)
			switch {
			case a >= b:
				iv[sl.idx] = Interval{}
				sl.live = false
			case b-a > fwdMaxRows:
				rest = append(rest, sl.idx)
				sl.live = false
			default:
				// The table and an exact key vouch for the first skip symbols of a row: only
				// the rest is compared, and nothing when that is all.
				sl.lo, sl.hi = a, b
				skip, exact := min(l, k+x.keyLen), true
				for r := a; r < b; r++ {
					q, from := rowPos(rows[r]), skip
					if !rowExact(rows[r]) {
						from, exact = 0, false
					}
					if q+l > len(w) || from == l {
						continue
					}
					end := min(q+l, q+from+fwdSpan)
					for a := q + from; a < end; a += 64 {
						pf.add(unsafe.Pointer(&w[a]))
					}
					pf.add(unsafe.Pointer(&w[end-1]))
				}
				sl.skip = int32(skip)
				if exact && skip == l {
					iv[sl.idx] = Interval{Lo: a, Hi: b}
					sl.live = false
				}
			}
		}
		// Stage 2: the K-mer's rows in the table (asked for by stage 1): ask for their keys.
		if sl := &ring[(t-fwdDist)&(fwdRing-1)]; t >= fwdDist && sl.live {
			lo, hi := table[sl.code], table[sl.code+1]
			switch {
			case lo >= hi:
				iv[sl.idx] = Interval{}
				sl.live = false
			default:
				sl.lo, sl.hi = lo, hi
				if hi-lo <= keyScan {
					for r := lo; r < hi; r += 8 {
						pf.add(unsafe.Pointer(&rows[r]))
					}
				} else {
					pf.add(unsafe.Pointer(&rows[lo+(hi-lo)/2]))
				}
				pf.add(unsafe.Pointer(&rows[hi-1]))
			}
		}
		// Stage 1: the next pattern's K-mer code and keys; ask for its table entry.
		if sl := &ring[t&(fwdRing-1)]; t < np {
			sl.live = false
			from := 0
			if starts != nil {
				from = starts[t]
			} else if t > 0 {
				from = ends[t-1]
			}
			to := ends[t]
			// A batch of patterns is larger than the cache: ask for the end of a later one.
			if ta := t + fwdDist; ta < np {
				if e := ends[ta]; e > 0 {
					pf.add(unsafe.Pointer(&codes[e-1]))
				}
			}
			if l := to - from; l < k2 {
				if l == 0 {
					iv[t] = Interval{}
				} else {
					rest = append(rest, int32(t))
				}
			} else {
				pat := codes[from:to]
				var code int
				ok := true
				switch {
				case dna && letters:
					hi, okh := letterBits8(binary.BigEndian.Uint64(pat))
					lo, okl := letterBits8(binary.BigEndian.Uint64(pat[k-8:]))
					code, ok = hi<<dnaShift|lo&dnaMask, okh && okl
				case dna:
					hi, okh := dnaBits8(binary.BigEndian.Uint64(pat))
					lo, okl := dnaBits8(binary.BigEndian.Uint64(pat[k-8:]))
					code, ok = hi<<dnaShift|lo&dnaMask, okh && okl
				case letters:
					code, ok = letterCode(pat[:k])
				default:
					code, ok = kt.code(pat[:k])
				}
				klo, khi, okk := x.patternKeys(pat[k:], letters)
				if ok && okk {
					// The K2-mer: the K-mer and the first digits of the key.
					code = code*(parts+1) + int(x.subDigits(klo))
					sl.live = true
					sl.idx, sl.from, sl.to = int32(t), int32(from), int32(to)
					sl.code, sl.klo, sl.khi = int32(code), klo, khi
					pf.add(unsafe.Pointer(&table[code]))
				} else {
					iv[t] = Interval{}
				}
			}
		}
		pf.flush()
	}
	return rest
}

// Patterns of letters (SearchLetters) are read without encoding them: a, c, g and t in either
// case are the digits 0 to 3, anything else matches nothing. The letters text holds a, c, g, t
// and 0 for a separator, so that a pattern's byte with the lower-case bit set is equal to the
// text's byte exactly when it is the same base in either case.

// letterDigit is the digit of each byte: 0 to 3 for a, c, g, t in either case, 255 otherwise.
var letterDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 255
	}
	for d, c := range []byte("acgt") {
		t[c], t[c-'a'+'A'] = byte(d), byte(d)
	}
	return t
}()

// letterBits8 is dnaBits8 of the eight letters of v (the first most significant): their digits
// two bits each, and false if one is not a, c, g or t in either case.
func letterBits8(v uint64) (int, bool) {
	x := v | 0x2020202020202020             // lower case; only a letter's upper case shares it
	d := (x>>1 ^ x>>2) & 0x0303030303030303 // a 0, c 1, g 2, t 3 (and something for any byte)
	// The letter of each digit: a + 2d, + 2 for g and t, + 11 more for t.
	ok := x == 0x6161616161616161+2*d+d&0x0202020202020202+11*(d&(d>>1)&0x0101010101010101)
	d = (d | d>>6) & 0x000f000f000f000f
	d = (d | d>>12) & 0x000000ff000000ff
	return int((d | d>>24) & 0xffff), ok
}

// letterCode returns the k-mer code of the letters pat, and false if one is not a base.
func letterCode(pat []byte) (int, bool) {
	code, bad := 0, byte(0)
	for _, c := range pat {
		d := letterDigit[c]
		bad |= d
		code = code<<2 | int(d&3)
	}
	return code, bad < 4
}

// equalLetters reports whether the pattern of letters pat is the letters text (len(text) ==
// len(pat)).
func equalLetters(text, pat []byte) bool {
	const lower = 0x2020202020202020
	n := len(pat)
	if n < 8 {
		for i, c := range pat {
			if c|0x20 != text[i] {
				return false
			}
		}
		return true
	}
	for i := 0; i < n-8; i += 8 {
		if binary.LittleEndian.Uint64(pat[i:])|lower != binary.LittleEndian.Uint64(text[i:]) {
			return false
		}
	}
	return binary.LittleEndian.Uint64(pat[n-8:])|lower == binary.LittleEndian.Uint64(text[n-8:])
}
