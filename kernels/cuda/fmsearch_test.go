package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// fmSearchBackend opens the first GPU, or skips (fails with SAPIPE_REQUIRE_GPU=1).
func fmSearchBackend(t testing.TB) *Backend {
	b, err := Open(0, Options{Threads: 4})
	if err != nil {
		if os.Getenv("SAPIPE_REQUIRE_GPU") >= "1" /* 1, or the cards needed */ {
			t.Fatalf("no usable GPU: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// fmText is a random text of codes 2..sigma-1 with repeats and a few separators.
func fmText(rng *rand.Rand, n, sigma int) []byte {
	t := make([]byte, n)
	for i := range t {
		t[i] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
	}
	for range rng.IntN(4) {
		l := 1 + rng.IntN(n/3+1)
		a, b := rng.IntN(n-l+1), rng.IntN(n-l+1)
		copy(t[b:b+l], t[a:a+l])
	}
	for range rng.IntN(4) {
		t[rng.IntN(n)] = kernels.CodeNone
	}
	return t
}

// fmPatterns draws substrings of text (some changed), random strings, patterns with unmatchable
// codes and empty ones.
func fmPatterns(rng *rand.Rand, text []byte, sigma, count, maxLen int) *kernels.Patterns {
	var ps kernels.Patterns
	for range count {
		l := rng.IntN(maxLen + 1)
		var pat []byte
		switch k := rng.IntN(10); {
		case k < 6 && l <= len(text):
			a := rng.IntN(len(text) - l + 1)
			pat = slices.Clone(text[a : a+l])
			if k == 5 && l > 0 {
				pat[rng.IntN(l)] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
			}
		default:
			pat = make([]byte, l)
			for i := range pat {
				pat[i] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
			}
			if k == 6 && l > 0 {
				pat[rng.IntN(l)] = kernels.CodeNone
			}
		}
		ps.Add(pat)
	}
	return &ps
}

// checkGPUSearch compares the GPU's hits, counted and located, with the CPU's (which
// kernels/cpu tests against a naive search). The intervals themselves may differ: the CPU may
// reach a pattern's occurrences by another path.
func checkGPUSearch(t *testing.T, b *Backend, s *cpu.Searcher, ps *kernels.Patterns, what string, locates ...bool) {
	t.Helper()
	gs, err := b.NewPatternSearcher(s)
	if err != nil {
		t.Fatal(err)
	}
	compareSearch(t, gs, s, ps, what, locates...)
}

// compareSearch checks that gs, on the GPU, gives s's hits for ps, then closes it.
func compareSearch(t *testing.T, gs kernels.Searcher, s *cpu.Searcher, ps *kernels.Patterns, what string, locates ...bool) {
	t.Helper()
	defer gs.Close()
	if _, ok := gs.(*gpuSearcher); !ok {
		t.Fatalf("%s: the search did not go to the GPU", what)
	}
	if len(locates) == 0 {
		locates = []bool{false, true}
	}
	for _, locate := range locates {
		var hg, hc kernels.Hits
		if err := gs.Search(ps, locate, &hg); err != nil {
			t.Fatal(err)
		}
		if err := s.Search(ps, locate, &hc); err != nil {
			t.Fatal(err)
		}
		for i := range hc.Count {
			if hg.Count[i] != hc.Count[i] {
				t.Fatalf("%s: pattern %d %v: GPU count %d, CPU %d", what, i, ps.Pattern(i), hg.Count[i], hc.Count[i])
			}
		}
		if !reflect.DeepEqual(hg, hc) {
			t.Fatalf("%s: GPU hits differ from the CPU's (locate %v)", what, locate)
		}
	}
}

// TestGPUPatternSearch: on random texts, alphabets and k-mer tables, the GPU's search of every
// pattern ends in the CPU's interval, and the hits are the CPU's.
func TestGPUPatternSearch(t *testing.T) {
	b := fmSearchBackend(t)
	rng := rand.New(rand.NewPCG(41, 7))
	for r := range 60 {
		sigma := []int{3, 4, 6, 6, 7, 12, 40}[rng.IntN(7)]
		n := 1 + rng.IntN([]int{10, 300, 5000, 200000}[rng.IntN(4)])
		text := fmText(rng, n, sigma)
		p := cpu.NewPage(text, sigma, 0, n, n)
		var kt *cpu.KmerTable
		switch k := rng.IntN(3); {
		case k == 1:
			kt = cpu.BuildKmerTable(p, cpu.KmerLength(n, sigma))
		case k == 2 && sigma <= 7:
			kt = cpu.BuildKmerTable(p, 1+rng.IntN(4))
		}
		s, err := cpu.NewSearcher(p, kt)
		if err != nil {
			t.Fatal(err)
		}
		ps := fmPatterns(rng, text, sigma, 1+rng.IntN(3000), 1+rng.IntN(60))
		checkGPUSearch(t, b, s, ps, fmt.Sprintf("round %d (n %d, sigma %d, k-mers %v)", r, n, sigma, kt != nil))
	}
}

// TestGPUPatternSearchConcurrent: batches of many sizes searched at once from several
// goroutines on one searcher (each batch staged in pinned memory of its own, the buffers reused
// and grown between batches of different sizes) give the CPU's hits, batch for batch, the
// intervals are written to the batch's part of the slice alone, and the rows given with one-row
// outcomes are the suffix array's.
func TestGPUPatternSearchConcurrent(t *testing.T) {
	b := fmSearchBackend(t)
	rng := rand.New(rand.NewPCG(44, 2))
	const n, sigma = 100000, 6
	text := fmText(rng, n, sigma)
	p := cpu.NewPage(text, sigma, 0, n, n)
	s, err := cpu.NewSearcher(p, cpu.BuildKmerTable(p, cpu.KmerLength(n, sigma)))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := b.NewPatternSearcher(s)
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	is, ok := gs.(cpu.RowSearch)
	if !ok {
		t.Fatal("the search did not go to the GPU")
	}
	sa := s.Device().SA
	batches := make([]*kernels.Patterns, 48)
	for i := range batches {
		batches[i] = fmPatterns(rng, text, sigma, 1+rng.IntN([]int{5, 300, 20000}[i%3]), 1+rng.IntN(80))
	}
	errs := make(chan error, 6)
	for w := range 6 {
		go func() {
			for i := w; i < len(batches); i += 6 {
				ps := batches[i]
				got := make([]cpu.Interval, ps.Len()+3) // longer than the batch: the tail stays
				got[ps.Len()] = cpu.Interval{Lo: -7}
				rows := make([]int32, ps.Len())
				var err error
				if i%2 == 0 {
					err = is.SearchIntervalsRows(ps, got, rows)
				} else {
					err = is.SearchIntervals(ps, got)
				}
				if err != nil {
					errs <- err
					return
				}
				for k, v := range got[:ps.Len()] {
					if i%2 == 0 && v.Shift > 0 && rows[k] != sa[v.Lo] {
						errs <- fmt.Errorf("batch %d, pattern %d: row %d given, the suffix array has %d", i, k, rows[k], sa[v.Lo])
						return
					}
				}
				var hg, hc kernels.Hits
				if err := s.AppendHits(got[:ps.Len()], true, &hg); err != nil {
					errs <- err
					return
				}
				if err := s.Search(ps, true, &hc); err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(hg, hc) || got[ps.Len()].Lo != -7 {
					errs <- fmt.Errorf("batch %d of %d patterns: the GPU's hits differ from the CPU's", i, ps.Len())
					return
				}
			}
			errs <- nil
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// ecoliCodes returns E. coli's sequence (SAPIPE_ECOLI, or ../shared/data/ecoli.fa) in codes
// 2..5, or skips.
func ecoliCodes(t testing.TB) []byte {
	path := os.Getenv("SAPIPE_ECOLI")
	if path == "" {
		path = "../../../shared/data/ecoli.fa"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no E. coli genome: %v", err)
	}
	code := [256]byte{'a': 2, 'c': 3, 'g': 4, 't': 5, 'A': 2, 'C': 3, 'G': 4, 'T': 5}
	var text []byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if len(l) > 0 && l[0] != '>' {
			for _, c := range bytes.TrimSpace(l) {
				x := code[c]
				if x == 0 {
					x = kernels.CodeNone
				}
				text = append(text, x)
			}
		}
	}
	return text
}

// readPatterns cuts count patterns of 20-150 codes from text, a fifth of them changed in one place.
func readPatterns(rng *rand.Rand, text []byte, count int) *kernels.Patterns {
	var ps kernels.Patterns
	ps.Codes = make([]byte, 0, count*85)
	for range count {
		l := 20 + rng.IntN(131)
		a := rng.IntN(len(text) - l)
		n := len(ps.Codes)
		ps.Add(text[a : a+l])
		if rng.IntN(5) == 0 {
			ps.Codes[n+rng.IntN(l)] = byte(kernels.FirstCode + rng.IntN(4))
		}
	}
	return &ps
}

// TestGPUPatternSearchEcoli: the same on E. coli with its k-mer table and reads cut from it.
func TestGPUPatternSearchEcoli(t *testing.T) {
	b := fmSearchBackend(t)
	text := ecoliCodes(t)
	n := len(text)
	p := cpu.NewPage(text, 6, 0, n, n)
	s, err := cpu.NewSearcher(p, cpu.BuildKmerTable(p, cpu.KmerLength(n, 6)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 8))
	checkGPUSearch(t, b, s, readPatterns(rng, text, 300000), "E. coli reads")
	// Counted only: a pattern of a few bases occurs up to a million times in E. coli, and
	// locating 100,000 of them would list billions of positions.
	checkGPUSearch(t, b, s, fmPatterns(rng, text, 6, 100000, 40), "E. coli short patterns", false)
}

// BenchmarkGPUPatternSearch counts 1 M reads of 20-150 bases cut from E. coli a batch, on the GPU
// (copies of the patterns and intervals included) and on the CPU's one goroutine.
func BenchmarkGPUPatternSearch(b *testing.B) {
	text := ecoliCodes(b)
	n := len(text)
	p := cpu.NewPage(text, 6, 0, n, n)
	s, _ := cpu.NewSearcher(p, cpu.BuildKmerTable(p, cpu.KmerLength(n, 6)))
	ps := readPatterns(rand.New(rand.NewPCG(43, 9)), text, 1000000)
	gb := fmSearchBackend(b)
	gs, err := gb.NewPatternSearcher(s)
	if err != nil {
		b.Fatal(err)
	}
	defer gs.Close()
	g := gs.(*gpuSearcher)
	b.Run("gpu", func(b *testing.B) {
		b.SetBytes(int64(len(ps.Codes)))
		var kernel time.Duration
		iv := make([]cpu.Interval, ps.Len())
		for b.Loop() {
			if err := g.intervals(ps, iv, nil); err != nil {
				b.Fatal(err)
			}
			kernel += time.Duration(g.kernelTime.Load())
		}
		b.ReportMetric(float64(ps.Len())*float64(b.N)/b.Elapsed().Seconds(), "patterns/s")
		b.ReportMetric(float64(len(ps.Codes))*float64(b.N)/kernel.Seconds()/1e9, "kernel-Gchar/s")
	})
	b.Run("cpu", func(b *testing.B) {
		b.SetBytes(int64(len(ps.Codes)))
		var h kernels.Hits
		for b.Loop() {
			h.Reset()
			if err := s.Search(ps, false, &h); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(ps.Len())*float64(b.N)/b.Elapsed().Seconds(), "patterns/s")
	})
}

// TestGPUPatternSearchEarly: a page's index copied while it is checked gives the CPU's hits, whether
// the checked searcher's arrays are the ones copied (only C follows) or other memory (the index is
// sent again); a failed check is the error.
func TestGPUPatternSearchEarly(t *testing.T) {
	b := fmSearchBackend(t)
	rng := rand.New(rand.NewPCG(43, 7))
	for r := range 12 {
		sigma := []int{4, 6, 12}[r%3]
		n := 1 + rng.IntN(50000)
		text := fmText(rng, n, sigma)
		p := cpu.NewPage(text, sigma, 0, n, n)
		var kt *cpu.KmerTable
		if r%2 == 0 {
			kt = cpu.BuildKmerTable(p, cpu.KmerLength(n, sigma))
		}
		s, err := cpu.NewSearcher(p, kt)
		if err != nil {
			t.Fatal(err)
		}
		early := *s.Device()
		early.C = [256]uint32{}
		copied := r%4 == 3
		if copied {
			early.SA, early.Occ = slices.Clone(early.SA), slices.Clone(early.Occ)
		}
		what := fmt.Sprintf("round %d (n %d, sigma %d, k-mers %v, copies %v)", r, n, sigma, kt != nil, copied)
		gs, err := b.NewPatternSearcherEarly(&early, nil, nil, func() (*cpu.Searcher, error) {
			time.Sleep(10 * time.Millisecond)
			return s, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		compareSearch(t, gs, s, fmPatterns(rng, text, sigma, 1+rng.IntN(2000), 1+rng.IntN(40)), what)
		gs.Close()
		failed := errors.New("damaged")
		if _, err := b.NewPatternSearcherEarly(&early, nil, nil, func() (*cpu.Searcher, error) { return nil, failed }); !errors.Is(err, failed) {
			t.Fatalf("%s: a failed check gave %v", what, err)
		}

		// Checked on the card: the host's checks do not run; damage to the suffix array or the rank
		// structure fails a check there, and the host's checks give the error; the checksums' comes first.
		unchecked := func() (*cpu.Searcher, error) {
			up, err := cpu.UncheckedSearchPage(text, sigma, 0, n, n, p.Arrays())
			if err != nil {
				return nil, err
			}
			return cpu.NewSearcher(up, kt)
		}
		checks := 0
		ok := func() error { return nil }
		gs, err = b.NewPatternSearcherEarly(&early, ok, unchecked, func() (*cpu.Searcher, error) { checks++; return s, nil })
		if err != nil || checks != 0 {
			t.Fatalf("%s, checked on the card: %v after %d host checks", what, err, checks)
		}
		compareSearch(t, gs, s, fmPatterns(rng, text, sigma, 1+rng.IntN(2000), 1+rng.IntN(40)), what+", checked on the card")
		gs.Close()

		// Counting only: the card holds neither the text nor the suffix array, checks the rank
		// structure (C from its totals), and its searches go on to each pattern's start; the
		// hits, counted and located (from the host's suffix array), are still the CPU's.
		co := early
		co.CountOnly = true
		gs, err = b.NewPatternSearcherEarly(&co, ok, unchecked, func() (*cpu.Searcher, error) { checks++; return s, nil })
		if err != nil || checks != 0 {
			t.Fatalf("%s, counting only: %v after %d host checks", what, err, checks)
		}
		if g := gs.(*gpuSearcher); g.text != 0 || g.sa != 0 || g.ix.C != s.Device().C {
			t.Fatalf("%s, counting only: text at %#x, suffix array at %#x on the card; C %v, want %v", what, g.text, g.sa, g.ix.C[:sigma+1], s.Device().C[:sigma+1])
		}
		compareSearch(t, gs, s, fmPatterns(rng, text, sigma, 1+rng.IntN(2000), 1+rng.IntN(60)), what+", counting only")
		gs.Close()
		coHurt := co
		coHurt.Occ = slices.Clone(co.Occ)
		if len(coHurt.Occ) > coHurt.OccStride {
			coHurt.Occ[(1+rng.IntN(len(coHurt.Occ)/coHurt.OccStride-1))*coHurt.OccStride] += 1
			if _, err := b.NewPatternSearcherEarly(&coHurt, ok, unchecked, func() (*cpu.Searcher, error) { checks++; return nil, failed }); !errors.Is(err, failed) || checks != 1 {
				t.Fatalf("%s, counting only, damaged rank structure: %v after %d host checks", what, err, checks)
			}
			checks = 0
		}
		hurt := early
		hurt.SA, hurt.Occ = slices.Clone(early.SA), slices.Clone(early.Occ)
		if r%2 == 0 || n < 200 {
			hurt.SA[1+rng.IntN(n)] = int32(n + rng.IntN(2))
		} else {
			hurt.Occ[(1+rng.IntN(len(hurt.Occ)/hurt.OccStride-1))*hurt.OccStride] += 1
		}
		if _, err := b.NewPatternSearcherEarly(&hurt, ok, unchecked, func() (*cpu.Searcher, error) { checks++; return nil, failed }); !errors.Is(err, failed) || checks != 1 {
			t.Fatalf("%s, damaged, checked on the card: %v after %d host checks", what, err, checks)
		}
		errSums := errors.New("checksum mismatch")
		if _, err := b.NewPatternSearcherEarly(&hurt, func() error { return errSums }, unchecked, func() (*cpu.Searcher, error) { checks++; return nil, failed }); !errors.Is(err, errSums) || checks != 1 {
			t.Fatalf("%s, damaged, checksums failing: %v after %d host checks", what, err, checks)
		}
	}
}
