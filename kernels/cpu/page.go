package cpu

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sort"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// Page is the index of one window of the reference text: text[Start:WinEnd], of which the positions
// [Start, End) are owned by this page (a match is reported by the page that owns its reference
// start). The window runs past End by an overlap so that every owned position has at least the
// minimum match length of text in the window; matches that run off the window are extended
// against the full text.
//
// The index is an FM-index with the full suffix array and LCP array: backward search gives, for
// every query position, the suffix-array interval of its longest match (matching statistics), the
// LCP array gives the enclosing intervals of shorter matches, and the BWT gives left-maximality
// without touching the suffix array.
type Page struct {
	Start, End, WinEnd int

	text []byte // the full reference text (codes)
	w    []byte // text[Start:WinEnd]
	n    int    // len(w)
	sa   []int32
	lcp  *compactLCP // row k: lcp(row k-1, row k); rows 0, 1 and n+1: 0
	occ  *Occ
	c    [256]int // c[x] = first row whose suffix starts with x
	// deep has bit k set when row k's LCP is at least the minimum match length: an eighth of a
	// byte per row, so the test that ends most searches for enclosing intervals stays in cache.
	deep []uint64
	// What walks need to skip along long matches (skip.go; nil unless markSkips ran): the row of
	// every isaStep-th text position, and a bit a text position, set where the row of that
	// suffix or the row after it is deep. skipFrom is the match length from which a walk skips.
	isa      []int32
	deepText []uint64
	skipFrom int
	jumpFrom int // the match length from which a jump's guess is tried
	// The run of one symbol that ends the window, endRun long (0 where the window ends in a
	// code that is not a symbol), and how far it goes on past the window's end (pageBest).
	endSym          byte
	endRun, tailRun int
	runs            *pageRuns // the window's runs of one symbol, listed when a walk first needs them (runsOf)
}

// WindowRuns returns the symbol that ends the window text[start:winEnd], how many times it
// repeats at the window's end and how many more times right after it (0, 0 where it is not a
// symbol).
func WindowRuns(text []byte, start, winEnd int) (sym byte, endRun, tailRun int) {
	if winEnd <= start || winEnd > len(text) || text[winEnd-1] < kernels.FirstCode {
		return 0, 0, 0
	}
	sym = text[winEnd-1]
	for endRun = 1; endRun < winEnd-start && text[winEnd-1-endRun] == sym; endRun++ {
	}
	for winEnd+tailRun < len(text) && text[winEnd+tailRun] == sym {
		tailRun++
	}
	return sym, endRun, tailRun
}

// setWindowRuns sets endSym, endRun and tailRun, and makes the page's list of runs (empty until
// runsOf fills it; copies of the page share it).
func (p *Page) setWindowRuns() {
	p.endSym, p.endRun, p.tailRun = WindowRuns(p.text, p.Start, p.WinEnd)
	p.runs = new(pageRuns)
}

// NewPage indexes text[start:winEnd], owning [start, end).
func NewPage(text []byte, sigma, start, end, winEnd int) *Page {
	return newPage(text, sigma, start, end, winEnd, runtime.GOMAXPROCS(0))
}

// newPage is NewPage sorting the window's suffixes on up to threads goroutines.
func newPage(text []byte, sigma, start, end, winEnd, threads int) *Page {
	w := text[start:winEnd]
	n := len(w)
	p := &Page{Start: start, End: end, WinEnd: winEnd, text: text, w: w, n: n}
	// Row 0 is the empty suffix (the virtual end of text), so that LF-mapping is total.
	p.sa = make([]int32, n+1)
	p.sa[0] = int32(n)
	SuffixArrayThreads(w, p.sa[1:], threads)
	p.c = symbolStarts(w)
	sigma = max(sigma, 2)
	// The rank structure and the LCP array both need only the suffix array: build them at once.
	p.buildOccLCP(sigma, threads, nil)
	p.setWindowRuns()
	return p
}

