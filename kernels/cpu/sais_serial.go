package cpu

import "unsafe"

// The serial scans: a run of entries read and induced from in one pass, each induction written
// at once, for a scan on one thread (and blocks too short to share out). Reading, inducing and
// placing in one loop takes about 35 instructions an entry where a gather and a place take about
// 55 (records written and read back, sides chosen): on the E. coli genome, one thread, the byte
// level's four scans went from 550M instructions to 361M (callgrind). A serial scan may run over
// entries that it writes itself (a bucket inducing into itself): each is read after the writes
// before it. The kernels ask for the text line of the entry 64 on, as the gathers do; those for
// large alphabets (bigAlphabet: int32 texts), whose bucket pointers miss the caches, ask for the
// text line of the entry 128 on and the bucket pointers of the entry 64 on (serialBig).
//
// Whether an entry of stage 3 induces (its p-1 is L-type, or S-type) is a branch that a text of
// few symbols, like DNA, makes the processor mispredict often: there the byte kernels of stage 3
// take no branch (branchless), which costs ~15 more instructions an entry. Measured by process
// CPU time, one thread, 10 alternated runs each (cachegrind: 5.9M -> 2.7M mispredicted branches):
// the E. coli genome 0.106 -> 0.100 s (mean 0.119 -> 0.111), but the Linux tar's first 16 MB 0.432
// -> 0.442 s (mean 0.465 -> 0.502), hence only for small alphabets (smallAlphabet). And only for
// texts whose suffix array stays in the caches, more or less (branchlessMax): where the scans wait
// on memory the extra work shows, not the mispredictions. E. coli, 20 runs: 0.107 -> 0.097 s (median
// 0.156 -> 0.147); 100 MiB of random DNA, 5 runs: 5.04 -> 5.15 s (median 5.42 -> 5.99), DNA with
// repeats 5.01 -> 5.97 s.

// serialArgs are a serial scan's arguments; the assembly knows its layout.
type serialArgs struct {
	t     unsafe.Pointer // 0: the text
	sa    unsafe.Pointer // 8: the suffix array
	ptr   unsafe.Pointer // 16: the bucket pointers (stage 1: st; stage 3: heads or tails)
	first unsafe.Pointer // 24: the run's first entry in scan order (downwards: its last)
	n     int            // 32: entries in the run
	d     int32          // 40: the group number (stage 1), advanced over the run
	trash int32          // 44: where stage 3's entries that induce nothing write
}

// entry returns the x-th entry of the run in scan order.
func (a *serialArgs) entry(x int, down bool) *int32 {
	if down {
		return (*int32)(unsafe.Add(a.first, -4*x))
	}
	return (*int32)(unsafe.Add(a.first, 4*x))
}

// serialLGo is stage 1's scan upwards (partialLeft's loop): every entry that is neither LS (p-1
// S-type) nor empty induces p-1, L-type, at the head of its sub-bucket in group d, marking the
// first of each group there.
func serialLGo[T symbol](a *serialArgs) {
	d := a.d
	for x := range a.n {
		v := *a.entry(x, false)
		d -= v >> 31
		u := v &^ saFlag
		if uint32(u-1) >= kernPM {
			continue
		}
		q := u - 1
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) < c)
		h := 4*c + b
		last := ptrAt(a.ptr, h+2)
		mark := saFlag & -nz(*last^d)
		*last = d
		y := *ptrAt(a.ptr, h)
		*ptrAt(a.ptr, h) = y + 1
		*ptrAt(a.sa, y) = q | kernPB&-b | mark
	}
	a.d = d
}

// serialRGo is stage 1's scan downwards (partialRight's loop): every entry with p-1 S-type
// induces p-1 at the tail of its sub-bucket in group d, marking the first placed of each group.
func serialRGo[T symbol](a *serialArgs) {
	d := a.d
	for x := range a.n {
		v := *a.entry(x, true)
		d -= v >> 31
		u := v &^ saFlag
		if u <= kernPB {
			continue
		}
		q := u&kernPM - 1
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) > c)
		h := 4*c + b
		last := ptrAt(a.ptr, h+2)
		mark := saFlag & -nz(*last^d)
		*last = d
		y := *ptrAt(a.ptr, h) - 1
		*ptrAt(a.ptr, h) = y
		*ptrAt(a.sa, y) = q | kernPB&(b-1) | mark
	}
	a.d = d
}

