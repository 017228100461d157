package bwz

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"testing"
)

// naiveLZP is the LZP text of src as lzp.go describes it, written plainly: a map for the table
// and byte-by-byte comparisons.
func naiveLZP(src []byte, p LZP) []byte {
	tab := map[uint32]int{}
	var out []byte
	for i := 0; i < len(src); {
		if i >= lzpStart {
			var w uint64
			for k := 0; k < 8; k++ {
				w |= uint64(src[i-8+k]) << (8 * k)
			}
			h := uint32(p.hasher().of(w))
			cand, ok := tab[h]
			tab[h] = i
			if ok {
				l := 0
				for i+l < len(src) && src[cand+l] == src[i+l] {
					l++
				}
				if l >= p.MinLen {
					out = append(out, p.Escape)
					v := l - p.MinLen + 1
					for v >= 255 {
						out = append(out, 255)
						v -= 255
					}
					out = append(out, byte(v))
					i += l
					continue
				}
			}
		}
		out = append(out, src[i])
		if src[i] == p.Escape {
			out = append(out, 0)
		}
		i++
	}
	return out
}

// naiveUnLZP undoes an LZP text of n bytes as lzp.go describes it, a byte at a time with a map
// for the table; ok is false where the text is not one of n bytes.
func naiveUnLZP(text []byte, n int, p LZP) (out []byte, ok bool) {
	tab := map[uint32]int{}
	for j := 0; j < len(text); {
		i := len(out)
		if i >= n {
			return nil, false
		}
		cand, have := 0, false
		if i >= lzpStart {
			var w uint64
			for k := 0; k < 8; k++ {
				w |= uint64(out[i-8+k]) << (8 * k)
			}
			h := uint32(p.hasher().of(w))
			cand, have = tab[h]
			tab[h] = i
		}
		c := text[j]
		j++
		if c != p.Escape {
			out = append(out, c)
			continue
		}
		if j >= len(text) {
			return nil, false
		}
		if text[j] == 0 {
			out = append(out, c)
			j++
			continue
		}
		v := 0
		for {
			if j >= len(text) {
				return nil, false
			}
			v += int(text[j])
			j++
			if text[j-1] < 255 {
				break
			}
		}
		l := v + p.MinLen - 1
		if !have || l > n-i {
			return nil, false
		}
		for k := 0; k < l; k++ {
			out = append(out, out[cand+k])
		}
	}
	return out, len(out) == n
}

// lzpInputs are blocks with repeats of every length, overlapping repeats, runs, escapes and none
// of them.
func lzpInputs(rng *rand.Rand) [][]byte {
	var in [][]byte
	// pieces of a small vocabulary of random strings, some long, copied again and again
	var vocab [][]byte
	for i := 0; i < 40; i++ {
		w := make([]byte, 1+rng.Intn(1<<uint(rng.Intn(12))))
		for k := range w {
			w[k] = byte(rng.Intn(1 + rng.Intn(256)))
		}
		vocab = append(vocab, w)
	}
	rep := []byte{}
	for len(rep) < 300<<10 {
		rep = append(rep, vocab[rng.Intn(len(vocab))]...)
	}
	in = append(in, rep)
	// a long run (a match overlapping what it copies) and runs of the escape candidate
	run := bytes.Repeat([]byte{'x'}, 200000)
	copy(run[1000:], bytes.Repeat([]byte{0}, 300))
	in = append(in, run)
	// every byte value, each escape-able, repeated in long stretches
	all := make([]byte, 0, 256*512)
	for k := 0; k < 512; k++ {
		for c := 0; c < 256; c++ {
			all = append(all, byte(c))
		}
	}
	in = append(in, all)
	// random bytes: nothing to take out
	rnd := make([]byte, 100000)
	rng.Read(rnd)
	in = append(in, rnd)
	// text with matches ending exactly at the end
	txt := bytes.Repeat([]byte("a repeated line of a text that long matches take out\n"), 3000)
	in = append(in, txt)
	return in
}

func TestLZPMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	for i, src := range lzpInputs(rng) {
		for _, p := range []LZP{
			{Escape: 0, MinLen: 64, HashBits: 16, Context: 6},
			{Escape: 'x', MinLen: 8, HashBits: 10, Context: 1},
			{Escape: 255, MinLen: 300, HashBits: 16, Context: 8},
		} {
			want := naiveLZP(src, p)
			got := p.encode(nil, src, 1<<40, false)
			if !bytes.Equal(got, want) {
				t.Fatalf("input %d (%d bytes), %+v: text of %d bytes, want %d", i, len(src), p, len(got), len(want))
			}
			back, err := p.decodeSegment(nil, got, len(src))
			if err != nil {
				t.Fatalf("input %d, %+v: %v", i, p, err)
			}
			if !bytes.Equal(back, src) {
				t.Fatalf("input %d, %+v: round trip differs", i, p)
			}
			if naive, ok := naiveUnLZP(got, len(src), p); !ok || !bytes.Equal(naive, src) {
				t.Fatalf("input %d, %+v: the naive decoder does not undo the text", i, p)
			}
		}
	}
}

