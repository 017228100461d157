package bwz

import (
	"math/bits"
	"slices"
)

// The encoder lays the reads out on contigs, as an assembler would, but only as far as
// compression needs: reads that overlap (on either strand) are placed at their offsets in one
// contig, whose consensus (each position's commonest base) is then coded once, and each read as
// its place in the contigs, its strand and where it differs from the consensus. Reads overlap
// when they share a minimizer (the k-mer of least hash among w neighbours, the same on both
// strands) at a placement where they agree with the contig so far but for a few bases.
//
// A contig grows breadth-first from a seed read (the first read not yet placed, in input order):
// each read placed brings the reads that share its minimizers, each tried at the offset that
// the shared k-mer gives. Nothing here is in the format: a decoder only reads the contigs and the
// placements, so the layout can change without changing what decodes.

const (
	layoutK        = 21        // k-mer length
	layoutW        = 16        // k-mers per minimizer window
	layoutMaxTries = 256       // unplaced reads of a minimizer's group tried from one read
	layoutMaxPos   = 1<<15 - 1 // minimizers start in a read's first 32 KiB
	layoutMinOver  = 32        // the fewest bases a read must share with its contig
	baseWild       = 4         // the base code of a byte other than A, C, G, T (it matches anything)
)

// mmEntry is one minimizer of one read: the top 32 bits of its hash, where its k-mer starts in
// the read and whether it is the k-mer's reverse complement (pos<<1 | rc). Minimizers of hashes
// alike in their top 32 bits are taken as one: the placements they propose are checked anyway.
type mmEntry struct {
	hash  uint32
	posRC uint16
}

func (e mmEntry) pos() int  { return int(e.posRC >> 1) }
func (e mmEntry) rc() bool  { return e.posRC&1 != 0 }
func (e mmEntry) bits() int { return int(e.posRC) }

// kmerHash is an invertible mix of a 2-bit-packed k-mer, so that minimizers are not biased to
// poly-A.
func kmerHash(x uint64) uint64 {
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	x *= 0x81dadef4bc2dd44d
	x ^= x >> 33
	return x
}

// appendMinimizers appends the minimizers of a read (base codes, baseWild breaking k-mers).
func appendMinimizers(dst []mmEntry, s []byte) []mmEntry {
	const mask = 1<<(2*layoutK) - 1
	var win [layoutW]uint64 // the window's hashes, by k-mer position mod layoutW, rc in bit 0
	var fw, rv uint64
	valid := 0 // bases since the last wild one
	best := -1 // the position of the window's least hash
	for i, c := range s[:min(len(s), layoutMaxPos+layoutK)] {
		if c >= baseWild {
			valid = 0
			fw, rv = 0, 0
			best = -1
			continue
		}
		fw = (fw<<2 | uint64(c)) & mask
		rv = rv>>2 | uint64(3-c)<<(2*layoutK-2)
		valid++
		if valid < layoutK {
			continue
		}
		kpos := i - layoutK + 1
		h, hr := kmerHash(fw)&^1, kmerHash(rv)|1
		if hr < h {
			h = hr
		}
		win[kpos%layoutW] = h
		start := kpos - layoutW + 1 // the window's first k-mer
		if valid < layoutK+layoutW-1 {
			continue
		}
		prev := best
		switch {
		case best < start:
			// the least left the window: look again (ties to the leftmost)
			best = start
			for p := start + 1; p <= kpos; p++ {
				if win[p%layoutW] < win[best%layoutW] {
					best = p
				}
			}
		case h < win[best%layoutW]:
			best = kpos
		}
		if best != prev {
			w := win[best%layoutW]
			dst = append(dst, mmEntry{hash: uint32(w >> 32), posRC: uint16(best<<1) | uint16(w&1)})
		}
	}
	return dst
}

// minimizers returns the minimizers of every read, read by read, and where each read's start,
// computed on up to threads goroutines.
func minimizers(seq []byte, ends []uint32, threads int) ([]mmEntry, []int32) {
	n := len(ends)
	parts := min(max(threads, 1), max(n/1024, 1))
	mms := make([][]mmEntry, parts)
	counts := make([][]int32, parts)
	parallel(parts, threads, func(k int) {
		r0, r1 := n*k/parts, n*(k+1)/parts
		b0, b1 := 0, int(ends[r1-1])
		if r0 > 0 {
			b0 = int(ends[r0-1])
		}
		dst := make([]mmEntry, 0, (b1-b0)*2/(layoutW+1)+(r1-r0)*2)
		cnt := make([]int32, r1-r0)
		for i := r0; i < r1; i++ {
			s := uint32(0)
			if i > 0 {
				s = ends[i-1]
			}
			l := len(dst)
			dst = appendMinimizers(dst, seq[s:ends[i]])
			cnt[i-r0] = int32(len(dst) - l)
		}
		mms[k], counts[k] = dst, cnt
	})
	total := 0
	for _, m := range mms {
		total += len(m)
	}
	mm := make([]mmEntry, 0, total)
	first := make([]int32, 1, n+1)
	for k, m := range mms {
		mm = append(mm, m...)
		for _, c := range counts[k] {
			first = append(first, first[len(first)-1]+c)
		}
	}
	return mm, first
}

