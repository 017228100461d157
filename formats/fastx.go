// FASTA/FASTQ reading with the semantics of MUMmer 3.23.
//
// About github.com/shenwei356/bio: its parser (seqio/fastx) cannot be used here, for two reasons.
// Semantics: it only starts a record at a '>' or '@' at the start of a line, rejects text before
// the first record (ErrNotFASTXFormat) and checks sequences against an alphabet, while MUMmer's
// scanmultiplefastafile starts a record at any '>' outside a header line and adds the text before
// the first '>' to the first record. Build: every bio package (seq, seqio/fastx, seqio/fai, util,
// ...) imports modules that have no go.sum entry in this module (shenwei356/xopen, shenwei356/util,
// elliotwutingfeng/asciiset, cznic/sortutil), so importing any of them breaks the build. So
// nothing of bio is imported: the choice of decompressor by magic bytes follows shenwei356/xopen,
// which bio opens files with (gzip, zstd, bzip2, xz, else plain), with the same decoders
// (klauspost/compress, ulikunitz/xz, compress/bzip2 of the standard library), and the parser is
// our own.
//
// FASTA (MUMmer's scanmultiplefastafile, byte for byte):
//   - a '>' anywhere outside a header line starts a record, not only at the start of a line;
//   - the name is the text after '>' up to the first white space (isspace: space, \t, \n, \v,
//     \f, \r); "> x" has the empty name; the rest of the header line up to '\n' is skipped;
//   - the sequence is every other byte that is not white space, case kept (the caller lowercases);
//   - the non-space bytes before the first '>' belong to the first record's sequence; input
//     without any '>' has no records (Next returns io.EOF at once, and the caller reports
//     "no sequences in multiple fasta file");
//   - records with no sequence are returned with an empty Seq, but a file whose only record is
//     empty is an error ("empty sequence in multiple fasta file"), as in MUMmer.
//
// FASTQ (not read by MUMmer; chosen when the first non-space byte is '@'): a record is a line
// starting with '@' (name as in FASTA), sequence lines up to a line starting with '+', then quality
// lines until as many non-space quality bytes as sequence bytes have been read, so that multi-line
// records work. Blank lines between records are skipped.
package formats

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/sapipe/sapipe/formats/bwz"
)

// Record is one sequence. Name and Seq are the reader's buffers: the next call of Next may
// overwrite them.
type Record struct {
	Name []byte
	Seq  []byte
}

const (
	defaultBufSize = 256 << 10 // bytes read from the (decompressed) input at a time
	peekBufSize    = 64 << 10
)

// Reader reads FASTA or FASTQ records from a plain or compressed stream.
type Reader struct {
	input

	buf      []byte
	pos, end int
	eof      bool  // src is exhausted
	rerr     error // a read error of src, once the bytes read before it are used
	perr     error // a read error that came with bytes still in the buffer
	nl       int   // newlines consumed so far
	lineNo   int   // FASTQ: number of the line readLine returned last
	lb       []byte
	started  bool // the format is known
	fastq    bool
	inHeader bool // FASTA: a '>' has been consumed and its header is next
	done     bool
	err      error // sticky error
	nrec     int   // records returned

	nameBuf, seqBuf []byte
	rec             Record

	// whole is the plain file read directly (src, no buffer between): a long FASTA sequence is
	// read from a mapping of it on every core (scanSeqMapped).
	whole *os.File
}

// Open opens path for reading; "-" is stdin.
func Open(path string) (*Reader, error) {
	if path == "-" {
		return NewReader("-", os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err // "open PATH: no such file or directory"
	}
	r, err := NewReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader returns a reader of the records in rd; name ("-" meaning stdin) is used in messages.
// The format and the compression are told from the first bytes, so rd need not be seekable.
func NewReader(name string, rd io.Reader) (*Reader, error) {
	return newReaderSize(name, rd, defaultBufSize)
}

func newReaderSize(name string, rd io.Reader, size int) (*Reader, error) {
	r := &Reader{buf: make([]byte, max(size, 1))}
	if err := r.open(name, rd, min(max(size/4, 16), peekBufSize)); err != nil {
		return nil, err
	}
	return r, nil
}

// compression names the compression whose magic bytes start head, or "" for none.
func compression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b, 0x08}):
		return "gzip"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return "xz"
	case len(head) >= 10 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.Equal(head[4:10], []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}) || // a block
			bytes.Equal(head[4:10], []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90})): // end of stream
		return "bzip2"
	case bwz.IsStream(head):
		return "bwz"
	}
	return ""
}

