package stages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sapipe/sapipe/formats/bwz"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/stream"
)

// CompressOptions configure Compress.
type CompressOptions struct {
	BlockSize   int  // bytes per block, 1..bwz.MaxBlockSize
	Threads     int  // blocks in flight, and threads for the work inside a block
	SegmentSize int  // bytes of transform per coded segment; bwz.DefaultSegmentSize when 0
	Fast        bool // Huffman tables after the transform instead of adaptive models
	// Memory bounds the blocks in flight besides Threads: each counts CompressBytesPerByte times
	// its length, from when it is read until it is written; 0 bounds nothing more.
	Memory   int64
	Progress *ByteProgress
	// Reads codes an input that starts as FASTQ or FASTA records as a read set (a version-5
	// stream, bwz.EncodeReads): its blocks end where records do, and are of ReadsBlockSize bytes
	// at most (BlockSize when 0). A block that does not parse as records is coded as bytes.
	// Ignored with Fast.
	Reads          bool
	ReadsBlockSize int
}

// The memory a block takes while it is compressed and decompressed, in bytes a byte of the block
// (the CPU's suffix array, text, transform, LZP text and coding; the transform, the inverse
// transform's links, the block and its LZP text).
const (
	CompressBytesPerByte   = 7
	DecompressBytesPerByte = 6
)

// CompressStats says what Compress did.
type CompressStats struct {
	In, Out int64         // bytes read and written
	Blocks  int           // blocks written
	On      []BlocksOn    // the blocks each backend sorted, in the order of their first blocks
	SA      time.Duration // time in the backend's suffix arrays, summed over blocks
	Coding  time.Duration // time in the rest of the block work (LZP, transform, coding), summed
	// LZPBlocks counts the blocks sorted as their LZP text, and Sorted the bytes sorted (the
	// blocks' texts: their bytes, or their LZP texts).
	LZPBlocks int
	Sorted    int64
	// ReadSets counts the blocks coded as read sets, and ReadParts sums their payloads' parts
	// (bwz.ReadsSections: structure, names, consensus, qualities, reads).
	ReadSets  int
	ReadParts []int
}

// BlocksOn counts the blocks a backend sorted.
type BlocksOn struct {
	Backend string // its name
	Blocks  int
}

// compressed is one block on its way to the writer.
type compressed struct {
	data    []byte // the original bytes, for the stream checksum
	h       bwz.BlockHeader
	payload []byte
	text    int  // the length of the text sorted
	lzp     bool // the text is the block's LZP text
	sa      time.Duration
	code    time.Duration
	on      string // the backend that sorted it
	reads   []int  // a read set: the sizes of its payload's parts
}

// Compress reads r to its end and writes it to w as one .bwz stream: blocks of opts.BlockSize
// bytes, each sorted by b (its suffix array), transformed and coded on opts.Threads goroutines, and
// written in order. Memory holds at most Threads+1 blocks and their work (about 7 bytes per byte of
// a block while it is sorted), and no more than opts.Memory of it (but for one block).
func Compress(ctx context.Context, b kernels.Backend, opts CompressOptions, r io.Reader, w io.Writer) (CompressStats, error) {
	return CompressWith(ctx, OneBackend{b}, opts, r, w)
}

