//go:build unix && !linux

package formats

import "syscall"

// adviseSequential is a Linux hint (madvise_linux.go); elsewhere the mapping is left as it is.
func adviseSequential([]byte) {}

// unmapMany unmaps b, a file's mapping.
func unmapMany(b []byte) error { return syscall.Munmap(b) }
