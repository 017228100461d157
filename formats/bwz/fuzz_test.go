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
			p, err := EncodeBlock(nil, bwt, nil, BlockOptions{Fast: fast})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(p, uint16(len(bwt)))
		}
	}
	// version-2 payloads, with methods 1 and 2
	bwt, _ := naiveBWT([]byte(long[:2000]))
	f.Add(v2Payload(bwt, methodRuns), uint16(len(bwt)))
	f.Add(v2Payload(bwt, methodDirect), uint16(len(bwt)))
	f.Fuzz(func(t *testing.T, payload []byte, n uint16) {
		bwt := make([]byte, int(n)%(1<<12))
		if _, err := DecodeBlock(payload, bwt, BlockOptions{Threads: 2}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
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
