package stages

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// bwzReads is a FASTQ read set and its .bwz compression, in several blocks.
func bwzReads(t *testing.T) (fq, z []byte) {
	t.Helper()
	rng := rand.New(rand.NewSource(41))
	var b bytes.Buffer
	for i := range 3000 {
		n := 50 + rng.Intn(100)
		s := make([]byte, n)
		for j := range s {
			s[j] = "ACGT"[rng.Intn(4)]
		}
		fmt.Fprintf(&b, "@read%d\n%s\n+\n%s\n", i, s, strings.Repeat("I", n))
	}
	return b.Bytes(), compressBytes(t, b.Bytes(), 100<<10, 2)
}

func readNames(t *testing.T, r *formats.Reader) []string {
	t.Helper()
	var names []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, string(rec.Name)+" "+string(rec.Seq))
	}
}

// TestBWZInput: the readers of package formats read a .bwz file (sapipe compress) as the file it
// holds, from a file, from a stream and a byte at a time.
func TestBWZInput(t *testing.T) {
	fq, z := bwzReads(t)
	want := readNames(t, must(formats.NewReader("plain", bytes.NewReader(fq))))
	path := filepath.Join(t.TempDir(), "reads.fq.bwz")
	os.WriteFile(path, z, 0o644)
	for name, open := range map[string]func() (*formats.Reader, error){
		"file":   func() (*formats.Reader, error) { return formats.Open(path) },
		"stream": func() (*formats.Reader, error) { return formats.NewReader("-", bytes.NewReader(z)) },
		"bytes": func() (*formats.Reader, error) {
			return formats.NewReader("-", iotest.OneByteReader(bytes.NewReader(z)))
		},
	} {
		r, err := open()
		if err != nil {
			t.Fatal(name, err)
		}
		if got := readNames(t, r); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d records, want %d, or they differ", name, len(got), len(want))
		}
		if err := r.Close(); err != nil {
			t.Error(name, err)
		}
	}

	// the raw records put together are the file's bytes
	rr, err := formats.OpenRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	for {
		rec, err := rr.Next()
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		raw.Write(rec.Raw)
	}
	raw.Write(rr.Trailer())
	rr.Close()
	if !bytes.Equal(raw.Bytes(), fq) {
		t.Error("RawReader: the records put together are not the file")
	}

	// chunks and patterns
	cr, err := formats.OpenChunks(path, nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var chunked []byte
	for {
		c, err := cr.Next(nil)
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		chunked = append(chunked, c.Data...)
	}
	cr.Close()
	if !bytes.Equal(chunked, fq) {
		t.Error("ChunkReader: the chunks put together are not the file")
	}
	pr, err := formats.OpenPatterns(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Format() != "fasta/fastq" {
		t.Errorf("patterns read as %s", pr.Format())
	}
	n := 0
	for {
		if _, err := pr.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
		n++
	}
	pr.Close()
	if n != len(want) {
		t.Errorf("PatternReader: %d patterns, want %d", n, len(want))
	}
}

// TestBWZInputDamage: damage to a .bwz input is an error that names the file, the compression and
// the block, however far the parser got; no record of a damaged block is returned.
func TestBWZInputDamage(t *testing.T) {
	fq, z := bwzReads(t)
	nrec := bytes.Count(fq, []byte("\n@")) + 1
	for name, bad := range map[string][]byte{
		"truncated": z[:len(z)*2/3],
		"flipped":   flip(z, len(z)/2),
		"trailer":   flip(z, len(z)-3),
	} {
		r, err := formats.NewReader("reads.fq.bwz", bytes.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err = r.Next()
			if err != nil {
				break
			}
			n++
		}
		r.Close()
		if err == io.EOF || !strings.HasPrefix(err.Error(), "reads.fq.bwz: ") || !strings.Contains(err.Error(), "bwz: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", name, err)
		}
		if name != "trailer" && !strings.Contains(err.Error(), "block ") {
			t.Errorf("%s: error %v names no block", name, err)
		}
		// Damage to the trailer is found once every block is decoded, which the parser may have
		// read by then or not; the run still ends with the error.
		if n >= nrec && name != "trailer" {
			t.Errorf("%s: all %d records read", name, n)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x10
	return c
}

// TestBWZOutput: formats.NewCompressor writes .bwz streams that decompress to what was written,
// the same bytes every time; a write error comes back from Close.
func TestBWZOutput(t *testing.T) {
	if k := formats.CompressionOf("dir/r.0007.fq.bwz"); k != "bwz" {
		t.Fatalf("CompressionOf: %q", k)
	}
	fq, _ := bwzReads(t)
	var outs [2]bytes.Buffer
	for i := range outs {
		w, err := formats.NewCompressor(&outs[i], "bwz")
		if err != nil {
			t.Fatal(err)
		}
		for p := fq; len(p) > 0; {
			k := min(len(p), 1+i*70000)
			if _, err := w.Write(p[:k]); err != nil {
				t.Fatal(err)
			}
			p = p[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
		t.Error("two writes of the same bytes differ")
	}
	var cli bytes.Buffer // what sapipe compress -5 writes
	if _, err := Compress(context.Background(), cpu.New(1), CompressOptions{BlockSize: 16 << 20, Threads: 1, Reads: true}, bytes.NewReader(fq), &cli); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outs[0].Bytes(), cli.Bytes()) {
		t.Error("not what sapipe compress -5 writes")
	}
	back, err := decompressBytes(outs[0].Bytes(), 2)
	if err != nil || !bytes.Equal(back, fq) {
		t.Errorf("round trip: %v", err)
	}
	// an empty stream
	var empty bytes.Buffer
	w, _ := formats.NewCompressor(&empty, "bwz")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if back, err := decompressBytes(empty.Bytes(), 1); err != nil || len(back) != 0 {
		t.Errorf("empty: %q, %v", back, err)
	}
	// the output fails
	w, _ = formats.NewCompressor(errWriter{}, "bwz")
	w.Write(fq)
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close after a failed write: %v", err)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
