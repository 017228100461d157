//go:build unix && !linux

package formats

// adviseSequential is a Linux hint (madvise_linux.go); elsewhere the mapping is left as it is.
func adviseSequential([]byte) {}
