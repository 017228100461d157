package formats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// frameBlock is what a test writes into a stream: the reader must give back the same.
type frameBlock struct {
	data    []byte
	primary int
	crc     uint32
}

// randomFrames returns count blocks of at most blockSize random bytes with random primaries and
// CRCs: the frame layer does not look inside them.
func randomFrames(rng *rand.Rand, count, blockSize int) []frameBlock {
	var bs []frameBlock
	for range count {
		n := 1 + rng.IntN(blockSize)
		d := make([]byte, n)
		for i := range d {
			d[i] = byte(rng.UintN(256))
		}
		bs = append(bs, frameBlock{d, 1 + rng.IntN(n), rng.Uint32()})
	}
	return bs
}

func encodeFrames(t testing.TB, blockSize int, bs []frameBlock) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewBWTWriter(&out, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if err := w.WriteBlock(b.data, b.primary, b.crc); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// decodeFrames reads every block of in; the error is the first that is not io.EOF.
func decodeFrames(name string, in io.Reader) ([]frameBlock, error) {
	r := NewBWTReader(name, in)
	var bs []frameBlock
	for {
		b, err := r.Next()
		if errors.Is(err, io.EOF) {
			return bs, nil
		}
		if err != nil {
			return bs, err
		}
		bs = append(bs, frameBlock{b.Data, b.Primary, b.CRC})
	}
}

func sameFrames(a, b []frameBlock) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].data, b[i].data) || a[i].primary != b[i].primary || a[i].crc != b[i].crc {
			return false
		}
	}
	return true
}

func TestBWTFrameRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ blockSize, count int }{{1, 0}, {1, 1}, {1, 5}, {7, 3}, {100, 20}, {3 << 20, 2}} {
		bs := randomFrames(rng, c.count, c.blockSize)
		enc := encodeFrames(t, c.blockSize, bs)
		total := 0
		for _, b := range bs {
			total += len(b.data)
		}
		if len(enc) != bwtHeaderLen+len(bs)*bwtBlockHdr+total+bwtTrailerLen {
			t.Errorf("block size %d, %d blocks: %d bytes encoded", c.blockSize, c.count, len(enc))
		}
		for _, rd := range []io.Reader{bytes.NewReader(enc), iotest.HalfReader(bytes.NewReader(enc)), iotest.OneByteReader(bytes.NewReader(enc))} {
			got, err := decodeFrames("x", rd)
			if err != nil || !sameFrames(got, bs) {
				t.Fatalf("block size %d, %d blocks: read back %d blocks, %v", c.blockSize, c.count, len(got), err)
			}
		}
	}
}

// TestBWTFrameLayout pins the documented layout, so that a change of format cannot pass unnoticed.
func TestBWTFrameLayout(t *testing.T) {
	enc := encodeFrames(t, 8, []frameBlock{{[]byte("annbaa"), 4, 0x11223344}})
	want := []byte("SAPBWT\x01\x00\x08\x00\x00\x00")
	want = binary.LittleEndian.AppendUint32(want, crc32.Checksum(want, Castagnoli))
	bh := []byte{6, 0, 0, 0, 4, 0, 0, 0, 0x44, 0x33, 0x22, 0x11}
	want = append(want, binary.LittleEndian.AppendUint32(bh, crc32.Checksum(bh, Castagnoli))...)
	want = append(want, "annbaa"...)
	tr := []byte{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0}
	tr = binary.LittleEndian.AppendUint32(tr, crc32.Checksum([]byte{0x44, 0x33, 0x22, 0x11}, Castagnoli))
	want = append(want, binary.LittleEndian.AppendUint32(tr, crc32.Checksum(tr, Castagnoli))...)
	if !bytes.Equal(enc, want) {
		t.Errorf("encoded\n%x\nwant\n%x", enc, want)
	}
}

func checkFrameError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var fe *FrameError
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v, want a *FrameError", what, err)
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "f: ") || strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, want) {
		t.Errorf("%s: message %q, want one line starting \"f: \" with %q", what, msg, want)
	}
}

// TestBWTFrameDamage flips every bit of a small stream in turn: a flip in a header, a block
// header or the trailer is an error naming the part; a flip in the transform reaches the caller,
// whose data CRC catches it.
func TestBWTFrameDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bs := randomFrames(rng, 3, 10)
	enc := encodeFrames(t, 10, bs)
	var data [][2]int // [start, end) of each block's transform
	off := bwtHeaderLen
	for _, b := range bs {
		data = append(data, [2]int{off + bwtBlockHdr, off + bwtBlockHdr + len(b.data)})
		off += bwtBlockHdr + len(b.data)
	}
	inData := func(i int) bool {
		for _, d := range data {
			if i >= d[0] && i < d[1] {
				return true
			}
		}
		return false
	}
	for i := range enc {
		for bit := range 8 {
			d := bytes.Clone(enc)
			d[i] ^= 1 << bit
			got, err := decodeFrames("f", bytes.NewReader(d))
			what := fmt.Sprintf("bit %d of byte %d", bit, i)
			if inData(i) {
				if err != nil || sameFrames(got, bs) {
					t.Errorf("%s (transform): %v", what, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: no error", what)
				continue
			}
			switch {
			case i < bwtHeaderLen:
				checkFrameError(t, what, err, "header")
			case i >= len(enc)-bwtTrailerLen+4:
				checkFrameError(t, what, err, "trailer")
			case i >= len(enc)-bwtTrailerLen:
				// The trailer's zero length, damaged, reads as the header of one more block.
				checkFrameError(t, what, err, "block 4")
			case strings.Contains(err.Error(), "trailer"):
				// A length that becomes 0 makes the block header read as a trailer.
				checkFrameError(t, what, err, "trailer checksum mismatch")
			default:
				checkFrameError(t, what, err, "block ")
			}
		}
	}
}

func TestBWTFrameTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	enc := encodeFrames(t, 50, randomFrames(rng, 4, 50))
	for n := range len(enc) {
		_, err := decodeFrames("f", bytes.NewReader(enc[:n]))
		what := fmt.Sprintf("first %d of %d bytes", n, len(enc))
		switch {
		case n < len(BWTMagic):
			checkFrameError(t, what, err, ErrNotBWTStream.Error())
		default:
			checkFrameError(t, what, err, "truncated")
		}
	}
	_, err := decodeFrames("f", bytes.NewReader(append(bytes.Clone(enc), 0)))
	checkFrameError(t, "a byte after the trailer", err, "data after the trailer")
}

