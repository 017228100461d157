//go:build !unix

package main

import "time"

// peakRSSKiB is unknown off Unix.
func peakRSSKiB() int64 { return 0 }

// cpuTime is unknown off Unix.
func cpuTime() time.Duration { return 0 }