// CompressWith is Compress with each block sorted on the backend that bb chooses for it (the CPU
// while a GPU starts, say). The output does not depend on the choice.
func CompressWith(ctx context.Context, bb BlockBackends, opts CompressOptions, r io.Reader, w io.Writer) (CompressStats, error) {
	var st CompressStats
	if opts.BlockSize < 1 || opts.BlockSize > bwz.MaxBlockSize {
		return st, fmt.Errorf("block size %d out of range 1..%d", opts.BlockSize, bwz.MaxBlockSize)
	}
	threads := max(opts.Threads, 1)
	// A read set is told from its first bytes; its blocks then end where records do.
	blockSize, readSet := opts.BlockSize, false
	if opts.Reads && !opts.Fast {
		br := bufio.NewReaderSize(r, 1<<16)
		r = br
		head, err := br.Peek(1 << 16)
		if bwz.LooksLikeReads(head, err != nil) {
			readSet = true
			if opts.ReadsBlockSize > 0 {
				if opts.ReadsBlockSize > bwz.MaxBlockSize {
					return st, fmt.Errorf("block size %d out of range 1..%d", opts.ReadsBlockSize, bwz.MaxBlockSize)
				}
				blockSize = opts.ReadsBlockSize
			}
		}
	}
	var carry []byte // the start of a record that the last block left to the next
	// Nothing is written before bb says the backends can do the work: a GPU that --device gpu
	// requires and that fails to open leaves no partial stream on stdout. The blocks sorted
	// meanwhile wait in the pipeline's window.
	headerDone := false
	writeHeader := func() error {
		if headerDone {
			return nil
		}
		headerDone = true
		if err := bb.Finish(ctx); err != nil {
			return err
		}
		header := bwz.AppendHeader(nil, blockSize)
		if readSet {
			header = bwz.AppendReadsHeader(nil, blockSize)
		}
		if _, err := w.Write(header); err != nil {
			return err
		}
		st.Out += int64(len(header))
		return nil
	}
	start := time.Now()
	index := 0
	// When every block is read and sorted, a backend that wants to know is told (the last
	// input's GPU is closed while the coding goes on).
	var read, sorted atomic.Int64
	var eof atomic.Bool // the input's end was read (sorting goroutines look at it too)
	var sortedOnce sync.Once
	tellSorted := func() {
		if s, ok := bb.(interface{ Sorted() }); ok && eof.Load() && sorted.Load() == read.Load() {
			sortedOnce.Do(s.Sorted)
		}
	}
	src := func() ([]byte, error) {
		if eof.Load() {
			return nil, io.EOF
		}
		var buf []byte
		var n int
		var err error
		if readSet {
			buf, err = readBlock(r, carry, blockSize)
			n, carry = len(buf), nil
		} else {
			buf = make([]byte, blockSize)
			n, err = io.ReadFull(r, buf)
		}
		atEnd := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !atEnd {
			return nil, err
		}
		if readSet && !atEnd {
			// the block ends with its last whole record (a block of no whole record is bytes)
			if cut := bwz.RecordsEnd(buf[:n]); cut > 0 {
				carry = append([]byte(nil), buf[cut:n]...)
				n = cut
			}
		}
		if n > 0 {
			read.Add(1) // counted before the end is marked, so tellSorted waits for this block
			if !readSet {
				bb.Read(n) // a read set's blocks are not sorted: no GPU is started for them
			}
		}
		if atEnd {
			eof.Store(true)
			if n == 0 {
				tellSorted()
				return nil, io.EOF
			}
		}
		return buf[:n], nil
	}
	var sorting atomic.Int32 // blocks being sorted now
	fn := func(ctx context.Context, data []byte) (compressed, error) {
		afterSort := func() {
			sorted.Add(1)
			tellSorted()
		}
		if readSet {
			// no backend sorts a read set
			if c, ok := compressReads(data, threads); ok {
				afterSort()
				return c, nil
			}
		}
		b, err := bb.For(ctx, len(data))
		if err != nil {
			return compressed{}, err
		}
		return compressBlock(b, data, threads, &sorting, afterSort, bwz.BlockOptions{SegmentSize: opts.SegmentSize, Threads: threads, Fast: opts.Fast})
	}
	var crc uint32
	sink := func(c compressed) error {
		if err := writeHeader(); err != nil {
			return err
		}
		c.h.Index = index
		index++
		hdr := bwz.AppendBlockHeader(nil, c.h)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if _, err := w.Write(c.payload); err != nil {
			return err
		}
		crc = bwz.UpdateCRC(crc, c.data)
		st.In += int64(len(c.data))
		st.Out += int64(len(hdr) + len(c.payload))
		st.Blocks++
		st.count(c.on)
		st.SA += c.sa
		st.Coding += c.code
		st.Sorted += int64(c.text)
		if c.lzp {
			st.LZPBlocks++
		}
		if c.reads != nil {
			st.ReadSets++
			if st.ReadParts == nil {
				st.ReadParts = make([]int, len(c.reads))
			}
			for i, v := range c.reads {
				st.ReadParts[i] += v
			}
		}
		opts.Progress.Update(st.In, time.Since(start))
		return nil
	}
	blockCost := func(data []byte) int64 { return CompressBytesPerByte * int64(len(data)) }
	err := stream.OrderedMapBudget(ctx, stream.Options{Workers: threads, Window: threads + 1}, opts.Memory, blockCost, src, fn, sink)
	if err != nil {
		return st, err
	}
	if err := writeHeader(); err != nil { // an empty input
		return st, err
	}
	if err := bb.Finish(ctx); err != nil {
		return st, err
	}
	trailer := bwz.AppendTrailer(nil, bwz.Trailer{Blocks: uint32(st.Blocks), Total: uint64(st.In), CRC: crc})
	if _, err := w.Write(trailer); err != nil {
		return st, err
	}
	st.Out += int64(len(trailer))
	opts.Progress.Done(st.In, time.Since(start))
	return st, nil
}

