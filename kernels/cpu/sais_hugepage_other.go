//go:build !linux

package cpu

// adviseHugePages is a Linux hint (sais_hugepage_linux.go); elsewhere pages stay as they are.
func adviseHugePages([]byte, []int32) {}

// zeroPages sets s to zero (sais_hugepage_linux.go has the Linux way).
func zeroPages(s []int32) { clear(s) }
