package cuda

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// The GPU matcher against kernels/cpu's (itself tested against a brute-force oracle): identical
// results for every mode, page size, piece length, launch size and memory budget.

var allModes = []kernels.Mode{kernels.MaxMatch, kernels.MumReference, kernels.Mum}

// queryBatch encodes seqs (both strands when both) into one batch whose segments are cut every cut
// positions, the way stages cuts long sequences.
func queryBatch(seqs [][]byte, a *kernels.Alphabet, both, nucOnly bool, cut int) *kernels.Batch {
	b := &kernels.Batch{}
	for _, s := range seqs {
		for _, rev := range []bool{false, true} {
			if rev && !both {
				continue
			}
			off := len(b.Codes)
			b.Codes = kernels.EncodeQuery(b.Codes, s, a, rev, nucOnly)
			for f := 0; ; f += cut {
				to := min(f+cut, len(s))
				b.Segs = append(b.Segs, kernels.Segment{Off: off, Len: len(s), From: f, To: to})
				if to >= len(s) {
					break
				}
			}
		}
	}
	return b
}

// compareMatch runs batch b through both matchers and fails on the first difference.
func compareMatch(t *testing.T, what string, want, got kernels.Matcher, b *kernels.Batch) int {
	t.Helper()
	var wr, gr kernels.Result
	if err := want.Match(b, &wr); err != nil {
		t.Fatalf("%s: CPU: %v", what, err)
	}
	gr.Matches = append(gr.Matches, kernels.Match{Ref: -1}) // results are appended to what is there
	gr.Ends = append(gr.Ends, 1)
	if err := got.Match(b, &gr); err != nil {
		t.Fatalf("%s: GPU: %v", what, err)
	}
	gr.Matches = gr.Matches[1:]
	gr.Ends = gr.Ends[1:]
	for i := range gr.Ends {
		gr.Ends[i]--
	}
	if len(gr.Ends) != len(wr.Ends) {
		t.Fatalf("%s: %d segment ends, want %d", what, len(gr.Ends), len(wr.Ends))
	}
	for i := range wr.Ends {
		w, g := wr.Seg(i), gr.Seg(i)
		if !slices.Equal(w, g) {
			sg := b.Segs[i]
			for k := 0; k < max(len(w), len(g)); k++ {
				var wm, gm kernels.Match
				if k < len(w) {
					wm = w[k]
				}
				if k < len(g) {
					gm = g[k]
				}
				if wm != gm {
					t.Fatalf("%s: segment %d (len %d, [%d,%d)): %d matches, want %d; first difference at %d: got %+v, want %+v",
						what, i, sg.Len, sg.From, sg.To, len(g), len(w), k, gm, wm)
				}
			}
		}
	}
	return len(wr.Matches)
}

// randomReference makes a reference of a few records with pasted repeats, runs of n and, with
// iupac, other letters; it returns the reference and its concatenated bases.
func randomReference(rng *rand.Rand, records, maxLen int, nucOnly, iupac bool) (*kernels.Reference, []byte) {
	b := kernels.NewReferenceBuilder(nucOnly)
	var all []byte
	for r := range records {
		s := randomSeq(rng, rng.IntN(maxLen+1), "acgt")
		if len(all) > 20 && rng.IntN(2) == 0 {
			k := rng.IntN(len(all) - 10)
			s = append(s, all[k:k+rng.IntN(len(all)-k)]...)
		}
		if rng.IntN(4) == 0 {
			s = append(s, "nnnnnnnnnn"...)
		}
		if iupac && len(s) > 0 {
			for range 1 + len(s)/50 {
				s[rng.IntN(len(s))] = "ryswkmn"[rng.IntN(7)]
			}
		}
		all = append(all, s...)
		b.Add(fmt.Sprint("r", r), s)
	}
	ref, err := b.Build()
	if err != nil {
		return nil, nil
	}
	return ref, all
}

func randomSeq(rng *rand.Rand, n int, alpha string) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.IntN(len(alpha))]
	}
	return b
}

func mutateSeq(rng *rand.Rand, s []byte, rate float64) []byte {
	out := slices.Clone(s)
	for i := range out {
		if rng.Float64() < rate {
			out[i] = "acgtn"[rng.IntN(5)]
		}
	}
	return out
}

