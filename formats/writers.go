package formats

import (
	"fmt"
	"io"
	"strings"

	dbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// CompressionOf returns the compression that a file name asks for by its ending: "gzip" (.gz),
// "zstd" (.zst), "xz" (.xz), "bzip2" (.bz2), "bwz" (.bwz, sapipe compress), or "" for none. These
// are the compressions Reader reads.
func CompressionOf(name string) string {
	for _, s := range []struct{ ext, kind string }{{".gz", "gzip"}, {".zst", "zstd"}, {".xz", "xz"}, {".bz2", "bzip2"}, {".bwz", "bwz"}} {
		if strings.HasSuffix(name, s.ext) {
			return s.kind
		}
	}
	return ""
}

// NewCompressor returns a writer that compresses what it is given to w with kind (as named by
// CompressionOf; "" writes it as it is). Close ends the compressed stream but does not close w.
// The output depends only on the input bytes: each kind runs one encoder at default settings, on
// one goroutine but for bwz, whose output does not depend on its threads, so that equal inputs give
// equal files.
func NewCompressor(w io.Writer, kind string) (io.WriteCloser, error) {
	switch kind {
	case "":
		return nopCloser{w}, nil
	case "gzip":
		return gzip.NewWriterLevel(w, gzip.DefaultCompression)
	case "zstd":
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
	case "xz":
		return xz.NewWriter(w)
	case "bzip2":
		return dbzip2.NewWriter(w, nil)
	case "bwz":
		if bwzEncoder == nil {
			return nil, errNoBWZ
		}
		return bwzEncoder(w), nil
	}
	return nil, fmt.Errorf("unknown compression %q", kind)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
