package formats

// Patterns for `sapipe count` and `sapipe locate`: FASTA or FASTQ records (read by Reader, with
// its rules), or plain text with one pattern a line, plain or compressed like any input. The form
// is told from the first byte that is not white space: '>' is FASTA, '@' FASTQ, anything else
// one pattern a line. A line's pattern is the line without its surrounding white space (so CRLF
// line ends work); blank lines are skipped; the record's name is the pattern itself.

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// PatternReader reads search patterns as records.
type PatternReader struct {
	name  string
	fx    *Reader // FASTA or FASTQ; nil for one pattern a line
	br    *bufio.Reader
	kind  string // compression, for messages
	close []io.Closer
	line  int
	buf   []byte
	rec   Record
	err   error
	carry []byte // ReadLines: the start of a line that the last chunk did not hold

	// A plain file of one pattern a line is mapped into memory (see openMappedLines): ReadLines
	// and Next read it from pos on, and ReadLines returns runs of it instead of copies.
	mapped []byte
	pos    int
	unmap  func() error
	kept   bool // KeepMapping has taken the mapping: Close leaves it
}

// OpenPatterns opens the patterns at path; "-" reads stdin. A plain (not compressed) regular
// file of one pattern a line is mapped into memory rather than read where the system allows (see
// ReadLines and KeepMapping).
func OpenPatterns(path string, stdin io.Reader) (*PatternReader, error) {
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return NewPatternReader("-", stdin)
	}
	if r := openMappedLines(path); r != nil {
		return r, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewPatternReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.close = append(r.close, f)
	return r, nil
}

// NewPatternReader returns a reader of the patterns in rd; name ("-" meaning stdin) is used in
// messages.
func NewPatternReader(name string, rd io.Reader) (*PatternReader, error) {
	if name == "-" {
		name = "stdin"
	}
	r := &PatternReader{name: name}
	raw := bufio.NewReaderSize(rd, 64<<10)
	head, err := raw.Peek(10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("%s: %s", name, oneLine(err.Error()))
	}
	var src io.Reader = raw
	switch r.kind = compression(head); r.kind {
	case "gzip":
		z, err := openGzip(raw, func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) })
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %s", name, oneLine(err.Error()))
		}
		r.close = append(r.close, z)
		src = z
	case "zstd":
		z, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(zstdBlocksInFlight()))
		if err != nil {
			return nil, fmt.Errorf("%s: zstd: %s", name, oneLine(err.Error()))
		}
		r.close = append(r.close, zstdCloser{z})
		src = z
	case "bzip2":
		src = bzip2.NewReader(raw)
	case "xz":
		z, err := xz.NewReader(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: xz: %s", name, oneLine(err.Error()))
		}
		src = z
	case "bwz":
		z, err := openBWZ(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, err)
		}
		r.close = append(r.close, z)
		src = z
	}
	r.br = bufio.NewReaderSize(src, 256<<10)
	first, err := r.firstNonSpace()
	if err != nil {
		r.Close()
		return nil, err
	}
	if first == '>' || first == '@' {
		fx, err := NewReader(name, r.br)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.fx = fx
	}
	return r, nil
}

// firstNonSpace returns the first byte that is not white space, without consuming it (0 for an
// input of white space only). Leading white space beyond a buffer is dropped, which neither form
// minds.
func (r *PatternReader) firstNonSpace() (byte, error) {
	for {
		if _, err := r.br.Peek(1); err == io.EOF {
			return 0, nil
		} else if err != nil {
			return 0, r.readError(err)
		}
		b, _ := r.br.Peek(r.br.Buffered())
		for _, c := range b {
			if !isSpace[c] {
				return c, nil
			}
		}
		r.line += bytes.Count(b, []byte{'\n'})
		r.br.Discard(len(b))
	}
}

func (r *PatternReader) readError(err error) error {
	msg := oneLine(err.Error())
	if r.kind != "" && !bytes.HasPrefix([]byte(msg), []byte(r.kind)) {
		msg = r.kind + ": " + msg
	}
	return fmt.Errorf("%s: line %d: %s", r.name, r.line+1, msg)
}

// Name returns the name messages use ("stdin" for "-").
func (r *PatternReader) Name() string { return r.name }

