package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortPositions checks sortPositions against slices.Sort on runs short and long, of
// offsets that differ in every byte or share some, with duplicates, from several bases.
func TestSortPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	var tmp []int64
	var tmp32 []uint32
	for r := range 400 {
		n := rng.IntN(3 * radixMin)
		if r%5 == 0 {
			n = radixMin + rng.IntN(20000)
		}
		base := int64(0)
		if r%2 == 1 {
			base = rng.Int64N(1 << 40)
		}
		span := int64(1) << (1 + rng.IntN(32)) // offsets in [0, span): some bytes shared
		s := make([]int64, n)
		for i := range s {
			s[i] = base + rng.Int64N(span)
			if i > 0 && rng.IntN(8) == 0 {
				s[i] = s[rng.IntN(i)]
			}
		}
		want := slices.Clone(s)
		slices.Sort(want)
		// As Searcher's positions in a window and PagedSearcher's 32-bit offsets from its page.
		pos, offs := make([]int64, n), make([]uint32, n)
		for i, v := range s {
			pos[i], offs[i] = v-base, uint32(v-base)
		}
		tmp = sortPositions(pos, tmp)
		for i, p := range pos {
			if base+p != want[i] {
				t.Fatalf("round %d (%d positions from %d, span %d): not sorted as slices.Sort", r, n, base, span)
			}
		}
		tmp32 = sortPositions(offs, tmp32)
		for i, o := range offs {
			if base+int64(o) != want[i] {
				t.Fatalf("round %d (%d offsets, span %d): not sorted as slices.Sort", r, n, span)
			}
		}
	}
}

func BenchmarkSortPositions(b *testing.B) {
	for _, n := range []int{300, 600, 1200, 5000, 1 << 20} {
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]int64, n)
		for i := range src {
			src[i] = rng.Int64N(1_500_000_000)
		}
		s := make([]int64, n)
		b.Run(fmt.Sprint("radix/", n), func(b *testing.B) {
			var tmp []int64
			for b.Loop() {
				copy(s, src)
				tmp = sortPositions(s, tmp)
			}
		})
		src32, s32 := make([]uint32, n), make([]uint32, n)
		for i, v := range src {
			src32[i] = uint32(v)
		}
		b.Run(fmt.Sprint("radix32/", n), func(b *testing.B) {
			var tmp []uint32
			for b.Loop() {
				copy(s32, src32)
				tmp = sortPositions(s32, tmp)
			}
		})
		b.Run(fmt.Sprint("pdq/", n), func(b *testing.B) {
			for b.Loop() {
				copy(s, src)
				slices.Sort(s)
			}
		})
	}
}
