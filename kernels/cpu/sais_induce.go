package cpu

// The induction scans. Each scan walks the buckets region by region in suffix order. A region's
// entries are read in blocks of final entries (ones no later induction can change): first every
// entry of the block is read together with the text symbols it needs (gather: independent loads,
// so their cache misses overlap; with several threads, each gathers a part of the block), then the
// induced entries are written in scan order (place: bucket heads stay in cache). Types are never
// looked up: the type of p-1 follows from t[p-1], t[p] and the type of p, which the region being
// scanned gives.
//
// Stage 1 (partial*) sorts the LMS substrings and groups equal ones as it goes: the sign bit of an
// entry marks a group boundary within its region, and a running group number d, advanced at
// marks, tells whether two entries induced into one region came from the same group. L regions
// mark the first (leftmost) entry of each group, S regions the last, as each is filled in its own
// direction. Each bucket is split by the type of the predecessor so that every entry a scan reads
// induces one: LL (L-type, L-type predecessor; read by the left-to-right scan), LS (L-type, S-type
// predecessor; read right to left), S (S-type, not LMS; read right to left) and LMS (written last,
// read by nobody: they come out sorted, grouped and together).
//
// Stage 3 (final*) induces the suffix array from the sorted LMS suffixes in plain buckets (L
// region, then S region); the sign bit of an entry p says that p-1 is S-type, so the left-to-right
// scan induces from the entries without it and the right-to-left scan from the entries with it,
// clearing it.

// chunkBuf holds the gathered inductions of a chunk of a block, in scan order: destination
// (bucket or sub-bucket), entry, and group number relative to the chunk's start (stage 1).
type chunkBuf struct {
	dst, pos, grp [gatherChunk]int32
	sink          int32
}

// gatherFunc gathers the inductions of the entries in [lo, hi) (a left-to-right scan) or [lo, hi]
// read from hi down (right to left), at most gatherChunk of them, into b, returning their number
// and the advance of the group number over the range.
type gatherFunc func(lo, hi int32, b *chunkBuf) (k int, d int32)

func bit(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// partialLeft induces the L-type entries of stage 1 from the LMS positions in their regions.
// Sub-bucket 2c is the LL region of bucket c, 2c+1 its LS region.
func partialLeft[T symbol](t []T, sa []int32, l *bucketLayout, g *gatherers, head, last []int32) {
	n := len(t)
	for c := range l.k {
		head[2*c] = l.start[c]
		head[2*c+1] = l.start[c] + l.nLL[c]
	}
	for s := range last {
		last[s] = -1
	}
	// The suffix before the sentinel is alone in its group (its LMS substring reaches the end).
	s := 2*int32(t[n-1]) + bit(t[n-2] < t[n-1])
	sa[head[s]] = int32(n-1) | saFlag
	head[s]++
	last[s] = -2
	ll := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchUp(t, sa, lo, hi, b)
		}
		k, d := 0, int32(0)
		for i := lo; i < hi; i++ {
			v := sa[i]
			d -= v >> 31
			p := v & saPos
			q := max(p-1, 0)
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k], b.grp[k] = 2*int32(a)+bit(t[r] < a), q, d
			k += int(bit(p > 0))
		}
		return k, d
	}
	seeds := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchUp(t, sa, lo, hi, b)
		}
		k := 0
		for i := lo; i < hi; i++ {
			q := sa[i] - 1
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k], b.grp[k] = 2*int32(a)+bit(t[r] < a), q, 0
			k++
		}
		return k, 0
	}
	d := int32(0)
	for c := range l.k {
		i, e := l.start[c], l.start[c]+l.nLL[c]
		for i < e {
			hi := max(min(e, head[2*c], i+g.span), i+1)
			if hi-i < minRun {
				// A short run of final entries (the bucket induces into itself, as in a run of
				// one symbol): one at a time.
				v := sa[i]
				d -= v >> 31
				if p := v & saPos; p > 0 {
					q := p - 1
					a := t[q]
					s := 2*int32(a) + bit(t[max(q-1, 0)] < a)
					mark := saFlag & -bit(last[s] != d)
					last[s] = d
					sa[head[s]] = q | mark
					head[s]++
				}
				i++
				continue
			}
			g.gather(ll, i, hi, false)
			d = g.placeGroupedUp(sa, d, head, last)
			i = hi
		}
		// The LMS positions of bucket c, one group.
		d++
		i, e = l.start[c+1]-l.nLMS[c], l.start[c+1]
		for i < e {
			hi := min(e, i+g.span)
			g.gather(seeds, i, hi, false)
			d = g.placeGroupedUp(sa, d, head, last)
			i = hi
		}
	}
}

