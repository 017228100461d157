package cpu

import (
	"runtime"
	"unsafe"
)

// Suffix array construction by induced sorting (SA-IS; Nong, Zhang and Chan, 2009), in linear
// time. The end of the text is a virtual sentinel, smaller than every symbol, so the text needs no
// terminator and every byte value may occur in it.
//
// Every level of the recursion (bytes at the top, names of LMS substrings below) runs the same
// passes, engineered for memory latency, which is what limits SA-IS on large inputs: types are
// never stored but recomputed from neighbouring symbols, spare bits of the suffix array entries
// carry flags instead, LMS substrings are named while they are induced (no second pass comparing
// them), and the induction scans (sais_induce.go) go in blocks whose text symbols are asked for
// many entries ahead, so that many cache misses are outstanding at once. Their inner loops, and
// those of the passes over the text (sais_text.go), are kernels in assembly on amd64
// (sais_kernels.go; the text passes with AVX2 where there is, sais_vector_amd64.s). On one thread
// a scan is one serial pass (sais_serial.go); with several each pass is cut into parts
// (sais_parallel.go, sais_own.go, sais_team.go); the result does not depend on how many. The
// per-symbol tables of a reduced level are carved from the part of the suffix array that the
// level above leaves free.
//
// Memory: the text and the suffix array (4 bytes a base), and little more: a few hundred KB of
// buffers a thread, tables of counts by symbol, and for a level sorted by doubling (its names
// nearly all distinct) two int32 a symbol of that level, taken from the free part of the suffix
// array first, then from the heap: for DNA the third level or deeper, a ninth of the text or
// less; for random bytes the first, a third of the text. Peak RSS of the whole process, measured
// (tools/sabench, Go's runtime included): 5.19 bytes a base for 1 G of DNA with repeats (libsais
// 2.10.4: 4.88), 5.2 for the Linux tar's first 100 MiB (4.8), 7.4 for 100 MiB of random bytes
// (4.9).

// SuffixArray fills sa (len(sa) == len(text)) with the suffix array of text: the start positions
// of its suffixes in lexicographic order, a shorter suffix before a longer one it prefixes. It
// uses up to GOMAXPROCS threads.
func SuffixArray(text []byte, sa []int32) {
	SuffixArrayThreads(text, sa, runtime.GOMAXPROCS(0))
}

// SuffixArrayThreads is SuffixArray using up to threads goroutines; the result does not depend on
// threads.
func SuffixArrayThreads(text []byte, sa []int32, threads int) {
	if len(sa) != len(text) {
		panic("cpu.SuffixArray: len(sa) != len(text)")
	}
	if int64(len(text)) > 1<<31-1 {
		panic("cpu.SuffixArray: text over 2^31-1 bytes")
	}
	switch len(text) {
	case 0:
		return
	case 1:
		sa[0] = 0
		return
	}
	saisBytes(text, sa, max(threads, 1))
}

const (
	saFlag = -1 << 31  // the sign bit of an entry: a flag beside the position
	saPos  = 1<<31 - 1 // the position under the flag
)

// bucketLayout is where each symbol's suffixes go in stage 1: bucket c is [start[c], start[c+1]),
// its LL suffixes first (L-type with an L-type predecessor, or position 0), then LS (L-type with
// an S-type predecessor), S (S-type, not LMS) and LMS. Stage 3 uses the same buckets, L-type
// suffixes (LL and LS) first.
type bucketLayout struct {
	k              int     // alphabet size
	pm, pb         int32   // stage 1 entries: the position mask, the bit that says p-1 is S-type
	start          []int32 // k+1
	nLL, nLS, nLMS []int32 // k each
	m              int     // LMS positions in all
	parts          textParts
	// la (k+1, where buckets are small: not skipRegions) splits stage 1 into two regions, as
	// libsais's scans of names do, so that each scan reads only entries that induce. The left
	// region [0, la[k]) holds each symbol's LL suffixes and LMS seeds, at [la[c], la[c+1]): LL
	// from the start, the seeds at the end; the right region [la[k], n) holds each symbol's LS
	// and S suffixes, at [ra(c), ra(c+1)): LS from the start, S from the end. The right-to-left
	// scan induces the LMS substrings, sorted, into [0, m), each symbol's after the ones before
	// (the left region is read by then). Stage 3 keeps the plain buckets of start.
	la []int32
}

// ra is where symbol c's LS and S suffixes begin in stage 1's right region (la set).
func (l *bucketLayout) ra(c int) int32 { return l.la[l.k] + l.start[c] - l.la[c] }

// seedEnds is where each symbol's LMS seeds end in stage 1 (k entries): its bucket's end, or its
// stretch of the left region's (la set).
func (l *bucketLayout) seedEnds() []int32 {
	if l.la != nil {
		return l.la[1:]
	}
	return l.start[1:]
}

