package cpu

import "runtime"

// Suffix array construction by induced sorting (SA-IS; Nong, Zhang and Chan, 2009), in linear
// time. The end of the text is a virtual sentinel, smaller than every symbol, so the text needs no
// terminator and every byte value may occur in it.
//
// The top level (bytes, this file and sais_byte.go) is engineered for memory latency, which is
// what limits SA-IS on large inputs: types are never stored but recomputed from neighbouring
// symbols, the spare sign bit of suffix array entries carries a flag instead, LMS substrings are
// named while they are induced (no second pass comparing them), and every induction scan reads
// the text in blocks, gathering the symbols of a block of entries before placing any of them, so
// that many cache misses are outstanding at once. The reduced problems (names of LMS substrings,
// int32) are solved by sais_int.go.

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
	minRun = 16        // shorter runs of final entries are induced one at a time
)

// layout is where each symbol's suffixes go in stage 1: bucket c is [start[c], start[c+1]), its
// LL suffixes first (L-type with an L-type predecessor, or position 0), then LS (L-type with an
// S-type predecessor), S (S-type, not LMS) and LMS. Stage 3 uses the same buckets, L-type suffixes
// (LL and LS) first.
type bucketLayout struct {
	k              int     // alphabet size
	start          []int32 // k+1
	nLL, nLS, nLMS []int32 // k each
	m              int     // LMS positions in all
}

// newBucketLayout counts the suffixes of t by first symbol and kind. Symbols must be in [0, k).
func newBucketLayout[T symbol](t []T, k int) *bucketLayout {
	l := &bucketLayout{k: k}
	buf := make([]int32, 4*k+1)
	l.start, l.nLL, l.nLS, l.nLMS = buf[:k+1], buf[k+1:2*k+1], buf[2*k+1:3*k+1], buf[3*k+1:]
	cnt := make([]int32, 4*k) // per symbol: LL, LS, LMS, S
	n := len(t)
	// Walk backwards with the type of the position to the right (1 for S); t[n-1] is L-type
	// because the virtual sentinel after it is smaller. Position i+1 is classified once the type
	// of i is known.
	next, nextS := t[n-1], int32(0)
	for i := n - 2; i >= 0; i-- {
		c := t[i]
		s := bit(c < next) | bit(c == next)&nextS
		cnt[4*int(next)+int(2*nextS+s)]++
		next, nextS = c, s
	}
	cnt[4*int(next)+int(3*nextS)]++ // position 0: LL or S
	var sum int32
	for c := range k {
		l.start[c] = sum
		l.nLL[c], l.nLS[c], l.nLMS[c] = cnt[4*c], cnt[4*c+1], cnt[4*c+2]
		sum += cnt[4*c] + cnt[4*c+1] + cnt[4*c+2] + cnt[4*c+3]
		l.m += int(cnt[4*c+2])
	}
	l.start[k] = sum
	return l
}

// placeLMS writes the LMS positions of t into their buckets' LMS regions, in text order within
// each. tail has k entries.
func placeLMS[T symbol](t []T, sa []int32, l *bucketLayout, tail []int32) {
	copy(tail, l.start[1:])
	n := len(t)
	// Positions that are not LMS are written to a slot of an L-type region instead (the bucket
	// of t[n-1] has one), which stage 1 overwrites: no branch to mispredict.
	trash := l.start[t[n-1]]
	next, nextS := t[n-1], int32(0)
	for i := n - 2; i >= 0; i-- {
		c := t[i]
		s := bit(c < next) | bit(c == next)&nextS
		lms := nextS &^ s
		tail[next] -= lms
		sa[trash+(tail[next]-trash)&-lms] = int32(i + 1)
		next, nextS = c, s
	}
}

// gatherLMS writes the LMS positions of t, in text order, to sa[len(sa)-m:]. Positions that are
// not LMS are written just below, to sa[len(sa)-m-1], which must be free.
func gatherLMS[T symbol](t []T, sa []int32, m int) {
	n := len(t)
	k := int32(len(sa))
	next, nextS := t[n-1], int32(0)
	for i := n - 2; i >= 0; i-- {
		c := t[i]
		s := bit(c < next) | bit(c == next)&nextS
		k -= nextS &^ s
		sa[k-1+nextS&^s] = int32(i + 1)
		next, nextS = c, s
	}
}

