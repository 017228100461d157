package formats

// Cutting a plain FASTA or FASTQ file into chunks of whole records on the goroutines that parse
// them.
//
// ChunkReader has one goroutine read every byte and count every line before a parser gets a
// chunk; its read-ahead and line counts run on goroutines of their own, which queue behind the
// parsers for a core. With a matcher that takes no time (stages' BenchmarkMummerHost) that goroutine
// held the whole pipeline to 12.3-14.8 M reads a second on the lent machine's 32 cores.
//
// BlockFile hands out blocks (fixed byte ranges of the file) instead, and the goroutine that takes
// block i cuts it itself, in a mapping of the file (no copy at all) or, where the system has none,
// in what it reads with pread into its own buffer (from the page before the block to a little past
// its end): its chunk runs from the first record start at or after the block's start to the first
// one at or after its end. Where a record starts is told by the bytes around it alone, so block
// i+1 finds the same start as block i's end, and no block waits for another.
//
// A record starts at a line that begins with '>' (FASTA), or (FASTQ) at a line that begins with
// '@' and whose second line after begins with '+': a quality line may begin with '@', but the line
// two after it is a sequence. That is only a guess where the input is not plain four-line FASTQ;
// ParseChunk accepts a chunk only where it holds whole plain records that end exactly at its end,
// so the chunks it accepts, from the file's start on, were cut right (see chunks.go). A start not
// found within a block's length (a record longer than that), a read error, or a file that grew
// after it was opened makes a chunk Odd, and Resume hands the file to a Reader from the end of the
// last chunk accepted.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// blockOver is how much of the next block a block's read takes beyond its own bytes, for the
// search of the next block's first record (four lines of FASTQ, or a FASTA record's lines).
var blockOver = 64 << 10

// BlockFile cuts a plain FASTA or FASTQ file into chunks of whole records, block by block, on the
// goroutines that ask for them (see the top of this file). Safe for concurrent use.
type BlockFile struct {
	name   string
	f      *os.File
	size   int64 // the file's size when opened
	block  int64
	blocks int
	fastq  bool
	// data maps the file where it can be (unix): chunks are parts of it, read by no copy at all;
	// else each block is read with pread into the caller's buffer.
	data  []byte
	unmap func()

	mu     sync.Mutex
	closed bool
	handed bool // a Reader has the file (Resume)
}

// OpenBlocks opens path for chunks of about size bytes, or returns nil where the file is not a
// regular, plain (uncompressed) FASTA or FASTQ file of more than one chunk, or its first record
// does not start within its first 64 KiB: ChunkReader reads those.
func OpenBlocks(path string, size int) (*BlockFile, error) {
	if path == "-" || size <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= int64(size) {
		f.Close()
		return nil, nil
	}
	head := make([]byte, min(size, 64<<10))
	n, err := f.ReadAt(head, 0)
	if n < len(head) || err != nil && !errors.Is(err, io.EOF) || compression(head) != "" {
		f.Close()
		return nil, nil
	}
	k := firstNonSpace(head)
	if k < 0 || head[k] != '@' && head[k] != '>' {
		f.Close()
		return nil, nil
	}
	bf := &BlockFile{name: path, f: f, size: st.Size(), block: int64(size), fastq: head[k] == '@'}
	bf.blocks = int((bf.size + bf.block - 1) / bf.block)
	if mapBlocks && bf.size <= math.MaxInt {
		bf.data, bf.unmap = mapReadOnly(f, int(bf.size))
	}
	return bf, nil
}

// mapBlocks: BlockFile maps files where it can (tests turn it off, to read with pread).
var mapBlocks = true

// Mapped reports whether the chunks are parts of a mapping of the file: reading them faults where
// the file was cut short meanwhile, which the reader of a chunk turns into an error (CatchFault).
func (bf *BlockFile) Mapped() bool { return bf.data != nil }

// Release tells that the chunk [start, end) has been used: a mapping's whole pages in it leave the
// process (they stay in the page cache), so that a long file's pages do not all count in its
// resident memory. A page that is touched again is read again.
func (bf *BlockFile) Release(start, end int64) {
	if bf.data != nil && start >= 0 && end > start {
		dropPages(bf.data, int(start), int(end))
	}
}

