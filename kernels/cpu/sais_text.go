package cpu

import "unsafe"

// The passes of SA-IS over the text itself: counting the suffixes by first symbol and kind,
// placing the LMS positions in their buckets, and gathering them in text order. Each walks the
// text backwards with the type of the position to the right; with several threads the text is
// cut into parts, one per thread, each starting from the type at its end (typeAt), and the LMS
// positions of each part go to their own stretch of every bucket, so the result is the same.

// textParts cuts a text into parts, one per thread: part p is [lo[p], lo[p+1]).
type textParts struct {
	p   int
	lo  [maxThreads + 1]int
	lms [maxThreads][]int32 // parts 1 and up: LMS positions by symbol (k), then scratch (k)
	tot [maxThreads]int     // LMS positions of each part
}

// partsFrom is the text length from which the passes use several threads (a variable for the
// tests).
var partsFrom = 1 << 20

func newTextParts(n, threads int) textParts {
	tp := textParts{p: 1}
	if n >= partsFrom {
		tp.p = min(threads, maxThreads)
	}
	for j := range tp.p + 1 {
		tp.lo[j] = n * j / tp.p
	}
	return tp
}

// typeAt returns 1 if position i of t is S-type (its suffix is smaller than the next), else 0.
func typeAt[T symbol](t []T, i int) int32 {
	n := len(t)
	for i+1 < n && t[i] == t[i+1] {
		i++
	}
	if i+1 == n {
		return 0 // t[n-1] is L-type: the virtual sentinel after it is smaller
	}
	return bit(t[i] < t[i+1])
}

// countKinds counts the positions of t in [lo, hi) by first symbol and kind into cnt (per
// symbol: LL, LS, LMS, S), with countKindsK walking down from hi-2 (textArgs).
func countKinds[T symbol](t []T, lo, hi int, cnt []int32, big bool) {
	a := textArgs{
		t: unsafe.Pointer(unsafe.SliceData(t)), i: hi - 2, stop: max(lo-1, 0),
		next: int32(t[hi-1]), nextS: typeAt(t, hi-1), tab: unsafe.Pointer(unsafe.SliceData(cnt)), big: bit(big),
	}
	if a.i >= a.stop {
		countKindsK[T](&a)
	}
	if lo == 0 {
		cnt[4*a.next+3*a.nextS]++ // position 0: LL or S
	}
}

// newBucketLayout counts the suffixes of t by first symbol and kind, with cnt (4k entries) as
// scratch. Symbols must be in [0, k).
func newBucketLayout[T symbol](t []T, k int, mem *saScratch, cnt []int32, tm *team) *bucketLayout {
	// A table of 4k counts per part, cleared and summed: with a large alphabet, fewer parts, as
	// the tables would cost more than the parts save (and take memory: at most n entries in
	// all).
	threads := max(1, min(tm.size, len(t)/(4*k)))
	l := &bucketLayout{k: k, pm: saPos, parts: newTextParts(len(t), threads)}
	buf := mem.take(4*k + 1)
	l.start, l.nLL, l.nLS, l.nLMS = buf[:k+1], buf[k+1:2*k+1], buf[2*k+1:3*k+1], buf[3*k+1:]
	tp := &l.parts
	cnts := [maxThreads][]int32{cnt}
	for p := 1; p < tp.p; p++ {
		cnts[p] = mem.take(4 * k)
	}
	big := bigAlphabet[T](k)
	tm.run(tp.p, func(p int) {
		clear(cnts[p])
		countKinds(t, tp.lo[p], tp.lo[p+1], cnts[p], big)
	})
	// The sums go to cnt; each further part keeps its LMS counts.
	tm.run(tp.p, func(p int) {
		for c := k * p / tp.p; c < k*(p+1)/tp.p; c++ {
			for q := 1; q < tp.p; q++ {
				for x := 4 * c; x < 4*c+4; x++ {
					cnt[x] += cnts[q][x]
				}
			}
		}
	})
	for q := 1; q < tp.p; q++ {
		tp.lms[q] = cnts[q][:2*k]
		for c := range k {
			tp.lms[q][c] = cnts[q][4*c+2]
			tp.tot[q] += int(cnts[q][4*c+2])
		}
	}
	var sum int32
	for c := range k {
		l.start[c] = sum
		l.nLL[c], l.nLS[c], l.nLMS[c] = cnt[4*c], cnt[4*c+1], cnt[4*c+2]
		sum += cnt[4*c] + cnt[4*c+1] + cnt[4*c+2] + cnt[4*c+3]
		l.m += int(cnt[4*c+2])
	}
	l.start[k] = sum
	if len(t) < regionsFrom || !l.skipRegions() {
		// Stage 1 entries have a bit to spare: whether p-1 is S-type, so that the scans that
		// read every slot (small buckets) pass over the entries that do not induce, and
		// prefetches too. Where the scans read only the regions that induce, the bit is not
		// needed: texts of 2^30 bytes or more (bytes, so large buckets) go without it.
		if len(t) >= 1<<30 {
			panic("cpu.SuffixArray: a text of 2^30 symbols or more with small buckets")
		}
		l.pm, l.pb = 1<<30-1, 1<<30
	}
	tp.tot[0] = l.m
	for q := 1; q < tp.p; q++ {
		tp.tot[0] -= tp.tot[q]
	}
	if !l.skipRegions() {
		l.la = mem.take(k + 1)
		sum := int32(0)
		for c := range k {
			l.la[c] = sum
			sum += l.nLL[c] + l.nLMS[c]
		}
		l.la[k] = sum
	}
	return l
}

