//go:build unix

package formats

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the regular file at path read-only into memory. Pages are read from the page
// cache when first touched, so a file another run has just used costs no reading at all.
func mapFile(path string) (data []byte, unmap func() error, mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("index %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, false, fmt.Errorf("index %s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, nil, false, fmt.Errorf("index %s: not a regular file", path)
	}
	size := st.Size()
	if size < indexHeaderLen {
		// Too short to map usefully: read it, for the reader's message.
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, false, fmt.Errorf("index %s: %w", path, unwrapPath(err))
		}
		return b, func() error { return nil }, false, nil
	}
	if int64(int(size)) != size {
		return nil, nil, false, fmt.Errorf("index %s: %d bytes is too large to map", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false, fmt.Errorf("index %s: mapping %d bytes: %v", path, size, err)
	}
	return b, func() error { return unmapMany(b) }, true, nil
}

// mapRegular maps the regular file at path read-only, for reading it in order; nil when it is not
// a non-empty regular file or cannot be mapped.
func mapRegular(path string) (data []byte, unmap func() error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	adviseSequential(b)
	return b, func() error { return syscall.Munmap(b) }
}
