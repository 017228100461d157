package stages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/stream"
)

// BWTOptions configure BWT.
type BWTOptions struct {
	BlockSize int // bytes per block, 1..formats.MaxBWTBlock
	Threads   int // host threads of the backend; sets the default BlocksPerCall
	// BlocksPerCall is how many blocks go to Backend.BWT at once; 0 chooses from Threads and
	// BlockSize (enough blocks to keep the backend busy, at most a few hundred MiB a call).
	BlocksPerCall int
	Progress      *ByteProgress
}

const (
	callTarget = 32 << 20  // bytes a call holds when blocks are small
	callMax    = 256 << 20 // bytes a call holds at most, unless one block is larger
	callBlocks = 1024      // blocks a call holds at most by default
)

func (o *BWTOptions) blocksPerCall() int {
	if o.BlocksPerCall > 0 {
		return o.BlocksPerCall
	}
	k := max(min(callTarget/o.BlockSize, callBlocks), o.Threads, 1)
	return max(1, min(k, callMax/o.BlockSize))
}

// bwtCall is a group of consecutive blocks that goes to the backend in one call.
type bwtCall struct {
	in, out  []byte // backing arrays of the blocks
	lens     []int
	src, dst [][]byte
	primary  []int
	crc      []uint32
	first    int64 // number of the first block, from 1
}

// BWT reads r (the input named name) to its end, cuts it into blocks of opts.BlockSize bytes
// (the last may be shorter), transforms them on b several at a time and writes them to w as a
// BWT stream (package formats). At most three calls' worth of blocks are held at once: one being
// read, one being transformed and one being written; buffers are reused.
func BWT(ctx context.Context, b kernels.Backend, opts BWTOptions, name string, r io.Reader, w io.Writer) error {
	if opts.BlockSize < 1 || opts.BlockSize > formats.MaxBWTBlock {
		return fmt.Errorf("block size %d out of range 1..%d", opts.BlockSize, formats.MaxBWTBlock)
	}
	per := opts.blocksPerCall()
	bw := bufio.NewWriterSize(w, 1<<20)
	fw, err := formats.NewBWTWriter(bw, opts.BlockSize)
	if err != nil {
		return err
	}
	free := make(chan *bwtCall, 4)
	var blocks, done int64
	eof := false
	start := time.Now()

	src := func() (*bwtCall, error) {
		if eof {
			return nil, io.EOF
		}
		var c *bwtCall
		select {
		case c = <-free:
		default:
			c = &bwtCall{}
		}
		c.in, c.lens, c.first = c.in[:0], c.lens[:0], blocks+1
		for len(c.lens) < per && !eof {
			var n int
			var err error
			c.in, n, err = appendBlock(c.in, r, opts.BlockSize)
			if n > 0 {
				c.lens = append(c.lens, n)
				blocks++
			}
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return nil, readError(name, err)
			}
		}
		if len(c.lens) == 0 {
			return nil, io.EOF
		}
		c.src = c.src[:0]
		off := 0
		for _, n := range c.lens {
			c.src = append(c.src, c.in[off:off+n])
			off += n
		}
		return c, nil
	}
	transform := func(_ context.Context, c *bwtCall) (*bwtCall, error) {
		total := 0
		for _, s := range c.src {
			total += len(s)
		}
		if cap(c.out) < total {
			c.out = make([]byte, total)
		}
		c.dst, c.crc, c.primary = c.dst[:0], c.crc[:0], c.primary[:0]
		off := 0
		for _, s := range c.src {
			c.dst = append(c.dst, c.out[off:off+len(s)])
			c.crc = append(c.crc, crc32.Checksum(s, formats.Castagnoli))
			c.primary = append(c.primary, 0)
			off += len(s)
		}
		if err := b.BWT(c.src, c.dst, c.primary); err != nil {
			return nil, fmt.Errorf("%s: BWT of blocks %d..%d on %s: %w", name, c.first, c.first+int64(len(c.src))-1, b.Name(), err)
		}
		return c, nil
	}
	sink := func(c *bwtCall) error {
		for i, d := range c.dst {
			if err := fw.WriteBlock(d, c.primary[i], c.crc[i]); err != nil {
				return err
			}
			done += int64(len(d))
		}
		opts.Progress.Update(done, time.Since(start))
		select {
		case free <- c:
		default:
		}
		return nil
	}
	// One call at a time: the backend spreads a call over its threads (or its GPU) itself.
	if err := stream.OrderedMap(ctx, stream.Options{Workers: 1, Window: 1}, src, transform, sink); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	opts.Progress.Done(done, time.Since(start))
	return bw.Flush()
}

