package cpu

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// naiveSamples returns the rows of text positions k<<shift (k >= 1) from the oracle suffix array.
func naiveSamples(sa []int32, shift uint) []uint32 {
	n := len(sa)
	if n == 0 {
		return nil
	}
	out := make([]uint32, (n-1)>>shift)
	for i, s := range sa {
		if s != 0 && s%(1<<shift) == 0 {
			out[int(s)>>shift-1] = uint32(i + 1)
		}
	}
	return out
}

func TestBWTSampledAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, text := range bwtTexts(rng) {
		sa := sortedSuffixes(text)
		want := make([]byte, len(text))
		wantP := kernels.BWTFromSA(text, sa, want)
		for _, shift := range []uint{4, 6} {
			for _, threads := range []int{1, 3} {
				got := make([]byte, len(text))
				p, samples := BWTSampled(text, sa, got, shift, threads)
				if p != wantP || !bytes.Equal(got, want) {
					t.Fatalf("BWTSampled(%q) = %q, %d; want %q, %d", text, got, p, want, wantP)
				}
				if ws := naiveSamples(sa, shift); fmt.Sprint(samples) != fmt.Sprint(ws) {
					t.Fatalf("BWTSampled(%q) samples %v, want %v", text, samples, ws)
				}
			}
		}
	}
}

// TestBWTSampledParts cuts the rows into parts of a few hundred, so that the primary row falls
// at the start, inside and at the end of parts, and compares BWTSampled and BWTThreads with
// kernels.BWTFromSA.
func TestBWTSampledParts(t *testing.T) {
	defer func(v int) { sampledChunk = v }(sampledChunk)
	rng := rand.New(rand.NewSource(7))
	for range 40 {
		text := make([]byte, 500+rng.Intn(3000))
		for i := range text {
			text[i] = "ACGT"[rng.Intn(4)]
		}
		sa := make([]int32, len(text))
		SuffixArray(text, sa)
		want := make([]byte, len(text))
		wantP := kernels.BWTFromSA(text, sa, want)
		ws := naiveSamples(sa, 4)
		for _, chunk := range []int{1 << 20, 300, 97} {
			sampledChunk = chunk
			got := make([]byte, len(text))
			p, samples := BWTSampled(text, sa, got, 4, 7)
			if p != wantP || !bytes.Equal(got, want) || fmt.Sprint(samples) != fmt.Sprint(ws) {
				t.Fatalf("n=%d, parts of %d rows: primary %d, want %d; transform or samples differ", len(text), chunk, p, wantP)
			}
			clear(got)
			if p := BWTThreads(text, sa, got, 7); p != wantP || !bytes.Equal(got, want) {
				t.Fatalf("BWTThreads, n=%d, parts of %d rows: primary %d, want %d, or the transform differs", len(text), chunk, p, wantP)
			}
		}
	}
}

func TestInverseBWTSampledRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	texts := bwtTexts(rng)
	for _, n := range []int{5000, 70000} {
		for _, sigma := range []int{2, 4, 256} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Intn(sigma))
			}
			texts = append(texts, b)
		}
	}
	defer func(v int) { packedLimit = v }(packedLimit)
	for _, limit := range []int{1 << 24, 0} { // packed links, then bucket lookups
		packedLimit = limit
		for _, text := range texts {
			sa := make([]int32, len(text))
			SuffixArray(text, sa)
			for _, shift := range []uint{4, 5, 9} {
				bwt := make([]byte, len(text))
				p, samples := BWTSampled(text, sa, bwt, shift, 2)
				for _, threads := range []int{1, 2, 5} {
					got := make([]byte, len(text))
					if err := InverseBWTSampled(bwt, p, samples, shift, got, threads); err != nil {
						t.Fatalf("n=%d shift=%d: %v", len(text), shift, err)
					}
					if !bytes.Equal(got, text) {
						t.Fatalf("n=%d shift=%d threads=%d limit=%d: round trip differs", len(text), shift, threads, limit)
					}
				}
			}
		}
	}
}

