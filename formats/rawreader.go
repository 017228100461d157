package formats

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// RawRecord is one record as the bytes that hold it in the (decompressed) input.
type RawRecord struct {
	// Raw is the record's bytes. In FASTA, a record runs from its '>' to the byte before the
	// next record's '>'; the first record also holds the bytes before its '>' (whose non-space
	// bytes MUMmer adds to its sequence). In FASTQ, a record is the blank lines before its
	// header and its lines, up to the newline that ends its last quality line.
	Raw []byte
	// Name is the record's name, as Record.Name.
	Name []byte
	// SeqLen is the length of the record's sequence, as len(Record.Seq).
	SeqLen int
}

// RawReader cuts a FASTA or FASTQ stream into records without changing a byte: writing the Raw
// bytes of every record back to back, then Trailer, gives the decompressed stream again. Every
// record's bytes, read on their own by Reader, give that record, so a stream can be cut into
// shards between any two records and each shard read by any tool that reads the whole.
//
// Records, names, sequence lengths and errors (with their wording, record and line numbers) are
// those of Reader, which follows the same grammar; Reader keeps no raw bytes, so this is a second
// parser of that grammar, kept small, and tested against Reader. A record's bytes are held in
// memory until the next call of Next, as Reader holds a record's sequence.
type RawReader struct {
	input
	br *bufio.Reader

	started, fastq, done bool
	first                bool  // the next record is the first
	gt                   bool  // FASTA: the next record's '>' has been read
	err                  error // sticky
	rerr                 error // the read error that ended the input
	nrec                 int   // records returned
	nl                   int   // newlines read
	lineNo               int   // FASTQ: the number of the line readLine returned last

	raw     []byte
	trailer []byte
	rec     RawRecord
}

// OpenRaw opens path for RawReader; "-" is stdin.
func OpenRaw(path string) (*RawReader, error) {
	if path == "-" {
		return NewRawReader("-", os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewRawReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewRawReader returns a RawReader of rd, decompressed as Reader decompresses; name ("-" meaning
// stdin) is used in messages.
func NewRawReader(name string, rd io.Reader) (*RawReader, error) {
	r := &RawReader{first: true}
	if err := r.open(name, rd, defaultBufSize); err != nil {
		return nil, err
	}
	if br, ok := r.src.(*bufio.Reader); ok && r.kind == "" {
		r.br = br
		return r, nil
	}
	r.br = bufio.NewReaderSize(r.src, defaultBufSize)
	return r, nil
}

// Name returns the name used in messages ("stdin" for "-").
func (r *RawReader) Name() string { return r.name }

// FASTQ reports whether the input is FASTQ; it is known once Next has returned a record.
func (r *RawReader) FASTQ() bool { return r.fastq }

// Trailer returns the bytes after the last record, once Next has returned io.EOF: blank lines at
// the end of a FASTQ file, or the whole input when it holds no record.
func (r *RawReader) Trailer() []byte { return r.trailer }

// Close releases the decompressor and closes the file OpenRaw opened.
func (r *RawReader) Close() error {
	closed, err := r.close()
	if !closed {
		return nil
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s: read after Close", r.name)
	}
	return err
}

// Next returns the next record, or io.EOF after the last. The record's slices are reused by the
// next call.
func (r *RawReader) Next() (*RawRecord, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	if !r.started {
		c, ok := r.skipSpace()
		if !ok {
			if r.rerr != nil {
				return nil, r.fail(r.nl+1, "%s", r.readErr())
			}
			return r.end()
		}
		r.started = true
		r.fastq = c == '@'
	}
	if r.first {
		r.first = false // the white space before the first record is already in raw
	} else {
		r.raw = r.raw[:0]
	}
	if r.fastq {
		return r.nextFASTQ()
	}
	return r.nextFASTA()
}

// end ends the input cleanly: what is left in raw is the trailer.
func (r *RawReader) end() (*RawRecord, error) {
	r.done = true
	r.trailer = append(r.trailer[:0], r.raw...)
	r.raw = r.raw[:0]
	return nil, io.EOF
}

// fail records and returns an error of record nrec+1 at line, worded as Reader's.
func (r *RawReader) fail(line int, format string, args ...any) error {
	msg := oneLine(fmt.Sprintf(format, args...))
	r.err = fmt.Errorf("%s: record %d (line %d): %s", r.name, r.nrec+1, line, msg)
	return r.err
}

func (r *RawReader) readErr() string { return r.describe(r.rerr) }

// skipSpace moves white space from the input to raw and returns the byte after it, unread.
func (r *RawReader) skipSpace() (byte, bool) {
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			if err != io.EOF {
				r.rerr = err
			}
			return 0, false
		}
		if !isSpace[c] {
			r.br.UnreadByte()
			return c, true
		}
		if c == '\n' {
			r.nl++
		}
		r.raw = append(r.raw, c)
	}
}

func (r *RawReader) nextFASTA() (*RawRecord, error) {
	seqLen := 0
	if r.gt {
		r.raw = append(r.raw, '>')
	} else {
		// Only at the start: the bytes before the first '>' belong to the first record.
		found, n := r.scanSeq()
		if r.rerr != nil {
			return nil, r.fail(r.nl+1, "%s", r.readErr())
		}
		if !found {
			return r.end()
		}
		seqLen = n
	}
	hdrLine := r.nl + 1
	nameOff := len(r.raw)
	nameLen := r.readHeader()
	if r.rerr != nil {
		return nil, r.fail(r.nl+1, "%s", r.readErr())
	}
	found, n := r.scanSeq()
	if r.rerr != nil {
		return nil, r.fail(r.nl+1, "%s", r.readErr())
	}
	seqLen += n
	r.gt = found
	if found {
		r.raw = r.raw[:len(r.raw)-1] // the '>' starts the next record
	} else {
		r.done = true
		if r.nrec == 0 && seqLen == 0 {
			return nil, r.fail(hdrLine, "empty sequence in multiple fasta file")
		}
	}
	r.nrec++
	r.rec = RawRecord{Raw: r.raw, Name: r.raw[nameOff : nameOff+nameLen], SeqLen: seqLen}
	return &r.rec, nil
}

// scanSeq moves the input up to and including the next '>' to raw and returns whether a '>' was
// found and how many bytes before it are not white space.
func (r *RawReader) scanSeq() (found bool, n int) {
	for {
		chunk, err := r.br.ReadSlice('>')
		r.raw = append(r.raw, chunk...)
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		for _, c := range chunk {
			if isSpace[c] {
				if c == '\n' {
					r.nl++
				}
			} else {
				n++
			}
		}
		switch err {
		case nil:
			return true, n
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return false, n
		default:
			r.rerr = err
			return false, n
		}
	}
}

// readHeader moves the header line after a '>' to raw, up to and including its newline, and
// returns the length of the name that starts it.
func (r *RawReader) readHeader() (nameLen int) {
	copying := true
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.raw = append(r.raw, chunk...)
		if copying {
			i := nonSpaceRun(chunk)
			nameLen += i
			copying = i == len(chunk)
		}
		switch err {
		case nil:
			r.nl++
			return nameLen
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return nameLen
		default:
			r.rerr = err
			return nameLen
		}
	}
}

// readLine moves the next line to raw and returns it without its newline (valid until raw grows),
// or false at the end of the input or on a read error.
func (r *RawReader) readLine() ([]byte, bool) {
	start := len(r.raw)
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.raw = append(r.raw, chunk...)
		switch err {
		case nil:
			r.nl++
			r.lineNo = r.nl
			return r.raw[start : len(r.raw)-1], true
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(r.raw) > start {
				r.lineNo = r.nl + 1
				return r.raw[start:], true
			}
			return nil, false
		default:
			r.rerr = err
			return nil, false
		}
	}
}

