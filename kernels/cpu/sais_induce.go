package cpu

import "unsafe"

// The induction scans. Each scan reads the suffix array in order (left to right, or right to
// left), and each entry p that induces gives the suffix p-1 its place: at the head (or tail) of
// the bucket of t[p-1]. Types are never stored: the type of p-1 follows from t[p-1], t[p] and the
// type of p, which the entry tells.
//
// Stage 1 (partial*) sorts the LMS substrings and groups equal ones as it goes: the sign bit of an
// entry marks a group boundary, and a running group number d, advanced at marks, tells whether
// two entries induced into one sub-bucket came from the same group. Each bucket is split by the
// type of the predecessor: LL (L-type, L-type predecessor), LS (L-type, S-type predecessor), S
// (S-type, not LMS) and LMS; an entry carries the bit pb when p-1 is S-type. The left-to-right
// scan induces from the entries without pb (LL entries and the LMS seeds), the right-to-left scan
// from those with it (LS and S entries); slots not yet written are empty (0).
// L regions are filled upwards and mark the first entry of each group, S regions downwards and
// mark the last; the LS marks are moved to the last entry afterwards (fixLSMarks), so the
// right-to-left scan meets every group's mark first. The LMS regions come out sorted, grouped and
// together. Where buckets are large (skipRegions: bytes) the scans read only the regions that
// induce (LL and LMS left to right, S and LS right to left), where every entry but position 0
// induces: there pb is not needed, and texts of 2^30 bytes or more, whose positions leave no bit
// to spare, go without it (wide entries, pb = 0: the gathers and serial scans *W). Where they
// are small (levels of names), passing over each bucket's other regions would cost more than
// reading them, so stage 1 is laid out apart from the buckets instead (bucketLayout.la, as
// libsais lays out its levels of names): all LL regions and seeds in a left region, all LS and S
// regions in a right one, each scan reading only its own; the LMS substrings come out sorted in
// sa[:m]. The Linux tar's first reduced level (27.2 M names, one thread): the scans 204-215 and
// 187-190 ms against 236-295 and 216-221 reading every slot, the names' collection 42-44 ms
// against 52-54.
//
// Stage 3 (final*) induces the suffix array from the sorted LMS suffixes in plain buckets (L
// region, then S region); the sign bit of an entry p says that p-1 is S-type, so the left-to-right
// scan induces from the entries without it and the right-to-left scan from the entries with it,
// clearing it.
//
// The scans go block by block (sais_parallel.go): a block is a run of final entries, those no
// later induction can change; the kernels (sais_kernels.go) read a block's entries and the text
// symbols they need, asking for those cache lines ahead, and then write its inductions. A run of
// fewer than minRun final entries (a bucket inducing into itself, as in a run of one symbol) is
// induced one entry at a time.

