//go:build !unix

package main

// peakRSSKiB is unknown off Unix.
func peakRSSKiB() int64 { return 0 }
