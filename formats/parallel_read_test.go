package formats

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// smallParallelReads makes files of min bytes or more be read ahead in blocks of block bytes,
// depth at once, and large copies out of them run on goroutines, for the rest of the test.
func smallParallelReads(t *testing.T, block int, min int64, depth int) {
	ob, om, od, oc := parallelReadBlock, parallelReadMin, parallelReadDepth, parallelCopyMin
	parallelReadBlock, parallelReadMin, parallelReadDepth = block, min, func() int { return depth }
	parallelCopyMin = 1 + block/3 // copies from blocks on goroutines, and in line
	t.Cleanup(func() { parallelReadBlock, parallelReadMin, parallelReadDepth, parallelCopyMin = ob, om, od, oc })
}

// TestParallelReader: reads of every size give the file's bytes in order, with the file grown
// or cut short after it was opened, and Close stops it partway.
func TestParallelReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	for iter := range 40 {
		block := 1 + rng.IntN(5000)
		smallParallelReads(t, block, 0, 1+rng.IntN(6))
		data := make([]byte, rng.IntN(40000))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		want := data
		switch iter % 4 {
		case 1: // grown after opening: the new bytes are read too
			extra := bytes.Repeat([]byte{'x'}, rng.IntN(3000))
			want = append(append([]byte(nil), data...), extra...)
		case 2: // cut short after opening: the bytes left are read, then the end
			want = data[:rng.IntN(len(data)+1)]
		}
		r := newParallelReader(f, int64(len(data)), parallelReadDepth())
		switch iter % 4 {
		case 1:
			g, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			g.Write(want[len(data):])
			g.Close()
		case 2:
			if err := os.Truncate(path, int64(len(want))); err != nil {
				t.Fatal(err)
			}
		}
		var got []byte
		buf := make([]byte, 1+rng.IntN(9000))
		stopAt := -1
		if iter%4 == 3 {
			stopAt = rng.IntN(len(data) + 1)
		}
		for {
			if stopAt >= 0 && len(got) >= stopAt {
				break
			}
			n, err := r.Read(buf[:1+rng.IntN(len(buf))])
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("iter %d: %v", iter, err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatalf("iter %d: close: %v", iter, err)
		}
		if stopAt >= 0 {
			if !bytes.Equal(got, want[:len(got)]) {
				t.Fatalf("iter %d: the first %d bytes differ", iter, len(got))
			}
			continue
		}
		if iter%4 == 2 {
			// Blocks read before the cut may hold bytes past it; none after it, none wrong.
			if len(got) < len(want) || !bytes.Equal(got, data[:len(got)]) {
				t.Fatalf("iter %d: %d bytes read of a file cut to %d (of %d): wrong", iter, len(got), len(want), len(data))
			}
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("iter %d: %d bytes read, want %d (block %d)", iter, len(got), len(want), block)
		}
	}
}

// TestChunksParallelRead: a file read ahead on several goroutines gives the records of Reader.
func TestChunksParallelRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	smallParallelReads(t, 3000, 1, 4)
	dir := t.TempDir()
	for _, fastq := range []bool{false, true} {
		in := plainInput(rng, 3000, fastq)
		path := filepath.Join(dir, "in")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := readAll("in", bytes.NewReader(in), defaultBufSize)
		cr, err := OpenChunks(path, nil, 5000)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cr.file.(*parallelReader); !ok {
			t.Fatalf("fastq %v: the file is not read ahead", fastq)
		}
		var got []rec
		var scratch []byte
		for {
			c, err := cr.Next(nil)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ParseChunk(&c, &scratch, func(name, seq []byte) {
				got = append(got, rec{name: string(name), seq: string(seq)})
			}); !ok {
				t.Fatalf("fastq %v: a chunk was refused", fastq)
			}
		}
		cr.Close()
		if fmtRecs(got) != fmtRecs(want) {
			t.Errorf("fastq %v: records differ from Reader's", fastq)
		}
	}
}

// TestCountNewlines: counted in parts or not, the count is bytes.Count's.
func TestCountNewlines(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, depth := range []int{0, 3, 8} {
		smallParallelReads(t, 1000, 0, depth)
		for range 20 {
			b := make([]byte, rng.IntN(3<<20))
			for i := range b {
				b[i] = "ACGT\n@+"[rng.IntN(7)]
			}
			if got, want := countNewlines(b), bytes.Count(b, []byte{'\n'}); got != want {
				t.Fatalf("depth %d, %d bytes: %d newlines, want %d", depth, len(b), got, want)
			}
		}
	}
}
