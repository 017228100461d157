package formats

import (
	"math/rand/v2"
	"testing"
)

// nonSpaceRunBytes is nonSpaceRun a byte at a time: what the word and vector paths must give.
func nonSpaceRunBytes(b []byte) int {
	for i, c := range b {
		if isSpace[c] {
			return i
		}
	}
	return len(b)
}

// TestNonSpaceRun: lines of every length up to a few vector blocks, at odd offsets, ended or cut
// by each white space byte, with low bytes that are not white space (0x01, 0x1f, 0x00) and bytes
// of 0x80 and above in them, against the byte at a time scan.
func TestNonSpaceRun(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	others := []byte{0, 1, 0x1f, 0x21, 0x7f, 0x80, 0xa0, 0xff, 'A', 'z'}
	spaces := []byte{' ', '\t', '\n', '\v', '\f', '\r'}
	for n := 0; n < 300; n++ {
		for off := range 3 {
			for trial := range 8 {
				buf := make([]byte, off+n)
				for i := range buf {
					buf[i] = "ACGTN#I"[r.IntN(7)]
					if trial%2 == 1 && r.IntN(40) == 0 {
						buf[i] = others[r.IntN(len(others))]
					}
				}
				b := buf[off:]
				if trial >= 4 && n > 0 {
					b[r.IntN(n)] = spaces[r.IntN(len(spaces))]
				}
				if got, want := nonSpaceRun(b), nonSpaceRunBytes(b); got != want {
					t.Fatalf("n %d offset %d trial %d: %d, want %d (%q)", n, off, trial, got, want, b)
				}
			}
		}
	}
	if useAVX2Run() {
		b := []byte("ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n")
		if k := lowRun(b); k != 64 {
			t.Fatalf("lowRun: %d, want the 64 bytes of two clean blocks", k)
		}
		b[40] = 0x01
		if k := lowRun(b); k != 40 {
			t.Fatalf("lowRun: %d, want the low byte at 40", k)
		}
	}
}

// useAVX2Run reports whether lowRun has a vector path here.
func useAVX2Run() bool { return lowRun(make([]byte, 32)) == 32 }

// FuzzNonSpaceRun: nonSpaceRun against the byte at a time scan, for any bytes.
func FuzzNonSpaceRun(f *testing.F) {
	f.Add([]byte("ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\r\n"))
	f.Add([]byte("IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\x01IIIIIIIIIIIIIIIII IIII"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := nonSpaceRun(b), nonSpaceRunBytes(b); got != want {
			t.Fatalf("nonSpaceRun(%q) = %d, want %d", b, got, want)
		}
	})
}

// BenchmarkNonSpaceRun: a read's sequence line and a read's name.
func BenchmarkNonSpaceRun(b *testing.B) {
	for _, n := range []int{150, 40} {
		line := make([]byte, n+1)
		for i := range n {
			line[i] = "ACGT"[i%4]
		}
		line[n] = '\n'
		b.Run(string(rune('0'+n/100))+string(rune('0'+n/10%10))+string(rune('0'+n%10)), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if nonSpaceRun(line) != n {
					b.Fatal("wrong run")
				}
			}
		})
	}
}
