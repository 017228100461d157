package cpu

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/sapipe/sapipe/kernels"
)

// A persistent index (formats.Index, written by `sapipe index`) holds the Pages of a reference text
// as plain arrays: one page over the whole text, or windows of a text too long for one. This file
// turns a Page into those arrays and back: Arrays for writing, LoadPage to rebuild a Page around
// arrays that a file mapping holds, without copying or recomputing them, and NewMatcherFromPages
// to match against such pages.

// PageArrays are the arrays of a Page's index, as an index file stores them.
type PageArrays struct {
	SA        []int32  // n+1 rows; row 0 is the empty suffix (SA[0] = n)
	Occ       []uint64 // the rank structure's blocks (see Occ)
	LCPBytes  []uint8  // the LCP of each of the n+2 rows, lcpEscape meaning "see LCPRows"
	LCPRows   []int32  // rows whose LCP is lcpEscape or more, ascending
	LCPValues []int32  // their LCP values
	LCPMin1   []int32  // least LCP of each 64 rows
	LCPMin2   []int32  // least of each 64 LCPMin1 values
}

// Arrays returns the page's arrays, shared with the page (without the LCP for a page loaded for
// searching only).
func (p *Page) Arrays() PageArrays {
	a := PageArrays{SA: p.sa, Occ: p.occ.data}
	if l := p.lcp; l != nil {
		a.LCPBytes, a.LCPRows, a.LCPValues, a.LCPMin1, a.LCPMin2 = l.small, l.bigRow, l.bigVal, l.min1, l.min2
	}
	return a
}

// Whole reports whether the page covers the whole text, as a persistent index does.
func (p *Page) Whole() bool { return p.Start == 0 && p.End == len(p.text) && p.WinEnd == len(p.text) }

// NewPageFromSA indexes the window text[start:winEnd] (codes < sigma), owning [start, end), around
// its suffix array, built by any backend: len(sa) == winEnd-start+1, and sa[1:] holds the suffix
// array of the window; NewPageFromSA sets sa[0], the row of the empty suffix. The page is the one
// NewPage(text, sigma, start, end, winEnd) builds; the rest is built on up to threads goroutines.
func NewPageFromSA(text []byte, sigma, start, end, winEnd int, sa []int32, threads int) *Page {
	p, _ := NewPageFromSAKmers(text, sigma, start, end, winEnd, sa, 0, threads)
	return p
}

// NewPageFromSAKmers is NewPageFromSA that also returns the page's table of k-mers
// (BuildKmerTableThreads'), nil for k < 1, found by the pass that builds the rank structure:
// both read the text where each row's suffix starts, a random access a row, made once.
func NewPageFromSAKmers(text []byte, sigma, start, end, winEnd int, sa []int32, k, threads int) (*Page, *KmerTable) {
	w := text[start:winEnd]
	n := len(w)
	p := &Page{Start: start, End: end, WinEnd: winEnd, text: text, w: w, n: n, sa: sa}
	p.setWindowRuns()
	sa[0] = int32(n)
	p.c = symbolStarts(w)
	sigma = max(sigma, 2)
	kr := newKmerRuns(p, sigma, k, max(threads, 1))
	p.buildOccLCP(sigma, max(threads, 1), kr)
	if kr == nil {
		return p, nil
	}
	return p, kr.t
}

// NewPageSorted builds the page of the window text[start:winEnd] and its table of k-mers, as
// NewPageFromSAKmers does, from the suffix array that sortSA (a backend's SuffixArray) fills for
// the window's suffixes. It also returns how long sortSA took.
func NewPageSorted(sortSA func(w []byte, sa []int32) error, text []byte, sigma, start, end, winEnd, k, threads int) (*Page, *KmerTable, time.Duration, error) {
	t0 := time.Now()
	sa := make([]int32, winEnd-start+1)
	if err := sortSA(text[start:winEnd], sa[1:]); err != nil {
		return nil, nil, 0, err
	}
	took := time.Since(t0)
	p, kt := NewPageFromSAKmers(text, sigma, start, end, winEnd, sa, k, threads)
	return p, kt, took, nil
}

