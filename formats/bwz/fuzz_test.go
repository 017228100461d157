package bwz

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzDecodeBlock feeds arbitrary payloads to DecodeBlock: it must return an error wrapping
// ErrCorrupt or decode, never panic, hang or read out of bounds.
func FuzzDecodeBlock(f *testing.F) {
	long := strings.Repeat("the BWT of a text like this one codes well; ", 90)
	for _, text := range []string{"", "a", "banana", "abracadabra abracadabra", "ACGTTGCAACGTACGT\nACGT", long} {
		bwt, _ := naiveBWT([]byte(text))
		for _, fast := range []bool{false, true} {
			p, err := EncodeBlock(nil, bwt, nil, nil, BlockOptions{Fast: fast})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(p, uint16(len(bwt)))
		}
	}
	// a payload of an LZP text
	lzpSrc := []byte(strings.Repeat(long, 60))
	if lzp, text := EncodeLZP(nil, lzpSrc, 1); lzp != nil {
		bwt, _ := naiveBWT(text[:min(len(text), 4000)])
		p, err := EncodeBlock(nil, bwt, nil, lzp, BlockOptions{})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p, uint16(len(bwt)+100))
	}
	// version-2 payloads, with methods 1 and 2
	bwt, _ := naiveBWT([]byte(long[:2000]))
	f.Add(v2Payload(bwt, methodRuns), uint16(len(bwt)))
	f.Add(v2Payload(bwt, methodDirect), uint16(len(bwt)))
	f.Fuzz(func(t *testing.T, payload []byte, n uint16) {
		if _, err := DecodeBlock(payload, int(n)%(1<<12), BlockOptions{Threads: 2}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
	})
}

// FuzzLZPDecode decodes arbitrary LZP texts: an error wrapping ErrCorrupt or exactly n bytes that
// encode back to the text, never a panic.
func FuzzLZPDecode(f *testing.F) {
	src := []byte(strings.Repeat("an LZP text takes long repeats out; ", 3000))
	lzp, text := EncodeLZP(nil, src, 1)
	if lzp == nil {
		f.Fatal("no LZP")
	}
	f.Add(text[:min(len(text), 3000)], uint16(min(len(src), 3000)), lzp.Escape, byte(lzp.MinLen), lzp.Context)
	f.Add([]byte("abc\x00\x05abcdefgh\x00\x05"), uint16(40), byte(0), byte(4), byte(2))
	f.Fuzz(func(t *testing.T, text []byte, n uint16, esc, minLen, ctx byte) {
		p := &LZP{Escape: esc, MinLen: int(minLen), HashBits: 12, Context: ctx, SegmentSize: 1 << 16, Texts: []int{len(text)}}
		if err := p.check(int(n)); err != nil {
			return
		}
		out, err := p.decodeSegment(nil, text, int(n))
		naive, ok := naiveUnLZP(text, int(n), *p)
		if (err == nil) != ok || err == nil && !bytes.Equal(out, naive) {
			t.Fatalf("decoded %q, %v; the naive decoder %q, %v", out, err, naive, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if len(out) != int(n) {
			t.Fatalf("%d bytes decoded, want %d", len(out), n)
		}
		if back := p.encode(nil, out, 1<<40, false); !bytes.Equal(back, text) {
			// Decoding is a function of the text; the encoder makes one text of many that decode
			// alike (a match may be written as literals), so only what it makes must round-trip.
			again, err := p.decodeSegment(nil, back, int(n))
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("the encoder's text of the output does not decode to it: %v", err)
			}
		}
	})
}

// FuzzReader reads the frames of arbitrary input and decodes its blocks: errors must be
// CorruptErrors, and a stream that decodes must round-trip through the writer functions.
func FuzzReader(f *testing.F) {
	f.Add(testStream(f, []byte("hello, hello, hello world"), 8))
	f.Add(testStream(f, nil, 1))
	f.Add(append(testStream(f, []byte("ab"), 1), testStream(f, []byte("cd"), 2)...))
	if v2, err := os.ReadFile("testdata/v2/golden.bwz"); err == nil {
		f.Add(v2)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		frames, err := readAll(bytes.NewReader(in))
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		// a stream read without error is made of frames the writer functions reproduce
		var out []byte
		for _, fr := range frames {
			switch fr.Kind {
			case FrameHeader:
				out = appendHeaderVersion(out, fr.BlockSize, byte(fr.Version))
			case FrameBlock:
				out = AppendBlock(out, fr.Block, fr.Payload)
			case FrameTrailer:
				out = AppendTrailer(out, fr.Trailer)
			}
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("frames rewrite to %d bytes, not the %d read", len(out), len(in))
		}
	})
}

// FuzzDecodeReads feeds arbitrary read-set payloads to DecodeReads: it must return an error
// wrapping ErrCorrupt or exactly n bytes, never panic, hang or read out of bounds.
func FuzzDecodeReads(f *testing.F) {
	for _, name := range []string{"fastq", "fastq others", "fastq names", "fasta irregular", "fastq plus mixed", "fasta crlf wrapped"} {
		in := readsCases()[name]
		if len(in) > 40000 {
			in = in[:RecordsEnd(in[:40000])]
		}
		p, ok := EncodeReads(nil, in, 1)
		if !ok {
			f.Fatalf("%s: not coded", name)
		}
		f.Add(p, uint16(len(in)))
	}
	f.Fuzz(func(t *testing.T, payload []byte, n uint16) {
		out, err := DecodeReads(payload, int(n), 2)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if len(out) != int(n) {
			t.Fatalf("%d bytes decoded for a block of %d", len(out), n)
		}
	})
}

// FuzzReadsRoundTrip codes arbitrary blocks as read sets: a block that EncodeReads takes must
// decode to itself.
func FuzzReadsRoundTrip(f *testing.F) {
	for _, name := range []string{"fastq crlf no eol", "fasta irregular", "fastq others", "fasta names no eol"} {
		in := readsCases()[name]
		f.Add(in[:min(len(in), 6000)])
	}
	f.Add([]byte(strings.Repeat("@r\nACGT\n+\nIIII\n", 20)))
	f.Add([]byte(strings.Repeat(">r\nACGTN\nac\n\n", 20)))
	f.Fuzz(func(t *testing.T, block []byte) {
		p, ok := EncodeReads(nil, block, 2)
		if !ok {
			return
		}
		out, err := DecodeReads(p, len(block), 1)
		if err != nil || !bytes.Equal(out, block) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
