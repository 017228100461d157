package cpu

import (
	"bytes"
	"slices"
	"sync"
	"unsafe"
)

// LCP fills lcp (len(lcp) == len(sa)) with the longest common prefix of each suffix-array row and
// the row before it (lcp[0] = 0), by the permuted-LCP method of Kärkkäinen, Manzini and Puglisi:
// in text order the LCP drops by at most one per step, so the total work is linear.
func LCP(text []byte, sa, lcp []int32) {
	plcp := PLCP(text, sa)
	for i, p := range sa {
		lcp[i] = plcp[p]
	}
}

// PLCP returns the permuted LCP array of text: plcp[p] is the longest common prefix of suffix p
// and the suffix before it in sa (0 for sa[0]).
func PLCP(text []byte, sa []int32) []int32 {
	n := len(sa)
	// phi[p] is the suffix that precedes suffix p in sa; then, in place, the PLCP of p.
	phi := make([]int32, n)
	if n == 0 {
		return phi
	}
	phi[sa[0]] = -1
	for i := 1; i < n; i++ {
		phi[sa[i]] = sa[i-1]
	}
	l := 0
	for p := 0; p < n; p++ {
		q := int(phi[p])
		if q < 0 {
			phi[p] = 0
			l = 0
			continue
		}
		for p+l < n && q+l < n && text[p+l] == text[q+l] {
			l++
		}
		phi[p] = int32(l)
		l = max(l-1, 0)
	}
	return phi
}

// lcpEscape marks a compactLCP entry whose value is in the side table.
const lcpEscape = 255

// compactLCP is an LCP array in one byte per row, with the values of lcpEscape and more kept
// exactly in a sorted side table, and the minimum of every block of 64 rows (min1), of every 64
// blocks (min2), and so on up (up) for the searches of the next smaller value. Long common
// prefixes are rare between the suffixes of a genome, so it takes a quarter of the memory of
// plain int32 values, and the byte array stays in cache far longer while matching.
type compactLCP struct {
	small  []uint8
	bigRow []int32 // rows whose value is >= lcpEscape, ascending
	bigVal []int32
	min1   []int32
	min2   []int32
	up     []int32                // levels 3 to lcpLevels (LCPUp), one after the other
	levels [lcpLevels + 1][]int32 // levels[1] = min1, levels[2] = min2, then up's
	// bigStart[b]: the side table's first entry at or past row b<<bigBucketShift, so that a
	// row's entry is searched for among its bucket's alone.
	bigStart []int32
}

// bigBucketShift sets the rows of a bucket of bigStart: 1024, 4 bytes a thousand rows, and a
// search of at most ten steps in 4 KB of the side table instead of twenty or more over all of it
// (the searches were a third of -maxmatch's time on a self-comparison).
const bigBucketShift = 10

// lcpLevels is the number of levels of block minima: level L holds the least of each 64 entries
// of level L-1 (level 0: the rows), so level 6 is the least of 2^36 rows, more than a window
// holds. A search for the next smaller value climbs and descends at most 64 entries a level:
// with min2 on top, it scanned min2 from one end of an interval to the other, millions of
// entries for the wide intervals of satellite repeats, and a GPU launch waited for those
// threads alone.
const lcpLevels = 6

// LCPUp returns the levels of block minima above min2 (of level 3 to lcpLevels, one after the
// other), as compactLCP keeps them and DeviceArrays.LCPUp holds them.
func LCPUp(min2 []int32) []int32 {
	lens, all := LCPUpLens(len(min2))
	up := make([]int32, 0, all)
	below := min2
	for range lens {
		below = blockMins(below)
		up = append(up, below...)
	}
	return up
}

// LCPUpLens returns the lengths of the levels of LCPUp above a min2 of n2 entries (levels 3 to
// lcpLevels), and their sum.
func LCPUpLens(n2 int) (lens [lcpLevels - 2]int, sum int) {
	for i := range lens {
		n2 = (n2 + 63) / 64
		lens[i] = n2
		sum += n2
	}
	return lens, sum
}

