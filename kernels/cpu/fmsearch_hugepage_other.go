//go:build !linux

package cpu

// hugeSlice returns make([]T, n): huge pages are asked for on Linux only.
func hugeSlice[T any](n int) []T { return make([]T, n) }
