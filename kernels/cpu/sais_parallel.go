package cpu

import (
	"runtime"
	"sync/atomic"
)

// gatherers splits the gather step of each induction block between the calling goroutine and
// helper goroutines; the place step stays on the caller, in scan order, so the result never
// depends on the number of threads. A helper that has not started its part by the time the
// caller needs it is skipped and the caller gathers that part itself, so a busy machine (a helper
// not scheduled) costs parallelism but never a wait.
type gatherers struct {
	span    int32        // the largest block: induceBlock entries per thread
	parts   []gatherPart // the gathered parts of the current block, in scan order
	nparts  int
	helpers []*gatherHelper
}

type gatherPart struct {
	buf *induceBuf
	k   int   // inductions gathered
	d   int32 // group number advance over the part
}

// minPart is the fewest entries worth handing to another thread.
const minPart = 256

func newGatherers(threads int) *gatherers {
	threads = max(1, min(threads, runtime.GOMAXPROCS(0)))
	g := &gatherers{span: int32(threads * induceBlock), parts: make([]gatherPart, threads)}
	g.parts[0].buf = new(induceBuf)
	for j := 1; j < threads; j++ {
		h := &gatherHelper{req: make(chan uint64, 4), buf: new(induceBuf)}
		g.parts[j].buf = h.buf
		g.helpers = append(g.helpers, h)
		go h.loop()
	}
	return g
}

// close ends the helpers.
func (g *gatherers) close() {
	for _, h := range g.helpers {
		close(h.req)
	}
}

// gather runs f over the block [lo, hi) (left to right) or [lo, hi] (down, right to left), split
// into parts in scan order.
func (g *gatherers) gather(f gatherFunc, lo, hi int32, down bool) {
	n := hi - lo
	if down {
		n++
	}
	parts := int32(min(len(g.parts), max(int(n/minPart), 1)))
	g.nparts = int(parts)
	if parts == 1 {
		g.parts[0].k, g.parts[0].d = f(lo, hi, g.parts[0].buf)
		return
	}
	size := n / parts
	// Part j covers [a, b) (up) or [a, b] (down); part 0, the first in scan order, is ours.
	bounds := func(j int32) (int32, int32) {
		if !down {
			a := lo + j*size
			if j == parts-1 {
				return a, hi
			}
			return a, a + size
		}
		b := hi - j*size
		if j == parts-1 {
			return lo, b
		}
		return b - size + 1, b
	}
	for j := int32(1); j < parts; j++ {
		a, b := bounds(j)
		g.helpers[j-1].post(f, a, b)
	}
	a, b := bounds(0)
	g.parts[0].k, g.parts[0].d = f(a, b, g.parts[0].buf)
	for j := int32(1); j < parts; j++ {
		g.parts[j].k, g.parts[j].d = g.helpers[j-1].collect()
	}
}

// gatherHelper runs posted gathers on its own goroutine. state is seq<<2 | phase: open (posted,
// not started), taken (the helper runs it), stolen (the caller runs it) or done.
type gatherHelper struct {
	req    chan uint64
	state  atomic.Uint64
	seq    uint64
	f      gatherFunc
	lo, hi int32
	buf    *induceBuf
	k      int
	d      int32
}

const (
	partOpen = iota
	partTaken
	partStolen
	partDone
)

func (h *gatherHelper) loop() {
	for seq := range h.req {
		if h.state.CompareAndSwap(seq<<2|partOpen, seq<<2|partTaken) {
			h.k, h.d = h.f(h.lo, h.hi, h.buf)
			h.state.Store(seq<<2 | partDone)
		}
	}
}

func (h *gatherHelper) post(f gatherFunc, lo, hi int32) {
	h.seq++
	h.f, h.lo, h.hi = f, lo, hi
	h.state.Store(h.seq<<2 | partOpen)
	select {
	case h.req <- h.seq:
	default: // the helper is behind; collect will run the part here
	}
}

// collect returns the part's result, running it here if the helper has not started it.
func (h *gatherHelper) collect() (int, int32) {
	if h.state.CompareAndSwap(h.seq<<2|partOpen, h.seq<<2|partStolen) {
		return h.f(h.lo, h.hi, h.buf)
	}
	for spins := 0; h.state.Load() != h.seq<<2|partDone; spins++ {
		if spins&63 == 63 {
			runtime.Gosched()
		}
	}
	return h.k, h.d
}
