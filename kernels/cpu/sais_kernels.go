package cpu

import "unsafe"

// The kernels of the induction scans: a gather reads a run of entries and the text symbols they
// need, and writes the suffixes they induce to buffers, one per side; a place writes buffered
// inductions at their buckets' heads (or tails). On amd64 they are in assembly
// (sais_kernels_amd64.s): Go's code for these loops took about twice the instructions (values
// spilled to the stack, bounds checks), and a gather there asks for the text line of the entry
// kernAhead entries on in the same loop. The Go versions here are their definitions, used
// elsewhere and by the tests.
//
// Stage 1 entries here have the bit kernPB to say that p-1 is S-type (texts under 2^30 bytes).

const (
	kernAhead = 64      // how many entries ahead a gather asks for text lines
	kernPB    = 1 << 30 // stage 1: p-1 is S-type
	kernPM    = kernPB - 1
)

// scanArgs are a gather's arguments and results; the assembly knows its layout.
//
// Inductions go to the buffer of their side: side[(c*chunk)>>32] for symbol c, or side 0 where
// side is nil. The byte kernels write to side 0 only, and count their inductions by bucket
// pointer in cnt: the byte level's blocks on several threads place by part (sais_own.go), not by
// side. For byte texts side is nil; for int32 texts cnt is.
type scanArgs struct {
	t     unsafe.Pointer           // 0: the text
	sa    unsafe.Pointer           // 8: the run's first entry in scan order (downwards: its last)
	n     int                      // 16: entries in the run
	d     int32                    // 24: out: the group number's advance over the run (stage 1)
	_     int32                    // 28
	chunk uint64                   // 32: 2^32 >> (the log2 of the symbols in a chunk)
	side  *byte                    // 40: the side of each chunk of symbols, or nil
	wp    [maxSides]unsafe.Pointer // 48: each side's next record; advanced
	// 176: counts by bucket pointer h of the records: stage 1 cnt[h]++ and cnt[h+2] = grp (the
	// group of the last), stage 3 cnt[h]++.
	cnt unsafe.Pointer
}

// sideOf returns the side of inductions to symbol c.
func (a *scanArgs) sideOf(c int32) int {
	if a.side == nil {
		return 0
	}
	return int(*(*byte)(unsafe.Add(unsafe.Pointer(a.side), uintptr(uint64(uint32(c))*a.chunk>>32))))
}

// Records of inductions, in the buffers. h is an index of the bucket pointers: 4a+b for stage 1
// (symbol a, b its sub-bucket), a for stage 3; grp is the group number relative to the run's
// start.
type (
	rec1 struct{ h, pos, grp int32 }
	rec3 struct{ h, pos int32 }
)

// placeArgs are a place's arguments; the assembly knows its layout.
type placeArgs struct {
	rec unsafe.Pointer // 0: the first record
	n   int            // 8: records
	sa  unsafe.Pointer // 16
	ptr unsafe.Pointer // 24: the bucket pointers
	d   int32          // 32: the group number before the run (stage 1)
	big int32          // 36: nonzero to ask ahead for bucket pointers and slots (large alphabets)
}

// run returns the run of a gather as a slice, in memory order.
func (a *scanArgs) run(down bool) []int32 {
	if a.n == 0 {
		return nil
	}
	if down {
		return unsafe.Slice((*int32)(unsafe.Add(a.sa, -4*(a.n-1))), a.n)
	}
	return unsafe.Slice((*int32)(a.sa), a.n)
}

func sym[T symbol](t unsafe.Pointer, i int32) int32 {
	var z T
	return int32(*(*T)(unsafe.Add(t, uintptr(i)*unsafe.Sizeof(z))))
}

// put appends a record (of size bytes) to the buffer of the side of symbol c; k is 0 to drop it.
func put[R rec1 | rec3](a *scanArgs, c int32, r R, k int32) {
	s := a.sideOf(c)
	*(*R)(a.wp[s]) = r
	a.wp[s] = unsafe.Add(a.wp[s], unsafe.Sizeof(r)*uintptr(k))
	if a.cnt != nil && k != 0 {
		switch r := any(r).(type) {
		case rec1:
			*ptrAt(a.cnt, r.h) += 1
			*ptrAt(a.cnt, r.h+2) = r.grp
		case rec3:
			*ptrAt(a.cnt, r.h) += 1
		}
	}
}