// TailRows returns the rows of the suffixes that start past what the page owns (window positions
// End-Start and on), ascending: a search counts the occurrences the page owns by leaving out those
// that fall among them. It scans the suffix array on up to threads goroutines.
func (p *Page) TailRows(threads int) []int32 {
	owned := int32(p.End - p.Start)
	if p.WinEnd == p.End {
		return nil
	}
	parts := make([][]int32, storeParts(p.n, threads))
	storeParallel(p.n, threads, func(t, lo, hi int) error {
		for k := lo + 1; k <= hi; k++ {
			if p.sa[k] >= owned {
				parts[t] = append(parts[t], int32(k))
			}
		}
		return nil
	})
	return slices.Concat(parts...)
}

// CheckTailRows checks rows (from an index file) against TailRows' definition: as many as the positions past what the
// page owns, ascending, each of such a position.
func (p *Page) CheckTailRows(rows []int32) error {
	owned := int32(p.End - p.Start)
	if len(rows) != p.WinEnd-p.End {
		return fmt.Errorf("%d rows past the page's end, want %d", len(rows), p.WinEnd-p.End)
	}
	for i, k := range rows {
		if k < 1 || int(k) > p.n || i > 0 && k <= rows[i-1] || p.sa[k] < owned {
			return fmt.Errorf("row %d (entry %d) is not one past the page's end, or out of order", k, i)
		}
	}
	return nil
}

// symbolStarts returns c: c[x] is the first row whose suffix starts with x (row 0 being the
// empty suffix).
func symbolStarts(text []byte) [256]int {
	var counts [256]int
	for _, x := range text {
		counts[x]++
	}
	return startsOf(&counts)
}

// startsOf returns c from the text's count of each code: c[x] is the first row whose suffix
// starts with x (row 0 being the empty suffix).
func startsOf(counts *[256]int) (c [256]int) {
	c[0] = 1
	for x := 1; x < 256; x++ {
		c[x] = c[x-1] + counts[x-1]
	}
	return c
}

// LoadPage rebuilds the page of the window text[start:winEnd] (codes 1..sigma-1), owning
// [start, end), around arrays from an index file, using them in place. It checks, on up to threads
// goroutines, everything that the page's searches need to stay within bounds: lengths, suffix
// array entries in range, rank counts that agree with the bit planes and the window, LCP side
// tables and block minima that agree with the LCP bytes. A damaged array is an error naming it,
// never a page that could crash later.
func LoadPage(text []byte, sigma, start, end, winEnd int, a PageArrays, threads int) (*Page, error) {
	return loadPage(text, sigma, start, end, winEnd, a, threads, true)
}

// LoadSearchPage is LoadPage for a page that is only searched (NewSearcher: count and locate,
// which never read the LCP): a.LCP... are neither checked nor kept, and the page cannot match
// (NewMatcherFromPages refuses it).
func LoadSearchPage(text []byte, sigma, start, end, winEnd int, a PageArrays, threads int) (*Page, error) {
	return loadPage(text, sigma, start, end, winEnd, a, threads, false)
}

// UncheckedSearchPage is LoadSearchPage without the checks that read the arrays (the suffix
// array's range, the window's codes, the rank structure's counts), for a page that a device checks
// itself (kernels/cuda) before anything searches it: only the lengths are checked, and C is taken
// from the rank structure's last block. Nothing may search the page, or read its suffix array,
// before the device's checks have passed.
func UncheckedSearchPage(text []byte, sigma, start, end, winEnd int, a PageArrays) (*Page, error) {
	if start < 0 || start >= end || end > winEnd || winEnd > len(text) || winEnd-start > kernels.MaxWindow {
		return nil, fmt.Errorf("page [%d, %d) of a window to %d in a text of %d codes", start, end, winEnd, len(text))
	}
	if sigma < 2 || sigma > 256 {
		return nil, fmt.Errorf("alphabet of %d codes", sigma)
	}
	n := winEnd - start
	o := newOccLayout(sigma)
	rows := n + 1
	nb := rows/occBlock + 1
	if len(a.SA) != n+1 || len(a.Occ) != nb*o.stride {
		return nil, fmt.Errorf("suffix array of %d rows or rank structure of %d words for a window of %d codes", len(a.SA), len(a.Occ), n)
	}
	o.data = a.Occ
	// The totals: the last block's stored counts and its rows' symbols.
	var total [256]int
	var ms [256][2]uint64
	last := nb - 1
	o.blockMasks(last*o.stride, &ms)
	valid := rows - last*occBlock // rows of the last block that exist, 0..127
	vlo, vhi := uint64(1)<<min(valid, 63)-1, uint64(0)
	if valid >= 64 {
		vlo, vhi = ^uint64(0), uint64(1)<<(valid-64)-1
	}
	matchable := 0
	for c := kernels.FirstCode; c < sigma; c++ {
		total[c] = o.storedCount(last, c) + bits.OnesCount64(ms[c][0]&vlo) + bits.OnesCount64(ms[c][1]&vhi)
		matchable += total[c]
	}
	total[kernels.CodeNone] = max(n-matchable, 0)
	return &Page{Start: start, End: end, WinEnd: winEnd, text: text, w: text[start:winEnd], n: n, sa: a.SA, occ: o, c: startsOf(&total)}, nil
}

