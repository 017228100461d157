package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	dbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

type rec struct{ name, seq string }

// readAll reads every record of data through a reader with a read buffer of size bytes.
func readAll(name string, rd io.Reader, size int) ([]rec, error) {
	r, err := newReaderSize(name, rd, size)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []rec
	for {
		x, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec{string(x.Name), string(x.Seq)})
		if len(out) > 1<<20 {
			return out, errors.New("too many records")
		}
	}
}

func fmtRecs(rs []rec) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "[%q %q]", r.name, r.seq)
	}
	return b.String()
}

var bufSizes = []int{1, 2, 3, 7, 16, 64, defaultBufSize}

func TestRecords(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []rec
	}{
		{"empty", "", nil},
		{"blank", "\n\n  \t\r\n", nil},
		{"no header", "ACGT\nACGT\n", nil},
		{"one", ">a\nACGT\n", []rec{{"a", "ACGT"}}},
		{"no final newline", ">a\nACGT", []rec{{"a", "ACGT"}}},
		{"multi", ">a\nACGT\n>b\nGG\n>c\nT\n", []rec{{"a", "ACGT"}, {"b", "GG"}, {"c", "T"}}},
		{"wrapped", ">a\nAC\nGT\nA\n>b\nG\nG\n", []rec{{"a", "ACGTA"}, {"b", "GG"}}},
		{"crlf", ">a x\r\nAC\r\nGT\r\n>b\r\nGG\r\n", []rec{{"a", "ACGT"}, {"b", "GG"}}},
		{"lowercase", ">a\nacgtNnAC\n", []rec{{"a", "acgtNnAC"}}},
		{"iupac", ">a\nRYKMSWBDHVN-*\n", []rec{{"a", "RYKMSWBDHVN-*"}}},
		{"description", ">chr1 Homo sapiens\tchromosome >1\nACGT\n", []rec{{"chr1", "ACGT"}}},
		{"tab name", ">a\tb c\nAC\n", []rec{{"a", "AC"}}},
		{"empty name", "> a\nAC\n>\nG\n", []rec{{"", "AC"}, {"", "G"}}},
		{"empty records", ">a\n>b\nAC\n>c\n>d", []rec{{"a", ""}, {"b", "AC"}, {"c", ""}, {"d", ""}}},
		{"only headers", ">a\n>b\n", []rec{{"a", ""}, {"b", ""}}},
		{"header at eof", ">x\nA\n>abc", []rec{{"x", "A"}, {"abc", ""}}},
		{"leading blank lines", "\n\r\n \n>a\nAC\n", []rec{{"a", "AC"}}},
		{"spaces in sequence", ">a\nA C\tG\vT\fA\r\n  \n", []rec{{"a", "ACGTA"}}},
		{"blank lines between", ">a\nAC\n\n\n>b\nG\n\n", []rec{{"a", "AC"}, {"b", "G"}}},
		// MUMmer: text before the first '>' belongs to the first record.
		{"text before header", "junk\n>a\nACGT\n>b\nC\n", []rec{{"a", "junkACGT"}, {"b", "C"}}},
		// MUMmer: '>' anywhere outside a header starts a record.
		{"> inside line", ">a\nAC>b x\nGT\n", []rec{{"a", "AC"}, {"b", "GT"}}},
		{"> in text before", "AC>GT\nACGT\n", []rec{{"GT", "ACACGT"}}},
		{"odd bytes kept", ">a\nAC12@+x\x01\xff\n", []rec{{"a", "AC12@+x\x01\xff"}}},
		{"fastq", "@r1 desc\nACGT\n+\nIIII\n@r2\nGG\n+r2\nI#\n", []rec{{"r1", "ACGT"}, {"r2", "GG"}}},
		{"fastq crlf", "@r1\r\nACGT\r\n+\r\nIIII\r\n", []rec{{"r1", "ACGT"}}},
		{"fastq no final newline", "@r1\nACGT\n+\nIIII", []rec{{"r1", "ACGT"}}},
		{"fastq quality starting with @ and +", "@r1\nACGT\n+\n@@II\n@r2\nA\n+\n+\n", []rec{{"r1", "ACGT"}, {"r2", "A"}}},
		{"fastq multi-line", "@r1\nAC\nGT\nA\n+\nII\n@I\nI\n@r2\nG\n+\nI\n", []rec{{"r1", "ACGTA"}, {"r2", "G"}}},
		{"fastq differently wrapped", "@r1\nACGT\n+\nII\nII\n@r2\nAC\nGT\n+\nIIII\n", []rec{{"r1", "ACGT"}, {"r2", "ACGT"}}},
		{"fastq empty record", "@r1\n+\n@r2\nA\n+\nI\n", []rec{{"r1", ""}, {"r2", "A"}}},
		{"fastq blank lines", "\n\n@r1\nA\n+\nI\n\n\n@r2\nC\n+\nI\n\n", []rec{{"r1", "A"}, {"r2", "C"}}},
		{"fastq indented header", "  @r1\nA\n+\nI\n \t@r2\nC\n+\nI\n", []rec{{"r1", "A"}, {"r2", "C"}}},
		{"fastq lowercase", "@r\nacgtn\n+\nIIIII\n", []rec{{"r", "acgtn"}}},
	} {
		for _, size := range bufSizes {
			got, err := readAll("t.fa", strings.NewReader(c.in), size)
			if err != nil || fmtRecs(got) != fmtRecs(c.want) {
				t.Errorf("%s (buffer %d): got %s, %v; want %s", c.name, size, fmtRecs(got), err, fmtRecs(c.want))
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name, in, msg string
	}{
		{"missing plus", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n@r3\nAC\n+\nII\n", "reads.fq: record 2 (line 7): missing '+' line (header at line 5)"},
		{"no plus at eof", "@r1\nACGT\n", "reads.fq: record 1 (line 2): truncated record (header at line 1): no '+' line"},
		{"short quality", "@r1\nACGT\n+\nIIII\n@r2\nACGTA\n+\nIIII\n@r3\nA\n+\nI\n", "reads.fq: record 2 (line 8): quality length 4 != sequence length 5"},
		{"long quality", "@r1\nACGT\n+\nIIIII\n", "reads.fq: record 1 (line 4): quality length 5 != sequence length 4"},
		{"truncated quality", "@r1\nACGT\n+\nII", "reads.fq: record 1 (line 4): truncated record: quality length 2 != sequence length 4"},
		{"truncated after plus", "@r1\nACGT\n+\n", "reads.fq: record 1 (line 3): truncated record: quality length 0 != sequence length 4"},
		{"one empty record", "\n\n>r1 desc\n\n", "reads.fq: record 1 (line 3): empty sequence in multiple fasta file"},
		{"one empty record at eof", ">r1", "reads.fq: record 1 (line 1): empty sequence in multiple fasta file"},
		{"not a record", "@r1\nA\n+\nI\nxyz\n", "reads.fq: record 2 (line 5): expected '@' at the start of a FASTQ record, found 'x'"},
	} {
		for _, size := range bufSizes {
			_, err := readAll("reads.fq", strings.NewReader(c.in), size)
			if err == nil || err.Error() != c.msg {
				t.Errorf("%s (buffer %d): error %v; want %s", c.name, size, err, c.msg)
			}
		}
	}
}

func TestSticky(t *testing.T) {
	r, _ := NewReader("x.fq", strings.NewReader("@a\nAC\n+\nI\n"))
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Errorf("errors %v, %v", err1, err2)
	}
	r, _ = NewReader("x.fa", strings.NewReader(">a\nAC\n"))
	r.Next()
	for range 3 {
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("after the end: %v", err)
		}
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if _, err := r.Next(); err == nil || err == io.EOF {
		t.Errorf("after Close: %v", err)
	}
}

// TestBufferReuse: Name and Seq are overwritten, not reallocated, by the following records.
func TestBufferReuse(t *testing.T) {
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, ">r%d\nACGTACGT\nAC\n", i)
	}
	r, _ := NewReader("x", strings.NewReader(in.String()))
	allocs := testing.AllocsPerRun(1, func() {
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	})
	if allocs > 10 {
		t.Errorf("%v allocations for 100 records", allocs)
	}
}

