package cpu

import (
	"syscall"
	"unsafe"
)

// Induced sorting reads the text at random. With 4 KiB pages nearly every such access on a large
// input also misses the TLB (and a page walk under virtualisation is costly), so a large text is
// asked to be backed by 2 MiB pages: MADV_HUGEPAGE, and MADV_COLLAPSE (Linux 6.1) for the pages
// already there. Both are hints; errors (an old kernel, a file mapping, THP disabled) are ignored
// and the contents are unchanged either way. The suffix array is left alone: faulting in a fresh
// one as huge pages can stall on compaction (measured on the 2-core development VM: 400 MB took
// 0.08 to 1.4 s, against 0.3 s with 4 KiB pages).
//
// The suffix array is instead faulted in up front as zero pages, a part per thread (zeroPages):
// one call for many pages, 0.17 s for 400 MB on that VM where touching each page takes 0.3 s;
// unless its pages are in memory already.

const (
	madvDontneed      = 4
	madvHugepage      = 14
	madvPopulateWrite = 23
	madvCollapse      = 25
	hugePage          = 2 << 20
	hugeMin           = 16 << 20 // smaller texts fit the TLB's reach with 4 KiB pages anyway
)

func adviseHugePages(text []byte, _ []int32) {
	advise(unsafe.Pointer(unsafe.SliceData(text)), uintptr(len(text)))
}

// adviseHugeTable asks for 2 MiB pages under a table read at random (from 16 MiB): the links of
// the inverse transform of a block under 16 MiB, whose walks then miss the TLB less. Blocks of 4
// MiB (-3) on the development VM, decompressing the Linux tar's 100 MiB: 2.2-3.0 and 2.6-3.1 s of
// CPU against 2.6-3.6 and 2.9-3.6 s with 4 KiB pages (two sets of 6 runs each, alternated).
// The larger blocks' tables showed no gain, and are left alone: faulting hundreds of MB in as
// huge pages can stall.
func adviseHugeTable(s []uint32) {
	advise(unsafe.Pointer(unsafe.SliceData(s)), 4*uintptr(len(s)))
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

// zeroPages sets s to zero, leaving the whole pages inside it to the kernel: MADV_DONTNEED drops
// them (fresh memory has none yet), and MADV_POPULATE_WRITE (Linux 5.14) faults them in as zero
// pages, one call for many, instead of a fault a page and a pass clearing them over again. If
// either call fails, s is cleared the plain way. s holds no pointers, so the Go runtime does not
// mind its pages going.
func zeroPages(s []int32) {
	const page = 4 << 10
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (p + page - 1) &^ (page - 1)
	hi := (p + 4*uintptr(len(s))) &^ (page - 1)
	if hi <= lo || resident(lo, hi) {
		clear(s)
		return
	}
	_, _, e1 := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvDontneed)
	_, _, e2 := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateWrite)
	if e1 != 0 || e2 != 0 {
		clear(s)
		return
	}
	clear(s[:(lo-p)/4])
	clear(s[(hi-p)/4:])
}

// resident reports whether most of the pages from lo to hi (page aligned) are in memory already
// (mincore): a buffer used before. Those are cleared in place, 10 times faster than dropping
// and faulting them again (4 MiB on the development VM: 0.14 ms against 1.7 ms); fresh pages are
// faulted in ten times faster by zeroPages than by touching them (1.7 ms against 19 ms).
func resident(lo, hi uintptr) bool {
	const page = 4 << 10
	vec := make([]byte, (hi-lo)/page)
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if e != 0 {
		return false
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return 2*in > len(vec)
}

// osYield gives the thread's core to another thread that wants it, if any (sched_yield): a
// helper or caller spinning on a core it shares with the other (a busy machine) would otherwise
// take the time the other needs to finish what it waits for.
func osYield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