// newTestMatcher builds a GPU matcher with cfg, failing the test on an error.
func newTestMatcher(t testing.TB, b *Backend, ref *kernels.Reference, opts kernels.MatchOptions, cfg matchConfig) *gpuMatcher {
	t.Helper()
	m, err := newMatcher(b, ref, opts, cfg, nil)
	if err != nil {
		t.Fatalf("GPU matcher (%+v, %+v): %v", opts, cfg, err)
	}
	return m
}

// TestGPUMatcherRandom: random references and queries, all modes, page sizes, cuts, piece lengths,
// lookaheads (launches done again with more of a sequence) and tiny output chunks.
func TestGPUMatcherRandom(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(11, 12))
	iters := 120
	if testing.Short() {
		iters = 30
	}
	total, relaunches, linked := 0, int64(0), int64(0)
	for iter := range iters {
		nucOnly := iter%5 == 0
		maxLen := 300
		if iter%7 == 0 {
			maxLen = 900 // LCP values past the compact LCP's escape value
		}
		ref, all := randomReference(rng, 1+rng.IntN(3), maxLen, nucOnly, iter%3 == 0)
		if ref == nil {
			continue
		}
		var seqs [][]byte
		for range 1 + rng.IntN(6) {
			src := mutateSeq(rng, all, 0.03)
			if len(src) > 50 && rng.IntN(2) == 0 {
				src = src[rng.IntN(len(src)/2):]
			}
			if len(src) > 80 && rng.IntN(2) == 0 {
				src = src[:rng.IntN(len(src))]
			}
			seqs = append(seqs, src)
		}
		seqs = append(seqs, nil) // an empty sequence: no positions, one segment end
		minLen := 1 + rng.IntN(25)
		for _, mode := range allModes {
			for _, ps := range []int{0, 37, 150} {
				opts := kernels.MatchOptions{Mode: mode, MinLen: minLen, PageSize: ps}
				want := newCPUMatcher(t, ref, opts)
				cfg := matchConfig{Workers: 2, PieceLen: 1 + rng.IntN(40), ChunkRows: 1 + rng.IntN(64), HostIndex: iter%2 == 1,
					Lookahead: []int{0, -1, 1 + rng.IntN(30)}[rng.IntN(3)], CardSort: []int{0, -1, 1}[rng.IntN(3)]}
				if cfg.CardSort == 1 {
					// Every pass sorted on the card, in whole launches: a sort of each tiny
					// pass made this test three times as long (TestGPUMatcherRepeats cuts
					// slots between sorted passes).
					cfg.ChunkRows = 0
				}
				got := newTestMatcher(t, b, ref, opts, cfg)
				for _, cut := range []int{1 << 30, 1 + rng.IntN(100)} {
					batch := queryBatch(seqs, &ref.Alpha, true, nucOnly, cut)
					what := fmt.Sprintf("iter %d mode %v minLen %d page %d cut %d cfg %+v", iter, mode, minLen, ps, cut, cfg)
					total += compareMatch(t, what, want, got, batch)
					if cfg.Lookahead > 0 && ps == 0 && cut < 1<<30 {
						// A segment a batch, as a long record's batches come, so that the
						// codes past a segment's end are cut at the lookahead.
						for i, sg := range batch.Segs {
							one := &kernels.Batch{Codes: batch.Codes, Segs: []kernels.Segment{sg}}
							total += compareMatch(t, fmt.Sprintf("%s, segment %d alone", what, i), want, got, one)
						}
					}
				}
				relaunches += got.stats.relaunches.Load()
				linked += got.stats.linked.Load()
				got.Close()
			}
		}
	}
	if total < 1000 {
		t.Fatalf("only %d matches compared: the generator makes too few", total)
	}
	if relaunches == 0 {
		t.Fatal("no launch was done again with more of a sequence: the short lookaheads were never reached")
	}
	if linked == 0 {
		t.Fatal("no piece's start state came from the next piece's")
	}
	t.Logf("%d matches compared; %d launches done again; %d start states linked", total, relaunches, linked)
}

