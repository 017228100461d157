package bwz

import (
	"math/rand"
	"testing"
)

// benchTransform is a transform-like input, shaped after the BWT of the Linux sources: runs of
// one byte (70%) or of several (mean 12), whose move-to-front ranks are 1 a quarter of the time
// and spread to about 60.
func benchTransform(n int) []byte {
	rng := rand.New(rand.NewSource(21))
	mtf := newMTF()
	b := make([]byte, 0, n)
	for len(b) < n {
		u := rng.Float64()
		c := mtf.take(1 + int(u*u*u*60))
		k := 1
		if rng.Intn(10) >= 7 {
			k += int(rng.ExpFloat64() * 11)
		}
		for ; k > 0 && len(b) < n; k-- {
			b = append(b, c)
		}
	}
	return b
}

func benchDNA(n int) []byte {
	rng := rand.New(rand.NewSource(22))
	b := make([]byte, n)
	for i := range b {
		b[i] = "ACGT"[rng.Intn(4)]
	}
	return b
}

func benchMethod(b *testing.B, src []byte, enc func(src, out []byte) []byte, dec func(src, dst []byte) error, decode bool) {
	coded := enc(src, nil)
	out := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if decode {
			if err := dec(coded, out); err != nil {
				b.Fatal(err)
			}
		} else {
			enc(src, coded[:0])
		}
	}
	b.ReportMetric(8*float64(len(coded))/float64(len(src)), "bits/byte")
}

func BenchmarkRunsEncode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeRuns, decodeRuns, false)
}
func BenchmarkRunsDecode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeRuns, decodeRuns, true)
}
func BenchmarkRunsFreqEncode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeRunsFreq, decodeRunsFreq, false)
}
func BenchmarkRunsFreqDecode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeRunsFreq, decodeRunsFreq, true)
}
func BenchmarkDirectEncode(b *testing.B) {
	benchMethod(b, benchDNA(1<<20), encodeDirectMethod, decodeDirectMethod, false)
}
func BenchmarkDirectDecode(b *testing.B) {
	benchMethod(b, benchDNA(1<<20), encodeDirectMethod, decodeDirectMethod, true)
}
func BenchmarkHuffmanEncode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeHuffman, decodeHuffman, false)
}
func BenchmarkHuffmanDecode(b *testing.B) {
	benchMethod(b, benchTransform(4<<20), encodeHuffman, decodeHuffman, true)
}
