package bwz

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"testing"
)

// segmentInputs are inputs for the segment coders: edge cases and seeded random data of every
// shape the methods must handle (long runs, small and full alphabets, ranks past the unary
// range, run lengths in every exponent).
func segmentInputs(rng *rand.Rand) [][]byte {
	in := [][]byte{{}, {0}, {255}, {7, 7}, {1, 2}, bytes.Repeat([]byte{3}, 100000)}
	for _, n := range []int{10, 1000, 50000} {
		for _, sigma := range []int{2, 4, 5, 16, 17, 40, 256} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Intn(sigma))
			}
			in = append(in, b)
		}
	}
	// runs of random lengths (1 to 2^20) of random bytes, so every length exponent occurs
	var runs []byte
	for len(runs) < 1<<20 {
		c := byte(rng.Intn(256))
		n := 1 << rng.Intn(20)
		n += rng.Intn(n)
		runs = append(runs, bytes.Repeat([]byte{c}, n)...)
	}
	in = append(in, runs)
	// skewed: mostly a few bytes, some rare ones, as in DNA with headers
	skew := make([]byte, 200000)
	for i := range skew {
		switch r := rng.Intn(1000); {
		case r < 990:
			skew[i] = "ACGT"[r%4]
		case r < 995:
			skew[i] = '\n'
		default:
			skew[i] = byte(rng.Intn(256))
		}
	}
	in = append(in, skew)
	return in
}

func TestSegmentMethodsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i, src := range segmentInputs(rng) {
		for _, m := range []struct {
			name string
			enc  func(src, out []byte) []byte
			dec  func(src, dst []byte) error
		}{
			{"runs", encodeRuns, decodeRuns},
			{"runs with frequencies", encodeRunsFreq, decodeRunsFreq},
			{"direct", encodeDirectMethod, decodeDirectMethod},
			{"huffman", encodeHuffman, decodeHuffman},
		} {
			coded := m.enc(src, nil)
			got := make([]byte, len(src))
			if err := m.dec(coded, got); err != nil {
				t.Fatalf("input %d (%d bytes), %s: %v", i, len(src), m.name, err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("input %d (%d bytes), %s: round trip differs", i, len(src), m.name)
			}
		}
	}
}

// TestRangeCoderAgainstModel codes random bits with random probabilities and checks that the
// decoder returns them, and that the coded size is near the information content.
func TestRangeCoderAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	const n = 200000
	bits := make([]int, n)
	probs := make([]int, n)
	info := 0.0
	e := newRangeEncoder(nil)
	for i := range bits {
		probs[i] = 1 + rng.Intn(probOne-1)
		if rng.Intn(probOne) < probs[i] {
			bits[i] = 1
		}
		e.encode(bits[i], probs[i])
		info += cost(bits[i], probs[i])
	}
	out := e.finish()
	d := newRangeDecoder(out)
	for i := range bits {
		if got := d.decode(probs[i]); got != bits[i] {
			t.Fatalf("bit %d: got %d, want %d", i, got, bits[i])
		}
	}
	if d.overrun() {
		t.Fatalf("decoder overran its %d bytes (at %d)", len(out), d.pos)
	}
	if float64(len(out)) > info/8*1.001+8 {
		t.Errorf("%d bytes for %.0f bits of information", len(out), info)
	}
}

func cost(bit, p1 int) float64 {
	p := float64(p1) / probOne
	if bit == 0 {
		p = 1 - p
	}
	return -math.Log2(p)
}

func TestEncodeBlockRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for i, bwt := range segmentInputs(rng) {
		samples := make([]uint32, NumSamples(len(bwt), SampleShift))
		for j := range samples {
			samples[j] = uint32(1 + rng.Intn(len(bwt)))
		}
		for _, opts := range []BlockOptions{{}, {SegmentSize: 1, Threads: 3}, {SegmentSize: 100000, Threads: 2}, {Fast: true}, {Fast: true, SegmentSize: 1, Threads: 2}} {
			p, err := EncodeBlock(nil, bwt, samples, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p) > MaxPayload(len(bwt)) {
				t.Fatalf("input %d: payload %d bytes for %d, over MaxPayload", i, len(p), len(bwt))
			}
			blk, err := DecodeBlock(p, len(bwt), opts)
			if err != nil {
				t.Fatalf("input %d (%d bytes) %+v: %v", i, len(bwt), opts, err)
			}
			if !bytes.Equal(blk.BWT, bwt) || !equalU32(blk.Samples, samples) || blk.LZP != nil {
				t.Fatalf("input %d (%d bytes) %+v: round trip differs", i, len(bwt), opts)
			}
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDecodeBlockDamage damages payloads (every byte of a small one, random bits of larger ones,
// truncations) and checks that decoding ends with ErrCorrupt or with some output, never a panic.
func TestDecodeBlockDamage(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	bwt := make([]byte, 70000)
	for i := range bwt {
		bwt[i] = byte('a' + rng.Intn(3)*rng.Intn(3))
	}
	samples := make([]uint32, NumSamples(len(bwt), SampleShift))
	for i := range samples {
		samples[i] = uint32(1 + i)
	}
	for _, fast := range []bool{false, true} {
		p, err := EncodeBlock(nil, bwt, samples, nil, BlockOptions{SegmentSize: minSegmentSize, Fast: fast})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			bad := append([]byte(nil), p...)
			bad[rng.Intn(len(bad))] ^= byte(1 << rng.Intn(8))
			if _, err := DecodeBlock(bad, len(bwt), BlockOptions{Threads: 2}); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip: error %v does not wrap ErrCorrupt", err)
			}
		}
		for n := 0; n < len(p); n += 1 + n/5 {
			if _, err := DecodeBlock(p[:n], len(bwt), BlockOptions{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated to %d of %d bytes: error %v", n, len(p), err)
			}
		}
	}
}

func TestNumSamples(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 0}, {1, 0}, {1 << 16, 0}, {1<<16 + 1, 1}, {3 << 16, 2}, {3<<16 + 1, 3}} {
		if got := NumSamples(c.n, 16); got != c.want {
			t.Errorf("NumSamples(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