func (r *RawReader) nextFASTQ() (*RawRecord, error) {
	// The header, after blank lines (which belong to this record, or to the trailer).
	var line []byte
	for {
		l, ok := r.readLine()
		if !ok {
			if r.rerr != nil {
				return nil, r.fail(r.nl+1, "%s", r.readErr())
			}
			return r.end()
		}
		k := 0
		for k < len(l) && isSpace[l[k]] {
			k++
		}
		if k < len(l) {
			line = l[k:]
			break
		}
	}
	if line[0] != '@' {
		return nil, r.fail(r.lineNo, "expected '@' at the start of a FASTQ record, found %q", line[0])
	}
	head := line[1:]
	nameLen := nonSpaceRun(head)
	nameOff := len(r.raw) - len(head)
	if r.raw[len(r.raw)-1] == '\n' {
		nameOff--
	}
	start := r.lineNo

	seqLen, nseq := 0, 0
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
		seqLen += nonSpaceCount(l)
		nseq++
	}

	want, got, nqual := seqLen, 0, 0
	for got < want {
		l, ok := r.readLine()
		if !ok {
			if r.rerr != nil {
				return nil, r.fail(r.nl+1, "%s", r.readErr())
			}
			return nil, r.fail(r.lineNo, "truncated record: quality length %d != sequence length %d", got, want)
		}
		if nqual > 0 && nqual >= nseq && len(l) > 0 && l[0] == '@' {
			return nil, r.fail(r.lineNo-1, "quality length %d != sequence length %d", got, want)
		}
		got += nonSpaceCount(l)
		nqual++
		if got > want {
			return nil, r.fail(r.lineNo, "quality length %d != sequence length %d", got, want)
		}
	}
	r.nrec++
	r.rec = RawRecord{Raw: r.raw, Name: r.raw[nameOff : nameOff+nameLen], SeqLen: seqLen}
	return &r.rec, nil
}
