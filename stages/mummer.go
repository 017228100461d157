package stages

import (
	"context"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/stream"
)

// MummerOptions are the options of `sapipe mummer`, MUMmer's and sapipe's own.
type MummerOptions struct {
	Mode             kernels.Mode
	MinLen           int
	NucleotidesOnly  bool // -n
	Strands          Strands
	ReversePositions bool // -c
	ShowString       bool // -s
	FourColumn       bool // -F
	ShowLen          bool // -L

	Threads   int // workers matching batches
	PageSize  int // reference page length; 0: whole reference
	BatchSize int // query bases per batch
	ChunkSize int // bytes of query input read at a time (see chunks.go); 0: twice BatchSize
	Progress  *Progress

	recordsOnly bool // tests: read every query a record at a time, as before chunks
}

// Mummer matches every record of the query files against ref with m and writes MUMmer text to w.
// A query path of "-" reads stdin.
//
// The queries are read in chunks of whole records (see chunks.go): one goroutine only reads and
// cuts, the workers parse, encode, match and format, and the sink writes each batch's text in
// order. Where a chunk cannot be parsed on its own (a record longer than a chunk, multi-line
// FASTQ, a malformed record, a read error), the rest of that file and the files after it are read
// one record at a time by formats.Reader, with the record and line numbers it would have had
// from the start, and long records are cut into pieces across batches.
func Mummer(ctx context.Context, opts MummerOptions, ref *kernels.Reference, m kernels.Matcher, queries []string, stdin io.Reader, w io.Writer) error {
	out := newOrderedOutput(w, min(max(opts.Threads, 1), 4))
	defer out.release() // on errors; the result's is checked below
	mw := formats.NewMummerWriter(nil, ref.Names, opts.FourColumn, opts.ShowLen, opts.ShowString)
	p := &printer{opts: &opts, ref: ref, out: mw}
	enc := kernels.NewQueryEncoder(&ref.Alpha, opts.NucleotidesOnly)
	start := time.Now()
	var records, bases int64
	// The bytes of the last batch formatted on a worker, and its bytes a match (in sixteenths).
	var outHint, matchHint atomic.Int64
	// A batch is formatted on the worker that matched it, except the pieces of a long record
	// under -mum, whose uniqueness is over the whole record: the sink formats those in order.
	// (Under the other modes a piece's lines depend on it alone, so a genome-long query's output,
	// hundreds of MB, is not formatted on one goroutine.)
	onWorker := func(b *QueryBatch) bool { return b.whole || opts.Mode != kernels.Mum }
	// -maxmatch lines without -s depend on one match each: the matcher may write them (a GPU
	// does, on the card, where a launch has many; the CPU's writes none).
	var asks *textAsks
	if _, onCPU := m.(*cpu.Matcher); opts.Mode == kernels.MaxMatch && !opts.ShowString && !onCPU {
		asks = &textAsks{lines: &kernels.Lines{Names: ref.Names, FourColumn: mw.FourColumn, ReversePositions: opts.ReversePositions}}
	}
	match := func(b *QueryBatch) error {
		asked := asks.ask(b, mw)
		if err := m.Match(&b.Batch, &b.Res); err != nil {
			return err
		}
		if asks.answered(asked, b.Res.HasText(len(b.Segs))) {
			return nil // written whole by the matcher: heads and lines
		}
		if onWorker(b) {
			wp := printer{opts: &opts, ref: ref, out: mw, mums: b.mums[:0], sub: b.sub}
			// A batch's buffer starts at its bytes a match (the last batch's) times its matches
			// where it holds less, rather than growing to it: a genome-long query's batches
			// print megabytes each, a repeat-rich stretch's tens of megabytes, and reads in a
			// satellite under -maxmatch hundreds (append's growth by a quarter copied them
			// over and over). A fresh batch (the pieces of a long record) also starts at the
			// size of the last output.
			perMatch := matchHint.Load()
			if perMatch == 0 {
				perMatch = int64(mw.LineBytes()) * 16
			}
			want := int64(len(b.Res.Matches)) * perMatch / 16
			if cap(b.Out) == 0 {
				want = max(want, outHint.Load())
			}
			if int64(cap(b.Out)) < want {
				b.Out = make([]byte, 0, want*9/8)
			}
			b.Out = wp.batch(b.Out[:0], b)
			b.mums, b.sub = wp.mums, wp.sub
			outHint.Store(int64(len(b.Out)))
			if n := len(b.Res.Matches); n > 0 {
				matchHint.Store(int64(len(b.Out)) * 16 / int64(n))
			}
		}
		return nil
	}
	write := func(b *QueryBatch, done func()) error {
		text := b.Out
		if b.Res.HasText(len(b.Segs)) {
			// The matcher's text, written from where it is and given back once written.
			text = b.Res.Text
			next := done
			done = func() {
				b.Res.ReleaseText()
				next()
			}
		} else if !onWorker(b) {
			b.Out = p.batch(b.Out[:0], b)
			text = b.Out
		}
		records += b.records
		bases += b.bases
		opts.Progress.Update(records, bases, time.Since(start))
		return out.write(text, done) // b may be reused from done on
	}
	// Two batches a worker keep every worker busy while the sink writes results in order; more
	// would only hold memory.
	window := stream.Options{Workers: opts.Threads, Window: 2*opts.Threads + 1}

	// Chunks from file from on, until one is refused; then a record reader reads the rest of that
	// file, and chunks go on at the next. (With recordsOnly, the record reader reads them all.)
	for from := 0; from < len(queries); {
		rest := &resumePoint{}
		last := len(queries)
		if !opts.recordsOnly {
			cs := newChunkSource(queries[from:], stdin, opts, enc, m)
			r, err := cs.run(ctx, window, match, write)
			cs.close()
			if err != nil {
				return err
			}
			if r == nil {
				break // every file read in chunks
			}
			rest, last = r, from+r.file+1
			rest.file += from
		}
		if err := readRecords(ctx, queries[:last], stdin, rest, opts, ref, window, match, write); err != nil {
			return err
		}
		from = last
	}
	opts.Progress.Done(records, bases, time.Since(start))
	return out.close()
}