// placeGroupedUp places the gathered parts at the heads of their sub-buckets, marking each
// entry whose group differs from the previous one in its sub-bucket; d is the group number before
// the block, and the one after it is returned.
func (g *gatherers) placeGroupedUp(sa []int32, d int32, head, last []int32) int32 {
	if len(head) > touchBuckets {
		g.touchPlaces(sa, head)
	}
	for j, pt := range g.chunks[:g.nchunks] {
		b := &g.bufs[j]
		for x := range pt.k {
			s := b.dst[x]
			gr := b.grp[x] + d
			mark := int32(0)
			if last[s] != gr {
				mark = saFlag
			}
			last[s] = gr
			h := head[s]
			sa[h] = b.pos[x] | mark
			head[s] = h + 1
		}
		d += pt.d
	}
	return d
}

// partialRight induces the S-type entries of stage 1 from the LS ones, right to left. Sub-bucket
// 2c is the S (non-LMS) region of bucket c, 2c+1 its LMS region.
func partialRight[T symbol](t []T, sa []int32, l *bucketLayout, g *gatherers, tail, last []int32) {
	for c := range l.k {
		tail[2*c] = l.start[c+1] - l.nLMS[c]
		tail[2*c+1] = l.start[c+1]
	}
	for s := range last {
		last[s] = -1
	}
	// S non-LMS entries carry marks on the last entry of each group: the group number advances
	// before the entry.
	sn := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchUp(t, sa, lo, hi+1, b)
		}
		k, d := 0, int32(0)
		for i := hi; i >= lo; i-- {
			v := sa[i]
			d -= v >> 31
			p := v & saPos
			q := max(p-1, 0)
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k], b.grp[k] = 2*int32(a)+bit(t[r] > a), q, d
			k += int(bit(p > 0))
		}
		return k, d
	}
	// LS entries carry marks on the first entry of each group: it advances after the entry.
	ls := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchUp(t, sa, lo, hi+1, b)
		}
		k, d := 0, int32(0)
		for i := hi; i >= lo; i-- {
			v := sa[i]
			p := v & saPos
			q := p - 1
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k], b.grp[k] = 2*int32(a)+bit(t[r] > a), q, d
			k++
			d -= v >> 31
		}
		return k, d
	}
	d := int32(0)
	for c := l.k - 1; c >= 0; c-- {
		lo := l.start[c] + l.nLL[c] + l.nLS[c]
		i := l.start[c+1] - l.nLMS[c] - 1
		for i >= lo {
			b := min(max(lo, tail[2*c], i-g.span+1), i)
			if i-b < minRun {
				v := sa[i]
				d -= v >> 31
				if p := v & saPos; p > 0 {
					q := p - 1
					a := t[q]
					s := 2*int32(a) + bit(t[max(q-1, 0)] > a)
					mark := saFlag & -bit(last[s] != d)
					last[s] = d
					tail[s]--
					sa[tail[s]] = q | mark
				}
				i--
				continue
			}
			g.gather(sn, b, i, true)
			d = g.placeGroupedDown(sa, d, tail, last)
			i = b - 1
		}
		d++
		lo = l.start[c] + l.nLL[c]
		i = lo + l.nLS[c] - 1
		for i >= lo {
			b := max(lo, i-g.span+1)
			g.gather(ls, b, i, true)
			d = g.placeGroupedDown(sa, d, tail, last)
			i = b - 1
		}
	}
}