// count counts a block sorted on backend.
func (st *CompressStats) count(backend string) {
	for i := range st.On {
		if st.On[i].Backend == backend {
			st.On[i].Blocks++
			return
		}
	}
	st.On = append(st.On, BlocksOn{Backend: backend, Blocks: 1})
}

// readBlock reads a block of up to size bytes that starts with carry, growing its buffer as the
// bytes come (a read set's blocks may be of a GiB; its input may be far shorter). At the input's
// end it returns what it has with io.EOF or io.ErrUnexpectedEOF, as io.ReadFull does.
func readBlock(r io.Reader, carry []byte, size int) ([]byte, error) {
	buf := make([]byte, len(carry), min(size, max(len(carry), 16<<20)))
	copy(buf, carry)
	for len(buf) < size {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(size, 2*cap(buf)))
			copy(nb, buf)
			buf = nb
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// compressReads codes a block as a read set, if it is one.
func compressReads(data []byte, threads int) (compressed, bool) {
	t0 := time.Now()
	payload, ok := bwz.EncodeReads(make([]byte, 0, len(data)/8+1024), data, threads)
	if !ok {
		return compressed{}, false
	}
	parts := bwz.ReadsSections(payload, len(data))
	h := bwz.BlockHeader{Length: len(data), Primary: 1, CRC: bwz.CRC(data), Payload: len(payload), PayloadCRC: bwz.CRC(payload)}
	return compressed{data: data, h: h, payload: payload, code: time.Since(t0), on: "cpu", reads: parts}, true
}

// sampledBWTBackend is a backend that makes a block's transform and sampled rows itself (the GPU).
type sampledBWTBackend interface {
	BWTSampled(text, dst []byte, shift uint, threads int) (primary int, samples []uint32, err error)
}

// saPool holds suffix arrays for the next blocks: a fresh one per block would be zeroed by the
// runtime, then cleared again by the sorting.
var saPool sync.Pool // of *[]int32

func getSA(n int) []int32 {
	if p, ok := saPool.Get().(*[]int32); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]int32, n)
}

// threadedSorter is a backend that sorts on a given number of threads (the CPU).
type threadedSorter interface {
	SuffixArrayThreads(text []byte, sa []int32, threads int) error
}

// fastLZPMin is the smallest block that --fast takes the LZP text of.
const fastLZPMin = 4 << 20

