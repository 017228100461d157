//go:build !unix

package formats

import (
	"fmt"
	"os"
)

// mapFile reads the file at path into memory: this system has no mmap that sapipe uses.
func mapFile(path string) (data []byte, unmap func() error, mapped bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("index %s: %w", path, unwrapPath(err))
	}
	return b, func() error { return nil }, false, nil
}

// mapRegular maps nothing here: inputs are read.
func mapRegular(string) ([]byte, func() error) { return nil, nil }
