package stages

import (
	"context"
	"io"
	"runtime"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// The readers of package formats undo .bwz inputs and its writers make .bwz outputs (sapipe
// split's shards named .bwz) with this package's pipelines, which it registers there: `sapipe
// mummer ref.fa reads.fq.bwz` reads what `sapipe compress` wrote, as it reads .gz.
func init() {
	formats.RegisterBWZ(newBWZReader, newBWZWriter)
}

// The .bwz files that package formats' writers make (sapipe split's shards, intermediate files)
// have blocks of sapipe compress -5, 16 MiB (read sets coded as such, as sapipe compress does),
// compressed on one thread, as formats' other compressors are: the caller runs several writers at once if it wants (split writes -t shards at
// once). A writer holds two blocks, about 7 bytes a byte of each while it is compressed: ~230 MB.
// Reading, one block is decoded at a time, on every thread: the records are parsed from the
// previous one meanwhile, and memory holds two or three blocks, of whatever size they are (a
// 128 MiB block, sapipe compress's default, needs about 0.8 GB to decode).
const writeBlockSize = 16 << 20

// bwzReader is the decoded bytes of a .bwz stream, decoded by Decompress on its own goroutine as
// they are read.
type bwzReader struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func newBWZReader(r io.Reader) io.ReadCloser {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		_, err := Decompress(ctx, DecompressOptions{Threads: runtime.GOMAXPROCS(0), Blocks: 1}, r, pw)
		pw.CloseWithError(err) // a nil err reads as the end of the input
	}()
	return &bwzReader{pr, cancel}
}

// Close stops the decoding (it does not wait for it: it may be blocked reading its input).
func (z *bwzReader) Close() error {
	z.cancel()
	return z.PipeReader.Close()
}

// bwzWriter compresses what is written to it into a .bwz stream, on the CPU, with Compress on its
// own goroutine.
type bwzWriter struct {
	*io.PipeWriter
	done chan error
}

func newBWZWriter(w io.Writer) io.WriteCloser {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		b := cpu.New(1)
		defer b.Close()
		_, err := Compress(context.Background(), b, CompressOptions{BlockSize: writeBlockSize, Threads: 1, Reads: true}, pr, w)
		pr.CloseWithError(err) // a writer still writing is told
		done <- err
	}()
	return &bwzWriter{pw, done}
}

// Close ends the input, waits for the stream to be written, and returns its error.
func (z *bwzWriter) Close() error {
	z.PipeWriter.Close()
	return <-z.done
}
