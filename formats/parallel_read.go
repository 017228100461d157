package formats

import (
	"errors"
	"io"
	"os"
	"runtime"
)

// Reading a large plain file on several threads. A single read loop copies the page cache into
// the chunks at about 4 GB/s (the lent H200's host, 2026-11-28: 4.2 s of read(2) for 16 GB of
// FASTQ, 80% of the reading goroutine's time while 32 cores parsed and matched what it read), so
// ChunkReader, whose one goroutine feeds every parser, bounded sapipe mummer against E. coli.
// parallelReader reads the blocks ahead with pread on as many goroutines as blocks in flight and
// hands them over in order; the reading goroutine only copies them into its chunks.

// Variables for tests, which read small files this way.
var (
	parallelReadBlock       = 4 << 20   // bytes a pread reads
	parallelReadMin   int64 = 256 << 20 // smaller files are read by one read loop
	// parallelReadDepth is the number of blocks read ahead: 0 (read by one loop) on hosts of
	// fewer than 4 threads, where the reading does not bound the run and the extra copy would
	// cost.
	parallelReadDepth = func() int {
		p := runtime.GOMAXPROCS(0)
		if p < 4 {
			return 0
		}
		return min(p/2, 16)
	}
)

// block is one pread's bytes, or its error.
type block struct {
	data []byte
	err  error
}

// parallelReader reads f from its start, size bytes (its size when opened) ahead in blocks on
// several goroutines, then on, in one loop, whatever the file has past size. Close stops it and
// closes f.
type parallelReader struct {
	f      *os.File
	queue  chan chan block // the blocks in flight, in file order
	free   chan []byte
	quit   chan struct{}
	cur    []byte // what is left of the block being read
	held   []byte // that block's buffer, to give back
	err    error  // the error after cur
	tail   int64  // where the sequential reading goes on once the blocks are read
	block  int
	closed bool
}

func newParallelReader(f *os.File, size int64, depth int) *parallelReader {
	r := &parallelReader{f: f, queue: make(chan chan block, depth), free: make(chan []byte, depth+2),
		quit: make(chan struct{}), tail: size, block: parallelReadBlock}
	go r.schedule(size)
	return r
}

// schedule starts a pread for each block in turn, as the queue makes room.
func (r *parallelReader) schedule(size int64) {
	defer close(r.queue)
	for off := int64(0); off < size; {
		var buf []byte
		select {
		case buf = <-r.free:
		default:
			buf = make([]byte, r.block)
		}
		want := int(min(int64(len(buf)), size-off))
		ch := make(chan block, 1)
		select {
		case r.queue <- ch:
		case <-r.quit:
			return
		}
		at := off
		go func() {
			n, err := r.f.ReadAt(buf[:want], at)
			if n == want {
				err = nil
			}
			ch <- block{buf[:n], err}
		}()
		off += int64(want)
	}
}

func (r *parallelReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.held != nil {
			select {
			case r.free <- r.held[:cap(r.held)]:
			default:
			}
			r.held = nil
		}
		ch, ok := <-r.queue
		if !ok {
			// Past the size the file had when opened (a file still being written): on in order.
			n, err := r.f.ReadAt(p, r.tail)
			r.tail += int64(n)
			if n > 0 && errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		b := <-ch
		r.cur, r.held, r.err = b.data, b.data, b.err
		if errors.Is(r.err, io.EOF) {
			// The file is shorter than it was: what is left of it is read, and then it ends.
			r.err = nil
			r.tail = -1
		}
		if r.tail < 0 {
			r.err = io.EOF
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops the reading ahead and closes the file (a pread in flight fails, unread).
func (r *parallelReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	close(r.quit)
	return r.f.Close()
}
