package cpu

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// The forward search looks a pattern's occurrences up among the suffix-array rows of one of its
// K-mers, from the k-mer table: every occurrence of the pattern at q holds the K-mer at q+j, so
// it is one of those rows, and the pattern occurs at SA[r]-j for the rows r whose text from
// SA[r]-j is the pattern. In a genome most K-mers occur a handful of times, and of a few K-mers
// of a pattern (fwdKmers: its first, its last, maybe some between) the one with the fewest rows has
// fewer still. That is a short chain of dependent memory accesses (table, suffix array, the texts
// of all rows at once), where a backward search makes one or two per step for several steps and
// then still checks the text.
//
// With the first K-mer (j = 0) the matching rows are adjacent, the rows of the pattern's own
// interval. With another, they need not be: the search settles a pattern so only when it occurs
// at most once (Shift = j for its one row). Patterns that occur more than once there, whose
// K-mers all have many rows (repeats), that are shorter than K, or with no table go to the
// backward search.
//
// The accesses of many patterns overlap: the stages are software pipelined, each working on the
// pattern fwdDist patterns behind the one of the stage before, whose memory that stage asked for
// (see prefetcher) fwdDist steps earlier, so that by the time a stage reads a table entry, suffix
// array entry or text, it has arrived. Each step asks for a dozen cache lines, evenly over the
// run: a burst of hundreds overflows the processor's queue of misses, which then drops
// prefetches (measured on AMD: the text loads waited as if never asked for).

const (
	// fwdDist is how many patterns apart the stages work: enough that the work on them hides
	// the latency of the loads a stage asked for the next.
	fwdDist = 8
	// fwdRing holds the patterns in the pipeline: a power of two above (fwdStages-1)*fwdDist.
	fwdRing = 64
	// fwdMaxRows is the most table rows a forward search scans (at most 64: a slot's row mask);
	// more go to the backward search, which narrows a repeat's rows in a few steps instead of
	// comparing the text of each.
	fwdMaxRows = 64
	// fwdKmers is how many of a pattern's K-mers the search looks up to choose the one with the
	// fewest rows: E. coli's 10-mers give 9.8 rows a pattern from the first alone, 5.9 from the
	// first and last, 3.9 from four; measured, four cost as much more in codes and lookups as
	// they save in rows.
	fwdKmers = 2
	// fwdStages is the depth of the pipeline: k-mer codes, table, suffix array, a first check of
	// a few codes of each row's text, the whole pattern against the rows that passed.
	fwdStages = 5
	// fwdHead is how many codes next to the k-mer the first check compares.
	fwdHead = 8
	// fwdSpan bounds the text of a row asked for before the whole pattern is compared with it.
	fwdSpan = 4 * 64
	// prefetchMax bounds the cache lines one step of the pipeline asks for: a later pattern's
	// ends, the K-mers, two suffix array lines, two lines of each row's first check, and the
	// text of each row that passes it.
	prefetchMax = 2 + fwdKmers + 2 + 2*fwdMaxRows + (fwdSpan/64+1)*fwdMaxRows
)

// fwdSlot is one pattern in the forward pipeline.
type fwdSlot struct {
	live   bool  // the pattern is still being searched
	idx    int32 // the pattern's index
	from   int32 // its first code in Patterns.Codes
	to     int32 // its end
	j      int32 // the offset of the chosen K-mer in the pattern
	lo, hi int32 // the chosen K-mer's rows
	head   int32 // offset in the pattern of the fwdHead codes of the first check; -1: none
	rows   uint64
	codes  [fwdKmers]int32 // the codes of the K-mers at kmerOffset(q)
}

// kmerOffset returns the offset of the q-th K-mer looked up in a pattern of length l >= k.
func kmerOffset(q, l, k int) int {
	return q * (l - k) / (fwdKmers - 1)
}