// serialLWGo is serialLGo for wide entries (gatherLWGo).
func serialLWGo[T symbol](a *serialArgs) {
	d := a.d
	for x := range a.n {
		v := *a.entry(x, false)
		d -= v >> 31
		u := v &^ saFlag
		if u == 0 {
			continue
		}
		q := u - 1
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) < c)
		h := 4*c + b
		last := ptrAt(a.ptr, h+2)
		mark := saFlag & -nz(*last^d)
		*last = d
		y := *ptrAt(a.ptr, h)
		*ptrAt(a.ptr, h) = y + 1
		*ptrAt(a.sa, y) = q | mark
	}
	a.d = d
}

// serialRWGo is serialRGo for wide entries (gatherRWGo).
func serialRWGo[T symbol](a *serialArgs) {
	d := a.d
	for x := range a.n {
		v := *a.entry(x, true)
		d -= v >> 31
		u := v &^ saFlag
		if u == 0 {
			continue
		}
		q := u - 1
		c := sym[T](a.t, q)
		b := bit(sym[T](a.t, max(q-1, 0)) > c)
		h := 4*c + b
		last := ptrAt(a.ptr, h+2)
		mark := saFlag & -nz(*last^d)
		*last = d
		y := *ptrAt(a.ptr, h) - 1
		*ptrAt(a.ptr, h) = y
		*ptrAt(a.sa, y) = q | mark
	}
	a.d = d
}

// serialFLGo is stage 3's scan upwards (finalLeft's loop): each p without the flag induces p-1 at
// the head of its bucket, flagged when p-2 is S-type.
func serialFLGo[T symbol](a *serialArgs) {
	for x := range a.n {
		v := *a.entry(x, false)
		if v <= 0 {
			continue
		}
		q := v - 1
		c := sym[T](a.t, q)
		f := bit(sym[T](a.t, max(q-1, 0)) < c)
		y := *ptrAt(a.ptr, c)
		*ptrAt(a.ptr, c) = y + 1
		*ptrAt(a.sa, y) = q | saFlag&-f
	}
}

// serialFRGo is stage 3's scan downwards (finalRight's loop): each flagged p induces p-1 at the
// tail of its bucket, flagged when p-2 is S-type, and loses its flag.
func serialFRGo[T symbol](a *serialArgs) {
	for x := range a.n {
		e := a.entry(x, true)
		v := *e
		if v >= 0 {
			continue
		}
		p := v & saPos
		*e = p
		q := p - 1
		c := sym[T](a.t, q)
		f := bit(q > 0 && sym[T](a.t, q-1) <= c)
		y := *ptrAt(a.ptr, c) - 1
		*ptrAt(a.ptr, c) = y
		*ptrAt(a.sa, y) = q | saFlag&-f
	}
}

// smallAlphabet is the most symbols, and branchlessMax the most bytes, of a text for stage 3's
// kernels without branches.
const (
	smallAlphabet = 16
	branchlessMax = 8 << 20
)

// serial runs the scan of ps's kind over the entries [lo, hi) on the calling thread, with group
// number d before them (stage 1), and returns the group number after them.
func (ps *parScan[T]) serial(lo, hi, d int32) int32 {
	if hi <= lo {
		return d
	}
	a := serialArgs{
		t: unsafe.Pointer(unsafe.SliceData(ps.t)), sa: unsafe.Pointer(unsafe.SliceData(ps.sa)),
		ptr: unsafe.Pointer(unsafe.SliceData(ps.ptr)), n: int(hi - lo), d: d,
	}
	if ps.big {
		a.first = unsafe.Pointer(&ps.sa[lo])
		if ps.kind == scanR || ps.kind == scanFR {
			a.first = unsafe.Pointer(&ps.sa[hi-1])
		}
		serialBig(&a, ps.kind)
		return a.d
	}
	switch ps.kind {
	case scanL:
		a.first = unsafe.Pointer(&ps.sa[lo])
		if ps.pb == 0 {
			serialLW[T](&a)
		} else {
			serialL[T](&a)
		}
	case scanR:
		a.first = unsafe.Pointer(&ps.sa[hi-1])
		if ps.pb == 0 {
			serialRW[T](&a)
		} else {
			serialR[T](&a)
		}
	case scanFL:
		a.first = unsafe.Pointer(&ps.sa[lo])
		serialFL[T](&a, ps.branchless)
	default:
		a.first = unsafe.Pointer(&ps.sa[hi-1])
		serialFR[T](&a, ps.branchless)
	}
	return a.d
}
