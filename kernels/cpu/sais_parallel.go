package cpu

import (
	"math/bits"
	"time"
	"unsafe"
)

// The blocks of the induction scans. A block is a run of final entries (ones no later induction
// can change) in scan order, and takes two steps of the team (sais_team.go):
//
//   - gather: the block is cut into parts that the threads claim one at a time; the gather kernel
//     reads each part's entries with the text symbols they need (the random accesses; asked for
//     ahead), and writes the suffixes they induce to the part's buffers, one per side: the
//     destination buckets are cut into as many sides as threads (up to maxSides), ranges of
//     symbols that hold about as many suffixes each (by chunks of symbols: sideTable);
//   - place: each side's inductions are written at its buckets' heads (or tails), part after
//     part, so in scan order within every bucket, by the thread that claims the side; the sides'
//     buckets are disjoint, and so are the pointers the threads move.
//
// So the result never depends on the number of threads. There are a few parts per thread, so
// that a thread the system stops while it holds one (a busy machine) holds up little. Blocks
// shorter than parMin, and those of a team gone solo, run as one serial pass on the calling
// thread (sais_serial.go); the byte level's blocks place by part rather than by side
// (sais_own.go).

const (
	maxThreads = 16   // threads a scan uses at most
	maxParts   = 64   // parts of a block at most
	maxSides   = 16   // sides at most
	maxChunks  = 4096 // chunks of symbols in a side table at most
	partCap    = 2048 // entries of a part at most
	partMin    = 256  // entries of a part at least, unless the block is shorter
	parMin     = 512  // shorter runs of final entries go on the calling thread...
	minRun     = 16   // ...and shorter than this, one at a time (the kernels ask ahead)
)

// Kinds of block, each with its own gather.
const (
	scanL  = iota // stage 1, upwards
	scanR         // stage 1, downwards
	scanFL        // stage 3, upwards
	scanFR        // stage 3, downwards
)

// blockPart is a part of a block: its entries, and the inductions they make, in records (rec1 or
// rec3) by side: side s from buf[s] to end[s], in scan order.
type blockPart struct {
	lo, hi int32 // entries [lo, hi)
	d      int32 // the group number's advance over the part
	buf    [maxSides][]rec1
	end    [maxSides]unsafe.Pointer
}

// parBufs are the buffers of the scans, shared by the levels of a construction.
type parBufs struct {
	parts, sides int
	part         [maxParts]blockPart
	bufCap       int      // records of each part's buffers, allocated by the first level that uses them
	own          *ownBufs // several threads: the byte level's blocks (sais_own.go)
}

func newParBufs(threads, n int) *parBufs {
	threads = min(threads, maxThreads)
	pb := &parBufs{parts: min(4*threads, maxParts), sides: min(threads, maxSides)}
	if threads > 1 {
		pb.own = newOwnBufs(threads, n)
	}
	return pb
}

// sideBufs readies the parts' buffers for a level of n symbols: a part's inductions may all go
// to one side, so each side's buffer holds a part (12 bytes a record: at 16 threads, 64 parts of
// 16 sides, 25 MB). Only the levels of names use them (the byte level places by part), and the
// first of those is the largest.
func (pb *parBufs) sideBufs(n int) {
	c := min(partCap, n) + 1 // +1: the end stays inside
	if c <= pb.bufCap {
		return
	}
	pb.bufCap = c
	for j := range pb.parts {
		for s := range pb.sides {
			pb.part[j].buf[s] = make([]rec1, c)
		}
	}
}

// parScan is the state of a scan in blocks.
type parScan[T symbol] struct {
	tm     *team
	t      []T
	sa     []int32
	ptr    []int32 // bucket pointers: stage 1 st (see saisLevel), stage 3 heads or tails
	pm, pb int32
	big    bool
	// branchless: stage 3's serial kernels take no branch (a byte text of at most smallAlphabet
	// symbols and branchlessMax bytes; sais_serial.go).
	branchless bool

	kind int
	d    int32 // the group number before the block
	// The side of symbol c is side[(c*chunk)>>32] (scanArgs); levels of names only.
	chunk uint64
	side  [maxChunks]byte
	*parBufs

	// A byte level on several threads: blocks whose parts place their own inductions
	// (sais_own.go), into the buckets of the symbols used.
	owned    bool
	used     []int32
	ownParts int

	gatherF, placeF, gatherOwnF, placeOwnF func(int)

	clock [4]blockClock // by kind of scan
}

func newParScan[T symbol](tm *team, bufs *parBufs, t []T, sa []int32, k int) *parScan[T] {
	ps := &parScan[T]{tm: tm, t: t, sa: sa, big: bigAlphabet[T](k), parBufs: bufs}
	ps.gatherF = ps.gather
	ps.placeF = ps.place
	ps.gatherOwnF = ps.gatherOwn
	ps.placeOwnF = ps.placeOwn
	return ps
}

