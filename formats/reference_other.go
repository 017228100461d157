//go:build !unix

package formats

import "os"

// mapReadOnly maps nothing here: files are read as streams.
func mapReadOnly(*os.File, int) ([]byte, func()) { return nil, nil }

// dropPages has nothing to drop here.
func dropPages([]byte, int, int) {}

// allocBlock returns n bytes of Go's memory, freed by the garbage collector.
func allocBlock(n int) ([]byte, func()) { return make([]byte, n), func() {} }