// printer formats the results of batches in order.
type printer struct {
	opts *MummerOptions
	ref  *kernels.Reference
	out  *formats.MummerWriter
	mums []kernels.Match // -mum candidates of the sequence being printed
	sub  []byte
	// A read's matches, and most matches against a reference of few records, fall in the last
	// match's record again (no search then).
	recs recordCursor
}

// recordCursor is Reference.RecordOf remembering the last record found, for positions that
// mostly fall in it again. The zero value is ready.
type recordCursor struct {
	rec, lo, hi int // the last record and its text positions [lo, hi)
}

// of returns the record of ref that holds text position pos and the offset of pos inside it.
func (c *recordCursor) of(ref *kernels.Reference, pos int) (rec, off int) {
	if pos >= c.lo && pos < c.hi {
		return c.rec, pos - c.lo
	}
	rec, off = ref.RecordOf(pos)
	c.rec, c.lo, c.hi = rec, pos-off, ref.RecordEnd(rec)
	return rec, off
}

// textAsks decides which batches ask the matcher for their text (kernels.Batch.Lines). Asking
// costs the batch its heads and strands made first, 2-4% of the host's formatting where the
// matcher writes none (a GPU's launches of few matches: BenchmarkMummerHost), so once lostAsks
// batches in a row came back without text, only one in askAgain asks. (A GPU writes a launch's
// text only where all its batches asked, so a run whose first lostAsks batches got none mostly
// stays on the host's formatting after them.) A nil textAsks asks for none.
type textAsks struct {
	lines           *kernels.Lines
	batches, noText atomic.Int64
}

// lostAsks is how many batches in a row may ask for the matcher's text in vain before only one in
// askAgain asks.
const (
	lostAsks = 64
	askAgain = 64
)

// ask sets b up to ask for its text, or not, and says which: its Lines, each segment's strand and
// head (the header lines the printer would write before it, which it then copies).
func (a *textAsks) ask(b *QueryBatch, mw *formats.MummerWriter) bool {
	b.Lines = nil
	b.HeadEnds = b.HeadEnds[:0]
	if a == nil || a.noText.Load() >= lostAsks && a.batches.Add(1)%askAgain != 0 {
		return false
	}
	b.Lines = a.lines
	n := len(b.Info)
	b.Reverse, b.HeadEnds = slices.Grow(b.Reverse[:0], n)[:n], slices.Grow(b.HeadEnds[:0], n)[:n]
	heads := b.Heads[:0]
	for i := range b.Info {
		info := &b.Info[i]
		b.Reverse[i] = info.Reverse
		if info.First {
			heads = mw.AppendHeader(heads, info.Name, info.Reverse, b.Segs[i].Len)
		}
		b.HeadEnds[i] = len(heads)
	}
	b.Heads = heads
	return true
}

// answered counts a batch's answer and returns text: whether the matcher wrote its text.
func (a *textAsks) answered(asked, text bool) bool {
	switch {
	case a == nil:
	case text:
		a.noText.Store(0)
	case asked:
		a.noText.Add(1)
	}
	return text
}

// batch appends the text of b's results to dst. Where the batch's heads were made for the
// matcher (Batch.Heads), they are copied rather than made again.
func (p *printer) batch(dst []byte, b *QueryBatch) []byte {
	heads := len(b.HeadEnds) == len(b.Segs)
	for i, info := range b.Info {
		sg := b.Segs[i]
		switch {
		case heads:
			dst = append(dst, b.Head(i)...)
		case info.First:
			dst = p.out.AppendHeader(dst, info.Name, info.Reverse, sg.Len)
		}
		ms := b.Res.Seg(i)
		if p.opts.Mode == kernels.Mum {
			p.mums = append(p.mums, ms...)
			if !info.Last {
				continue
			}
			ms = kernels.FilterMums(p.mums)
			p.mums = p.mums[:0]
		}
		dst = p.matches(dst, ms, sg.Len, info.Reverse)
	}
	return dst
}