// lazy opens its reader on the first Read, so that errors in a compressed header come from Next.
type lazy struct {
	open func() (io.Reader, error)
	r    io.Reader
}

func (l *lazy) Read(p []byte) (int, error) {
	if l.r == nil {
		r, err := l.open()
		if err != nil {
			return 0, err
		}
		l.r = r
	}
	return l.r.Read(p)
}

type zstdCloser struct{ d *zstd.Decoder }

// zstdBlocksInFlight is the decoder's concurrency: how many blocks of a stream are read, have
// their sequences decoded and are executed at once, in a pipeline. Going from 2 to 8 made 10 M
// reads as FASTQ.zst (3.3 GB) decode and match in 2.9-3.0 s instead of 4.7 s on the lent 16-core
// machine, faster than the zstd command decoding them to /dev/null (3.0 s).
func zstdBlocksInFlight() int {
	return min(max(runtime.GOMAXPROCS(0), 2), 8)
}

func (z zstdCloser) Close() error { z.d.Close(); return nil }

// input is what Reader and RawReader share: a named stream whose compression is told from its
// first bytes and undone, and the file and decompressor to close.
type input struct {
	name   string    // for messages; "stdin" for "-"
	file   io.Closer // the file Open opened, closed by Close
	dec    io.Closer // the decompressor, closed by Close
	kind   string    // "gzip", "zstd", "bzip2", "xz", "bwz" or "" for plain
	src    io.Reader // decompressed bytes; a *bufio.Reader when plain
	closed bool
}

// open reads the first bytes of rd (through a buffer of peek bytes) to choose the decompressor.
func (in *input) open(name string, rd io.Reader, peek int) error {
	if name == "-" {
		name = "stdin"
	}
	in.name = name
	br := bufio.NewReaderSize(rd, peek)
	head, err := br.Peek(10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return err
		}
		return fmt.Errorf("%s: %s", name, oneLine(err.Error()))
	}
	in.kind = compression(head)
	switch in.kind {
	case "gzip":
		// Inflated on every core, the goroutines started by the first read.
		in.src = &lazy{open: func() (io.Reader, error) {
			z, err := openGzip(br, stdGzip)
			if err == nil {
				in.dec = z
			}
			return z, err
		}}
	case "zstd":
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(zstdBlocksInFlight()))
		if err != nil {
			return fmt.Errorf("%s: zstd: %s", name, oneLine(err.Error()))
		}
		in.dec = zstdCloser{z}
		in.src = z
	case "bzip2":
		in.src = bzip2.NewReader(br)
	case "xz":
		in.src = &lazy{open: func() (io.Reader, error) { return xz.NewReader(br) }}
	case "bwz":
		z, err := openBWZ(br)
		if err != nil {
			return fmt.Errorf("%s: %s", name, err)
		}
		in.dec = z
		in.src = z
	default:
		in.src = br
	}
	return nil
}

// openGzip starts inflating the gzip stream br: BGZF member by member (bgzf.go) and other gzip
// in chunks (gzpar.go) on every core where there are several, else by one (the caller's own
// reader: query files and references compress/gzip's, pattern files klauspost's).
func openGzip(br *bufio.Reader, one func(io.Reader) (io.ReadCloser, error)) (io.ReadCloser, error) {
	threads := runtime.GOMAXPROCS(0)
	if head, _ := br.Peek(18); isBGZF(head) {
		return newBGZFReader(br, threads), nil
	}
	if threads > 1 {
		return newGzparReader(br, threads), nil
	}
	return one(br)
}

