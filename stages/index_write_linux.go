package stages

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/sapipe/sapipe/formats"
)

// writeMapped writes ix into the empty file f through a shared mapping of it, on up to threads
// goroutines: the file's blocks are reserved first (fallocate), so that a full disk is an error
// here rather than a fault while copying, and the copies then fault pages in on every core,
// where write(2) and pwrite(2) into one file take its lock and copy on one. done is false when
// the file system does not reserve blocks (the caller then writes otherwise); err is an error of
// the writing (no space, say). A file opened for writing alone (a shell's stdout) is mapped through
// a second opening of it (readWriteFile); a file on a network file system is not (localFS).
func writeMapped(f *os.File, ix *formats.Index, threads int) (n int64, done bool, err error) {
	n, err = formats.IndexFileSize(ix)
	if err != nil {
		return 0, true, err
	}
	if n < mappedWriteMin || threads < 2 {
		return 0, false, nil // small: pwrite is as fast
	}
	out := f
	f, rw, ok := mappableFile(f)
	if !ok {
		return 0, false, nil
	}
	if rw != nil {
		defer rw.Close()
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
		if noRoom(err) {
			return 0, true, &os.PathError{Op: "write", Path: out.Name(), Err: err}
		}
		return 0, false, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Truncate(0)
		return 0, false, nil
	}
	_, werr := formats.WriteIndexAt(mapped(data), ix, threads)
	if err := unix.Munmap(data); werr == nil {
		werr = err
	}
	return n, true, werr
}

// mapped is a file's mapping as formats.WriteIndexAt writes it.
type mapped []byte

// WriteAt copies p into the mapping at off, then unmaps the whole pages copied (their data stays
// in the page cache, to be written back), so that the written file does not count in the
// process's resident memory.
func (m mapped) WriteAt(p []byte, off int64) (int, error) {
	n := copy(m[off:], p)
	page := int64(os.Getpagesize())
	lo, hi := (off+page-1)/page*page, (off+int64(n))/page*page
	if hi > lo {
		if err := unix.Madvise(m[lo:hi], unix.MADV_DONTNEED); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Truncate accepts the mapping's own length only.
func (m mapped) Truncate(n int64) error {
	if n != int64(len(m)) {
		return os.ErrInvalid
	}
	return nil
}