// CatchFault, deferred with debug.SetPanicOnFault(true) set in the same goroutine, turns a fault in
// reading mapped memory (the file cut short while it was read) into *err; any other panic goes on.
func CatchFault(err *error, name string) {
	if r := recover(); r != nil {
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		*err = fmt.Errorf("%s: %w", name, errFileChanged)
	}
}

// Name returns the path, for messages.
func (bf *BlockFile) Name() string { return bf.name }

// Blocks returns the number of chunks the file is cut into.
func (bf *BlockFile) Blocks() int { return bf.blocks }

// Chunk returns chunk i (0 <= i < Blocks()), read into buf (reused; returned, grown, as the last
// result) where the file is not mapped, and where it starts and ends in the file: chunk i starts
// where chunk i-1 ends (chunk 0 at 0, the last ends at the file's end). An Odd chunk (see the top
// of this file) has no data, and -1 for what is not known of its ends.
func (bf *BlockFile) Chunk(i int, buf []byte) (c Chunk, start, end int64, _ []byte) {
	lo := int64(i) * bf.block
	hi := min(lo+bf.block, bf.size)
	last := i == bf.blocks-1
	c = Chunk{First: i == 0, Last: last, FASTQ: bf.fastq, Odd: true}
	bf.mu.Lock()
	closed := bf.closed
	bf.mu.Unlock()
	if closed {
		return c, -1, -1, buf
	}
	if bf.data != nil {
		if last {
			if st, err := bf.f.Stat(); err != nil || st.Size() != bf.size {
				return c, -1, -1, buf // grown (or cut) since it was opened: Reader's
			}
		}
		var err error
		func() {
			// A fault in reading the mapping: the file was cut short.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer CatchFault(&err, bf.name)
			c, start, end, _ = bf.cut(c, bf.data, 0, lo, hi)
		}()
		if err != nil {
			c.Data, c.Odd = nil, true
		}
		return c, start, end, buf
	}
	// buf[0]'s place: the byte before the block tells whether a line starts at lo, and a read from
	// a place that is not a multiple of 64 went at a third of the speed (2.5 against 7.3 GB/s from
	// the page cache, 2-core VM): from the page that holds that byte.
	base := int64(0)
	if lo > 0 {
		base = (lo - 1) &^ 4095
	}
	want := min(hi+int64(blockOver), bf.size) - base
	if last {
		want++ // a byte past the size it had: the file grew
	}
	if int64(cap(buf)) < want {
		buf = make([]byte, want, want+want/8)
	}
	buf = buf[:want]
	n, err := bf.f.ReadAt(buf, base)
	buf = buf[:n]
	if err != nil && !(last && errors.Is(err, io.EOF)) || int64(n) != want-b2i(last) {
		return c, -1, -1, buf
	}
	return bf.cut(c, buf, base, lo, hi)
}

