package cpu

import "unsafe"

// prefetcher collects addresses and asks the processor for their cache lines all at once, without
// waiting for them: unlike a load, a prefetch that misses does not hold up the instructions after
// it, so the next accesses of many patterns are in flight while a search works on others.
type prefetcher struct {
	n int
	a [prefetchMax]uintptr
}

// add asks for the cache line of p at the next flush. p need not point into valid memory: a
// prefetch never faults. At most prefetchMax adds come between flushes; add is small enough to
// be inlined, which a check for a full buffer would stop.
func (q *prefetcher) add(p unsafe.Pointer) {
	q.a[q.n] = uintptr(p)
	q.n++
}

// flush prefetches the addresses added since the last flush.
func (q *prefetcher) flush() {
	prefetch(q.a[:q.n])
	q.n = 0
}

// prefetch runs PREFETCHT0 on each address of addrs.
//
//go:noescape
func prefetch(addrs []uintptr)
