package cpu

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// naiveRuns is every maximal run of w, in text order.
func naiveRuns(w []byte) (rs []SymRun, syms []byte) {
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && w[j] == w[i] {
			j++
		}
		rs, syms = append(rs, SymRun{i, j - i}), append(syms, w[i])
		i = j
	}
	return rs, syms
}

// TestListRuns checks listRuns against every run of random texts with runs of every length
// around the minimum asked for, at the ends too.
func TestListRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(71))
	for iter := range 400 {
		n := rng.Intn(400)
		w := make([]byte, 0, n)
		for len(w) < n {
			x := byte(kernels.FirstCode - 1 + rng.Intn(5)) // one code that is not a symbol
			w = append(w, slices.Repeat([]byte{x}, 1+rng.Intn(1+rng.Intn(60)))...)
		}
		all, syms := naiveRuns(w)
		minLen := 1 + rng.Intn(40)
		for x := byte(0); x < kernels.FirstCode+4; x++ {
			var want []SymRun
			for i, r := range all {
				if syms[i] == x && r.N >= minLen {
					want = append(want, r)
				}
			}
			if got := listRuns(w, x, minLen); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("iter %d: listRuns(%v, %d, %d) = %v, want %v", iter, w, x, minLen, got, want)
			}
		}
	}
}
