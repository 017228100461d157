//go:build unix

package formats

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapReadOnly maps the first size bytes of f read-only; nil when it cannot.
func mapReadOnly(f *os.File, size int) (data []byte, unmap func()) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	return b, func() { syscall.Munmap(b) }
}

var pageSize = os.Getpagesize()

// dropPages takes the whole pages of data[lo:hi] (data a mapping) out of the process: a mapped
// page read counts in its resident memory while it stays mapped, though it is the kernel's page
// cache and stays there. They are read again (from the page cache) if touched again.
func dropPages(data []byte, lo, hi int) {
	lo = (lo + pageSize - 1) / pageSize * pageSize
	hi = hi / pageSize * pageSize
	if hi > lo {
		unix.Madvise(data[lo:hi], unix.MADV_DONTNEED)
	}
}

// allocBlock returns n bytes of memory outside Go's heap, and the function that frees them, so
// that a block can be given back to the system as soon as its bytes have been used; make's
// memory when that fails.
func allocBlock(n int) ([]byte, func()) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return b, func() { syscall.Munmap(b) }
}

// addrOf returns the address of b's first byte.
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
