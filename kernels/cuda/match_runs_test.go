package cuda

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// byLenNext orders runs as hostRuns does, by length then next code; byAll then by position.
func byLenNext(a, b [4]uint32) int { return cmp.Or(cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2])) }
func byAll(a, b [4]uint32) int     { return cmp.Or(byLenNext(a, b), cmp.Compare(a[0], b[0])) }

// TestHostRuns checks the run lists that mm_chain searches (no GPU needed): for every symbol with
// a run of from, every run at least minLen long, with the code after it, by length then that code.
func TestHostRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	lists := 0
	for iter := range 300 {
		var w []byte
		for n := rng.IntN(500); len(w) < n; {
			w = append(w, slices.Repeat([]byte{byte(kernels.FirstCode - 1 + rng.IntN(5))}, 1+rng.IntN(1+rng.IntN(50)))...)
		}
		minLen, from := 1+rng.IntN(20), rng.IntN(30)
		off, runs, byPos := hostRuns(w, minLen, from, 1+iter%3)
		// Every run, by symbol.
		var want [256][][4]uint32
		longest := [256]int{}
		for i := 0; i < len(w); {
			j := i
			for j < len(w) && w[j] == w[i] {
				j++
			}
			x := w[i]
			longest[x] = max(longest[x], j-i)
			next := uint32(runEnd)
			if j < len(w) {
				next = uint32(w[j])
			}
			if j-i >= minLen {
				want[x] = append(want[x], [4]uint32{uint32(i), uint32(j - i), next, 0})
			}
			i = j
		}
		var all [][4]uint32
		wantOff := make([]uint32, 257)
		for x := range 256 {
			wantOff[x] = uint32(len(all))
			if from > 0 && x >= kernels.FirstCode && longest[x] >= from {
				rs := want[x]
				slices.SortFunc(rs, byAll)
				all = append(all, rs...)
			}
		}
		wantOff[256] = uint32(len(all))
		if len(all) == 0 {
			if off != nil || runs != nil || byPos != nil {
				t.Fatalf("iter %d: %v %v %v for a text without runs to list", iter, off, runs, byPos)
			}
			continue
		}
		lists++
		// Equal runs (length and next code) may come in any order.
		got := slices.Clone(runs)
		for x := range 256 {
			for _, rs := range [][][4]uint32{got[off[x]:off[x+1]], all[wantOff[x]:wantOff[x+1]]} {
				slices.SortFunc(rs, byAll)
			}
		}
		if !slices.Equal(off, wantOff) || !slices.Equal(got, all) {
			t.Fatalf("iter %d (minLen %d, from %d): off %v runs %v\nwant off %v runs %v", iter, minLen, from, off, runs, wantOff, all)
		}
		for x := range 256 {
			rs := runs[off[x]:off[x+1]]
			if !slices.IsSortedFunc(rs, byLenNext) {
				t.Fatalf("iter %d: symbol %d's runs not by length and next code: %v", iter, x, rs)
			}
			// The same runs by position.
			var pos [][2]uint32
			for _, r := range rs {
				pos = append(pos, [2]uint32{r[0], r[1]})
			}
			slices.SortFunc(pos, func(a, b [2]uint32) int { return cmp.Compare(a[0], b[0]) })
			if got := byPos[off[x]:off[x+1]]; !slices.Equal(got, pos) {
				t.Fatalf("iter %d: symbol %d's runs by position %v, want %v", iter, x, got, pos)
			}
		}
	}
	if lists < 100 {
		t.Fatalf("only %d texts had runs to list", lists)
	}
}

