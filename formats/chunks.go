package formats

// Reading FASTA and FASTQ in chunks, so that records are parsed on many goroutines at once.
//
// ChunkReader reads the (decompressed) input in large chunks and cuts each at a record boundary
// found by a cheap scan, without parsing: FASTA at the first '>' of the line that holds the
// chunk's last '>' (a '>' that is the first of its line always starts a record, as a header ends
// at its line's end); FASTQ after a multiple of four lines. ParseChunk then parses one chunk into
// the records Reader would return. A FASTQ cut is a guess, right for four-line records; ParseChunk
// only accepts a chunk that parses into plain records that end exactly at its end, so a chunk it
// accepts was cut right, provided the chunk before it was. Anything else (multi-line FASTQ, a
// malformed record, a read error, a record longer than a chunk, a file without records) is left
// to Reader: Resume returns a Reader of the input from the start of a chunk on, with the record
// and line numbers of what came before, so that the records and errors are Reader's, word for
// word.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
)

// Chunk is a run of input cut by ChunkReader.
type Chunk struct {
	Data  []byte
	FASTQ bool // the input is FASTQ
	First bool // Data starts the input
	Last  bool // Data ends the input
	// Odd says that Data is not known to end at a record boundary (a record longer than the
	// largest chunk, or a read error after Data): only Reader, through Resume, may read it.
	Odd bool

	lines   int // the newlines of Data, when counted (cutting FASTQ counts them)
	counted bool
}

// Newlines returns the number of '\n' in c.Data: the count made when the chunk was cut, where
// there was one, else counted now.
func (c *Chunk) Newlines() int {
	if c.counted {
		return c.lines
	}
	return bytes.Count(c.Data, []byte{'\n'})
}

// ChunkReader cuts a FASTA or FASTQ input into chunks of whole records (see the top of this file).
type ChunkReader struct {
	input
	size    int // bytes a chunk aims at
	carry   []byte
	started bool // the format is known
	fastq   bool
	first   bool // the next chunk is the first
	eof     bool
	rerr    error // the read error that ended the input
	done    bool  // the last chunk has been returned
}

// OpenChunks opens path for ChunkReader as Open opens it for Reader; "-" is stdin (os.Stdin when
// stdin is nil). size is the length a chunk aims at.
func OpenChunks(path string, stdin io.Reader, size int) (*ChunkReader, error) {
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return NewChunkReader("-", stdin, size)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var src io.ReadCloser = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() >= parallelReadMin {
		if depth := parallelReadDepth(); depth > 0 {
			src = newParallelReader(f, st.Size(), depth)
		}
	}
	r, err := NewChunkReader(path, src, size)
	if err != nil {
		src.Close()
		return nil, err
	}
	r.file = src
	return r, nil
}

// NewChunkReader returns a ChunkReader of rd, decompressed as Reader decompresses it; name ("-"
// meaning stdin) is used in messages.
func NewChunkReader(name string, rd io.Reader, size int) (*ChunkReader, error) {
	r := &ChunkReader{size: max(size, 1), first: true}
	if err := r.open(name, rd, peekBufSize); err != nil {
		return nil, err
	}
	return r, nil
}

// Name returns the name used in messages ("stdin" for "-").
func (r *ChunkReader) Name() string { return r.name }

// Close releases the decompressor and closes the file OpenChunks opened, unless Resume has handed
// them to a Reader.
func (r *ChunkReader) Close() error {
	_, err := r.close()
	return err
}

// maxChunkGrowth bounds a chunk, in chunk sizes, while it grows to hold one long record. A record
// that does not fit goes to Reader, which reads it once; growing the chunk first only copies it
// and keeps the grown buffers (E. coli against its mutated copy, one 4.6 Mbp query record: peak
// RSS 80 MB with a bound of 4, 71 MB with 2, 69 MB with 1; chunks are 1 MiB by default).
const maxChunkGrowth = 1

