//go:build unix

package main

import "syscall"

// peakRSSKiB is the process's peak resident set size in KiB (Linux reports ru_maxrss in KiB).
func peakRSSKiB() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss)
}