// TestEncodeLZPSegmentsInPlace: segments given up (written as literals) between segments with
// repeats, the texts written in their segments' places and moved down to follow each other, or,
// when a segment's literals are longer than the segment (escapes in random bytes), joined in a
// new buffer; either way the text is each segment's text in turn, as encode and literals make
// them one at a time.
func TestEncodeLZPSegmentsInPlace(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	reps := bytes.Repeat([]byte("a line that repeats, and repeats again, in the segments with repeats\n"), lzpSegment/64)[:lzpSegment]
	random := func(lo int) []byte { // bytes lo..255
		b := make([]byte, lzpSegment)
		for i := range b {
			b[i] = byte(lo + rng.Intn(256-lo))
		}
		return b
	}
	for _, c := range []struct {
		name  string
		segs  [][]byte
		moved bool // into a new buffer
	}{
		{"literals without escapes in the middle", [][]byte{reps, random(1), reps[:lzpSegment/2]}, false},
		{"literals with escapes first", [][]byte{random(0), reps, reps[:1000]}, true},
	} {
		src := bytes.Join(c.segs, nil)
		dst := make([]byte, 0, len(src))
		p, text := EncodeLZP(dst, src, 3)
		if p == nil {
			t.Fatalf("%s: no LZP", c.name)
		}
		var want []byte
		for _, seg := range c.segs {
			st := p.encode(nil, seg, len(seg), true)
			if st == nil {
				st = p.literals(nil, seg)
			}
			want = append(want, st...)
		}
		if !bytes.Equal(text, want) {
			t.Fatalf("%s: text of %d bytes is not the segments' texts (%d bytes) in turn", c.name, len(text), len(want))
		}
		if inDst := &text[0] == &dst[:1][0]; inDst == c.moved {
			t.Errorf("%s: text in dst %v, want %v", c.name, inDst, !c.moved)
		}
		back, err := p.Decode(text, len(src), 2)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("%s: round trip: %v", c.name, err)
		}
	}
}

func TestEncodeLZP(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	in := lzpInputs(rng)
	for i, src := range in {
		p, text := EncodeLZP(nil, src, 2)
		if p == nil {
			if !bytes.Equal(text, src) {
				t.Fatalf("input %d: no LZP but the text is not the input", i)
			}
			continue
		}
		if len(text) > len(src)-len(src)/32 {
			t.Fatalf("input %d: LZP text of %d bytes for %d", i, len(text), len(src))
		}
		back, err := p.Decode(text, len(src), 2)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("input %d: round trip: %v", i, err)
		}
	}
	// segments that stand for many times their text (decoded into buffers that grow, then joined)
	// and that are a little shorter (decoded in place)
	zeros := make([]byte, 2*lzpSegment+12345)
	zeros[lzpSegment+7] = 1
	mixed := append(bytes.Repeat(in[0], 2*lzpSegment/len(in[0])+1), in[3]...)
	for _, src := range [][]byte{zeros, mixed} {
		p, text := EncodeLZP(nil, src, 3)
		if p == nil || len(p.Texts) != 3 {
			t.Fatalf("%d bytes: LZP %+v", len(src), p)
		}
		back, err := p.Decode(text, len(src), 2)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("%d bytes in %d of text: round trip: %v", len(src), len(text), err)
		}
	}
	// the repeats are taken out, random bytes and small blocks are left alone
	if p, text := EncodeLZP(nil, in[0], 1); p == nil || len(text) > len(in[0])/4 {
		t.Errorf("repeats: LZP %v, %d of %d bytes", p, len(text), len(in[0]))
	}
	if p, _ := EncodeLZP(nil, in[3], 1); p != nil {
		t.Errorf("random bytes: LZP %+v", p)
	}
	// repeats only after the first eighth: given up early
	late := append(append([]byte(nil), in[3]...), in[0]...)
	late = late[:min(len(late), 8*len(in[3]))]
	if p, _ := EncodeLZP(nil, late, 1); p != nil {
		t.Errorf("repeats only late: LZP %+v", p)
	}
	if text := (&LZP{Escape: 1, MinLen: 64, HashBits: 12, Context: 6}).encode(nil, late, len(late), false); text == nil || len(text) > len(late)/2 {
		t.Errorf("repeats only late, not given up early: %d bytes of %d", len(text), len(late))
	}
	if p, _ := EncodeLZP(nil, bytes.Repeat([]byte("ab"), 1000), 1); p != nil {
		t.Errorf("2000 bytes: LZP %+v", p)
	}
}