// TestInverseBWTSampledBadInput checks that indexes out of range are refused and that wrong ones
// in range give some output, without a crash.
func TestInverseBWTSampledBadInput(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	text := make([]byte, 3000)
	for i := range text {
		text[i] = byte(rng.Intn(4))
	}
	sa := make([]int32, len(text))
	SuffixArray(text, sa)
	bwt := make([]byte, len(text))
	p, samples := BWTSampled(text, sa, bwt, 6, 1)
	dst := make([]byte, len(text))
	for _, c := range []struct {
		p       int
		samples []uint32
		shift   uint
	}{
		{0, samples, 6}, {len(text) + 1, samples, 6}, {p, samples[1:], 6}, {p, samples, 5},
		{p, append([]uint32{0}, samples[1:]...), 6}, {p, append([]uint32{uint32(len(text) + 1)}, samples[1:]...), 6},
	} {
		if err := InverseBWTSampled(bwt, c.p, c.samples, c.shift, dst, 2); err == nil {
			t.Errorf("primary %d, %d samples, shift %d: no error", c.p, len(c.samples), c.shift)
		}
	}
	for i := 0; i < 50; i++ {
		s := append([]uint32(nil), samples...)
		s[rng.Intn(len(s))] = uint32(1 + rng.Intn(len(text)))
		bad := append([]byte(nil), bwt...)
		bad[rng.Intn(len(bad))] ^= byte(1 + rng.Intn(255))
		if err := InverseBWTSampled(bad, 1+rng.Intn(len(text)), s, 6, dst, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := InverseBWTSampled(nil, 0, nil, 6, nil, 1); err != nil {
		t.Errorf("empty block: %v", err)
	}
}

// benchWords is 4 MiB of random words, and its suffix array.
func benchWords() ([]byte, []int32) {
	rng := rand.New(rand.NewSource(8))
	words := []string{"the ", "of ", "and ", "compress ", "block ", "sort ", "suffix ", "array ", "\n"}
	var text []byte
	for len(text) < 4<<20 {
		text = append(text, words[rng.Intn(len(words))]...)
	}
	sa := make([]int32, len(text))
	SuffixArray(text, sa)
	return text, sa
}

// BenchmarkBWTSampled makes the transform of a 4 MiB block from its suffix array on one thread,
// as the compressor does for each block of -3.
func BenchmarkBWTSampled(b *testing.B) {
	text, sa := benchWords()
	bwt := make([]byte, len(text))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		BWTSampled(text, sa, bwt, 16, 1)
	}
}

func BenchmarkInverseBWTSampled(b *testing.B) {
	text, sa := benchWords()
	bwt := make([]byte, len(text))
	p, samples := BWTSampled(text, sa, bwt, 16, 1)
	dst := make([]byte, len(text))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := InverseBWTSampled(bwt, p, samples, 16, dst, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzInverseBWTSampled runs the sampled inverse on any transform, primary index and sampled rows
// in range, with rows sampled every 16 to 64 bytes (so that full groups of walks, which step
// without bounds checks, run on short inputs): it must never crash. Where the transform is that
// of a text and the samples are its own, the text must come back.
func FuzzInverseBWTSampled(f *testing.F) {
	// 1,000 bytes or more at 16-byte sampling: 62 walks and up, a full group on each thread
	f.Add([]byte(strings.Repeat("the walks step through the links of a transform. ", 30)), uint32(0), uint64(0), uint8(0), true)
	f.Add([]byte(strings.Repeat("ACGTTGCA", 200)), uint32(5), uint64(9), uint8(0), false)
	f.Add(bytes.Repeat([]byte{7}, 1200), uint32(3), uint64(2), uint8(0), true)
	f.Add([]byte("short"), uint32(1), uint64(1), uint8(2), true)
	f.Fuzz(func(t *testing.T, in []byte, primary uint32, seed uint64, sh uint8, asText bool) {
		if len(in) == 0 || len(in) > 1<<13 {
			return
		}
		n := len(in)
		shift := 4 + uint(sh%3)
		bwt, p := in, 1+int(primary%uint32(n))
		samples := make([]uint32, (n-1)>>shift)
		if asText {
			// the input as a text: its own transform and samples
			sa := make([]int32, n)
			SuffixArray(in, sa)
			bwt = make([]byte, n)
			p, samples = BWTSampled(in, sa, bwt, shift, 2)
		} else {
			rng := rand.New(rand.NewSource(int64(seed)))
			for i := range samples {
				samples[i] = 1 + uint32(rng.Intn(n))
			}
		}
		for _, packed := range []bool{true, false} {
			got := make([]byte, n)
			run := func() {
				if err := InverseBWTSampled(bwt, p, samples, shift, got, 2); err != nil {
					t.Fatalf("rows in range refused: %v", err)
				}
			}
			if packed {
				run()
			} else {
				saved := packedLimit
				packedLimit = 0 // rows alone, F's byte looked up
				run()
				packedLimit = saved
			}
			if asText && !bytes.Equal(got, in) {
				t.Fatalf("packed %v: round trip differs", packed)
			}
		}
	})
}