// TestGPUMatcherSelf: queries that match the reference for thousands of symbols (records of the
// reference itself, one with a run of 3,000 N, and copies with a substitution in a few thousand),
// with short pieces, so that
// start states are linked from piece to piece over many blocks of pieces (piece_link), and with
// pages, cuts and lookaheads. The CPU path is the reference.
func TestGPUMatcherSelf(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(17, 18))
	unit := randomSeq(rng, 3000, "acgt")
	rb := kernels.NewReferenceBuilder(false)
	recs := [][]byte{
		randomSeq(rng, 40000, "acgt"),
		slices.Concat(randomSeq(rng, 5000, "acgt"), unit, randomSeq(rng, 2000, "acgt"), unit, randomSeq(rng, 4000, "acgt")),
		[]byte(strings.Repeat("acgtacgatt", 80)),
		slices.Concat(randomSeq(rng, 3000, "acgt"), []byte(strings.Repeat("n", 3000)), randomSeq(rng, 2000, "acgt")), // pieces end at a run's end
	}
	for i, r := range recs {
		rb.Add(fmt.Sprintf("r%d", i), r)
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	seqs := slices.Clone(recs)
	for _, r := range recs {
		seqs = append(seqs, mutateSeq(rng, r, 0.0003), mutateSeq(rng, r[len(r)/3:], 0.0003))
	}
	var linked, long int64
	for _, mode := range allModes {
		for _, ps := range []int{0, 9000} {
			opts := kernels.MatchOptions{Mode: mode, MinLen: 40, PageSize: ps}
			want := newCPUMatcher(t, ref, opts)
			cfgs := []matchConfig{{PieceLen: 7}, {Workers: 1, PieceLen: 3, MaxPositions: 30000, Lookahead: 500}, {PieceLen: 64, Lookahead: -1}, {Workers: 2, Profile: true}}
			for _, cfg := range cfgs {
				got := newTestMatcher(t, b, ref, opts, cfg)
				for _, cut := range []int{1 << 30, 4000} {
					what := fmt.Sprintf("%v page %d cut %d %+v", mode, ps, cut, cfg)
					batch := queryBatch(seqs, &ref.Alpha, true, false, cut)
					n := compareMatch(t, what, want, got, batch)
					if cut < 1<<30 && cfg.PieceLen == 7 {
						// A segment a batch, as a long record's batches come: a batch's last
						// piece then matches on past its end, for thousands of symbols.
						for i, sg := range batch.Segs {
							one := &kernels.Batch{Codes: batch.Codes, Segs: []kernels.Segment{sg}}
							n += compareMatch(t, fmt.Sprintf("%s, segment %d alone", what, i), want, got, one)
						}
					}
					t.Logf("%s: %d matches", what, n)
				}
				t.Logf("%v page %d %+v: %s", mode, ps, cfg, got.Stats())
				if st := got.Stats(); cfg.Profile && (!strings.Contains(st, "waited for the card") || !strings.Contains(st, "workers' launches")) {
					t.Errorf("%v page %d, profiled: no host times in %q", mode, ps, st)
				}
				linked += got.stats.linked.Load()
				long += got.stats.long.Load()
				got.Close()
			}
		}
	}
	if linked == 0 || long == 0 {
		t.Fatalf("%d pieces' start states came from the next piece's, %d were compared on by piece_long", linked, long)
	}
}

// TestGPUMatcherPagedRuns: runs of one symbol (gaps of N, homopolymers) around the pages'
// window ends and inside windows, against queries whose runs are longer or shorter and copies of
// the whole text, with -mum and -mumreference over pages (pg_run_best, pg_tail_match), with
// pieces and cuts short enough that runs reach the end of a launch's codes, and pages built on
// the host and on the device. The CPU path is the reference.
func TestGPUMatcherPagedRuns(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for r := range 3 {
		minLen := 20 + rng.IntN(20)
		pageSize := 3000 + rng.IntN(3000)
		text := randomSeq(rng, 6*pageSize, "acgt")
		build := func() *kernels.Reference {
			rb := kernels.NewReferenceBuilder(false)
			rb.Add("r", text)
			ref, err := rb.Build()
			if err != nil {
				t.Fatal(err)
			}
			return ref
		}
		ref := build()
		off := ref.Starts[0]
		run := func(at, l int) {
			x := "acgtn"[rng.IntN(5)]
			for i := max(at, 0); i < min(at+l, len(text)); i++ {
				text[i] = x
			}
		}
		bounds := cpu.PageBounds(len(ref.Text), pageSize, minLen)
		for _, bd := range bounds[:len(bounds)-1] {
			run(bd[2]-off-rng.IntN(1500), rng.IntN(3000)) // ending before the window's end, on it or after it
		}
		for range 4 {
			run(rng.IntN(len(text)), rng.IntN(2000))
		}
		ref = build()
		seqs := [][]byte{text, mutateSeq(rng, text, 0.0002)}
		for range 12 {
			l := 500 + rng.IntN(4*pageSize)
			a := rng.IntN(len(text) - l)
			q := slices.Clone(text[a : a+l])
			i := rng.IntN(len(q))
			j := i
			for j < len(q) && q[j] == q[i] {
				j++
			}
			if d := rng.IntN(200) - 100; d > 0 {
				q = slices.Insert(q, i, slices.Repeat(q[i:i+1], d)...)
			} else {
				q = slices.Delete(q, i, min(i-d, j))
			}
			seqs = append(seqs, q)
		}
		for _, mode := range []kernels.Mode{kernels.Mum, kernels.MumReference} {
			opts := kernels.MatchOptions{Mode: mode, MinLen: minLen, PageSize: pageSize}
			want := newCPUMatcher(t, ref, opts)
			for _, cfg := range []matchConfig{{}, {PieceLen: 5, Lookahead: 300, Workers: 1, HostIndex: true}} {
				got := newTestMatcher(t, b, ref, opts, cfg)
				for _, cut := range []int{1 << 30, 1500} {
					what := fmt.Sprintf("round %d, %v page %d cut %d %+v", r, mode, pageSize, cut, cfg)
					n := compareMatch(t, what, want, got, queryBatch(seqs, &ref.Alpha, true, false, cut))
					t.Logf("%s: %d matches", what, n)
				}
				got.Close()
			}
		}
	}
}

