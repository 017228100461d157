package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapipe/sapipe/formats/bwz"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

func compressBytes(t testing.TB, data []byte, blockSize, threads int) []byte {
	t.Helper()
	var out bytes.Buffer
	st, err := Compress(context.Background(), cpu.New(threads), CompressOptions{BlockSize: blockSize, Threads: threads, SegmentSize: 64 << 10}, bytes.NewReader(data), &out)
	if err != nil {
		t.Fatalf("compress %d bytes in blocks of %d: %v", len(data), blockSize, err)
	}
	if st.In != int64(len(data)) || st.Out != int64(out.Len()) {
		t.Fatalf("stats %+v for %d bytes in, %d out", st, len(data), out.Len())
	}
	return out.Bytes()
}

func decompressBytes(data []byte, threads int) ([]byte, error) {
	var out bytes.Buffer
	n, err := Decompress(context.Background(), DecompressOptions{Threads: threads}, bytes.NewReader(data), &out)
	if err == nil && n != int64(out.Len()) {
		return nil, errors.New("wrong byte count")
	}
	return out.Bytes(), err
}

// testInputs are the edge cases of block coding: empty, tiny, constant, random, periodic, text.
func testInputs(rng *rand.Rand) map[string][]byte {
	in := map[string][]byte{
		"empty":      {},
		"one byte":   {'x'},
		"two bytes":  {0, 255},
		"all zeros":  make([]byte, 200000),
		"all 0xff":   bytes.Repeat([]byte{0xff}, 70001),
		"periodic":   bytes.Repeat([]byte("abcabd"), 30000),
		"every byte": nil,
	}
	for i := 0; i < 3*256; i++ {
		in["every byte"] = append(in["every byte"], byte(i))
	}
	random := make([]byte, 300000)
	rng.Read(random)
	in["random"] = random
	dna := make([]byte, 250000)
	for i := range dna {
		dna[i] = "ACGT"[rng.Intn(4)]
		if i%61 == 60 {
			dna[i] = '\n'
		}
	}
	in["dna"] = dna
	words := strings.Fields("the quick brown fox jumps over the lazy dog and compresses blocks of sorted suffixes")
	var text []byte
	for len(text) < 400000 {
		text = append(text, words[rng.Intn(len(words))]...)
		text = append(text, " \n"[rng.Intn(2)])
	}
	in["text"] = text
	return in
}

func TestCompressRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	sizes, threadCounts := []int{1, 7, 65536, 65537, 1 << 20}, []int{1, 3}
	if testing.Short() {
		sizes, threadCounts = []int{7, 65537}, []int{2}
	}
	for name, data := range testInputs(rng) {
		for _, bs := range sizes {
			if bs < 1000 && len(data) > 5000 {
				continue
			}
			for _, threads := range threadCounts {
				c := compressBytes(t, data, bs, threads)
				got, err := decompressBytes(c, threads)
				if err != nil {
					t.Fatalf("%s, blocks of %d, %d threads: %v", name, bs, threads, err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("%s, blocks of %d, %d threads: round trip differs", name, bs, threads)
				}
			}
		}
	}
}

// TestCompressBlockEdges compresses inputs one byte short of, at, and one byte past multiples of
// the block size.
func TestCompressBlockEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const bs = 4096
	for _, n := range []int{bs - 1, bs, bs + 1, 2*bs - 1, 2 * bs, 2*bs + 1, 5*bs + 3} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + rng.Intn(3))
		}
		got, err := decompressBytes(compressBytes(t, data, bs, 2), 2)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes in blocks of %d: err %v, equal %v", n, bs, err, bytes.Equal(got, data))
		}
	}
}

func TestDecompressConcatenated(t *testing.T) {
	a, b := []byte("first stream\n"), bytes.Repeat([]byte("second "), 5000)
	cat := append(compressBytes(t, a, 1000, 1), compressBytes(t, b, 4096, 2)...)
	cat = append(cat, compressBytes(t, nil, 10, 1)...)
	got, err := decompressBytes(cat, 2)
	if err != nil || string(got) != string(a)+string(b) {
		t.Fatalf("concatenated streams: err %v, got %d bytes", err, len(got))
	}
}

