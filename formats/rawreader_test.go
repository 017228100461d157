package formats

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/gzip"
)

type rawRec struct {
	raw, name string
	seqLen    int
}

// readAllRaw reads every record of rd through a RawReader.
func readAllRaw(name string, rd io.Reader) (recs []rawRec, trailer []byte, fastq bool, err error) {
	r, err := NewRawReader(name, rd)
	if err != nil {
		return nil, nil, false, err
	}
	defer r.Close()
	for {
		x, err := r.Next()
		if err == io.EOF {
			return recs, r.Trailer(), r.FASTQ(), nil
		}
		if err != nil {
			return recs, nil, r.FASTQ(), err
		}
		recs = append(recs, rawRec{string(x.Raw), string(x.Name), x.SeqLen})
		if len(recs) > 1<<20 {
			return recs, nil, false, fmt.Errorf("too many records")
		}
	}
}

// checkRaw compares RawReader with Reader on in (plain is in decompressed) and checks that the
// raw records put together give plain, and that each record alone reads as itself.
func checkRaw(t *testing.T, what string, in, plain []byte) {
	t.Helper()
	want, werr := readAll("f", bytes.NewReader(in), 4096)
	got, trailer, fastq, gerr := readAllRaw("f", iotest.HalfReader(bytes.NewReader(in)))
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: error %v; Reader says %v", what, gerr, werr)
	}
	if werr != nil {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records; Reader reads %d", what, len(got), len(want))
	}
	var all strings.Builder
	for i, g := range got {
		if g.name != want[i].name || g.seqLen != len(want[i].seq) {
			t.Fatalf("%s: record %d is %q with %d bases; Reader reads %q with %d", what, i+1, g.name, g.seqLen, want[i].name, len(want[i].seq))
		}
		all.WriteString(g.raw)
		alone, err := readAll("alone", strings.NewReader(g.raw), 4096)
		if !fastq && g.seqLen == 0 && len(got) > 1 {
			// A FASTA file of one empty record is refused, as MUMmer refuses it.
			if err == nil || !strings.Contains(err.Error(), "empty sequence") {
				t.Fatalf("%s: empty record %d alone: %v", what, i+1, err)
			}
			continue
		}
		if err != nil || len(alone) != 1 || alone[0] != want[i] {
			t.Fatalf("%s: record %d alone (%q) reads as %s %v; want %s", what, i+1, g.raw, fmtRecs(alone), err, fmtRecs(want[i:i+1]))
		}
	}
	all.Write(trailer)
	if all.String() != string(plain) {
		t.Fatalf("%s: records and trailer give %q; want %q", what, all.String(), plain)
	}
}

// messyInput writes n records in the corners of the grammar: text before the first '>', '>' in
// the middle of a line, descriptions holding '>', CRLF, empty records and names, wrapped and
// multi-line FASTQ, blank lines.
func messyInput(rng *rand.Rand, n int, fastq bool) []byte {
	var b bytes.Buffer
	eol := func() {
		if rng.IntN(5) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteByte('\n')
		}
	}
	seq := func(l int) string {
		s := make([]byte, l)
		for i := range s {
			s[i] = "ACGTacgtNn"[rng.IntN(10)]
		}
		return string(s)
	}
	if rng.IntN(3) == 0 {
		b.WriteString([]string{"\n\n", " \t\n", "\r\n"}[rng.IntN(3)])
	}
	if !fastq && rng.IntN(4) == 0 {
		b.WriteString("acgt junk\n")
	}
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		if rng.IntN(10) == 0 {
			name = ""
		}
		desc := []string{"", " desc", "\tx>y", " >z"}[rng.IntN(4)]
		l := []int{0, 1, 5, 60, 200}[rng.IntN(5)]
		s := seq(l)
		if fastq {
			b.WriteString("@" + name + desc)
			eol()
			w := max(1, []int{l + 1, 7, 60}[rng.IntN(3)])
			lines := 0
			for j := 0; j < l; j += w {
				b.WriteString(s[j:min(j+w, l)])
				eol()
				lines++
			}
			b.WriteString([]string{"+", "+" + name}[rng.IntN(2)])
			eol()
			q := strings.Repeat("I", l)
			qw := w
			if lines < 2 {
				qw = l + 1
			}
			for j := 0; j < l; j += max(qw, 1) {
				b.WriteString(q[j:min(j+qw, l)])
				eol()
			}
			if rng.IntN(6) == 0 {
				b.WriteString("\n \n")
			}
			continue
		}
		b.WriteString(">" + name + desc)
		eol()
		w := max(1, []int{l + 1, 10, 60}[rng.IntN(3)])
		for j := 0; j < l; j += w {
			b.WriteString(s[j:min(j+w, l)])
			if rng.IntN(8) == 0 && i < n-1 {
				goto next // the next '>' in the middle of the line
			}
			eol()
		}
		if rng.IntN(6) == 0 {
			b.WriteString(" \n\n")
		}
	next:
	}
	if rng.IntN(4) == 0 && b.Len() > 0 {
		t := b.Bytes()
		for len(t) > 0 && (t[len(t)-1] == '\n' || t[len(t)-1] == '\r') {
			t = t[:len(t)-1] // no final newline
		}
		b.Truncate(len(t))
	}
	return b.Bytes()
}

