package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// naiveSA sorts the suffixes by comparison: the oracle of these tests.
func naiveSA(text []byte) []int32 {
	sa := make([]int32, len(text))
	for i := range sa {
		sa[i] = int32(i)
	}
	slices.SortFunc(sa, func(a, b int32) int { return bytes.Compare(text[a:], text[b:]) })
	return sa
}

// countingBackend records the calls that reach the backend.
type countingBackend struct {
	kernels.Backend
	mu    sync.Mutex
	calls []int // blocks per BWT call
	fail  bool
}

func (c *countingBackend) BWT(src, dst [][]byte, primary []int) error {
	c.mu.Lock()
	c.calls = append(c.calls, len(src))
	c.mu.Unlock()
	if c.fail {
		return errors.New("device lost")
	}
	return c.Backend.BWT(src, dst, primary)
}

func randomBytes(rng *rand.Rand, n, sigma int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(sigma))
	}
	return b
}

func bwtStream(t testing.TB, b kernels.Backend, opts BWTOptions, in io.Reader) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := BWT(context.Background(), b, opts, "in", in, &out); err != nil {
		t.Fatalf("BWT: %v", err)
	}
	return out.Bytes()
}

// checkBlocks reads the stream and compares every block with the transform of the matching
// slice of text under the naive suffix array.
func checkBlocks(t *testing.T, stream, text []byte, blockSize int) {
	t.Helper()
	r := formats.NewBWTReader("s", bytes.NewReader(stream))
	off := 0
	for {
		b, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n := min(blockSize, len(text)-off)
		part := text[off : off+n]
		want := make([]byte, n)
		p := kernels.BWTFromSA(part, naiveSA(part), want)
		if !bytes.Equal(b.Data, want) || b.Primary != p || b.CRC != crc32.Checksum(part, formats.Castagnoli) {
			t.Fatalf("block %d (bytes %d..%d): transform, primary or CRC differ from the oracle", b.Number, off, off+n)
		}
		off += n
	}
	if off != len(text) {
		t.Fatalf("the blocks hold %d bytes of %d", off, len(text))
	}
}

func unbwt(stream []byte, threads int) ([]byte, error) {
	var out bytes.Buffer
	err := UnBWT(context.Background(), UnBWTOptions{Threads: threads}, "in.bwt", bytes.NewReader(stream), &out)
	return out.Bytes(), err
}

func TestBWTRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type tc struct {
		name string
		text []byte
	}
	cases := []tc{{"empty", nil}, {"one byte", []byte{'x'}}, {"zero byte", []byte{0}}}
	for _, n := range []int{2, 17, 1000, 4096, 5000} {
		cases = append(cases,
			tc{fmt.Sprintf("random %d", n), randomBytes(rng, n, 256)},
			tc{fmt.Sprintf("dna %d", n), randomBytes(rng, n, 4)},
			tc{fmt.Sprintf("all one byte %d", n), bytes.Repeat([]byte{0xff}, n)},
			tc{fmt.Sprintf("periodic %d", n), bytes.Repeat([]byte("abaab"), n)[:n]})
	}
	for _, c := range cases {
		n := len(c.text)
		// Block sizes at the edges: 1, dividing n exactly, one off either way, n, beyond n.
		sizes := []int{1, 7, max(n, 1), n + 1, 1 << 20}
		if n > 2 {
			sizes = append(sizes, n/2, n/2+1, n-1)
		}
		if n > 1000 {
			sizes = sizes[1:] // one block per byte: correct but slow to check
		}
		for _, bs := range sizes {
			for _, per := range []int{0, 1, 3} {
				be := &countingBackend{Backend: cpu.New(2)}
				stream := bwtStream(t, be, BWTOptions{BlockSize: bs, Threads: 2, BlocksPerCall: per}, bytes.NewReader(c.text))
				if per == 0 {
					checkBlocks(t, stream, c.text, bs)
				}
				for _, th := range []int{1, 3} {
					got, err := unbwt(stream, th)
					if err != nil || !bytes.Equal(got, c.text) {
						t.Fatalf("%s, block size %d, %d per call, %d threads: round trip gives %d bytes, %v", c.name, bs, per, th, len(got), err)
					}
				}
				for _, k := range be.calls {
					if per > 0 && k > per {
						t.Fatalf("%s: a call of %d blocks, want at most %d", c.name, k, per)
					}
				}
			}
		}
	}
}

// TestBWTBlocksPerCall: several blocks reach the backend in one call, and a slow reader (one
// byte at a time) gives the stream of a fast one.
func TestBWTBlocksPerCall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	text := randomBytes(rng, 10000, 4)
	be := &countingBackend{Backend: cpu.New(2)}
	want := bwtStream(t, be, BWTOptions{BlockSize: 100, Threads: 2}, bytes.NewReader(text))
	if len(be.calls) != 1 || be.calls[0] != 100 {
		t.Errorf("calls %v, want one call of 100 blocks", be.calls)
	}
	be.calls = nil
	got := bwtStream(t, be, BWTOptions{BlockSize: 100, Threads: 2, BlocksPerCall: 8}, iotest.OneByteReader(bytes.NewReader(text)))
	if !bytes.Equal(got, want) {
		t.Errorf("one byte at a time: the stream differs")
	}
	if len(be.calls) != 13 || be.calls[0] != 8 || be.calls[12] != 4 {
		t.Errorf("calls %v, want 12 of 8 blocks and one of 4", be.calls)
	}
	for _, c := range []struct{ bs, threads, want int }{
		{8 << 20, 2, 4}, {8 << 20, 16, 16}, {64 << 20, 2, 2}, {200 << 20, 2, 1}, {formats.MaxBWTBlock, 8, 1}, {1, 1, 1024}, {1 << 10, 1, 1024}, {1 << 10, 2000, 2000},
	} {
		o := BWTOptions{BlockSize: c.bs, Threads: c.threads}
		if got := o.blocksPerCall(); got != c.want {
			t.Errorf("block size %d, %d threads: %d blocks per call, want %d", c.bs, c.threads, got, c.want)
		}
	}
}

