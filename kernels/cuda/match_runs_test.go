package cuda

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/internal/runseq"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// byLenNext orders runs as hostRuns does, by length then next code; byAll then by position.
func byLenNext(a, b [4]uint32) int { return cmp.Or(cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2])) }
func byAll(a, b [4]uint32) int     { return cmp.Or(byLenNext(a, b), cmp.Compare(a[0], b[0])) }

// hostRuns is, by brute force, the page lists that the device finds (rl_mark, rl_list, then
// orderRuns) for the window w: every run at least minLen long of the symbols with a run of from.
func hostRuns(w []byte, minLen, from int) ([]uint32, [][4]uint32, [][2]uint32) {
	var all [][4]uint32
	var longest [256]int
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && w[j] == w[i] {
			j++
		}
		next := uint32(runEnd)
		if j < len(w) {
			next = uint32(w[j])
		}
		longest[w[i]] = max(longest[w[i]], j-i)
		if j-i >= max(minLen, 1) && w[i] >= kernels.FirstCode {
			all = append(all, [4]uint32{uint32(i), uint32(j - i), next, uint32(w[i])})
		}
		i = j
	}
	var found [][4]uint32
	for _, r := range all {
		if from > 0 && longest[r[3]] >= from {
			found = append(found, r)
		}
	}
	return orderRuns(found)
}

