package cpu

import "github.com/sapipe/sapipe/kernels"

// laneCount is how many query segments one goroutine walks through a page at once. Every step of
// a backward search ends in a random access to the rank structure, and a lone walk waits for each
// one. Walking several segments in turn, and touching every lane's next rank block before any lane
// uses it, keeps that many cache misses in flight at once instead of one. 16 lanes rather than
// 8: 200,000 reads against E. coli (-maxmatch -l 20 -b -c) on 2 threads took ~8% less time, run
// for run, in two sets of 5 alternated runs.
const laneCount = 16

// lane is the backward search of one segment: the match state (rows [lo, hi), length m) of
// q[pos:], for pos from the segment's end down to from.
type lane struct {
	q         []byte
	pos, from int
	lo, hi, m int
	s         int    // the suffix array's value at lo when hi-lo is 1 and it is known, else -1
	rec       int    // while above s (after a skip): the text position whose row is lo, on its way down to s; else -1
	jump      bool   // lo (found or being found) is a jump's guess, to check (jumped)
	back      [4]int // the state a failed jump goes back to: pos, lo, hi, m
	out       []kernels.Match
	best      []candidate // walkLanesBest: the best match over the pages so far at each position from from
	tw        tailWalk    // the run at a position, and walkLanesBest's comparisons past the window (pageBest)
}

// walkLanes runs the backward searches of up to laneCount segments at once and appends the
// matches of segment i, by descending query position, to outs[i]: every maximal match with
// unique false (-maxmatch), the MumReference matches with unique true (the page must then cover
// the whole reference).
func (p *Page) walkLanes(b *kernels.Batch, segs []kernels.Segment, minLen int, unique bool, outs [][]kernels.Match, sink *uint64) {
	p.walkLanesMode(b, segs, minLen, unique, outs, nil, sink)
}

// walkLanesBest is walkLanes for the MumReference candidates of a reference of several pages: at
// each position of segment i, the page's longest owned match (pageBest) is merged into
// bests[i][pos-From], which the caller reads once every page has been walked.
func (p *Page) walkLanesBest(b *kernels.Batch, segs []kernels.Segment, minLen int, bests [][]candidate, sink *uint64) {
	p.walkLanesMode(b, segs, minLen, true, nil, bests, sink)
}

func (p *Page) walkLanesMode(b *kernels.Batch, segs []kernels.Segment, minLen int, unique bool, outs [][]kernels.Match, bests [][]candidate, sink *uint64) {
	var ls [laneCount]lane
	live := ls[:len(segs)]
	p.startStates(b, segs, live)
	for i, sg := range segs {
		l := &live[i]
		l.q, l.pos, l.from, l.s, l.rec = b.Codes[sg.Off:sg.Off+sg.Len], sg.To-1, sg.From, -1, -1
		if bests != nil {
			l.best = bests[i]
		} else {
			l.out = outs[i]
		}
		if l.pos >= l.from {
			l.lo, l.hi, l.m = p.extend(l.lo, l.hi, l.m, l.q[l.pos])
		}
	}
	occ, stride, small := p.occ.data, p.occ.stride, p.lcp.small
	skips := p.isa != nil && bests == nil
	var touched uint64
	for {
		active := false
		for i := range live {
			l := &live[i]
			if l.pos >= l.from {
				active = true
				touched += occ[(l.lo/occBlock)*stride] + occ[(l.hi/occBlock)*stride] + p.deep[l.lo>>6] + p.deep[l.hi>>6] + uint64(small[l.lo]) + uint64(small[l.hi])
				if skips && l.s < 0 && l.hi-l.lo == 1 && l.m >= p.skipFrom {
					touched += uint64(p.sa[l.lo]) // skip reads it
				}
			}
		}
		if !active {
			break
		}
		for i := range live {
			if l := &live[i]; l.pos >= l.from {
				p.laneMove(l, minLen, unique, skips)
			}
		}
	}
	*sink += touched
	if bests == nil {
		for i := range live {
			outs[i] = live[i].out
		}
	}
}

// laneMove moves a live lane on: one LF step towards the row a skip reached, a skip along a
// long match (with skips: the page has markSkips' tables and the lane is not walkLanesBest's),
// or one laneStep.
func (p *Page) laneMove(l *lane, minLen int, unique, skips bool) {
	switch {
	case l.rec >= 0:
		p.recoverStep(l)
	case l.jump:
		p.jumped(l)
	case skips && l.hi-l.lo == 1 && l.m >= p.skipFrom && p.skip(l, minLen, unique):
	default:
		s := l.s
		p.laneStep(l, minLen, unique)
		if s >= 0 && l.s < 0 && skips && l.pos >= l.from {
			p.jump(l, s, minLen)
		}
	}
}

