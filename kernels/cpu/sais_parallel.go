package cpu

import (
	"runtime"
	"sync/atomic"
)

// gatherers splits the gather step of each induction block between the calling goroutine and
// helper goroutines; the place step stays on the caller, in scan order, so the result never
// depends on the number of threads.
//
// A block is cut into small chunks that threads claim one at a time, so a helper that starts
// late (a busy machine) just takes fewer of them, and the caller waits at most for the chunks a
// running helper has in hand (spinning briefly, then blocking, so that a helper sharing its core
// gets to run). Between blocks helpers spin for a while (the time a block's placement takes),
// then park.
type gatherers struct {
	span    int32 // the largest block
	bufs    []chunkBuf
	chunks  []chunkResult
	nchunks int32

	// The current block, immutable once published. claim is epoch<<32 | chunks<<16 | claimed:
	// a new epoch publishes a block, and claiming a chunk is one compare-and-swap. done[j] holds
	// the epoch in which chunk j was last gathered.
	blk   atomic.Pointer[gatherBlock]
	claim atomic.Uint64
	done  []atomic.Uint64
	epoch uint64

	// The caller blocked waiting for a helper's chunk: waiting is set, and a helper that
	// finishes a chunk clears it and sends on finished.
	waiting  atomic.Bool
	finished chan struct{}

	unhelped int // blocks in a row the helpers took no chunk of
	solo     int // blocks left to gather without them

	helpers []*gatherHelper
}

type gatherBlock struct {
	f      gatherFunc
	lo, hi int32
	down   bool
	epoch  uint64
}

type chunkResult struct {
	k int   // inductions gathered
	d int32 // group number advance over the chunk
}

const (
	gatherChunk  = 512     // entries a thread claims at once
	gatherChunks = 16      // chunks in the largest block
	spinBudget   = 1 << 17 // loads a helper spins through waiting for a block before parking
	awaitSpin    = 1 << 16 // loads the caller spins through waiting for a chunk before blocking
	soloAfter    = 8       // blocks in a row without help before the caller goes it alone...
	soloBlocks   = 256     // ...for this many blocks
)

func newGatherers(threads int) *gatherers {
	threads = max(1, min(threads, runtime.GOMAXPROCS(0)))
	g := &gatherers{
		span:   gatherChunk * gatherChunks,
		bufs:   make([]chunkBuf, gatherChunks),
		chunks: make([]chunkResult, gatherChunks),
		done:   make([]atomic.Uint64, gatherChunks),

		finished: make(chan struct{}, 1),
	}
	for range threads - 1 {
		h := &gatherHelper{g: g, wake: make(chan struct{}, 1)}
		g.helpers = append(g.helpers, h)
		go h.loop()
	}
	return g
}

// close ends the helpers.
func (g *gatherers) close() {
	for _, h := range g.helpers {
		h.closed.Store(true)
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
}

// gather runs f over the block [lo, hi) (left to right) or [lo, hi] (down: right to left), at
// most g.span entries, in chunks; the results are in g.chunks[:g.nchunks] and g.bufs, in scan
// order.
func (g *gatherers) gather(f gatherFunc, lo, hi int32, down bool) {
	n := hi - lo
	if down {
		n++
	}
	nc := (n + gatherChunk - 1) / gatherChunk
	g.nchunks = nc
	if g.solo > 0 {
		g.solo--
	}
	if nc == 1 || len(g.helpers) == 0 || g.solo > 0 {
		for j := range nc {
			g.runChunk(f, lo, hi, down, j)
		}
		return
	}
	g.epoch++
	e := g.epoch
	g.blk.Store(&gatherBlock{f, lo, hi, down, e})
	g.claim.Store(e<<32 | uint64(nc)<<16)
	for _, h := range g.helpers {
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
	mine := int32(0)
	for {
		j, ok := g.claimChunk(e)
		if !ok {
			break
		}
		g.runChunk(f, lo, hi, down, j)
		mine++
	}
	for j := range nc {
		g.await(j, e)
	}
	// A helper that gets no chunks is not being run (the machine is busy): stop handing it
	// blocks for a while rather than keep it spinning.
	if mine < nc {
		g.unhelped = 0
	} else if g.unhelped++; g.unhelped >= soloAfter {
		g.unhelped, g.solo = 0, soloBlocks
	}
}

// await waits for chunk j of the block of epoch e, which a helper has in hand: spinning a while,
// then blocking, so that a helper the system runs on this thread's core gets to finish it.
func (g *gatherers) await(j int32, e uint64) {
	for spins := 0; g.done[j].Load() != e; spins++ {
		if spins < awaitSpin {
			continue
		}
		g.waiting.Store(true)
		if g.done[j].Load() != e {
			<-g.finished
		} else if !g.waiting.CompareAndSwap(true, false) {
			<-g.finished // a helper saw us waiting: take its token
		}
		spins = 0
	}
}

// claimChunk claims the next unclaimed chunk of the block of epoch e, if there is one.
func (g *gatherers) claimChunk(e uint64) (int32, bool) {
	for {
		s := g.claim.Load()
		j, nc := int32(s&0xffff), int32(s>>16&0xffff)
		if s>>32 != e || j >= nc {
			return 0, false
		}
		if g.claim.CompareAndSwap(s, s+1) {
			return j, true
		}
	}
}

// runChunk gathers chunk j of the block, in scan order, into g.bufs[j] and marks it done.
func (g *gatherers) runChunk(f gatherFunc, lo, hi int32, down bool, j int32) {
	var k int
	var d int32
	if !down {
		a := lo + j*gatherChunk
		k, d = f(a, min(a+gatherChunk, hi), &g.bufs[j])
	} else {
		z := hi - j*gatherChunk
		k, d = f(max(z-gatherChunk+1, lo), z, &g.bufs[j])
	}
	g.chunks[j] = chunkResult{k, d}
	g.done[j].Store(g.epoch)
}

type gatherHelper struct {
	g      *gatherers
	wake   chan struct{}
	parked atomic.Bool
	closed atomic.Bool
}

func (h *gatherHelper) loop() {
	g := h.g
	seen := uint64(0)
	for {
		// Wait for a new block.
		for spins := 0; ; spins++ {
			if e := g.claim.Load() >> 32; e != seen {
				break
			}
			if h.closed.Load() {
				return
			}
			if spins < spinBudget {
				continue
			}
			spins = 0
			h.parked.Store(true)
			if g.claim.Load()>>32 == seen && !h.closed.Load() {
				<-h.wake // the publisher clears parked and sends
			} else if !h.parked.CompareAndSwap(true, false) {
				<-h.wake // the publisher saw parked first: take its token
			}
		}
		// The block was stored before its epoch was published; the caller does not move on
		// until every chunk it has is done, ours included.
		blk := g.blk.Load()
		seen = blk.epoch
		for {
			j, ok := g.claimChunk(seen)
			if !ok {
				break
			}
			h.run(blk, j)
		}
	}
}

func (h *gatherHelper) run(blk *gatherBlock, j int32) {
	g := h.g
	var k int
	var d int32
	if !blk.down {
		a := blk.lo + j*gatherChunk
		k, d = blk.f(a, min(a+gatherChunk, blk.hi), &g.bufs[j])
	} else {
		z := blk.hi - j*gatherChunk
		k, d = blk.f(max(z-gatherChunk+1, blk.lo), z, &g.bufs[j])
	}
	g.chunks[j] = chunkResult{k, d}
	g.done[j].Store(blk.epoch)
	if g.waiting.CompareAndSwap(true, false) {
		g.finished <- struct{}{}
	}
}
