package bwz

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"testing"
)

// goldenInput is the original of testdata/v2/golden.bwz: pseudo-text, DNA and random bytes.
func goldenInput() []byte {
	rng := rand.New(rand.NewSource(2024))
	words := []string{"the", "static", "int", "return", "struct", "if", "else", "for", "while", "void", "char", "unsigned", "long", "kernel", "device", "driver", "#include", "linux", "err", "NULL"}
	var b []byte
	for len(b) < 40<<10 {
		w := words[int(float64(len(words))*rng.Float64()*rng.Float64())]
		b = append(b, w...)
		switch rng.Intn(8) {
		case 0:
			b = append(b, ";\n\t"...)
		case 1:
			b = append(b, '(')
		default:
			b = append(b, ' ')
		}
	}
	for i := 0; i < 150<<10; i++ {
		b = append(b, "ACGT"[rng.Intn(4)])
	}
	for i := 0; i < 8<<10; i++ {
		b = append(b, byte(rng.Intn(256)))
	}
	return b
}

// goldenFrames reads testdata/v2/golden.bwz: a stream written by format version 2's encoder (the
// commit before version 3) of goldenInput, one block of 64 KiB segments coded with methods 1, 2,
// 3 and 0 in turn (the transform is that of naiveBWT, the sampled rows made up).
func goldenFrames(t testing.TB) []Frame {
	b, err := os.ReadFile("testdata/v2/golden.bwz")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := readAll(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// TestVersion2Stream checks that a version-2 stream still reads and decodes to its transform.
func TestVersion2Stream(t *testing.T) {
	frames := goldenFrames(t)
	text := goldenInput()
	bwt, primary := naiveBWT(text)
	if len(frames) != 3 || frames[0].Version != 2 || frames[1].Kind != FrameBlock {
		t.Fatalf("frames %+v", frames)
	}
	f := frames[1]
	if f.Block.Length != len(text) || f.Block.Primary != primary || f.Block.CRC != CRC(text) {
		t.Fatalf("block header %+v", f.Block)
	}
	p := f.Payload
	if p[0] != 2 {
		t.Fatalf("payload version %d", p[0])
	}
	// the segment table: after the version, sample distance, segment size and the samples
	_, k := binary.Uvarint(p[2:])
	tab := p[2+k+4*NumSamples(len(text), SampleShift):]
	var methods []byte
	for i := 0; i < 4; i++ {
		methods = append(methods, tab[0])
		_, k := binary.Uvarint(tab[1:])
		tab = tab[1+k:]
	}
	if !bytes.Equal(methods, []byte{methodRuns, methodDirect, methodHuffman, methodStored}) {
		t.Fatalf("segment methods %v", methods)
	}
	blk, err := DecodeBlock(p, len(bwt), BlockOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(blk.BWT, bwt) {
		t.Fatal("version-2 payload decodes to another transform")
	}
}

// v2Payload is the version-2 payload of a transform of at most 65536 bytes (so that it has no
// sampled rows), one segment coded with method.
func v2Payload(bwt []byte, method byte) []byte {
	var c []byte
	switch method {
	case methodRuns:
		c = encodeRuns(bwt, nil)
	case methodDirect:
		c = encodeDirectMethod(bwt, nil)
	default:
		panic("v2Payload: method")
	}
	p := []byte{2, SampleShift}
	p = binary.AppendUvarint(p, DefaultSegmentSize)
	p = append(p, method)
	p = binary.AppendUvarint(p, uint64(len(c)))
	return append(p, c...)
}

// TestVersion2Payloads decodes version-2 payloads of method 1 and 2 made by this package's
// coders for both (which version 3 keeps).
func TestVersion2Payloads(t *testing.T) {
	rng := rand.New(rand.NewSource(34))
	for i, bwt := range segmentInputs(rng) {
		if len(bwt) == 0 || len(bwt) > 1<<16 {
			continue
		}
		for _, m := range []byte{methodRuns, methodDirect} {
			if blk, err := DecodeBlock(v2Payload(bwt, m), len(bwt), BlockOptions{}); err != nil || !bytes.Equal(blk.BWT, bwt) {
				t.Fatalf("input %d, method %d: %v", i, m, err)
			}
		}
	}
}

// TestVersionChecks checks what each version may hold: version 4 writes its text's kind, which
// version 3 does not have, and method 4, which a version-2 payload may not contain; readers refuse
// stream versions outside 2..5 (5 is a stream whose blocks may be read sets, with payloads of
// their own: a transform's payload is never version 5).
func TestVersionChecks(t *testing.T) {
	bwt, _ := naiveBWT(bytes.Repeat([]byte("a version check, a version check; "), 40))
	p, err := EncodeBlock(nil, bwt, nil, nil, BlockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, k := binary.Uvarint(p[3:])
	if p[0] != 4 || p[2] != textPlain || p[3+k] != methodRunsFreq {
		t.Fatalf("payload version %d, text kind %d, method %d: want 4, %d and %d", p[0], p[2], p[3+k], textPlain, methodRunsFreq)
	}
	if blk, err := DecodeBlock(p, len(bwt), BlockOptions{}); err != nil || !bytes.Equal(blk.BWT, bwt) {
		t.Fatalf("version 4: %v", err)
	}
	v3 := append([]byte{3, SampleShift}, p[3:]...)
	if blk, err := DecodeBlock(v3, len(bwt), BlockOptions{}); err != nil || !bytes.Equal(blk.BWT, bwt) {
		t.Fatalf("version 3: %v", err)
	}
	for _, v := range []byte{1, 2, 5} {
		bad := append([]byte{v}, v3[1:]...)
		if _, err := DecodeBlock(bad, len(bwt), BlockOptions{}); err == nil {
			t.Errorf("payload version %d with method 4 decoded", v)
		}
	}
	for _, v := range []byte{1, 6} {
		h := appendHeaderVersion(nil, 100, v)
		h = AppendTrailer(h, Trailer{})
		if _, err := readAll(bytes.NewReader(h)); err == nil {
			t.Errorf("stream version %d read", v)
		}
	}
	if _, err := readAll(bytes.NewReader(AppendTrailer(AppendReadsHeader(nil, 100), Trailer{}))); err != nil {
		t.Errorf("stream version 5: %v", err)
	}
}
