package stages

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// queryFiles writes one to three inputs of queryInput's records cut from ref, named
// prefix0.fq, prefix1.fq, ... in dir, the second of them given as stdin ("-") half the time.
func queryFiles(t *testing.T, rng *rand.Rand, dir, ref, prefix string) (paths []string, stdin string) {
	for f := range 1 + rng.IntN(3) {
		in := queryInput(rng, ref, 1+rng.IntN(40), rng.IntN(2) == 0, rng.IntN(2) == 0)
		if f == 1 && rng.IntN(2) == 0 {
			stdin, paths = in, append(paths, "-")
			continue
		}
		paths = append(paths, writeTemp(t, dir, fmt.Sprintf("%s%d.fq", prefix, f), in))
	}
	return paths, stdin
}

// compareChunkSizes runs a command record by record, then in chunks of many sizes (0: the
// default), and fails unless every run gives the same output and error; it reports whether the
// record-by-record run ended in an error.
func compareChunkSizes(t *testing.T, what string, run func(recordsOnly bool, chunk int) (out, err string)) bool {
	t.Helper()
	want, werr := run(true, 0)
	for _, chunk := range []int{0, 1, 2, 3, 5, 8, 13, 31, 64, 100, 333, 1000, 5000} {
		got, err := run(false, chunk)
		if err != werr || (werr == "" && got != want) {
			t.Fatalf("%s, chunks of %d: error %q, want %q; output equal: %v", what, chunk, err, werr, got == want)
		}
	}
	return werr != ""
}

// queryInput writes n query records drawn from the reference text (some reverse-complemented,
// some with changes) in one of the shapes sapipe reads: FASTA with one-line or wrapped sequences,
// four-line FASTQ, and now and then something Reader alone reads (multi-line FASTQ, blank lines,
// a long record) or a malformed record.
func queryInput(rng *rand.Rand, ref string, n int, fastq, odd bool) string {
	var b strings.Builder
	for i := range n {
		l := 1 + rng.IntN(120)
		if odd && rng.IntN(15) == 0 {
			l = 1 + rng.IntN(3000)
		}
		l = min(l, len(ref))
		a := rng.IntN(len(ref) - l + 1)
		s := []byte(ref[a : a+l])
		if rng.IntN(3) == 0 {
			s = []byte(revComp(string(s)))
		}
		for range rng.IntN(3) {
			s[rng.IntN(l)] = "ACGTN"[rng.IntN(5)]
		}
		eol := "\n"
		if odd && rng.IntN(10) == 0 {
			eol = "\r\n"
		}
		if fastq {
			fmt.Fprintf(&b, "@q%d d%s%s%s+%s%s%s", i, eol, s, eol, eol, strings.Repeat("I", l), eol)
			if odd && rng.IntN(20) == 0 {
				b.WriteString("\n")
			}
			if odd && rng.IntN(25) == 0 {
				fmt.Fprintf(&b, "@m%d%s%s%s%s%s+%s%s%s", i, eol, s[:l/2], eol, s[l/2:], eol, eol, strings.Repeat("I", l), eol)
			}
			continue
		}
		fmt.Fprintf(&b, ">q%d d%s", i, eol)
		w := []int{l, 60, 7}[rng.IntN(3)]
		for j := 0; j < l; j += w {
			fmt.Fprintf(&b, "%s%s", s[j:min(j+w, l)], eol)
		}
	}
	out := b.String()
	if odd && rng.IntN(2) == 0 && len(out) > 0 { // damage
		i := rng.IntN(len(out))
		switch {
		case fastq && rng.IntN(3) > 0: // a header or quality line broken: an error from here on
			if k := strings.Index(out[i:], "\n@"); k >= 0 {
				out = out[:i+k+1] + "x" + out[i+k+2:]
			} else {
				out = out[:i]
			}
		default:
			out = out[:i] + string("@+>\n"[rng.IntN(4)]) + out[i+1:]
		}
	}
	return out
}

