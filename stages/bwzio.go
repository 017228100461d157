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

// DefaultBlockSize is the block size of sapipe compress by default (-8), and of the .bwz files
// that package formats' writers make.
const DefaultBlockSize = 128 << 20

// bwzReader is the decoded bytes of a .bwz stream, decoded by Decompress on its own goroutine
// (its blocks on every thread) as they are read.
type bwzReader struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func newBWZReader(r io.Reader) io.ReadCloser {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() {
		_, err := Decompress(ctx, DecompressOptions{Threads: runtime.GOMAXPROCS(0)}, r, pw)
		pw.CloseWithError(err) // a nil err reads as the end of the input
	}()
	return &bwzReader{pr, cancel}
}

// Close stops the decoding (it does not wait for it: it may be blocked reading its input).
func (z *bwzReader) Close() error {
	z.cancel()
	return z.PipeReader.Close()
}

// bwzWriter compresses what is written to it into a .bwz stream, on the CPU and every thread,
// with Compress on its own goroutine.
type bwzWriter struct {
	*io.PipeWriter
	done chan error
}

func newBWZWriter(w io.Writer) io.WriteCloser {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		threads := runtime.GOMAXPROCS(0)
		b := cpu.New(threads)
		defer b.Close()
		_, err := Compress(context.Background(), b, CompressOptions{BlockSize: DefaultBlockSize, Threads: threads}, pr, w)
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
