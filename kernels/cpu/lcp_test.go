package cpu

import (
	"math/rand"
	"testing"
)

// TestCompactLCP compares the compact array's values and next/previous smaller searches with a
// plain scan, on values around the escape byte and arrays spanning several levels of blocks.
func TestCompactLCP(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, n := range []int{2, 3, 64, 65, 4096, 4097, 9000} {
		vals := make([]int32, n)
		for i := 1; i < n-1; i++ {
			switch rng.Intn(4) {
			case 0:
				vals[i] = int32(rng.Intn(20))
			case 1:
				vals[i] = int32(250 + rng.Intn(10))
			default:
				vals[i] = int32(200 + rng.Intn(400))
			}
		}
		l := newCompactLCP(n, func(k int) int32 { return vals[k] })
		for k, v := range vals {
			if got := l.at(k); got != v {
				t.Fatalf("n %d: at(%d) = %d, want %d", n, k, got, v)
			}
		}
		for range 2000 {
			k := rng.Intn(n)
			d := int32(1 + rng.Intn(600))
			want := k
			for vals[want] >= d {
				want--
			}
			if got := l.prevSmaller(k, d); got != want {
				t.Fatalf("n %d: prevSmaller(%d, %d) = %d, want %d", n, k, d, got, want)
			}
			want = k
			for vals[want] >= d {
				want++
			}
			if got := l.nextSmaller(k, d); got != want {
				t.Fatalf("n %d: nextSmaller(%d, %d) = %d, want %d", n, k, d, got, want)
			}
		}
	}
}