// gatherLGo is the stage 1 gather, upwards: every entry that is neither LS (p-1 S-type) nor empty
// induces p-1, L-type, in the entry's group; a mark on an entry starts a group.
func gatherLGo[T symbol](a *scanArgs) {
	d := int32(0)
	for _, v := range a.run(false) {
		d -= v >> 31
		u := v &^ saFlag
		k := bit(uint32(u-1) < kernPM)
		q := (u - 1) & -k
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) < c)
		put(a, c, rec1{4*c + b, q | kernPB&-b, d}, k)
	}
	a.d = d
}

// gatherRGo is the stage 1 gather, downwards: every entry with p-1 S-type induces p-1; a mark on
// an entry starts a group, met first.
func gatherRGo[T symbol](a *scanArgs) {
	d := int32(0)
	run := a.run(true)
	for x := len(run) - 1; x >= 0; x-- {
		v := run[x]
		d -= v >> 31
		u := v &^ saFlag
		k := bit(u > kernPB)
		q := (u&kernPM - 1) & -k
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) > c)
		put(a, c, rec1{4*c + b, q | kernPB&(b-1), d}, k)
	}
	a.d = d
}

// gatherLWGo is gatherLGo for wide entries (texts of 2^30 bytes or more): no bit says that p-1 is
// S-type, and the scan reads only entries that induce (LL and LMS regions), but position 0.
func gatherLWGo[T symbol](a *scanArgs) {
	d := int32(0)
	for _, v := range a.run(false) {
		d -= v >> 31
		u := v &^ saFlag
		k := bit(u > 0)
		q := (u - 1) & -k
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) < c)
		put(a, c, rec1{4*c + b, q, d}, k)
	}
	a.d = d
}

// gatherRWGo is gatherRGo for wide entries: the scan reads only entries that induce (S and LS
// regions), but position 0.
func gatherRWGo[T symbol](a *scanArgs) {
	d := int32(0)
	run := a.run(true)
	for x := len(run) - 1; x >= 0; x-- {
		v := run[x]
		d -= v >> 31
		u := v &^ saFlag
		k := bit(u > 0)
		q := (u - 1) & -k
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) > c)
		put(a, c, rec1{4*c + b, q, d}, k)
	}
	a.d = d
}

// gatherFLGo is the stage 3 gather, upwards: each p without the flag induces p-1, flagged when p-2
// is S-type (for p-1 = 0, t[0] < t[0] is false).
func gatherFLGo[T symbol](a *scanArgs) {
	for _, v := range a.run(false) {
		k := bit(v > 0)
		q := (v - 1) & -k
		c := sym[T](a.t, q)
		f := bit(sym[T](a.t, max(q-1, 0)) < c)
		put(a, c, rec3{c, q | saFlag&-f}, k)
	}
}

// gatherFRGo is the stage 3 gather, downwards: each flagged p induces p-1, flagged when p-2 is
// S-type; the flags are cleared.
func gatherFRGo[T symbol](a *scanArgs) {
	run := a.run(true)
	for x := len(run) - 1; x >= 0; x-- {
		v := run[x]
		p := v & saPos
		run[x] = p
		k := bit(v < 0)
		q := (p - 1) & -k
		c := sym[T](a.t, q)
		f := bit(q > 0 && sym[T](a.t, q-1) <= c)
		put(a, c, rec3{c, q | saFlag&-f}, k)
	}
}

func ptrAt(p unsafe.Pointer, i int32) *int32 { return (*int32)(unsafe.Add(p, 4*uintptr(i))) }

// placeLGo writes stage 1 inductions at the heads of their sub-buckets, marking the first of each
// group there (ptr[h+2] holds the sub-bucket's last group).
func placeLGo(a *placeArgs) {
	for _, r := range unsafe.Slice((*rec1)(a.rec), a.n) {
		gr := r.grp + a.d
		last := ptrAt(a.ptr, r.h+2)
		mark := saFlag & -nz(*last^gr)
		*last = gr
		y := *ptrAt(a.ptr, r.h)
		*ptrAt(a.sa, y) = r.pos | mark
		*ptrAt(a.ptr, r.h) = y + 1
	}
}

