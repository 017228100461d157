package cpu

import "unsafe"

// Blocks of the byte level whose parts place their own inductions, on several threads. A block
// is cut into one part per thread; each thread gathers its part's inductions (sais_kernels.go)
// and counts them by bucket; then the calling thread gives each part its own stretch of every
// bucket, in scan order (merge), and each thread places its part's inductions there. Placing is
// then shared by the threads whatever the buckets the inductions go to, where the sides of
// sais_parallel.go split the buckets by ranges of symbols that balance the whole array, not the
// block (a byte level's few symbols would make few and uneven sides: DNA has four). The merge
// costs a few operations per bucket used per part, which the byte level's alphabet keeps small;
// the levels of names keep to the sides.
// As libsais's blocks do (libsais 2.10.4, *_block_prepare and *_block_place).

const (
	ownCap = 32768 // entries of a part at most
	ownMin = 2048  // entries of a part at least, unless the block is shorter
)

// ownPart is a part of a block and its inductions (rec1 or rec3 records from recs to end).
type ownPart struct {
	lo, hi int32 // entries [lo, hi)
	d      int32 // the group number's advance over the part
	base   int32 // the group number before the part
	recs   []rec1
	end    unsafe.Pointer
	// cnt counts the part's inductions by bucket pointer (stage 1: at 4a+b, with the local
	// group number of the last at 4a+b+2; stage 3: at a), zero between blocks; tab holds the
	// pointers (and last groups) the part places from.
	cnt, tab []int32
}

type ownBufs struct {
	parts int
	part  [maxThreads]ownPart
}

func newOwnBufs(threads, n int) *ownBufs {
	ob := &ownBufs{parts: min(threads, maxThreads)}
	for j := range ob.parts {
		pt := &ob.part[j]
		pt.recs = make([]rec1, min(ownCap, n)+1) // +1: the end stays inside
		pt.cnt = make([]int32, 4*256)
		pt.tab = make([]int32, 4*256)
	}
	return ob
}

// blockOwn is block with parts that place their own inductions.
func (ps *parScan[T]) blockOwn(lo, hi, d int32) int32 {
	ob := ps.own
	n := hi - lo
	p := min(int32(ob.parts), max(1, n/ownMin))
	down := ps.kind == scanR || ps.kind == scanFR
	for j := range p {
		a, b := lo+n*j/p, lo+n*(j+1)/p
		if down {
			a, b = hi-n*(j+1)/p, hi-n*j/p
		}
		ob.part[j].lo, ob.part[j].hi = a, b
	}
	ps.ownParts = int(p)
	ps.tm.run(int(p), ps.gatherOwnF)
	for j := range p {
		pt := &ob.part[j]
		pt.base = d
		ps.merge(pt)
		d += pt.d
	}
	ps.tm.run(int(p), ps.placeOwnF)
	return d
}

// gatherOwn gathers the inductions of part j and counts them by bucket.
func (ps *parScan[T]) gatherOwn(j int) {
	pt := &ps.own.part[j]
	rp := unsafe.Pointer(unsafe.SliceData(pt.recs))
	a := scanArgs{t: unsafe.Pointer(unsafe.SliceData(ps.t)), n: int(pt.hi - pt.lo), cnt: unsafe.Pointer(unsafe.SliceData(pt.cnt))}
	a.wp[0] = rp
	ps.runGather(&a, pt.lo, pt.hi) // counts as it goes
	pt.d = a.d
	pt.end = a.wp[0]
}

// merge gives part pt its stretch of each bucket it induces into, after the parts before it,
// and zeroes its counts.
func (ps *parScan[T]) merge(pt *ownPart) {
	ptr, cnt, tab := ps.ptr, pt.cnt, pt.tab
	sign := int32(1)
	if ps.kind == scanR || ps.kind == scanFR {
		sign = -1
	}
	if ps.kind <= scanR {
		for _, c := range ps.used {
			for h := 4 * c; h < 4*c+2; h++ {
				tab[h], tab[h+2] = ptr[h], ptr[h+2]
				if k := cnt[h]; k != 0 {
					ptr[h] += sign * k
					ptr[h+2] = cnt[h+2] + pt.base
					cnt[h], cnt[h+2] = 0, 0 // stage 3 counts by symbol in the same table
				}
			}
		}
		return
	}
	for _, c := range ps.used {
		tab[c] = ptr[c]
		ptr[c] += sign * cnt[c]
		cnt[c] = 0
	}
}

// placeOwn writes the inductions of part j from its own pointers.
func (ps *parScan[T]) placeOwn(j int) {
	pt := &ps.own.part[j]
	rp := unsafe.Pointer(unsafe.SliceData(pt.recs))
	a := placeArgs{rec: rp, sa: unsafe.Pointer(unsafe.SliceData(ps.sa)), ptr: unsafe.Pointer(unsafe.SliceData(pt.tab)), d: pt.base}
	switch ps.kind {
	case scanL:
		a.n = int((uintptr(pt.end) - uintptr(rp)) / 12)
		placeL(&a)
	case scanR:
		a.n = int((uintptr(pt.end) - uintptr(rp)) / 12)
		placeR(&a)
	case scanFL:
		a.n = int((uintptr(pt.end) - uintptr(rp)) / 8)
		placeFL(&a)
	default:
		a.n = int((uintptr(pt.end) - uintptr(rp)) / 8)
		placeFR(&a)
	}
}