// TestGPUMatcherRepeats: references made of repeats (a period, one letter, copies of a unit), so
// that positions have many matches and long chains of enclosing intervals: the load-balanced
// stages, output chunks and launches of many batches.
func TestGPUMatcherRepeats(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(13, 14))
	unit := randomSeq(rng, 997, "acgt")
	refs := map[string][]byte{
		"A":        []byte(strings.Repeat("a", 5000)),
		"period7":  []byte(strings.Repeat("acgttga", 3000)),
		"copies":   slices.Concat(unit, mutateSeq(rng, unit, 0.01), unit, mutateSeq(rng, unit, 0.02), unit),
		"period50": []byte(strings.Repeat(string(randomSeq(rng, 50, "acgt")), 400)),
	}
	for name, text := range refs {
		rb := kernels.NewReferenceBuilder(false)
		rb.Add(name, text)
		ref, err := rb.Build()
		if err != nil {
			t.Fatal(err)
		}
		var seqs [][]byte
		for range 40 {
			k := rng.IntN(len(text) - 200)
			seqs = append(seqs, mutateSeq(rng, text[k:k+50+rng.IntN(150)], 0.01))
		}
		for _, mode := range allModes {
			for _, ps := range []int{0, 1000} {
				opts := kernels.MatchOptions{Mode: mode, MinLen: 12, PageSize: ps}
				want := newCPUMatcher(t, ref, opts)
				// CardSort 1: every chunk of records sorted on the card, slots cut between
				// chunks (ChunkRows 1000) and pages merged after it (page 1000); -1: none.
				for _, cfg := range []matchConfig{{}, {CardSort: 1}, {CardSort: -1},
					{Workers: 1, PieceLen: 17, ChunkRows: 1000, MaxPositions: 500, Lookahead: 3, CardSort: 1}} {
					got := newTestMatcher(t, b, ref, opts, cfg)
					n := compareMatch(t, fmt.Sprintf("%s %v page %d %+v", name, mode, ps, cfg), want, got, queryBatch(seqs, &ref.Alpha, true, false, 64))
					t.Logf("%s %v page %d: %d matches; %s", name, mode, ps, n, got.Stats())
					if sorted := got.stats.cardSorted.Load(); mode == kernels.MaxMatch && n > 0 && cfg.CardSort != 0 && (sorted > 0) != (cfg.CardSort == 1) {
						t.Errorf("%s %v page %d %+v: %d records sorted on the card", name, mode, ps, cfg, sorted)
					}
					got.Close()
				}
			}
		}
	}
}

