package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readChunked reads every record of rd as sapipe mummer does: chunks of size bytes parsed by
// ParseChunk until one is refused, then Reader from that chunk on (with lookahead more chunks
// already read, as a pipeline holds some). It returns the records, the error that ended them and
// how many chunks ParseChunk accepted.
func readChunked(t testing.TB, name string, rd io.Reader, size, lookahead int) ([]rec, error, int) {
	cr, err := NewChunkReader(name, rd, size)
	if err != nil {
		return nil, err, 0
	}
	defer cr.Close()
	var k chunkTally
	for {
		c, err := cr.Next(nil)
		if errors.Is(err, io.EOF) {
			return k.out, nil, k.accepted
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if k.take(t, &c) {
			continue
		}
		pending := [][]byte{c.Data}
		for range lookahead {
			c, err := cr.Next(nil)
			if err != nil {
				break
			}
			pending = append(pending, c.Data)
		}
		r := cr.Resume(pending, k.nrec, k.nl)
		defer r.Close()
		out, err := readRest(r, k.out)
		return out, err, k.accepted
	}
}

// chunkTally is what readChunked and readBlocks keep of the chunks ParseChunk accepted.
type chunkTally struct {
	out                []rec
	scratch            []byte
	nrec, nl, accepted int
}

// take checks chunk c's newline count and parses it, and reports whether ParseChunk accepted it
// (its records then added).
func (k *chunkTally) take(t testing.TB, c *Chunk) bool {
	if got, want := c.Newlines(), bytes.Count(c.Data, []byte{'\n'}); !c.Odd && got != want {
		t.Fatalf("chunk of %d bytes: Newlines %d, has %d", len(c.Data), got, want)
	}
	var got []rec
	n, ok := ParseChunk(c, &k.scratch, func(name, seq []byte) { got = append(got, rec{string(name), string(seq)}) })
	if !ok {
		return false
	}
	if n != len(got) {
		t.Fatalf("ParseChunk: %d records, said %d", len(got), n)
	}
	k.accepted++
	k.out = append(k.out, got...)
	k.nrec += n
	k.nl += c.Newlines()
	return true
}

// readRest appends the records of r to out, up to its end or its error.
func readRest(r *Reader, out []rec) ([]rec, error) {
	for {
		x, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec{string(x.Name), string(x.Seq)})
	}
}

// plainInput writes n records of the common shapes: four-line FASTQ, or FASTA with one-line or
// wrapped sequences.
func plainInput(rng *rand.Rand, n int, fastq bool) []byte {
	var b bytes.Buffer
	for i := range n {
		l := 1 + rng.IntN(80)
		s := make([]byte, l)
		for j := range s {
			s[j] = "ACGTN"[rng.IntN(5)]
		}
		if fastq {
			fmt.Fprintf(&b, "@read%d/1 x\n%s\n+\n%s\n", i, s, strings.Repeat("F", l))
			continue
		}
		fmt.Fprintf(&b, ">read%d x\n", i)
		w := []int{l, 60, 10}[rng.IntN(3)]
		for j := 0; j < l; j += w {
			b.Write(s[j:min(j+w, l)])
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// damage changes a few bytes of in: deletes a run, or puts a '@', '+', '>' or newline somewhere.
func damage(rng *rand.Rand, in []byte) []byte {
	out := append([]byte(nil), in...)
	for range 1 + rng.IntN(2) {
		if len(out) == 0 {
			break
		}
		i := rng.IntN(len(out))
		switch rng.IntN(3) {
		case 0:
			out = append(out[:i], out[min(i+1+rng.IntN(5), len(out)):]...)
		default:
			out[i] = "@+>\n "[rng.IntN(5)]
		}
	}
	return out
}

// chunkInputs returns chunkCases and rounds (short: in -short) inputs more, FASTA and FASTQ in
// turn: messy, plain, and plain damaged.
func chunkInputs(rng *rand.Rand, rounds, short int) [][]byte {
	var inputs [][]byte
	for _, c := range chunkCases() {
		inputs = append(inputs, []byte(c))
	}
	if testing.Short() {
		rounds = short
	}
	for i := range rounds {
		fastq := i%2 == 1
		var in []byte
		switch i % 6 {
		case 0, 1:
			in = messyInput(rng, rng.IntN(20), fastq)
		case 2, 3:
			in = plainInput(rng, 1+rng.IntN(30), fastq)
		default:
			in = damage(rng, plainInput(rng, 1+rng.IntN(30), fastq))
		}
		inputs = append(inputs, in)
	}
	return inputs
}

func chunkCases() []string {
	return []string{
		"", "\n\n  \t\r\n", "ACGT\nACGT\n", ">a\nACGT\n", ">a\nACGT", ">a\nAC\nGT\nA\n>b\nG\nG\n",
		">a x\r\nAC\r\nGT\r\n>b\r\nGG\r\n", ">chr1 Homo sapiens\tchromosome >1\nACGT\n", "> a\nAC\n>\nG\n",
		">a\n>b\nAC\n>c\n>d", ">a\n>b\n", ">x\nA\n>abc", "\n\r\n \n>a\nAC\n", "junk\n>a\nAC>b x\nGT>c",
		"@r1\nACGT\n+\nIIII\n", "@r1 d\nAC\nGT\n+r1\nII\nII\n\n\n@r2\n\n+\n\n@r3\nA\n+\nI", "  @r\n\n+\n",
		"@r1\nACGT\n+\n@III\n@r2\nA\n+\nI\n", "@r1\nAC\nGT\n+\nIIII\n \n", "\n\n@a\nAC\n+\nII\n@b\nG\n+\nI\n",
		"@r1\nACGT\n+\nIIII\n@r2\nACGT\n@r3\nAC\n+\nII\n", "@r1\nACGT\n", "@r1\nACGT\n+\nIIIII\n",
		"@r1\nACGT\n+\nII", "@r1\nACGT\n+\n", "\n\n>r1 desc\n\n", ">r1", "@r1\nA\n+\nI\nxyz\n",
		"@r1\nACGTA\n+\nIIII\n@r3\nA\n+\nI\n", "@r1\nAC\nGT\n+\nII\n@r2\n", "@a\nA C\n+\nI I\n@b\nAC\n+\nII\n",
		"@a\n+A\n+\nI\n", "@a\nAC\n+\nII\n@b\n@C\n+\nII\n", "@a\nAC\n+\nI I\n", "> \n\n", ">a\n\n>b\n\n",
	}
}

// TestChunksMatchReader: records and errors read in chunks of every size, parsed by ParseChunk
// with Reader taking over where it refuses, are Reader's, word for word, on corner cases, messy
// and plain inputs, damaged inputs and inputs broken off by a read error.
func TestChunksMatchReader(t *testing.T) {
	inputs := chunkInputs(rand.New(rand.NewPCG(3, 9)), 150, 40)
	for i, in := range inputs {
		want, werr := readAll("in.fq", bytes.NewReader(in), defaultBufSize)
		for size := 1; size <= len(in)+1; size += 1 + size/12 {
			got, err, _ := readChunked(t, "in.fq", bytes.NewReader(in), size, size%3)
			if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
				t.Fatalf("input %d %q, chunks of %d:\ngot  %s %v\nwant %s %v", i, in, size, fmtRecs(got), err, fmtRecs(want), werr)
			}
		}
		for cut := 0; cut <= len(in); cut += 1 + len(in)/7 {
			fail := func() io.Reader { return &errReader{in[:cut], errors.New("disk on fire")} }
			want, werr := readAll("in.fq", fail(), defaultBufSize)
			for _, size := range []int{1, 5, 40, 1 << 12} {
				got, err, _ := readChunked(t, "in.fq", fail(), size, 1)
				if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
					t.Fatalf("input %d %q cut at %d, chunks of %d:\ngot  %s %v\nwant %s %v", i, in[:cut], cut, size, fmtRecs(got), err, fmtRecs(want), werr)
				}
			}
		}
	}
}

// TestChunksUsed: plain inputs are parsed in chunks, not left to Reader.
func TestChunksUsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, fastq := range []bool{false, true} {
		in := plainInput(rng, 2000, fastq)
		if !fastq {
			in = append([]byte("\n\n"), in...)
		}
		_, err, accepted := readChunked(t, "in", bytes.NewReader(in), 1000, 0)
		if err != nil || accepted < len(in)/1000-1 {
			t.Errorf("fastq %v: %d chunks of %d bytes accepted, error %v", fastq, accepted, len(in), err)
		}
	}
}

