package bwz

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Frames of a .bwz stream; the layout is documented in doc.go.

const (
	// Version is the container version this package writes for streams of transforms; it reads
	// MinVersion to ReadsVersion.
	Version = 4
	// ReadsVersion is the version of streams whose blocks may be read sets (read-set payloads,
	// reads.go) as well as transforms. A stream of other data is written as version 4, byte for
	// byte as before; readers of version 4 refuse version 5 at its header.
	ReadsVersion = 5
	// MinVersion is the oldest container version this package reads (versions 3 and 4 changed
	// only what is inside payloads, and what a version-4 payload's length may be).
	MinVersion = 2
	// MaxBlockSize is the largest block a stream may declare.
	MaxBlockSize = 1 << 30

	headerLen  = 16
	blockLen   = 32
	trailerLen = 24
)

var (
	magic      = [4]byte{0xB7, 'B', 'W', 'Z'}
	blockTag   = [4]byte{0xB7, 'b', 'l', 'k'}
	trailerTag = [4]byte{0xB7, 'e', 'n', 'd'}
)

// IsStream reports whether head, the first bytes of an input, starts as a .bwz stream does (its
// magic), so that readers of other formats can tell a .bwz input from theirs.
func IsStream(head []byte) bool { return len(head) >= len(magic) && [4]byte(head[:4]) == magic }

// castagnoli is the CRC32C table: every checksum of the format is a CRC32C.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC returns the CRC32C of b.
func CRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC extends crc, a CRC32C, with b.
func UpdateCRC(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// ErrCorrupt is wrapped by every error about data that no encoder wrote: damage, truncation, or a
// file that is not a .bwz stream.
var ErrCorrupt = errCorrupt

// CorruptError says where a stream is damaged: the byte offset of the frame in the input (counted
// from the start of the input, across concatenated streams) and, for blocks, the block number
// within its stream (-1 when the damage is not in a block).
type CorruptError struct {
	Offset int64
	Stream int // 0-based number of the stream in a concatenation
	Block  int
	Err    error
}

func (e *CorruptError) Error() string {
	where := fmt.Sprintf("at byte %d", e.Offset)
	if e.Block >= 0 {
		where = fmt.Sprintf("block %d (byte %d)", e.Block, e.Offset)
		if e.Stream > 0 {
			where = fmt.Sprintf("stream %d block %d (byte %d)", e.Stream, e.Block, e.Offset)
		}
	}
	return where + ": " + e.Err.Error()
}

func (e *CorruptError) Unwrap() error { return e.Err }

// BlockHeader is what a block frame says about its block.
type BlockHeader struct {
	Index   int    // the block's number in its stream, from 0
	Length  int    // original bytes, 1..the stream's block size
	Primary int    // primary index of the block's transform, 1..Length
	CRC     uint32 // CRC32C of the original bytes
	Payload int    // length of the coded payload that follows the header
	// PayloadCRC is the CRC32C of the payload. AppendBlock sets it; AppendBlockHeader writes it
	// as given.
	PayloadCRC uint32
}

// Trailer ends a stream.
type Trailer struct {
	Blocks uint32 // number of blocks
	Total  uint64 // original bytes in all blocks
	CRC    uint32 // CRC32C of all the original bytes
}

// AppendHeader appends a stream header for blocks of at most blockSize bytes.
func AppendHeader(dst []byte, blockSize int) []byte {
	return appendHeaderVersion(dst, blockSize, Version)
}

// AppendReadsHeader appends the header of a stream whose blocks may be read sets (version 5).
func AppendReadsHeader(dst []byte, blockSize int) []byte {
	return appendHeaderVersion(dst, blockSize, ReadsVersion)
}

// appendHeaderVersion appends a stream header of the given version.
func appendHeaderVersion(dst []byte, blockSize int, version byte) []byte {
	start := len(dst)
	dst = append(dst, magic[:]...)
	dst = append(dst, version, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(blockSize))
	return binary.LittleEndian.AppendUint32(dst, CRC(dst[start:]))
}

// AppendBlockHeader appends the header of a block frame whose payload, h.Payload bytes long,
// follows it.
func AppendBlockHeader(dst []byte, h BlockHeader) []byte {
	start := len(dst)
	dst = append(dst, blockTag[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Index))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Length))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Primary))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Payload))
	dst = binary.LittleEndian.AppendUint32(dst, h.PayloadCRC)
	dst = binary.LittleEndian.AppendUint32(dst, h.CRC)
	return binary.LittleEndian.AppendUint32(dst, CRC(dst[start:]))
}