func compress(t testing.TB, kind string, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case "bgzf":
		return bgzfBytes(t, data, rand.New(rand.NewPCG(uint64(len(data)), 7)))
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zstd":
		w, err = zstd.NewWriter(&b)
	case "bzip2":
		w, err = dbzip2.NewWriter(&b, nil)
	case "xz":
		w, err = xz.NewWriter(&b)
	default:
		return data
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var kinds = []string{"plain", "gzip", "bgzf", "zstd", "bzip2", "xz"}

func testData() (fa, fq []byte, want []rec) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a, q bytes.Buffer
	for i := range 200 {
		n := rng.IntN(500)
		s := make([]byte, n)
		for j := range s {
			s[j] = "ACGTacgtN"[rng.IntN(9)]
		}
		name := fmt.Sprintf("read%d", i)
		want = append(want, rec{name, string(s)})
		fmt.Fprintf(&a, ">%s some description\n", name)
		for j := 0; j < n; j += 60 {
			a.Write(s[j:min(j+60, n)])
			a.WriteByte('\n')
		}
		fmt.Fprintf(&q, "@%s\n%s\n+\n%s\n", name, s, strings.Repeat("F", n))
	}
	return a.Bytes(), q.Bytes(), want
}

// TestCompression: every compression gives the records of the plain file, from a file, from a
// non-seekable stream and through a reader that returns one byte at a time.
func TestCompression(t *testing.T) {
	fa, fq, want := testData()
	dir := t.TempDir()
	for _, kind := range kinds {
		for format, data := range map[string][]byte{"fa": fa, "fq": fq} {
			z := compress(t, kind, data)
			if kind != "plain" && bytes.Equal(z, data) {
				t.Fatal("not compressed")
			}
			path := filepath.Join(dir, kind+"."+format+".noext")
			os.WriteFile(path, z, 0o644)
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []rec
			for {
				x, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s %s: %v", kind, format, err)
				}
				got = append(got, rec{string(x.Name), string(x.Seq)})
			}
			if r.Name() != path {
				t.Errorf("Name() = %q", r.Name())
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
			if fmtRecs(got) != fmtRecs(want) {
				t.Errorf("%s %s: records differ", kind, format)
			}
			for _, rd := range []io.Reader{struct{ io.Reader }{bytes.NewReader(z)}, iotest.OneByteReader(bytes.NewReader(z)), iotest.HalfReader(bytes.NewReader(z))} {
				got, err := readAll("-", rd, 1000)
				if err != nil || fmtRecs(got) != fmtRecs(want) {
					t.Errorf("%s %s stream %T: records differ, %v", kind, format, rd, err)
				}
			}
		}
	}
	// Concatenated gzip members (bgzip, cat a.gz b.gz).
	z := append(compress(t, "gzip", fa[:len(fa)/2]), compress(t, "gzip", fa[len(fa)/2:])...)
	if got, err := readAll("x", bytes.NewReader(z), 4096); err != nil || fmtRecs(got) != fmtRecs(want) {
		t.Errorf("multi-member gzip: %v", err)
	}
}

