package kernels

import (
	"math/rand/v2"
	"testing"
)

// fillBytes is Fill a byte at a time: what the word-at-a-time Fill must give.
func fillBytes(e *QueryEncoder, dst, seq []byte, reverse bool) {
	for i, c := range seq {
		if reverse {
			dst[len(seq)-1-i] = e.rev[c]
		} else {
			dst[i] = e.fwd[c]
		}
	}
}

// TestFill: every length up to a few words, every byte value, both strands, with and without -n.
func TestFill(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var seen [256]bool
	for _, c := range "ACGTNacgtnRYKM" {
		seen[c] = true
	}
	a := NewAlphabet(&seen)
	for _, nuc := range []bool{false, true} {
		e := NewQueryEncoder(&a, nuc)
		for n := 0; n < 70; n++ {
			seq := make([]byte, n)
			for i := range seq {
				seq[i] = byte(r.IntN(256))
				if r.IntN(2) == 0 {
					seq[i] = "ACGTacgtN"[r.IntN(9)]
				}
			}
			for _, rev := range []bool{false, true} {
				got, want := make([]byte, n), make([]byte, n)
				e.Fill(got, seq, rev)
				fillBytes(e, want, seq, rev)
				if string(got) != string(want) {
					t.Fatalf("-n %v n %d reverse %v: %v, want %v", nuc, n, rev, got, want)
				}
			}
		}
	}
}

// BenchmarkFill: 150-base reads, both strands.
func BenchmarkFill(b *testing.B) {
	var seen [256]bool
	for _, c := range "ACGT" {
		seen[c] = true
	}
	a := NewAlphabet(&seen)
	e := NewQueryEncoder(&a, false)
	r := rand.New(rand.NewPCG(3, 4))
	seq := make([]byte, 150)
	for i := range seq {
		seq[i] = "ACGT"[r.IntN(4)]
	}
	dst := make([]byte, 150)
	b.SetBytes(300)
	for b.Loop() {
		e.Fill(dst, seq, false)
		e.Fill(dst, seq, true)
	}
}
