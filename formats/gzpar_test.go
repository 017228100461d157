package formats

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
)

// gzparRead reads all of the gzip stream z through a gzparReader of chunks of chunk bytes (and
// overlap bytes of the next) on threads goroutines.
func gzparRead(z []byte, chunk, overlap, threads int) ([]byte, *gzparReader, error) {
	c, o := gzChunk, gzOverlap
	gzChunk, gzOverlap = chunk, overlap
	r := newGzparReader(bufio.NewReader(bytes.NewReader(z)), threads)
	gzChunk, gzOverlap = c, o
	out, err := io.ReadAll(r)
	r.Close()
	return out, r, err
}

// stdGunzip is what compress/gzip makes of z: its bytes up to its error. No bytes at all are
// an empty stream (gzpar's readers start after gzip's magic number has been seen).
func stdGunzip(z []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// fastqText makes n reads of FASTQ: what most gzip inputs hold.
func fastqText(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "@read_%d/1\n", i)
		for range 150 {
			b.WriteByte("ACGT"[rng.IntN(4)])
		}
		b.WriteString("\n+\n")
		for range 150 {
			b.WriteByte(byte('!' + 30 + rng.IntN(12)))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// gzInputs returns texts of several kinds and sizes.
func gzInputs(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	random := make([]byte, 300000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	repeat := bytes.Repeat([]byte("ACGTTGCA"), 80000)
	mixed := append(append(append([]byte{}, fastqText(rng, 300)...), random[:100000]...), repeat[:200000]...)
	return map[string][]byte{
		"fastq":  fastqText(rng, 3000),
		"random": random,
		"repeat": repeat,
		"mixed":  mixed,
		"empty":  nil,
		"tiny":   []byte("ACGT\n"),
	}
}

// gzEncoders compress with several encoders and levels: compress/gzip's (stored, Huffman only,
// fast, default, best), klauspost's, and the gzip command's where it is installed.
func gzEncoders(t testing.TB) map[string]func([]byte) []byte {
	enc := map[string]func([]byte) []byte{}
	for _, lvl := range []int{gzip.HuffmanOnly, gzip.NoCompression, 1, 5, 9} {
		enc[fmt.Sprintf("std%d", lvl)] = func(b []byte) []byte {
			var o bytes.Buffer
			w, _ := gzip.NewWriterLevel(&o, lvl)
			w.Name, w.Comment = "reads.fq", "a comment"
			w.Write(b)
			w.Close()
			return o.Bytes()
		}
	}
	for _, lvl := range []int{1, 4, 9} {
		enc[fmt.Sprintf("klauspost%d", lvl)] = func(b []byte) []byte {
			var o bytes.Buffer
			w, _ := kgzip.NewWriterLevel(&o, lvl)
			w.Write(b)
			w.Close()
			return o.Bytes()
		}
	}
	if _, err := exec.LookPath("gzip"); err == nil {
		for _, lvl := range []string{"-1", "-6", "-9"} {
			enc["gzip"+lvl] = func(b []byte) []byte {
				c := exec.Command("gzip", "-c", lvl)
				c.Stdin = bytes.NewReader(b)
				o, err := c.Output()
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
		}
	}
	return enc
}

func TestGzparReader(t *testing.T) {
	inputs := gzInputs(t)
	for en, enc := range gzEncoders(t) {
		for in, text := range inputs {
			z := enc(text)
			for _, c := range []struct{ chunk, overlap int }{{3000, 700}, {20000, 5000}, {1 << 16, 1 << 14}, {gzChunk, gzOverlap}} {
				out, _, err := gzparRead(z, c.chunk, c.overlap, 4)
				if err != nil || !bytes.Equal(out, text) {
					t.Fatalf("%s %s chunk %d: %d bytes of %d, %v", en, in, c.chunk, len(out), len(text), err)
				}
			}
		}
	}
}

// TestGzparTakesChunks fails where the chunks' decoding is never taken (Read decoding all of the
// stream itself would be right, and slow).
func TestGzparTakesChunks(t *testing.T) {
	text := fastqText(rand.New(rand.NewPCG(11, 12)), 30000)
	for en, enc := range gzEncoders(t) {
		if en == "std0" || en == "std-2" {
			continue // stored blocks all through, or one Huffman-only block a chunk: few to take
		}
		z := enc(text)
		out, r, err := gzparRead(z, 1<<18, 1<<18, 4)
		if err != nil || !bytes.Equal(out, text) {
			t.Fatalf("%s: %v", en, err)
		}
		chunks := (len(z) + 1<<18 - 1) >> 18
		t.Logf("%s: %d of %d chunks taken, %d blocks by Read", en, r.taken, chunks, r.serial)
		if r.taken < chunks/2 {
			t.Errorf("%s: %d of %d chunks taken as decoded, %d blocks decoded by Read", en, r.taken, chunks, r.serial)
		}
	}
}

// TestGzparRuns: a genome's long run of N (a thousand bytes of output to one of gzip) stops a
// chunk's decoding at gzChunkOut times its bytes; the chain decodes the rest.
func TestGzparRuns(t *testing.T) {
	var text []byte
	text = append(text, ">chr1\n"...)
	line := bytes.Repeat([]byte("N"), 60)
	line = append(line, '\n')
	text = append(text, fastqText(rand.New(rand.NewPCG(1, 1)), 200)...)
	for range 300000 {
		text = append(text, line...)
	}
	text = append(text, fastqText(rand.New(rand.NewPCG(1, 2)), 200)...)
	z := gzEncoders(t)["std5"](text)
	const chunk = 4096
	out, r, err := gzparRead(z, chunk, chunk/2, 3)
	if err != nil || !bytes.Equal(out, text) {
		t.Fatalf("%d bytes of %d, %v", len(out), len(text), err)
	}
	if r.maxTaken > gzChunkOut*chunk+258 || r.serial == 0 {
		t.Errorf("a chunk's decoding of %d bytes used (at most %d), %d blocks by the chain", r.maxTaken, gzChunkOut*chunk+258, r.serial)
	}
}

// TestGzparClose: a reader closed part way ends its goroutines.
func TestGzparClose(t *testing.T) {
	z := gzEncoders(t)["std1"](fastqText(rand.New(rand.NewPCG(13, 14)), 20000))
	base := runtime.NumGoroutine()
	for range 20 {
		c, o := gzChunk, gzOverlap
		gzChunk, gzOverlap = 1<<14, 1<<12
		r := newGzparReader(bufio.NewReader(bytes.NewReader(z)), 4)
		gzChunk, gzOverlap = c, o
		io.ReadFull(r, make([]byte, 100000))
		r.Close()
	}
	for i := 0; runtime.NumGoroutine() > base && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines left of 20 readers closed part way (%d before)", n-base, base)
	}
}

func TestGzparMembers(t *testing.T) {
	inputs := gzInputs(t)
	enc := gzEncoders(t)
	var z, want []byte
	for _, k := range []string{"fastq", "tiny", "random", "empty", "repeat"} {
		z = append(z, enc["std5"](inputs[k])...)
		z = append(z, enc["klauspost1"](inputs[k])...)
		want = append(want, inputs[k]...)
		want = append(want, inputs[k]...)
	}
	for _, chunk := range []int{1000, 7000, 1 << 20} {
		out, _, err := gzparRead(z, chunk, chunk/4, 3)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("chunk %d: %d bytes of %d, %v", chunk, len(out), len(want), err)
		}
	}
}

// TestGzparDamage: a damaged or cut stream fails wherever compress/gzip fails, and what is read
// before the error is a prefix of what compress/gzip reads.
func TestGzparDamage(t *testing.T) {
	text := gzInputs(t)["fastq"]
	z := gzEncoders(t)["std5"](text)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		d := append([]byte(nil), z...)
		switch i % 3 {
		case 0:
			d = d[:rng.IntN(len(d))]
		case 1:
			d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
		default:
			p := rng.IntN(len(d) - 8)
			copy(d[p:], []byte{0xff, 0, 0x13, 0x37, 0, 0, 0, 0xff})
		}
		checkLikeGzip(t, d, 3000, 1000)
	}
}

func checkLikeGzip(t *testing.T, z []byte, chunk, overlap int) {
	t.Helper()
	want, werr := stdGunzip(z)
	got, _, err := gzparRead(z, chunk, overlap, 3)
	if (err == nil) != (werr == nil) || !bytes.HasPrefix(want, got) || (err == nil && len(got) != len(want)) {
		t.Fatalf("%d bytes, %v; compress/gzip: %d bytes, %v", len(got), err, len(want), werr)
	}
}

func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		a := make([]byte, rng.IntN(5000))
		b := make([]byte, rng.IntN(5000))
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b)); got != want {
			t.Fatalf("%x, want %x", got, want)
		}
	}
}

