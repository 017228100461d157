//go:build !linux

package main

// physicalMemory returns the machine's memory in bytes, 0 if unknown (here: not looked up).
func physicalMemory() int64 { return 0 }
