package formats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendCount: a count line is the name, a tab, the count in decimal and a newline, for any
// count, whatever the buffer held before.
func TestAppendCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 20000 {
		n := i - 20
		if i > 1000 {
			n = rng.IntN(1 << uint(rng.IntN(40)))
		}
		name := fmt.Sprintf("p%d", rng.IntN(100))
		prefix := []byte("x\t1\n")[:rng.IntN(5)]
		if got, want := string(AppendCount(prefix, []byte(name), n)), string(prefix)+fmt.Sprintf("%s\t%d\n", name, n); got != want {
			t.Fatalf("count %d: %q, want %q", n, got, want)
		}
	}
}

// TestAppendLocate: a locate line is the name, the sequence name, the position in decimal and
// the strand, tab-separated, for positions of every number of digits, whatever the buffer held;
// AppendLocateAt writes it from its prefix.
func TestAppendLocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for i := range 30000 {
		pos := i - 10
		switch {
		case i > 20000:
			pos = rng.IntN(1 << uint(rng.IntN(63)))
		case i > 1000:
			p10 := 1
			for range rng.IntN(19) {
				p10 *= 10
			}
			pos = p10 + rng.IntN(3) - 1 // around each power of ten
		}
		name := fmt.Sprintf("p%d", rng.IntN(100))
		prefix := []byte("x\ty\t1\t+\n")[:rng.IntN(9)]
		want := string(prefix) + fmt.Sprintf("%s\tchr1\t%d\t-\n", name, pos)
		if got := string(AppendLocate(prefix, []byte(name), "chr1", pos, '-')); got != want {
			t.Fatalf("position %d: %q, want %q", pos, got, want)
		}
		if got := string(AppendLocateAt(prefix, AppendLocatePrefix(nil, []byte(name), "chr1"), pos, '-')); got != want {
			t.Fatalf("position %d from its prefix: %q, want %q", pos, got, want)
		}
	}
}

// BenchmarkAppendLocate writes 4,096 locate lines of one pattern in one record (a repeat's, of 85
// bases, named by itself as in one-pattern-a-line input, at positions of nine or ten digits):
// each by AppendLocate, or from the pattern's prefix by AppendLocateAt (as the locate stage does).
func BenchmarkAppendLocate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	pos := make([]int, 4096)
	for i := range pos {
		pos[i] = 1 + rng.IntN(2_500_000_000)
	}
	buf := make([]byte, 0, 128*len(pos))
	name := []byte(strings.Repeat("ACGTTGCAA", 10)[:85])
	b.Run("lines", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for _, p := range pos {
				buf = AppendLocate(buf, name, "chr7", p, '+')
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("prefix", func(b *testing.B) {
		var prefix []byte
		for b.Loop() {
			buf = buf[:0]
			prefix = AppendLocatePrefix(prefix[:0], name, "chr7")
			for _, p := range pos {
				buf = AppendLocateAt(buf, prefix, p, '+')
			}
		}
		b.SetBytes(int64(len(buf)))
	})
}