func bit(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// bigAlphabet reports whether the per-symbol tables of a level are too large to stay in cache,
// so that the scans ask for bucket pointers ahead as well.
func bigAlphabet[T symbol](k int) bool {
	var z T
	return unsafe.Sizeof(z) == 4 && k >= 1<<13
}

// initLeft readies the stage 1 pointers for the left-to-right scan and places the suffix before
// the sentinel, alone in its group (its LMS substring reaches the end).
func initLeft[T symbol](t []T, sa []int32, l *bucketLayout, st []int32) {
	llStart := l.start
	if l.la != nil {
		llStart = l.la
	}
	for c := range l.k {
		st[4*c] = llStart[c]
		st[4*c+1] = l.lsStart(c)
		st[4*c+2], st[4*c+3] = -1, -1
	}
	n := len(t)
	b := bit(t[n-2] < t[n-1])
	h := 4*int32(t[n-1]) + b
	sa[st[h]] = int32(n-1) | saFlag | l.pb&-b
	st[h]++
	st[h+2] = -2
}

// initRight readies the stage 1 pointers for the right-to-left scan. Sub-bucket 2c is the S
// (non-LMS) region of bucket c, 2c+1 its LMS region (la set: its stretch of sa[:m]).
func initRight(l *bucketLayout, st []int32) {
	lms := int32(0)
	for c := range l.k {
		if l.la != nil {
			lms += l.nLMS[c]
			st[4*c] = l.ra(c + 1)
			st[4*c+1] = lms
		} else {
			st[4*c] = l.start[c+1] - l.nLMS[c]
			st[4*c+1] = l.start[c+1]
		}
		st[4*c+2], st[4*c+3] = -1, -1
	}
}

// induceL places the L-type suffix q (first symbol a; b: q-1 is S-type) at the head of its
// sub-bucket, in group d, marking the first entry of each group. (The right-to-left scan reads
// LS entries and wants their marks on the last: fixLSMarks moves them after the scan.)
func induceL(sa, st []int32, q, a, b, d, pb int32) {
	h := 4*a + b
	mark := saFlag & -nz(st[h+2]^d)
	st[h+2] = d
	y := st[h]
	st[h] = y + 1
	sa[y] = q | pb&-b | mark
}

// nz is 1 if x is not zero, else 0.
func nz(x int32) int32 { return int32(uint32(x|-x) >> 31) }

// induceS places the S-type suffix q (first symbol a; b: q-1 is L-type, so q is LMS) at the tail
// of its sub-bucket, in group d, marking the first placed (the last in suffix order) of each
// group.
func induceS(sa, st []int32, q, a, b, d, pb int32) {
	h := 4*a + b
	mark := saFlag & -nz(st[h+2]^d)
	st[h+2] = d
	y := st[h] - 1
	st[h] = y
	sa[y] = q | pb&(b-1) | mark
}

// markSeeds marks the first LMS position of each bucket after placeLMS: each bucket's seeds
// are one group.
func markSeeds(sa []int32, l *bucketLayout) {
	ends := l.seedEnds()
	for c := range l.k {
		if l.nLMS[c] > 0 {
			sa[ends[c]-l.nLMS[c]] |= saFlag
		}
	}
}

// fixLSMarks moves the marks of each LS region from the first entry of each group to the last,
// after the left-to-right scan: the right-to-left scan, which reads them, meets a group's last
// entry first.
func fixLSMarks(sa []int32, l *bucketLayout, tm *team) {
	parts := tm.parts(len(sa))
	tm.run(parts, func(p int) {
		for c := l.k * p / parts; c < l.k*(p+1)/parts; c++ {
			if n := l.nLS[c]; n > 0 {
				lo := l.lsStart(c)
				shiftMarks(sa[lo : lo+n])
			}
		}
	})
}

// shiftMarksGo moves each mark of run one entry down, and marks its last entry. The assembly
// (shiftMarks) does two entries a step.
func shiftMarksGo(run []int32) {
	carry := int32(saFlag)
	for x := len(run) - 1; x >= 0; x-- {
		v := run[x]
		run[x] = v&^saFlag | carry
		carry = v & saFlag
	}
}

// skipRegions reports whether the scans pass over the regions that induce nothing (LS and S in
// stage 1's left-to-right scan, LMS and LL in its right-to-left one, the empty S slots in stage
// 3's left-to-right one) rather than read them: where buckets are large, as with bytes.
func (l *bucketLayout) skipRegions() bool { return int(l.start[l.k]) >= 64*l.k }

// clearS clears the S-type slots of stage 3 other than the LMS ones, so that its left-to-right
// scan can run straight through the array.
func clearS(sa []int32, l *bucketLayout, tm *team) {
	parts := tm.parts(len(sa))
	tm.run(parts, func(p int) {
		for c := l.k * p / parts; c < l.k*(p+1)/parts; c++ {
			if s := sa[l.start[c]+l.nLL[c]+l.nLS[c] : l.start[c+1]-l.nLMS[c]]; len(s) > 16 {
				clear(s)
			} else {
				for x := range s {
					s[x] = 0
				}
			}
		}
	})
}

// partialLeft induces the L-type entries of stage 1 from the LMS positions, left to right, in
// blocks. Only the LL and LMS regions are read, per bucket (skipRegions) or as the left region
// of a split stage 1 (partialLeftSplit). A block goes on across buckets as long as its entries
// are final (below the head of an LL region; the other regions induce nothing here, and their
// entries are complete or still empty).
func partialLeft[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, st []int32) {
	initLeft(t, sa, l, st)
	n := int32(len(t))
	k := l.k
	pm, pb := l.pm, l.pb
	ps.start(scanL, st, pm, pb, l)
	span := ps.span()
	if l.la != nil {
		partialLeftSplit(ps, t, sa, l, st, span)
		return
	}
	// Large buckets (skipRegions): each bucket's LL and LMS regions.
	if ps.wholeSerial() {
		d := int32(0)
		for c := range k {
			s := l.start[c]
			d = ps.serial(s, s+l.nLL[c], d)
			d = ps.serial(l.start[c+1]-l.nLMS[c], l.start[c+1], d)
		}
		return
	}
	d := int32(0)
	cb := 0 // the bucket of i
	for i := int32(0); i < n; {
		for l.start[cb+1] <= i {
			cb++
		}
		if lmsStart := l.start[cb+1] - l.nLMS[cb]; i == l.start[cb]+l.nLL[cb] && i < lmsStart {
			// The LS and S regions induce nothing here.
			i = lmsStart
			continue
		}
		hi, limit := i, i+min(span, n-i) // i+span could pass 2^31-1
		for x := cb; x < k && hi < limit; x++ {
			if llEnd := l.start[x] + l.nLL[x]; hi < llEnd {
				hi = min(llEnd, max(hi, st[4*x])) // final up to the head, or the whole LL region
				break
			}
			hi = l.start[x+1]
		}
		hi = max(min(hi, limit), i+1)
		d = partialLeftRun(ps, t, sa, st, i, hi, d)
		i = hi
	}
}

// partialLeftRun induces from the final entries [i, hi) of partialLeft, as a block or, when
// they are few (a bucket inducing into itself, as in a run of one symbol), one at a time, and
// returns the group number after them.
func partialLeftRun[T symbol](ps *parScan[T], t []T, sa, st []int32, i, hi, d int32) int32 {
	if hi-i >= minRun {
		return ps.block(i, hi, d)
	}
	pb := ps.pb
	for ; i < hi; i++ {
		v := sa[i]
		d -= v >> 31
		if u := v & ^saFlag; uint32(u-1) < uint32(pb-1) {
			q := u - 1
			a := t[q]
			induceL(sa, st, q, int32(a), bit(t[max(q-1, 0)] < a), d, pb)
		}
	}
	return d
}

// partialRight induces the S-type entries of stage 1 from the L-type ones, right to left, in
// blocks. Only the LS and S regions are read, per bucket (skipRegions) or as the right region
// of a split stage 1 (partialRightSplit). A group boundary is marked on its entry nearest the
// end (a mark advances d before the entry). A block goes on across buckets as long as its
// entries are final (at or above the tail of an S region; LS regions are complete).
func partialRight[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, st []int32) {
	initRight(l, st)
	n := int32(len(t))
	pm, pb := l.pm, l.pb
	ps.start(scanR, st, pm, pb, l)
	span := ps.span()
	if l.la != nil {
		partialRightSplit(ps, t, sa, l, st, span)
		return
	}
	// Large buckets (skipRegions): each bucket's S and LS regions.
	if ps.wholeSerial() {
		d := int32(0)
		for c := l.k - 1; c >= 0; c-- {
			d = ps.serial(l.start[c]+l.nLL[c], l.start[c+1]-l.nLMS[c], d)
		}
		return
	}
	d := int32(0)
	cb := l.k - 1 // the bucket of i
	for i := n - 1; i >= 0; {
		for l.start[cb] > i {
			cb--
		}
		// The LMS and LL regions induce nothing here.
		if lmsStart := l.start[cb+1] - l.nLMS[cb]; i >= lmsStart {
			i = lmsStart - 1
			continue
		}
		if i < l.start[cb]+l.nLL[cb] {
			i = l.start[cb] - 1
			continue
		}
		// i is in bucket cb's S or LS region: final down to the tail of S, or the whole of both.
		lo, limit := i+1, max(i-span+1, 0)
		if sStart := l.start[cb] + l.nLL[cb] + l.nLS[cb]; lo > sStart && st[4*cb] > sStart {
			lo = min(lo, st[4*cb])
		} else {
			lo = min(lo, l.start[cb]+l.nLL[cb])
		}
		lo = min(max(lo, limit), i)
		d = partialRightRun(ps, t, sa, st, lo, i+1, d)
		i = lo - 1
	}
}

// partialRightRun induces from the final entries [lo, hi) of partialRight, downwards, as a
// block or, when they are few, one at a time, and returns the group number after them.
func partialRightRun[T symbol](ps *parScan[T], t []T, sa, st []int32, lo, hi, d int32) int32 {
	if hi-lo >= minRun {
		return ps.block(lo, hi, d)
	}
	pm, pb := ps.pm, ps.pb
	for i := hi - 1; i >= lo; i-- {
		v := sa[i]
		d -= v >> 31
		if u := v & ^saFlag; u > pb {
			q := u&pm - 1
			a := t[q]
			induceS(sa, st, q, int32(a), bit(t[max(q-1, 0)] > a), d, pb)
		}
	}
	return d
}

// partialLeftSplit is partialLeft over the left region of a split stage 1 (la): every entry
// induces. A block goes on across symbols as long as its entries are final (below the head of an
// LL stretch; the seeds after it are placed).
func partialLeftSplit[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, st []int32, span int32) {
	n := l.la[l.k]
	if ps.wholeSerial() {
		ps.serial(0, n, 0)
		return
	}
	k := l.k
	d := int32(0)
	cb := 0 // the symbol whose stretch holds i
	for i := int32(0); i < n; {
		for l.la[cb+1] <= i {
			cb++
		}
		hi, limit := i, i+min(span, n-i)
		for x := cb; x < k && hi < limit; x++ {
			if llEnd := l.la[x] + l.nLL[x]; hi < llEnd && st[4*x] < llEnd {
				hi = max(hi, st[4*x])
				break
			}
			hi = l.la[x+1]
		}
		hi = max(min(hi, limit), i+1)
		d = partialLeftRun(ps, t, sa, st, i, hi, d)
		i = hi
	}
}

// partialRightSplit is partialRight over the right region of a split stage 1 (la), downwards:
// every entry induces. A block goes on across symbols as long as its entries are final (at or
// above the tail of an S stretch; the LS stretches are complete).
func partialRightSplit[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, st []int32, span int32) {
	bottom, n := l.la[l.k], int32(len(t))
	if ps.wholeSerial() {
		ps.serial(bottom, n, 0)
		return
	}
	d := int32(0)
	cb := l.k - 1 // the symbol whose stretch holds i
	for i := n - 1; i >= bottom; {
		for l.ra(cb) > i {
			cb--
		}
		lo, limit := i+1, max(i-span+1, bottom)
		for x := cb; x >= 0 && lo > limit; x-- {
			if sStart := l.ra(x) + l.nLS[x]; lo > sStart && st[4*x] > sStart {
				lo = min(lo, st[4*x])
				break
			}
			lo = l.ra(x)
		}
		lo = min(max(lo, limit), i)
		d = partialRightRun(ps, t, sa, st, lo, i+1, d)
		i = lo - 1
	}
}

// finalLeft induces the L-type suffixes from the sorted LMS suffixes at their buckets' ends, in
// blocks. A block goes on across buckets as long as its
// entries are final (below the head of an L region), which keeps blocks long where buckets are
// small (reduced strings).
func finalLeft[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, head []int32) {
	n := int32(len(t))
	k := l.k
	copy(head, l.start[:k])
	c := t[n-1]
	sa[head[c]] = (n - 1) | saFlag&-bit(t[n-2] < c)
	head[c]++
	ps.start(scanFL, head, saPos, 0, l)
	span := ps.span()
	skip := l.skipRegions()
	if ps.wholeSerial() {
		if !skip {
			ps.serial(0, n, 0)
			return
		}
		for c := range k {
			s := l.start[c]
			ps.serial(s, s+l.nLL[c]+l.nLS[c], 0)
			ps.serial(l.start[c+1]-l.nLMS[c], l.start[c+1], 0)
		}
		return
	}
	cb := 0 // the bucket of i
	for i := int32(0); i < n; {
		for l.start[cb+1] <= i {
			cb++
		}
		if lmsStart := l.start[cb+1] - l.nLMS[cb]; skip && i == l.start[cb]+l.nLL[cb]+l.nLS[cb] && i < lmsStart {
			// The S region is empty but for its LMS suffixes.
			i = lmsStart
			continue
		}
		// Extend the block [i, hi) while its entries are final.
		hi, limit := i, i+min(span, n-i) // i+span could pass 2^31-1
		for x := cb; x < k && hi < limit; x++ {
			if lEnd := l.start[x] + l.nLL[x] + l.nLS[x]; hi < lEnd && head[x] < lEnd {
				hi = max(hi, head[x])
				break
			} else if skip && hi < lEnd {
				hi = lEnd
				break
			}
			hi = l.start[x+1]
		}
		hi = max(min(hi, limit), i+1)
		if hi-i >= minRun {
			ps.block(i, hi, 0)
			i = hi
			continue
		}
		for ; i < hi; i++ {
			if v := sa[i]; v > 0 {
				q := v - 1
				a := t[q]
				h := head[a]
				sa[h] = q | saFlag&-bit(q > 0 && t[max(q-1, 0)] < a)
				head[a] = h + 1
			}
		}
	}
}

// finalRight induces the S-type suffixes from the L-type ones, right to left, and clears the
// flags, in blocks. Blocks run across buckets as long as their
// entries are final (at or above the tail of an S region; L regions are complete).
func finalRight[T symbol](ps *parScan[T], t []T, sa []int32, l *bucketLayout, tail []int32) {
	n := int32(len(t))
	copy(tail, l.start[1:])
	ps.start(scanFR, tail, saPos, 0, l)
	span := ps.span()
	if ps.wholeSerial() {
		ps.serial(0, n, 0)
		return
	}
	cb := l.k - 1 // the bucket of i
	for i := n - 1; i >= 0; {
		for l.start[cb] > i {
			cb--
		}
		// Extend the block [lo, i] downwards while its entries are final.
		lo, limit := i+1, max(i-span+1, 0)
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
		if i+1-lo >= minRun {
			ps.block(lo, i+1, 0)
			i = lo - 1
			continue
		}
		for ; i >= lo; i-- {
			if v := sa[i]; v < 0 {
				p := v & saPos
				sa[i] = p
				q := p - 1
				a := t[q]
				h := tail[a] - 1
				sa[h] = q | saFlag&-bit(q > 0 && t[max(q-1, 0)] <= a)
				tail[a] = h
			}
		}
	}
}
