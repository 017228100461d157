package cpu

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// TestOccMatchesCounting compares Rank and Symbol with counting, for alphabets from DNA's six
// codes to large ones, at lengths around block edges.
func TestOccMatchesCounting(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, sigma := range []int{2, 3, 6, 7, 9, 20, 40} {
		for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 129, 300, 1000} {
			bwt := make([]byte, n)
			for i := range bwt {
				bwt[i] = byte(rng.Intn(sigma))
			}
			o := NewOcc(func(i int) byte { return bwt[i] }, n, sigma)
			for c := kernels.FirstCode; c < sigma; c++ {
				r := 0
				for i := 0; i <= n; i++ {
					if got := o.Rank(byte(c), i); got != r {
						t.Fatalf("sigma %d n %d: Rank(%d, %d) = %d, want %d", sigma, n, c, i, got, r)
					}
					if i < n && int(bwt[i]) == c {
						r++
					}
				}
			}
			for i, c := range bwt {
				if got := o.Symbol(i); got != c {
					t.Fatalf("sigma %d n %d: Symbol(%d) = %d, want %d", sigma, n, i, got, c)
				}
			}
		}
	}
}

// BenchmarkOccRank asks for the ranks of random DNA symbols at random rows of a 4 M-row index
// (the backward steps of matching), in MB/s of ranks (a rank a byte).
func BenchmarkOccRank(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	const n = 4 << 20
	bwt := make([]byte, n)
	for i := range bwt {
		bwt[i] = byte(kernels.FirstCode + rng.Intn(4))
	}
	o := NewOcc(func(i int) byte { return bwt[i] }, n, kernels.FirstCode+4)
	rows := make([]int, 1<<16)
	syms := make([]byte, len(rows))
	for i := range rows {
		rows[i] = rng.Intn(n + 1)
		syms[i] = byte(kernels.FirstCode + rng.Intn(4))
	}
	b.SetBytes(int64(len(rows)))
	sum := 0
	for b.Loop() {
		for i, r := range rows {
			sum += o.Rank(syms[i], r)
		}
	}
	if sum == -1 {
		b.Fatal(sum)
	}
}

// TestOccThreads: the rank structure built in parts on several goroutines is the one built on one.
func TestOccThreads(t *testing.T) {
	defer func(m int) { storeMinPart = m }(storeMinPart)
	storeMinPart = 1
	rng := rand.New(rand.NewSource(7))
	for _, sigma := range []int{3, 6, 7, 20} {
		for _, n := range []int{1, 127, 128, 129, 1000, 5000} {
			bwt := make([]byte, n)
			for i := range bwt {
				bwt[i] = byte(rng.Intn(sigma))
			}
			want := NewOcc(func(i int) byte { return bwt[i] }, n, sigma)
			for _, threads := range []int{2, 3, 8} {
				got := NewOccThreads(func(i int) byte { return bwt[i] }, n, sigma, threads)
				if !slices.Equal(got.data, want.data) {
					t.Fatalf("sigma %d n %d threads %d: rank structure differs", sigma, n, threads)
				}
			}
		}
	}
}

// TestBlockMasks: every symbol's masks from blockMasks are masks', for every plane count.
func TestBlockMasks(t *testing.T) {
	r := rand.New(rand.NewSource(78))
	for _, sigma := range []int{2, 3, 4, 6, 9, 17, 40, 130, 256} {
		bwt := make([]byte, 1000)
		for i := range bwt {
			bwt[i] = byte(r.Intn(sigma))
		}
		o := NewOcc(func(i int) byte { return bwt[i] }, len(bwt), sigma)
		var ms [256][2]uint64
		for base := 0; base+o.stride <= len(o.data); base += o.stride {
			o.blockMasks(base, &ms)
			for c := range 1 << o.planes {
				lo, hi := o.masks(base, byte(c))
				if ms[c] != [2]uint64{lo, hi} {
					t.Fatalf("sigma %d block at %d symbol %d: %x, want %x %x", sigma, base, c, ms[c], lo, hi)
				}
			}
		}
	}
}

// TestSelectOther checks SelectOther against a scan of the BWT, for every row not holding c, from
// every block at or before it, with runs of one symbol over many blocks.
func TestSelectOther(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for iter := range 40 {
		sigma := kernels.FirstCode + 1 + rng.Intn(5)
		var bwt []byte
		for n := rng.Intn(3000); len(bwt) < n; {
			x := byte(rng.Intn(sigma))
			bwt = append(bwt, bytes.Repeat([]byte{x}, 1+rng.Intn([]int{1, 5, 700}[rng.Intn(3)]))...)
		}
		o := NewOcc(func(i int) byte { return bwt[i] }, len(bwt), sigma)
		for c := byte(kernels.FirstCode); int(c) < sigma; c++ {
			j := 0
			for row, x := range bwt {
				if x == c {
					continue
				}
				from := rng.Intn(row/occBlock + 1)
				if got := o.SelectOther(c, j, from); got != row {
					t.Fatalf("iter %d: SelectOther(%d, %d, from block %d) = %d, want %d", iter, c, j, from, got, row)
				}
				j++
			}
		}
	}
}