// layout is where each read lies: in which contig, at what offset from the contig's first base,
// on which strand (rc: the read is the reverse complement of the contig there); and the
// contigs' consensus.
type layout struct {
	contig []int32
	off    []int32
	rc     []bool
	// the contigs' consensus, one after the other; contig c is cons[start[c]:start[c+1]]
	cons  []byte
	start []int
}

// contigBuild is a contig as it grows: base counts per position, and the consensus so far. Its
// arrays have room before their first position as well as after the last, since a contig grows
// both ways, a few bases at a time.
type contigBuild struct {
	lo     int // the coordinate of the first position
	head   int // where it is in the arrays
	counts [][4]uint16
	cons   []byte // the commonest base at each position (baseWild where none is known)
}

// reset empties the contig, keeping its arrays, with the room before its first position half
// of them.
func (c *contigBuild) reset() {
	c.lo = 0
	c.head = min(cap(c.cons), cap(c.counts)) / 2
	c.counts = c.counts[:c.head]
	c.cons = c.cons[:c.head]
}

// span returns the consensus of the contig's positions.
func (c *contigBuild) span() []byte { return c.cons[c.head:] }

// cover grows the contig to hold coordinates [from, to).
func (c *contigBuild) cover(from, to int) {
	if len(c.cons) == c.head {
		c.lo = from
	}
	if from < c.lo {
		grow := c.lo - from
		if grow > c.head {
			// move the positions up, leaving room before them as large as they are, and after
			n := len(c.cons) - c.head
			room := grow + n + 1024
			counts := make([][4]uint16, room+n, 2*room+2*n)
			copy(counts[room:], c.counts[c.head:])
			cons := make([]byte, len(counts), cap(counts))
			copy(cons[room:], c.cons[c.head:])
			c.counts, c.cons, c.head = counts, cons, room
		}
		c.head -= grow
		clear(c.counts[c.head : c.head+grow])
		for i := c.head; i < c.head+grow; i++ {
			c.cons[i] = baseWild
		}
		c.lo = from
	}
	if hi := c.lo + len(c.cons) - c.head; to > hi {
		grow := to - hi
		c.counts = slices.Grow(c.counts, grow)
		c.cons = slices.Grow(c.cons, grow)
		k := len(c.cons)
		c.counts = c.counts[:k+grow]
		c.cons = c.cons[:k+grow]
		clear(c.counts[k:])
		for i := k; i < k+grow; i++ {
			c.cons[i] = baseWild
		}
	}
}

// add counts the bases of read s at coordinate off, on the contig's strand or (rc) the other.
func (c *contigBuild) add(s []byte, off int, rc bool) {
	c.cover(off, off+len(s))
	k := c.head + off - c.lo
	for i := range s {
		b := s[i]
		if rc {
			b = s[len(s)-1-i]
			b ^= 3 &^ (b >> 2 * 3) // the complement, but of baseWild
		}
		if b >= baseWild {
			continue
		}
		cnt := &c.counts[k+i]
		if cnt[b] < 65535 {
			cnt[b]++
		}
		if cur := c.cons[k+i]; cur == baseWild || cur != b && cnt[b] > cnt[cur] {
			c.cons[k+i] = b
		}
	}
}

// fits tells whether read s at coordinate off, on the contig's strand or (rc) the other, shares
// enough bases with the contig and differs from its consensus in few enough of them.
func (c *contigBuild) fits(s []byte, off int, rc bool) bool {
	cons := c.span()
	from, to := max(off, c.lo), min(off+len(s), c.lo+len(cons))
	over := to - from
	if over < min(layoutMinOver, len(s)) {
		return false
	}
	limit := (over + 32) / 16
	b := cons[from-c.lo : to-c.lo]
	miss := 0
	if !rc {
		a := s[from-off : to-off]
		for i := range a {
			if a[i] != b[i] && a[i] < baseWild && b[i] < baseWild {
				miss++
				if miss > limit {
					return false
				}
			}
		}
		return true
	}
	// the read backwards, complemented: contig position from+i holds read base len-1-(from-off+i)
	a := s[len(s)-(to-off) : len(s)-(from-off)]
	for i := range b {
		x := a[len(a)-1-i]
		if x < baseWild && b[i] < baseWild && x != 3-b[i] {
			miss++
			if miss > limit {
				return false
			}
		}
	}
	return true
}