// setLevels computes up from min2 and points levels at every level, and indexes the side table
// (bigStart) where loadLCP has not.
func (l *compactLCP) setLevels() {
	if l.bigStart == nil {
		l.indexSideTable(1)
	}
	l.up = LCPUp(l.min2)
	l.levels[1], l.levels[2] = l.min1, l.min2
	at := 0
	lens, _ := LCPUpLens(len(l.min2))
	for i, n := range lens {
		l.levels[3+i] = l.up[at : at+n]
		at += n
	}
}

// newCompactLCP stores the n values at(0), ..., at(n-1).
func newCompactLCP(n int, at func(k int) int32) *compactLCP {
	l := &compactLCP{small: make([]uint8, n), min1: make([]int32, (n+63)/64)}
	for k := 0; k < n; k++ {
		v := at(k)
		if v >= lcpEscape {
			l.small[k] = lcpEscape
			l.bigRow = append(l.bigRow, int32(k))
			l.bigVal = append(l.bigVal, v)
		} else {
			l.small[k] = uint8(v)
		}
		if b := k >> 6; k&63 == 0 || v < l.min1[b] {
			l.min1[b] = v
		}
	}
	l.min2 = blockMins(l.min1)
	l.setLevels()
	return l
}

// at returns the value of row k.
func (l *compactLCP) at(k int) int32 {
	if v := l.small[k]; v < lcpEscape {
		return int32(v)
	}
	return l.big(k)
}

func (l *compactLCP) big(k int) int32 { return l.bigVal[l.bigIndex(k)] }

// indexSideTable makes bigStart on up to threads goroutines, for a side table whose rows ascend:
// each bucket is then set by one entry, whatever part holds it.
func (l *compactLCP) indexSideTable(threads int) {
	l.bigStart = make([]int32, len(l.small)>>bigBucketShift+2)
	storeParallel(len(l.bigRow), threads, func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			l.startBuckets(i)
		}
		return nil
	})
	l.endBuckets()
}

// startBuckets sets bigStart for the buckets that side-table entry i is the first of: those after
// the previous entry's bucket up to its own. In a table whose rows ascend each bucket is set by
// one entry, so parts of it can be done at once.
func (l *compactLCP) startBuckets(i int) {
	b, prev := int(l.bigRow[i])>>bigBucketShift, -1
	if i > 0 {
		prev = int(l.bigRow[i-1]) >> bigBucketShift
	}
	for prev++; prev <= b; prev++ {
		l.bigStart[prev] = int32(i)
	}
}

// endBuckets sets bigStart for the buckets past the last entry's.
func (l *compactLCP) endBuckets() {
	b := 0
	if n := len(l.bigRow); n > 0 {
		b = int(l.bigRow[n-1])>>bigBucketShift + 1
	}
	for ; b < len(l.bigStart); b++ {
		l.bigStart[b] = int32(len(l.bigRow))
	}
}