// wholeSerial reports whether a scan runs as one serial pass (sais_serial.go) rather than in
// blocks: on one thread.
func (ps *parScan[T]) wholeSerial() bool { return ps.tm.size == 1 }

// span is the most entries of a block.
func (ps *parScan[T]) span() int32 {
	if ps.owned {
		return int32(ps.own.parts) * ownCap
	}
	return int32(ps.parts) * partCap
}

// start readies the scan for its blocks: kind, bucket pointers, and the sides.
func (ps *parScan[T]) start(kind int, ptr []int32, pm, pb int32, l *bucketLayout) {
	ps.kind, ps.ptr, ps.pm, ps.pb, ps.d = kind, ptr, pm, pb, 0
	if unsafe.Sizeof(ps.t[0]) == 1 {
		ps.used = ps.used[:0]
		for c := range l.k {
			if l.start[c+1] > l.start[c] {
				ps.used = append(ps.used, int32(c))
			}
		}
		ps.branchless = len(ps.used) <= smallAlphabet && len(ps.t) <= branchlessMax
		ps.owned = ps.own != nil
		return
	}
	ps.chunk = sideTable(ps.side[:], l.start, ps.sides)
}

// sideTable cuts the buckets of start (k+1 entries: bucket c is [start[c], start[c+1])) into
// sides ranges of symbols that hold about as many suffixes each, by chunks of symbols (a power
// of two, so that at most maxChunks cover the alphabet): each chunk goes to the side where its
// first bucket starts. It fills side and returns the multiplier that takes a symbol to its chunk.
func sideTable(side []byte, start []int32, sides int) uint64 {
	k := len(start) - 1
	shift := 0
	for (k-1)>>shift >= len(side) {
		shift++
	}
	total := max(int64(start[k]), 1)
	for x := range (k-1)>>shift + 1 {
		side[x] = byte(min(int64(sides-1), int64(start[x<<shift])*int64(sides)/total))
	}
	return 1 << (32 - shift)
}

// block induces from the entries [lo, hi) (at most span), in scan order (downwards: from hi-1
// down), with group number d before them (stage 1), and returns the group number after them.
// Short blocks, and those of a team gone solo, go as one serial pass on the calling thread; the
// others as one or in parts, whichever has taken less time an entry (blockClock).
func (ps *parScan[T]) block(lo, hi, d int32) int32 {
	n := hi - lo
	if n < parMin || ps.tm.alone() {
		saBlock(1+int(bit(n >= parMin)), n)
		return ps.serial(lo, hi, d)
	}
	ck := &ps.clock[ps.kind]
	c := blockClass(n)
	parts, try := ck.choose(c)
	if try && n < tryLen+parMin {
		parts = false // too short to try a first stretch: the whole block as one pass
	}
	t0 := time.Now()
	if !parts {
		saBlock(3, n)
		d = ps.serial(lo, hi, d)
		ck.serialTook(n, time.Since(t0))
		return d
	}
	if try && n >= tryLen+parMin {
		// The first tryLen entries in scan order as one pass, timed, then the rest in parts:
		// the entries of a block are final, so any first stretch of them may go first.
		if ps.kind == scanR || ps.kind == scanFR {
			d = ps.serial(hi-tryLen, hi, d)
			hi -= tryLen
		} else {
			d = ps.serial(lo, lo+tryLen, d)
			lo += tryLen
		}
		t1 := time.Now()
		ck.serialTook(tryLen, t1.Sub(t0))
		saBlock(3, tryLen)
		t0, n = t1, n-tryLen
		c = blockClass(n)
	}
	saBlock(0, n)
	d = ps.inParts(lo, hi, d)
	ck.partsTook(c, n, time.Since(t0))
	return d
}

// inParts induces from the block [lo, hi) in parts: by part (sais_own.go) or by side.
func (ps *parScan[T]) inParts(lo, hi, d int32) int32 {
	ps.d = d
	n := hi - lo
	p := min(int32(ps.parts), max((n+partCap-1)/partCap, n/partMin))
	down := ps.kind == scanR || ps.kind == scanFR
	if ps.owned {
		return ps.blockOwn(lo, hi, d)
	}
	for j := range p {
		a, b := lo+n*j/p, lo+n*(j+1)/p
		if down {
			a, b = hi-n*(j+1)/p, hi-n*j/p
		}
		ps.part[j].lo, ps.part[j].hi = a, b
	}
	ps.sideBufs(len(ps.t))
	for j := p; j < int32(ps.parts); j++ {
		pt := &ps.part[j]
		pt.lo, pt.hi, pt.d = 0, 0, 0
		for s := range ps.sides {
			pt.end[s] = unsafe.Pointer(unsafe.SliceData(pt.buf[s]))
		}
	}
	ps.tm.run(int(p), ps.gatherF)
	ps.tm.run(ps.sides, ps.placeF)
	for j := range p {
		d += ps.part[j].d
	}
	return d
}

