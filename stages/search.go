package stages

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/stream"
)

// SearchOptions are the options of `sapipe count` and `sapipe locate`.
type SearchOptions struct {
	Strands   Strands // which strands of each pattern are searched
	Locate    bool    // print every occurrence, not only their number
	Threads   int     // workers searching batches
	BatchSize int     // pattern bases per batch
	ChunkSize int     // bytes of input a batch: one-pattern-a-line 0: BatchSize; FASTA/FASTQ 0: twice BatchSize

	recordsOnly bool // tests: read FASTA and FASTQ a record at a time, as before chunks
	Progress    *Progress
}

// PatternBatch is a unit of search work: a run of records as read, their encoded patterns (one
// per strand searched, forward first), the hits, and the lines of the table that print them.
// Everything but reading is done on a worker: Parse, Encode, then the search, then Format.
type PatternBatch struct {
	Data  []byte         // the records' bytes: a run of input lines, or names and sequences copied from records
	Names []formats.Span // record i's name is Data[Names[i].From:Names[i].To]
	Seqs  []formats.Span // record i's sequence is Data[Seqs[i].From:Seqs[i].To]
	Pats  kernels.Patterns
	// starts: for a search of letters, where each pattern starts in Pats.Codes, which is Data.
	starts []int
	Hits   kernels.Hits
	Out    []byte // the batch's lines of the count or locate table
	prefix []byte // Format's: the start of the locate lines of one pattern in one record

	Records, Bases int64 // in this batch, once parsed

	src   *PatternSource
	lines bool // Data is a run of whole lines of one-pattern-a-line input, not yet cut (Parse)
	view  bool // Data is a run of a mapped file (formats.PatternReader.ReadLines), read-only

	// A chunk of FASTA or FASTQ records (see formats.ChunkReader), parsed by Parse into Data.
	chunk      formats.Chunk
	isChunk    bool
	refused    bool // ParseChunk refused the chunk: a Reader is to read from it on
	file       int  // the chunk's file, in the source's paths
	newlines   int  // in the chunk
	chunkFrom  *formats.ChunkReader
	scratch    []byte
	blockChunk // or the chunk is a block of a file, read and cut on the worker
}

// Parse cuts a run of lines into records; a batch of records read one by one is left as it is.
func (b *PatternBatch) Parse() {
	if b.isChunk {
		b.parseChunk()
	}
	if b.lines {
		b.Seqs = formats.PatternLines(b.Seqs[:0], b.Data)
		b.Names = append(b.Names[:0], b.Seqs...) // a line's name is its pattern
		b.lines = false
	}
	b.Records, b.Bases = int64(len(b.Seqs)), 0
	for _, sp := range b.Seqs {
		b.Bases += int64(sp.To - sp.From)
	}
}