func TestRawReaderCases(t *testing.T) {
	for _, in := range []string{
		"", "\n\n  \t\r\n", "ACGT\nACGT\n", ">a\nACGT\n", ">a\nACGT", ">a\nAC\nGT\nA\n>b\nG\nG\n",
		">a x\r\nAC\r\nGT\r\n>b\r\nGG\r\n", ">chr1 Homo sapiens\tchromosome >1\nACGT\n", "> a\nAC\n>\nG\n",
		">a\n>b\nAC\n>c\n>d", ">a\n>b\n", ">x\nA\n>abc", "\n\r\n \n>a\nAC\n", "junk\n>a\nAC>b x\nGT>c",
		"@r1\nACGT\n+\nIIII\n", "@r1 d\nAC\nGT\n+r1\nII\nII\n\n\n@r2\n\n+\n\n@r3\nA\n+\nI", "  @r\n\n+\n",
		"@r1\nACGT\n+\n@III\n@r2\nA\n+\nI\n", "@r1\nAC\nGT\n+\nIIII\n \n",
		// errors
		"@r1\nACGT\n+\nIIII\n@r2\nACGT\n@r3\nAC\n+\nII\n", "@r1\nACGT\n", "@r1\nACGT\n+\nIIIII\n",
		"@r1\nACGT\n+\nII", "@r1\nACGT\n+\n", "\n\n>r1 desc\n\n", ">r1", "@r1\nA\n+\nI\nxyz\n",
		"@r1\nACGTA\n+\nIIII\n@r3\nA\n+\nI\n", "@r1\nAC\nGT\n+\nII\n@r2\n",
	} {
		checkRaw(t, fmt.Sprintf("%q", in), []byte(in), []byte(in))
	}
}

// TestRawReaderRandom: messy inputs, plain and in every compression, read whole and a byte at a
// time.
func TestRawReaderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		plain := messyInput(rng, rng.IntN(30), i%2 == 1)
		for _, kind := range kinds {
			checkRaw(t, fmt.Sprintf("case %d %s %q", i, kind, plain), compress(t, kind, plain), plain)
		}
		got, _, _, err1 := readAllRaw("f", iotest.OneByteReader(bytes.NewReader(plain)))
		want, _, _, err2 := readAllRaw("f", bytes.NewReader(plain))
		if fmt.Sprint(got, err1) != fmt.Sprint(want, err2) {
			t.Fatalf("case %d: a byte at a time differs", i)
		}
	}
}

// TestRawReaderBigRecord: records longer than the read buffer.
func TestRawReaderBigRecord(t *testing.T) {
	long := strings.Repeat("ACGT", defaultBufSize/2)
	name := strings.Repeat("n", defaultBufSize+3)
	for _, in := range []string{
		">" + name + " d\n" + long + "\n>b\nAC\n",
		">a\n" + long + long + ">b\n" + long,
		"@" + name + "\n" + long + "\n+\n" + strings.Repeat("I", len(long)) + "\n@b\nA\n+\nI\n",
	} {
		checkRaw(t, fmt.Sprintf("%d bytes", len(in)), []byte(in), []byte(in))
	}
}