// TestBWTFrameBlocksMoved: a lost, repeated or swapped block, or two streams pasted together, is
// caught by the trailer.
func TestBWTFrameBlocksMoved(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	bs := randomFrames(rng, 3, 20)
	for _, c := range []struct {
		name   string
		blocks []frameBlock
	}{
		{"lost", bs[:2]},
		{"repeated", []frameBlock{bs[0], bs[1], bs[1], bs[2]}},
		{"swapped", []frameBlock{bs[1], bs[0], bs[2]}},
	} {
		enc := encodeFrames(t, 20, bs)
		other := encodeFrames(t, 20, c.blocks)
		// Keep the original header and trailer around the moved blocks.
		moved := append(append(bytes.Clone(enc[:bwtHeaderLen]), other[bwtHeaderLen:len(other)-bwtTrailerLen]...), enc[len(enc)-bwtTrailerLen:]...)
		_, err := decodeFrames("f", bytes.NewReader(moved))
		checkFrameError(t, c.name, err, "trailer")
	}
	enc := encodeFrames(t, 20, bs)
	_, err := decodeFrames("f", bytes.NewReader(append(bytes.Clone(enc), enc...)))
	checkFrameError(t, "two streams", err, "data after the trailer")
}

func TestBWTFrameForeign(t *testing.T) {
	for _, in := range []string{"", "S", "SAPBW", "hello, world\n", "\x1f\x8b\x08\x00\x00\x00\x00\x00", "BZh91AY&SY", ">chr1\nACGT\n"} {
		_, err := decodeFrames("f", strings.NewReader(in))
		checkFrameError(t, fmt.Sprintf("%q", in), err, ErrNotBWTStream.Error())
	}
	enc := encodeFrames(t, 5, nil)
	enc[6] = 2
	_, err := decodeFrames("f", bytes.NewReader(enc))
	checkFrameError(t, "version 2", err, "unsupported BWT stream version 2")
}

// TestBWTFrameHugeClaim: a stream that claims the largest block and then ends allocates a small
// buffer, not the claimed length.
func TestBWTFrameHugeClaim(t *testing.T) {
	var in bytes.Buffer
	if _, err := NewBWTWriter(&in, MaxBWTBlock); err != nil {
		t.Fatal(err)
	}
	h := binary.LittleEndian.AppendUint32(nil, MaxBWTBlock)
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, Castagnoli))
	in.Write(h)
	in.WriteString("just a few bytes")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeFrames("f", bytes.NewReader(in.Bytes()))
	runtime.ReadMemStats(&after)
	checkFrameError(t, "huge claim", err, "truncated")
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("allocated %d bytes for a block that is not there", got)
	}
}

func TestBWTWriterLimits(t *testing.T) {
	for _, bs := range []int{0, -1, MaxBWTBlock + 1} {
		if _, err := NewBWTWriter(io.Discard, bs); err == nil {
			t.Errorf("block size %d accepted", bs)
		}
	}
	w, _ := NewBWTWriter(io.Discard, 4)
	for _, c := range []struct {
		n, primary int
	}{{0, 0}, {5, 1}, {4, 0}, {4, 5}} {
		if err := w.WriteBlock(make([]byte, c.n), c.primary, 0); err == nil {
			t.Errorf("block of %d bytes with primary %d accepted", c.n, c.primary)
		}
	}
}

// FuzzBWTReader: no input makes the reader panic, hang or allocate much; results do not depend on
// how the input arrives; every error is one line naming the input; and whatever the reader
// accepts, the writer writes back byte for byte (the format has one encoding per content).
func FuzzBWTReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	f.Add([]byte{})
	f.Add([]byte("SAPBWT"))
	f.Add(encodeFrames(f, 1, nil))
	f.Add(encodeFrames(f, 16, randomFrames(rng, 3, 16)))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := decodeFrames("f", bytes.NewReader(in))
		got2, err2 := decodeFrames("f", iotest.OneByteReader(bytes.NewReader(in)))
		if !sameFrames(got, got2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("reads disagree: %d blocks, %v / %d blocks, %v", len(got), err, len(got2), err2)
		}
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "f: ") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		bs := int(binary.LittleEndian.Uint32(in[8:]))
		if again := encodeFrames(t, bs, got); !bytes.Equal(again, in) {
			t.Fatalf("accepted %x, which writes back as %x", in, again)
		}
	})
}
