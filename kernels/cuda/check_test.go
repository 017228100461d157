package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// earlyOf returns the arrays of pages as an index file's early pages give them (without C, the
// deep rows and the levels), copies of them when copy is set.
func earlyOf(pages []*cpu.Page, copy bool) []cpu.DeviceArrays {
	early := make([]cpu.DeviceArrays, len(pages))
	for i, p := range pages {
		a := p.DeviceArrays()
		a.C, a.Deep, a.LCPUp = [256]int{}, nil, nil
		if copy {
			a.SA, a.LCP, a.Occ = slices.Clone(a.SA), slices.Clone(a.LCP), slices.Clone(a.Occ)
			a.LCPBigRow, a.LCPBigVal = slices.Clone(a.LCPBigRow), slices.Clone(a.LCPBigVal)
			a.LCPMin1, a.LCPMin2 = slices.Clone(a.LCPMin1), slices.Clone(a.LCPMin2)
		}
		early[i] = a
	}
	return early
}

// TestGPUMatcherDeviceChecks: an index file's pages checked on the card (sums given) match as the
// CPU does without the host's checks running; each kind of damage fails a device check, after
// which the host's checks run and give the error; the checksums' error comes before either.
func TestGPUMatcherDeviceChecks(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(41, 42))
	damages := []struct {
		name string
		hurt func(a *cpu.DeviceArrays) bool
	}{
		{"suffix array row out of range", func(a *cpu.DeviceArrays) bool { a.SA[1+rng.IntN(a.N)] = int32(a.N + rng.IntN(3)); return true }},
		{"suffix array row 0", func(a *cpu.DeviceArrays) bool { a.SA[0] = 0; return true }},
		{"LCP block minimum", func(a *cpu.DeviceArrays) bool { a.LCPMin1[rng.IntN(len(a.LCPMin1))]++; return true }},
		{"LCP second minimum", func(a *cpu.DeviceArrays) bool { a.LCPMin2[rng.IntN(len(a.LCPMin2))]--; return true }},
		{"LCP side value", func(a *cpu.DeviceArrays) bool {
			if len(a.LCPBigVal) == 0 {
				return false
			}
			a.LCPBigVal[rng.IntN(len(a.LCPBigVal))] = int32(rng.IntN(cpu.LCPEscape))
			return true
		}},
		{"LCP byte", func(a *cpu.DeviceArrays) bool { a.LCP[a.N+1] = 3; return true }},
		{"rank count", func(a *cpu.DeviceArrays) bool {
			nb := len(a.Occ) / a.OccStride
			if nb < 2 || a.OccCounts == 0 {
				return false
			}
			a.Occ[(1+rng.IntN(nb-1))*a.OccStride] += 1 << (32 * uint(rng.IntN(2)))
			return true
		}},
		{"rank plane", func(a *cpu.DeviceArrays) bool {
			k := rng.IntN(len(a.Occ) / a.OccStride)
			valid := min(cpu.OccBlockRows, a.N+1-k*cpu.OccBlockRows) // rows of the block that exist
			if valid <= 0 {
				return false
			}
			r := rng.IntN(valid)
			a.Occ[k*a.OccStride+a.OccCounts+2*rng.IntN(a.OccPlanes)+r/64] ^= 1 << uint(r%64)
			return true
		}},
	}
	hurt, tried := 0, 0
	for iter := range 12 {
		ref, all := randomReference(rng, 1+rng.IntN(3), 6000, iter%3 == 0, iter%4 == 1)
		if ref == nil || len(ref.Text) < 300 {
			continue
		}
		mode := allModes[iter%3]
		opts := kernels.MatchOptions{Mode: mode, MinLen: []int{8, 20, 300}[iter%3], PageSize: []int{0, len(ref.Text)/3 + 1}[iter%2]}
		want := newCPUMatcher(t, ref, opts)
		what := fmt.Sprintf("iter %d (%v, -l %d, %d pages)", iter, mode, opts.MinLen, len(want.Pages()))
		checks := 0
		checked := func() (*cpu.Matcher, error) { checks++; return want, nil }
		sums := func() error { return nil }
		m, err := b.NewMatcherFromEarlyPages(ref, opts, earlyOf(want.Pages(), iter%2 == 0), sums, checked)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if gm, ok := m.(*gpuMatcher); !ok || !gm.fs.resident || checks != 0 {
			t.Fatalf("%s: %T, not resident on the GPU, or the host's checks ran %d times", what, m, checks)
		}
		seqs := [][]byte{mutateSeq(rng, all, 0.02), mutateSeq(rng, all[:len(all)/2], 0.05)}
		compareMatch(t, what, want, m, queryBatch(seqs, &ref.Alpha, true, false, 1+rng.IntN(200)))
		m.Close()

		failed := errors.New("page 0: sections SUFA, OCCB and LCP: damaged")
		errSums := errors.New("section SUFA: checksum mismatch")
		for _, dm := range damages {
			early := earlyOf(want.Pages(), true)
			p := rng.IntN(len(early))
			tried++
			if !dm.hurt(&early[p]) {
				continue
			}
			hurt++
			checks = 0
			_, err := b.NewMatcherFromEarlyPages(ref, opts, early, sums, func() (*cpu.Matcher, error) { checks++; return nil, failed })
			if !errors.Is(err, failed) || checks != 1 {
				t.Fatalf("%s, page %d, %s: error %v after %d host checks, want the host's", what, p, dm.name, err, checks)
			}
			checks = 0
			_, err = b.NewMatcherFromEarlyPages(ref, opts, early, func() error { return errSums }, func() (*cpu.Matcher, error) { checks++; return nil, failed })
			if !errors.Is(err, errSums) || checks != 0 {
				t.Fatalf("%s, page %d, %s, checksums failing: error %v after %d host checks, want the checksums'", what, p, dm.name, err, checks)
			}
		}
	}
	if hurt < tried/2 {
		t.Errorf("only %d of %d damages applied", hurt, tried)
	}
}