// lsStart is where symbol c's LS suffixes begin in stage 1: after its LL ones in its bucket, or
// its stretch of the right region (la set).
func (l *bucketLayout) lsStart(c int) int32 {
	if l.la != nil {
		return l.ra(c)
	}
	return l.start[c] + l.nLL[c]
}

func saisBytes(t []byte, sa []int32, threads int) {
	if len(t) < 1<<16 {
		threads = 1
	}
	adviseHugePages(t, sa)
	g := newTeam(threads)
	defer g.close()
	bufs := newParBufs(g.size, len(t))
	saisLevel(t, sa, 256, g, bufs, saScratch{})
}

// regionsFrom is the text length from which stage 1 entries have no bit to spare where the scans
// read only the regions that induce (a variable for the tests).
var regionsFrom = 1 << 30

// saScratch hands out int32 tables from a free part of a suffix array, or from the heap once that
// is used up.
type saScratch struct{ free []int32 }

// take returns n entries (not cleared), starting on a cache line.
func (s *saScratch) take(n int) []int32 {
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(s.free))) & 63 / 4)
	if skip+n <= len(s.free) {
		b := s.free[skip : skip+n : skip+n]
		s.free = s.free[skip+n:]
		return b
	}
	return make([]int32, n)
}

// saisLevel fills sa with the suffix array of t (len(t) >= 2), whose symbols are in [0, k).
func saisLevel[T symbol](t []T, sa []int32, k int, g *team, bufs *parBufs, mem saScratch) {
	n := len(t)
	saPhase("start")
	// Per symbol: kind counts, then the stage 1 bucket pointers (sub-buckets 2c and 2c+1 at 4c
	// and 4c+1, their last groups at 4c+2 and 4c+3: one cache line for the symbol), then the
	// stage 3 ones.
	st := mem.take(4 * k)
	l := newBucketLayout(t, k, &mem, st, g)
	saPhase("count")
	ps := newParScan(g, bufs, t, sa, k)
	m := l.m
	if m > 0 {
		// Stage 1: sort and name the LMS substrings. Where buckets are small the scans read
		// every slot, so those not written yet must be empty; at the top level, clearing
		// faults a fresh suffix array in at once (zeroPages).
		g.clear(sa, unsafe.Sizeof(t[0]) == 1)
		saPhase("clear")
		placeLMS(t, sa, l, st[:k], g)
		markSeeds(sa, l)
		saPhase("placeLMS")
		partialLeft(ps, t, sa, l, st)
		fixLSMarks(sa, l, g)
		saPhase("partialLeft")
		partialRight(ps, t, sa, l, st)
		saPhase("partialRight")
		names := l.collectNames(sa, g)
		saPhase("collectNames")
		s1, sa1 := sa[n-m:], sa[:m]
		scatterNames(sa, m, g)
		saPhase("scatterNames")
		saPhaseLevel(n, m, names)
		// Stage 2: sort the LMS suffixes, recursively when names repeat.
		if names < m {
			child := mem
			if between := sa[m : n-m]; len(between) > len(child.free) {
				child.free = between
			}
			saPhaseDepth(1)
			saisReduced(s1, sa1, names, g, bufs, child)
			saPhaseDepth(-1)
		} else {
			for i, c := range s1 {
				sa1[c] = int32(i)
			}
		}
		saPhase("recurse")
		gatherLMS(t, sa, l, g)
		mapLMS(sa1, s1, g)
		// The sorted LMS suffixes, grouped by first symbol, move to their buckets' ends.
		j := m
		for c := k - 1; c >= 0; c-- {
			nc := int(l.nLMS[c])
			j -= nc
			e := int(l.start[c+1])
			moveUp(sa[e-nc:e], sa[j:j+nc])
		}
	}
	saPhase("map+move")
	// Stage 3: induce the order of all suffixes from the LMS ones.
	clearS(sa, l, g)
	finalLeft(ps, t, sa, l, st[:k])
	saPhase("finalLeft")
	finalRight(ps, t, sa, l, st[:k])
	saPhase("finalRight")
}

const (
	pfDist = 64 // entries between asking for a line and using it
	pfStep = 32 // entries asked for at once
)

// saisReduced sorts the suffixes of a reduced string: small ones by plain SA-IS, those whose
// names are nearly all distinct by doubling (sais_doubling.go), the others by the bucketed scans.
func saisReduced(t, sa []int32, k int, g *team, bufs *parBufs, mem saScratch) {
	switch {
	case len(t) < 1<<12:
		saisInt(t, sa, k)
		return
	case doublingDense(len(t), k, g.size):
		m := mem
		if sortDoubling(t, sa, k, &m, g) {
			return
		}
	}
	saisLevel(t, sa, k, g, bufs, mem)
}