func TestCompressionErrors(t *testing.T) {
	fa, _, _ := testData()
	for _, kind := range kinds[1:] {
		z := compress(t, kind, fa)
		for what, bad := range map[string][]byte{
			"truncated": z[:len(z)*2/3],
			"corrupt":   append(append([]byte(nil), z[:len(z)-12]...), bytes.Repeat([]byte{0x55}, 12)...),
		} {
			_, err := readAll("reads.fa.z", bytes.NewReader(bad), defaultBufSize)
			if err == nil {
				t.Errorf("%s %s: no error", kind, what)
				continue
			}
			msg, named := err.Error(), kind
			if kind == "bgzf" {
				named = "gzip" // BGZF is gzip
			}
			if !regexp.MustCompile(`^reads\.fa\.z: record \d+ \(line \d+\): `+named+`\b`).MatchString(msg) || strings.Contains(msg, "\n") {
				t.Errorf("%s %s: %q", kind, what, msg)
			}
		}
	}
	// A gzip stream whose checksum is wrong.
	z := compress(t, "gzip", []byte(">a\nACGT\n"))
	z[len(z)-8] ^= 1
	if _, err := readAll("a.fa.gz", bytes.NewReader(z), 100); err == nil || err.Error() != "a.fa.gz: record 1 (line 3): gzip: invalid checksum" {
		t.Errorf("bad checksum: %v", err)
	}
}