// AppendBlock appends a block frame: its header (with h.Payload and h.PayloadCRC set from
// payload), then payload.
func AppendBlock(dst []byte, h BlockHeader, payload []byte) []byte {
	h.Payload, h.PayloadCRC = len(payload), CRC(payload)
	return append(AppendBlockHeader(dst, h), payload...)
}

// AppendTrailer appends the trailer that ends a stream.
func AppendTrailer(dst []byte, t Trailer) []byte {
	start := len(dst)
	dst = append(dst, trailerTag[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, t.Blocks)
	dst = binary.LittleEndian.AppendUint64(dst, t.Total)
	dst = binary.LittleEndian.AppendUint32(dst, t.CRC)
	return binary.LittleEndian.AppendUint32(dst, CRC(dst[start:]))
}

// MinPayload is the shortest payload a block of n bytes can have in a stream of the given
// version: its fixed fields and, before version 4, the sampled rows of its n bytes. Checking it
// before anything is allocated bounds what a lying header can make a reader allocate to 16384
// bytes of block per byte of payload. A version-4 block's transform may be of a much shorter text
// (its LZP text), whose length the payload gives; DecodeBlock bounds that by the payload's sampled
// rows in the same way, and the block's bytes are then allocated as they are decoded.
func MinPayload(n, version int) int {
	if version >= 4 {
		return 4
	}
	return 4 + 4*NumSamples(n, SampleShift)
}

// MaxPayload is the longest payload a block of n bytes can have: coding never expands a segment
// (it is stored instead), so the payload is the block plus its tables.
func MaxPayload(n int) int { return n + n>>8 + 1024 }

// FrameKind tells the frames of a stream apart.
type FrameKind int

const (
	FrameHeader  FrameKind = iota // a stream header
	FrameBlock                    // a block: header and payload
	FrameTrailer                  // the end of a stream
)

// Frame is one frame read by a Reader.
type Frame struct {
	Kind      FrameKind
	Offset    int64 // where the frame starts in the input
	Stream    int   // number of the stream in a concatenation, from 0
	BlockSize int   // the stream's block size (every kind)
	Version   int   // the stream's format version (every kind)
	Block     BlockHeader
	Payload   []byte // FrameBlock: the coded payload (owned by the caller)
	Trailer   Trailer
}

// Reader reads the frames of one or more concatenated streams. It checks each frame's header
// (magic, checksum, ranges, block order) but not payloads, which DecodeBlock checks, nor the
// trailer against the data, which needs the decoded bytes.
type Reader struct {
	r         *bufio.Reader
	off       int64
	stream    int
	inStream  bool
	blockSize int
	version   int
	nextBlock int
	started   bool
}

// NewReader returns a Reader of the frames in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16), stream: -1}
}

// Offset is the number of input bytes consumed so far.
func (fr *Reader) Offset() int64 { return fr.off }

func (fr *Reader) corrupt(off int64, block int, format string, args ...any) error {
	return &CorruptError{Offset: off, Stream: max(fr.stream, 0), Block: block, Err: corruptf(format, args...)}
}

// Next returns the next frame. At the end of the input it returns io.EOF, which is only possible
// after a trailer (or on empty input, where it returns an error: an empty file is no stream).
func (fr *Reader) Next() (Frame, error) {
	if !fr.inStream {
		return fr.readHeader()
	}
	off := fr.off
	var tag [4]byte
	if err := fr.readFull(tag[:]); err != nil {
		return Frame{}, fr.truncated(off, fr.nextBlock, err)
	}
	switch tag {
	case blockTag:
		return fr.readBlock(off, tag)
	case trailerTag:
		return fr.readTrailer(off, tag)
	}
	return Frame{}, fr.corrupt(off, fr.nextBlock, "no block or trailer here (damaged block header?)")
}