// runsReference is one or two records of random DNA with runs of one symbol (acgtn) up to
// maxRun long, and a query made of them with each run made longer or shorter and a few
// substitutions.
func runsReference(t testing.TB, rng *rand.Rand, size, maxRun int) (*kernels.Reference, []byte) {
	rb := kernels.NewReferenceBuilder(false)
	var all []byte
	for r := range 1 + rng.IntN(2) {
		s := randomSeq(rng, size/2+rng.IntN(size), "acgt")
		for range 1 + rng.IntN(6) {
			i := rng.IntN(len(s))
			s = slices.Insert(s, i, slices.Repeat([]byte{"acgtn"[rng.IntN(5)]}, 1+rng.IntN(maxRun))...)
		}
		all = append(all, s...)
		rb.Add(fmt.Sprint("r", r), s)
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	var q []byte
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j] == all[i] {
			j++
		}
		n := j - i
		if n > 3 && rng.IntN(2) == 0 {
			n = max(1, n+rng.IntN(41)-20)
		}
		q = append(q, slices.Repeat(all[i:i+1], n)...)
		i = j
	}
	return ref, mutateSeq(rng, q, 0.003)
}

// TestGPUMatcherMaxMatchRuns: -maxmatch inside runs of one symbol (gaps of N against gaps of N,
// poly-A), whose matches mm_chain takes from the pages' runs (run ranges) from depths lowered to a
// few symbols, against the CPU: windows that end inside runs, short pieces, cut pieces and small
// lookaheads (runs that reach a cut piece's codes), N a symbol or not.
func TestGPUMatcherMaxMatchRuns(t *testing.T) {
	b := gpuBackend(t)
	defer func(v int) { runFrom = v }(runFrom)
	rng := rand.New(rand.NewPCG(33, 34))
	var runItems, relaunches int64
	for iter := range 10 {
		runFrom = 1 + rng.IntN(60)
		ref, q := runsReference(t, rng, 3000, 700)
		seqs := [][]byte{q, q[rng.IntN(len(q)/2):]}
		minLen := 8 + rng.IntN(40)
		for _, ps := range []int{0, 900 + rng.IntN(2000)} {
			opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: minLen, PageSize: ps}
			want := newCPUMatcher(t, ref, opts)
			for _, cfg := range []matchConfig{{}, {PieceLen: 7, Lookahead: 40, Workers: 1, HostIndex: true}} {
				got := newTestMatcher(t, b, ref, opts, cfg)
				for _, cut := range []int{1 << 30, 500} {
					nuc := rng.IntN(3) == 0
					what := fmt.Sprintf("iter %d minLen %d page %d cut %d nucOnly %v runFrom %d %+v", iter, minLen, ps, cut, nuc, runFrom, cfg)
					n := compareMatch(t, what, want, got, queryBatch(seqs, &ref.Alpha, true, nuc, cut))
					t.Logf("%s: %d matches", what, n)
				}
				runItems += got.stats.runItems.Load()
				relaunches += got.stats.relaunches.Load()
				got.Close()
			}
		}
	}
	t.Logf("%d positions' matches from runs, %d launches done again", runItems, relaunches)
	if runItems < 1000 {
		t.Fatalf("only %d positions took their matches from runs", runItems)
	}
}

// BenchmarkGPUMaxMatchGap: 20 kbp, 40 kbp of N and 20 kbp against itself, -maxmatch -l 100 (kernels/cpu's
// BenchmarkMaxMatchGap on the GPU), with run ranges and without (runFrom 0: every level climbed).
func BenchmarkGPUMaxMatchGap(b *testing.B) {
	be := gpuBackend(b)
	rng := rand.New(rand.NewPCG(46, 47))
	rec := slices.Concat(randomSeq(rng, 20000, "acgt"), slices.Repeat([]byte("n"), 40000), randomSeq(rng, 20000, "acgt"))
	rb := kernels.NewReferenceBuilder(false)
	rb.Add("g", rec)
	ref, err := rb.Build()
	if err != nil {
		b.Fatal(err)
	}
	batch := queryBatch([][]byte{rec}, &ref.Alpha, false, false, 1<<12)
	for _, from := range []int{cpu.RunEmitDepth, 0} {
		b.Run(fmt.Sprint("runFrom=", from), func(b *testing.B) {
			defer func(v int) { runFrom = v }(runFrom)
			runFrom = from
			m := newTestMatcher(b, be, ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 100}, matchConfig{})
			defer m.Close()
			var res kernels.Result
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				res.Reset()
				if err := m.Match(batch, &res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(res.Matches)), "matches")
			b.Log(m.Stats())
		})
	}
}
