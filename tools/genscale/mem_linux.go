package main

import "syscall"

// madvHugepage is Linux's MADV_HUGEPAGE.
const madvHugepage = 14

// hugePages asks Linux to back b with transparent huge pages where the system leaves that to
// the program (transparent_hugepage "madvise"): the first touch of a genome-sized buffer then
// faults 2 MiB at a time instead of 4 KiB, 2.5-3x faster for 1 GiB in the development
// machine's virtual machine. It is a hint; failure changes nothing.
func hugePages(b []byte) {
	if cap(b) >= 4<<20 {
		_ = syscall.Madvise(b[:cap(b)], madvHugepage)
	}
}
