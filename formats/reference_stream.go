package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// readReferenceStream reads a reference from rd in one pass (see the top of reference.go):
// decompression runs on one goroutine, cutting the input into chunks outside header lines, and
// the chunks are parsed on another. A FASTQ input is read by Reader, a record at a time.
func readReferenceStream(name string, rd io.Reader, opts *ReferenceOptions) (*ReferenceText, error) {
	var in input
	if err := in.open(name, rd, peekBufSize); err != nil {
		return nil, err
	}
	defer in.close()
	st := &streamRef{fold: opts.Fold}
	defer st.store.release()
	ck := &refChunker{src: in.src, size: opts.ChunkSize}

	// The format, from the first byte that is not white space; white space before it is only
	// counted.
	data, last, rerr := ck.next(nil)
	for {
		if k := firstNonSpace(data); k >= 0 {
			if data[k] == '@' {
				return st.readFASTQ(&in, ck, data, last, rerr, opts)
			}
			break
		}
		if last {
			break
		}
		st.nl += bytes.Count(data, []byte{'\n'})
		data, last, rerr = ck.next(data[:0])
	}

	st.add(parseChunk(data, st.fold))
	if !last {
		rerr = st.parseRest(ck, data[:0], max(opts.Threads, 1))
	}
	if rerr != nil {
		return nil, readFailure(&in, max(st.records, 1), st.nl+1, rerr)
	}
	if st.records == 0 {
		return nil, noSequences(in.name)
	}
	if st.records == 1 && st.store.total == 0 {
		return nil, emptyFASTA(in.name, st.firstLine)
	}
	return st.finish(opts), nil
}

// streamRef is the state of a reference read as a stream.
type streamRef struct {
	fold      *[256]byte
	store     refStore
	seen      [256]bool // folded bytes in the text
	names     []string
	starts    []int
	records   int
	nl        int // newlines parsed
	firstLine int // the line of the first record's header
}

// chunkParse is a chunk of a streamed FASTA reference parsed on its own (parseChunk): its
// folded bytes in a block of their own, with a separator (0) for each header in it; the headers'
// names and their separators' places; the newlines before its first header and in all of it; the
// bytes its text holds.
type chunkParse struct {
	b         []byte
	free      func()
	w         int
	names     []string
	seps      []int
	firstLine int
	nl        int
	seen      [256]bool
}

// parseChunk parses data, which starts outside a header line.
func parseChunk(data []byte, fold *[256]byte) *chunkParse {
	c := &chunkParse{}
	c.b, c.free = allocBlock(max(len(data), 1)) // every separator stands for a '>'
	populate(c.b, true)
	w := 0
	walkFASTA(data,
		func(b []byte) { w += translateSeq(c.b[w:], b, fold) },
		func(name []byte, at int) {
			if len(c.seps) == 0 {
				c.firstLine = bytes.Count(data[:at], []byte{'\n'})
			}
			c.b[w] = 0
			c.seps = append(c.seps, w)
			w++
			c.names = append(c.names, string(name))
		})
	markSeen(c.b[:w], &c.seen)
	c.w = w
	c.nl = bytes.Count(data, []byte{'\n'})
	return c
}

// add appends the parsed chunk c to the text: its block becomes one of the store's. The text's
// first record has no separator before it (the bytes before its header, if any, are its own).
func (st *streamRef) add(c *chunkParse) {
	w := c.w
	for i := range c.seps {
		if st.records == 0 {
			s := c.seps[i]
			copy(c.b[s:w-1], c.b[s+1:w])
			w--
			for k := i + 1; k < len(c.seps); k++ {
				c.seps[k]--
			}
			c.seen = [256]bool{}
			markSeen(c.b[:w], &c.seen) // the separator taken out may have been its only 0
			st.starts = append(st.starts, 0)
			st.firstLine = st.nl + 1 + c.firstLine
		} else {
			st.starts = append(st.starts, st.store.total+c.seps[i]+1)
		}
		st.names = append(st.names, c.names[i])
		st.records++
	}
	for i, v := range c.seen {
		st.seen[i] = st.seen[i] || v
	}
	st.store.blocks = append(st.store.blocks, refBlock{b: c.b, n: w, free: c.free})
	st.store.total += w
	st.nl += c.nl
}