func (fr *Reader) readFull(b []byte) error {
	n, err := io.ReadFull(fr.r, b)
	fr.off += int64(n)
	return err
}

// truncated turns a short read into a CorruptError; other read errors pass through.
func (fr *Reader) truncated(off int64, block int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fr.corrupt(off, block, "the input ends early (truncated?)")
	}
	return err
}

func (fr *Reader) readHeader() (Frame, error) {
	off := fr.off
	var h [headerLen]byte
	n, err := io.ReadFull(fr.r, h[:])
	fr.off += int64(n)
	if n == 0 && errors.Is(err, io.EOF) {
		if !fr.started {
			return Frame{}, fr.corrupt(off, -1, "empty input, not a .bwz stream")
		}
		return Frame{}, io.EOF
	}
	fr.stream++
	if n >= 4 && [4]byte(h[:4]) != magic || n < 4 && string(h[:n]) != string(magic[:n]) {
		if fr.started {
			return Frame{}, fr.corrupt(off, -1, "data after the end of stream %d is not another stream (bad magic)", fr.stream-1)
		}
		return Frame{}, fr.corrupt(off, -1, "not a .bwz stream (bad magic)")
	}
	if err != nil {
		return Frame{}, fr.truncated(off, -1, err)
	}
	if got, want := binary.LittleEndian.Uint32(h[12:]), CRC(h[:12]); got != want {
		return Frame{}, fr.corrupt(off, -1, "stream header checksum mismatch")
	}
	if h[4] < MinVersion || h[4] > ReadsVersion {
		return Frame{}, fr.corrupt(off, -1, "format version %d (this program reads versions %d to %d)", h[4], MinVersion, ReadsVersion)
	}
	if h[5] != 0 || h[6] != 0 || h[7] != 0 {
		return Frame{}, fr.corrupt(off, -1, "unknown flags %#x in the stream header", h[5:8])
	}
	bs := int(binary.LittleEndian.Uint32(h[8:]))
	if bs < 1 || bs > MaxBlockSize {
		return Frame{}, fr.corrupt(off, -1, "block size %d out of range 1..%d", bs, MaxBlockSize)
	}
	fr.started, fr.inStream = true, true
	fr.blockSize, fr.nextBlock, fr.version = bs, 0, int(h[4])
	return Frame{Kind: FrameHeader, Offset: off, Stream: fr.stream, BlockSize: bs, Version: fr.version}, nil
}

// parseBlockHeader checks a block header; b holds its blockLen bytes.
func (fr *Reader) parseBlockHeader(off int64, b []byte) (BlockHeader, error) {
	if got, want := binary.LittleEndian.Uint32(b[28:]), CRC(b[:28]); got != want {
		return BlockHeader{}, fr.corrupt(off, fr.nextBlock, "block header checksum mismatch")
	}
	h := BlockHeader{
		Index:      int(binary.LittleEndian.Uint32(b[4:])),
		Length:     int(binary.LittleEndian.Uint32(b[8:])),
		Primary:    int(binary.LittleEndian.Uint32(b[12:])),
		Payload:    int(binary.LittleEndian.Uint32(b[16:])),
		PayloadCRC: binary.LittleEndian.Uint32(b[20:]),
		CRC:        binary.LittleEndian.Uint32(b[24:]),
	}
	switch {
	case h.Index != fr.nextBlock:
		return h, fr.corrupt(off, fr.nextBlock, "found block %d where block %d belongs (a block is missing?)", h.Index, fr.nextBlock)
	case h.Length < 1 || h.Length > fr.blockSize:
		return h, fr.corrupt(off, h.Index, "block length %d out of range 1..%d", h.Length, fr.blockSize)
	case h.Primary < 1 || h.Primary > h.Length:
		return h, fr.corrupt(off, h.Index, "primary index %d out of range 1..%d", h.Primary, h.Length)
	case h.Payload > MaxPayload(h.Length):
		return h, fr.corrupt(off, h.Index, "payload of %d bytes is too long for a block of %d bytes", h.Payload, h.Length)
	case h.Payload < MinPayload(h.Length, fr.version):
		return h, fr.corrupt(off, h.Index, "payload of %d bytes is too short for a block of %d bytes", h.Payload, h.Length)
	}
	return h, nil
}

