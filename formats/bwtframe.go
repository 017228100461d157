package formats

// The framed BWT stream of `sapipe bwt` and `sapipe unbwt`: the input cut into blocks, each block
// stored as its Burrows-Wheeler transform (as kernels defines it: the transform of the block
// followed by a virtual sentinel, n bytes for an n-byte block) and its primary index.
//
// Version 1. All integers are little-endian; CRC32C is CRC-32 with the Castagnoli polynomial
// (hash/crc32's Castagnoli table, as in iSCSI, ext4 and Btrfs).
//
//	stream  = header block* trailer            (then the end of the input)
//	header  = 16 bytes:
//	    0  6  magic "SAPBWT"
//	    6  1  version, 1
//	    7  1  flags, 0 (a reader rejects any other value)
//	    8  4  block size: the longest block the stream may hold, 1..2^31-1
//	   12  4  CRC32C of header bytes 0..11
//	block   = 16-byte block header, then the n bytes of the transform:
//	    0  4  n, the length of the block, 1..block size (0 marks the trailer instead)
//	    4  4  primary index, 1..n
//	    8  4  CRC32C of the original n bytes of the block (checked after the inverse transform)
//	   12  4  CRC32C of block header bytes 0..11
//	trailer = 28 bytes:
//	    0  4  0
//	    4  8  number of blocks
//	   12  8  total length of the original data (the sum of the blocks' n)
//	   20  4  CRC32C of the blocks' data CRCs, each as 4 little-endian bytes, in block order
//	   24  4  CRC32C of trailer bytes 0..23
//
// Every block but the last holds exactly block size bytes when sapipe writes the stream, but a
// reader accepts any lengths within the limit. An empty input is a header and a trailer.
//
// The header checksums let a reader reject a damaged length before it reads (or allocates) the
// block; the data CRC catches damage in the transform; the trailer catches lost, repeated or
// reordered blocks and a stream cut at a block boundary. Blocks are numbered from 1 in messages.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// BWT stream constants.
const (
	BWTMagic      = "SAPBWT"
	BWTVersion    = 1
	MaxBWTBlock   = 1<<31 - 1 // the longest block: suffix arrays index blocks with int32
	bwtHeaderLen  = 16
	bwtBlockHdr   = 16
	bwtTrailerLen = 28
)

// Castagnoli is the CRC32C table of the BWT stream.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrNotBWTStream reports input that does not start with a BWT stream header.
var ErrNotBWTStream = errors.New("not a sapipe BWT stream")

// ErrDamaged reports a stream whose checksums, lengths or counts do not agree.
var ErrDamaged = errors.New("damaged BWT stream")

// FrameError is an error in a BWT stream: where it happened and what went wrong.
type FrameError struct {
	Name   string // the input, for messages
	Where  string // "header", "block N" or "trailer"
	Offset int64  // byte offset in the stream of the header, block or trailer
	Err    error
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("%s: %s (at byte %d): %v", e.Name, e.Where, e.Offset, e.Err)
}

func (e *FrameError) Unwrap() error { return e.Err }

// BWTBlock is one block of a BWT stream.
type BWTBlock struct {
	Number  int64  // 1 for the first block
	Offset  int64  // byte offset of the block header in the stream
	Data    []byte // the transform
	Primary int    // the primary index, 1..len(Data)
	CRC     uint32 // CRC32C of the original block
}

// BWTWriter writes a BWT stream. Write the blocks in order, then Close to write the trailer.
type BWTWriter struct {
	w         io.Writer
	blockSize int
	blocks    int64
	total     int64
	crcs      uint32 // running CRC32C of the block CRCs
	buf       [bwtTrailerLen]byte
	err       error
}

// NewBWTWriter writes the stream header to w for blocks of at most blockSize bytes.
func NewBWTWriter(w io.Writer, blockSize int) (*BWTWriter, error) {
	if blockSize < 1 || blockSize > MaxBWTBlock {
		return nil, fmt.Errorf("BWT block size %d out of range 1..%d", blockSize, MaxBWTBlock)
	}
	bw := &BWTWriter{w: w, blockSize: blockSize}
	h := bw.buf[:bwtHeaderLen]
	copy(h, BWTMagic)
	h[6], h[7] = BWTVersion, 0
	binary.LittleEndian.PutUint32(h[8:], uint32(blockSize))
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], Castagnoli))
	_, bw.err = w.Write(h)
	return bw, bw.err
}