func TestRawReaderReadError(t *testing.T) {
	in := []byte(">a\nACGT\n>b\nAC")
	_, _, _, werr := readAllRaw("f", io.MultiReader(bytes.NewReader(in), &errReader{}))
	if werr == nil || !strings.HasPrefix(werr.Error(), "f: record 2 (line 4): ") {
		t.Errorf("error %v", werr)
	}
	gz := compress(t, "gzip", in)
	_, _, _, err := readAllRaw("f", bytes.NewReader(gz[:len(gz)-6]))
	_, rerr := readAll("f", bytes.NewReader(gz[:len(gz)-6]), 4096)
	if err == nil || fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Errorf("truncated gzip: %v; Reader says %v", err, rerr)
	}
}

func TestCompressors(t *testing.T) {
	data := messyInput(rand.New(rand.NewPCG(1, 1)), 50, false)
	for _, c := range []struct{ name, kind string }{{"a.fa", ""}, {"a.fa.gz", "gzip"}, {"a.zst", "zstd"}, {"x.fq.xz", "xz"}, {"b.bz2", "bzip2"}, {"a.gz.txt", ""}} {
		if k := CompressionOf(c.name); k != c.kind {
			t.Errorf("CompressionOf(%s) = %q; want %q", c.name, k, c.kind)
		}
		var outs [2][]byte
		for i := range outs {
			var b bytes.Buffer
			w, err := NewCompressor(&b, c.kind)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data[:100])
			w.Write(data[100:])
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			outs[i] = b.Bytes()
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("%s: two runs differ", c.kind)
		}
		if compression(outs[0]) != c.kind {
			t.Errorf("%s: output is detected as %q", c.kind, compression(outs[0]))
		}
		checkRaw(t, c.name, outs[0], data)
	}
	if _, err := NewCompressor(io.Discard, "lz4"); err == nil {
		t.Error("lz4 accepted")
	}
}

// FuzzRawReader: RawReader agrees with Reader on every input (records, names, lengths, errors
// and their words), its records put together give the input, each record alone reads as itself,
// and so do groups of neighbouring records.
func FuzzRawReader(f *testing.F) {
	for _, s := range []string{
		">a desc\nACGT\nAC\n>b\n\n>c\r\nGG\r\n",
		"junk>a\nAC>b\nGT",
		"@r1\nACGT\n+\nIIII\n@r2\nAC\nGT\n+\nII\nII\n",
		"@r1\nACGT\n+\nIII\n",
		"\n\n @r\n\n+\n",
		"\x1f\x8b\x08garbage",
	} {
		f.Add([]byte(s))
	}
	zw := gzip.NewWriter(nil)
	var zb bytes.Buffer
	f.Fuzz(func(t *testing.T, in []byte) {
		if compression(in) != "" {
			// Compressed by the fuzzer: the raw bytes are not the input, so compare with
			// Reader only.
			want, werr := readAll("f", bytes.NewReader(in), 4096)
			got, _, _, gerr := readAllRaw("f", bytes.NewReader(in))
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || len(got) != len(want) {
				t.Fatalf("%v / %v, %d / %d records", gerr, werr, len(got), len(want))
			}
			return
		}
		checkRaw(t, "input", in, in)
		zb.Reset()
		zw.Reset(&zb)
		zw.Write(in)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		checkRaw(t, "gzip", zb.Bytes(), in)
		plain := in
		recs, _, fastq, err := readAllRaw("f", bytes.NewReader(plain))
		if err != nil {
			return
		}
		for i, size := 0, 1; i < len(recs); i, size = i+size, size%3+1 {
			group := recs[i:min(i+size, len(recs))]
			var b strings.Builder
			bases := 0
			for _, r := range group {
				b.WriteString(r.raw)
				bases += r.seqLen
			}
			got, err := readAll("g", strings.NewReader(b.String()), 64)
			if !fastq && len(group) == 1 && bases == 0 && len(recs) > 1 {
				continue // one empty FASTA record alone is refused
			}
			if err != nil || len(got) != len(group) {
				t.Fatalf("records %d..%d together: %d records, %v", i+1, i+len(group), len(got), err)
			}
		}
	})
}

func benchRaw(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, _ := NewRawReader("bench", bytes.NewReader(data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

func BenchmarkRawReaderFASTA(b *testing.B) { benchRaw(b, benchData(false)) }
func BenchmarkRawReaderFASTQ(b *testing.B) { benchRaw(b, benchData(true)) }