type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	_, err := readAll("x.fa", &errReader{[]byte(">a\nAC\n>b\nAC\nGT"), errors.New("disk on fire")}, 4)
	if err == nil || err.Error() != "x.fa: record 2 (line 5): disk on fire" {
		t.Errorf("got %v", err)
	}
	_, err = readAll("x.fq", &errReader{[]byte("@a\nAC\n+\nII\n@b\nA"), errors.New("disk on fire")}, 4)
	if err == nil || err.Error() != "x.fq: record 2 (line 6): disk on fire" {
		t.Errorf("got %v", err)
	}
}

func TestOpen(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nosuch.fa"))
	if err == nil || !strings.Contains(err.Error(), "nosuch.fa") || strings.Contains(err.Error(), "\n") {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	if r, err := Open(dir); err == nil {
		_, err = r.Next()
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("directory: %v", err)
		}
		r.Close()
	} else if !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: %v", err)
	}
	r, err := NewReader("-", strings.NewReader(">a\nA\n"))
	if err != nil || r.Name() != "stdin" {
		t.Errorf("stdin: %v %q", err, r.Name())
	}
}

func TestHugeLine(t *testing.T) {
	seq := bytes.Repeat([]byte("ACGTTGCA"), 10<<20/8)
	for _, in := range [][]byte{
		append(append([]byte(">big\n"), seq...), "\n>next\nA\n"...),
		append(append(append(append([]byte("@big\n"), seq...), "\n+\n"...), bytes.Repeat([]byte("I"), len(seq))...), "\n@next\nA\n+\nI\n"...),
	} {
		r, _ := NewReader("big", bytes.NewReader(in))
		x, err := r.Next()
		if err != nil || string(x.Name) != "big" || !bytes.Equal(x.Seq, seq) {
			t.Fatalf("big record: %v", err)
		}
		if x, err = r.Next(); err != nil || string(x.Name) != "next" || string(x.Seq) != "A" {
			t.Fatalf("next record: %v", err)
		}
	}
}