// WriteBlock writes one block: its transform, primary index and the CRC32C of the original data.
func (bw *BWTWriter) WriteBlock(bwt []byte, primary int, crc uint32) error {
	if bw.err != nil {
		return bw.err
	}
	n := len(bwt)
	if n < 1 || n > bw.blockSize || primary < 1 || primary > n {
		return fmt.Errorf("BWT block %d: length %d and primary %d out of range (block size %d)", bw.blocks+1, n, primary, bw.blockSize)
	}
	h := bw.buf[:bwtBlockHdr]
	binary.LittleEndian.PutUint32(h[0:], uint32(n))
	binary.LittleEndian.PutUint32(h[4:], uint32(primary))
	binary.LittleEndian.PutUint32(h[8:], crc)
	binary.LittleEndian.PutUint32(h[12:], crc32.Checksum(h[:12], Castagnoli))
	bw.crcs = crc32.Update(bw.crcs, Castagnoli, h[8:12])
	if _, bw.err = bw.w.Write(h); bw.err != nil {
		return bw.err
	}
	if _, bw.err = bw.w.Write(bwt); bw.err != nil {
		return bw.err
	}
	bw.blocks++
	bw.total += int64(n)
	return nil
}

// Close writes the trailer. It does not close the underlying writer.
func (bw *BWTWriter) Close() error {
	if bw.err != nil {
		return bw.err
	}
	t := bw.buf[:bwtTrailerLen]
	binary.LittleEndian.PutUint32(t[0:], 0)
	binary.LittleEndian.PutUint64(t[4:], uint64(bw.blocks))
	binary.LittleEndian.PutUint64(t[12:], uint64(bw.total))
	binary.LittleEndian.PutUint32(t[20:], bw.crcs)
	binary.LittleEndian.PutUint32(t[24:], crc32.Checksum(t[:24], Castagnoli))
	_, bw.err = bw.w.Write(t)
	if bw.err == nil {
		bw.err = errors.New("BWT stream already closed")
		return nil
	}
	return bw.err
}

// BWTReader reads the blocks of a BWT stream, checking its structure: the header, every block
// header's checksum and limits, and the trailer. It does not invert the transforms, so it cannot
// check the data CRCs; the caller does, after the inverse transform.
type BWTReader struct {
	name      string
	r         *bufio.Reader
	off       int64
	blockSize int // 0 until the header is read
	blocks    int64
	total     int64
	crcs      uint32
	err       error // sticky
	buf       [bwtTrailerLen]byte
}

// NewBWTReader returns a reader of the BWT stream in r; name ("-" meaning stdin) is used in
// messages.
func NewBWTReader(name string, r io.Reader) *BWTReader {
	if name == "-" {
		name = "stdin"
	}
	return &BWTReader{name: name, r: bufio.NewReaderSize(r, 64<<10)}
}

// Name returns the input's name as messages give it.
func (br *BWTReader) Name() string { return br.name }

// BlockSize returns the stream's block size once the header has been read (by Next), else 0.
func (br *BWTReader) BlockSize() int { return br.blockSize }

// BlockError returns err as an error about block b of the stream.
func (br *BWTReader) BlockError(b *BWTBlock, err error) error {
	return &FrameError{Name: br.name, Where: fmt.Sprintf("block %d", b.Number), Offset: b.Offset, Err: err}
}

// Next returns the next block. After the last block it checks the trailer and the end of the
// input and returns io.EOF. Any other error is a *FrameError, and every later call returns it too.
func (br *BWTReader) Next() (*BWTBlock, error) {
	if br.err != nil {
		return nil, br.err
	}
	b, err := br.next()
	if err != nil {
		br.err = err
	}
	return b, err
}

func (br *BWTReader) fail(where string, off int64, format string, args ...any) error {
	return &FrameError{Name: br.name, Where: where, Offset: off, Err: fmt.Errorf(format, args...)}
}

// read fills p, turning an early end of the input into ErrDamaged ("truncated").
func (br *BWTReader) read(p []byte, where string, off int64) error {
	n, err := io.ReadFull(br.r, p)
	br.off += int64(n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return br.fail(where, off, "%w: truncated (the input ends after %d bytes)", ErrDamaged, br.off)
	}
	return br.fail(where, off, "reading: %w", unwrapPath(err))
}