// searchForward settles every pattern of b (those whose indices are in order, if not nil) that a
// forward search can (see above), writing its outcome to iv, and appends the indices of the others
// to rest, which it returns. With firstOnly it looks up only the first K-mer of each pattern;
// seps tells whether the text holds separators.
func (p *Page) searchForward(b *kernels.Patterns, kt *KmerTable, order []int32, firstOnly, seps bool, iv []Interval, rest []int32, pf *prefetcher) []int32 {
	var ring [fwdRing]fwdSlot
	np := b.Len()
	if order != nil {
		np = len(order)
	}
	nk := fwdKmers
	if firstOnly {
		nk = 1
	}
	codes, ends := b.Codes, b.Ends
	table, sa, w := kt.Rows, p.sa, p.w
	k := kt.K
	// DNA K-mers of 8 to 16 codes: from two overlapping 8-byte loads (see KmerTable.code).
	dna := kt.base == 4 && k >= 8 && k <= 16
	dnaShift := uint(2*k-16) & 63
	dnaMask := 1<<dnaShift - 1
	for t := 0; t < np+(fwdStages-1)*fwdDist; t++ {
		// Stage 5: compare the whole pattern with the text of the rows that passed stage 4.
		if sl := &ring[(t-4*fwdDist)&(fwdRing-1)]; t >= 4*fwdDist && sl.live {
			sl.live = false
			pat := codes[sl.from:sl.to]
			first, last, found := int32(-1), int32(-1), 0
			for m := sl.rows; m != 0; m &= m - 1 {
				r := sl.lo + int32(bits.TrailingZeros64(m))
				q := int(sa[r]) - int(sl.j)
				if bytes.Equal(w[q:q+len(pat)], pat) {
					if first < 0 {
						first = r
					}
					last = r
					found++
				}
			}
			settle(sl, pat, first, last, found, seps, iv, &rest)
		}
		// Stage 4: check fwdHead codes next to the k-mer in each row's text (asked for by stage
		// 3); ask for the whole text of the rows that pass.
		if sl := &ring[(t-3*fwdDist)&(fwdRing-1)]; t >= 3*fwdDist && sl.live {
			pat := codes[sl.from:sl.to]
			l, jj := len(pat), int(sl.j)
			var want uint64
			if sl.head >= 0 {
				want = binary.LittleEndian.Uint64(pat[sl.head:])
			}
			rows := uint64(0)
			if sl.head >= 0 {
				// Without branches on the outcome, which is a guess's toss.
				for r := sl.lo; r < sl.hi; r++ {
					q := int(sa[r]) - jj
					if q < 0 || q+l > len(w) {
						continue
					}
					pass := uint64(0)
					if binary.LittleEndian.Uint64(w[q+int(sl.head):]) == want {
						pass = 1
					}
					rows |= pass << uint(r-sl.lo)
				}
			} else {
				for r := sl.lo; r < sl.hi; r++ {
					if q := int(sa[r]) - jj; q >= 0 && q+l <= len(w) {
						rows |= 1 << uint(r-sl.lo)
					}
				}
			}
			for m := rows; m != 0; m &= m - 1 {
				q := int(sa[sl.lo+int32(bits.TrailingZeros64(m))]) - jj
				// The first lines only: a long pattern's compare goes on through the text in
				// order, which the processor prefetches itself.
				end := min(q+l, q+fwdSpan)
				for a := q; a < end; a += 64 {
					pf.add(unsafe.Pointer(&w[a]))
				}
				pf.add(unsafe.Pointer(&w[end-1]))
			}
			sl.rows = rows
			if rows == 0 {
				iv[sl.idx] = Interval{}
				sl.live = false
			}
		}
		// Stage 3: the rows' suffix array entries (asked for by stage 2); ask for the codes of
		// their texts that stage 4 checks.
		if sl := &ring[(t-2*fwdDist)&(fwdRing-1)]; t >= 2*fwdDist && sl.live {
			off := int(sl.head) - int(sl.j)
			if sl.head < 0 {
				off = -int(sl.j)
			}
			for r := sl.lo; r < sl.hi; r++ {
				a := int(sa[r]) + off
				if a >= 0 && a+fwdHead <= len(w) {
					// Both ends, when in one line too: a branch would be mispredicted.
					pf.add(unsafe.Pointer(&w[a]))
					pf.add(unsafe.Pointer(&w[a+fwdHead-1]))
				}
			}
		}
		// Stage 2: the K-mers' rows (asked for by stage 1): choose the K-mer with the fewest and
		// ask for their suffix array entries.
		if sl := &ring[(t-fwdDist)&(fwdRing-1)]; t >= fwdDist && sl.live {
			l := int(sl.to - sl.from)
			lo, hi := table[2*sl.codes[0]], table[2*sl.codes[0]+1]
			jj := 0
			for q := 1; q < nk; q++ {
				c := sl.codes[q]
				if qlo, qhi := table[2*c], table[2*c+1]; qhi-qlo < hi-lo {
					lo, hi, jj = qlo, qhi, kmerOffset(q, l, k)
				}
			}
			switch {
			case lo >= hi: // a K-mer of the pattern does not occur
				iv[sl.idx] = Interval{}
				sl.live = false
			case l == k:
				iv[sl.idx] = Interval{Lo: lo, Hi: hi}
				sl.live = false
			case hi-lo > fwdMaxRows:
				rest = append(rest, sl.idx)
				sl.live = false
			default:
				sl.lo, sl.hi, sl.j = lo, hi, int32(jj)
				// The first check's codes: after the K-mer, or else before it; a short pattern
				// is compared whole at once.
				switch {
				case jj+k+fwdHead <= l:
					sl.head = int32(jj + k)
				case jj >= fwdHead:
					sl.head = int32(jj - fwdHead)
				default:
					sl.head = -1
				}
				pf.add(unsafe.Pointer(&sa[lo]))
				pf.add(unsafe.Pointer(&sa[hi-1]))
			}
		}
		// Stage 1: the next pattern's K-mer codes; ask for their table entries.
		if sl := &ring[t&(fwdRing-1)]; t < np {
			sl.live = false
			i := t
			if order != nil {
				i = int(order[t])
			}
			from := 0
			if i > 0 {
				from = ends[i-1]
			}
			to := ends[i]
			// A batch of patterns is larger than the cache: ask for the ends of a later one.
			if ta := t + fwdDist; ta < np {
				ia := ta
				if order != nil {
					ia = int(order[ta])
				}
				if e := ends[ia]; e > 0 {
					pf.add(unsafe.Pointer(&codes[e-1]))
					pf.add(unsafe.Pointer(&codes[max(e-k-fwdHead, 0)]))
				}
			}
			if l := to - from; l < k {
				if l == 0 {
					iv[i] = Interval{}
				} else {
					rest = append(rest, int32(i))
				}
			} else {
				pat, ok := codes[from:to], true
				for q := range nk {
					j := kmerOffset(q, len(pat), k)
					var code int
					if dna {
						// kt.code's first case, here without a call.
						hi, okh := dnaBits8(binary.BigEndian.Uint64(pat[j:]))
						lo, okl := dnaBits8(binary.BigEndian.Uint64(pat[j+k-8:]))
						code, ok = hi<<dnaShift|lo&dnaMask, ok && okh && okl
					} else {
						var okq bool
						code, okq = kt.code(pat[j : j+k])
						ok = ok && okq
					}
					if ok {
						sl.codes[q] = int32(code)
						pf.add(unsafe.Pointer(&table[2*code]))
					}
				}
				sl.live = ok
				sl.idx, sl.from, sl.to = int32(i), int32(from), int32(to)
				if !ok { // a code that never matches
					iv[i] = Interval{}
				}
			}
		}
		pf.flush()
	}
	return rest
}

// settle writes the outcome of the search of sl's pattern pat to iv, or leaves it to the
// backward search, given the rows whose text is pat: found of them, first to last.
func settle(sl *fwdSlot, pat []byte, first, last int32, found int, seps bool, iv []Interval, rest *[]int32) {
	// The text holds separators (CodeNone), which never match; no other code that cannot match
	// is in the text.
	switch {
	case found == 0 || seps && bytes.IndexByte(pat, kernels.CodeNone) >= 0:
		iv[sl.idx] = Interval{}
	case sl.j == 0:
		iv[sl.idx] = Interval{Lo: first, Hi: last + 1}
	case found == 1:
		iv[sl.idx] = Interval{Lo: first, Hi: first + 1, Shift: sl.j}
	default: // several occurrences, whose rows are not the pattern's
		*rest = append(*rest, sl.idx)
	}
}
