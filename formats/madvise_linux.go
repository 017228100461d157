package formats

import "syscall"

// adviseSequential tells the kernel that b, a mapped file, is read from start to end (read-ahead).
func adviseSequential(b []byte) { syscall.Madvise(b, syscall.MADV_SEQUENTIAL) }