// compressBlock sorts, transforms and codes one block; its number is set by the writer. On the
// CPU the threads are shared among the blocks being sorted at the time (sorting counts them):
// with many small blocks each is sorted on one thread, the others sorting beside it, rather
// than all of them on every thread at once.
func compressBlock(b kernels.Backend, data []byte, threads int, sorting *atomic.Int32, afterSort func(), bopts bwz.BlockOptions) (compressed, error) {
	n := len(data)
	tl := time.Now()
	// The transform is of the block's LZP text when long repeats make that shorter: with the
	// adaptive coder 0.7% smaller on the Linux sources, in about the time. With the Huffman
	// coder it comes out a little larger (0.13-0.26%), but sorting a quarter fewer bytes pays
	// for the LZP pass in blocks of fastLZPMin or more: -3 -F compressed the Linux tar 12%
	// faster, -F 8%, and decompressed it 0-7% more slowly. Smaller blocks sort fast enough as
	// they are, and decompressed 20% more slowly with it (-1 -F).
	var lzp *bwz.LZP
	text := data
	if !bopts.Fast || n >= fastLZPMin {
		lzp, text = bwz.EncodeLZP(nil, data, threads)
	}
	m := len(text)
	t0 := time.Now()
	bwt := make([]byte, m)
	var primary int
	var samples []uint32
	if sb, ok := b.(sampledBWTBackend); ok {
		// The device returns the transform and its samples, not the 4-byte-a-byte suffix array.
		var err error
		if primary, samples, err = sb.BWTSampled(text, bwt, bwz.SampleShift, threads); err != nil {
			return compressed{}, fmt.Errorf("sorting a block of %d bytes on %s: %w", m, b.Name(), err)
		}
	} else {
		sa := getSA(m)
		var err error
		if ts, ok := b.(threadedSorter); ok {
			active := int(sorting.Add(1))
			err = ts.SuffixArrayThreads(text, sa, max(1, threads/active))
			sorting.Add(-1)
		} else {
			err = b.SuffixArray(text, sa)
		}
		if err != nil {
			return compressed{}, fmt.Errorf("sorting a block of %d bytes on %s: %w", m, b.Name(), err)
		}
		primary, samples = cpu.BWTSampled(text, sa, bwt, bwz.SampleShift, threads)
		saPool.Put(&sa) // not needed for the coding
	}
	t1 := time.Now()
	if afterSort != nil {
		afterSort()
	}
	payload, err := bwz.EncodeBlock(make([]byte, 0, m/3+1024), bwt, samples, lzp, bopts)
	if err != nil {
		return compressed{}, err
	}
	h := bwz.BlockHeader{Length: n, Primary: primary, CRC: bwz.CRC(data), Payload: len(payload), PayloadCRC: bwz.CRC(payload)}
	return compressed{data: data, h: h, payload: payload, text: m, lzp: lzp != nil, sa: t1.Sub(t0), code: time.Since(t1) + t0.Sub(tl), on: b.Name()}, nil
}

// DecompressOptions configure Decompress.
type DecompressOptions struct {
	Threads int // blocks in flight, and threads for the work inside a block
	Blocks  int // blocks decoded at once, if fewer than Threads (each on all the threads)
	// Memory bounds the blocks in flight besides: each counts DecompressBytesPerByte times its
	// length, from when its frame is read until its bytes are written; 0 bounds nothing more.
	Memory   int64
	Progress *ByteProgress
}

// frameItem is a frame on its way through the decoder, and what became of it.
type frameItem struct {
	f    bwz.Frame
	data []byte // a block's original bytes
	err  error  // a block's damage (in test mode the pipeline goes on)
}

// Decompress reads the .bwz streams of r (named name in errors) and writes their contents to w.
// Blocks decode on opts.Threads goroutines and are written in order, each checked against its
// CRC as it goes, and each stream against its trailer. The first damage stops it with an error
// that names the block; what was written before stays written.
func Decompress(ctx context.Context, opts DecompressOptions, r io.Reader, w io.Writer) (int64, error) {
	var written int64
	start := time.Now()
	sink := func(it frameItem) error {
		if it.data != nil {
			if _, err := w.Write(it.data); err != nil {
				return err
			}
			written += int64(len(it.data))
			opts.Progress.Update(written, time.Since(start))
		}
		return nil
	}
	err := decodeFrames(ctx, opts, r, false, sink)
	if err == nil {
		opts.Progress.Done(written, time.Since(start))
	}
	return written, err
}

// TestReport lists what TestStreams found.
type TestReport struct {
	Streams int
	Blocks  int     // blocks decoded
	Bytes   int64   // original bytes in the good blocks
	Bad     []error // one per damaged block or damaged stretch of input, in input order
}

// TestStreams decodes every block of r without writing anything, and reports every damaged block
// rather than stopping at the first: after damage that breaks the framing it skips to the next
// intact block header. The returned error is for failures other than damage (reading r).
func TestStreams(ctx context.Context, opts DecompressOptions, r io.Reader) (TestReport, error) {
	var rep TestReport
	sink := func(it frameItem) error {
		switch {
		case it.err != nil:
			rep.Bad = append(rep.Bad, it.err)
		case it.f.Kind == bwz.FrameBlock:
			rep.Blocks++
			rep.Bytes += int64(len(it.data))
		case it.f.Kind == bwz.FrameHeader:
			rep.Streams++
		}
		return nil
	}
	err := decodeFrames(ctx, opts, r, true, sink)
	return rep, err
}