// cut cuts the chunk of the block [lo, hi) out of buf, the file from base (its whole mapping, or
// what Chunk read): from the first record start at or after lo (0 for the first block) to the first
// at or after hi (the file's end for the last), with c Odd where either is not found.
func (bf *BlockFile) cut(c Chunk, buf []byte, base, lo, hi int64) (_ Chunk, start, end int64, _ []byte) {
	start, end = 0, bf.size
	if lo > 0 {
		start, buf = bf.boundary(buf, base, lo)
	}
	if hi < bf.size {
		end, buf = bf.boundary(buf, base, hi)
	}
	c.Last = end == bf.size // the chunks after it are empty
	if start < 0 || end < 0 {
		return c, start, end, buf
	}
	c.Odd = false
	c.Data = buf[start-base : end-base] // newlines not counted: Newlines counts if asked, Resume itself
	return c, start, end, buf
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// boundary finds the first record start at or after from (0 < from < the file's size) in buf (the
// file from base, at least to from), reading more of the file into buf where it holds too little.
// The end of the file is one too. A start is looked for before from plus a block, and its lines
// read up to two blocks past from: past that it returns -1. Its result depends on the file's bytes
// alone, not on what buf held, so that the chunks on both sides of from find the same.
func (bf *BlockFile) boundary(buf []byte, base, from int64) (int64, []byte) {
	reach := min(from+bf.block, bf.size)
	limit := min(from+2*bf.block, bf.size)
	// grow reads the rest of the limit into buf: rarely needed (records longer than blockOver).
	grow := func() bool {
		end := base + int64(len(buf))
		if end >= limit {
			return false
		}
		grown := make([]byte, limit-base)
		copy(grown, buf)
		if n, _ := bf.f.ReadAt(grown[len(buf):], end); int64(n) < limit-end {
			return false
		}
		buf = grown
		return true
	}
	// next returns where the line after the one at q starts: the file's size after its last line,
	// -1 past the limit.
	next := func(q int64) int64 {
		for {
			if k := bytes.IndexByte(buf[q-base:], '\n'); k >= 0 {
				return q + int64(k) + 1
			}
			if base+int64(len(buf)) == bf.size {
				return bf.size
			}
			if !grow() {
				return -1
			}
		}
	}
	// at returns the byte at q (< the file's size), or false past the limit.
	at := func(q int64) (byte, bool) {
		if q-base >= int64(len(buf)) && !grow() {
			return 0, false
		}
		return buf[q-base], true
	}
	p := from
	if buf[p-1-base] != '\n' {
		p = next(p)
	}
	for {
		switch {
		case p < 0 || p >= reach && p != bf.size:
			return -1, buf
		case p == bf.size:
			return p, buf
		}
		ch, ok := at(p)
		if !ok {
			return -1, buf
		}
		if !bf.fastq && ch == '>' {
			return p, buf
		}
		if bf.fastq && ch == '@' {
			l2 := next(p)
			if l2 > 0 && l2 < bf.size {
				l2 = next(l2)
			}
			switch {
			case l2 < 0:
				return -1, buf
			case l2 == bf.size:
				return p, buf // the file ends first: ParseChunk or Reader tells
			}
			if ch, ok := at(l2); !ok {
				return -1, buf
			} else if ch == '+' {
				return p, buf
			}
		}
		p = next(p)
	}
}

// resumeBufSize is the buffer of Resume's Reader (tests make it small).
var resumeBufSize = defaultBufSize

// Resume returns a Reader of the file from start on (where a chunk starts: the end of the last
// chunk accepted), with nrec records before it; the newlines before it, which its messages count
// lines from, are counted here, in the file, so that no block's newlines are counted as it is
// cut (bytes.Count over every chunk was 9% of the host's CPU time in 100 M reads on two cards).
// The Reader takes over the file: closing it closes the file, and bf is closed.
func (bf *BlockFile) Resume(start int64, nrec int) (*Reader, error) {
	bf.mu.Lock()
	bf.handed = true
	bf.mu.Unlock()
	bf.Close()
	nl, err := newlinesBefore(bf.f, start)
	if err != nil {
		bf.f.Close()
		return nil, fmt.Errorf("%s: %s", bf.name, oneLine(err.Error()))
	}
	if _, err := bf.f.Seek(start, io.SeekStart); err != nil {
		bf.f.Close()
		return nil, fmt.Errorf("%s: %s", bf.name, oneLine(err.Error()))
	}
	rd := &Reader{buf: make([]byte, resumeBufSize)}
	rd.name, rd.file, rd.src, rd.whole = bf.name, bf.f, bf.f, bf.f
	rd.nrec, rd.nl = nrec, nl
	rd.started, rd.fastq = nrec > 0, bf.fastq
	return rd, nil
}

// newlinesBefore counts the '\n' of f's first n bytes.
func newlinesBefore(f *os.File, n int64) (int, error) {
	buf := make([]byte, min(n, 4<<20))
	nl := 0
	for at := int64(0); at < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-at)], at)
		nl += bytes.Count(buf[:k], []byte{'\n'})
		at += int64(k)
		if err != nil && at < n {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the file was cut short since it was read
			}
			return 0, err
		}
	}
	return nl, nil
}

// Close closes the file, unless Resume has handed it to a Reader; chunks asked for after it are
// Odd.
func (bf *BlockFile) Close() error {
	bf.mu.Lock()
	if bf.closed {
		bf.mu.Unlock()
		return nil
	}
	bf.closed = true
	handed := bf.handed
	bf.mu.Unlock()
	if bf.unmap != nil {
		bf.unmap()
		bf.data, bf.unmap = nil, nil
	}
	if handed {
		return nil
	}
	return bf.f.Close()
}
