package cpu

import (
	"math/rand/v2"
	"testing"
)

// Every byte value against every bound, in each of the eight byte places, beside bytes that would
// carry into it if the comparisons leaked across bytes.
func TestSWARCompare(t *testing.T) {
	for m := 0; m < 256; m++ {
		for v := 0; v < 256; v++ {
			for j := 0; j < 8; j++ {
				for _, fill := range []uint64{0, 0xff, 0x7f, 0x80, uint64(m)} {
					x := fill * swarLow
					x &^= 0xff << (8 * j)
					x |= uint64(v) << (8 * j)
					ge, eq := swarGE(x, byte(m)), swarEq(x, byte(m))
					for b := 0; b < 8; b++ {
						xb := byte(x >> (8 * b))
						if got, want := ge>>(8*b+7)&1 == 1, xb >= byte(m); got != want {
							t.Fatalf("swarGE(%#x, %d) byte %d: %v, want %v", x, m, b, got, want)
						}
						if got, want := eq>>(8*b+7)&1 == 1, xb == byte(m); got != want {
							t.Fatalf("swarEq(%#x, %d) byte %d: %v, want %v", x, m, b, got, want)
						}
					}
					if ge&^swarHigh != 0 || eq&^swarHigh != 0 {
						t.Fatalf("bits other than the high ones set: %#x %#x", ge, eq)
					}
				}
			}
		}
	}
}

func TestSWARBits(t *testing.T) {
	for v := 0; v < 256; v++ {
		var h uint64
		for j := 0; j < 8; j++ {
			if v>>j&1 == 1 {
				h |= 0x80 << (8 * j)
			}
		}
		if got := swarBits(h); got != uint64(v) {
			t.Fatalf("swarBits(%#x) = %#x, want %#x", h, got, v)
		}
	}
}

// markDeepThreads against a row-by-row marking, for LCPs with escapes, every kind of bound and
// lengths that leave partial words.
func TestMarkDeepWords(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 62, 63, 64, 65, 1000, 4097} {
		rows := n + 2
		vals := make([]int32, rows)
		for k := 2; k < rows-1; k++ {
			switch r.IntN(4) {
			case 0:
				vals[k] = int32(r.IntN(20))
			case 1:
				vals[k] = int32(r.IntN(256))
			case 2:
				vals[k] = int32(250 + r.IntN(100))
			default:
				vals[k] = int32(r.IntN(600))
			}
		}
		lcp := newCompactLCP(rows, func(k int) int32 { return vals[k] })
		for _, minLen := range []int{0, 1, 19, 20, 127, 128, 129, 200, 254, 255, 256, 300, 599, 1000} {
			for _, threads := range []int{1, 3} {
				p := &Page{n: n, lcp: lcp}
				p.markDeepThreads(minLen, threads)
				for k := 0; k < rows; k++ {
					if got, want := p.isDeep(k), vals[k] >= int32(minLen); got != want {
						t.Fatalf("n %d minLen %d threads %d: row %d (LCP %d) deep %v, want %v", n, minLen, threads, k, vals[k], got, want)
					}
				}
				for k := rows; k < 64*len(p.deep); k++ {
					if p.isDeep(k) {
						t.Fatalf("n %d minLen %d: row %d past the end marked", n, minLen, k)
					}
				}
			}
		}
	}
}

// BenchmarkMarkDeep: marking the rows of 64 M LCP values (about a tenth escaped) for -l 20.
func BenchmarkMarkDeep(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 64 << 20
	vals := make([]byte, n+2)
	for k := 2; k < n+1; k++ {
		vals[k] = byte(r.IntN(40))
		if r.IntN(10) == 0 {
			vals[k] = byte(200 + r.IntN(56))
		}
	}
	lcp := newCompactLCP(n+2, func(k int) int32 {
		if vals[k] == 255 {
			return 300
		}
		return int32(vals[k])
	})
	p := &Page{n: n, lcp: lcp}
	b.SetBytes(int64(n))
	for b.Loop() {
		p.markDeepThreads(20, 1)
	}
}