// TestDecompressEveryBitFlip flips each bit of a small stream in turn: every flip must give an
// error wrapping bwz.ErrCorrupt (the format has no bit whose change goes unnoticed) and never a
// panic or hang; test mode must name at least one bad spot.
func TestDecompressEveryBitFlip(t *testing.T) {
	data := []byte(strings.Repeat("to be or not to be, that is the question; ", 40))
	c := compressBytes(t, data, 700, 2)
	step := 1
	if testing.Short() {
		step = 7 // a sample of the bits, for the race detector's sake
	}
	for i := 0; i < len(c)*8; i += step {
		bad := append([]byte(nil), c...)
		bad[i/8] ^= 1 << (i % 8)
		_, err := decompressBytes(bad, 2)
		if !errors.Is(err, bwz.ErrCorrupt) {
			t.Fatalf("bit %d flipped: error %v, want corrupt", i, err)
		}
		rep, err := TestStreams(context.Background(), DecompressOptions{Threads: 2}, bytes.NewReader(bad))
		if err != nil || len(rep.Bad) == 0 {
			t.Fatalf("bit %d flipped: test mode reports %+v, %v", i, rep, err)
		}
	}
}

func TestDecompressTruncated(t *testing.T) {
	data := bytes.Repeat([]byte("truncate me "), 3000)
	c := compressBytes(t, data, 5000, 2)
	for n := 0; n < len(c); n += 1 + n/7 {
		_, err := decompressBytes(c[:n], 2)
		if !errors.Is(err, bwz.ErrCorrupt) {
			t.Fatalf("first %d of %d bytes: error %v, want corrupt", n, len(c), err)
		}
	}
	if _, err := decompressBytes(append(append([]byte(nil), c...), "junk"...), 1); !errors.Is(err, bwz.ErrCorrupt) {
		t.Fatalf("trailing junk: error %v", err)
	}
	if _, err := decompressBytes([]byte("BZh91AY&SY"), 1); !errors.Is(err, bwz.ErrCorrupt) || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("wrong magic: error %v", err)
	}
}

// TestTestStreamsNamesBadBlocks damages two blocks' payloads and one block header: test mode must
// report each and count the others as good.
func TestTestStreamsNamesBadBlocks(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	data := make([]byte, 10*4096)
	for i := range data {
		data[i] = byte('a' + rng.Intn(20))
	}
	c := compressBytes(t, data, 4096, 2)
	// find the block frames
	var offs []int64
	fr := bwz.NewReader(bytes.NewReader(c))
	for {
		f, err := fr.Next()
		if err != nil {
			break
		}
		if f.Kind == bwz.FrameBlock {
			offs = append(offs, f.Offset)
		}
	}
	if len(offs) != 10 {
		t.Fatalf("%d blocks, want 10", len(offs))
	}
	bad := append([]byte(nil), c...)
	bad[offs[2]+40] ^= 0x10 // payload of block 2
	bad[offs[5]+8] ^= 0x01  // header of block 5 (its length)
	bad[offs[7]+100] ^= 0x80
	rep, err := TestStreams(context.Background(), DecompressOptions{Threads: 2}, bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range rep.Bad {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"block 2 ", "block 5 ", "block 7 "} {
		if !strings.Contains(all, want) {
			t.Errorf("report does not name %q:\n%s", want, all)
		}
	}
	if rep.Blocks != 7 {
		t.Errorf("%d good blocks, want 7; report:\n%s", rep.Blocks, all)
	}
	_, err = decompressBytes(bad, 2)
	var ce *bwz.CorruptError
	if !errors.As(err, &ce) || ce.Block != 2 {
		t.Errorf("decompress error %v, want block 2", err)
	}
}

// TestCompressRealData round-trips every file of ../shared/data (decompressed if it is gzip), when
// the folder is there.
func TestCompressRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("real data in -short mode")
	}
	dir := "../../shared/data"
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Skip("no ../shared/data")
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{raw, unpack(t, path)} {
			if data == nil {
				continue
			}
			c := compressBytes(t, data, 1<<20, 2)
			got, err := decompressBytes(c, 2)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s (%d bytes): err %v, equal %v", path, len(data), err, bytes.Equal(got, data))
			}
			t.Logf("%s: %d -> %d bytes", filepath.Base(path), len(data), len(c))
		}
	}
}