// stdGzip is compress/gzip's reader, for openGzip.
func stdGzip(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }

// close closes the decompressor and the file, once; it reports whether this call closed them.
func (in *input) close() (bool, error) {
	if in.closed {
		return false, nil
	}
	in.closed = true
	var err error
	if in.dec != nil {
		err = in.dec.Close()
	}
	if in.file != nil {
		if e := in.file.Close(); err == nil {
			err = e
		}
	}
	return true, err
}

// describe returns the read error err as one line that names the compression.
func (in *input) describe(err error) string {
	msg := oneLine(err.Error())
	if in.kind != "" && !strings.HasPrefix(msg, in.kind) {
		msg = in.kind + ": " + msg
	}
	return msg
}

// Name returns the file name given to Open or NewReader, "stdin" for "-".
func (r *Reader) Name() string { return r.name }

// Close releases the decompressor and closes the file Open opened (not stdin).
func (r *Reader) Close() error {
	closed, err := r.close()
	if !closed {
		return nil
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s: read after Close", r.name)
	}
	return err
}

// Next returns the next record, or io.EOF after the last. The record's buffers are reused by the
// next call. Errors are one line naming the file, the record (1-based) and the line.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	if !r.started {
		c, ok := r.firstNonSpace()
		if !ok {
			return r.finish()
		}
		r.started = true
		r.fastq = c == '@'
	}
	if r.fastq {
		return r.nextFASTQ()
	}
	return r.nextFASTA()
}

// finish ends the input: io.EOF, or the read error that ended it.
func (r *Reader) finish() (*Record, error) {
	if r.rerr != nil {
		return nil, r.fail(r.nl+1, "%s", r.readErr())
	}
	r.done = true
	return nil, io.EOF
}

// fail records and returns an error of record nrec+1 at line.
func (r *Reader) fail(line int, format string, args ...any) error {
	msg := oneLine(fmt.Sprintf(format, args...))
	r.err = fmt.Errorf("%s: record %d (line %d): %s", r.name, r.nrec+1, line, msg)
	return r.err
}

func (r *Reader) readErr() string { return r.describe(r.rerr) }

func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// fill reads more input into the empty buffer; false at the end of the input or on a read error.
func (r *Reader) fill() bool {
	if r.eof || r.rerr != nil {
		return false
	}
	r.pos, r.end = 0, 0
	if r.perr != nil {
		r.rerr = r.perr
		return false
	}
	for empty := 0; ; empty++ {
		n, err := r.src.Read(r.buf)
		if n > 0 {
			r.end = n
			if err != nil && err != io.EOF {
				r.perr = err // reported once these bytes are used
			} else if err == io.EOF {
				r.eof = true
			}
			return true
		}
		if err == io.EOF {
			r.eof = true
			return false
		}
		if err != nil {
			r.rerr = err
			return false
		}
		if empty > 100 {
			r.rerr = io.ErrNoProgress
			return false
		}
	}
}

// firstNonSpace skips white space and returns the byte after it, without consuming it.
func (r *Reader) firstNonSpace() (byte, bool) {
	for {
		if r.pos == r.end && !r.fill() {
			return 0, false
		}
		for r.pos < r.end {
			c := r.buf[r.pos]
			if !isSpace[c] {
				return c, true
			}
			if c == '\n' {
				r.nl++
			}
			r.pos++
		}
	}
}

