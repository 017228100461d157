package formats

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// bgzfMember returns data (at most 64 KiB) as one BGZF member.
func bgzfMember(t testing.TB, data []byte, level int) []byte {
	m, err := AppendBGZFMember(nil, data, level)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// bgzfBytes returns data as a BGZF stream: members of at most 65,280 bytes (bgzip's), then the
// empty member that marks the end.
func bgzfBytes(t testing.TB, data []byte, rng *rand.Rand) []byte {
	var out []byte
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(65280))
		out = append(out, bgzfMember(t, data[:n], []int{1, 6, 9}[rng.IntN(3)])...)
		data = data[n:]
	}
	return append(out, bgzfMember(t, nil, 6)...)
}

// readBGZF reads all of stream through bgzfReader on threads goroutines.
func readBGZF(stream []byte, threads int) ([]byte, error) {
	r := newBGZFReader(bufio.NewReaderSize(bytes.NewReader(stream), 64<<10), threads)
	defer r.Close()
	return io.ReadAll(r)
}

// readGzip reads all of stream through the gzip reader, as before BGZF was told apart.
func readGzip(stream []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(stream))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// TestBGZFReader: streams of every size, cut into members of every size, read on one to eight
// goroutines, give their bytes; a plain gzip stream after the members is read too; a damaged or
// cut member is an error after the members before it, never wrong bytes.
func TestBGZFReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := range 60 {
		data := make([]byte, rng.IntN(1<<20))
		for i := range data {
			data[i] = "ACGTN\n@+"[rng.IntN(8)]
		}
		stream := bgzfBytes(t, data, rng)
		if !isBGZF(stream) {
			t.Fatal("a BGZF stream not told apart")
		}
		threads := 1 + trial%8
		got, err := readBGZF(stream, threads)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("trial %d (%d bytes, %d threads): %d bytes back, %v", trial, len(data), threads, len(got), err)
		}
		// A plain gzip member after the BGZF ones.
		var plain bytes.Buffer
		zw := gzip.NewWriter(&plain)
		zw.Write([]byte("tail\n"))
		zw.Close()
		got, err = readBGZF(append(bytes.Clone(stream), plain.Bytes()...), threads)
		if err != nil || !bytes.Equal(got, append(bytes.Clone(data), "tail\n"...)) {
			t.Fatalf("trial %d with a gzip member after: %d bytes back, %v", trial, len(got), err)
		}
		if len(stream) < 100 {
			continue
		}
		// Damage: a byte changed, or the stream cut short.
		bad := bytes.Clone(stream)
		k := rng.IntN(len(bad))
		bad[k] ^= byte(1 + rng.IntN(255))
		want, werr := readGzip(bad)
		got, err = readBGZF(bad, threads)
		if werr != nil && err == nil {
			t.Fatalf("trial %d: byte %d changed: no error, gzip says %v", trial, k, werr)
		}
		if err == nil && !bytes.Equal(got, want) || !bytes.HasPrefix(data, got) && !bytes.HasPrefix(want, got) {
			t.Fatalf("trial %d: byte %d changed: %d bytes back (%v) that gzip does not give", trial, k, len(got), err)
		}
		cut := stream[:rng.IntN(len(stream)-1)]
		got, err = readBGZF(cut, threads)
		if err == nil || !bytes.HasPrefix(data, got) {
			t.Fatalf("trial %d: cut at %d of %d: %d bytes back, %v", trial, len(cut), len(stream), len(got), err)
		}
	}
}

// TestReaderBGZF: a FASTQ file as BGZF is read by Reader (through the parallel inflation) to the
// same records as the plain file and as ordinary gzip; a damaged member names the file and a
// record.
func TestReaderBGZF(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	plain := plainInput(rng, 3000, true)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	want, werr := readAll("in.fq", bytes.NewReader(plain), defaultBufSize)
	for _, in := range [][]byte{bgzfBytes(t, plain, rng), gz.Bytes()} {
		got, err := readAll("in.fq.gz", bytes.NewReader(in), defaultBufSize)
		if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
			t.Fatalf("got %d records, %v; want %d, %v", len(got), err, len(want), werr)
		}
	}
	bad := bgzfBytes(t, plain, rng)
	bad[len(bad)/2] ^= 0x55
	_, err := readAll("in.fq.gz", bytes.NewReader(bad), defaultBufSize)
	if err == nil || !strings.Contains(err.Error(), "in.fq.gz: record ") || !strings.Contains(err.Error(), "gzip") {
		t.Fatalf("a damaged member: %v", err)
	}
}

// FuzzBGZF: whatever follows a BGZF member, the parallel reading gives no bytes that gzip does
// not, and fails wherever gzip fails.
func FuzzBGZF(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 1))
	f.Add(bgzfBytes(f, []byte("@r\nACGT\n+\nIIII\n"), rng), uint8(2))
	f.Add(append(bgzfMember(f, []byte(">a\nAC\n"), 6), 0x1f, 0x8b), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, threads uint8) {
		if !isBGZF(in) {
			return
		}
		want, werr := readGzip(in)
		got, err := readBGZF(in, 1+int(threads%8))
		switch {
		case werr != nil && err == nil:
			t.Fatalf("no error where gzip says %v", werr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("%d bytes where gzip gives %d", len(got), len(want))
		case !bytes.HasPrefix(want, got):
			t.Fatalf("%d bytes that gzip does not give (%v; gzip %v)", len(got), err, werr)
		}
		if errors.Is(err, io.EOF) {
			t.Fatal("io.EOF as an error")
		}
	})
}

// BenchmarkReadBGZF: 64 MiB of FASTQ inflated from BGZF on every core ("bgzf") and as one
// gzip stream ("gzip", the same bytes compressed whole).
func BenchmarkReadBGZF(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	var plain []byte
	for len(plain) < 64<<20 {
		plain = append(plain, plainInput(rng, 1000, true)...)
	}
	stream := bgzfBytes(b, plain, rng)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, 6)
	zw.Write(plain)
	zw.Close()
	b.Run("bgzf", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if got, err := readBGZF(stream, runtime.GOMAXPROCS(0)); err != nil || len(got) != len(plain) {
				b.Fatal(err)
			}
		}
	})
	b.Run("gzip", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if got, err := readGzip(gz.Bytes()); err != nil || len(got) != len(plain) {
				b.Fatal(err)
			}
		}
	})
}
