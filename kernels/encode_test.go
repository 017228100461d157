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

// TestFill: sequences of a, c, g and t in either case with any other bytes among them at several
// rates (every byte value), of every length up to a few words and on to 300, at odd offsets, both
// strands, with and without -n, against the byte at a time encoding.
func TestFill(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var seen [256]bool
	for _, c := range "ACGTNacgtnRYKM" {
		seen[c] = true
	}
	a := NewAlphabet(&seen)
	for _, nuc := range []bool{false, true} {
		e := NewQueryEncoder(&a, nuc)
		for _, rate := range []int{0, 2, 3, 100, 1000} { // another byte one in rate (0: never)
			for n := 0; n < 300; n += 1 + n/40 {
				for off := range 4 {
					buf := make([]byte, off+n)
					for i := range buf {
						buf[i] = "ACGTacgt"[r.IntN(8)]
						if rate > 0 && r.IntN(rate) == 0 {
							buf[i] = byte(r.IntN(256))
						}
					}
					seq := buf[off:]
					for _, rev := range []bool{false, true} {
						got, want := make([]byte, n+1), make([]byte, n+1)
						got[n], want[n] = 0xee, 0xee // nothing written past the end
						e.Fill(got[:n], seq, rev)
						fillBytes(e, want[:n], seq, rev)
						if string(got) != string(want) {
							t.Fatalf("-n %v rate %d n %d offset %d reverse %v:\n%v\nwant %v", nuc, rate, n, off, rev, got, want)
						}
					}
				}
			}
		}
	}
}

// TestFillVectorUsed: where the processor has the vector path, the encoders of a DNA reference,
// with and without -n and with IUPAC codes in the reference, take it (TestFill then checks it).
func TestFillVectorUsed(t *testing.T) {
	if !vecFill {
		t.Skip("no vector path on this processor or build")
	}
	for _, syms := range []string{"acgt", "acgtn", "acgtnrykm"} {
		var seen [256]bool
		for _, c := range syms {
			seen[c] = true
		}
		a := NewAlphabet(&seen)
		for _, nuc := range []bool{false, true} {
			if !NewQueryEncoder(&a, nuc).useVec {
				t.Errorf("reference of %q, -n %v: the vector path is not used", syms, nuc)
			}
		}
	}
}

// FuzzFill: Fill against the byte at a time encoding, for any bytes.
func FuzzFill(f *testing.F) {
	f.Add([]byte("ACGTACGTACGTACGTACGTACGTACGTACGTACGTNACGT"), false)
	f.Add([]byte("acgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtacgtAAAA"), true)
	var seen [256]bool
	for _, c := range "ACGTN" {
		seen[c] = true
	}
	a := NewAlphabet(&seen)
	e := NewQueryEncoder(&a, false)
	f.Fuzz(func(t *testing.T, seq []byte, rev bool) {
		got, want := make([]byte, len(seq)), make([]byte, len(seq))
		e.Fill(got, seq, rev)
		fillBytes(e, want, seq, rev)
		if string(got) != string(want) {
			t.Fatalf("Fill(%q, reverse %v) = %v, want %v", seq, rev, got, want)
		}
	})
}

// fillBench returns the encoder of a reference of a, c, g and t (the reference's bytes are
// lowercased) and a 150-base read with room for its codes.
func fillBench(seed uint64) (e *QueryEncoder, seq, dst []byte) {
	var seen [256]bool
	for _, c := range "acgt" {
		seen[c] = true
	}
	a := NewAlphabet(&seen)
	r := rand.New(rand.NewPCG(seed, 4))
	seq = make([]byte, 150)
	for i := range seq {
		seq[i] = "ACGT"[r.IntN(4)]
	}
	return NewQueryEncoder(&a, false), seq, make([]byte, 150)
}

// BenchmarkFill: 150-base reads, both strands.
func BenchmarkFill(b *testing.B) {
	e, seq, dst := fillBench(3)
	b.SetBytes(300)
	for b.Loop() {
		e.Fill(dst, seq, false)
		e.Fill(dst, seq, true)
	}
}

// BenchmarkFillWords: BenchmarkFill by the 256-entry tables alone (the path of bytes the vector
// path does not take, and of processors without it).
func BenchmarkFillWords(b *testing.B) {
	e, seq, dst := fillBench(3)
	b.SetBytes(300)
	for b.Loop() {
		e.fillWords(dst, seq, false)
		e.fillWords(dst, seq, true)
	}
}

// BenchmarkFillParallel: BenchmarkFill on every thread at once, as the workers of a many-core
// host encode reads.
func BenchmarkFillParallel(b *testing.B) {
	b.SetBytes(300)
	b.RunParallel(func(pb *testing.PB) {
		e, seq, dst := fillBench(3)
		for pb.Next() {
			e.Fill(dst, seq, false)
			e.Fill(dst, seq, true)
		}
	})
}