// TestGPUMatcherConcurrent: many goroutines share one matcher (and its launches gather their
// batches); each gets its own results.
func TestGPUMatcherConcurrent(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(15, 16))
	ref, all := randomReference(rng, 3, 20000, false, false)
	for _, mode := range allModes {
		opts := kernels.MatchOptions{Mode: mode, MinLen: 15}
		want := newCPUMatcher(t, ref, opts)
		got := newTestMatcher(t, b, ref, opts, matchConfig{Workers: 3, MaxPositions: 20000})
		var batches []*kernels.Batch
		for range 64 {
			var seqs [][]byte
			for range 1 + rng.IntN(40) {
				k := rng.IntN(len(all) - 300)
				seqs = append(seqs, mutateSeq(rng, all[k:k+rng.IntN(300)], 0.02))
			}
			batches = append(batches, queryBatch(seqs, &ref.Alpha, true, false, 1<<30))
		}
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < len(batches); i += 16 {
					compareMatch(t, fmt.Sprintf("%v batch %d", mode, i), want, got, batches[i])
				}
			}()
		}
		wg.Wait()
		t.Logf("%v: %s", mode, got.Stats())
		got.Close()
	}
}

// TestGPUMatcherBudget: a reference several times larger than a forced device memory budget is
// matched page by page through a few frames, with the same results as the CPU's single page.
func TestGPUMatcherBudget(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(17, 18))
	ref, all := randomReference(rng, 4, 500000, false, false)
	var seqs [][]byte
	for range 2000 {
		k := rng.IntN(len(all) - 300)
		seqs = append(seqs, mutateSeq(rng, all[k:k+100+rng.IntN(200)], 0.02))
	}
	long := mutateSeq(rng, all[:200000], 0.01)
	for _, mode := range allModes {
		opts := kernels.MatchOptions{Mode: mode, MinLen: 20}
		want := newCPUMatcher(t, ref, opts)
		budget := int64(len(ref.Text)) + int64(pageBytesPerBase(ref.Alpha.Size)*float64(len(ref.Text))/4)
		got := newTestMatcher(t, b, ref, opts, matchConfig{Budget: budget, Workers: 3, MaxPositions: 100000})
		if got.fs.resident || len(got.pages) < 4 {
			t.Fatalf("budget %d MiB: %d pages, resident %v; want pages in frames", budget>>20, len(got.pages), got.fs.resident)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				compareMatch(t, fmt.Sprintf("%v reads part %d", mode, g), want, got, queryBatch(seqs[g*500:(g+1)*500], &ref.Alpha, true, false, 1<<30))
			}()
		}
		wg.Wait()
		compareMatch(t, fmt.Sprintf("%v long", mode), want, got, queryBatch([][]byte{long}, &ref.Alpha, true, false, 10000))
		t.Logf("%v: %d pages in %d frames, %d page loads; %s", mode, len(got.pages), len(got.fs.frames), got.fs.loads, got.Stats())
		got.Close()
	}
	// A budget that cannot hold the text is refused, and the backend falls back to the CPU.
	if _, err := newMatcher(b, ref, kernels.MatchOptions{MinLen: 20}, matchConfig{Budget: int64(len(ref.Text)) / 2}, nil); err == nil {
		t.Error("a budget smaller than the text was accepted")
	}
}

// readSeqs returns the sequences of a FASTA or FASTQ file (gzip by name), skipping the test
// when the file is missing.
func readSeqs(t *testing.T, path string, limit int) [][]byte {
	t.Helper()
	seqs, err := loadSeqs(path, limit)
	if err != nil {
		t.Skipf("no test data: %v", err)
	}
	return seqs
}

// loadSeqs reads up to limit sequences (all with limit 0) of a FASTA or FASTQ file.
func loadSeqs(path string, limit int) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = z
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var seqs [][]byte
	var cur []byte
	fastq, line := false, 0
	flush := func() {
		if cur != nil {
			seqs = append(seqs, cur)
			cur = nil
		}
	}
	for sc.Scan() && (limit <= 0 || len(seqs) < limit) {
		s := sc.Bytes()
		if line == 0 && len(s) > 0 && s[0] == '@' {
			fastq = true
		}
		if fastq {
			if line%4 == 1 {
				seqs = append(seqs, slices.Clone(s))
			}
		} else if len(s) > 0 && s[0] == '>' {
			flush()
			cur = []byte{}
		} else {
			cur = append(cur, s...)
		}
		line++
	}
	flush()
	return seqs, sc.Err()
}

