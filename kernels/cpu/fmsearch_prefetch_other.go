//go:build !amd64

package cpu

import "unsafe"

// prefetcher, where sapipe has no prefetch instruction, loads a byte of each address at once:
// the load waits for its cache line, but several in a row still overlap.
type prefetcher struct {
	sink byte
}

// add loads the byte at p, which must be valid.
func (q *prefetcher) add(p unsafe.Pointer) { q.sink += *(*byte)(p) }

func (q *prefetcher) flush() {}