// buildOccLCP builds the rank structure and the LCP array of a page whose suffix array is in place,
// the LCP on up to threads goroutines while one more builds the rank structure. With kr, the pass
// that reads each row's BWT symbol (a random access to the text) also follows the runs of k-mers
// there, since the k-mer starts next to that symbol.
func (p *Page) buildOccLCP(sigma, threads int, kr *kmerRuns) {
	w, n := p.w, p.n
	occDone := make(chan struct{})
	go func() {
		defer close(occDone)
		wp := unsafe.Pointer(unsafe.SliceData(w))
		p.occ = newOccParts(func(t, i int) byte {
			if i&(textAhead-1) == 0 && i+2*textAhead <= n+1 {
				// Ask for the text of the rows two steps ahead: each is a random access, and
				// without it few are in flight at once (the k-mer's loop is long).
				prefetchIdx(wp, p.sa[i+textAhead:i+2*textAhead], 0, 0)
			}
			s := p.sa[i]
			if kr != nil {
				kr.row(t, i)
			}
			if s == 0 {
				return kernels.CodeEnd
			}
			return w[s-1]
		}, n+1, sigma, threads)
		if kr != nil {
			kr.finish()
		}
	}()
	p.lcp = buildCompactLCP(w, p.sa, threads)
	<-occDone
}

// textAhead is how many rows ahead the passes over a suffix array that read the text at random
// (the rank structure's, the LCP's) ask for it, and how many rows at once.
const textAhead = 32

// markDeep records which rows have an LCP of at least minLen.
func (p *Page) markDeep(minLen int) { p.markDeepThreads(minLen, 1) }

// markDeepThreads is markDeep on up to threads goroutines, each marking whole words of rows. The
// LCP bytes are compared eight at a time; values from lcpEscape on are looked up in the side table
// only when minLen is over lcpEscape.
func (p *Page) markDeepThreads(minLen, threads int) {
	n := p.n + 2
	p.deep = make([]uint64, (n+63)/64)
	small := p.lcp.small[:n]
	m := byte(min(max(minLen, 0), lcpEscape))
	storeParallel(len(p.deep), threads, func(_, lo, hi int) error {
		full := min(hi, n/64) // words of 64 rows that all exist
		for w := lo; w < full; w++ {
			var word uint64
			for g := 0; g < 8; g++ {
				word |= swarBits(swarGE(load8(small, w*64+g*8), m)) << (8 * g)
			}
			p.deep[w] = word
		}
		for k := max(lo, full) * 64; k < min(hi*64, n); k++ {
			if small[k] >= m {
				p.deep[k>>6] |= 1 << (uint(k) & 63)
			}
		}
		if minLen <= lcpEscape {
			return nil
		}
		// Escaped rows are marked; keep those whose value reaches minLen.
		rows := p.lcp.bigRow
		i, _ := slices.BinarySearch(rows, int32(lo*64))
		for ; i < len(rows) && int(rows[i]) < hi*64; i++ {
			if p.lcp.bigVal[i] < int32(minLen) {
				k := uint(rows[i])
				p.deep[k>>6] &^= 1 << (k & 63)
			}
		}
		return nil
	})
}

// isDeep reports whether row k's LCP is at least the minimum match length given to markDeep.
func (p *Page) isDeep(k int) bool { return p.deep[k>>6]>>(uint(k)&63)&1 != 0 }

// Bytes returns the memory the page's index holds (the shared text not counted).
func (p *Page) Bytes() int {
	return 4*len(p.sa) + p.lcp.Bytes() + p.occ.Bytes() + 8*len(p.deep)
}

// parent returns the interval enclosing rows [lo, hi) at the next smaller match depth.
func (p *Page) parent(lo, hi int) (int, int, int) {
	d := max(p.lcp.at(lo), p.lcp.at(hi))
	if d == 0 {
		return 0, p.n + 1, 0
	}
	return p.lcp.prevSmaller(lo, d), p.lcp.nextSmaller(hi, d), int(d)
}

// extend moves the match state (rows [lo, hi) of the m-long prefix of query[pos+1:]) one position
// left, to query[pos:] whose first symbol is x, shortening the match until x can precede it.
func (p *Page) extend(lo, hi, m int, x byte) (int, int, int) {
	if x < kernels.FirstCode {
		return 0, p.n + 1, 0
	}
	return p.extendRanked(lo, hi, m, x, p.occ.Rank(x, lo), p.occ.Rank(x, hi))
}

// extendRanked is extend for a matchable x whose ranks at lo and hi are r1 and r2.
func (p *Page) extendRanked(lo, hi, m int, x byte, r1, r2 int) (int, int, int) {
	for {
		if r1 < r2 {
			return p.c[x] + r1, p.c[x] + r2, m + 1
		}
		if m == 0 {
			return 0, p.n + 1, 0
		}
		lo, hi, m = p.parent(lo, hi)
		r1, r2 = p.occ.Rank(x, lo), p.occ.Rank(x, hi)
	}
}