// Format returns "fasta/fastq" or "lines".
func (r *PatternReader) Format() string {
	if r.fx != nil {
		return "fasta/fastq"
	}
	return "lines"
}

// Next returns the next pattern, or io.EOF after the last. The record's buffers are reused by the
// next call.
func (r *PatternReader) Next() (*Record, error) {
	if r.fx != nil {
		return r.fx.Next()
	}
	if r.err != nil {
		return nil, r.err
	}
	for {
		var line []byte
		var err error
		if r.mapped != nil {
			line, err = r.mappedLine()
		} else {
			line, err = r.readLine()
		}
		if err != nil {
			r.err = err
			return nil, err
		}
		for len(line) > 0 && isSpace[line[len(line)-1]] {
			line = line[:len(line)-1]
		}
		for len(line) > 0 && isSpace[line[0]] {
			line = line[1:]
		}
		if len(line) == 0 {
			continue
		}
		r.rec.Name, r.rec.Seq = line, line
		return &r.rec, nil
	}
}

// readLine returns the next line without its '\n', or io.EOF at the end.
func (r *PatternReader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.buf = append(r.buf, b...)
			continue
		}
		if len(r.buf) > 0 {
			r.buf = append(r.buf, b...)
			b = r.buf
		}
		switch {
		case err == nil:
			r.line++
			return b[:len(b)-1], nil
		case err == io.EOF && len(b) > 0:
			r.line++
			return b, nil
		case err == io.EOF:
			return nil, io.EOF
		}
		return nil, r.readError(err)
	}
}

// ReadLines reads the next run of whole lines of a one-pattern-a-line input (Format "lines") into
// buf, reused, and returns them: at least size bytes unless the input ends first, more when a line
// is longer, always ending at a '\n' or at the end of the input. PatternLines cuts a run into the
// patterns Next would return, so that a run can be parsed away from the reading goroutine; a
// read error comes after the whole lines before it, worded and numbered as Next words it.
// It returns io.EOF after the last line. Next and ReadLines are not to be mixed.
//
// From a mapped file (Mapped), the run is a view of the file's memory, not buf: it must not be
// written to, and stays valid until the reader is closed, or with KeepMapping until the mapping
// is released.
func (r *PatternReader) ReadLines(buf []byte, size int) ([]byte, error) {
	if r.fx != nil {
		return nil, fmt.Errorf("%s: ReadLines of FASTA or FASTQ input", r.name)
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.mapped != nil {
		return r.mappedLines(size)
	}
	buf = slices.Grow(buf[:0], max(size, len(r.carry)+1))
	buf = append(buf, r.carry...)
	r.carry = r.carry[:0]
	scanned := 0 // bytes of buf known to hold no '\n'
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)) // a line longer than a chunk
		}
		n, err := r.br.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			r.err = io.EOF
			if len(buf) == 0 {
				return nil, io.EOF
			}
			r.line += bytes.Count(buf, []byte{'\n'})
			return buf, nil
		}
		if err != nil {
			// As Next: the whole lines before the error, then the error at the line after them.
			lines := buf[:bytes.LastIndexByte(buf, '\n')+1]
			r.line += bytes.Count(lines, []byte{'\n'})
			r.err = r.readError(err)
			if len(lines) == 0 {
				return nil, r.err
			}
			return lines, nil
		}
		if len(buf) < cap(buf) {
			continue
		}
		if k := bytes.LastIndexByte(buf[scanned:], '\n'); k >= 0 {
			k += scanned
			r.carry = append(r.carry, buf[k+1:]...)
			buf = buf[:k+1]
			r.line += bytes.Count(buf, []byte{'\n'})
			return buf, nil
		}
		scanned = len(buf)
	}
}

// Chunks returns a ChunkReader of FASTA or FASTQ patterns (Format "fasta/fastq"), which reads
// them in chunks of whole records of about size bytes, to be parsed by ParseChunk; Resume hands
// the rest to Next. Files stay r's to close. Next, ReadLines and Chunks are not to be mixed.
func (r *PatternReader) Chunks(size int) *ChunkReader {
	if r.fx == nil {
		return nil
	}
	in := r.fx.input // the decompressed stream, which Next has not read yet
	in.file, in.dec = nil, nil
	return &ChunkReader{input: in, size: max(size, 1), first: true}
}