// dataFile finds a real-data file: in SAPIPE_GPU_DATA (the GPU machine's packed data) or
// ../../../shared/data.
func dataFile(names ...string) string {
	for _, dir := range []string{os.Getenv("SAPIPE_GPU_DATA"), "../../../shared/data", "../../bench-data"} {
		if dir == "" {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return filepath.Join("missing", names[0])
}

// TestGPUMatcherEcoli: simulated reads and a mutated copy of the genome against E. coli, every mode.
func TestGPUMatcherEcoli(t *testing.T) {
	b := gpuBackend(t)
	genome := readSeqs(t, dataFile("ecoli.fa", "ecoli_k12_mg1655.fna.gz"), 0)
	rb := kernels.NewReferenceBuilder(false)
	for i, s := range genome {
		rb.Add(fmt.Sprint("g", i), s)
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	reads := readSeqs(t, dataFile("reads_20k.fq", "reads_200k.fq"), 20000)
	rng := rand.New(rand.NewPCG(19, 20))
	mut := mutateSeq(rng, genome[0][:1500000], 0.01)
	for _, mode := range allModes {
		opts := kernels.MatchOptions{Mode: mode, MinLen: 20}
		want := newCPUMatcher(t, ref, opts)
		got := newTestMatcher(t, b, ref, opts, matchConfig{})
		n := compareMatch(t, fmt.Sprintf("%v reads", mode), want, got, queryBatch(reads, &ref.Alpha, true, false, 1<<30))
		n += compareMatch(t, fmt.Sprintf("%v genome", mode), want, got, queryBatch([][]byte{mut}, &ref.Alpha, true, false, 32768))
		t.Logf("%v: %d matches; %s", mode, n, got.Stats())
		got.Close()
	}
}

// TestGPUMatcherFallback: the backend's NewMatcher gives the GPU matcher, which matches like the CPU.
func TestGPUMatcherBackend(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(21, 22))
	ref, all := randomReference(rng, 2, 3000, false, false)
	opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 10}
	m, err := b.NewMatcher(ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, ok := m.(*gpuMatcher); !ok {
		t.Fatalf("Backend.NewMatcher gave %T, want the GPU matcher", m)
	}
	want, _ := cpu.NewMatcher(ref, opts, 2)
	compareMatch(t, "backend", want, m, queryBatch([][]byte{mutateSeq(rng, all, 0.02)}, &ref.Alpha, true, false, 100))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Match(&kernels.Batch{}, &kernels.Result{}); err == nil {
		t.Error("Match after Close succeeded")
	}
}

// downloadPage copies a page's arrays from the device, in cpu.DeviceArrays' form.
func downloadPage(t *testing.T, d *device, desc pageDev, s pageShape) cpu.DeviceArrays {
	t.Helper()
	min1, min2 := s.lcpBlocks()
	_, up := s.lcpUp()
	a := cpu.DeviceArrays{Start: s.start, End: s.end, WinEnd: s.winEnd, N: s.n,
		SA: make([]int32, s.n+1), LCP: make([]uint8, s.n+2), LCPBigRow: make([]int32, s.nBig), LCPBigVal: make([]int32, s.nBig),
		LCPMin1: make([]int32, min1), LCPMin2: make([]int32, min2), LCPUp: make([]int32, up), Occ: make([]uint64, s.occWords),
		OccPlanes: s.planes, OccCounts: s.counts, OccStride: s.stride, Deep: make([]uint64, min1)}
	var c [256]uint32
	err := d.run(func() error {
		for _, cp := range []struct {
			dst unsafe.Pointer
			src devPtr
			n   int
		}{
			{ptrOf(a.SA), desc.sa, 4 * len(a.SA)}, {ptrOf(a.LCP), desc.lcp, len(a.LCP)},
			{ptrOf(a.LCPBigRow), desc.bigRow, 4 * s.nBig}, {ptrOf(a.LCPBigVal), desc.bigVal, 4 * s.nBig},
			{ptrOf(a.LCPMin1), desc.min1, 4 * min1}, {ptrOf(a.LCPMin2), desc.min2, 4 * min2}, {ptrOf(a.LCPUp), desc.up, 4 * up},
			{ptrOf(a.Occ), desc.occ, 8 * s.occWords}, {ptrOf(a.Deep), desc.deep, 8 * min1}, {unsafe.Pointer(&c[0]), desc.c, 4 * 256},
		} {
			if err := d.toHost(cp.dst, cp.src, cp.n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range c {
		a.C[i] = int(v)
	}
	return a
}

// TestGPUPageBuild: page indexes built on the device equal kernels/cpu's, array for array, for
// texts with long repeats (LCP values in the side table), wide alphabets and several pages; a text
// too repetitive for the chunked LCP is built on the CPU instead, with the same matches.
// refCase is a named reference of the page-building tests.
type refCase struct {
	name string
	ref  *kernels.Reference
}

// pageCases returns n random references of up to 1-4 records of step*(i+1) bases (with runs of
// n, some nucleotides only, some with IUPAC codes), then one of a wide alphabet.
func pageCases(rng *rand.Rand, n, step int) []refCase {
	var cases []refCase
	for i := range n {
		ref, _ := randomReference(rng, 1+rng.IntN(4), step*(1+i), i%4 == 1, i%3 == 0)
		if ref != nil {
			cases = append(cases, refCase{fmt.Sprint("random", i), ref})
		}
	}
	wide := kernels.NewReferenceBuilder(false)
	wide.Add("bytes", randomSeq(rng, 20000, "abcdefghijklmnopqrstuvwxyz0123456789ACGT"))
	if ref, err := wide.Build(); err == nil {
		cases = append(cases, refCase{"wide alphabet", ref})
	}
	return cases
}

func TestGPUPageBuild(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(25, 26))
	cases := pageCases(rng, 12, 3000)
	for _, c := range cases {
		for _, ps := range []int{0, 1500} {
			for _, minLen := range []int{1, 20} {
				opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: minLen, PageSize: ps}
				want, err := cpu.NewMatcher(c.ref, opts, 2)
				if err != nil {
					t.Fatal(err)
				}
				got := newTestMatcher(t, b, c.ref, opts, matchConfig{Workers: 1})
				if got.host != nil || len(got.fs.frames) != len(want.Pages()) {
					t.Fatalf("%s: pages built on the host (%v) or %d frames for %d pages", c.name, got.host != nil, len(got.fs.frames), len(want.Pages()))
				}
				for i, p := range want.Pages() {
					wa := p.DeviceArrays()
					f := got.fs.frames[i]
					s := pageShape{start: int(f.desc.start), end: int(f.desc.start) + int(f.desc.owned), winEnd: int(f.desc.start) + int(f.desc.n), n: int(f.desc.n), nBig: int(f.desc.nBig),
						planes: int(f.desc.planes), counts: int(f.desc.counts), stride: int(f.desc.stride), occWords: len(wa.Occ)}
					ga := downloadPage(t, b.dev, f.desc, s)
					what := fmt.Sprintf("%s page size %d minLen %d page %d", c.name, ps, minLen, i)
					if ga.Start != wa.Start || ga.End != wa.End || ga.WinEnd != wa.WinEnd || ga.N != wa.N || ga.C != wa.C ||
						ga.OccPlanes != wa.OccPlanes || ga.OccCounts != wa.OccCounts || ga.OccStride != wa.OccStride {
						t.Fatalf("%s: shape or c[] differs", what)
					}
					for _, cmp := range []struct {
						name string
						eq   bool
					}{
						{"SA", slices.Equal(ga.SA, wa.SA)}, {"LCP", slices.Equal(ga.LCP, wa.LCP)},
						{"LCP side rows", slices.Equal(ga.LCPBigRow, wa.LCPBigRow)}, {"LCP side values", slices.Equal(ga.LCPBigVal, wa.LCPBigVal)},
						{"LCP min1", slices.Equal(ga.LCPMin1, wa.LCPMin1)}, {"LCP min2", slices.Equal(ga.LCPMin2, wa.LCPMin2)},
						{"LCP levels above min2", slices.Equal(ga.LCPUp, wa.LCPUp)},
						{"rank blocks", slices.Equal(ga.Occ, wa.Occ)}, {"deep bits", slices.Equal(ga.Deep, wa.Deep)},
					} {
						if !cmp.eq {
							t.Fatalf("%s: %s differ from the CPU's", what, cmp.name)
						}
					}
				}
				got.Close()
			}
		}
	}
	// 'a' repeated, in a longer text: the LCP of neighbouring suffixes is nearly the run's length.
	// A run of 3 * plcpCap is built on the device (the chunks past plcpCap in a second pass), with
	// the CPU's arrays; with the second pass's bound below the run, it is built on the host.
	defer func(c uint32) { plcpLongCap = c }(plcpLongCap)
	for _, longCap := range []uint32{plcpLongCap, plcpCap} {
		plcpLongCap = longCap
		rb := kernels.NewReferenceBuilder(false)
		rb.Add("A", append(append(randomSeq(rng, 5000, "acgt"), strings.Repeat("a", 3*plcpCap)...), randomSeq(rng, 5000, "acgt")...))
		ref, err := rb.Build()
		if err != nil {
			t.Fatal(err)
		}
		opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 30}
		got := newTestMatcher(t, b, ref, opts, matchConfig{})
		onHost := longCap < 3*plcpCap
		if (got.host != nil) != onHost {
			t.Errorf("a run of %d under a second-pass bound of %d: built on the host %v, want %v", 3*plcpCap, longCap, got.host != nil, onHost)
		}
		want, _ := cpu.NewMatcher(ref, opts, 2)
		if !onHost {
			wa := want.Pages()[0].DeviceArrays()
			f := got.fs.frames[0]
			s := pageShape{start: 0, end: int(f.desc.owned), winEnd: int(f.desc.n), n: int(f.desc.n), nBig: int(f.desc.nBig),
				planes: int(f.desc.planes), counts: int(f.desc.counts), stride: int(f.desc.stride), occWords: len(wa.Occ)}
			ga := downloadPage(t, b.dev, f.desc, s)
			if !slices.Equal(ga.LCP, wa.LCP) || !slices.Equal(ga.LCPBigRow, wa.LCPBigRow) || !slices.Equal(ga.LCPBigVal, wa.LCPBigVal) {
				t.Errorf("the run's LCP built on the device differs from the CPU's")
			}
		}
		compareMatch(t, "one letter", want, got, queryBatch([][]byte{[]byte(strings.Repeat("a", 40)), []byte("ccaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaagg")}, &ref.Alpha, true, false, 1<<30))
		got.Close()
	}
}

// TestGPUMatcherEarlyPages: an index file's pages copied while they are checked give the CPU's
// results, whether the checked pages are the arrays copied (only C and Deep follow) or other
// memory (the pages are sent again); a failed check is the matcher's error.
func TestGPUMatcherEarlyPages(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for iter := range 12 {
		ref, all := randomReference(rng, 1+rng.IntN(3), 4000, iter%3 == 0, iter%4 == 1)
		if ref == nil {
			continue
		}
		mode := allModes[iter%3]
		opts := kernels.MatchOptions{Mode: mode, MinLen: 8 + rng.IntN(12), PageSize: []int{0, len(ref.Text)/3 + 1}[iter%2]}
		want := newCPUMatcher(t, ref, opts)
		copied := iter%4 == 3 // the early arrays are copies: the checked pages are other memory
		early := make([]cpu.DeviceArrays, len(want.Pages()))
		for i, p := range want.Pages() {
			a := p.DeviceArrays()
			a.C, a.Deep = [256]int{}, nil
			if copied {
				a.SA, a.LCP, a.Occ = slices.Clone(a.SA), slices.Clone(a.LCP), slices.Clone(a.Occ)
			}
			early[i] = a
		}
		checks := 0
		checked := func() (*cpu.Matcher, error) {
			checks++
			time.Sleep(20 * time.Millisecond) // the copies run meanwhile
			return want, nil
		}
		what := fmt.Sprintf("iter %d (%v, %d pages, copies %v)", iter, mode, len(early), copied)
		m, err := b.NewMatcherFromEarlyPages(ref, opts, early, nil, checked)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if gm, ok := m.(*gpuMatcher); !ok || !gm.fs.resident || checks != 1 {
			t.Fatalf("%s: %T, not resident on the GPU, or the checks waited for %d times", what, m, checks)
		}
		seqs := [][]byte{mutateSeq(rng, all, 0.02), mutateSeq(rng, all[:len(all)/2], 0.05)}
		compareMatch(t, what, want, m, queryBatch(seqs, &ref.Alpha, true, false, 1+rng.IntN(200)))
		m.Close()
		failed := errors.New("page 0: sections SUFA, OCCB and LCP: damaged")
		_, err = b.NewMatcherFromEarlyPages(ref, opts, early, nil, func() (*cpu.Matcher, error) { return nil, failed })
		if !errors.Is(err, failed) {
			t.Fatalf("%s: a failed check gave %v", what, err)
		}
	}
}

// newCPUMatcher builds the CPU matcher that GPU results are compared with (two threads).
func newCPUMatcher(t testing.TB, ref *kernels.Reference, opts kernels.MatchOptions) *cpu.Matcher {
	t.Helper()
	m, err := cpu.NewMatcher(ref, opts, 2)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