// unwrapPath drops the path of an *os.PathError: messages name the input once, up front.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (br *BWTReader) next() (*BWTBlock, error) {
	if br.blockSize == 0 {
		if err := br.readHeader(); err != nil {
			return nil, err
		}
	}
	off := br.off
	where := fmt.Sprintf("block %d", br.blocks+1)
	h := br.buf[:bwtBlockHdr]
	if err := br.read(h[:4], where, off); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[0:])
	if n == 0 {
		return nil, br.readTrailer(off)
	}
	if err := br.read(h[4:], where, off); err != nil {
		return nil, err
	}
	if crc32.Checksum(h[:12], Castagnoli) != binary.LittleEndian.Uint32(h[12:]) {
		return nil, br.fail(where, off, "%w: block header checksum mismatch", ErrDamaged)
	}
	primary := binary.LittleEndian.Uint32(h[4:])
	if int64(n) > int64(br.blockSize) {
		return nil, br.fail(where, off, "%w: block length %d over the stream's block size %d", ErrDamaged, n, br.blockSize)
	}
	if primary < 1 || primary > n {
		return nil, br.fail(where, off, "%w: primary index %d out of range 1..%d", ErrDamaged, primary, n)
	}
	b := &BWTBlock{Number: br.blocks + 1, Offset: off, Primary: int(primary), CRC: binary.LittleEndian.Uint32(h[8:])}
	var err error
	if b.Data, err = br.readData(int(n), where, off); err != nil {
		return nil, err
	}
	br.blocks++
	br.total += int64(n)
	br.crcs = crc32.Update(br.crcs, Castagnoli, h[8:12])
	return b, nil
}

// readData reads an n-byte block body. A large block grows its buffer as the bytes arrive, so
// that a damaged or foreign stream that claims a huge block and then ends allocates little.
func (br *BWTReader) readData(n int, where string, off int64) ([]byte, error) {
	const first = 1 << 20
	buf := make([]byte, min(n, first))
	if err := br.read(buf, where, off); err != nil {
		return nil, err
	}
	for len(buf) < n {
		grown := make([]byte, min(n, 2*len(buf)))
		copy(grown, buf)
		if err := br.read(grown[len(buf):], where, off); err != nil {
			return nil, err
		}
		buf = grown
	}
	return buf, nil
}

func (br *BWTReader) readHeader() error {
	h := br.buf[:bwtHeaderLen]
	n, err := io.ReadFull(br.r, h)
	br.off += int64(n)
	short := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case err != nil && !short:
		return br.fail("header", 0, "reading: %w", unwrapPath(err))
	case n == 0:
		return br.fail("header", 0, "%w (empty input)", ErrNotBWTStream)
	case n < len(BWTMagic) || string(h[:len(BWTMagic)]) != BWTMagic:
		return br.fail("header", 0, "%w (no %q at the start)", ErrNotBWTStream, BWTMagic)
	case short:
		return br.fail("header", 0, "%w: truncated (the input ends after %d bytes)", ErrDamaged, n)
	case h[6] != BWTVersion:
		return br.fail("header", 0, "unsupported BWT stream version %d (this sapipe reads version %d)", h[6], BWTVersion)
	case crc32.Checksum(h[:12], Castagnoli) != binary.LittleEndian.Uint32(h[12:]):
		return br.fail("header", 0, "%w: header checksum mismatch", ErrDamaged)
	case h[7] != 0:
		return br.fail("header", 0, "unsupported flags %#02x", h[7])
	}
	bs := binary.LittleEndian.Uint32(h[8:])
	if bs < 1 || bs > MaxBWTBlock {
		return br.fail("header", 0, "%w: block size %d out of range 1..%d", ErrDamaged, bs, MaxBWTBlock)
	}
	br.blockSize = int(bs)
	return nil
}

func (br *BWTReader) readTrailer(off int64) error {
	t := br.buf[:bwtTrailerLen]
	if err := br.read(t[4:], "trailer", off); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(t[0:], 0)
	if crc32.Checksum(t[:24], Castagnoli) != binary.LittleEndian.Uint32(t[24:]) {
		return br.fail("trailer", off, "%w: trailer checksum mismatch", ErrDamaged)
	}
	blocks, total := binary.LittleEndian.Uint64(t[4:]), binary.LittleEndian.Uint64(t[12:])
	switch {
	case blocks != uint64(br.blocks):
		return br.fail("trailer", off, "%w: the trailer counts %d blocks, the stream holds %d", ErrDamaged, blocks, br.blocks)
	case total != uint64(br.total):
		return br.fail("trailer", off, "%w: the trailer counts %d bytes, the blocks hold %d", ErrDamaged, total, br.total)
	case binary.LittleEndian.Uint32(t[20:]) != br.crcs:
		return br.fail("trailer", off, "%w: the blocks are not those the stream was written with (lost, repeated or reordered)", ErrDamaged)
	}
	var one [1]byte
	switch n, err := io.ReadFull(br.r, one[:]); {
	case n > 0:
		return br.fail("trailer", off, "%w: data after the trailer", ErrDamaged)
	case !errors.Is(err, io.EOF):
		return br.fail("trailer", off, "reading: %w", unwrapPath(err))
	}
	return io.EOF
}