// Next returns the next chunk, its bytes read into buf (reused), or io.EOF after the last. Every
// input gives at least one chunk (an empty input, one empty chunk). Read errors come as an Odd
// chunk of the bytes before them.
func (r *ChunkReader) Next(buf []byte) (Chunk, error) {
	if r.done {
		return Chunk{}, io.EOF
	}
	if cap(buf) < r.size {
		buf = make([]byte, 0, r.size)
	}
	buf = append(buf[:0], r.carry...)
	r.carry = r.carry[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)) // a record longer than the chunk so far
		}
		r.fill(&buf)
		c := Chunk{First: r.first, FASTQ: r.fastq}
		if !r.started {
			if k := firstNonSpace(buf); k >= 0 {
				r.started, r.fastq = true, buf[k] == '@'
				c.FASTQ = r.fastq
			}
		}
		if r.eof || r.rerr != nil {
			r.done, r.first = true, false
			c.Data, c.Last, c.Odd = buf, true, r.rerr != nil
			return c, nil
		}
		if r.started {
			if cut, lines := r.cut(buf); cut > 0 {
				r.carry = append(r.carry, buf[cut:]...)
				r.first = false
				c.Data = buf[:cut]
				if lines >= 0 {
					c.lines, c.counted = lines, true
				}
				return c, nil
			}
		}
		if len(buf) >= maxChunkGrowth*r.size {
			r.done, r.first = true, false // the rest is Reader's
			c.Data, c.Odd = buf, true
			return c, nil
		}
	}
}

// fill reads into buf up to its capacity, until the end of the input or a read error.
func (r *ChunkReader) fill(buf *[]byte) {
	b := *buf
	for empty := 0; len(b) < cap(b); {
		n, err := r.src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			r.eof = true
			break
		}
		if err != nil {
			r.rerr = err
			break
		}
		if n == 0 {
			if empty++; empty > 100 {
				r.rerr = io.ErrNoProgress
				break
			}
		}
	}
	*buf = b
}

// cut returns where the records that buf holds whole end, or 0 when it holds none whole, and the
// newlines before that end where it counted them (FASTQ), else -1.
func (r *ChunkReader) cut(buf []byte) (int, int) {
	if !r.fastq {
		// The first record starts at buf's first '>' (the first chunk) or at buf[0] (the others).
		p := bytes.LastIndexByte(buf, '>')
		if p < 0 {
			return 0, -1
		}
		ls := bytes.LastIndexByte(buf[:p], '\n') + 1
		q := ls + bytes.IndexByte(buf[ls:], '>')
		if q <= bytes.IndexByte(buf, '>') {
			return 0, -1
		}
		return q, -1
	}
	lead := 0 // blank lines before the first record
	if r.first {
		lead = bytes.Count(buf[:max(firstNonSpace(buf), 0)], []byte{'\n'})
	}
	n := countNewlines(buf)
	end := lead + (n-lead)/4*4 // the line after which to cut
	if end == lead {
		return 0, -1
	}
	at := len(buf)
	for range n - end + 1 {
		at = bytes.LastIndexByte(buf[:at], '\n')
	}
	return at + 1, end // buf[:at+1] ends with the end-th newline
}

// firstNonSpace returns the index of the first byte of b that is not white space, or -1.
func firstNonSpace(b []byte) int {
	for i, c := range b {
		if !isSpace[c] {
			return i
		}
	}
	return -1
}

// Resume returns a Reader of the input from the start of chunks[0] on, chunks being the chunks
// returned and not yet read, in order, and nrec records and nl newlines coming before them. The
// Reader takes over the input: closing it closes the file, and r is closed.
func (r *ChunkReader) Resume(chunks [][]byte, nrec, nl int) *Reader {
	parts := make([]io.Reader, 0, len(chunks)+2)
	for _, c := range chunks {
		parts = append(parts, bytes.NewReader(c))
	}
	parts = append(parts, bytes.NewReader(append([]byte(nil), r.carry...)))
	switch {
	case r.rerr != nil:
		parts = append(parts, &failing{r.rerr})
	case !r.eof:
		parts = append(parts, r.src)
	}
	rd := &Reader{input: r.input, buf: make([]byte, defaultBufSize)}
	rd.src = io.MultiReader(parts...)
	rd.nrec, rd.nl = nrec, nl
	rd.started, rd.fastq = nrec > 0, r.fastq
	r.closed = true // the Reader closes the input
	r.done = true
	return rd
}

