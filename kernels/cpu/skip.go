package cpu

import (
	"math/bits"
	"sync/atomic"

	"github.com/sapipe/sapipe/kernels"
)

// Skipping along a long match without the rank structure.
//
// Once the match state of a walk is one row with a long match (suffix s of the window, m
// symbols), it usually stays one row for many positions: against a genome's diverged copy, until
// the next difference, about a hundred positions on. While the symbol before the query position
// equals w[s-1], the next state is the row of suffix s-1 with m+1 symbols, and the step reports
// nothing: the row is not left-maximal, and no other row shares minLen symbols with it unless the
// row or the row after it is deep. Those facts are read in text order (the query and the window,
// and deepText), so the walk steps through them with no random access at all. Where the run
// ends, the row of the suffix it reached is found from the nearest sampled row at or after it
// (isa) by at most isaStep-1 LF steps, one rank a step, and the walk goes on from there.

// isaStep is the spacing of the text positions whose rows a page keeps (isa): 4/isaStep bytes a
// base, and up to isaStep-1 rank reads to find a row where a skip ends.
const isaStep = 16

// markSkips builds what the walks need to skip along long matches (isa, deepText), for the
// minimum match length given to markDeep, on up to threads goroutines: half a bit more than a
// third of a byte a base (4/isaStep bytes of rows, one bit of deepText).
func (p *Page) markSkips(threads int) {
	n := p.n
	p.isa = make([]int32, n/isaStep+1)
	p.deepText = make([]uint64, n/64+1)
	sa := p.sa[:n+1]
	storeParallel(n+1, threads, func(_, lo, hi int) error {
		for k := lo; k < hi; k++ {
			if s := sa[k]; s%isaStep == 0 {
				p.isa[s/isaStep] = int32(k)
			}
		}
		return nil
	})
	// Deep row k (lcp(row k-1, row k) >= minLen) makes both its suffixes' rows deep for a walk
	// whose one row is either of them (laneStep tests rows lo and lo+1).
	deep := p.deep
	storeParallel(len(deep), threads, func(_, lo, hi int) error {
		for w := lo; w < hi; w++ {
			for word := deep[w]; word != 0; word &= word - 1 {
				k := w*64 + bits.TrailingZeros64(word)
				if k < 1 || k > n {
					continue
				}
				for _, s := range [2]int32{sa[k-1], sa[k]} {
					atomic.OrUint64(&p.deepText[s>>6], 1<<(uint(s)&63))
				}
			}
		}
		return nil
	})
	// A one-row match shorter than this is most often a chance one that ends at the next step:
	// reading its suffix would cost a random access for nothing.
	p.skipFrom = (bits.Len(uint(n))+1)/2 + 6
	// A guessed match this long is most often the only one (jump); and at least isaStep, so that
	// the LF steps from the sampled row read only symbols of the match.
	p.jumpFrom = max((bits.Len(uint(n))+1)/2+3, isaStep)
}

// skip moves l, whose state is one row with at least p.skipFrom symbols, left along its match for
// as long as the steps would report nothing and extend that row (see above). It reports whether
// it moved: the lane is then done, or on its way to the row it reached (l.rec).
func (p *Page) skip(l *lane, minLen int, unique bool) bool {
	s0 := l.s
	if s0 < 0 {
		s0 = int(p.sa[l.lo])
	}
	s := s0
	q, w, pos, m := l.q, p.w, l.pos, l.m
	for pos > 0 && s > 0 {
		x := q[pos-1]
		if x < kernels.FirstCode || w[s-1] != x {
			break
		}
		if !unique && m >= minLen && p.deepText[s>>6]>>(uint(s)&63)&1 != 0 {
			break
		}
		pos--
		s--
		m++
		if pos < l.from {
			break
		}
	}
	if pos == l.pos {
		l.s = s
		return false
	}
	l.pos, l.m, l.s = pos, m, s
	if pos < l.from {
		return true
	}
	// The rows of s0 (lo) and of the sampled positions are known: start from the nearest at or
	// after s.
	if t := nextSample(s); t < s0 {
		l.rec, l.lo = t, int(p.isa[t/isaStep])
	} else {
		l.rec = s0
	}
	l.hi = l.lo + 1
	if l.rec == s {
		l.rec = -1
	}
	return true
}

// nextSample is the first text position at or after s whose row the page keeps (isa).
func nextSample(s int) int { return (s + isaStep - 1) / isaStep * isaStep }

// recoverStep takes l's row one LF step towards the row of suffix l.s: from the row of suffix
// l.rec to that of l.rec-1, whose first symbol w[l.rec-1] the skip matched.
func (p *Page) recoverStep(l *lane) {
	x := p.w[l.rec-1]
	l.lo = p.c[x] + p.occ.Rank(x, l.lo)
	l.hi = l.lo + 1
	l.rec--
	if l.rec == l.s {
		l.rec = -1
	}
}

// jump moves l past the positions after a difference where the walk would re-learn a long match
// a step at a time. l has just stepped off the one-row match of suffix sP at pos+1 (the symbols
// before differ), and holds the exact state (lo, hi, m) at pos. A match at y can be no longer
// than m+(pos-y), so the positions from pos down to pos-J+1, J = minLen-m, report nothing. At
// x = pos-J the query is compared with the window on the diagonal of sP and those next to it (a
// small indel shifts it): where L >= p.jumpFrom symbols of q[x:] match at t and the next does
// not, the state at x is guessed to be the row of t with m = L. The guess holds when no row next
// to t's shares L symbols with it (jumped); its row is found from the sampled rows.
func (p *Page) jump(l *lane, sP, minLen int) {
	pos, m := l.pos, l.m
	j := minLen - m
	if j < p.jumpFrom {
		return
	}
	if pos-l.from < j {
		l.pos = l.from - 1 // nothing left to report
		return
	}
	q, w, x, n := l.q, p.w, pos-j, p.n
	for k := 0; k <= 2*jumpShift; k++ {
		t := sP - 1 - j + (k+1)/2*(1-2*(k&1)) // shifts 0, -1, 1, -2, 2, ...
		if t < 0 || t >= n {
			continue
		}
		e := 0
		for x+e < len(q) && t+e < n && q[x+e] >= kernels.FirstCode && q[x+e] == w[t+e] {
			e++
		}
		if e < p.jumpFrom {
			continue
		}
		l.back = [4]int{pos, l.lo, l.hi, m}
		l.pos, l.m, l.s, l.jump = x, e, t, true
		t0 := nextSample(t) // at most t+e: the steps read w[t:t+e], all matchable
		l.lo = int(p.isa[t0/isaStep])
		l.hi = l.lo + 1
		if t0 > t {
			l.rec = t0
		}
		return
	}
}

// jumpShift is how far from the diagonal a jump looks for it: the small indels of a diverged
// copy are 1-10 bases.
const jumpShift = 10

// jumped checks a jump's guess, now that l.lo is the row of suffix l.s: the rows next to it share
// fewer than l.m symbols with it. Otherwise l goes back to where the jump left from.
func (p *Page) jumped(l *lane) {
	l.jump = false
	d := int32(l.m)
	if p.lcp.less(l.lo, d) && p.lcp.less(l.lo+1, d) {
		return
	}
	l.pos, l.lo, l.hi, l.m = l.back[0], l.back[1], l.back[2], l.back[3]
	l.s = -1
}