// lzpSample is the repeats of lzpInputs and their LZP text.
func lzpSample(t *testing.T, rng *rand.Rand) (src []byte, p *LZP, text []byte) {
	t.Helper()
	src = lzpInputs(rng)[0]
	if p, text = EncodeLZP(nil, src, 2); p == nil {
		t.Fatal("no LZP")
	}
	return src, p, text
}

// TestLZPDecodeDamage decodes damaged LZP texts and lying lengths: an error wrapping ErrCorrupt or
// some output of exactly n bytes, never a panic.
func TestLZPDecodeDamage(t *testing.T) {
	rng := rand.New(rand.NewSource(43))
	src, p, text := lzpSample(t, rng)
	for i := 0; i < 2000; i++ {
		bad := append([]byte(nil), text...)
		bad[rng.Intn(len(bad))] ^= byte(1 << rng.Intn(8))
		out, err := p.Decode(bad, len(src), 2)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip: error %v does not wrap ErrCorrupt", err)
		}
		if err == nil && len(out) != len(src) {
			t.Fatalf("flip: %d bytes decoded, want %d", len(out), len(src))
		}
	}
	for _, n := range []int{0, 1, len(src) - 1, len(src) + 1, 1 << 30} {
		if _, err := p.Decode(text, n, 1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("length %d for %d: error %v", n, len(src), err)
		}
	}
	for k := 0; k < len(text); k += 1 + k/3 {
		if _, err := p.Decode(text[:k], len(src), 1); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: error %v", k, err)
		}
	}
	// a match where the decoder has nothing to copy from
	if _, err := p.decodeSegment(nil, []byte{p.Escape, 5}, 100); !errors.Is(err, ErrCorrupt) {
		t.Errorf("match at the start: %v", err)
	}
	ok := LZP{MinLen: 64, HashBits: 12, Context: 6, SegmentSize: 1 << 16, Texts: []int{3}}
	if got, err := ok.Decode([]byte("abc"), 3, 1); err != nil || string(got) != "abc" {
		t.Errorf("%+v: %q, %v", ok, got, err)
	}
	for _, change := range []func(q *LZP){
		func(q *LZP) { q.MinLen = 7 },
		func(q *LZP) { q.HashBits = 9 },
		func(q *LZP) { q.HashBits = 23 },
		func(q *LZP) { q.Context = 0 },
		func(q *LZP) { q.Context = 9 },
		func(q *LZP) { q.SegmentSize = 1<<16 - 1 },
		func(q *LZP) { q.Texts = []int{2} },
		func(q *LZP) { q.Texts = []int{1, 2} },
	} {
		q := ok
		change(&q)
		if _, err := q.Decode([]byte("abc"), 3, 1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: %v", q, err)
		}
	}
}

// TestBlockLZPRoundTrip codes a block's LZP text through a payload and back.
func TestBlockLZPRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(44))
	src, p, text := lzpSample(t, rng)
	bwt, _ := naiveBWT(text)
	samples := make([]uint32, NumSamples(len(bwt), SampleShift))
	for i := range samples {
		samples[i] = uint32(1 + rng.Intn(len(bwt)))
	}
	for _, fast := range []bool{false, true} {
		payload, err := EncodeBlock(nil, bwt, samples, p, BlockOptions{Fast: fast})
		if err != nil {
			t.Fatal(err)
		}
		if len(payload) < MinPayload(len(src), Version) || len(payload) > MaxPayload(len(src)) {
			t.Fatalf("payload of %d bytes for a block of %d", len(payload), len(src))
		}
		blk, err := DecodeBlock(payload, len(src), BlockOptions{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if blk.LZP == nil || !reflect.DeepEqual(*blk.LZP, *p) || !bytes.Equal(blk.BWT, bwt) || !equalU32(blk.Samples, samples) {
			t.Fatalf("decoded %+v, want %+v and the transform", blk.LZP, p)
		}
		// the text is longer than the block says the block is: refused
		if _, err := DecodeBlock(payload, len(text)-1, BlockOptions{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("text longer than the block: %v", err)
		}
	}
}