// decodeFrames runs the decoding pipeline. In test mode damage goes to the sink as items with an
// error and decoding goes on; otherwise the first damage ends it.
func decodeFrames(ctx context.Context, opts DecompressOptions, r io.Reader, test bool, sink func(frameItem) error) error {
	threads := max(opts.Threads, 1)
	fr := bwz.NewReader(r)
	done := false
	src := func() (frameItem, error) {
		if done {
			return frameItem{}, io.EOF
		}
		f, err := fr.Next()
		if err == io.EOF {
			return frameItem{}, io.EOF
		}
		var ce *bwz.CorruptError
		if err != nil && test && errors.As(err, &ce) {
			// report it, skip to the next intact frame and go on
			if _, rerr := fr.Resync(); rerr != nil {
				done = true
			}
			return frameItem{err: err}, nil
		}
		if err != nil {
			return frameItem{}, err
		}
		return frameItem{f: f}, nil
	}
	fn := func(_ context.Context, it frameItem) (frameItem, error) {
		if it.err != nil || it.f.Kind != bwz.FrameBlock {
			return it, nil
		}
		data, err := decodeBlock(it.f, threads)
		if err != nil {
			err = &bwz.CorruptError{Offset: it.f.Offset, Stream: it.f.Stream, Block: it.f.Block.Index, Err: err}
			if !test {
				return it, err
			}
			it.err = err
			return it, nil
		}
		it.data = data
		it.f.Payload = nil
		return it, nil
	}
	// the stream checks: the sink sees every block in order
	var crc uint32
	var total uint64
	var blocks uint32
	damaged := false // a block of this stream was bad: its checksum cannot be checked
	check := func(it frameItem) error {
		switch {
		case it.err != nil:
			damaged = true
		case it.f.Kind == bwz.FrameHeader:
			crc, total, blocks, damaged = 0, 0, 0, false
		case it.f.Kind == bwz.FrameBlock:
			crc = bwz.UpdateCRC(crc, it.data)
			total += uint64(len(it.data))
			blocks++
		case it.f.Kind == bwz.FrameTrailer && !damaged:
			t := it.f.Trailer
			if t.CRC != crc || t.Total != total {
				err := &bwz.CorruptError{Offset: it.f.Offset, Stream: it.f.Stream, Block: -1,
					Err: fmt.Errorf("%w: the stream's checksum or length does not match its trailer (%d bytes, %d in the trailer)", bwz.ErrCorrupt, total, t.Total)}
				if !test {
					return err
				}
				it.err = err
			}
		}
		return sink(it)
	}
	workers := threads
	if opts.Blocks > 0 {
		workers = min(workers, opts.Blocks)
	}
	frameCost := func(it frameItem) int64 {
		if it.f.Kind != bwz.FrameBlock {
			return 0
		}
		return DecompressBytesPerByte * int64(it.f.Block.Length)
	}
	return stream.OrderedMapBudget(ctx, stream.Options{Workers: workers, Window: workers + 1}, opts.Memory, frameCost, src, fn, check)
}

// decodeBlock decodes and checks one block frame.
func decodeBlock(f bwz.Frame, threads int) ([]byte, error) {
	data, err := decodeData(f, threads)
	if err != nil {
		return nil, err
	}
	if bwz.CRC(data) != f.Block.CRC {
		return nil, fmt.Errorf("%w: data checksum mismatch", bwz.ErrCorrupt)
	}
	return data, nil
}

// decodeData decodes one block frame: a read set, or a transform.
func decodeData(f bwz.Frame, threads int) ([]byte, error) {
	h := f.Block
	if f.Version >= bwz.ReadsVersion && bwz.IsReadSet(f.Payload) {
		if h.Primary != 1 {
			return nil, fmt.Errorf("%w: a read set's block with primary index %d, not 1", bwz.ErrCorrupt, h.Primary)
		}
		return bwz.DecodeReads(f.Payload, h.Length, threads)
	}
	blk, err := bwz.DecodeBlock(f.Payload, h.Length, bwz.BlockOptions{Threads: threads})
	if err != nil {
		return nil, err
	}
	data := make([]byte, len(blk.BWT))
	if err := cpu.InverseBWTSampled(blk.BWT, h.Primary, blk.Samples, bwz.SampleShift, data, threads); err != nil {
		return nil, fmt.Errorf("%w: %v", bwz.ErrCorrupt, err)
	}
	if blk.LZP != nil {
		return blk.LZP.Decode(data, h.Length, threads)
	}
	return data, nil
}