// blockClock chooses how a scan's blocks go, by the wall time an entry measured on the blocks
// before: one serial pass (no fixed cost, so one figure for all sizes) or parts (two steps of
// the team and a merge a block, so a figure for each class of sizes). Every tryEvery blocks of a
// class it tries the way it does not take: the serial pass on a first stretch of the block (or
// the whole of a short one), parts on the whole. Where threads get cores, parts win on all but short blocks; where they do not (a
// busy machine) or the memory does not keep up with them, a serial pass does.
type blockClock struct {
	serial float64               // ns an entry, 0 until measured
	parts  [blockClasses]float64 // ns an entry, 0 until measured
	since  [blockClasses]int32   // blocks since the last try
}

const (
	blockClasses = 8    // sizes parMin<<c to parMin<<(c+1), the last class and all above
	tryEvery     = 16   // blocks of a class between tries of the way not taken
	tryLen       = 1024 // entries of a block that try the serial pass
)

func blockClass(n int32) int {
	return min(blockClasses-1, bits.Len32(uint32(n/parMin))-1)
}

// alwaysParts has every block of enough entries go in parts (a variable for the tests).
var alwaysParts = false

// choose reports whether the next block of class c goes in parts, and whether to try the serial
// pass on its first stretch.
func (k *blockClock) choose(c int) (parts, try bool) {
	switch {
	case alwaysParts:
		return true, false
	case k.parts[c] == 0:
		return true, false
	case k.serial == 0:
		return true, true
	}
	best := k.parts[c] <= k.serial
	if k.since[c]++; k.since[c] < tryEvery {
		return best, false
	}
	k.since[c] = 0
	return true, best
}

func (k *blockClock) serialTook(n int32, t time.Duration) { k.serial = average(k.serial, n, t) }

func (k *blockClock) partsTook(c int, n int32, t time.Duration) {
	k.parts[c] = average(k.parts[c], n, t)
}

// average moves a figure of ns an entry a quarter of the way to that of n entries in t, taken
// as at most twice the figure: a block held up once (a thread stopped by the system) moves it by
// a quarter at most.
func average(ns float64, n int32, t time.Duration) float64 {
	x := float64(t) / float64(n)
	if ns == 0 {
		return x
	}
	return ns + (min(x, 2*ns)-ns)/4
}

// gather reads the entries of part j and buffers the suffixes they induce by side.
func (ps *parScan[T]) gather(j int) {
	pt := &ps.part[j]
	a := scanArgs{t: unsafe.Pointer(unsafe.SliceData(ps.t)), n: int(pt.hi - pt.lo), chunk: ps.chunk, side: &ps.side[0]}
	for s := range ps.sides {
		a.wp[s] = unsafe.Pointer(unsafe.SliceData(pt.buf[s]))
	}
	ps.runGather(&a, pt.lo, pt.hi)
	pt.d = a.d
	pt.end = a.wp
}

// place writes side s's inductions of the block, part after part.
func (ps *parScan[T]) place(s int) {
	a := placeArgs{sa: unsafe.Pointer(unsafe.SliceData(ps.sa)), ptr: unsafe.Pointer(unsafe.SliceData(ps.ptr)), d: ps.d, big: int32(bit(ps.big))}
	size := uintptr(12)
	if ps.kind >= scanFL {
		size = 8
	}
	for j := range ps.parts {
		pt := &ps.part[j]
		a.rec = unsafe.Pointer(unsafe.SliceData(pt.buf[s]))
		a.n = int((uintptr(pt.end[s]) - uintptr(a.rec)) / size)
		switch ps.kind {
		case scanL:
			placeL(&a)
		case scanR:
			placeR(&a)
		case scanFL:
			placeFL(&a)
		default:
			placeFR(&a)
		}
		a.d += pt.d
	}
}

// runGather runs the gather kernel of the scan's kind over the entries [lo, hi), from its first
// entry in scan order (lo upwards, hi-1 downwards), into a's write pointers.
func (ps *parScan[T]) runGather(a *scanArgs, lo, hi int32) {
	switch ps.kind {
	case scanL:
		a.sa = unsafe.Pointer(&ps.sa[lo])
		if ps.pb == 0 {
			gatherLW[T](a)
		} else {
			gatherL[T](a)
		}
	case scanR:
		a.sa = unsafe.Pointer(&ps.sa[hi-1])
		if ps.pb == 0 {
			gatherRW[T](a)
		} else {
			gatherR[T](a)
		}
	case scanFL:
		a.sa = unsafe.Pointer(&ps.sa[lo])
		gatherFL[T](a)
	default:
		a.sa = unsafe.Pointer(&ps.sa[hi-1])
		gatherFR[T](a)
	}
}