// placeLMS writes the LMS positions of t into their buckets' LMS regions (or the ends of their
// stretches of the left region, la set), in text order within each: each part below those of
// the parts after it. tail has k entries.
func placeLMS[T symbol](t []T, sa []int32, l *bucketLayout, tail []int32, tm *team) {
	tp := &l.parts
	tails := [maxThreads][]int32{tail}
	for q := 1; q < tp.p; q++ {
		tails[q] = tp.lms[q][l.k:]
	}
	ends := l.seedEnds()
	for c := range l.k {
		x := ends[c]
		for q := tp.p - 1; q > 0; q-- {
			tails[q][c] = x
			x -= tp.lms[q][c]
		}
		tail[c] = x
	}
	big := bigAlphabet[T](l.k)
	tm.run(tp.p, func(p int) {
		placePart(t, sa, tp.lo[p], tp.lo[p+1], tails[p], big)
	})
}

// placePart is placeLMS for the positions in [lo, hi), with the tails of their stretches.
func placePart[T symbol](t []T, sa []int32, lo, hi int, tail []int32, big bool) {
	a := textArgs{
		t: unsafe.Pointer(unsafe.SliceData(t)), i: hi - 2, stop: max(lo-1, 0),
		next: int32(t[hi-1]), nextS: typeAt(t, hi-1), tab: unsafe.Pointer(unsafe.SliceData(tail)),
		sa: unsafe.Pointer(unsafe.SliceData(sa)), big: bit(big),
	}
	if a.i >= a.stop {
		placeLMSK[T](&a)
	}
}

// gatherLMS writes the LMS positions of t, in text order, to sa[len(sa)-m:]: each part to its own
// stretch. The rest of sa is left alone.
func gatherLMS[T symbol](t []T, sa []int32, l *bucketLayout, tm *team) {
	tp := &l.parts
	var top [maxThreads]int
	x := len(sa)
	for p := tp.p - 1; p >= 0; p-- {
		top[p] = x
		x -= tp.tot[p]
	}
	tm.run(tp.p, func(p int) {
		if tp.tot[p] > 0 {
			gatherPart(t, sa, tp.lo[p], tp.lo[p+1], top[p], top[p]-tp.tot[p])
		}
	})
}

// gatherPart is gatherLMS for the positions in [lo, hi), to the stretch [bottom, top), which
// they fill exactly.
func gatherPart[T symbol](t []T, sa []int32, lo, hi, top, bottom int) {
	a := textArgs{
		t: unsafe.Pointer(unsafe.SliceData(t)), i: hi - 2, stop: max(lo-1, 0),
		next: int32(t[hi-1]), nextS: typeAt(t, hi-1), sa: unsafe.Pointer(unsafe.SliceData(sa)),
		k: int32(top), bottom: int32(bottom),
	}
	if a.i >= a.stop {
		gatherLMSK[T](&a)
	}
}