// unpack returns the decompressed content of a compressed file, or nil for a plain one.
func unpack(t *testing.T, path string) []byte {
	if !strings.HasSuffix(path, ".gz") {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecompress runs the whole decoder (frames, block coding, inverse transform, checksums) on
// arbitrary input: it must end with an error wrapping bwz.ErrCorrupt, or decode; never panic or
// hang. Test mode must agree that the input is damaged.
func FuzzDecompress(f *testing.F) {
	for _, fast := range []bool{false, true} {
		for _, in := range []string{"", "x", "banana banana banana", strings.Repeat("ACGTTGCA\n", 300)} {
			var out bytes.Buffer
			if _, err := Compress(context.Background(), cpu.New(1), CompressOptions{BlockSize: 1000, Threads: 1, Fast: fast}, strings.NewReader(in), &out); err != nil {
				f.Fatal(err)
			}
			f.Add(out.Bytes())
		}
	}
	// a block coded from its LZP text
	var out bytes.Buffer
	if _, err := Compress(context.Background(), cpu.New(1), CompressOptions{BlockSize: 100000, Threads: 1}, bytes.NewReader(archiveInput(7, 100000)), &out); err != nil {
		f.Fatal(err)
	}
	f.Add(out.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := decompressBytes(in, 2)
		if err != nil && !errors.Is(err, bwz.ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		rep, terr := TestStreams(context.Background(), DecompressOptions{Threads: 2}, bytes.NewReader(in))
		if terr != nil {
			t.Fatalf("test mode: %v", terr)
		}
		if (err != nil) != (len(rep.Bad) > 0) {
			t.Fatalf("decompress says %v, test mode finds %d bad", err, len(rep.Bad))
		}
	})
}

// benchText is a seeded text-like input for the stage benchmarks.
func benchText(n int) []byte {
	rng := rand.New(rand.NewSource(31))
	words := strings.Fields("static int struct return if else for while the of and to in is that block sort suffix array")
	var b []byte
	for len(b) < n {
		b = append(b, words[rng.Intn(len(words))]...)
		b = append(b, " \n\t"[rng.Intn(3)])
	}
	return b[:n]
}

func BenchmarkCompress(b *testing.B) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "models", true: "fast"}[fast]
		b.Run(name, func(b *testing.B) {
			data := benchText(4 << 20)
			opts := CompressOptions{BlockSize: 1 << 20, Threads: 2, Fast: fast}
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := Compress(context.Background(), cpu.New(2), opts, bytes.NewReader(data), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "models", true: "fast"}[fast]
		b.Run(name, func(b *testing.B) {
			data := benchText(4 << 20)
			var c bytes.Buffer
			if _, err := Compress(context.Background(), cpu.New(2), CompressOptions{BlockSize: 1 << 20, Threads: 2, Fast: fast}, bytes.NewReader(data), &c); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Decompress(context.Background(), DecompressOptions{Threads: 2}, bytes.NewReader(c.Bytes()), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// archiveInput is like an archive of source files: files of random words, many of them copies
// of earlier ones with a few lines changed, so that long repeats lie far apart.
func archiveInput(seed int64, size int) []byte {
	rng := rand.New(rand.NewSource(seed))
	words := strings.Fields("static int struct return if else for while void char unsigned long kernel device driver include linux err NULL")
	var files [][]byte
	var out []byte
	for len(out) < size {
		var f []byte
		if len(files) > 0 && rng.Intn(3) > 0 {
			f = append([]byte(nil), files[rng.Intn(len(files))]...)
			for k := rng.Intn(4); k > 0; k-- {
				f[rng.Intn(len(f))] = byte('A' + rng.Intn(26))
			}
		} else {
			for len(f) < 200+rng.Intn(8000) {
				f = append(f, words[rng.Intn(len(words))]...)
				f = append(f, " \n\t;"[rng.Intn(4)])
			}
			files = append(files, f)
		}
		out = append(out, "header of a file: "...)
		out = append(out, byte('0'+rng.Intn(10)), '\n')
		out = append(out, f...)
	}
	return out[:size]
}

// readFrames returns the frames of a .bwz stream.
func readFrames(t *testing.T, stream []byte) []bwz.Frame {
	t.Helper()
	var frames []bwz.Frame
	r := bwz.NewReader(bytes.NewReader(stream))
	for {
		f, err := r.Next()
		if err == io.EOF {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
}

// TestCompressLZP checks that blocks with long repeats are coded from their LZP text (version 4)
// and round-trip, whatever the block size and threads; with the Huffman coder, blocks of
// fastLZPMin or more only.
func TestCompressLZP(t *testing.T) {
	data := archiveInput(5, fastLZPMin+300<<10)
	for _, bs := range []int{200 << 10, 1 << 20, fastLZPMin} {
		for _, fast := range []bool{false, true} {
			var out bytes.Buffer
			st, err := Compress(context.Background(), cpu.New(2), CompressOptions{BlockSize: bs, Threads: 2, Fast: fast}, bytes.NewReader(data), &out)
			if err != nil {
				t.Fatal(err)
			}
			lzp, sorted := 0, 0
			for _, f := range readFrames(t, out.Bytes()) {
				if f.Kind == bwz.FrameBlock {
					blk, err := bwz.DecodeBlock(f.Payload, f.Block.Length, bwz.BlockOptions{})
					if err != nil {
						t.Fatal(err)
					}
					sorted += len(blk.BWT)
					if blk.LZP != nil {
						lzp++
						if len(blk.BWT) >= f.Block.Length {
							t.Errorf("LZP text of %d bytes for a block of %d", len(blk.BWT), f.Block.Length)
						}
					}
				}
			}
			// with the Huffman coder, only a block of fastLZPMin (the one after it is shorter)
			if fast && lzp != bs/fastLZPMin {
				t.Errorf("blocks of %d, fast: %d blocks coded from their LZP text, want %d", bs, lzp, bs/fastLZPMin)
			}
			if !fast && lzp == 0 {
				t.Errorf("blocks of %d: no block coded from its LZP text", bs)
			}
			if st.LZPBlocks != lzp || st.Sorted != int64(sorted) {
				t.Errorf("blocks of %d, fast %v: stats say %d LZP blocks and %d bytes sorted, the stream %d and %d", bs, fast, st.LZPBlocks, st.Sorted, lzp, sorted)
			}
			for _, threads := range []int{1, 3} {
				got, err := decompressBytes(out.Bytes(), threads)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("blocks of %d, fast %v, %d threads: err %v, equal %v", bs, fast, threads, err, bytes.Equal(got, data))
				}
			}
		}
	}
}

// TestDecompressVersion3 decodes testdata/v3/golden.bwz, archiveInput(3, 300000) compressed by
// format version 3's sapipe (the commit before version 4) in blocks of 128 KiB.
func TestDecompressVersion3(t *testing.T) {
	b, err := os.ReadFile("testdata/v3/golden.bwz")
	if err != nil {
		t.Fatal(err)
	}
	if b[4] != 3 {
		t.Fatalf("stream version %d", b[4])
	}
	got, err := decompressBytes(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, archiveInput(3, 300000)) {
		t.Fatal("version-3 stream decodes to other bytes")
	}
}

// TestDecompressLZPDamageBehindChecksums damages the payloads of blocks coded from their LZP text
// and writes the payload checksums anew, so that the damage reaches the decoders (the range coder,
// the inverse transform, the LZP text): every damaged stream must end with an error wrapping
// bwz.ErrCorrupt, and none may decode to other bytes without one.
func TestDecompressLZPDamageBehindChecksums(t *testing.T) {
	data := archiveInput(9, 300<<10)
	c := compressBytes(t, data, 150<<10, 2)
	frames := readFrames(t, c)
	lzp := 0
	for _, f := range frames {
		if f.Kind == bwz.FrameBlock && len(f.Payload) > 2 && f.Payload[2] == 1 {
			lzp++
		}
	}
	if lzp == 0 {
		t.Fatal("no block coded from its LZP text")
	}
	rng := rand.New(rand.NewSource(10))
	rounds := 400
	if testing.Short() {
		rounds = 60
	}
	for round := 0; round < rounds; round++ {
		var out []byte
		for _, f := range frames {
			switch f.Kind {
			case bwz.FrameHeader:
				out = bwz.AppendHeader(out, f.BlockSize)
			case bwz.FrameBlock:
				p := append([]byte(nil), f.Payload...)
				// the LZP fields and sampled rows early on, the coded data anywhere
				k := rng.Intn(len(p))
				if round%2 == 0 {
					k = rng.Intn(min(len(p), 64))
				}
				p[k] ^= byte(1 << rng.Intn(8))
				out = bwz.AppendBlock(out, f.Block, p)
			case bwz.FrameTrailer:
				out = bwz.AppendTrailer(out, f.Trailer)
			}
		}
		got, err := decompressBytes(out, 2)
		if err == nil && !bytes.Equal(got, data) {
			t.Fatalf("round %d: damaged stream decoded to other bytes without an error", round)
		}
		if err != nil && !errors.Is(err, bwz.ErrCorrupt) {
			t.Fatalf("round %d: error %v does not wrap ErrCorrupt", round, err)
		}
	}
}

// sortPeak is a backend that counts the suffix arrays being built at once.
type sortPeak struct {
	kernels.Backend
	active, peak atomic.Int32
}

func (s *sortPeak) SuffixArray(text []byte, sa []int32) error {
	v := s.active.Add(1)
	for old := s.peak.Load(); v > old && !s.peak.CompareAndSwap(old, v); old = s.peak.Load() {
	}
	time.Sleep(20 * time.Millisecond) // so that blocks in flight together overlap here
	defer s.active.Add(-1)
	return s.Backend.SuffixArray(text, sa)
}

// TestCompressMemory: a memory bound holds back the blocks in flight, and changes no byte of the
// output; so does one for decompression.
func TestCompressMemory(t *testing.T) {
	data := benchText(1 << 20)
	const bs = 64 << 10
	want := compressBytes(t, data, bs, 4)
	for _, c := range []struct {
		memory   int64
		max, min int32
	}{
		{0, 5, 3},
		{2 * CompressBytesPerByte * bs, 2, 2},
		{1, 1, 1}, // less than a block: one at a time
	} {
		be := &sortPeak{Backend: cpu.New(4)}
		var out bytes.Buffer
		_, err := Compress(context.Background(), be, CompressOptions{BlockSize: bs, Threads: 4, SegmentSize: 64 << 10, Memory: c.memory}, bytes.NewReader(data), &out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("memory %d: the output differs", c.memory)
		}
		if p := be.peak.Load(); p > c.max || p < c.min {
			t.Errorf("memory %d: %d blocks sorted at once, want %d..%d", c.memory, p, c.min, c.max)
		}
		for _, mem := range []int64{1, c.memory} {
			var back bytes.Buffer
			if _, err := Decompress(context.Background(), DecompressOptions{Threads: 4, Memory: mem}, bytes.NewReader(out.Bytes()), &back); err != nil || !bytes.Equal(back.Bytes(), data) {
				t.Errorf("decompress, memory %d: %v", mem, err)
			}
		}
	}
}
