package formats

import (
	"fmt"
	"math/rand/v2"
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
// the strand, tab-separated, for positions of every number of digits, whatever the buffer held.
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
		if got, want := string(AppendLocate(prefix, []byte(name), "chr1", pos, '-')), string(prefix)+fmt.Sprintf("%s\tchr1\t%d\t-\n", name, pos); got != want {
			t.Fatalf("position %d: %q, want %q", pos, got, want)
		}
	}
}

func BenchmarkAppendLocate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	pos := make([]int, 4096)
	for i := range pos {
		pos[i] = 1 + rng.IntN(250_000_000)
	}
	buf := make([]byte, 0, 64*len(pos))
	name := []byte("pattern12345")
	for b.Loop() {
		buf = buf[:0]
		for _, p := range pos {
			buf = AppendLocate(buf, name, "chr7", p, '+')
		}
	}
	b.SetBytes(int64(len(buf)))
}