// laneStep reports the matches at l.pos and moves the search one position left. The ranks of the
// symbol before pos at lo and hi serve twice: they tell whether every row of the match is
// preceded by that symbol (so none is left-maximal), and they are the next backward step.
func (p *Page) laneStep(l *lane, minLen int, unique bool) {
	q, pos, lo, hi, m := l.q, l.pos, l.lo, l.hi, l.m
	prev := byte(kernels.CodeNone)
	if pos > 0 {
		prev = q[pos-1]
	}
	ranked := prev >= kernels.FirstCode
	r1, r2 := 0, 0
	if ranked {
		r1, r2 = p.occ.Rank(prev, lo), p.occ.Rank(prev, hi)
	}
	switch {
	case m < minLen:
	case l.best != nil:
		var c candidate
		c, l.s = p.pageBest(q, pos, lo, hi, m, minLen, l.s, &l.tw)
		b := &l.best[pos-l.from]
		switch {
		case c.count == 0:
		case c.len > b.len:
			*b = c
		case c.len == b.len:
			b.count += c.count
		}
	case unique:
		// The longest match, when it occurs once and its row is not preceded by prev.
		if hi-lo == 1 && (!ranked || r1 == r2) {
			l.out = append(l.out, kernels.Match{Ref: int64(p.Start) + int64(p.sa[lo]), Query: int32(pos), Len: int32(m)})
		}
	default:
		if !ranked || r2-r1 < hi-lo {
			l.out = p.emitRows(lo, hi, m, prev, q, pos, &l.tw, l.out)
		}
		a, b := lo, hi
		for p.isDeep(a) || p.isDeep(b) {
			d := max(p.lcp.at(a), p.lcp.at(b))
			// Inside a run of x (a gap of N) every level from here on is x^j's, one a symbol of
			// the run, and only starts of runs are left-maximal.
			if int(d) >= runEmitFrom && p.emitFromRuns(l, a, b, int(d), prev, minLen) {
				break
			}
			na, nb := p.lcp.prevSmaller(a, d), p.lcp.nextSmaller(b, d)
			l.out = p.emitRows(na, a, int(d), prev, q, pos, &l.tw, l.out)
			l.out = p.emitRows(b, nb, int(d), prev, q, pos, &l.tw, l.out)
			a, b = na, nb
		}
	}
	l.pos--
	if l.pos < l.from {
		return
	}
	if l.s >= 0 && r1 < r2 {
		l.s-- // one row, extended by the symbol before its suffix: the suffix one position left
	} else {
		l.s = -1
	}
	if ranked {
		l.lo, l.hi, l.m = p.extendRanked(lo, hi, m, prev, r1, r2)
	} else {
		l.lo, l.hi, l.m = 0, p.n+1, 0 // prev cannot match: the search starts afresh
	}
}

// startStates sets ls[i]'s state (lo, hi, m) to that of segment i's q[To:], from the last segment
// to the first. Where segment i+1 goes on from segment i's end (the chunks of a long sequence),
// a match of segment i that is one row is compared only up to segment i+1's To; if segment i+1's
// match is one row on the same diagonal, segment i's length is the distance between the two plus
// segment i+1's. A sequence against itself (or two assemblies of a genome) matches on for
// millions of symbols, and each segment compared them all.
func (p *Page) startStates(b *kernels.Batch, segs []kernels.Segment, ls []lane) {
	for i := len(segs) - 1; i >= 0; i-- {
		sg := segs[i]
		l := &ls[i]
		if sg.To <= sg.From {
			continue
		}
		q := b.Codes[sg.Off : sg.Off+sg.Len]
		if sg.To >= len(q) {
			l.lo, l.hi, l.m = 0, p.n+1, 0
			continue
		}
		capped := 0
		if i+1 < len(segs) {
			if nx := segs[i+1]; nx.Off == sg.Off && nx.Len == sg.Len && nx.From == sg.To && nx.To > nx.From {
				capped = nx.To - sg.To
			}
		}
		var open bool
		l.lo, l.hi, l.m, open = p.longestPrefixCapped(q[sg.To:], capped)
		if !open {
			continue
		}
		s, nx := int(p.sa[l.lo]), &ls[i+1]
		if nx.hi-nx.lo == 1 && int(p.sa[nx.lo]) == s+capped {
			l.m = capped + nx.m
		} else {
			l.m = p.runFrom(q[sg.To:], s, capped)
		}
	}
}