// bigIndex returns the side table's index of escaped row k.
func (l *compactLCP) bigIndex(k int) int {
	lo, hi := 0, len(l.bigRow)
	if b := k >> bigBucketShift; b+1 < len(l.bigStart) {
		lo, hi = int(l.bigStart[b]), int(l.bigStart[b+1])
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.bigRow[m] < int32(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lastLess returns the largest row in [lo, k] whose value is less than d, or lo-1. Above
// lcpEscape every row not escaped is less, so the scan goes on only over escaped rows, one after
// the other in the side table too: one search finds the first, and the next are its neighbours
// (a repeat's rows are escaped by the thousand, and a search for each was half of -maxmatch's
// time on a self-comparison).
func (l *compactLCP) lastLess(lo, k int, d int32) int {
	if d <= lcpEscape {
		for ; k >= lo; k-- {
			if int32(l.small[k]) < d {
				return k
			}
		}
		return k
	}
	j := -1
	for ; k >= lo; k-- {
		if l.small[k] < lcpEscape {
			return k
		}
		if j < 0 {
			j = l.bigIndex(k)
		} else {
			j--
		}
		if l.bigVal[j] < d {
			return k
		}
	}
	return k
}

// firstLess returns the smallest row in [k, hi] whose value is less than d, or hi+1 (lastLess,
// rightward).
func (l *compactLCP) firstLess(k, hi int, d int32) int {
	if d <= lcpEscape {
		for ; k <= hi; k++ {
			if int32(l.small[k]) < d {
				return k
			}
		}
		return k
	}
	j := -1
	for ; k <= hi; k++ {
		if l.small[k] < lcpEscape {
			return k
		}
		if j < 0 {
			j = l.bigIndex(k)
		} else {
			j++
		}
		if l.bigVal[j] < d {
			return k
		}
	}
	return k
}

// less reports whether the value of row k is less than d.
func (l *compactLCP) less(k int, d int32) bool {
	if v := l.small[k]; v < lcpEscape {
		return int32(v) < d
	}
	return d > lcpEscape && l.big(k) < d
}

// Bytes returns the memory the array holds (none for a page loaded for searching only).
func (l *compactLCP) Bytes() int {
	if l == nil {
		return 0
	}
	return len(l.small) + 4*(len(l.bigRow)+len(l.bigVal)+len(l.min1)+len(l.min2)+len(l.up)+len(l.bigStart))
}

// blockMins returns the minimum of each block of 64 values of a.
func blockMins(a []int32) []int32 {
	m := make([]int32, (len(a)+63)/64)
	for b := range m {
		lo, hi := b*64, min(b*64+64, len(a))
		v := a[lo]
		for _, x := range a[lo+1 : hi] {
			v = min(v, x)
		}
		m[b] = v
	}
	return m
}

// prevSmaller returns the largest k' <= k with a value < d (d >= 1; row 0 has value 0).
func (l *compactLCP) prevSmaller(k int, d int32) int {
	i := k &^ 63
	if j := l.lastLess(i, k, d); j >= i {
		return j
	}
	// Up from the block before i's, each level's entries down to the start of their group of
	// 64 (row 0's entries, which hold 0, end the climb at the latest), then down the levels to
	// the last entry below d in each group.
	lv, b := 1, i>>6-1
	for {
		a := l.levels[lv]
		for a[b] >= d && b&63 != 0 {
			b--
		}
		if a[b] < d {
			break
		}
		lv, b = lv+1, b>>6-1
	}
	for ; lv > 1; lv-- {
		a := l.levels[lv-1]
		for b = b*64 + 63; a[b] >= d; b-- {
		}
	}
	return l.lastLess(b*64, b*64+63, d)
}

// nextSmaller returns the smallest k' >= k with a value < d (d >= 1; the last row has value 0).
func (l *compactLCP) nextSmaller(k int, d int32) int {
	i := k | 63
	if j := l.firstLess(k, i, d); j <= i {
		return j
	}
	i++
	// As prevSmaller, rightward (the last row's entries, which hold 0, end the climb).
	lv, b := 1, i>>6
	for {
		a := l.levels[lv]
		for a[b] >= d {
			if b++; b&63 == 0 {
				break
			}
		}
		if b < len(a) && a[b] < d {
			break
		}
		lv, b = lv+1, b>>6
	}
	for ; lv > 1; lv-- {
		a := l.levels[lv-1]
		for b *= 64; a[b] >= d; b++ {
		}
	}
	return l.firstLess(b*64, b*64+63, d)
}

// buildCompactLCP computes the compact LCP of the n+2 rows of a page's window w (len n) from its
// suffix array sa (n+1 rows, row 0 the empty suffix), with the values LCP and PLCP would give, on
// up to threads goroutines. It needs 8 bytes a position for one round of max(n/8, 2^16) positions
// (a byte a base) besides the result (about a byte a row), where PLCP takes 4 bytes a position at
// once. Each round reads the whole suffix array, so rounds are few: a cap of 256 MiB on a round
// made 47 of them for a page of 1.5 Gbp, 29 s on 32 cores. The text is taken in rounds of positions, each round
// finding its positions' predecessors and rows in one pass over sa, then their LCPs in text order,
// where an LCP drops by at most one from one position to the next (Kärkkäinen, Manzini and
// Puglisi's bound, so the work stays linear however the round is cut).
func buildCompactLCP(w []byte, sa []int32, threads int) *compactLCP {
	return buildCompactLCPRounds(w, sa, threads, max(len(w)/8, 1<<16))
}

// buildCompactLCPRounds is buildCompactLCP in rounds of round positions.
func buildCompactLCPRounds(w []byte, sa []int32, threads, round int) *compactLCP {
	n := len(w)
	rows := n + 2
	l := &compactLCP{small: make([]uint8, rows), min1: make([]int32, (rows+63)/64)}
	threads = max(threads, 1)
	round = max(min(round, n), 1)
	prev := make([]int32, round)
	row := make([]int32, round)
	type bigEntry struct{ row, val int32 }
	bigs := make([][]bigEntry, threads)
	parallel := func(total int, f func(t, lo, hi int)) {
		per := (total + threads - 1) / threads
		var wg sync.WaitGroup
		for t := range threads {
			lo, hi := t*per, min((t+1)*per, total)
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(t, lo, hi)
			}()
		}
		wg.Wait()
	}
	for a := 0; a < n; a += round {
		b := min(a+round, n)
		// Rows 1..n hold the suffixes of w; row 1's predecessor is the empty suffix.
		parallel(n, func(_, lo, hi int) {
			for k := lo + 1; k <= hi; k++ {
				s := int(sa[k])
				if s < a || s >= b {
					continue
				}
				if k == 1 {
					prev[s-a] = -1
				} else {
					prev[s-a] = sa[k-1]
				}
				row[s-a] = int32(k)
			}
		})
		wp, sp := unsafe.Pointer(unsafe.SliceData(w)), unsafe.Pointer(unsafe.SliceData(l.small))
		parallel(b-a, func(t, lo, hi int) {
			h := 0
			for i := lo; i < hi; i++ {
				if (i-lo)&(textAhead-1) == 0 && i+2*textAhead <= hi {
					// Each step reads the text at its predecessor's suffix, an address known
					// only once the step before has compared: ask for those lines (and the
					// rows' LCP bytes) two steps ahead, so that the misses overlap.
					prefetchIdx(wp, prev[i+textAhead:i+2*textAhead], 0, 0)
					prefetchIdx(sp, row[i+textAhead:i+2*textAhead], 0, 0)
				}
				p, q := a+i, int(prev[i])
				k := row[i]
				if q < 0 {
					l.small[k] = 0
					h = 0
					continue
				}
				for p+h < n && q+h < n && w[p+h] == w[q+h] {
					h++
				}
				if h >= lcpEscape {
					l.small[k] = lcpEscape
					bigs[t] = append(bigs[t], bigEntry{k, int32(h)})
				} else {
					l.small[k] = uint8(h)
				}
				h = max(h-1, 0)
			}
		})
	}
	// The escaped rows in order are those whose byte is lcpEscape: each part of the rows counts
	// its own, then lists them from its offset; each thread then puts its values at their rows'
	// places among them. (Sorting the threads' entries on one goroutine took 0.2-0.3 s of the
	// 150 Mbp pair's 3.7 s index on the H200 host's 16 cores: 1.76 M escapes.)
	nBig := 0
	for _, bs := range bigs {
		nBig += len(bs)
	}
	if nBig > 0 {
		counts := make([]int, threads)
		parallel(rows, func(t, lo, hi int) {
			counts[t] = bytes.Count(l.small[lo:hi], []byte{lcpEscape})
		})
		offs := make([]int, threads)
		for t := 1; t < threads; t++ {
			offs[t] = offs[t-1] + counts[t-1]
		}
		l.bigRow = make([]int32, nBig)
		l.bigVal = make([]int32, nBig)
		parallel(rows, func(t, lo, hi int) {
			o := offs[t]
			for k := lo; k < hi; {
				i := bytes.IndexByte(l.small[k:hi], lcpEscape)
				if i < 0 {
					break
				}
				l.bigRow[o] = int32(k + i)
				o++
				k += i + 1
			}
		})
		parallel(threads, func(_, lo, hi int) {
			for _, bs := range bigs[lo:hi] {
				for _, e := range bs {
					i, _ := slices.BinarySearch(l.bigRow, e.row)
					l.bigVal[i] = e.val
				}
			}
		})
	}
	parallel(len(l.min1), func(_, lo, hi int) {
		for blk := lo; blk < hi; blk++ {
			v := int32(1<<31 - 1)
			for k := blk * 64; k < min(blk*64+64, rows); k++ {
				v = min(v, l.at(k))
			}
			l.min1[blk] = v
		}
	})
	l.min2 = blockMins(l.min1)
	l.setLevels()
	return l
}
