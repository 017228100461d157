package cpu

import (
	"syscall"
	"unsafe"
)

// Induced sorting reads the text at random. With 4 KiB pages nearly every such access on a large
// input also misses the TLB (and a page walk under virtualisation is costly), so a large text is
// asked to be backed by 2 MiB pages: MADV_HUGEPAGE, and MADV_COLLAPSE (Linux 6.1) for the pages
// already there. Both are hints; errors (an old kernel, a file mapping, THP disabled) are ignored
// and the contents are unchanged either way. The suffix array is left alone: its accesses are
// mostly sequential streams, and faulting in a fresh one as huge pages can stall on compaction
// (measured: slower).

const (
	madvHugepage = 14
	madvCollapse = 25
	hugePage     = 2 << 20
	hugeMin      = 16 << 20 // smaller texts fit the TLB's reach with 4 KiB pages anyway
)

func adviseHugePages(text []byte, _ []int32) {
	advise(unsafe.Pointer(unsafe.SliceData(text)), uintptr(len(text)))
}

func advise(p unsafe.Pointer, n uintptr) {
	if n < hugeMin {
		return
	}
	lo := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	hi := (uintptr(p) + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugepage)
	syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvCollapse)
}