func (r *Reader) nextFASTA() (*Record, error) {
	r.seqBuf = r.seqBuf[:0]
	if !r.inHeader {
		// Only at the start: the bytes before the first '>' are part of the first record.
		found := r.scanSeq()
		if r.rerr != nil {
			return nil, r.fail(r.nl+1, "%s", r.readErr())
		}
		if !found {
			r.done = true
			return nil, io.EOF
		}
	}
	hdrLine := r.nl + 1
	r.readHeader()
	if r.rerr != nil {
		return nil, r.fail(r.nl+1, "%s", r.readErr())
	}
	r.inHeader = r.scanSeq()
	if r.rerr != nil {
		return nil, r.fail(r.nl+1, "%s", r.readErr())
	}
	if !r.inHeader {
		r.done = true
		if r.nrec == 0 && len(r.seqBuf) == 0 {
			// MUMmer refuses a file whose only record is empty (several empty records are fine).
			return nil, r.fail(hdrLine, "empty sequence in multiple fasta file")
		}
	}
	r.nrec++
	r.rec.Name, r.rec.Seq = r.nameBuf, r.seqBuf
	return &r.rec, nil
}

// scanSeq appends the non-space bytes up to the next '>' to seqBuf and consumes the '>'.
// It returns whether a '>' was found.
func (r *Reader) scanSeq() bool {
	for {
		if r.pos == r.end && !r.fill() {
			return false
		}
		chunk := r.buf[r.pos:r.end]
		if k := bytes.IndexByte(chunk, '>'); k >= 0 {
			r.seqBuf = appendSeq(r.seqBuf, chunk[:k], &r.nl)
			r.pos += k + 1
			return true
		}
		r.seqBuf = appendSeq(r.seqBuf, chunk, &r.nl)
		r.pos = r.end
		if r.whole != nil && len(r.seqBuf) >= longSeq && r.perr == nil && !r.eof {
			found, ok := r.scanSeqMapped()
			if ok {
				return found
			}
			r.whole = nil // too little left of the file, or no mapping
		}
	}
}

// readHeader reads the name after a '>' into nameBuf and skips the rest of the line.
func (r *Reader) readHeader() {
	r.nameBuf = r.nameBuf[:0]
	copying := true
	for {
		if r.pos == r.end && !r.fill() {
			return
		}
		chunk := r.buf[r.pos:r.end]
		if copying {
			i := nonSpaceRun(chunk)
			r.nameBuf = append(r.nameBuf, chunk[:i]...)
			r.pos += i
			if i == len(chunk) {
				continue
			}
			copying = false
			chunk = chunk[i:]
		}
		if k := bytes.IndexByte(chunk, '\n'); k >= 0 {
			r.pos += k + 1
			r.nl++
			return
		}
		r.pos = r.end
	}
}

// readLine returns the next line without its '\n' (valid until the next read), or false at the
// end of the input.
func (r *Reader) readLine() ([]byte, bool) {
	r.lb = r.lb[:0]
	spanning := false
	for {
		if r.pos == r.end && !r.fill() {
			if spanning && r.rerr == nil {
				r.lineNo = r.nl + 1
				return r.lb, true
			}
			return nil, false
		}
		chunk := r.buf[r.pos:r.end]
		if k := bytes.IndexByte(chunk, '\n'); k >= 0 {
			r.pos += k + 1
			r.nl++
			r.lineNo = r.nl
			if !spanning {
				return chunk[:k], true
			}
			r.lb = append(r.lb, chunk[:k]...)
			return r.lb, true
		}
		r.lb = append(r.lb, chunk...)
		spanning = true
		r.pos = r.end
	}
}