func loadPage(text []byte, sigma, start, end, winEnd int, a PageArrays, threads int, withLCP bool) (*Page, error) {
	if start < 0 || start >= end || end > winEnd || winEnd > len(text) || winEnd-start > kernels.MaxWindow {
		return nil, fmt.Errorf("page [%d, %d) of a window to %d in a text of %d codes", start, end, winEnd, len(text))
	}
	if sigma < 2 || sigma > 256 {
		return nil, fmt.Errorf("alphabet of %d codes", sigma)
	}
	threads = max(threads, 1)
	fullText := text
	w := text[start:winEnd]
	n := len(w)
	text = w // the checks below are of the window
	p := &Page{Start: start, End: end, WinEnd: winEnd, text: text, w: w, n: n, sa: a.SA}
	var counts [256]int
	var tcErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the text's symbol counts (for c) while the other checks run
		defer wg.Done()
		counts, tcErr = countSymbols(text, sigma, max(threads/2, 1))
	}()
	if err := checkSA(a.SA, n, threads); err != nil {
		wg.Wait()
		return nil, err
	}
	if withLCP {
		lcp, err := loadLCP(a, n, threads)
		if err != nil {
			wg.Wait()
			return nil, err
		}
		p.lcp = lcp
	}
	wg.Wait()
	if tcErr != nil {
		return nil, tcErr
	}
	p.c = startsOf(&counts)
	occ, err := loadOcc(a.Occ, n+1, max(sigma, 2), &counts, threads)
	if err != nil {
		return nil, err
	}
	p.occ = occ
	p.text = fullText
	p.setWindowRuns()
	return p, nil
}