// parseRest reads the rest of the input's chunks (buf a buffer for them) and parses them on
// threads goroutines, adding them to the text in order; it returns the read error that ended
// them, if any. A reference of 1 Gbp as gzip had been parsed on one goroutine, 1.8 s of its 2.2
// s of reading on a lent H200 host (the inflation had the other cores).
func (st *streamRef) parseRest(ck *refChunker, buf []byte, threads int) error {
	type piece struct {
		data []byte
		last bool
		err  error
		res  *chunkParse
		done chan struct{}
	}
	order := make(chan *piece, threads+1)
	work := make(chan *piece, threads+1)
	free := make(chan []byte, threads+3)
	for range threads + 2 {
		free <- nil // made by ck.next
	}
	free <- buf
	go func() {
		defer close(order)
		defer close(work)
		for {
			d, last, err := ck.next(<-free)
			p := &piece{data: d, last: last, err: err, done: make(chan struct{})}
			order <- p
			work <- p
			if last {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			for p := range work {
				p.res = parseChunk(p.data, st.fold)
				close(p.done)
			}
		})
	}
	defer wg.Wait()
	var rerr error
	for p := range order {
		<-p.done
		st.add(p.res)
		if p.last {
			rerr = p.err
		}
		free <- p.data[:0]
	}
	return rerr
}

// readFASTQ reads the rest of a FASTQ input with Reader, data being the bytes read so far, from
// the chunk that holds the first record on, and last and rerr what ended them.
func (st *streamRef) readFASTQ(in *input, ck *refChunker, data []byte, last bool, rerr error, opts *ReferenceOptions) (*ReferenceText, error) {
	parts := []io.Reader{bytes.NewReader(data), bytes.NewReader(ck.carry)}
	switch {
	case rerr != nil:
		parts = append(parts, &failing{rerr})
	case !last:
		parts = append(parts, ck.src)
	}
	rd := &Reader{input: *in, buf: make([]byte, defaultBufSize)} // closed by the caller, through in
	rd.src = io.MultiReader(parts...)
	rd.nl = st.nl
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if st.records > 0 {
			st.store.room(1)[0] = 0
			st.store.commit(1)
			st.starts = append(st.starts, st.store.total)
		} else {
			st.starts = append(st.starts, 0)
		}
		st.names = append(st.names, string(rec.Name))
		st.records++
		for seq := rec.Seq; len(seq) > 0; {
			k := min(len(seq), refBlockSize)
			dst := st.store.room(k)
			for i, c := range seq[:k] {
				dst[i] = st.fold[c]
			}
			markSeen(dst, &st.seen)
			st.store.commit(k)
			seq = seq[k:]
		}
	}
	if st.records == 0 {
		return nil, noSequences(in.name)
	}
	if st.records == 1 && st.store.total == 0 {
		// Reader takes an empty FASTQ record; MUMmer's refusal of one empty record is worded so.
		return nil, fmt.Errorf("%s: empty sequence in multiple fasta file", in.name)
	}
	return st.finish(opts), nil
}

// finish encodes the text.
func (st *streamRef) finish(opts *ReferenceOptions) *ReferenceText {
	code := opts.Encode(&st.seen)
	return &ReferenceText{Text: st.store.finish(code, opts.Threads), Starts: st.starts, Names: st.names}
}

// markSeen marks in seen the bytes of b.
func markSeen(b []byte, seen *[256]bool) {
	for _, c := range b {
		seen[c] = true
	}
}