// PatternsFrom returns a PatternReader of the FASTA or FASTQ records rd reads (BlockFile.Resume's
// Reader, say); closing it closes rd.
func PatternsFrom(rd *Reader) *PatternReader { return &PatternReader{name: rd.name, fx: rd} }

// Resume makes Next read on from the start of chunks[0], the chunks that cr (from Chunks)
// returned and that are not parsed, with nrec records and nl newlines before them (see
// ChunkReader.Resume).
func (r *PatternReader) Resume(cr *ChunkReader, chunks [][]byte, nrec, nl int) {
	r.fx = cr.Resume(chunks, nrec, nl)
}

// Span is where something lies in a byte slice: b[From:To].
type Span struct{ From, To int }

// PatternLines appends to dst the spans of the patterns in lines, a run of whole lines from
// ReadLines, as Next returns them: each line without its surrounding white space, blank lines
// left out.
func PatternLines(dst []Span, lines []byte) []Span {
	for from := 0; from < len(lines); {
		end := bytes.IndexByte(lines[from:], '\n')
		next := from + end + 1
		if end < 0 {
			end, next = len(lines)-from, len(lines)
		}
		a, b := from, from+end
		for b > a && isSpace[lines[b-1]] {
			b--
		}
		for a < b && isSpace[lines[a]] {
			a++
		}
		if a < b {
			dst = append(dst, Span{a, b})
		}
		from = next
	}
	return dst
}

// Close releases the decompressor and closes the file OpenPatterns opened (unmaps it, unless
// KeepMapping has taken the mapping).
func (r *PatternReader) Close() error {
	var err error
	if r.mapped != nil && !r.kept {
		err = r.unmap()
	}
	r.mapped = nil
	if r.fx != nil {
		err = r.fx.Close()
		r.fx = nil
	}
	for i := len(r.close) - 1; i >= 0; i-- {
		if e := r.close[i].Close(); err == nil {
			err = e
		}
	}
	r.close = nil
	if r.err == nil {
		r.err = fmt.Errorf("%s: read after Close", r.name)
	}
	return err
}

// Mapped reports whether the input is a file mapped into memory, whose runs of lines ReadLines
// returns in place.
func (r *PatternReader) Mapped() bool { return r.mapped != nil }

// KeepMapping hands the mapping of a mapped file (Mapped) to the caller, so that the runs
// ReadLines returned stay valid after Close: release unmaps it, once none of them is used any
// more. It returns nil when the input is not mapped.
func (r *PatternReader) KeepMapping() (release func() error) {
	if r.mapped == nil {
		return nil
	}
	r.kept = true
	return r.unmap
}

// openMappedLines maps the file at path when it is a regular file of one pattern a line, not
// compressed, and returns its reader; nil otherwise (the file is then opened as any input is).
func openMappedLines(path string) *PatternReader {
	data, unmap := mapRegular(path)
	if data == nil {
		return nil
	}
	k := firstNonSpace(data)
	if compression(data[:min(len(data), 10)]) != "" || k >= 0 && (data[k] == '>' || data[k] == '@') {
		unmap()
		return nil
	}
	return &PatternReader{name: path, mapped: data, unmap: unmap}
}

// mappedLines is ReadLines of a mapped file: the next run of whole lines of at least size bytes
// (unless the file ends first), in place.
func (r *PatternReader) mappedLines(size int) ([]byte, error) {
	rest := r.mapped[r.pos:]
	if len(rest) == 0 {
		r.err = io.EOF
		return nil, io.EOF
	}
	end := len(rest)
	if size < len(rest) {
		if k := bytes.IndexByte(rest[max(size, 1)-1:], '\n'); k >= 0 {
			end = max(size, 1) + k
		}
	}
	r.pos += end
	return rest[:end:end], nil
}

// mappedLine is readLine of a mapped file.
func (r *PatternReader) mappedLine() ([]byte, error) {
	rest := r.mapped[r.pos:]
	if len(rest) == 0 {
		return nil, io.EOF
	}
	r.line++
	k := bytes.IndexByte(rest, '\n')
	if k < 0 {
		r.pos += len(rest)
		return rest, nil
	}
	r.pos += k + 1
	return rest[:k], nil
}
