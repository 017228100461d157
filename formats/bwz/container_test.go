package bwz

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// naiveBWT is the transform by sorting rotations of text+sentinel, the oracle of these tests (the
// package itself never computes a transform).
func naiveBWT(text []byte) (bwt []byte, primary int) {
	n := len(text)
	sa := make([]int, n)
	for i := range sa {
		sa[i] = i
	}
	slices.SortFunc(sa, func(a, b int) int { return bytes.Compare(text[a:], text[b:]) })
	if n == 0 {
		return nil, 0
	}
	bwt = append(bwt, text[n-1])
	for i, s := range sa {
		if s == 0 {
			primary = i + 1
			continue
		}
		bwt = append(bwt, text[s-1])
	}
	return bwt, primary
}

// testStream builds a stream of text in blocks of bs bytes, with fake samples (this package does
// not invert transforms).
func testStream(t testing.TB, text []byte, bs int) []byte {
	out := AppendHeader(nil, bs)
	blocks := 0
	for off := 0; off < len(text); off += bs {
		blk := text[off:min(off+bs, len(text))]
		bwt, p := naiveBWT(blk)
		samples := make([]uint32, NumSamples(len(blk), SampleShift))
		for i := range samples {
			samples[i] = 1
		}
		payload, err := EncodeBlock(nil, bwt, samples, nil, BlockOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = AppendBlock(out, BlockHeader{Index: blocks, Length: len(blk), Primary: p, CRC: CRC(blk)}, payload)
		blocks++
	}
	return AppendTrailer(out, Trailer{Blocks: uint32(blocks), Total: uint64(len(text)), CRC: CRC(text)})
}

// readAll reads every frame and decodes every block's transform.
func readAll(r io.Reader) ([]Frame, error) {
	fr := NewReader(r)
	var frames []Frame
	for {
		f, err := fr.Next()
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, err
		}
		if f.Kind == FrameBlock {
			if _, err := DecodeBlock(f.Payload, f.Block.Length, BlockOptions{}); err != nil {
				return frames, &CorruptError{Offset: f.Offset, Block: f.Block.Index, Err: err}
			}
		}
		frames = append(frames, f)
	}
}

func TestReaderFrames(t *testing.T) {
	text := []byte("abracadabra, abracadabra, banana bandana")
	s := append(testStream(t, text, 16), testStream(t, nil, 5)...)
	frames, err := readAll(bytes.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []FrameKind
	for _, f := range frames {
		kinds = append(kinds, f.Kind)
	}
	want := []FrameKind{FrameHeader, FrameBlock, FrameBlock, FrameBlock, FrameTrailer, FrameHeader, FrameTrailer}
	if !slices.Equal(kinds, want) {
		t.Fatalf("frames %v, want %v", kinds, want)
	}
	if frames[3].Block.Length != 8 || frames[3].Block.Index != 2 || frames[5].Stream != 1 {
		t.Errorf("frame fields: %+v, %+v", frames[3], frames[5])
	}
	if frames[4].Trailer.Total != uint64(len(text)) || frames[4].Trailer.CRC != CRC(text) {
		t.Errorf("trailer %+v", frames[4].Trailer)
	}
}

func TestReaderRejects(t *testing.T) {
	good := testStream(t, []byte("some text to check the reader with"), 8)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"bzip2", []byte("BZh91AY&SY")},
		{"half magic", good[:2]},
		{"header only", good[:headerLen]},
		{"version", mod(func(b []byte) []byte { b[4] = Version + 1; return b })},
		{"header crc", mod(func(b []byte) []byte { b[13] ^= 1; return b })},
		{"no trailer", good[:len(good)-trailerLen]},
		{"garbage after", append(append([]byte(nil), good...), 0, 1, 2)},
		{"block dropped", slices.Concat(good[:headerLen], good[headerLen+blockLen+len(good)/100:])},
	} {
		_, err := readAll(bytes.NewReader(c.in))
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want a CorruptError", c.name, err)
		}
	}
}

