package cpu

import (
	"math/rand"
	"slices"
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

// TestCompactLCPLevels: the searches climb the levels above min2 (rows far apart: a wide interval
// of a satellite repeat), on 2^22 rows that are all deep but for a few dips.
func TestCompactLCPLevels(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	n := 1<<22 + 17
	vals := make([]int32, n)
	for i := 1; i < n-1; i++ {
		vals[i] = int32(300 + rng.Intn(200))
	}
	dips := []int{0, n - 1}
	for range 40 {
		k := 1 + rng.Intn(n-2)
		vals[k] = int32(1 + rng.Intn(299))
		dips = append(dips, k)
	}
	slices.Sort(dips)
	dips = slices.Compact(dips)
	l := newCompactLCP(n, func(k int) int32 { return vals[k] })
	if len(l.levels[4]) != 1 || len(l.levels[3]) != 17 {
		t.Fatalf("levels 3 and 4 of %d and %d entries", len(l.levels[3]), len(l.levels[4]))
	}
	for q := range 20000 {
		k := rng.Intn(n)
		if q%4 == 0 { // next to a dip, on either side of a block's edge
			k = min(max(dips[rng.Intn(len(dips))]+rng.Intn(129)-64, 0), n-1)
		}
		d := int32(1 + rng.Intn(300)) // every row but the dips is deeper
		want := 0
		for _, p := range dips {
			if p <= k && vals[p] < d {
				want = p
			}
		}
		if vals[k] < d {
			want = k
		}
		if got := l.prevSmaller(k, d); got != want {
			t.Fatalf("prevSmaller(%d, %d) = %d, want %d", k, d, got, want)
		}
		want = n - 1
		for i := len(dips) - 1; i >= 0; i-- {
			if p := dips[i]; p >= k && vals[p] < d {
				want = p
			}
		}
		if vals[k] < d {
			want = k
		}
		if got := l.nextSmaller(k, d); got != want {
			t.Fatalf("nextSmaller(%d, %d) = %d, want %d", k, d, got, want)
		}
	}
}

// TestBuildCompactLCP compares the LCP built in rounds with PLCP's, array for array, on texts
// with long repeats (values over the escape byte), separators and runs, for many round sizes and
// thread counts.
func TestBuildCompactLCP(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	texts := [][]byte{{2}, {2, 2}, {3, 2, 3, 2, 3}}
	for _, n := range []int{100, 1000, 5000} {
		for _, sigma := range []int{3, 4, 6} {
			w := make([]byte, n)
			for i := range w {
				w[i] = byte(1 + rng.Intn(sigma-1))
			}
			// Copies of earlier stretches, some longer than the escape byte.
			for range 5 {
				l := rng.Intn(min(600, n/3))
				src, dst := rng.Intn(n-l), rng.Intn(n-l)
				copy(w[dst:dst+l], w[src:src+l])
			}
			texts = append(texts, w)
		}
	}
	run := make([]byte, 700)
	for i := range run {
		run[i] = 2
	}
	texts = append(texts, run)
	for ti, w := range texts {
		n := len(w)
		sa := make([]int32, n+1)
		sa[0] = int32(n)
		SuffixArray(w, sa[1:])
		plcp := PLCP(w, sa[1:])
		want := newCompactLCP(n+2, func(k int) int32 {
			if k <= 1 || k > n {
				return 0
			}
			return plcp[sa[k]]
		})
		for _, round := range []int{1, 7, 64, n/3 + 1, n} {
			for _, threads := range []int{1, 3} {
				got := buildCompactLCPRounds(w, sa, threads, round)
				if !slices.Equal(got.small, want.small) || !slices.Equal(got.bigRow, want.bigRow) || !slices.Equal(got.bigVal, want.bigVal) ||
					!slices.Equal(got.min1, want.min1) || !slices.Equal(got.min2, want.min2) {
					t.Fatalf("text %d (n %d), rounds of %d, %d threads: arrays differ from PLCP's", ti, n, round, threads)
				}
			}
		}
	}
}

// BenchmarkSmallerEscaped: previous and next smaller searches among rows whose values are all
// escaped (a repeat's), each search stopping within its block of 64 or the one beside it.
func BenchmarkSmallerEscaped(b *testing.B) {
	rng := rand.New(rand.NewSource(11))
	n := 1 << 20
	vals := make([]int32, n)
	for i := 1; i < n-1; i++ {
		vals[i] = int32(300 + rng.Intn(200))
	}
	l := newCompactLCP(n, func(k int) int32 { return vals[k] })
	ks := make([]int, 4096)
	for i := range ks {
		ks[i] = 1 + rng.Intn(n-2)
	}
	b.ResetTimer()
	sum := 0
	for i := range b.N {
		k := ks[i%len(ks)]
		sum += l.prevSmaller(k, int32(320+i%150)) + l.nextSmaller(k, int32(320+i%150))
	}
	if sum == 0 {
		b.Fatal("no rows found")
	}
}