// TestAgainstMummer compares record names and lengths with those mummer prints for the same
// query file, on random inputs made of the bytes that matter to the parser.
func TestAgainstMummer(t *testing.T) {
	mummer, err := exec.LookPath("mummer")
	if err != nil || testing.Short() {
		t.Skip("no mummer")
	}
	dir := t.TempDir()
	qry := filepath.Join(dir, "q.fa")
	rng := rand.New(rand.NewPCG(3, 4))
	head := regexp.MustCompile(`^> (.*)  Len = (\d+)$`)
	for i := range 150 {
		n := rng.IntN(60)
		b := make([]byte, n)
		for j := range b {
			const alpha = "ACGTacgtN>>>\n\n\n\r\t \v\f@+x#"
			b[j] = alpha[rng.IntN(len(alpha))]
		}
		if i%3 == 0 {
			b = append([]byte(">q\n"), b...)
		}
		if t := bytes.TrimLeft(b, " \t\n\v\f\r"); len(t) > 0 && t[0] == '@' {
			continue // FASTQ, which mummer does not read
		}
		os.WriteFile(qry, b, 0o644)
		// The file against itself: every record of length L has a match of length L at query
		// position 1, printed (-s) in lower case.
		cmd := exec.Command(mummer, "-maxmatch", "-l", "1", "-s", "-L", qry, qry)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		got, err := readAll(qry, bytes.NewReader(b), 5)
		if strings.Contains(stderr.String(), "empty sequence in multiple fasta file") {
			if err == nil || !strings.Contains(err.Error(), "empty sequence in multiple fasta file") {
				t.Errorf("%q: mummer refuses a file of one empty record; the reader returned %v", b, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		var want []string
		switch {
		case strings.Contains(stderr.String(), "no sequences in multiple fasta file"), len(b) == 0:
			// no records
		default:
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			for k := 0; k < len(lines); k++ {
				m := head.FindStringSubmatch(lines[k])
				if m == nil {
					t.Fatalf("%q: mummer printed %q", b, out)
				}
				seq := ""
				for ; k+2 < len(lines) && !strings.HasPrefix(lines[k+1], ">"); k += 2 {
					f := strings.Fields(lines[k+1])
					if len(f) >= 3 && f[len(f)-2] == "1" && f[len(f)-1] == m[2] {
						seq = lines[k+2]
					}
				}
				want = append(want, m[1]+" "+m[2]+" "+seq)
			}
		}
		var have []string
		for _, r := range got {
			have = append(have, r.name+" "+strconv.Itoa(len(r.seq))+" "+strings.ToLower(r.seq))
		}
		if strings.Join(have, "|") != strings.Join(want, "|") {
			t.Errorf("%q: got %q, mummer %q", b, have, want)
		}
	}
}

// FuzzReader: no input makes the reader panic or loop; the records and the error do not depend on
// the buffer size, and a gzip-wrapped input gives the records of the plain one.
func FuzzReader(f *testing.F) {
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
	zw := gzip.NewWriter(nil) // reused: a new writer costs more than the rest of a run
	var zb bytes.Buffer
	f.Fuzz(func(t *testing.T, in []byte) {
		want, werr := readAll("f", bytes.NewReader(in), 4096)
		// Tiny buffers put record and line boundaries across reads; they grow with the input
		// so that minimizing a large input does not take the whole fuzz time.
		got, gerr := readAll("f", iotest.HalfReader(bytes.NewReader(in)), 3+len(in)/256)
		if fmtRecs(got) != fmtRecs(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("buffer sizes disagree: %s %v / %s %v", fmtRecs(want), werr, fmtRecs(got), gerr)
		}
		if werr != nil && (strings.Contains(werr.Error(), "\n") || !strings.HasPrefix(werr.Error(), "f: record ")) {
			t.Fatalf("bad message %q", werr)
		}
		if compression(in) != "" {
			return // the plain input is itself decompressed
		}
		zb.Reset()
		zw.Reset(&zb)
		zw.Write(in)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		got, gerr = readAll("f", bytes.NewReader(zb.Bytes()), 4096)
		if fmtRecs(got) != fmtRecs(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("gzip disagrees: %s %v / %s %v", fmtRecs(want), werr, fmtRecs(got), gerr)
		}
	})
}

func benchData(fastq bool) []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	var b bytes.Buffer
	seq := make([]byte, 150)
	for i := 0; b.Len() < 64<<20; i++ {
		if fastq {
			for j := range seq {
				seq[j] = "ACGT"[rng.IntN(4)]
			}
			fmt.Fprintf(&b, "@read%d/1 some description\n%s\n+\n%s\n", i, seq, bytes.Repeat([]byte("F"), 150))
			continue
		}
		fmt.Fprintf(&b, ">chr%d description\n", i)
		line := make([]byte, 60)
		for range 100000 {
			for j := range line {
				line[j] = "ACGT"[rng.IntN(4)]
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// benchRead reads data, counting size bytes (the uncompressed size) per round.
func benchRead(b *testing.B, data []byte, size int) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		r, _ := NewReader("bench", bytes.NewReader(data))
		n := 0
		for {
			x, err := r.Next()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n += len(x.Seq)
		}
		if n == 0 {
			b.Fatal("nothing read")
		}
	}
}

func BenchmarkReadFASTA(b *testing.B) { d := benchData(false); benchRead(b, d, len(d)) }
func BenchmarkReadFASTQ(b *testing.B) { d := benchData(true); benchRead(b, d, len(d)) }

// BenchmarkReadFASTQGzip counts uncompressed bytes.
func BenchmarkReadFASTQGzip(b *testing.B) {
	d := benchData(true)
	benchRead(b, compress(b, "gzip", d), len(d))
}