// TestInflateBlockFlate decodes compress/flate's streams a block at a time, from the first bit.
func TestInflateBlockFlate(t *testing.T) {
	for in, text := range gzInputs(t) {
		for _, lvl := range []int{flate.HuffmanOnly, 0, 1, 6, 9} {
			var o bytes.Buffer
			w, _ := flate.NewWriter(&o, lvl)
			w.Write(text)
			w.Close()
			var f inflater
			out := []byte{}
			pos := 0
			for {
				end, o2, final, err := inflateBlock(&f, o.Bytes(), pos, out, false, 1<<30)
				if err != nil {
					t.Fatalf("%s level %d: %v at bit %d", in, lvl, err, pos)
				}
				out, pos = o2, end
				if final {
					break
				}
			}
			if !bytes.Equal(out, text) {
				t.Fatalf("%s level %d: differs", in, lvl)
			}
		}
	}
}

func FuzzGzpar(f *testing.F) {
	enc := gzEncoders(f)
	rng := rand.New(rand.NewPCG(5, 6))
	text := fastqText(rng, 40)
	for _, k := range []string{"std1", "std0", "std-2", "klauspost4"} {
		f.Add(enc[k](text), uint16(1000))
	}
	f.Add(append(enc["std5"]([]byte("ACGT")), enc["std5"](text)...), uint16(300))
	f.Fuzz(func(t *testing.T, z []byte, chunk uint16) {
		c := 64 + int(chunk)%8192
		checkLikeGzip(t, z, c, c/3+1)
	})
}

func BenchmarkReadGzip(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	text := fastqText(rng, 200000)
	var o bytes.Buffer
	w, _ := gzip.NewWriterLevel(&o, 6)
	w.Write(text)
	w.Close()
	z := o.Bytes()
	b.Run("compress-gzip", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			zr, _ := gzip.NewReader(bytes.NewReader(z))
			io.Copy(io.Discard, zr)
		}
	})
	b.Run("gzpar", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			r := newGzparReader(bufio.NewReader(bytes.NewReader(z)), runtime.GOMAXPROCS(0))
			io.Copy(io.Discard, r)
			r.Close()
		}
	})
}