// placeRGo is placeLGo at the tails.
func placeRGo(a *placeArgs) {
	for _, r := range unsafe.Slice((*rec1)(a.rec), a.n) {
		gr := r.grp + a.d
		last := ptrAt(a.ptr, r.h+2)
		mark := saFlag & -nz(*last^gr)
		*last = gr
		y := *ptrAt(a.ptr, r.h) - 1
		*ptrAt(a.sa, y) = r.pos | mark
		*ptrAt(a.ptr, r.h) = y
	}
}

// placeFLGo writes stage 3 inductions at the heads of their buckets.
func placeFLGo(a *placeArgs) {
	for _, r := range unsafe.Slice((*rec3)(a.rec), a.n) {
		y := *ptrAt(a.ptr, r.h)
		*ptrAt(a.sa, y) = r.pos
		*ptrAt(a.ptr, r.h) = y + 1
	}
}

// placeFRGo writes stage 3 inductions at the tails of their buckets.
func placeFRGo(a *placeArgs) {
	for _, r := range unsafe.Slice((*rec3)(a.rec), a.n) {
		y := *ptrAt(a.ptr, r.h) - 1
		*ptrAt(a.sa, y) = r.pos
		*ptrAt(a.ptr, r.h) = y
	}
}

// textArgs are a text pass's arguments and state (sais_text.go); the assembly knows its layout.
// A pass walks positions i from i down to stop, with the symbol after i and its type (1 for
// S-type), and leaves them for position stop, and i at stop-1.
type textArgs struct {
	t           unsafe.Pointer // 0
	i, stop     int            // 8, 16
	next, nextS int32          // 24, 28
	tab         unsafe.Pointer // 32: the counts (countKinds) or the tails (placeLMS)
	sa          unsafe.Pointer // 40
	trash       int32          // 48: placeLMS without branches: where positions that are not LMS go
	k           int32          // 52: gatherLMS: the next LMS position goes to sa[k-1]...
	big         int32          // 56: ask for table lines ahead (int32 texts only)
	bottom      int32          // 60: ...until k is down to bottom
}

// countKindsGo counts position i+1 of each i by first symbol and kind: cnt[4*a + 2*(type of i+1)
// + (type of i)] (LL, LS, LMS, S). i is S-type when t[i] < t[i+1] + (type of i+1).
func countKindsGo[T symbol](a *textArgs) {
	next, nextS := a.next, a.nextS
	i := a.i
	for ; i >= a.stop; i-- {
		c := sym[T](a.t, int32(i))
		s := bit(c < next+nextS)
		*ptrAt(a.tab, 4*next+2*nextS+s) += 1
		next, nextS = c, s
	}
	a.i, a.next, a.nextS = i, next, nextS
}

// placeLMSGo writes each LMS position i+1 (S-type, i L-type) at the tail of its symbol's region,
// going down, and the other positions to the trash slot.
func placeLMSGo[T symbol](a *textArgs) {
	next, nextS := a.next, a.nextS
	i := a.i
	for ; i >= a.stop; i-- {
		c := sym[T](a.t, int32(i))
		s := bit(c < next+nextS)
		if nextS > s {
			y := *ptrAt(a.tab, next) - 1
			*ptrAt(a.tab, next) = y
			*ptrAt(a.sa, y) = int32(i + 1)
		} else {
			a.trash = int32(i + 1) // as the assembly, which takes no branch
		}
		next, nextS = c, s
	}
	a.i, a.next, a.nextS = i, next, nextS
}

// gatherLMSGo writes each position i+1 to sa[k-1], and moves k down when i+1 is LMS, until k is
// down to bottom (or i below stop): what follows an LMS position is written over by the next.
func gatherLMSGo[T symbol](a *textArgs) {
	next, nextS, k := a.next, a.nextS, a.k
	i := a.i
	for ; k > a.bottom && i >= a.stop; i-- {
		c := sym[T](a.t, int32(i))
		s := bit(c < next+nextS)
		*ptrAt(a.sa, k-1) = int32(i + 1)
		k -= nextS &^ s
		next, nextS = c, s
	}
	a.i, a.next, a.nextS, a.k = i, next, nextS, k
}
