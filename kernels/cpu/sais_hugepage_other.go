//go:build !linux

package cpu

// adviseHugePages is a Linux hint (sais_hugepage_linux.go); elsewhere pages stay as they are.
func adviseHugePages([]byte, []int32) {}

// populate is a Linux hint; elsewhere pages are faulted in as they are written.
func populate([]int32) {}