// Encode encodes the batch's records into Pats, against the source's alphabet and strands; for
// a search of letters (see lettersSearcher) it leaves them where they are, in Data: Pats.Codes
// is Data, and starts and Pats.Ends say where the patterns are.
func (b *PatternBatch) Encode() {
	s := b.src
	if s.letters {
		b.Pats.Codes, b.Pats.Ends, b.starts = b.Data, b.Pats.Ends[:0], b.starts[:0]
		for _, sp := range b.Seqs {
			b.starts = append(b.starts, sp.From)
			b.Pats.Ends = append(b.Pats.Ends, sp.To)
		}
		return
	}
	b.Pats.Reset()
	fwd, rev := &s.codes[0], &s.codes[1]
	if need := s.strands.count() * len(b.Data); len(b.Seqs) > 0 && cap(b.Pats.Codes) < need {
		// Every strand's codes at once (the patterns' bytes lie in Data without overlapping).
		b.Pats.Codes = make([]byte, 0, need)
	}
	for _, sp := range b.Seqs {
		seq := b.Data[sp.From:sp.To]
		if s.strands.Forward {
			n := len(b.Pats.Codes)
			b.Pats.Codes = slices.Grow(b.Pats.Codes, len(seq))[:n+len(seq)]
			encodeForward(b.Pats.Codes[n:], seq, fwd)
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
		if s.strands.Reverse {
			n := len(b.Pats.Codes)
			b.Pats.Codes = slices.Grow(b.Pats.Codes, len(seq))[:n+len(seq)]
			encodeReverse(b.Pats.Codes[n:], seq, rev)
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
	}
}

// encodeForward sets out[i] to the code t[seq[i]], eight bytes a step without bounds checks.
func encodeForward(out, seq []byte, t *[256]byte) {
	out = out[:len(seq)]
	i := 0
	for ; i+8 <= len(seq); i += 8 {
		s, o := seq[i:i+8:i+8], out[i:i+8:i+8]
		o[0], o[1], o[2], o[3] = t[s[0]], t[s[1]], t[s[2]], t[s[3]]
		o[4], o[5], o[6], o[7] = t[s[4]], t[s[5]], t[s[6]], t[s[7]]
	}
	for ; i < len(seq); i++ {
		out[i] = t[seq[i]]
	}
}

// encodeReverse sets out to the codes t of seq in reverse order: the reverse complement with
// t the complemented codes.
func encodeReverse(out, seq []byte, t *[256]byte) {
	n := len(seq)
	out = out[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		s, o := seq[i:i+8:i+8], out[n-i-8:n-i:n-i]
		o[7], o[6], o[5], o[4] = t[s[0]], t[s[1]], t[s[2]], t[s[3]]
		o[3], o[2], o[1], o[0] = t[s[4]], t[s[5]], t[s[6]], t[s[7]]
	}
	for ; i < n; i++ {
		out[n-1-i] = t[seq[i]]
	}
}

// Format writes the batch's lines of the count table, or with locate of the locate table, to Out
// (see formats.HitWriter): ref names the occurrences' sequences.
func (b *PatternBatch) Format(ref *kernels.Reference, locate bool) {
	st := b.src.strands
	perRecord := 0
	var strands [2]byte
	if st.Forward {
		strands[perRecord] = '+'
		perRecord++
	}
	if st.Reverse {
		strands[perRecord] = '-'
		perRecord++
	}
	out := b.Out[:0]
	if !locate {
		// The names lie in Data without overlapping: room for them and for the counts at once.
		out = slices.Grow(out, len(b.Data)+16*len(b.Names))
	} else {
		// Room for every line at once, each at most its name and the longest of the rest.
		// (A fresh buffer where it is too small: growing would copy the last batch's lines.)
		need, from := len(b.Hits.Pos)*b.src.locateMost+8, 0 // 8: appendDecimal's word
		for r, sp := range b.Names {
			to := b.Hits.PosEnds[(r+1)*perRecord-1]
			need += (to - from) * (sp.To - sp.From)
			from = to
		}
		if cap(out) < need {
			out = make([]byte, 0, need)
		}
	}
	var recs recordCursor
	prefix := b.prefix
	for r, sp := range b.Names {
		name := b.Data[sp.From:sp.To]
		if !locate {
			n := 0
			for k := range perRecord {
				n += int(b.Hits.Count[r*perRecord+k])
			}
			out = formats.AppendCount(out, name, n)
			continue
		}
		for k, strand := range strands[:perRecord] {
			// A strand's positions ascend: most fall in the record of the one before, whose
			// lines start alike (the pattern's name and the record's).
			last := -1
			for _, pos := range b.Hits.Positions(r*perRecord + k) {
				rec, off := recs.of(ref, int(pos))
				if rec != last {
					prefix, last = formats.AppendLocatePrefix(prefix[:0], name, ref.Names[rec]), rec
				}
				out = formats.AppendLocateAt(out, prefix, off+1, strand)
			}
		}
	}
	b.Out, b.prefix = out, prefix
}

// locateLineMost is the most bytes of a locate line (formats.AppendLocate) besides the pattern's
// name, against ref: the longest record name, the most digits of a position, tabs, strand and
// newline.
func locateLineMost(ref *kernels.Reference) int {
	name, length := 0, 0
	for i, n := range ref.Names {
		name = max(name, len(n))
		length = max(length, ref.RecordEnd(i)-ref.Starts[i])
	}
	return name + len(strconv.Itoa(length)) + 5
}

// lettersSearcher is a searcher that takes the patterns' bytes as read, without encoding them,
// over an index of a, c, g and t (cpu.Searcher.SearchLetters): the forward strand only.
type lettersSearcher interface {
	SearchLetters(b *kernels.Patterns, starts []int, locate bool, h *kernels.Hits) error
}

// isACGT reports whether the matchable bytes of a are a, c, g and t alone.
func isACGT(a *kernels.Alphabet) bool {
	return a.Size == kernels.FirstCode+4 && string(a.Byte[kernels.FirstCode:a.Size]) == "acgt"
}

// codeTables returns the code of each byte as kernels.EncodeQuery encodes it, on the forward
// strand and complemented, so that a batch is encoded by one lookup a byte.
func codeTables(alpha *kernels.Alphabet, nucleotidesOnly bool) (t [2][256]byte) {
	for c := range 256 {
		t[0][c] = kernels.EncodeQuery(nil, []byte{byte(c)}, alpha, false, nucleotidesOnly)[0]
		t[1][c] = kernels.EncodeQuery(nil, []byte{byte(c)}, alpha, true, nucleotidesOnly)[0]
	}
	return t
}

// PatternSource reads pattern files in order and cuts them into PatternBatches. One-pattern-a-line
// input is only read here, in runs of whole lines of about ChunkSize bytes, which Parse cuts on a
// worker; FASTA and FASTQ records are read here one by one.
type PatternSource struct {
	paths     []string
	alpha     *kernels.Alphabet
	strands   Strands
	nucOnly   bool
	batchSize int
	Stdin     io.Reader // read for the path "-"; nil: os.Stdin
	ChunkSize int       // bytes of one-pattern-a-line input a batch; 0: the batch size

	file  int
	rd    *formats.PatternReader
	lines bool         // rd is of one-pattern-a-line input
	pool  sync.Pool    // *PatternBatch, emptied, their buffers kept
	codes [2][256]byte // code of each byte, forward and complemented (codeTables)
	// letters: Encode leaves the patterns' bytes as they are, for a lettersSearcher, instead of
	// encoding them.
	letters bool
	// mappings releases the mapped files read, once no batch holds a run of them.
	mappings []func() error
	chunks
	recordsOnly bool
	locateMost  int // locateLineMost of the reference, for Format
}

// NewPatternSource returns a source of the patterns in paths ("-" is stdin), encoded against
// alpha (nucleotidesOnly as the index was built), batchSize pattern bases a batch.
func NewPatternSource(paths []string, alpha *kernels.Alphabet, strands Strands, nucleotidesOnly bool, batchSize int) *PatternSource {
	return &PatternSource{paths: paths, alpha: alpha, strands: strands, nucOnly: nucleotidesOnly, batchSize: max(batchSize, 1),
		codes: codeTables(alpha, nucleotidesOnly)}
}

// release unmaps the files read that were mapped, once no batch is in use.
func (s *PatternSource) release() {
	for _, f := range s.mappings {
		f()
	}
	s.mappings = nil
}

// Close closes the file being read.
func (s *PatternSource) Close() error {
	if s.rd == nil {
		return nil
	}
	err := s.rd.Close()
	s.rd = nil
	return err
}

// Recycle hands back a batch that is no longer used, so that a later one reuses its buffers.
func (s *PatternSource) Recycle(b *PatternBatch) {
	if s.letters {
		b.Pats.Codes = nil // Data's, not to be appended to
	}
	if b.view {
		b.Data, b.view = nil, false // the file's memory, not to be written to
	}
	b.Pats.Reset()
	b.Data, b.Names, b.Seqs, b.Out = b.Data[:0], b.Names[:0], b.Seqs[:0], b.Out[:0]
	b.Records, b.Bases, b.lines = 0, 0, false
	b.isChunk, b.refused, b.chunkFrom, b.blk = false, false, nil, nil
	b.Hits.Reset()
	s.pool.Put(b)
}

// Next returns the next batch, or io.EOF. ctx ends a wait (see chunks).
func (s *PatternSource) Next(ctx context.Context) (*PatternBatch, error) {
	if s.stopped {
		<-ctx.Done() // the sink refuses the Odd chunk and stops the pipeline
		return nil, ctx.Err()
	}
	b, _ := s.pool.Get().(*PatternBatch)
	if b == nil {
		b = &PatternBatch{src: s}
	}
	bases := 0
	chunkSize := s.ChunkSize
	if chunkSize <= 0 {
		chunkSize = 2 * s.batchSize // about a batch's bases of FASTQ
	}
	for bases < s.batchSize {
		if s.blocks.bf != nil {
			if len(b.Seqs) > 0 {
				break // records read one by one end the batch; a block is a batch of its own
			}
			bf, i, ok, err := s.blocks.nextBlock(ctx, &s.chunkLedger, s.paths, s.file)
			if err != nil {
				return nil, err
			}
			if !ok {
				s.file++
				continue
			}
			b.blk, b.blkIdx, b.isChunk, b.file = bf, i, true, s.file
			return b, nil
		}
		if s.rd == nil {
			if s.file == len(s.paths) {
				break
			}
			if !s.recordsOnly {
				if ok, err := s.blocks.openBlocks(s.paths[s.file], chunkSize); err != nil {
					return nil, err
				} else if ok {
					continue
				}
			}
			rd, err := formats.OpenPatterns(s.paths[s.file], s.Stdin)
			if err != nil {
				return nil, err
			}
			s.rd, s.lines = rd, rd.Format() == "lines"
			if release := rd.KeepMapping(); release != nil {
				s.mappings = append(s.mappings, release) // batches hold runs of it until the end
			}
			if !s.lines && !s.recordsOnly {
				s.cr = rd.Chunks(chunkSize)
			}
		}
		if s.cr != nil {
			if len(b.Seqs) > 0 {
				break
			}
			ch, err := s.cr.Next(b.chunk.Data)
			if errors.Is(err, io.EOF) {
				// See chunks: the file's chunks are all written before the next file is opened.
				if err := s.waitDrained(ctx); err != nil {
					return nil, err
				}
				s.cr = nil
				s.Close()
				s.file++
				continue
			}
			if err != nil {
				return nil, err
			}
			b.chunk, b.isChunk, b.chunkFrom, b.file = ch, true, s.cr, s.file
			s.handOut(b.chunk.Data)
			s.stopped = ch.Odd
			return b, nil
		}
		if s.lines {
			if len(b.Seqs) > 0 {
				break // records read one by one end the batch; a run of lines has its own
			}
			size := s.ChunkSize
			if size <= 0 {
				size = s.batchSize
			}
			data, err := s.rd.ReadLines(b.Data, size)
			if err == nil {
				b.Data, b.lines, b.view = data, true, s.rd.Mapped()
				return b, nil
			}
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			s.Close()
			s.file++
			continue
		}
		rec, err := s.rd.Next()
		if errors.Is(err, io.EOF) {
			s.Close()
			s.file++
			continue
		}
		if err != nil {
			return nil, err
		}
		n := len(b.Data)
		b.Data = append(b.Data, rec.Name...)
		b.Names = append(b.Names, formats.Span{From: n, To: len(b.Data)})
		n = len(b.Data)
		b.Data = append(b.Data, rec.Seq...)
		b.Seqs = append(b.Seqs, formats.Span{From: n, To: len(b.Data)})
		bases += len(rec.Seq) + 16 // a pattern costs a little whatever its length
	}
	if len(b.Seqs) == 0 {
		return nil, io.EOF
	}
	return b, nil
}

// Search searches every pattern of the files in paths with s, over the reference of ix, and
// writes the count or locate table (see formats.HitWriter) to w in input order. Reading the input
// is the only step on one goroutine (but plain FASTA and FASTQ files, which the workers read in
// blocks); cutting it into patterns, encoding, searching and formatting run on the workers, and
// the sink writes each batch's text in order. FASTA and FASTQ are read in
// chunks of whole records while formats.ParseChunk accepts them; from the first chunk it refuses,
// the pipeline is stopped once everything before is written, and the rest of that file is read
// a record at a time by formats.Reader, with the record and line numbers it would have had.
func Search(ctx context.Context, opts SearchOptions, ix *Index, s kernels.Searcher, paths []string, stdin io.Reader, w io.Writer) error {
	src := NewPatternSource(paths, &ix.Ref.Alpha, opts.Strands, ix.NucleotidesOnly, opts.BatchSize)
	src.Stdin, src.ChunkSize, src.recordsOnly = stdin, opts.ChunkSize, opts.recordsOnly
	search := func(b *PatternBatch) error { return s.Search(&b.Pats, opts.Locate, &b.Hits) }
	if ls, ok := s.(lettersSearcher); ok && opts.Strands == (Strands{Forward: true}) && isACGT(&ix.Ref.Alpha) {
		src.letters = true
		search = func(b *PatternBatch) error { return ls.SearchLetters(&b.Pats, b.starts, opts.Locate, &b.Hits) }
	}
	defer src.release()
	defer src.Close()
	defer src.blocks.closeAll()
	ref := ix.Ref
	if opts.Locate {
		src.locateMost = locateLineMost(ref)
	}
	start := time.Now()
	var records, bases int64
	threads := max(opts.Threads, 1)
	out := newOrderedOutput(w, min(threads, 4))
	defer out.release() // on errors; the result's is checked below
	for {
		ctx, cancel := context.WithCancel(ctx)
		var cause error
		var once sync.Once
		fail := func(err error) error {
			once.Do(func() { cause = err })
			cancel() // the source may be waiting on ctx
			return err
		}
		err := stream.OrderedMap(ctx, stream.Options{Workers: threads, Window: 2*threads + 1},
			func() (*PatternBatch, error) { return src.Next(ctx) },
			func(_ context.Context, b *PatternBatch) (*PatternBatch, error) {
				work := func() error {
					b.Parse()
					if b.refused || len(b.Seqs) == 0 {
						b.Out = b.Out[:0]
						return nil
					}
					b.Encode()
					if err := search(b); err != nil {
						return fail(err)
					}
					b.Format(ref, opts.Locate)
					return nil
				}
				var err error
				if b.blk != nil {
					err = b.cutBlock(&b.chunk, work) // parseChunk reads the chunk from the file's mapping
				} else {
					err = work()
				}
				if err != nil {
					return nil, err
				}
				return b, nil
			},
			func(b *PatternBatch) error {
				if b.blk != nil && !src.blocks.follows(&b.blockChunk) {
					b.refused = true // not where the chunk before ended (the file changed)
				}
				if b.refused {
					src.refusedBatch = b
					return fail(errRefused)
				}
				records += b.Records
				bases += b.Bases
				src.written(b)
				opts.Progress.Update(records, bases, time.Since(start))
				if err := out.write(b.Out, func() { src.Recycle(b) }); err != nil {
					return fail(err)
				}
				return nil
			})
		cancel()
		if cause != nil && cause != errRefused {
			return cause
		}
		if src.refusedBatch == nil {
			if err != nil {
				return err
			}
			break
		}
		if err := src.resume(); err != nil {
			return err
		}
	}
	opts.Progress.Done(records, bases, time.Since(start))
	return out.close()
}