// placeGroupedDown is placeGroupedUp for a right-to-left scan: it places at the tails.
func (g *gatherers) placeGroupedDown(sa []int32, d int32, tail, last []int32) int32 {
	if len(tail) > touchBuckets {
		g.touchPlaces(sa, tail)
	}
	for j, pt := range g.chunks[:g.nchunks] {
		b := &g.bufs[j]
		for x := range pt.k {
			s := b.dst[x]
			gr := b.grp[x] + d
			mark := int32(0)
			if last[s] != gr {
				mark = saFlag
			}
			last[s] = gr
			h := tail[s] - 1
			sa[h] = b.pos[x] | mark
			tail[s] = h
		}
		d += pt.d
	}
	return d
}

// finalLeft induces the L-type suffixes from the sorted LMS suffixes at their buckets' ends. The
// S-type slots other than those are cleared first, so that the scan can run straight through
// the array: a block goes on across buckets as long as its entries are final (below the head of
// an L region), which keeps blocks long where buckets are small (reduced strings).
func finalLeft[T symbol](t []T, sa []int32, l *bucketLayout, g *gatherers, head []int32) {
	n := len(t)
	k := l.k
	for c := range k {
		clear(sa[l.start[c]+l.nLL[c]+l.nLS[c] : l.start[c+1]-l.nLMS[c]])
	}
	copy(head, l.start[:k])
	c := t[n-1]
	sa[head[c]] = int32(n-1) | saFlag&-bit(t[n-2] < c)
	head[c]++
	// Each p without the flag induces p-1, flagged when p-2 is S-type.
	fl := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchInducing(t, sa, lo, hi, b, false)
		}
		k := 0
		for i := lo; i < hi; i++ {
			v := sa[i]
			q := max(v-1, 0)
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k] = int32(a), q|saFlag&-bit(q > 0 && t[r] < a)
			k += int(bit(v > 0))
		}
		return k, 0
	}
	cb := 0 // the bucket of i
	for i := int32(0); i < int32(n); {
		for l.start[cb+1] <= i {
			cb++
		}
		// Extend the block [i, hi) while its entries are final.
		hi, limit := i, i+g.span
		for x := cb; x < k && hi < limit; x++ {
			if lEnd := l.start[x] + l.nLL[x] + l.nLS[x]; hi < lEnd && head[x] < lEnd {
				hi = max(hi, head[x])
				break
			}
			hi = l.start[x+1]
		}
		hi = max(min(hi, limit), i+1)
		if hi-i < minRun {
			// A short run of final entries (the bucket induces into itself, as in a run of one
			// symbol): one at a time.
			if v := sa[i]; v > 0 {
				q := v - 1
				a := t[q]
				h := head[a]
				sa[h] = q | saFlag&-bit(q > 0 && t[max(q-1, 0)] < a)
				head[a] = h + 1
			}
			i++
			continue
		}
		g.gather(fl, i, hi, false)
		g.placeUp(sa, head)
		i = hi
	}
}

func (g *gatherers) placeUp(sa []int32, head []int32) {
	if len(head) > touchBuckets {
		g.touchPlaces(sa, head)
	}
	for j, pt := range g.chunks[:g.nchunks] {
		b := &g.bufs[j]
		for x := range pt.k {
			a := b.dst[x]
			h := head[a]
			sa[h] = b.pos[x]
			head[a] = h + 1
		}
	}
}

