package formats

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/sapipe/sapipe/stream"
)

// Reading a large plain file on several threads. A single read loop copies the page cache into
// the chunks at about 4 GB/s (the lent H200's host, 2026-11-28: 4.2 s of read(2) for 16 GB of
// FASTQ, 80% of the reading goroutine's time while 32 cores parsed and matched what it read), so
// ChunkReader, whose one goroutine feeds every parser, bounded sapipe mummer against E. coli.
// parallelReader reads the blocks ahead with pread on as many goroutines as blocks in flight and
// hands them over in order; the reading goroutine only copies them into its chunks.

// Variables for tests, which read small files this way.
var (
	parallelReadBlock       = 1 << 20   // bytes a pread reads
	parallelCopyMin         = 64 << 10  // a read's copy from a block this long runs on a goroutine
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
	f         *os.File
	queue     chan chan block // the blocks in flight, in file order
	free      stream.Spares[[]byte]
	quit      chan struct{}
	cur       []byte // what is left of the block being read
	held      []byte // that block's buffer, to give back
	err       error  // the error after cur
	tail      int64  // where the sequential reading goes on once the blocks are read
	blockSize int
	// blocksDone: every block has been read; what the file has past them is read in order.
	blocksDone bool
	closed     bool
}

// newParallelReader returns a reader of f that reads depth blocks ahead.
func newParallelReader(f *os.File, size int64, depth int) *parallelReader {
	r := &parallelReader{f: f, queue: make(chan chan block, depth), free: stream.NewSpares[[]byte](depth + 2),
		quit: make(chan struct{}), tail: size, blockSize: parallelReadBlock}
	go r.schedule(size)
	return r
}

// schedule starts a pread for each block in turn, as the queue makes room.
func (r *parallelReader) schedule(size int64) {
	defer close(r.queue)
	for off := int64(0); off < size; {
		buf, ok := r.free.Get()
		if !ok {
			buf = make([]byte, r.blockSize)
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
			} else if err == nil || errors.Is(err, io.EOF) {
				err = io.EOF // the file is shorter than it was: it ends after these bytes
			}
			ch <- block{buf[:n], err}
		}()
		off += int64(want)
	}
}

// Read fills p from the blocks read ahead, as many as it takes (waiting for them), copying each
// on a goroutine of its own when p is large; past the blocks, from the file in order.
func (r *parallelReader) Read(p []byte) (int, error) {
	n := 0
	var wg sync.WaitGroup
	var spent [][]byte // blocks copied out, given back once the copies are done
	for n < len(p) {
		if len(r.cur) == 0 {
			if r.held != nil {
				spent = append(spent, r.held)
				r.held = nil
			}
			if r.err != nil || r.blocksDone {
				break
			}
			ch, ok := <-r.queue
			if !ok {
				r.blocksDone = true
				break
			}
			b := <-ch
			r.cur, r.held, r.err = b.data, b.data, b.err // io.EOF after a block cut short
			continue
		}
		k := min(len(r.cur), len(p)-n)
		dst, src := p[n:n+k], r.cur[:k]
		if k >= parallelCopyMin {
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(dst, src)
			}()
		} else {
			copy(dst, src)
		}
		r.cur = r.cur[k:]
		n += k
	}
	wg.Wait()
	for _, b := range spent {
		r.free.Put(b[:cap(b)])
	}
	switch {
	case n > 0:
		return n, nil
	case r.err != nil:
		return 0, r.err
	case len(p) == 0:
		return 0, nil
	}
	// Past the size the file had when opened (a file still being written): on in order.
	n, err := r.f.ReadAt(p, r.tail)
	r.tail += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
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

// countNewlines is bytes.Count(b, "\n"), on several goroutines for a large b where the host has
// the threads (parallelReadDepth): ChunkReader counts the lines of every FASTQ chunk to cut it,
// 4.7 s of the reading goroutine's 11 s for 32 GB on the lent H200's host.
func countNewlines(b []byte) int {
	parts := min(parallelReadDepth(), len(b)/(256<<10))
	if parts < 2 {
		return bytes.Count(b, []byte{'\n'})
	}
	counts := make([]int, parts)
	var wg sync.WaitGroup
	for i := range parts {
		part := b[len(b)*i/parts : len(b)*(i+1)/parts]
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i] = bytes.Count(part, []byte{'\n'})
		}()
	}
	wg.Wait()
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