func saisBytes(t []byte, sa []int32, threads int) {
	if len(t) < 1<<16 {
		threads = 1
	}
	adviseHugePages(t, sa)
	g := newGatherers(threads)
	defer g.close()
	saisLevel(t, sa, 256, g)
}

// saisLevel fills sa with the suffix array of t (len(t) >= 2), whose symbols are in [0, k).
func saisLevel[T symbol](t []T, sa []int32, k int, g *gatherers) {
	n := len(t)
	saPhase("start")
	l := newBucketLayout(t, k)
	saPhase("count")
	m := l.m
	work := make([]int32, 4*k)
	if m > 0 {
		// Stage 1: sort and name the LMS substrings.
		placeLMS(t, sa, l, work[:k])
		saPhase("placeLMS")
		partialLeft(t, sa, l, g, work[:2*k], work[2*k:])
		saPhase("partialLeft")
		partialRight(t, sa, l, g, work[:2*k], work[2*k:])
		saPhase("partialRight")
		names := l.collectNames(sa)
		saPhase("collectNames")
		s1, sa1 := sa[n-m:], sa[:m]
		scatterNames(sa, m)
		saPhase("scatterNames")
		saPhaseLevel(n, m, names)
		// Stage 2: sort the LMS suffixes, recursively when names repeat.
		if names < m {
			saPhaseDepth(1)
			saisReduced(s1, sa1, names, g)
			saPhaseDepth(-1)
		} else {
			for i, c := range s1 {
				sa1[c] = int32(i)
			}
		}
		saPhase("recurse")
		gatherLMS(t, sa, m)
		for i, r := range sa1 {
			sa1[i] = s1[r]
		}
		// The sorted LMS suffixes, grouped by first symbol, move to their buckets' ends.
		j := m
		for c := k - 1; c >= 0; c-- {
			nc := int(l.nLMS[c])
			j -= nc
			e := int(l.start[c+1])
			copy(sa[e-nc:e], sa[j:j+nc])
		}
	}
	saPhase("map+move")
	// Stage 3: induce the order of all suffixes from the LMS ones.
	finalLeft(t, sa, l, g, work[:k])
	saPhase("finalLeft")
	finalRight(t, sa, l, g, work[:k])
	saPhase("finalRight")
}

// saisReduced sorts the suffixes of a reduced string, with the bucketed scans when its alphabet
// is small enough for their per-symbol tables (12 entries a symbol at most) to stay modest, else
// with the plain SA-IS of sais_int.go. Measured (CPU time, best of 4): the level below the 100 MiB
// Linux tar (27 M symbols, 790 K names) takes 10.9 s in all bucketed, 13.9 s plain; the level
// below its first 20 MB (4.7 M, 227 K names) is 10% faster bucketed.
func saisReduced(t, sa []int32, k int, g *gatherers) {
	if 12*k <= len(t) {
		saisLevel(t, sa, k, g)
	} else {
		saisInt(t, sa, k)
	}
}

// collectNames moves the sorted LMS positions from their regions to sa[:m], and stores the name
// of each (the rank of its LMS substring among the distinct ones) plus one in sa[m+p/2] for
// position p, zero elsewhere in sa[m:]. It returns the number of distinct names.
func (l *bucketLayout) collectNames(sa []int32) int {
	j := 0
	for c := range l.k {
		nc := int(l.nLMS[c])
		e := int(l.start[c+1])
		copy(sa[j:j+nc], sa[e-nc:e])
		j += nc
	}
	m := l.m
	clear(sa[m:])
	name := int32(0)
	for i := 0; i < m; i++ {
		v := sa[i]
		p := v & saPos
		sa[i] = p
		// LMS positions are at least two apart and m <= (n-1)/2, so p/2 slots never collide and
		// stay inside sa.
		sa[m+int(p>>1)] = name + 1
		// A mark is on the last LMS substring of each group.
		name -= v >> 31
	}
	return int(name)
}

// scatterNames compacts the names stored in sa[m:] (plus one, zero for empty) into the end of sa,
// in text order: the reduced string.
func scatterNames(sa []int32, m int) {
	j := len(sa) - 1
	for i := len(sa) - 1; i >= m; i-- {
		if v := sa[i]; v != 0 {
			sa[j] = v - 1
			j--
		}
	}
}