// finalRight induces the S-type suffixes from the L-type ones, right to left, and clears the
// flags. Blocks run across buckets as long as their entries are final (at or above the tail of
// an S region; L regions are complete).
func finalRight[T symbol](t []T, sa []int32, l *bucketLayout, g *gatherers, tail []int32) {
	n := len(t)
	copy(tail, l.start[1:])
	// Each flagged p induces p-1, flagged when p-2 is S-type.
	fr := func(lo, hi int32, b *chunkBuf) (int, int32) {
		if saTouch {
			touchInducing(t, sa, lo, hi+1, b, true)
		}
		k := 0
		for i := hi; i >= lo; i-- {
			v := sa[i]
			p := v & saPos
			sa[i] = p
			q := p - 1
			if v >= 0 {
				q = 0
			}
			a := t[q]
			r := max(q-1, 0)
			b.dst[k], b.pos[k] = int32(a), q|saFlag&-bit(q > 0 && t[r] <= a)
			k += int(bit(v < 0))
		}
		return k, 0
	}
	cb := l.k - 1 // the bucket of i
	for i := int32(n - 1); i >= 0; {
		for l.start[cb] > i {
			cb--
		}
		// Extend the block [lo, i] downwards while its entries are final.
		lo, limit := i+1, i-g.span+1
		for x := cb; x >= 0 && lo > limit; x-- {
			if sStart := l.start[x] + l.nLL[x] + l.nLS[x]; lo > sStart {
				if tail[x] > sStart {
					lo = min(lo, tail[x])
					break
				}
			}
			lo = l.start[x]
		}
		lo = min(max(lo, limit), i)
		if i-lo < minRun {
			if v := sa[i]; v < 0 {
				p := v & saPos
				sa[i] = p
				q := p - 1
				a := t[q]
				h := tail[a] - 1
				sa[h] = q | saFlag&-bit(q > 0 && t[max(q-1, 0)] <= a)
				tail[a] = h
			}
			i--
			continue
		}
		g.gather(fr, lo, i, true)
		g.placeDown(sa, tail)
		i = lo - 1
	}
}

func (g *gatherers) placeDown(sa []int32, tail []int32) {
	if len(tail) > touchBuckets {
		g.touchPlaces(sa, tail)
	}
	for j, pt := range g.chunks[:g.nchunks] {
		b := &g.bufs[j]
		for x := range pt.k {
			a := b.dst[x]
			h := tail[a] - 1
			sa[h] = b.pos[x]
			tail[a] = h
		}
	}
}

const saTouch = true

// touchUp loads the text symbol before each entry of sa[lo:hi], so that the cache misses of a
// block are all outstanding at once: a short loop keeps many in flight, where the full gather
// (many instructions per entry) would stall on each in turn.
func touchUp[T symbol](t []T, sa []int32, lo, hi int32, b *chunkBuf) {
	var x T
	for _, v := range sa[lo:hi] {
		x += t[max(v&saPos-1, 0)]
	}
	b.sink = int32(x)
}

// touchInducing is touchUp for the entries of stage 3 that induce: those with the flag (flagged)
// or without it. The others would only fetch a line for nothing.
func touchInducing[T symbol](t []T, sa []int32, lo, hi int32, b *chunkBuf, flagged bool) {
	var x T
	if flagged {
		for _, v := range sa[lo:hi] {
			q := v&saPos - 1
			if v >= 0 {
				q = 0
			}
			x += t[max(q, 0)]
		}
	} else {
		for _, v := range sa[lo:hi] {
			x += t[max(v-1, 0)]
		}
	}
	b.sink = int32(x)
}

// touchBuckets is the alphabet size past which the bucket pointers and the slots they point to
// no longer stay in cache, and placement touches them ahead (see touchUp).
const touchBuckets = 1 << 15

// touchPlaces loads the bucket pointer of every gathered induction and the suffix array slot it
// points to, so that placement finds them in cache.
func (g *gatherers) touchPlaces(sa []int32, ptr []int32) {
	var x int32
	for j, pt := range g.chunks[:g.nchunks] {
		b := &g.bufs[j]
		for _, s := range b.dst[:pt.k] {
			h := ptr[s]
			x += sa[max(h-1, 0)]
		}
	}
	g.bufs[0].sink = x
}
