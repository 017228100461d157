//go:build !linux

package cpu

import "runtime"

// adviseHugePages is a Linux hint (sais_hugepage_linux.go); elsewhere pages stay as they are.
func adviseHugePages([]byte, []int32) {}

// adviseHugeTable is a Linux hint (sais_hugepage_linux.go).
func adviseHugeTable([]uint32) {}

// zeroPages sets s to zero (sais_hugepage_linux.go has the Linux way).
func zeroPages(s []int32) { clear(s) }

// osYield lets other goroutines run (sais_hugepage_linux.go yields the core).
func osYield() { runtime.Gosched() }