// failing is a reader that fails with err.
type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// ParseChunk parses c into the records Reader would return from it, calling fn with each name and
// sequence (valid during the call only), and returns the number of records, or ok false when c
// holds something that only Reader may read (see the top of this file); then what fn was given is
// to be dropped. scratch is a buffer for sequences that are not a run of c's bytes.
func ParseChunk(c *Chunk, scratch *[]byte, fn func(name, seq []byte)) (records int, ok bool) {
	if c.Odd {
		return 0, false
	}
	if len(c.Data) == 0 && !c.First {
		return 0, true // a chunk that ends where it starts (a block inside one record, BlockFile's)
	}
	if c.FASTQ {
		records, ok = parseFASTQChunk(c.Data, scratch, fn)
	} else {
		records, ok = parseFASTAChunk(c, scratch, fn)
	}
	// A file without records is Reader's error ("no sequences" in the caller).
	return records, ok && (records > 0 || !c.First)
}

// parseFASTQChunk accepts four-line records (header, one sequence line, '+' line, one quality
// line as long as the sequence) with blank lines between them.
func parseFASTQChunk(data []byte, scratch *[]byte, fn func(name, seq []byte)) (int, bool) {
	records := 0
	line := func() ([]byte, bool) { // the next line, without its '\n'
		if len(data) == 0 {
			return nil, false
		}
		k := bytes.IndexByte(data, '\n')
		if k < 0 {
			l := data
			data = nil
			return l, true
		}
		l := data[:k]
		data = data[k+1:]
		return l, true
	}
	for {
		var head []byte
		for {
			l, more := line()
			if !more {
				return records, true
			}
			if k := firstNonSpace(l); k >= 0 {
				head = l[k:]
				break
			}
		}
		if head[0] != '@' {
			return records, false
		}
		ok1 := len(data) > 0
		seq, n, clean := cleanLine(&data)
		plus, ok2 := line()
		ok3 := len(data) > 0
		qual, nq, cleanQual := cleanLine(&data)
		if !ok1 || !ok2 || !ok3 || len(seq) == 0 || seq[0] == '+' || seq[0] == '@' || len(plus) == 0 || plus[0] != '+' {
			return records, false
		}
		want := n
		if !clean {
			want = nonSpaceCount(seq)
		}
		if !cleanQual {
			nq = nonSpaceCount(qual)
		}
		if want == 0 || nq != want {
			return records, false
		}
		if n != want {
			*scratch = appendSeq((*scratch)[:0], seq, new(int))
			seq = *scratch
		}
		fn(head[1:1+nonSpaceRun(head[1:])], seq[:want])
		records++
	}
}

// cleanLine cuts *data's first line off (without its '\n') as parseFASTQChunk's line does, and
// returns it with the length of its run of bytes that are not white space, and whether that run is
// the whole line: one scan finds both where the run of a sequence or quality line ends at its
// newline, as it does but for damaged or unusual files.
func cleanLine(data *[]byte) (l []byte, run int, clean bool) {
	d := *data
	k := nonSpaceRun(d)
	switch {
	case k == len(d):
		*data = nil
		return d, k, true
	case d[k] == '\n':
		*data = d[k+1:]
		return d[:k], k, true
	}
	e := bytes.IndexByte(d[k:], '\n')
	if e < 0 {
		*data = nil
		return d, k, false
	}
	*data = d[k+e+1:]
	return d[:k+e], k, false
}

// parseFASTAChunk accepts any chunk that ChunkReader cut: every '>' in it outside a header starts
// a record.
func parseFASTAChunk(c *Chunk, scratch *[]byte, fn func(name, seq []byte)) (int, bool) {
	data := c.Data
	p := bytes.IndexByte(data, '>')
	if p < 0 {
		return 0, false // no records: Reader's business
	}
	pre := data[:p] // the first chunk: bytes before the first '>' belong to the first record
	records, lastLen := 0, 0
	for p < len(data) {
		h := data[p+1:]
		name := h[:nonSpaceRun(h)]
		start := len(data)
		if k := bytes.IndexByte(h, '\n'); k >= 0 {
			start = p + 1 + k + 1
		}
		end := len(data)
		if k := bytes.IndexByte(data[start:], '>'); k >= 0 {
			end = start + k
		}
		region := data[start:end]
		seq := region
		n := nonSpaceRun(region)
		if len(pre) > 0 || firstNonSpace(region[n:]) >= 0 {
			s := appendSeq((*scratch)[:0], pre, new(int))
			s = appendSeq(s, region, new(int))
			*scratch, seq, pre = s, s, nil
		} else {
			seq = region[:n]
		}
		fn(name, seq)
		records++
		lastLen = len(seq)
		p = end
	}
	if c.First && c.Last && records == 1 && lastLen == 0 {
		return records, false // "empty sequence in multiple fasta file"
	}
	return records, true
}
