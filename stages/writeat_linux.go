package stages

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// outputMap writes the part of an output file from its offset from on through shared mappings
// of windows of the file, each reserved first (fallocate: a full disk is then an error of the
// write, not a fault while copying). The copies fault the file's pages in on every writer, where
// pwrite(2) into one file takes its lock and copies on one (see formats/NOTES.md, "Writing an
// index file"). The file is reserved a window past what is written, and cut to its length at
// close; a run killed before that leaves zeros after its text.
type outputMap struct {
	name   string   // the file's, for errors
	rw     *os.File // the file opened again for reading and writing, or nil
	fd     int
	from   int64 // the first mapped offset, a page's
	window int64 // bytes a window, whole pages

	mu   sync.Mutex
	wins map[int64]*outWindow // by index: window i maps [from+i*window, from+(i+1)*window)
	low  int64                // windows below are closed and unmapped
	any  bool                 // a window was reserved: the file is cut at close
	err  error                // the first unmapping's
}

type outWindow struct {
	data   []byte
	refs   int  // parts handed out and not yet copied
	closed bool // the writer is past its end: unmapped once refs is 0
}

// newOutputMap returns the mapping writer of f, whose text starts at offset start, or nil where f
// does not end there (only what is appended is reserved and cut).
func newOutputMap(f *os.File, start, size int64) *outputMap {
	if start != size {
		return nil
	}
	name := f.Name()
	f, rw, ok := mappableFile(f)
	if !ok {
		return nil
	}
	page := int64(os.Getpagesize())
	window := (mappedOutputWindow + page - 1) / page * page
	return &outputMap{
		name:   name,
		rw:     rw,
		fd:     int(f.Fd()),
		from:   (start + mappedOutputFrom + page - 1) / page * page,
		window: window,
		wins:   map[int64]*outWindow{},
	}
}

// mappableFile returns f, or f opened again (readWriteFile), for a shared writable mapping of
// it, where f is on a local file system (localFS); rw is the second opening, for the caller to
// close, or nil; ok is false where the file is to be written by pwrite.
func mappableFile(f *os.File) (mf, rw *os.File, ok bool) {
	if !localFS(f) {
		return nil, nil, false
	}
	return readWriteFile(f)
}

// noRoom reports whether err, from fallocate, says the file system has no room for the file
// (rather than that it reserves nothing): an error of the write.
func noRoom(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.EFBIG)
}

// localFS reports whether f lies on a local file system whose shared writable mappings sapipe
// trusts to be as fast as pwrite or faster (ext4, XFS, Btrfs, F2FS, tmpfs, and overlayfs over
// them, as in containers). Elsewhere (NFS,
// Lustre, GPFS and other network or FUSE file systems, where writing through a mapping can be
// slow or flushed differently) outputs and index files are written by pwrite.
func localFS(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}

// readWriteFile returns f, or where f was opened for writing alone (as a shell opens stdout's
// file) the same file opened again for reading and writing through /proc (if its mode lets this
// user read it), as a shared writable mapping needs; rw is that second file, for the caller to
// close, or nil. ok is false where neither can be had.
func readWriteFile(f *os.File) (rwf, rw *os.File, ok bool) {
	if readWrite(f) {
		return f, nil, true
	}
	rw, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDWR, 0)
	if err != nil {
		return nil, nil, false
	}
	if fi, err := rw.Stat(); err != nil || !sameFile(f, fi) {
		rw.Close()
		return nil, nil, false
	}
	return rw, rw, true
}

// readWrite reports whether f was opened for reading and writing.
func readWrite(f *os.File) bool {
	flags, ok := fileFlags(f)
	return ok && flags&unix.O_ACCMODE == unix.O_RDWR
}

// sameFile reports whether fi is f's file.
func sameFile(f *os.File, fi os.FileInfo) bool {
	fj, err := f.Stat()
	return err == nil && os.SameFile(fi, fj)
}

// acquire holds window i for one more part, reserving and mapping it first. ok is false where the
// first window cannot be reserved or mapped (the file system reserves nothing, say): the writer
// then goes on by pwrite.
func (m *outputMap) acquire(i int64) (ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.wins[i]; w != nil {
		w.refs++
		return true, nil
	}
	off := m.from + i*m.window
	if err := unix.Fallocate(m.fd, 0, off, m.window); err != nil {
		if noRoom(err) || m.any {
			return false, &os.PathError{Op: "write", Path: m.name, Err: err}
		}
		return false, nil
	}
	first := !m.any
	m.any = true // reserved: cut at close
	data, err := unix.Mmap(m.fd, off, int(m.window), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		if first {
			return false, nil
		}
		return false, &os.PathError{Op: "write", Path: m.name, Err: err}
	}
	m.wins[i] = &outWindow{data: data, refs: 1}
	return true, nil
}

// copyAt copies the part of text (which belongs at offset off) that falls in window i, and lets
// the window go. Its whole pages are unmapped again (their data stays in the page cache, dirty),
// so that the output does not count in the process's resident memory.
func (m *outputMap) copyAt(i int64, text []byte, off int64) error {
	m.mu.Lock()
	w := m.wins[i]
	m.mu.Unlock()
	base := m.from + i*m.window
	lo, hi := max(off, base), min(off+int64(len(text)), base+m.window)
	_, err := mapped(w.data).WriteAt(text[lo-off:hi-off], lo-base)
	m.mu.Lock()
	w.refs--
	m.unmapDone(i, w)
	m.mu.Unlock()
	return err
}

// passed closes the windows that end at or before offset next, which no later part touches.
func (m *outputMap) passed(next int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ; m.from+(m.low+1)*m.window <= next; m.low++ {
		if w := m.wins[m.low]; w != nil {
			w.closed = true
			m.unmapDone(m.low, w)
		}
	}
}

// unmapDone unmaps window i once it is closed and copied; m.mu is held.
func (m *outputMap) unmapDone(i int64, w *outWindow) {
	if !w.closed || w.refs > 0 {
		return
	}
	if err := unix.Munmap(w.data); err != nil && m.err == nil {
		m.err = err
	}
	delete(m.wins, i)
}

// close unmaps every window and cuts the file at length, the end of the text written. The parts
// handed out are all copied.
func (m *outputMap) close(length int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range m.wins {
		w.closed, w.refs = true, 0
		m.unmapDone(i, w)
	}
	if m.any {
		m.any = false
		if err := unix.Ftruncate(m.fd, length); err != nil && m.err == nil {
			m.err = err
		}
	}
	if m.rw != nil {
		m.rw.Close()
		m.rw = nil
	}
	return m.err
}