// symAt returns the symbol at offset m of the suffix in row k, or -1 past the window's end.
func (p *Page) symAt(k, m int) int {
	s := int(p.sa[k]) + m
	if s >= p.n {
		return -1
	}
	return int(p.w[s])
}

// longestPrefixCapped returns the rows and length of the longest prefix of pat that occurs in the
// window: the state that the backward scan of a segment ending inside its sequence starts from,
// so that the scan's state is exact at every position whatever the segment's cut. With capped > 0,
// a match that is one row is compared only up to capped symbols: open says that it reached them
// (m is then capped, and the match may go on; startStates).
func (p *Page) longestPrefixCapped(pat []byte, capped int) (lo, hi, m int, open bool) {
	lo, hi = 0, p.n+1
	for m < len(pat) {
		x := pat[m]
		if x < kernels.FirstCode {
			break
		}
		if hi-lo == 1 {
			s := int(p.sa[lo])
			if capped > 0 && capped <= len(pat) {
				if m = p.runFrom(pat[:capped], s, m); m >= capped {
					return lo, hi, capped, true
				}
				return lo, hi, m, false
			}
			return lo, hi, p.runFrom(pat, s, m), false
		}
		// The rows share the symbols on which their first and last agree: the pattern is
		// compared with them at once, and the rows split only where they differ (a query in a
		// satellite array otherwise searched the rows symbol by symbol, for the array's length).
		s1, s2 := int(p.sa[lo]), int(p.sa[hi-1])
		if e := min(p.n-s1, p.n-s2, len(pat)); e > m+1 {
			if l := sameRun(p.w[s1:], p.w[s2:], m, e); l > m {
				k := sameRun(pat, p.w[s1:], m, l)
				m = k
				if k < l || k == len(pat) {
					break // every row differs from the pattern at k
				}
				if x = pat[m]; x < kernels.FirstCode {
					break
				}
			}
		}
		nlo, nhi := p.rowsOf(lo, hi, m, int(x))
		if nlo == nhi {
			break
		}
		lo, hi = nlo, nhi
		m++
	}
	return lo, hi, m, false
}

// rowsOf returns the rows of [lo, hi) whose symbol at offset m is x (the rows are sorted by it).
// The two rows at each end are looked at before a binary search: in a run of one symbol or a
// tandem array the rows leave a row or two at a time, at an end (kernels/cuda/NOTES.md: an N gap).
func (p *Page) rowsOf(lo, hi, m, x int) (int, int) {
	a := lo
	if p.symAt(a, m) < x {
		if a++; a < hi && p.symAt(a, m) < x {
			a++
			a += sort.Search(hi-a, func(i int) bool { return p.symAt(a+i, m) >= x })
		}
	}
	b := hi
	if a < b && p.symAt(b-1, m) > x {
		if b--; a < b && p.symAt(b-1, m) > x {
			b--
			b = a + sort.Search(b-a, func(i int) bool { return p.symAt(a+i, m) > x })
		}
	}
	return a, b
}

// sameRun returns the first i >= m, up to end, where a[i] differs from b[i] or is not a symbol
// (a code under FirstCode), eight symbols at a time while they last: a sequence against itself
// matches on for millions of symbols.
func sameRun(a, b []byte, m, end int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; m+8 <= end; m += 8 {
		x := binary.LittleEndian.Uint64(a[m:])
		if x != binary.LittleEndian.Uint64(b[m:]) || (x-kernels.FirstCode*ones)&^x&highs != 0 {
			break
		}
	}
	for m < end && a[m] >= kernels.FirstCode && a[m] == b[m] {
		m++
	}
	return m
}

// runFrom returns how far pat matches the window from position s on, knowing that its first m
// symbols do.
func (p *Page) runFrom(pat []byte, s, m int) int {
	return sameRun(pat, p.w[s:], m, min(len(pat), p.n-s))
}

// leftMaximal reports whether the match of q[pos:] at window position s cannot be extended to the
// left: pos is the sequence start, s the text start, or the preceding symbols differ.
func (p *Page) leftMaximal(s int, q []byte, pos int) bool {
	if pos == 0 {
		return true
	}
	prev := q[pos-1]
	if prev < kernels.FirstCode {
		return true
	}
	g := p.Start + s
	return g == 0 || p.text[g-1] != prev
}
