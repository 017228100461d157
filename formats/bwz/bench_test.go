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

// benchArchive is archive-like input for the LZP benchmarks: "files" of random identifiers, a
// third of them copies of earlier ones with a byte changed.
func benchArchive(n int) []byte {
	rng := rand.New(rand.NewSource(23))
	words := make([]string, 5000) // identifiers: a short context says where it is
	for i := range words {
		w := make([]byte, 3+rng.Intn(10))
		for k := range w {
			w[k] = byte('a' + rng.Intn(26))
		}
		words[i] = string(w)
	}
	var files [][]byte
	b := make([]byte, 0, n)
	for len(b) < n {
		var f []byte
		if len(files) > 0 && rng.Intn(3) == 0 {
			f = append(f, files[rng.Intn(len(files))]...)
			f[rng.Intn(len(f))] ^= 1
		} else {
			for len(f) < 100+rng.Intn(20000) {
				f = append(f, words[rng.Intn(len(words))]...)
				f = append(f, ' ')
			}
			files = append(files, f)
		}
		b = append(b, f...)
	}
	return b[:n]
}

func BenchmarkLZP(b *testing.B) {
	src := benchArchive(32 << 20)
	p, text := EncodeLZP(nil, src, 1)
	if p == nil {
		b.Fatal("no LZP")
	}
	b.Logf("LZP text: %.1f%% of the input", 100*float64(len(text))/float64(len(src)))
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		dst := make([]byte, 0, len(src))
		for i := 0; i < b.N; i++ {
			EncodeLZP(dst, src, 1)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for i := 0; i < b.N; i++ {
			if _, err := p.Decode(text, len(src), 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