func TestBWTErrors(t *testing.T) {
	be := &countingBackend{Backend: cpu.New(1), fail: true}
	err := BWT(context.Background(), be, BWTOptions{BlockSize: 10, Threads: 1, BlocksPerCall: 2}, "in", strings.NewReader(strings.Repeat("x", 35)), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in: BWT of blocks 1..2 on cpu: device lost") {
		t.Errorf("backend failure: %v", err)
	}
	for _, bs := range []int{0, -1, formats.MaxBWTBlock + 1} {
		if err := BWT(context.Background(), cpu.New(1), BWTOptions{BlockSize: bs}, "in", strings.NewReader("x"), io.Discard); err == nil {
			t.Errorf("block size %d accepted", bs)
		}
	}
	rerr := errors.New("disk on fire")
	err = BWT(context.Background(), cpu.New(1), BWTOptions{BlockSize: 10}, "in", iotest.TimeoutReader(iotest.ErrReader(rerr)), io.Discard)
	if !errors.Is(err, rerr) || !strings.Contains(err.Error(), "reading in") {
		t.Errorf("read error: %v", err)
	}
}

// TestBWTLargeBlockSmallInput: the largest block size on a small input allocates for the input,
// not for the block size, on both sides.
func TestBWTLargeBlockSmallInput(t *testing.T) {
	text := []byte("a small input under a block size of 2 GiB")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stream := bwtStream(t, cpu.New(1), BWTOptions{BlockSize: formats.MaxBWTBlock, Threads: 1}, bytes.NewReader(text))
	got, err := unbwt(stream, 2)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, text) {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d bytes", a)
	}
}

// TestUnBWTDamage: a changed byte in a transform is an error naming the input and the block,
// whatever the byte; nothing panics.
func TestUnBWTDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	text := randomBytes(rng, 3000, 3)
	stream := bwtStream(t, cpu.New(2), BWTOptions{BlockSize: 1000, Threads: 2}, bytes.NewReader(text))
	blockStart := func(k int) int { return 16 + k*(16+1000) + 16 } // data of block k (0-based)
	for range 300 {
		k := rng.IntN(3)
		i := blockStart(k) + rng.IntN(1000)
		d := bytes.Clone(stream)
		d[i] = byte(rng.IntN(256))
		if d[i] == stream[i] {
			continue
		}
		_, err := unbwt(d, 2)
		want := fmt.Sprintf("in.bwt: block %d (at byte %d): damaged BWT stream: ", k+1, blockStart(k)-16)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, formats.ErrDamaged) {
			t.Fatalf("byte %d changed: %v, want an error starting %q", i, err, want)
		}
	}
	// Swapping two bytes of a transform keeps its letter counts: the inverse may succeed, and the
	// CRC must catch it.
	d := bytes.Clone(stream)
	i := blockStart(1)
	for j := i + 1; j < i+1000; j++ {
		if d[j] != d[i] {
			d[i], d[j] = d[j], d[i]
			break
		}
	}
	if _, err := unbwt(d, 1); err == nil || !strings.HasPrefix(err.Error(), "in.bwt: block 2 ") {
		t.Errorf("swapped bytes: %v", err)
	}
	// A foreign input.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	if _, err := unbwt(gz.Bytes(), 1); !errors.Is(err, formats.ErrNotBWTStream) {
		t.Errorf("gzip input: %v", err)
	}
}

// TestBWTRealData round-trips real genomes and checks the blocks against BWTFromSA over the
// CPU suffix array.
func TestBWTRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, name := range []string{"../../shared/data/ecoli.fa", "../../shared/data/dm1pct.fa"} {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Skipf("no real data: %v", err)
		}
		text = text[:min(len(text), 3<<20)]
		bs := 1 << 20
		stream := bwtStream(t, cpu.New(2), BWTOptions{BlockSize: bs, Threads: 2}, bytes.NewReader(text))
		got, err := unbwt(stream, 2)
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("%s: round trip: %v", name, err)
		}
		r := formats.NewBWTReader(name, bytes.NewReader(stream))
		for off := 0; off < len(text); off += bs {
			b, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			part := text[off:min(off+bs, len(text))]
			sa := make([]int32, len(part))
			cpu.SuffixArray(part, sa)
			want := make([]byte, len(part))
			if p := kernels.BWTFromSA(part, sa, want); p != b.Primary || !bytes.Equal(want, b.Data) {
				t.Fatalf("%s block %d differs from BWTFromSA", name, b.Number)
			}
		}
	}
}

func BenchmarkBWT(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := randomBytes(rng, 8<<20, 4)
	be := cpu.New(runtime.NumCPU())
	b.SetBytes(int64(len(text)))
	for range b.N {
		if err := BWT(context.Background(), be, BWTOptions{BlockSize: 1 << 20, Threads: runtime.NumCPU()}, "in", bytes.NewReader(text), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnBWT(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := randomBytes(rng, 8<<20, 4)
	var stream bytes.Buffer
	if err := BWT(context.Background(), cpu.New(runtime.NumCPU()), BWTOptions{BlockSize: 1 << 20, Threads: runtime.NumCPU()}, "in", bytes.NewReader(text), &stream); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for range b.N {
		if err := UnBWT(context.Background(), UnBWTOptions{Threads: runtime.NumCPU()}, "in", bytes.NewReader(stream.Bytes()), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
