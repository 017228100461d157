package cpu

import (
	"syscall"
	"unsafe"
)

// Induced sorting reads the text and the suffix array at random. With 4 KiB pages nearly every
// such access on a large input also misses the TLB (and a page walk under virtualisation is
// costly), so large buffers are asked to be backed by 2 MiB pages: MADV_HUGEPAGE for pages not
// yet touched (a fresh suffix array) and MADV_COLLAPSE (Linux 6.1) for those already there (the
// text). Both are hints; errors (an old kernel, a file mapping, THP disabled) are ignored, and the
// contents are unchanged either way.

const (
	madvHugepage = 14
	madvCollapse = 25
	hugePage     = 2 << 20
	hugeMin      = 16 << 20 // smaller buffers fit the TLB's reach with 4 KiB pages anyway
)

func adviseHugePages(text []byte, sa []int32) {
	if len(text) < hugeMin/4 {
		return
	}
	advise(unsafe.Pointer(unsafe.SliceData(text)), uintptr(len(text)))
	advise(unsafe.Pointer(unsafe.SliceData(sa)), 4*uintptr(len(sa)))
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
