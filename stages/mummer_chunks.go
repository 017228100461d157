package stages

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/stream"
)

// chunkSource cuts the query files into chunks of whole records for sapipe mummer: a plain file
// into blocks (formats.BlockFile), which the workers read and cut themselves, any other input
// (stdin, a pipe, compressed) on its goroutine (formats.ChunkReader). The workers parse
// (formats.ParseChunk), encode, match and format. A chunk that ParseChunk refuses stops the
// pipeline once everything before it is written; run then returns where a formats.Reader is to
// read on.
type chunkSource struct {
	paths []string
	stdin io.Reader
	size  int          // bytes a chunk aims at
	long  int          // a record longer than this is cut into pieces across batches: Reader's
	qs    *QuerySource // for addRecord

	// The reading side.
	file    int
	cr      *formats.ChunkReader
	blocks  blockFeed // or the file is read in blocks
	stopped bool      // an Odd chunk has been handed out: nothing more to read here
	// free holds written batches for reuse, with their buffers (chunk, codes, segments, results,
	// output), as many as can be in flight: a sync.Pool would drop them at every collection,
	// and each batch would fault in and grow fresh buffers again (with the GPU's 25% heap
	// growth, many times a second).
	free stream.Spares[*QueryBatch]

	chunkLedger

	// The writing side.
	refused   *QueryBatch
	cause     error
	causeOnce sync.Once
}

// resumePoint is where the record-at-a-time reading takes over.
type resumePoint struct {
	file int
	rd   *formats.Reader
	nrec int // records of the file before rd's
}

var errRefused = errors.New("chunk left to the record reader")

// chunksWritten counts the chunks' batches written, in every run of the process: tests see by it
// which files were read in chunks.
var chunksWritten atomic.Int64

func newChunkSource(paths []string, stdin io.Reader, opts MummerOptions, enc *kernels.QueryEncoder, m kernels.Matcher) *chunkSource {
	qs := &QuerySource{strands: opts.Strands, batchSize: max(opts.BatchSize, 1), enc: enc}
	qs.codeMem, _ = m.(kernels.CodeMemory)
	size := opts.ChunkSize
	if size <= 0 {
		size = 2 * qs.batchSize // about a batch's bases of FASTQ
	}
	return &chunkSource{paths: paths, stdin: stdin, size: size, long: qs.batchSize, qs: qs, chunkLedger: chunkLedger{sinkFile: -1}}
}

// get returns a written batch to reuse, or a new one.
func (c *chunkSource) get() *QueryBatch {
	if b, ok := c.free.Get(); ok {
		return b
	}
	return &QueryBatch{whole: true}
}

// close closes the files being read, unless a Reader has taken one over.
func (c *chunkSource) close() {
	if c.cr != nil {
		c.cr.Close()
		c.cr = nil
	}
	c.blocks.closeAll()
}

// run matches the chunks until the end of the files or the first chunk that only a Reader may
// read, with match on the workers and write in order on the sink; write calls done once it no
// longer needs the batch.
func (c *chunkSource) run(ctx context.Context, opts stream.Options, match func(*QueryBatch) error, write func(b *QueryBatch, done func()) error) (*resumePoint, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.free = stream.NewSpares[*QueryBatch](max(opts.Window, opts.Workers) + 2)
	fail := func(err error) error {
		c.causeOnce.Do(func() { c.cause = err })
		cancel() // the source may be waiting on ctx
		return err
	}
	err := stream.OrderedMap(ctx, opts,
		func() (*QueryBatch, error) { return c.next(ctx) },
		func(_ context.Context, b *QueryBatch) (*QueryBatch, error) {
			work := func() error {
				if !c.parse(b) || len(b.Segs) == 0 {
					return nil
				}
				if err := match(b); err != nil {
					return fail(err)
				}
				return nil
			}
			var err error
			if b.blk != nil {
				err = b.cutBlock(&b.chunk, work) // the parser reads the chunk (addRecord copies the names out)
			} else {
				err = work()
			}
			if err != nil {
				return nil, err
			}
			return b, nil
		},
		func(b *QueryBatch) error {
			if b.blk != nil && !c.blocks.follows(&b.blockChunk) {
				b.ok = false // not where the chunk before ended (the file changed): Reader's from there
			}
			if !b.ok {
				c.refused = b
				return fail(errRefused)
			}
			c.written(b)
			if err := write(b, func() { c.free.Put(b) }); err != nil {
				return fail(err)
			}
			return nil
		})
	if c.cause != nil && c.cause != errRefused {
		return nil, c.cause
	}
	if c.refused == nil {
		return nil, err
	}
	// Everything before the refused chunk is written; it and the chunks read after it (all of
	// its file: see next) go to a Reader with the numbers of what came before.
	b := c.refused
	data, nrec, nl := c.resumeFrom(b.file)
	if b.blk != nil {
		rd, err := b.blk.Resume(c.blocks.at(b.blkIdx), nrec)
		if err != nil {
			return nil, err
		}
		return &resumePoint{file: b.file, rd: rd, nrec: nrec}, nil
	}
	rd := b.cr.Resume(data, nrec, nl)
	c.cr = nil
	return &resumePoint{file: b.file, rd: rd, nrec: nrec}, nil
}

