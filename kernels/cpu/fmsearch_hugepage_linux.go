package cpu

import (
	"syscall"
	"unsafe"
)

// hugeSlice returns a zeroed slice of n elements whose memory the kernel is asked to back with
// 2 MiB pages (MADV_HUGEPAGE before it is touched): the keyed search reads its arrays at random,
// and with 4 KiB pages nearly every such read would also miss the TLB, which under
// virtualisation costs a page walk of its own. A hint; where it is refused the pages are small.
func hugeSlice[T any](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	const huge = 2 << 20
	if n*size < huge {
		return make([]T, n)
	}
	s := make([]T, n+huge/size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (p + huge - 1) &^ (huge - 1)
	s = s[int(lo-p)/size:][:n]
	syscall.Syscall(syscall.SYS_MADVISE, lo, uintptr(n*size)&^(huge-1), 14) // MADV_HUGEPAGE
	return s
}