// partLines is the fewest matches of a segment formatted on a goroutine of their own.
const partLines = 1 << 16

// matches appends the lines of one segment's matches. Where they are many, parts of them are
// formatted on other goroutines at once: a long record's batch in a satellite array holds
// millions of -maxmatch matches, a hundred MB of text that its worker alone formatted while the
// rest of the run waited for it (the 150 Mbp pair at 1% divergence ended 0.16 s after its last
// batch was matched, on the lent H200).
func (p *printer) matches(dst []byte, ms []kernels.Match, qlen int, reverse bool) []byte {
	// The few matches of a read are formatted here before GOMAXPROCS is asked: it takes the
	// scheduler's lock, and asked for each of 200 M segments by 32 workers it was most of a run's
	// CPU time (100 M E. coli reads, -maxmatch -c, on the lent two-card machine: 80 s, not 7).
	if len(ms) < 2*partLines {
		for _, mt := range ms {
			dst = p.match(dst, mt, qlen, reverse)
		}
		return dst
	}
	parts := min(len(ms)/partLines, runtime.GOMAXPROCS(0))
	// This goroutine formats the first part into dst; the others each into a buffer of its own,
	// appended after it.
	texts := make([][]byte, parts)
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		part := ms[len(ms)*i/parts : len(ms)*(i+1)/parts]
		wg.Go(func() {
			q := printer{opts: p.opts, ref: p.ref, out: p.out}
			text := make([]byte, 0, len(part)*(p.out.LineBytes()+1))
			for _, mt := range part {
				text = q.match(text, mt, qlen, reverse)
			}
			texts[i] = text
		})
	}
	for _, mt := range ms[:len(ms)/parts] {
		dst = p.match(dst, mt, qlen, reverse)
	}
	wg.Wait()
	for _, text := range texts[1:] {
		dst = append(dst, text...)
	}
	return dst
}

func (p *printer) match(dst []byte, mt kernels.Match, qlen int, reverse bool) []byte {
	rec, off := p.recs.of(p.ref, int(mt.Ref))
	q := int(mt.Query) + 1
	if reverse && p.opts.ReversePositions {
		q = qlen - int(mt.Query)
	}
	if p.opts.ShowString {
		p.sub = p.sub[:0]
		for _, c := range p.ref.Text[mt.Ref : mt.Ref+int64(mt.Len)] {
			p.sub = append(p.sub, p.ref.Alpha.Byte[c])
		}
	}
	return p.out.AppendMatch(dst, rec, off+1, q, int(mt.Len), p.sub)
}

// openInput opens a sequence file, "-" meaning stdin.
func openInput(path string, stdin io.Reader) (*formats.Reader, error) {
	if path == "-" && stdin != nil {
		return formats.NewReader("-", stdin)
	}
	return formats.Open(path)
}

// readRecords matches the records of paths ("-": stdin) a record at a time (formats.Reader), from
// where rest says (its file, with its Reader, or the first file), with the pipeline's match and
// write.
func readRecords(ctx context.Context, paths []string, stdin io.Reader, rest *resumePoint, opts MummerOptions, ref *kernels.Reference,
	window stream.Options, match func(*QueryBatch) error, write func(b *QueryBatch, done func()) error) error {
	src := NewQuerySource(paths, &ref.Alpha, opts.Strands, opts.NucleotidesOnly, opts.BatchSize)
	src.Stdin, src.threads = stdin, opts.Threads
	if rest.rd != nil {
		src.resume(rest.file, rest.rd, rest.nrec)
	}
	defer src.Close()
	// The pieces of a long record share its codes and hold little until matched, and their
	// matching takes a hundred times longer in a repeat-rich stretch (millions of maximal
	// matches where other pieces have thousands): eight times as many of them are in
	// flight as of whole batches, so that the workers go on past a slow one rather than
	// wait for the sink to take it. Whole batches, which hold their reads, are bounded as
	// before.
	const pieceShare = 8
	pieces := stream.Options{Workers: window.Workers, Window: pieceShare * window.Window}
	cost := func(b *QueryBatch) int64 {
		if b.whole {
			return pieceShare
		}
		return 1
	}
	return stream.OrderedMapBudget(ctx, pieces, int64(pieces.Window), cost,
		func() (*QueryBatch, error) { return src.Next() },
		func(_ context.Context, b *QueryBatch) (*QueryBatch, error) {
			b.Encode(src.enc)
			return b, match(b)
		},
		func(b *QueryBatch) error { return write(b, func() {}) }) // src's batches are fresh ones, never recycled
}