// TestOrderRuns checks the lists that mm_chain, mm_rows and pg_run_jump search (no GPU needed):
// runs of every symbol in any order in, each symbol's runs by length and next code, and by
// position, out.
func TestOrderRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for iter := range 300 {
		var found [][4]uint32
		for range rng.IntN(200) {
			found = append(found, [4]uint32{uint32(rng.IntN(5000)), uint32(1 + rng.IntN(50)), uint32([]int{runEnd, 0, 1, 2, 3, 4, 5}[rng.IntN(7)]),
				uint32(kernels.FirstCode + rng.IntN(5))})
		}
		in := slices.Clone(found)
		off, runs, byPos := orderRuns(found)
		if len(in) == 0 {
			if off != nil || runs != nil || byPos != nil {
				t.Fatalf("iter %d: lists %v %v %v of no runs", iter, off, runs, byPos)
			}
			continue
		}
		if len(off) != 257 || off[0] != 0 || int(off[256]) != len(in) || len(runs) != len(in) || len(byPos) != len(in) {
			t.Fatalf("iter %d: %d runs in, off %v, %d and %d out", iter, len(in), off, len(runs), len(byPos))
		}
		for x := range 256 {
			var want [][4]uint32
			for _, r := range in {
				if r[3] == uint32(x) {
					want = append(want, [4]uint32{r[0], r[1], r[2], 0})
				}
			}
			got := slices.Clone(runs[off[x]:off[x+1]])
			if !slices.IsSortedFunc(got, byLenNext) {
				t.Fatalf("iter %d: symbol %d's runs not by length and next code: %v", iter, x, got)
			}
			slices.SortFunc(got, byAll)
			slices.SortFunc(want, byAll)
			if !slices.Equal(got, want) {
				t.Fatalf("iter %d: symbol %d's runs %v, want %v", iter, x, got, want)
			}
			var pos [][2]uint32
			for _, r := range runs[off[x]:off[x+1]] {
				pos = append(pos, [2]uint32{r[0], r[1]})
			}
			slices.SortStableFunc(pos, func(a, b [2]uint32) int { return cmp.Compare(a[0], b[0]) })
			gotPos := byPos[off[x]:off[x+1]]
			if !slices.IsSortedFunc(gotPos, func(a, b [2]uint32) int { return cmp.Compare(a[0], b[0]) }) {
				t.Fatalf("iter %d: symbol %d's runs by position %v not in order", iter, x, gotPos)
			}
			slices.SortFunc(pos, func(a, b [2]uint32) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
			gp := slices.Clone(gotPos)
			slices.SortFunc(gp, func(a, b [2]uint32) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
			if !slices.Equal(gp, pos) {
				t.Fatalf("iter %d: symbol %d's runs by position %v, want %v", iter, x, gotPos, pos)
			}
		}
	}
}

// runsReference is one or two records of random DNA with runs of one symbol (acgtn) up to
// maxRun long, and a query made of them with each run made longer or shorter and a few
// substitutions.
func runsReference(t testing.TB, rng *rand.Rand, size, maxRun int) (*kernels.Reference, []byte) {
	rb := kernels.NewReferenceBuilder(false)
	var all []byte
	for r, s := range runseq.Records(rng.IntN, 2, 1, size, 6, maxRun) {
		all = append(all, s...)
		rb.Add(fmt.Sprint("r", r), s)
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return ref, mutateSeq(rng, runseq.Stretch(rng.IntN, all, 20), 0.003)
}

// TestGPUMatcherRuns: queries inside runs of one symbol (gaps of N against gaps of N, poly-A),
// against the CPU, in every mode, from depths lowered to a few symbols: -maxmatch's matches taken
// from the pages' runs (run and climb ranges), and start states moved on through runs
// (pg_run_jump); windows that end inside runs, short pieces, cut pieces and small lookaheads
// (runs that reach a cut piece's codes), N a symbol or not.
func TestGPUMatcherRuns(t *testing.T) {
	b := gpuBackend(t)
	defer func(v int) { runFrom = v }(runFrom)
	rng := rand.New(rand.NewPCG(33, 34))
	var runItems, jumps, relaunches int64
	for iter := range 12 {
		runFrom = 1 + rng.IntN(60)
		ref, q := runsReference(t, rng, 3000, 700)
		seqs := [][]byte{q, q[rng.IntN(len(q)/2):]}
		minLen := 8 + rng.IntN(40)
		mode := []kernels.Mode{kernels.MaxMatch, kernels.Mum, kernels.MumReference}[iter%3]
		for _, ps := range []int{0, 900 + rng.IntN(2000)} {
			opts := kernels.MatchOptions{Mode: mode, MinLen: minLen, PageSize: ps}
			want := newCPUMatcher(t, ref, opts)
			for _, cfg := range []matchConfig{{}, {PieceLen: 7, Lookahead: 40, Workers: 1, HostIndex: true}} {
				got := newTestMatcher(t, b, ref, opts, cfg)
				for _, cut := range []int{1 << 30, 500} {
					nuc := rng.IntN(3) == 0
					what := fmt.Sprintf("iter %d %v minLen %d page %d cut %d nucOnly %v runFrom %d %+v", iter, mode, minLen, ps, cut, nuc, runFrom, cfg)
					n := compareMatch(t, what, want, got, queryBatch(seqs, &ref.Alpha, true, nuc, cut))
					t.Logf("%s: %d matches", what, n)
				}
				runItems += got.stats.runItems.Load()
				jumps += got.stats.jumps.Load()
				relaunches += got.stats.relaunches.Load()
				got.Close()
			}
		}
	}
	t.Logf("%d positions' matches from runs, %d start states moved on through runs, %d launches done again", runItems, jumps, relaunches)
	if runItems < 1000 || jumps < 1000 {
		t.Fatalf("only %d positions took their matches from runs, %d start states were moved on through runs", runItems, jumps)
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

// runJumpRef is pg_run_jump (match.cuh) on the host, for TestRunJumpArithmetic: from (lo, hi) =
// the rows of x^m, pat beginning with k >= m x's.
func runJumpRef(off []uint32, runs [][4]uint32, pat []byte, k int, lo, hi, m uint32) (uint32, uint32, uint32, bool) {
	x := uint32(pat[0])
	rs := runs[off[x]:off[x+1]]
	J := min(uint32(k), rs[len(rs)-1][1])
	if J <= m {
		return lo, hi, m, true
	}
	toY := int(J) == k && k < len(pat) && pat[k] >= kernels.FirstCode
	var y, before, same uint32
	if toY {
		y = uint32(pat[k])
	}
	for _, r := range rs {
		if r[1] < m {
			continue
		}
		lower := r[2] == runEnd || r[2] < x
		c := min(r[1], J-1) - m + 1
		if lower {
			lo += c
		} else {
			hi -= c
		}
		if toY && r[1] >= uint32(k) {
			switch {
			case r[2] == y:
				same++
			case y < x && lower && (r[2] == runEnd || r[2] < y), y > x && !lower && r[2] > y:
				before++
			}
		}
	}
	m = J
	if toY && same > 0 {
		if y < x {
			lo += before
		} else {
			lo = hi - before - same
		}
		return lo, lo + same, uint32(k) + 1, true
	}
	return lo, hi, m, hi-lo == 1
}

// TestRunJumpArithmetic checks the arithmetic of pg_run_jump (through its host twin) against the
// rows found by brute force in windows with runs of every symbol, codes that are not symbols and
// runs that end the window: the rows of x^J, and of x^k y where the pattern goes on.
func TestRunJumpArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	checked, blocks := 0, 0
	for iter := range 200 {
		var w []byte
		for n := 200 + rng.IntN(2000); len(w) < n; {
			x := byte(kernels.FirstCode + rng.IntN(4))
			switch r := rng.IntN(10); {
			case r == 0:
				w = append(w, kernels.CodeNone)
			case r < 4:
				w = append(w, bytes.Repeat([]byte{x}, 1+rng.IntN(120))...)
			default:
				w = append(w, x)
			}
		}
		p := cpu.NewPage(w, kernels.FirstCode+4, 0, len(w), len(w))
		sa := p.DeviceArrays().SA
		minLen, from := 1+rng.IntN(10), 1+rng.IntN(30)
		off, runs, _ := hostRuns(w, minLen, from)
		if runs == nil {
			continue
		}
		// rows returns the rows whose suffix begins with pat (brute force).
		rows := func(pat []byte) (uint32, uint32) {
			lo, hi := -1, -1
			for r := 1; r < len(sa); r++ {
				if bytes.HasPrefix(w[sa[r]:], pat) {
					if lo < 0 {
						lo = r
					}
					hi = r + 1
				}
			}
			return uint32(max(lo, 0)), uint32(max(hi, 0))
		}
		K := max(from, minLen)
		for range 30 {
			x := byte(kernels.FirstCode + rng.IntN(4))
			if off[x] == off[x+1] {
				continue
			}
			longest := int(runs[off[x+1]-1][1])
			k := K + rng.IntN(longest+20)
			pat := bytes.Repeat([]byte{x}, k)
			for range rng.IntN(4) {
				pat = append(pat, byte(kernels.FirstCode+rng.IntN(4)))
			}
			if rng.IntN(8) == 0 {
				pat = append(pat, kernels.CodeNone)
			}
			for k < len(pat) && pat[k] == x {
				k++ // the pattern's run, as the device measures it
			}
			m := K + rng.IntN(max(min(k, longest)-K, 0)+1)
			lo, hi := rows(pat[:m])
			if hi-lo < 2 {
				continue
			}
			glo, ghi, gm, goOn := runJumpRef(off, runs, pat, k, lo, hi, uint32(m))
			// What the search reaches: the rows of pat[:gm], non-empty; it stops (goOn false)
			// only where no row goes on with pat[gm] and more than one row is left.
			wlo, whi := rows(pat[:gm])
			if glo != wlo || ghi != whi || whi <= wlo {
				t.Fatalf("iter %d: x %d k %d m %d longest %d pat %v: rows [%d, %d) at %d, want [%d, %d)", iter, x, k, m, longest, pat, glo, ghi, gm, wlo, whi)
			}
			if int(gm) < len(pat) && !goOn {
				if nlo, nhi := rows(pat[:gm+1]); nhi > nlo && pat[gm] >= kernels.FirstCode || ghi-glo == 1 {
					t.Fatalf("iter %d: x %d k %d m %d pat %v: stops at %d with rows [%d, %d) that go on", iter, x, k, m, pat, gm, glo, ghi)
				}
			}
			if int(gm) == k+1 {
				blocks++
			}
			checked++
		}
	}
	if checked < 1000 || blocks < 100 {
		t.Fatalf("only %d jumps checked, %d into x^k y", checked, blocks)
	}
}