func (r *Reader) nextFASTQ() (*Record, error) {
	// The header, after blank lines.
	var line []byte
	for {
		l, ok := r.readLine()
		if !ok {
			return r.finish()
		}
		k := 0
		for k < len(l) && isSpace[l[k]] {
			k++
		}
		if k < len(l) {
			line = l[k:] // leading white space is skipped, as before the first record
			break
		}
	}
	if line[0] != '@' {
		return nil, r.fail(r.lineNo, "expected '@' at the start of a FASTQ record, found %q", line[0])
	}
	head := line[1:]
	r.nameBuf = append(r.nameBuf[:0], head[:nonSpaceRun(head)]...)
	start := r.lineNo

	// Sequence lines up to the '+' line.
	r.seqBuf = r.seqBuf[:0]
	nseq := 0
	for {
		l, ok := r.readLine()
		if !ok {
			if r.rerr != nil {
				return nil, r.fail(r.nl+1, "%s", r.readErr())
			}
			return nil, r.fail(r.lineNo, "truncated record (header at line %d): no '+' line", start)
		}
		if len(l) > 0 && l[0] == '+' {
			break
		}
		if len(l) > 0 && l[0] == '@' {
			return nil, r.fail(r.lineNo, "missing '+' line (header at line %d)", start)
		}
		var dummy int
		r.seqBuf = appendSeq(r.seqBuf, l, &dummy)
		nseq++
	}

	// Quality lines until as many quality bytes as sequence bytes.
	want, got, nqual := len(r.seqBuf), 0, 0
	for got < want {
		l, ok := r.readLine()
		if !ok {
			if r.rerr != nil {
				return nil, r.fail(r.nl+1, "%s", r.readErr())
			}
			return nil, r.fail(r.lineNo, "truncated record: quality length %d != sequence length %d", got, want)
		}
		if nqual > 0 && nqual >= nseq && len(l) > 0 && l[0] == '@' {
			// Most likely the next record: this one's quality is short.
			return nil, r.fail(r.lineNo-1, "quality length %d != sequence length %d", got, want)
		}
		got += nonSpaceCount(l)
		nqual++
		if got > want {
			return nil, r.fail(r.lineNo, "quality length %d != sequence length %d", got, want)
		}
	}
	r.nrec++
	r.rec.Name, r.rec.Seq = r.nameBuf, r.seqBuf
	return &r.rec, nil
}

// isSpace is C's isspace in the C locale.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// hasLow reports whether some byte of x is below 0x21 (where all white space is).
func hasLow(x uint64) bool {
	const ones, highs = 0x2121212121212121, 0x8080808080808080
	return (x-ones)&^x&highs != 0
}

// nonSpaceRun returns the length of the longest prefix of b without white space: 32 bytes at a
// time with vectors up to the first byte below 0x21, where there are vectors and b is that long;
// then, and from a low byte that is not white space, eight at a time.
func nonSpaceRun(b []byte) int {
	i, n := lowRun(b), len(b)
	for i < n {
		if i+8 <= n && !hasLow(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
			continue
		}
		for end := min(i+8, n); i < end; i++ {
			if isSpace[b[i]] {
				return i
			}
		}
	}
	return n
}

// appendSeq appends the bytes of b that are not white space to dst and adds the newlines of b
// to *nl.
func appendSeq(dst, b []byte, nl *int) []byte {
	for len(b) > 0 {
		i := nonSpaceRun(b)
		if len(dst)+i > cap(dst) {
			dst = growSeq(dst, i)
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		j := 0
		for j < len(b) && isSpace[b[j]] {
			if b[j] == '\n' {
				*nl++
			}
			j++
		}
		b = b[j:]
	}
	return dst
}

// growSeq returns dst with room for at least more bytes after it: twice the capacity (append's
// quarter more, for a genome-long record, makes several times as many copies), copied 64 KiB at
// a time. A garbage collection that starts meanwhile must stop this goroutine, which it cannot
// do inside one long memmove: it signals it again and again, and the copy ran several times
// slower. Reading a 20 Mbp record in `sapipe mummer` (2-core VM) took 257-374 ms, against
// 451-474 ms with append and 300-514 ms doubling in one copy.
func growSeq(dst []byte, more int) []byte {
	nd := make([]byte, len(dst), max(2*cap(dst), len(dst)+more))
	for k := 0; k < len(dst); k += 1 << 16 {
		copy(nd[k:], dst[k:min(k+1<<16, len(dst))])
	}
	return nd
}

// nonSpaceCount counts the bytes of b that are not white space.
func nonSpaceCount(b []byte) int {
	n := 0
	for len(b) > 0 {
		i := nonSpaceRun(b)
		n += i
		b = b[i:]
		j := 0
		for j < len(b) && isSpace[b[j]] {
			j++
		}
		b = b[j:]
	}
	return n
}