// collectNames moves the sorted LMS positions from their regions to sa[:m] (where stage 1 was
// split, the scan put them there), and stores the name of each (the rank of its LMS substring
// among the distinct ones) plus one in sa[m+p/2] for position p, zero elsewhere in
// sa[m:m+n/2+1]. It returns the number of distinct names.
func (l *bucketLayout) collectNames(sa []int32, tm *team) int {
	if l.la == nil {
		j := 0
		for c := range l.k {
			nc := int(l.nLMS[c])
			e := int(l.start[c+1])
			moveDown(sa[j:j+nc], sa[e-nc:e])
			j += nc
		}
	}
	m := l.m
	tm.clear(sa[m:min(m+len(sa)/2+1, len(sa))], false)
	// A mark is on the last LMS substring of each group: the name of entry i is the number of
	// marks before it. With several parts, each counts its marks first.
	parts := tm.parts(m)
	var base [maxThreads + 1]int32
	if parts > 1 {
		tm.run(parts, func(p int) {
			marks := int32(0)
			for _, v := range sa[m*p/parts : m*(p+1)/parts] {
				marks -= v >> 31
			}
			base[p+1] = marks
		})
		for p := range parts {
			base[p+1] += base[p]
		}
	}
	var end [maxThreads]int32
	tm.run(parts, func(p int) {
		run := sa[m*p/parts : m*(p+1)/parts]
		end[p] = nameRun(run, sa[m:min(m+len(sa)/2+1, len(sa))], base[p])
	})
	return int(end[parts-1])
}

// nameRunGo clears the marks of the sorted LMS positions in run, stores name+1 for each position
// p in names[p/2], counting the marks (each ends a group) from name on, and returns the count.
// LMS positions are at least two apart and m <= (n-1)/2, so p/2 slots never collide and stay
// inside sa. The assembly (nameRun) asks for the name slots 64 entries ahead.
func nameRunGo(run, names []int32, name int32) int32 {
	for x, v := range run {
		p := v & saPos
		run[x] = p
		names[p>>1] = name + 1
		name -= v >> 31
	}
	return name
}

// scatterNames compacts the names stored in sa[m:] (plus one, zero for empty) into the end of sa,
// in text order: the reduced string. Names are in sa[m:m+n/2+1] only (nameRun). Each part
// compacts its own stretch to its top, then the stretches move up into place, the top one first.
func scatterNames(sa []int32, m int, tm *team) {
	n := len(sa)
	h := min(m+n/2+1, n)
	parts := tm.parts(h - m)
	var lo, cnt [maxThreads + 1]int
	for p := range parts + 1 {
		lo[p] = m + (h-m)*p/parts
	}
	tm.run(parts, func(p int) {
		cnt[p] = compactNames(sa[lo[p]:lo[p+1]])
	})
	top := n
	for p := parts - 1; p >= 0; p-- {
		copy(sa[top-cnt[p]:top], sa[lo[p+1]-cnt[p]:lo[p+1]])
		top -= cnt[p]
	}
}

// compactNamesGo moves the names in s (plus one, zero for empty) to its top, minus one, in order,
// and returns how many. Zeros are written too, where the next name goes: no branch to mispredict.
func compactNamesGo(s []int32) int {
	j := len(s) - 1
	for i := len(s) - 1; i >= 0; i-- {
		v := s[i]
		s[j] = v - 1
		j -= int(nz(v))
	}
	return len(s) - 1 - j
}

// mapLMS replaces each entry r of sa1 (the order of the reduced string's suffixes) by s1[r], the
// LMS position of text that suffix r stands for.
func mapLMS(sa1, s1 []int32, tm *team) {
	m := len(sa1)
	parts := tm.parts(m)
	tm.run(parts, func(p int) {
		mapRun(sa1[m*p/parts:m*(p+1)/parts], s1)
	})
}

// mapRunGo replaces each entry r of run by s1[r]. The assembly (mapRun) asks for s1's entries 128
// entries ahead.
func mapRunGo(run, s1 []int32) {
	for x, r := range run {
		run[x] = s1[r]
	}
}

// moveDown and moveUp are copy (dst below src, or above it) for the many short runs of a large
// alphabet's buckets, where a call to memmove costs more than the run.
func moveDown(dst, src []int32) {
	if len(src) > 16 {
		copy(dst, src)
		return
	}
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = v
	}
}

func moveUp(dst, src []int32) {
	if len(src) > 16 {
		copy(dst, src)
		return
	}
	src = src[:len(dst)]
	for i := len(src) - 1; i >= 0; i-- {
		dst[i] = src[i]
	}
}