// TestChunksCompressed: compressed inputs are cut like plain ones.
func TestChunksCompressed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, fastq := range []bool{false, true} {
		plain := plainInput(rng, 300, fastq)
		want, _ := readAll("in", bytes.NewReader(plain), defaultBufSize)
		for _, kind := range kinds {
			got, err, _ := readChunked(t, "in", bytes.NewReader(compress(t, kind, plain)), 700, 1)
			if err != nil || fmtRecs(got) != fmtRecs(want) {
				t.Errorf("%s, fastq %v: %v", kind, fastq, err)
			}
		}
	}
}

// FuzzChunks: whatever the input and the chunk size, chunks give Reader's records and error.
func FuzzChunks(f *testing.F) {
	for _, c := range chunkCases() {
		f.Add([]byte(c), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint16) {
		want, werr := readAll("in", bytes.NewReader(in), defaultBufSize)
		got, err, _ := readChunked(t, "in", bytes.NewReader(in), int(size%2048), int(size%3))
		if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
			t.Fatalf("chunks of %d:\ngot  %s %v\nwant %s %v", size%2048, fmtRecs(got), err, fmtRecs(want), werr)
		}
	})
}

// BenchmarkParseChunkFASTQ: ParseChunk over 1 MiB chunks of 150-base reads.
func BenchmarkParseChunkFASTQ(b *testing.B) {
	data := benchData(true)
	cr, err := NewChunkReader("bench", bytes.NewReader(data), 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	var chunks []Chunk
	for {
		c, err := cr.Next(nil)
		if err != nil {
			break
		}
		chunks = append(chunks, c)
	}
	b.SetBytes(int64(len(data)))
	var scratch []byte
	for b.Loop() {
		for i := range chunks {
			if _, ok := ParseChunk(&chunks[i], &scratch, func(name, seq []byte) {}); !ok {
				b.Fatal("chunk refused")
			}
		}
	}
}

// BenchmarkChunkReaderFile: ChunkReader alone over a plain FASTQ file, in chunks of 8 MiB (a GPU
// run's), as sapipe mummer's one reading goroutine cuts them: the file SAPIPE_BENCH_FASTQ names,
// or 300 MiB of 150-base reads written to a temporary file (read ahead in parallel from 256 MiB).
func BenchmarkChunkReaderFile(b *testing.B) {
	path := os.Getenv("SAPIPE_BENCH_FASTQ")
	if path == "" {
		d := benchData(true)
		path = filepath.Join(b.TempDir(), "reads.fq")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		for written := 0; written < 300<<20; written += len(d) {
			if _, err := f.Write(d); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	buf := make([]byte, 0, 8<<20)
	for b.Loop() {
		cr, err := OpenChunks(path, nil, 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		for {
			c, err := cr.Next(buf)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			buf = c.Data[:0]
		}
		cr.Close()
	}
}
