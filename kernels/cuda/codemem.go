package cuda

import (
	"slices"
	"sync"
	"unsafe"
)

// codeMemory is pinned host memory for query batches' codes (kernels.CodeMemory). A launch copies
// the codes of a batch grown here up from where they are; the codes of any other batch its device
// worker copies into its own pinned buffer first, a read and a write of every code on the host,
// whose memory bandwidth bounds a run of short reads on the lent two-H200 hosts (NOTES.md). The
// memory is portable (every card's copies take it), shared by a group's cards, and freed when the
// matcher that made it closes.
type codeMemory struct {
	alloc   func(n int) (unsafe.Pointer, error)
	release func(p unsafe.Pointer, n int)
	most    int // bytes pinned at most; past it, Go memory

	mu     sync.Mutex
	bufs   map[*byte]int // a buffer's first byte: its length
	total  int
	failed bool // an allocation failed: Go memory from then on
}

// codeMemoryMost is how much host memory codeMemory pins at most: about 500 batches of 2 Mi
// reads' bases on both strands, more than a run keeps in flight.
const codeMemoryMost = 4 << 30

// newCodeMemory returns a codeMemory that pins memory for d's driver (pinHost), on the goroutine
// that grows a batch's codes: a run's stage workers grow theirs at once as it starts.
func newCodeMemory(d *device) *codeMemory {
	return &codeMemory{
		most: codeMemoryMost,
		alloc: func(n int) (unsafe.Pointer, error) {
			var p unsafe.Pointer
			err := d.withContext(func() (err error) {
				p, err = pinHost(d, n)
				return err
			})
			return p, err
		},
		release: func(p unsafe.Pointer, n int) { _ = d.withContext(func() error { unpinHost(d, p, n); return nil }) },
		bufs:    make(map[*byte]int),
	}
}

// GrowCodes implements kernels.CodeMemory.
func (c *codeMemory) GrowCodes(codes []byte, n int) []byte {
	need := len(codes) + n
	var base *byte
	if cap(codes) > 0 {
		base = unsafe.SliceData(codes[:1])
	}
	c.mu.Lock()
	have, ours := c.bufs[base]
	if ours && have >= need {
		c.mu.Unlock()
		return unsafe.Slice(base, have)[:len(codes)]
	}
	size := (need + need/4 + 1<<20 - 1) &^ (1<<20 - 1)
	if c.failed || c.total+size > c.most {
		c.mu.Unlock()
		return slices.Grow(codes, n)
	}
	c.total += size // reserved while it is allocated
	c.mu.Unlock()
	p, err := c.alloc(size)
	c.mu.Lock()
	if err != nil {
		c.total -= size
		c.failed = true
		c.mu.Unlock()
		return slices.Grow(codes, n)
	}
	buf := unsafe.Slice((*byte)(p), size)
	c.bufs[&buf[0]] = size
	if ours {
		delete(c.bufs, base)
		c.total -= have
	}
	c.mu.Unlock()
	copy(buf, codes)
	if ours {
		c.release(unsafe.Pointer(base), have)
	}
	return buf[:len(codes)]
}

// owns reports whether p is the first byte of a buffer of c's.
func (c *codeMemory) owns(p *byte) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	_, ok := c.bufs[p]
	c.mu.Unlock()
	return ok
}

// free releases every buffer: the matcher is closed, and the batches that hold them are done.
func (c *codeMemory) free() {
	c.mu.Lock()
	bufs := c.bufs
	c.bufs, c.total = map[*byte]int{}, 0
	c.mu.Unlock()
	for p, n := range bufs {
		c.release(unsafe.Pointer(p), n)
	}
}