// next returns the next chunk as a batch, or io.EOF after the last file.
func (c *chunkSource) next(ctx context.Context) (*QueryBatch, error) {
	if c.stopped {
		<-ctx.Done() // the sink refuses the Odd chunk and stops the pipeline
		return nil, ctx.Err()
	}
	for {
		if c.cr == nil && c.blocks.bf == nil {
			if c.file == len(c.paths) {
				return nil, io.EOF
			}
			if ok, err := c.blocks.openBlocks(c.paths[c.file], c.size); err != nil {
				return nil, err
			} else if ok {
				continue
			}
			cr, err := formats.OpenChunks(c.paths[c.file], c.stdin, c.size)
			if err != nil {
				return nil, err
			}
			c.cr = cr
		}
		if c.blocks.bf != nil {
			bf, i, ok, err := c.blocks.nextBlock(ctx, &c.chunkLedger, c.paths, c.file)
			if err != nil {
				return nil, err
			}
			if !ok {
				c.file++
				continue
			}
			b := c.get()
			b.blk, b.blkIdx, b.cr, b.file = bf, i, nil, c.file
			return b, nil
		}
		b := c.get()
		ch, err := c.cr.Next(b.chunk.Data)
		if errors.Is(err, io.EOF) {
			c.free.Put(b)
			// A file's chunks are all written before the next file is opened: a chunk refused
			// sends the rest of its file, read already or not, to a Reader, and the next file may
			// be a stream that cannot be read twice.
			if err := c.waitDrained(ctx); err != nil {
				return nil, err
			}
			c.cr.Close()
			c.cr = nil
			c.file++
			continue
		}
		if err != nil {
			return nil, err
		}
		b.chunk, b.cr, b.blk, b.file = ch, c.cr, nil, c.file
		c.handOut(b.chunk.Data)
		c.stopped = ch.Odd
		return b, nil
	}
}

// written records that b, the first pending batch, is written (its text is handed to the
// output, which recycles it once copied).
func (c *chunkSource) written(b *QueryBatch) {
	chunksWritten.Add(1)
	c.chunkLedger.written(b.file, int(b.records), b.lines)
	if b.blk != nil {
		c.blocks.written(&b.blockChunk, &b.chunk)
	}
	b.cr, b.blk = nil, nil
}

// parse parses b's chunk into segments with their codes, and reports whether ParseChunk accepted
// it (and no record is long).
func (c *chunkSource) parse(b *QueryBatch) bool {
	b.Codes, b.Segs, b.Info, b.codeLen = b.Codes[:0], b.Segs[:0], b.Info[:0], 0
	// The codes are at most the chunk's sequence bytes a strand: grown once, not record by record
	// (0.8 of 33 CPU-s for 30 M reads). A FASTQ chunk's sequences are at most half its bytes
	// (each has its qualities); the bound stays close to the need, since a batch keeps its
	// buffers while it is reused.
	most := len(b.chunk.Data)
	if b.chunk.FASTQ {
		most /= 2
	}
	b.Codes = c.qs.ownCodes(b.Codes, c.qs.strands.count()*most)
	b.Res.Reset()
	b.Out = b.Out[:0]
	var bases int64
	long := false
	piece := c.qs.pieceSize()
	b.names = b.names[:0] // kept, with its room, when the batch is reused
	n, ok := formats.ParseChunk(&b.chunk, &b.scratch, func(name, seq []byte) {
		if len(seq) > c.long {
			long = true
			return
		}
		c.qs.addRecord(b, name, seq, max(min(len(seq), piece), 1), true)
		bases += int64(len(seq))
	})
	b.ok = ok && !long
	if b.ok {
		b.records, b.bases, b.lines = int64(n), bases, 0
		if b.blk == nil { // a block's file counts its own newlines if a Reader takes it over
			b.lines = b.chunk.Newlines()
		}
	}
	return b.ok
}
