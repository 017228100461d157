//go:build linux

package formats

import "syscall"

// Linux 5.14's madvise advice that fault a range in at once (absent from package syscall).
const (
	madvPopulateRead  = 22
	madvPopulateWrite = 23
)

// populate faults the whole pages of b in with one system call instead of one fault a page (or
// a few); b is about to be read (or written, if write). Older kernels refuse the advice, and
// then the pages are faulted in as they are touched.
func populate(b []byte, write bool) {
	lo := (addrOf(b) + uintptr(pageSize) - 1) &^ uintptr(pageSize-1)
	hi := (addrOf(b) + uintptr(len(b))) &^ uintptr(pageSize-1)
	if hi <= lo {
		return
	}
	advice := madvPopulateRead
	if write {
		advice = madvPopulateWrite
	}
	start := int(lo - addrOf(b))
	syscall.Madvise(b[start:start+int(hi-lo)], advice)
}