// TestReaderLyingLengths gives block headers with valid checksums but lengths that lie: the
// reader must refuse them before allocating, or fail on the short input without allocating the
// claimed length.
func TestReaderLyingLengths(t *testing.T) {
	s := AppendBlockHeader(appendHeaderVersion(nil, 1<<30, 3), BlockHeader{Length: 1 << 30, Primary: 1, Payload: 1000})
	if _, err := readAll(bytes.NewReader(append(s, make([]byte, 1000)...))); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "too short") {
		t.Errorf("version 3: a 1 GiB block in 1000 bytes: error %v", err)
	}
	// Version 4 reads such a payload (a block's LZP text may be that short), and DecodeBlock
	// refuses it before allocating the block: its sampled rows are not there, for a plain text of
	// 1 GiB or an LZP text of 1 GiB.
	plain := append([]byte{4, SampleShift, textPlain}, 0x80, 0x80, 0x20)
	lzp := append([]byte{4, SampleShift, textLZP, 0, 64, 18, 6}, 0x80, 0x80, 0x80, 0x80, 0x04) // m = 1 GiB
	lzp = append(lzp, 0x80, 0x80, 0x80, 0x04)                                                  // segments of 8 MiB
	lzp = append(lzp, bytes.Repeat([]byte{1}, 128)...)                                         // their texts' lengths
	lzp = append(lzp, 0x80, 0x80, 0x20)
	for _, payload := range [][]byte{plain, lzp} {
		payload = append(payload, make([]byte, 1000-len(payload))...)
		s := AppendBlock(AppendHeader(nil, 1<<30), BlockHeader{Length: 1 << 30, Primary: 1, CRC: 1}, payload)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readAll(bytes.NewReader(s))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sampled rows") {
			t.Errorf("version 4, text kind %d: a 1 GiB block in 1000 bytes: error %v", payload[2], err)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
			t.Errorf("version 4, text kind %d: %d bytes allocated", payload[2], a)
		}
	}
	for _, h := range []BlockHeader{
		{Length: 1 << 20, Primary: 1, Payload: 10},      // longer than the stream's block size
		{Length: 100, Primary: 101, Payload: 10},        // primary out of range
		{Length: 100, Primary: 1, Payload: 1 << 30},     // payload longer than any coding of 100 bytes
		{Length: 1000, Primary: 1, Payload: 2000},       // payload past the end of the input
		{Index: 3, Length: 100, Primary: 1, Payload: 0}, // out of order
		{Length: 1000, Primary: 1, Payload: 3},          // shorter than any payload

	} {
		s := AppendBlockHeader(AppendHeader(nil, 1000), h)
		s = append(s, make([]byte, 20)...)
		_, err := readAll(bytes.NewReader(s))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: error %v", h, err)
		}
	}
}

// TestResync damages the middle of a stream and checks that Resync finds the next block.
func TestResync(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	text := make([]byte, 5000)
	for i := range text {
		text[i] = byte('a' + rng.Intn(4))
	}
	s := testStream(t, text, 1000)
	fr := NewReader(bytes.NewReader(s))
	var offs []int64
	for {
		f, err := fr.Next()
		if err != nil {
			break
		}
		if f.Kind == FrameBlock {
			offs = append(offs, f.Offset)
		}
	}
	bad := append([]byte(nil), s...)
	bad[offs[1]+2] ^= 0xff // the tag of block 1
	fr = NewReader(bytes.NewReader(bad))
	var got []int
	var errs int
	for {
		f, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs++
			if _, err := fr.Resync(); err != nil {
				break
			}
			continue
		}
		if f.Kind == FrameBlock {
			got = append(got, f.Block.Index)
		}
	}
	if errs != 1 || !slices.Equal(got, []int{0, 2, 3, 4}) {
		t.Fatalf("after damage to block 1: %d errors, blocks %v", errs, got)
	}
}