// TestMummerChunks: queries read in chunks of any size (down to one byte, so that chunk
// boundaries fall everywhere) print what they print read a record at a time, and fail with the
// same error, in every mode, over several files and stdin, into a buffer and into a file.
func TestMummerChunks(t *testing.T) {
	defer func(from, window int64) { mappedOutputFrom, mappedOutputWindow = from, window }(mappedOutputFrom, mappedOutputWindow)
	mappedOutputFrom, mappedOutputWindow = 0, int64(os.Getpagesize())
	rng := rand.New(rand.NewPCG(12, 34))
	dir := t.TempDir()
	rounds, errs := 40, 0
	if testing.Short() {
		rounds = 10
	}
	for r := range rounds {
		fa, recs := randomFasta(rng, 1+rng.IntN(3), 4000)
		refPath := writeTemp(t, dir, "ref.fa", fa)
		ref, err := LoadReference(refPath, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := MummerOptions{
			Mode:    []kernels.Mode{kernels.MaxMatch, kernels.Mum, kernels.MumReference}[rng.IntN(3)],
			MinLen:  10 + rng.IntN(10),
			Strands: []Strands{{Forward: true}, {Reverse: true}, {Forward: true, Reverse: true}}[rng.IntN(3)],
			Threads: 1 + rng.IntN(3), BatchSize: []int{64, 1000, 1 << 19}[rng.IntN(3)],
		}
		opts.ReversePositions = opts.Strands.Reverse && rng.IntN(2) == 0
		opts.ShowString, opts.ShowLen, opts.FourColumn = rng.IntN(4) == 0, rng.IntN(2) == 0, rng.IntN(4) == 0
		m, err := cpu.New(2).NewMatcher(ref, kernels.MatchOptions{Mode: opts.Mode, MinLen: opts.MinLen})
		if err != nil {
			t.Fatal(err)
		}
		paths, stdin := queryFiles(t, rng, dir, strings.Join(recs, ""), "q")
		if compareChunkSizes(t, fmt.Sprintf("round %d (%+v)", r, opts), func(recordsOnly bool, chunk int) (string, string) {
			o := opts
			o.recordsOnly, o.ChunkSize = recordsOnly, chunk
			var out bytes.Buffer
			var w io.Writer = &out
			var f *os.File
			if r%2 == 1 && !recordsOnly { // a file: written at offsets, through mapped windows of a page
				if f, err = os.Create(filepath.Join(dir, "out")); err != nil {
					t.Fatal(err)
				}
				w = f
			}
			err := Mummer(context.Background(), o, ref, m, paths, strings.NewReader(stdin), w)
			if f != nil {
				f.Close()
				text, rerr := os.ReadFile(f.Name())
				if rerr != nil {
					t.Fatal(rerr)
				}
				out.Write(text)
			}
			if err != nil {
				return out.String(), err.Error()
			}
			return out.String(), ""
		}) {
			errs++
		}
		m.Close()
	}
	if errs < rounds/8 {
		t.Errorf("only %d of %d rounds tried errors", errs, rounds)
	}
}

// gateMatcher holds the first piece of a long query (the one whose first segment starts the
// record) until want later pieces have been matched, as a repeat-rich stretch's piece takes a
// hundred times longer than the others; it finds no matches.
type gateMatcher struct {
	want   int64
	others atomic.Int64
	opened chan struct{}
}

func (g *gateMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	if b.Segs[0].From == 0 {
		select {
		case <-g.opened:
		case <-time.After(20 * time.Second):
			return fmt.Errorf("the first piece waited for %d later ones; %d were matched", g.want, g.others.Load())
		}
	} else if g.others.Add(1) == g.want {
		close(g.opened)
	}
	for range b.Segs {
		res.Ends = append(res.Ends, len(res.Matches))
	}
	return nil
}

func (g *gateMatcher) Close() error { return nil }

// TestMummerPiecesPastSlowOne: while a long query's first piece is being matched, the workers go
// on with the pieces after it, many more of them than 2T+1 whole batches would allow.
func TestMummerPiecesPastSlowOne(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	ref, recs := loadRandomFasta(t, rng, dir, 1, 4000)
	// 50 batches of 64 bases, each of 16 pieces.
	query := writeTemp(t, dir, "q.fa", ">long\n"+strings.Repeat(recs[0], 3200/len(recs[0])+1)+"\n")
	opts := MummerOptions{Mode: kernels.MaxMatch, MinLen: 20, Strands: Strands{Forward: true}, Threads: 2, BatchSize: 64}
	g := &gateMatcher{want: 30, opened: make(chan struct{})}
	var out bytes.Buffer
	if err := Mummer(context.Background(), opts, ref, g, []string{query}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "> long\n") {
		t.Errorf("output %.40q, want the record's header", out.String())
	}
}

// TestPrinterParts: a segment with enough matches to be formatted in parts on several goroutines
// prints the lines one goroutine prints, in order, in every column layout and with -s.
func TestPrinterParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	rb := kernels.NewReferenceBuilder(false)
	for i := range 3 {
		seq := make([]byte, 5000+rng.IntN(5000))
		for k := range seq {
			seq[k] = "acgt"[rng.IntN(4)]
		}
		rb.Add(fmt.Sprintf("chr%d", i+1), seq)
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	starts := []int{0}
	for rec := range len(ref.Names) {
		starts = append(starts, ref.RecordEnd(rec))
	}
	for _, tc := range []struct {
		n                         int
		four, showLen, showString bool
	}{{3*partLines + 17, false, false, false}, {2 * partLines, true, true, false}, {5*partLines + 3, false, false, true}, {partLines + 1, true, false, false}} {
		ms := make([]kernels.Match, tc.n)
		for i := range ms {
			rec := rng.IntN(len(ref.Names))
			l := 1 + rng.IntN(40)
			pos := starts[rec] + rng.IntN(ref.RecordEnd(rec)-starts[rec]-l)
			ms[i] = kernels.Match{Ref: int64(pos), Query: int32(rng.IntN(1 << 27)), Len: int32(l)}
		}
		b := &QueryBatch{Info: []SegInfo{{Name: []byte("q1"), First: true, Last: true, Reverse: tc.n%2 == 1}}}
		b.Segs = []kernels.Segment{{Len: 1 << 27, To: 1 << 27}}
		b.Res.Matches, b.Res.Ends = ms, []int{len(ms)}
		opts := &MummerOptions{Mode: kernels.MaxMatch, ReversePositions: true, ShowString: tc.showString}
		mw := formats.NewMummerWriter(nil, ref.Names, tc.four, tc.showLen, tc.showString)
		got := (&printer{opts: opts, ref: ref, out: mw}).batch(nil, b)
		one := &printer{opts: opts, ref: ref, out: mw}
		want := mw.AppendHeader(nil, b.Info[0].Name, b.Info[0].Reverse, b.Segs[0].Len)
		for _, mt := range ms {
			want = one.match(want, mt, b.Segs[0].Len, b.Info[0].Reverse)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: %d bytes in parts, %d one by one; first difference at %d", tc, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// BenchmarkPrinterReads formats batches of reads' few matches (two strands of 4,096 reads, three
// matches each) on every core at once, as the workers of a run of short reads do: what is asked
// once a segment there is paid 200 M times for 100 M reads, under every worker's contention.
func BenchmarkPrinterReads(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	ref, seq := randomChr(b, rng, 1<<20)
	qb := &QueryBatch{}
	for r := range 4096 {
		for _, rev := range []bool{false, true} {
			name := []byte(fmt.Sprintf("read%d", r))
			qb.Info = append(qb.Info, SegInfo{Name: name, First: true, Last: true, Reverse: rev})
			qb.Segs = append(qb.Segs, kernels.Segment{Len: 150, To: 150})
			for range 3 {
				qb.Res.Matches = append(qb.Res.Matches, kernels.Match{Ref: int64(rng.IntN(len(seq) - 150)), Query: int32(rng.IntN(100)), Len: int32(20 + rng.IntN(30))})
			}
			qb.Res.Ends = append(qb.Res.Ends, len(qb.Res.Matches))
		}
	}
	opts := &MummerOptions{Mode: kernels.MaxMatch, ReversePositions: true}
	mw := formats.NewMummerWriter(nil, ref.Names, false, false, false)
	b.SetBytes(int64(len((&printer{opts: opts, ref: ref, out: mw}).batch(nil, qb))))
	b.RunParallel(func(pb *testing.PB) {
		var dst []byte
		for pb.Next() {
			dst = (&printer{opts: opts, ref: ref, out: mw}).batch(dst[:0], qb)
		}
	})
}

// stubMatcher answers every segment with one match at a place derived from its first codes,
// at once: what is left of a run is the host's part (reading, parsing, encoding, batching,
// formatting and writing in order), which bounds a run on the GPU of many short reads.
type stubMatcher struct{ n int64 }

func (s stubMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	for _, sg := range b.Segs {
		if sg.To > sg.From {
			h := int64(sg.Len)*2654435761 + int64(sg.From)
			res.Matches = append(res.Matches, kernels.Match{Ref: h % (s.n - 200), Query: int32(sg.From), Len: int32(min(sg.To-sg.From, 40))})
		}
		res.Ends = append(res.Ends, len(res.Matches))
	}
	return nil
}

func (stubMatcher) Close() error { return nil }

// BenchmarkMummerHost: 500 k reads of 150 bases (FASTQ, a file, named four times or once for every
// two threads, so that every worker has chunks) through Mummer with a matcher that takes no time,
// both strands, -maxmatch -c, the GPU path's workers and batches (twice the threads, four times
// the CPU's batch): the host's cost a read, the bound of a run on the cards.
func BenchmarkMummerHost(b *testing.B) {
	rng := rand.New(rand.NewPCG(31, 32))
	ref, seq := randomChr(b, rng, 1<<22)
	const reads = 500_000
	var fq bytes.Buffer
	for r := range reads {
		at := rng.IntN(len(seq) - 150)
		fmt.Fprintf(&fq, "@read%d/1\n%s\n+\n%s\n", r, seq[at:at+150], strings.Repeat("I", 150))
	}
	path := writeTemp(b, b.TempDir(), "reads.fq", fq.String())
	threads := runtime.GOMAXPROCS(0)
	paths := slices.Repeat([]string{path}, max(threads/2, 4))
	opts := MummerOptions{Mode: kernels.MaxMatch, MinLen: 20, Strands: Strands{Forward: true, Reverse: true}, ReversePositions: true,
		Threads: 2 * threads, BatchSize: 4 << 19}
	var out int64
	b.SetBytes(int64(fq.Len() * len(paths)))
	for b.Loop() {
		cw := &countWriter{}
		if err := Mummer(context.Background(), opts, ref, stubMatcher{n: int64(len(seq))}, paths, nil, cw); err != nil {
			b.Fatal(err)
		}
		out = cw.n
	}
	b.ReportMetric(float64(reads*len(paths))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mreads/s")
	b.ReportMetric(float64(out)/float64(reads*len(paths)), "B-out/read")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// randomChr returns a reference of one record, "chr", of n random bases, and the bases.
func randomChr(b *testing.B, rng *rand.Rand, n int) (*kernels.Reference, []byte) {
	seq := make([]byte, n)
	for k := range seq {
		seq[k] = "acgt"[rng.IntN(4)]
	}
	rb := kernels.NewReferenceBuilder(false)
	rb.Add("chr", seq)
	ref, err := rb.Build()
	if err != nil {
		b.Fatal(err)
	}
	return ref, seq
}

// TestMummerChunksAfterRefused: after a chunk refused in one file (a multi-line FASTQ record),
// the files after it are read in chunks again, not a record at a time, with the same output.
func TestMummerChunksAfterRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	dir := t.TempDir()
	ref, recs := loadRandomFasta(t, rng, dir, 2, 4000)
	all := strings.Join(recs, "")
	plain := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(queryInput(rng, all, 1, true, false))
		}
		return b.String()
	}
	odd := plain(50) + "@multi\nACGTACGTAC\nGTACGTACGT\n+\nIIIIIIIIII\nIIIIIIIIII\n" + plain(50)
	paths := []string{writeTemp(t, dir, "odd.fq", odd), writeTemp(t, dir, "plain.fq", plain(400))}
	opts := MummerOptions{Mode: kernels.MaxMatch, MinLen: 15, Strands: Strands{Forward: true, Reverse: true},
		Threads: 2, BatchSize: 2000, ChunkSize: 1000}
	m := cpuMatcher(t, ref, opts)
	var got, want bytes.Buffer
	before := chunksWritten.Load()
	if err := Mummer(context.Background(), opts, ref, m, paths, nil, &got); err != nil {
		t.Fatal(err)
	}
	chunks := chunksWritten.Load() - before
	o := opts
	o.recordsOnly = true
	if err := Mummer(context.Background(), o, ref, m, paths, nil, &want); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatal("output differs from the record reader's")
	}
	if st, _ := os.Stat(paths[1]); chunks < st.Size()/int64(opts.ChunkSize)-1 {
		t.Errorf("%d chunks written: the file after the refused one was not read in chunks", chunks)
	}
}

// codeMemMatcher is a matcher that gives batches' codes memory of its own (kernels.CodeMemory)
// once late calls have gone by (a GPU still loading its index gives Go's), and counts the batches
// matched in its memory and in Go's.
type codeMemMatcher struct {
	kernels.Matcher
	late        int
	mu          sync.Mutex
	bufs        map[*byte]bool
	calls       int
	inOwn, inGo int
}

func (c *codeMemMatcher) GrowCodes(codes []byte, n int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls++; c.calls <= c.late {
		return slices.Grow(codes, n)
	}
	var base *byte
	if cap(codes) > 0 {
		base = &codes[:1][0]
	}
	if c.bufs[base] && cap(codes)-len(codes) >= n {
		return codes
	}
	buf := make([]byte, len(codes), len(codes)+n+n/4+1)
	copy(buf, codes)
	delete(c.bufs, base)
	c.bufs[&buf[:1][0]] = true
	return buf
}

func (c *codeMemMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	c.mu.Lock()
	if len(b.Codes) > 0 && c.bufs[&b.Codes[0]] {
		c.inOwn++
	} else {
		c.inGo++
	}
	c.mu.Unlock()
	return c.Matcher.Match(b, res)
}

// TestMummerCodeMemory: with a matcher that holds the batches' codes (a GPU's pinned memory),
// chunks' batches are encoded into its memory, those made before it gave any move in when they
// are reused, and the output is the same as without.
func TestMummerCodeMemory(t *testing.T) {
	ref, path := readsCase(t, rand.New(rand.NewPCG(41, 42)), 2, 4000, 3000)
	opts := MummerOptions{Mode: kernels.MaxMatch, MinLen: 15, Strands: Strands{Forward: true, Reverse: true},
		Threads: 3, BatchSize: 4000, ChunkSize: 8000}
	m := cpuMatcher(t, ref, opts)
	var want, got bytes.Buffer
	if err := Mummer(context.Background(), opts, ref, m, []string{path}, nil, &want); err != nil {
		t.Fatal(err)
	}
	cm := &codeMemMatcher{Matcher: m, late: 5, bufs: map[*byte]bool{}}
	if err := Mummer(context.Background(), opts, ref, cm, []string{path}, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatal("output differs with the matcher's code memory")
	}
	if cm.inGo > cm.late || cm.inOwn < 5*cm.late {
		t.Errorf("%d batches matched in the matcher's memory, %d in Go's (%d calls before it gave any)", cm.inOwn, cm.inGo, cm.late)
	}
}

// readsCase writes a random reference of records records of up to n bases and a FASTQ file of
// reads drawn from it, and returns the loaded reference and the reads' path.
func readsCase(t *testing.T, rng *rand.Rand, records, n, reads int) (*kernels.Reference, string) {
	dir := t.TempDir()
	ref, recs := loadRandomFasta(t, rng, dir, records, n)
	var fq strings.Builder
	for range reads {
		fmt.Fprintf(&fq, "%s", queryInput(rng, strings.Join(recs, ""), 1, true, false))
	}
	return ref, writeTemp(t, dir, "q.fq", fq.String())
}

// cpuMatcher returns a CPU matcher of ref for opts' mode and length, closed when the test ends.
func cpuMatcher(t testing.TB, ref *kernels.Reference, opts MummerOptions) kernels.Matcher {
	m, err := cpu.New(2).NewMatcher(ref, kernels.MatchOptions{Mode: opts.Mode, MinLen: opts.MinLen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// loadRandomFasta writes randomFasta(rng, records, n) to dir's ref.fa and loads it.
func loadRandomFasta(t testing.TB, rng *rand.Rand, dir string, records, n int) (*kernels.Reference, []string) {
	fa, recs := randomFasta(rng, records, n)
	ref, err := LoadReference(writeTemp(t, dir, "ref.fa", fa), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ref, recs
}

// linesMatcher writes the text (heads and match lines) of every other batch that asks for it, as
// a GPU does on the card (kernels.Batch.Lines), the lines by fmt's "%8d", and lends it; it counts
// the batches whose text it wrote, and the texts given back.
type linesMatcher struct {
	kernels.Matcher
	ref          *kernels.Reference
	mu           sync.Mutex
	calls, lines int
	lent, back   int
}

func (l *linesMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	l.mu.Lock()
	l.calls++
	write := b.Lines != nil && l.calls%2 == 0
	if write {
		l.lines++
	}
	l.mu.Unlock()
	if !write {
		return l.Matcher.Match(b, res)
	}
	var r kernels.Result
	if err := l.Matcher.Match(b, &r); err != nil {
		return err
	}
	f := b.Lines
	for i, sg := range b.Segs {
		res.Text = append(res.Text, b.Head(i)...)
		for _, m := range r.Seg(i) {
			rec, off := l.ref.RecordOf(int(m.Ref))
			if f.FourColumn {
				res.Text = fmt.Appendf(res.Text, "  %-*s  ", f.NameWidth(), f.Names[rec])
			}
			q := int(m.Query) + 1
			if b.Reverse[i] && f.ReversePositions {
				q = sg.Len - int(m.Query)
			}
			res.Text = fmt.Appendf(res.Text, "%8d  %8d  %8d\n", off+1, q, m.Len)
		}
		res.TextEnds = append(res.TextEnds, len(res.Text))
		res.Ends = append(res.Ends, len(res.Matches))
	}
	// Lent, as a GPU lends its pinned buffer: the caller must give it back once written.
	l.mu.Lock()
	l.lent++
	l.mu.Unlock()
	res.Release = func() {
		l.mu.Lock()
		l.back++
		l.mu.Unlock()
	}
	return nil
}

// TestMummerMatcherLines: where the matcher writes a batch's match lines (a GPU, on the card),
// the output is the same as where the printer formats its matches: -maxmatch with and without
// -c, one record and several, -F; and no lines are asked for under the other modes or -s.
func TestMummerMatcherLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, records := range []int{1, 3} {
		ref, path := readsCase(t, rng, records, 3000, 400)
		for _, c := range []struct {
			mode           kernels.Mode
			rev, four, sub bool
		}{{kernels.MaxMatch, false, false, false}, {kernels.MaxMatch, true, false, false}, {kernels.MaxMatch, true, true, false},
			{kernels.MaxMatch, true, false, true}, {kernels.MumReference, true, false, false}} {
			opts := MummerOptions{Mode: c.mode, MinLen: 12, Strands: Strands{Forward: true, Reverse: true},
				ReversePositions: c.rev, FourColumn: c.four, ShowString: c.sub, Threads: 3, BatchSize: 3000, ChunkSize: 6000}
			m := cpuMatcher(t, ref, opts)
			var want, got bytes.Buffer
			if err := Mummer(context.Background(), opts, ref, m, []string{path}, nil, &want); err != nil {
				t.Fatal(err)
			}
			lm := &linesMatcher{Matcher: m, ref: ref}
			if err := Mummer(context.Background(), opts, ref, lm, []string{path}, nil, &got); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%d records %+v", records, c)
			if got.String() != want.String() {
				i := firstDiff(got.Bytes(), want.Bytes())
				t.Fatalf("%s: output differs at byte %d: %q, want %q", what, i, got.Bytes()[i:min(i+80, got.Len())], want.Bytes()[i:min(i+80, want.Len())])
			}
			if asked := c.mode == kernels.MaxMatch && !c.sub; (lm.lines > 0) != asked || asked && lm.lines < 2 {
				t.Errorf("%s: lines written for %d of %d batches", what, lm.lines, lm.calls)
			}
			if lm.back != lm.lent {
				t.Errorf("%s: %d texts lent, %d given back", what, lm.lent, lm.back)
			}
		}
	}
}

// askMatcher counts the batches that ask for their text (Batch.Lines) and writes none.
type askMatcher struct {
	kernels.Matcher
	calls, asked atomic.Int64
}

func (a *askMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	a.calls.Add(1)
	if b.Lines != nil {
		a.asked.Add(1)
	}
	return a.Matcher.Match(b, res)
}

// TestMummerAsksForText: batches ask for the matcher's text while it writes some; once lostAsks
// in a row got none (the CPU's matcher), one in askAgain asks. The output is the same either way.
func TestMummerAsksForText(t *testing.T) {
	ref, path := readsCase(t, rand.New(rand.NewPCG(45, 46)), 1, 3000, 10000)
	opts := MummerOptions{Mode: kernels.MaxMatch, MinLen: 12, Strands: Strands{Forward: true, Reverse: true}, Threads: 2, BatchSize: 400, ChunkSize: 2000}
	m := cpuMatcher(t, ref, opts)
	var want, got bytes.Buffer
	if err := Mummer(context.Background(), opts, ref, m, []string{path}, nil, &want); err != nil {
		t.Fatal(err)
	}
	am := &askMatcher{Matcher: m}
	if err := Mummer(context.Background(), opts, ref, am, []string{path}, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatal("output differs")
	}
	calls, asked := am.calls.Load(), am.asked.Load()
	inFlight := int64(2*(2*opts.Threads+1) + 2)
	if calls < 4*lostAsks || asked < lostAsks || asked > lostAsks+inFlight+calls/askAgain+1 {
		t.Errorf("%d of %d batches asked for text", asked, calls)
	}
	// A matcher that writes text is asked for it every time.
	lm := &linesMatcher{Matcher: m, ref: ref}
	got.Reset()
	if err := Mummer(context.Background(), opts, ref, lm, []string{path}, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || lm.calls < 4*lostAsks || 2*lm.lines < lm.calls-1 || lm.back != lm.lent {
		t.Errorf("a matcher writing every other batch's text: %d calls, %d written, %d lent, %d back; output same %v",
			lm.calls, lm.lines, lm.lent, lm.back, got.String() == want.String())
	}
}
