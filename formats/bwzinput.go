package formats

import (
	"errors"
	"io"
)

// .bwz streams (sapipe compress) are read and written like the other compressions, but undoing
// one takes the block pipeline of package stages (the inverse transform is a kernel), and stages
// imports this package. So stages hands its pipeline in here (RegisterBWZ) when it is linked in,
// as image formats register with package image; a program without it is told so at the first
// read or write.

var (
	bwzDecoder func(io.Reader) io.ReadCloser
	bwzEncoder func(io.Writer) io.WriteCloser
)

// RegisterBWZ sets how the readers of this package undo a .bwz stream (open returns its decoded
// bytes; closing it stops the decoding) and how NewCompressor writes one (create returns a writer
// whose Close ends the stream, without closing w).
func RegisterBWZ(open func(io.Reader) io.ReadCloser, create func(io.Writer) io.WriteCloser) {
	bwzDecoder, bwzEncoder = open, create
}

var errNoBWZ = errors.New("bwz: not supported by this program")

// openBWZ returns the decoded bytes of the .bwz stream r.
func openBWZ(r io.Reader) (io.ReadCloser, error) {
	if bwzDecoder == nil {
		return nil, errNoBWZ
	}
	return bwzDecoder(r), nil
}