// refChunker cuts a FASTA stream into chunks that each start outside a header line.
type refChunker struct {
	src   io.Reader
	size  int // bytes a chunk aims at
	carry []byte
	eof   bool
	rerr  error // the read error that ended the input
}

// next returns the next chunk, read into buf's memory (or new memory): at least size bytes
// unless the input ends, cut after its last position outside a header line. last says that the
// input ended with it, and err is the read error that ended it, if any.
func (c *refChunker) next(buf []byte) (data []byte, last bool, err error) {
	if cap(buf) < c.size {
		buf = make([]byte, 0, c.size)
	}
	buf = append(buf[:0], c.carry...)
	c.carry = c.carry[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)) // a header line longer than a chunk
		}
		c.fill(&buf)
		if c.eof || c.rerr != nil {
			return buf, true, c.rerr
		}
		if cut := lastCutFASTA(buf); cut > 0 {
			c.carry = append(c.carry, buf[cut:]...)
			return buf[:cut], false, nil
		}
	}
}

// fill reads into buf up to its capacity, until the end of the input or a read error (the bytes
// that came with it kept, as Reader keeps them).
func (c *refChunker) fill(buf *[]byte) {
	b := *buf
	for empty := 0; len(b) < cap(b); {
		n, err := c.src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			c.eof = true
			break
		}
		if err != nil {
			c.rerr = err
			break
		}
		if n == 0 {
			if empty++; empty > 100 {
				c.rerr = io.ErrNoProgress
				break
			}
		}
	}
	*buf = b
}

// lastCutFASTA returns the last position of b (which starts outside a header line) outside a
// header line, where the rest of an input can be parsed from (see cutFASTA), or 0.
func lastCutFASTA(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		switch b[i] {
		case '\n':
			return len(b)
		case '>':
			// A header line runs to the end of b: it started at the first '>' of its line.
			ls := bytes.LastIndexByte(b[:i], '\n') + 1
			return ls + bytes.IndexByte(b[ls:], '>')
		}
	}
	return len(b)
}

// refBlockSize is the size of the blocks that hold a streamed reference's folded bytes.
const refBlockSize = 16 << 20

// refStore holds a text of unknown length in blocks of memory outside Go's heap, so that at the
// end each block can be freed as soon as it has been encoded into the text: the memory stays near
// one byte a base, where a growing slice would need two and more.
type refStore struct {
	blocks []refBlock
	total  int
}

type refBlock struct {
	b    []byte
	n    int
	free func()
}

// room returns n bytes after the text to write to; commit adds those written.
func (s *refStore) room(n int) []byte {
	if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1].b)-s.blocks[len(s.blocks)-1].n < n {
		b, free := allocBlock(max(refBlockSize, n))
		s.blocks = append(s.blocks, refBlock{b: b, free: free})
	}
	last := &s.blocks[len(s.blocks)-1]
	room := last.b[last.n : last.n+n]
	populate(room, true)
	return room
}

// commit adds the first k bytes of the last room to the text.
func (s *refStore) commit(k int) {
	s.blocks[len(s.blocks)-1].n += k
	s.total += k
}

// finish returns the text encoded by code, on threads goroutines, freeing the blocks.
func (s *refStore) finish(code *[256]byte, threads int) []byte {
	text := make([]byte, s.total)
	offs := make([]int, len(s.blocks))
	for i := 1; i < len(s.blocks); i++ {
		offs[i] = offs[i-1] + s.blocks[i-1].n
	}
	forEach(threads, len(s.blocks), func(i int) {
		b := &s.blocks[i]
		dst := text[offs[i] : offs[i]+b.n]
		populate(dst, true)
		for j, c := range b.b[:b.n] {
			dst[j] = code[c]
		}
		b.free()
		b.free = nil
	})
	s.blocks = nil
	return text
}

// release frees the blocks that finish has not.
func (s *refStore) release() {
	for _, b := range s.blocks {
		if b.free != nil {
			b.free()
		}
	}
	s.blocks = nil
}