// storeParallel runs f(t, lo, hi) for the parts t of [0, n) cut into up to threads parts, and returns
// the first error.
func storeParallel(n, threads int, f func(t, lo, hi int) error) error {
	parts := storeParts(n, threads)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for t := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = f(t, n*t/parts, n*(t+1)/parts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// storeMinPart is the fewest items a part of storeParallel takes (tests lower it).
var storeMinPart = 1 << 16

// storeParts returns how many parts storeParallel cuts n items into: no part smaller than
// storeMinPart items.
func storeParts(n, threads int) int { return max(1, min(threads, n/storeMinPart+1)) }

// countSymbols counts each code of text, refusing codes outside 1..sigma-1.
func countSymbols(text []byte, sigma, threads int) ([256]int, error) {
	total := CountCodes(text, threads)
	for x, v := range total {
		if v != 0 && (x == 0 || x >= sigma) {
			return total, fmt.Errorf("text code %d outside 1..%d", x, sigma-1)
		}
	}
	return total, nil
}

// CountCodes counts each code of text on up to threads goroutines.
func CountCodes(text []byte, threads int) [256]int {
	parts := make([][256]int, storeParts(len(text), threads))
	storeParallel(len(text), threads, func(t, lo, hi int) error {
		part := text[lo:hi]
		// Four tables, so that runs of one code do not wait on one counter.
		var c4 [4][256]int
		k := 0
		for ; k+4 <= len(part); k += 4 {
			c4[0][part[k]]++
			c4[1][part[k+1]]++
			c4[2][part[k+2]]++
			c4[3][part[k+3]]++
		}
		for ; k < len(part); k++ {
			c4[0][part[k]]++
		}
		c := &parts[t]
		for x := range c {
			c[x] = c4[0][x] + c4[1][x] + c4[2][x] + c4[3][x]
		}
		return nil
	})
	var total [256]int
	for _, c := range parts {
		for x, v := range c {
			total[x] += v
		}
	}
	return total
}

// checkSA checks that row 0 is the empty suffix and every other row a text position.
func checkSA(sa []int32, n, threads int) error {
	if len(sa) != n+1 {
		return fmt.Errorf("suffix array of %d rows for a text of %d", len(sa), n)
	}
	if sa[0] != int32(n) {
		return fmt.Errorf("suffix array row 0 is %d, not %d", sa[0], n)
	}
	return storeParallel(n, threads, func(_, lo, hi int) error {
		// The largest entry of each run of rows, without a branch a row; a run that holds one
		// out of range is searched for it.
		const run = 4096
		for from := 1 + lo; from < 1+hi; from += run {
			part := sa[from:min(from+run, 1+hi)]
			if maxUint32(part) < uint32(n) {
				continue
			}
			for k, s := range part {
				if uint32(s) >= uint32(n) {
					return fmt.Errorf("suffix array row %d is %d (0..%d)", from+k, s, n-1)
				}
			}
		}
		return nil
	})
}

// SuffixRowsInRange reports whether rows first to first+len(rows)-1 of the suffix array of a text of
// n codes are what LoadSearchPage's check accepts (checkSA): row 0 the empty suffix (n), every other row a text
// position. The array's length is its reader's to check.
func SuffixRowsInRange(rows []int32, first, n int) bool {
	if first == 0 && len(rows) > 0 {
		if rows[0] != int32(n) {
			return false
		}
		rows = rows[1:]
	}
	return maxUint32(rows) < uint32(n) || len(rows) == 0
}

// maxUint32Go is the largest of s's values as unsigned, on four chains so that the maxima do not
// wait on each other.
func maxUint32Go(s []int32) uint32 {
	var m0, m1, m2, m3 uint32
	k := 0
	for ; k+4 <= len(s); k += 4 {
		m0 = max(m0, uint32(s[k]))
		m1 = max(m1, uint32(s[k+1]))
		m2 = max(m2, uint32(s[k+2]))
		m3 = max(m3, uint32(s[k+3]))
	}
	for ; k < len(s); k++ {
		m0 = max(m0, uint32(s[k]))
	}
	return max(m0, m1, m2, m3)
}

// loadLCP checks the compact LCP arrays of a text of n codes and wraps them.
func loadLCP(a PageArrays, n, threads int) (*compactLCP, error) {
	rows := n + 2
	l := &compactLCP{small: a.LCPBytes, bigRow: a.LCPRows, bigVal: a.LCPValues, min1: a.LCPMin1, min2: a.LCPMin2}
	switch {
	case len(l.small) != rows:
		return nil, fmt.Errorf("LCP of %d rows, want %d", len(l.small), rows)
	case len(l.bigRow) != len(l.bigVal):
		return nil, fmt.Errorf("LCP side table of %d rows and %d values", len(l.bigRow), len(l.bigVal))
	case len(l.min1) != (rows+63)/64 || len(l.min2) != (len(l.min1)+63)/64:
		return nil, fmt.Errorf("LCP block minima of %d and %d entries for %d rows", len(l.min1), len(l.min2), rows)
	case l.small[0] != 0 || l.small[1] != 0 || l.small[n+1] != 0:
		return nil, fmt.Errorf("LCP rows 0, 1 and %d are not 0", n+1)
	}
	// The side table: rows ascending, each escaped, each value lcpEscape or more.
	err := storeParallel(len(l.bigRow), threads, func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			r := l.bigRow[i]
			if r < 0 || int(r) >= rows || (i > 0 && r <= l.bigRow[i-1]) || l.small[r] != lcpEscape {
				return fmt.Errorf("LCP side table row %d (entry %d) is out of order or not escaped", r, i)
			}
			if v := l.bigVal[i]; v < lcpEscape || int(v) > n {
				return fmt.Errorf("LCP side table value %d at row %d", v, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Its index by buckets of rows, once the rows are known to ascend.
	l.indexSideTable(threads)
	// Every escape must have its side-table entry, and the minima must be those of the values:
	// the searches for smaller values rely on both to stop inside the array.
	escapes := make([]int, storeParts(len(l.min1), threads)) // a part's, not a block's: a fresh array of a word a block cost more than the checks
	err = storeParallel(len(l.min1), threads, func(t, lo, hi int) error {
		var err error
		escapes[t], err = l.checkBlocks(rows, lo, hi)
		return err
	})
	if err != nil {
		return nil, err
	}
	total := 0
	for _, e := range escapes {
		total += e
	}
	if total != len(l.bigRow) {
		return nil, fmt.Errorf("LCP has %d escaped rows and %d side-table entries", total, len(l.bigRow))
	}
	err = storeParallel(len(l.min2), threads, func(_, lo, hi int) error {
		for s := lo; s < hi; s++ {
			m := l.min1[s*64]
			for _, v := range l.min1[s*64 : min(s*64+64, len(l.min1))] {
				m = min(m, v)
			}
			if l.min2[s] != m {
				return fmt.Errorf("LCP minimum of blocks %d.. is %d, the index says %d", s*64, m, l.min2[s])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.setLevels()
	return l, nil
}

// checkBlocks checks the LCP blocks [lo, hi) of rows rows (64 rows each) against their minima
// and returns how many of their rows are escaped. Whole blocks are checked eight bytes at a time;
// a block of escapes only against the least of its side-table values (found by row: the table is
// checked to be in order before).
func (l *compactLCP) checkBlocks(rows, lo, hi int) (int, error) {
	esc := 0
	for b := lo; b < hi; b++ {
		block := l.small[b*64 : min(b*64+64, rows)]
		want := l.min1[b]
		if len(block) == 64 && want >= 0 && want < lcpEscape {
			v := byte(want)
			all, any, e := uint64(swarHigh), uint64(0), 0
			for g := 0; g < 64; g += 8 {
				x := load8(block, g)
				all &= swarGE(x, v)
				any |= swarEq(x, v)
				e += bits.OnesCount64(swarEq(x, lcpEscape))
			}
			if all == swarHigh && any != 0 {
				esc += e
				continue // the least byte is want
			}
		}
		m := uint8(lcpEscape)
		for _, v := range block {
			m = min(m, v)
		}
		esc += bytes.Count(block, []byte{lcpEscape})
		if m < lcpEscape || want < lcpEscape {
			if int32(m) != want {
				return 0, fmt.Errorf("LCP minimum of rows %d..%d is %d, the index says %d", b*64, b*64+len(block)-1, m, want)
			}
			continue
		}
		// Escapes only, each lcpEscape or more: the least of their side-table values.
		i, _ := slices.BinarySearch(l.bigRow, int32(b*64))
		least := int32(-1)
		for ; i < len(l.bigRow) && int(l.bigRow[i]) < b*64+len(block); i++ {
			if least < 0 || l.bigVal[i] < least {
				least = l.bigVal[i]
			}
		}
		if least != want {
			return 0, fmt.Errorf("LCP minimum of rows %d..%d is %d, the index says %d", b*64, b*64+len(block)-1, least, want)
		}
	}
	return esc, nil
}

// loadOcc wraps the rank structure of a BWT of rows symbols < sigma and checks that each block's
// counts are those of the bit planes before it, and that the totals are the text's counts, so
// that every rank lies between c[x] and c[x+1].
func loadOcc(data []uint64, rows, sigma int, text *[256]int, threads int) (*Occ, error) {
	o := newOccLayout(sigma)
	o.data = data
	planes := o.planes
	nb := rows/occBlock + 1
	if len(data) != nb*o.stride {
		return nil, fmt.Errorf("rank structure of %d words, want %d", len(data), nb*o.stride)
	}
	// Each part checks its blocks' counts against a running count that starts at its first
	// block's header and ends at the next part's: by induction from block 0, whose counts must be
	// 0, every header then holds the counts of the planes before it.
	ends := make([][]int, storeParts(nb, threads))
	err := storeParallel(nb, threads, func(t, lo, hi int) error {
		run := make([]int, 1<<planes)
		for c := kernels.FirstCode; c < sigma; c++ {
			run[c] = o.storedCount(lo, c)
		}
		var ms [256][2]uint64
		for b := lo; b < hi; b++ {
			for c := kernels.FirstCode; c < sigma; c++ {
				if got := o.storedCount(b, c); got != run[c] {
					return fmt.Errorf("rank structure block %d counts %d of code %d, its planes %d", b, got, c, run[c])
				}
			}
			base := b * o.stride
			valid := min(occBlock, rows-b*occBlock) // rows of the block that exist
			var vlo, vhi uint64 = ^uint64(0), ^uint64(0)
			if valid < 64 {
				vlo, vhi = uint64(1)<<valid-1, 0
			} else if valid < 128 {
				vhi = uint64(1)<<(valid-64) - 1
			}
			seen := 0
			o.blockMasks(base, &ms)
			for c := range run {
				mlo, mhi := ms[c][0], ms[c][1]
				k := bits.OnesCount64(mlo&vlo) + bits.OnesCount64(mhi&vhi)
				if k != 0 && c >= sigma {
					return fmt.Errorf("rank structure block %d holds symbol %d (0..%d)", b, c, sigma-1)
				}
				run[c] += k
				seen += k
			}
			if seen != valid {
				return fmt.Errorf("rank structure block %d: %d symbols for %d rows", b, seen, valid)
			}
		}
		ends[t] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	for c := kernels.FirstCode; c < sigma; c++ {
		if o.storedCount(0, c) != 0 {
			return nil, fmt.Errorf("rank structure block 0 counts %d of code %d", o.storedCount(0, c), c)
		}
	}
	total := make([]int, 1<<planes)
	parts := len(ends)
	for t, run := range ends {
		hi := nb * (t + 1) / parts
		for c := kernels.FirstCode; c < sigma; c++ {
			if hi < nb && o.storedCount(hi, c) != run[c] {
				return nil, fmt.Errorf("rank structure block %d counts %d of code %d, its planes %d", hi, o.storedCount(hi, c), c, run[c])
			}
		}
		for c, v := range run {
			if c < kernels.FirstCode || c >= sigma {
				total[c] += v
			} else if hi == nb {
				total[c] = v
			}
		}
	}
	for c := kernels.FirstCode; c < sigma; c++ {
		if total[c] != text[c] {
			return nil, fmt.Errorf("rank structure holds %d of code %d, the text %d", total[c], c, text[c])
		}
	}
	if total[kernels.CodeEnd] != 1 {
		return nil, fmt.Errorf("rank structure holds %d end-of-text symbols, not 1", total[kernels.CodeEnd])
	}
	return o, nil
}

// storedCount returns the number of code c (matchable) in the rows before block b, as stored.
func (o *Occ) storedCount(b, c int) int {
	k := c - kernels.FirstCode
	return int(uint32(o.data[b*o.stride+k>>1] >> (32 * (k & 1))))
}

// ErrOverlap reports a minimum match length longer than an index's pages overlap allows: a match
// that starts near a page's end would be cut at its window's end before it is long enough.
var ErrOverlap = errors.New("minimum match length over what the index's page overlap allows")

// CheckOverlap returns ErrOverlap's error where a page ending at end, whose window ends at winEnd
// before the text's end n, overlaps the next page by too little for matches of minLen.
func CheckOverlap(minLen, end, winEnd, n int) error {
	if winEnd < n && winEnd-end+1 < minLen {
		return fmt.Errorf("%w: -l %d, pages overlapping by %d (rebuild the index with sapipe index --overlap %d)", ErrOverlap, minLen, winEnd-end, minLen-1)
	}
	return nil
}

// NewMatcherFromPages returns a matcher for ref over pages that tile ref.Text (from LoadPage or
// NewPageFromSA, in text order), with the output of NewMatcher. Each window must run at least
// opts.MinLen-1 past what its page owns (or to the text's end). Matchers with different options
// may share the pages: each marks its own rows deep for its minimum length, on up to threads
// goroutines.
func NewMatcherFromPages(ref *kernels.Reference, opts kernels.MatchOptions, pages []*Page, threads int) (*Matcher, error) {
	if err := opts.Validate(ref); err != nil {
		return nil, err
	}
	next := 0
	for i, p := range pages {
		if len(p.text) != len(ref.Text) || p.Start != next || p.End <= p.Start {
			return nil, fmt.Errorf("page %d of the index does not follow the others in a text of %d codes (the reference has %d)", i, len(p.text), len(ref.Text))
		}
		if p.lcp == nil {
			return nil, fmt.Errorf("page %d of the index was loaded for searching only (LoadSearchPage)", i)
		}
		if err := CheckOverlap(opts.MinLen, p.End, p.WinEnd, len(p.text)); err != nil {
			return nil, err
		}
		next = p.End
	}
	if next != len(ref.Text) || len(pages) == 0 {
		return nil, fmt.Errorf("the index's pages end at %d, the reference at %d", next, len(ref.Text))
	}
	m := &Matcher{ref: ref, opts: opts, pages: make([]*Page, len(pages))}
	var wg sync.WaitGroup
	for i, p := range pages {
		cp := *p
		m.pages[i] = &cp
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp.markDeepThreads(opts.MinLen, max(1, threads/len(pages)))
		}()
	}
	wg.Wait()
	m.opts.PageSize = 0
	m.pool.New = func() any { return new(scratch) }
	return m, nil
}