// layoutReads lays out the reads whose base codes seq holds (read i is seq[ends[i-1]:ends[i]]).
func layoutReads(seq []byte, ends []uint32, threads int) *layout {
	n := len(ends)
	read := func(i int) []byte {
		s := uint32(0)
		if i > 0 {
			s = ends[i-1]
		}
		return seq[s:ends[i]]
	}
	// the minimizers; read i's are mm[first[i]:first[i+1]]. mm[e]'s group, the minimizers of
	// its hash, is members[groupStart[group[e]]:groupStart[group[e]+1]], as read<<16 | pos<<1 | rc.
	mm, first := minimizers(seq, ends, threads)
	keys := sortedKeys(mm)
	group := make([]int32, len(mm))
	groupStart := make([]int32, 0, len(mm)/4+1)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j]>>32 == keys[i]>>32 {
			j++
		}
		g := int32(len(groupStart))
		groupStart = append(groupStart, int32(i))
		for _, key := range keys[i:j] {
			group[uint32(key)] = g
		}
		i = j
	}
	groupStart = append(groupStart, int32(len(keys)))
	keys = nil
	// each group's members, read by read (so in the order of their minimizers)
	members := make([]uint64, len(mm))
	cursor := slices.Clone(groupStart[:len(groupStart)-1])
	for r := 0; r < n; r++ {
		for e := first[r]; e < first[r+1]; e++ {
			g := group[e]
			members[cursor[g]] = uint64(r)<<16 | uint64(mm[e].bits())
			cursor[g]++
		}
	}
	cursor = nil
	groupNext := slices.Clone(groupStart)

	lay := &layout{contig: make([]int32, n), off: make([]int32, n), rc: make([]bool, n)}
	placed := make([]bool, n)
	// the last placement tried for each read, so that minimizers that agree are tried once
	triedContig := make([]int32, n)
	triedOff := make([]int32, n)
	for i := range triedContig {
		triedContig[i] = -1
	}
	var cb contigBuild
	var queue []int32
	var inContig []int32
	for seed := 0; seed < n; seed++ {
		if placed[seed] {
			continue
		}
		if allWild(read(seed)) {
			lay.contig[seed] = -1 // nothing to place
			placed[seed] = true
			continue
		}
		c := int32(len(lay.start))
		cb.reset()
		place := func(r int32, off int, rc bool) {
			placed[r] = true
			lay.contig[r], lay.off[r], lay.rc[r] = c, int32(off), rc
			cb.add(read(int(r)), off, rc)
			queue = append(queue, r)
			inContig = append(inContig, r)
		}
		queue, inContig = queue[:0], inContig[:0]
		place(int32(seed), 0, false)
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			pl := len(read(int(p)))
			for e := first[p]; e < first[p+1]; e++ {
				me := mm[e]
				// the k-mer's coordinate in the contig, and its strand there against the
				// minimizer's
				kpos := int(lay.off[p]) + me.pos()
				if lay.rc[p] {
					kpos = int(lay.off[p]) + pl - layoutK - me.pos()
				}
				kr := me.rc() != lay.rc[p]
				g := group[e]
				// the group's reads not placed yet, from the first not known to be placed; a
				// group of a repeat has many, of which few fit here: a read tries a few
				gs, ge := groupNext[g], groupStart[g+1]
				for gs < ge && placed[members[gs]>>16] {
					gs++
				}
				groupNext[g] = gs
				tries := 0
				for _, ref := range members[gs:ge] {
					r := uint32(ref >> 16)
					if placed[r] {
						continue
					}
					if tries++; tries > layoutMaxTries {
						break
					}
					oe := mmEntry{posRC: uint16(ref)}
					rl := len(read(int(r)))
					rrc := oe.rc() != kr
					off := kpos - oe.pos()
					if rrc {
						off = kpos - (rl - layoutK - oe.pos())
					}
					key := off<<1 | b2i(rrc)
					if triedContig[r] == c && int(triedOff[r]) == key {
						continue
					}
					triedContig[r], triedOff[r] = c, int32(key)
					if cb.fits(read(int(r)), off, rrc) {
						place(int32(r), off, rrc)
					}
				}
			}
		}
		// the contig's consensus, from its first coordinate (0 where no base is known)
		lay.start = append(lay.start, len(lay.cons))
		k := len(lay.cons)
		lay.cons = append(lay.cons, cb.span()...)
		for i, b := range lay.cons[k:] {
			if b == baseWild {
				lay.cons[k+i] = 0
			}
		}
		for _, r := range inContig {
			lay.off[r] -= int32(cb.lo)
		}
	}
	lay.start = append(lay.start, len(lay.cons))
	return lay
}

func allWild(s []byte) bool {
	for _, c := range s {
		if c < baseWild {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortedKeys returns hash<<32 | e for each minimizer e of mm, sorted: put by their top bits into
// buckets of about one key each, then each bucket sorted on its own.
func sortedKeys(mm []mmEntry) []uint64 {
	topBits := uint(min(max(bits.Len(uint(len(mm))), 1), 22))
	count := make([]int32, 1<<topBits+1)
	for _, m := range mm {
		count[m.hash>>(32-topBits)+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	next := slices.Clone(count)
	keys := make([]uint64, len(mm))
	for e, m := range mm {
		b := m.hash >> (32 - topBits)
		keys[next[b]] = uint64(m.hash)<<32 | uint64(e)
		next[b]++
	}
	for b := 0; b < 1<<topBits; b++ {
		part := keys[count[b]:count[b+1]]
		if len(part) > 32 {
			slices.Sort(part)
			continue
		}
		for i := 1; i < len(part); i++ { // insertion sort: buckets hold a few keys
			for j := i; j > 0 && part[j] < part[j-1]; j-- {
				part[j], part[j-1] = part[j-1], part[j]
			}
		}
	}
	return keys
}