// appendBlock appends up to size bytes of r to buf, growing buf as the bytes arrive rather than
// by size at once, so that a large block size costs memory only for input that is there. It
// returns io.EOF when r ends first.
func appendBlock(buf []byte, r io.Reader, size int) ([]byte, int, error) {
	end := len(buf) + size
	n := 0
	for len(buf) < end {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(end-len(buf), max(len(buf), 64<<10)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), end)])
		buf = buf[:len(buf)+m]
		n += m
		if err != nil {
			return buf, n, err
		}
	}
	return buf, n, nil
}

// UnBWTOptions configure UnBWT.
type UnBWTOptions struct {
	Threads  int // blocks inverted at once
	Progress *ByteProgress
}

// unbwtBudget bounds the bytes of blocks in flight in UnBWT (each needs about 6 bytes per byte
// while it is inverted), unless a single block is larger.
const unbwtBudget = 256 << 20

// UnBWT reads the BWT stream r (the input named name), inverts its blocks on opts.Threads
// goroutines, checks each against its CRC and writes the original data to w in order. Any damage
// is an error naming the input and the block.
func UnBWT(ctx context.Context, opts UnBWTOptions, name string, r io.Reader, w io.Writer) error {
	fr := formats.NewBWTReader(name, r)
	first, err := fr.Next() // reads the header, so the block size is known
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	threads := max(opts.Threads, 1)
	window := max(1, min(2*threads, unbwtBudget/fr.BlockSize()))
	bw := bufio.NewWriterSize(w, 1<<20)
	var done int64
	start := time.Now()
	var pool sync.Pool // []byte output buffers of the stream's block size

	src := func() (*formats.BWTBlock, error) {
		if first != nil {
			b := first
			first = nil
			return b, nil
		}
		return fr.Next()
	}
	invert := func(_ context.Context, b *formats.BWTBlock) ([]byte, error) {
		out, _ := pool.Get().([]byte)
		if cap(out) < len(b.Data) {
			out = make([]byte, len(b.Data))
		}
		out = out[:len(b.Data)]
		if err := cpu.InverseBWT(b.Data, b.Primary, out); err != nil {
			return nil, fr.BlockError(b, fmt.Errorf("%w: %w", formats.ErrDamaged, err))
		}
		if crc32.Checksum(out, formats.Castagnoli) != b.CRC {
			return nil, fr.BlockError(b, fmt.Errorf("%w: CRC mismatch: the block does not restore to the data it was made from", formats.ErrDamaged))
		}
		return out, nil
	}
	sink := func(out []byte) error {
		if _, err := bw.Write(out); err != nil {
			return err
		}
		done += int64(len(out))
		pool.Put(out[:0])
		opts.Progress.Update(done, time.Since(start))
		return nil
	}
	if err := stream.OrderedMap(ctx, stream.Options{Workers: threads, Window: window}, src, invert, sink); err != nil {
		return err
	}
	opts.Progress.Done(done, time.Since(start))
	return bw.Flush()
}

// ByteProgress prints a one-line byte counter with rate to a terminal. A nil *ByteProgress
// prints nothing.
type ByteProgress struct {
	W     io.Writer
	Label string
	mu    sync.Mutex
	last  time.Time
	shown bool
}

// Update redraws the counter at most a few times a second.
func (p *ByteProgress) Update(bytes int64, elapsed time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 250*time.Millisecond {
		p.last = now
		p.draw(bytes, elapsed)
	}
}

// Done draws the final counter and ends the line, if a counter was drawn.
func (p *ByteProgress) Done(bytes int64, elapsed time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		p.draw(bytes, elapsed)
		fmt.Fprintln(p.W)
	}
}

func (p *ByteProgress) draw(bytes int64, elapsed time.Duration) {
	p.shown = true
	rate := float64(bytes) / max(elapsed.Seconds(), 1e-9) / 1e6
	fmt.Fprintf(p.W, "\r%s: %.1f MB, %.1f MB/s ", p.Label, float64(bytes)/1e6, rate)
}