func (fr *Reader) readBlock(off int64, tag [4]byte) (Frame, error) {
	var b [blockLen]byte
	copy(b[:], tag[:])
	if err := fr.readFull(b[4:]); err != nil {
		return Frame{}, fr.truncated(off, fr.nextBlock, err)
	}
	h, err := fr.parseBlockHeader(off, b[:])
	if err != nil {
		return Frame{}, err
	}
	payload, err := fr.readPayload(h.Payload)
	if err != nil {
		return Frame{}, fr.truncated(off, h.Index, err)
	}
	fr.nextBlock++
	if CRC(payload) != h.PayloadCRC {
		return Frame{}, fr.corrupt(off, h.Index, "payload checksum mismatch")
	}
	return Frame{Kind: FrameBlock, Offset: off, Stream: fr.stream, BlockSize: fr.blockSize, Version: fr.version, Block: h, Payload: payload}, nil
}

// readPayload reads n bytes, growing its buffer as the bytes arrive rather than trusting n, so a
// truncated stream costs no more memory than it holds.
func (fr *Reader) readPayload(n int) ([]byte, error) {
	const chunk = 4 << 20
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		k := min(n-len(buf), max(len(buf), chunk))
		if cap(buf)-len(buf) < k {
			nb := make([]byte, len(buf), len(buf)+k)
			copy(nb, buf)
			buf = nb
		}
		if err := fr.readFull(buf[len(buf) : len(buf)+k]); err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+k]
	}
	return buf, nil
}

func (fr *Reader) readTrailer(off int64, tag [4]byte) (Frame, error) {
	var b [trailerLen]byte
	copy(b[:], tag[:])
	if err := fr.readFull(b[4:]); err != nil {
		return Frame{}, fr.truncated(off, -1, err)
	}
	if got, want := binary.LittleEndian.Uint32(b[20:]), CRC(b[:20]); got != want {
		return Frame{}, fr.corrupt(off, -1, "trailer checksum mismatch")
	}
	t := Trailer{
		Blocks: binary.LittleEndian.Uint32(b[4:]),
		Total:  binary.LittleEndian.Uint64(b[8:]),
		CRC:    binary.LittleEndian.Uint32(b[16:]),
	}
	if int(t.Blocks) != fr.nextBlock {
		return Frame{}, fr.corrupt(off, -1, "the trailer counts %d blocks, the stream has %d (blocks missing?)", t.Blocks, fr.nextBlock)
	}
	fr.inStream = false
	return Frame{Kind: FrameTrailer, Offset: off, Stream: fr.stream, BlockSize: fr.blockSize, Version: fr.version, Trailer: t}, nil
}

// Resync skips damaged input after an error from Next, to the next block or trailer of the current
// stream whose header checks out, and returns the number of bytes skipped. The frame it finds is
// returned by the following Next. Blocks skipped over are counted: their numbers go on from the
// block found. Resync returns io.EOF when the input ends first.
func (fr *Reader) Resync() (int64, error) {
	if !fr.inStream {
		return 0, io.EOF
	}
	var skipped int64
	for {
		peek, _ := fr.r.Peek(blockLen)
		if len(peek) < trailerLen {
			n, _ := fr.r.Discard(len(peek))
			fr.off += int64(n)
			return skipped + int64(n), io.EOF
		}
		switch [4]byte(peek[:4]) {
		case blockTag:
			if len(peek) >= blockLen && binary.LittleEndian.Uint32(peek[28:]) == CRC(peek[:28]) {
				if idx := int(binary.LittleEndian.Uint32(peek[4:])); idx >= fr.nextBlock {
					fr.nextBlock = idx
					return skipped, nil
				}
			}
		case trailerTag:
			if binary.LittleEndian.Uint32(peek[20:]) == CRC(peek[:20]) {
				fr.nextBlock = int(binary.LittleEndian.Uint32(peek[4:]))
				return skipped, nil
			}
		}
		fr.r.Discard(1)
		fr.off++
		skipped++
	}
}
