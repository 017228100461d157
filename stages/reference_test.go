package stages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
)

// loadReferenceRecords is the reference loader that formats.ReadReference replaced, kept as the
// oracle: every record read by formats.Reader, one at a time, into kernels.ReferenceBuilder.
func loadReferenceRecords(path string, nucleotidesOnly bool, stdin io.Reader) (*kernels.Reference, error) {
	rd, err := openInput(path, stdin)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := kernels.NewReferenceBuilder(nucleotidesOnly)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		b.Add(string(rec.Name), rec.Seq)
	}
	if b.Records() == 0 {
		return nil, fmt.Errorf("%s: no sequences in multiple fasta file", rd.Name())
	}
	ref, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rd.Name(), err)
	}
	return ref, nil
}

// sameReference says how a and b (and their errors) differ, or "" when they do not.
func sameReference(a *kernels.Reference, aerr error, b *kernels.Reference, berr error) string {
	if fmt.Sprint(aerr) != fmt.Sprint(berr) {
		return fmt.Sprintf("error %v, want %v", aerr, berr)
	}
	if aerr != nil {
		return ""
	}
	switch {
	case !bytes.Equal(a.Text, b.Text):
		i := 0
		for i < min(len(a.Text), len(b.Text)) && a.Text[i] == b.Text[i] {
			i++
		}
		return fmt.Sprintf("text of %d bytes, want %d; first difference at %d", len(a.Text), len(b.Text), i)
	case !slices.Equal(a.Starts, b.Starts):
		return fmt.Sprintf("starts %v, want %v", a.Starts, b.Starts)
	case !slices.Equal(a.Names, b.Names):
		return fmt.Sprintf("names %q, want %q", a.Names, b.Names)
	case a.Alpha != b.Alpha:
		return fmt.Sprintf("alphabet of %d codes, want %d", a.Alpha.Size, b.Alpha.Size)
	}
	return ""
}

// randomReference returns a FASTA input of a random shape: text before the first '>', empty
// records, '>' inside sequence lines, CRLF, white space of every kind inside sequences, long
// headers, a header without a newline at the end, mixed case, IUPAC codes and odd bytes.
func randomReference(rng *rand.Rand) []byte {
	var b bytes.Buffer
	crlf := rng.IntN(4) == 0
	eol := func() {
		if crlf || rng.IntN(20) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteByte('\n')
		}
	}
	alphabets := []string{"ACGT", "acgtACGTNn", "ACGTNRYKMSWBDHVacgtnrykmswbdhv", "ACGT*-.0\x00\xff\x01>"}
	alpha := alphabets[rng.IntN(len(alphabets))]
	seqLine := func(n int) {
		for range n {
			switch r := rng.IntN(200); {
			case r == 0:
				b.WriteString([]string{" ", "\t", "\v", "\f", "\r", "  \t"}[rng.IntN(6)])
			case r == 1 && rng.IntN(8) == 0:
				b.WriteString(">in" + fmt.Sprint(rng.IntN(100))) // a record starts mid-line
				if rng.IntN(2) == 0 {
					b.WriteString(" desc >x")
				}
				eol()
			default:
				c := alpha[rng.IntN(len(alpha))]
				if c == '>' {
					c = 'a'
				}
				b.WriteByte(c)
			}
		}
	}
	sequence := func(n int) {
		width := []int{1, 7, 60, 80, n + 1}[rng.IntN(5)]
		for i := 0; i < n; i += width {
			seqLine(min(width, n-i))
			eol()
			if rng.IntN(30) == 0 {
				eol() // a blank line
			}
		}
	}
	switch rng.IntN(6) {
	case 0:
		sequence(rng.IntN(100)) // text before the first '>'
	case 1:
		b.WriteString([]string{"\n\n", " \t\r\n", "\v\f "}[rng.IntN(3)])
	}
	records := []int{0, 1, 1, 2, 3, 5, 20}[rng.IntN(7)]
	for i := range records {
		b.WriteByte('>')
		if rng.IntN(10) > 0 {
			fmt.Fprintf(&b, "r%d", i)
			if rng.IntN(10) == 0 {
				b.WriteString(">x") // '>' inside a name
			}
		}
		switch rng.IntN(5) {
		case 0:
			b.WriteString(" some description")
		case 1:
			b.WriteString("\tx>y z")
		case 2:
			b.WriteString(" " + strings.Repeat("long header ", rng.IntN(100)))
		}
		if i == records-1 && rng.IntN(8) == 0 {
			break // a header at the end of the input, without a newline
		}
		eol()
		n := []int{0, 0, 1, 5, 60, 61, 200, 1000, 5000}[rng.IntN(9)]
		sequence(n)
	}
	if rng.IntN(4) == 0 {
		t := b.Bytes()
		for len(t) > 0 && (t[len(t)-1] == '\n' || t[len(t)-1] == '\r') {
			t = t[:len(t)-1] // no final newline
		}
		b.Truncate(len(t))
	}
	return b.Bytes()
}

// randomFASTQ returns FASTQ records, now and then malformed.
func randomFASTQ(rng *rand.Rand) []byte {
	var b bytes.Buffer
	if rng.IntN(3) == 0 {
		b.WriteString("\n \n")
	}
	for i := range rng.IntN(6) {
		n := rng.IntN(50)
		s := make([]byte, n)
		for j := range s {
			s[j] = "ACGTNacgtn"[rng.IntN(10)]
		}
		q := strings.Repeat("I", n)
		if rng.IntN(15) == 0 {
			q += "I" // malformed
		}
		fmt.Fprintf(&b, "@q%d desc\n%s\n+\n%s\n", i, s, q)
	}
	return b.Bytes()
}

// checkLoad loads in (written to a file, and through stdin) with the loader under test, for
// many thread counts and chunk sizes, and compares with the oracle.
func checkLoad(t *testing.T, what string, in []byte, dir string, nucOnly bool, chunks, threads []int) {
	t.Helper()
	path := filepath.Join(dir, "ref.fa")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	want, werr := loadReferenceRecords(path, nucOnly, nil)
	for _, th := range threads {
		for _, ch := range chunks {
			opts := formats.ReferenceOptions{Threads: th, ChunkSize: ch}
			got, gerr := loadReference(path, nucOnly, nil, opts)
			if d := sameReference(got, gerr, want, werr); d != "" {
				t.Fatalf("%s (-n %v), file, %d threads, chunks of %d: %s\ninput %q", what, nucOnly, th, ch, d, in)
			}
		}
	}
	// Through stdin, whole and a byte at a time.
	want, werr = loadReferenceRecords("-", nucOnly, bytes.NewReader(in))
	for _, ch := range chunks[:min(len(chunks), 3)] {
		for i, rd := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			got, gerr := loadReference("-", nucOnly, rd, formats.ReferenceOptions{ChunkSize: ch})
			if d := sameReference(got, gerr, want, werr); d != "" {
				t.Fatalf("%s (-n %v), stdin %d, chunks of %d: %s\ninput %q", what, nucOnly, i, ch, d, in)
			}
		}
	}
}

// TestLoadReferenceRandom: the parallel and the streamed loaders give the reference (or the
// error) that reading one record at a time gives, on random inputs, for many thread counts and
// chunk sizes, tiny ones included.
func TestLoadReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	dir := t.TempDir()
	n := 250
	if testing.Short() {
		n = 60
	}
	for i := range n {
		in := randomReference(rng)
		if i%10 == 9 {
			in = randomFASTQ(rng)
		}
		checkLoad(t, fmt.Sprintf("case %d", i), in, dir, i%3 == 1, []int{1, 2, 7, 64, 1000, 1 << 20}, []int{1, 2, 3, 8})
	}
}

// TestLoadReferenceCases: the shapes that matter, one by one.
func TestLoadReferenceCases(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{
		"", " \n\t\n", "ACGT", "ACGT\n", ">", ">\n", ">a", ">a\n", ">a\n\n \n", "\n\n>a desc\n\n",
		">a\nACGT", ">a\nAC\nGT\n>b\nTT\n", "xx\n>a\nAC", "xx>a\nAC>b\nGT>c d\nTT\n",
		">a\n>b\n", ">a\n>b\nAC", ">a b>c\nAC\n", ">a\r\nAC\r\nGT\r\n>b\r\n\r\nT\r\n", "> x\nAC\n>\nGT",
		">a\nA C\tG\vT\fA\rC\n", ">a\nNNNNacgtRYKM*-\x00\xff\n>b\nn\n", ">a\n" + strings.Repeat("ACGT", 5000),
		">" + strings.Repeat("h", 10000) + " d\nAC\n>b\nGG", "@r\nACGT\n+\nIIII\n@s\nAC\n+\nII\n",
		"\n\n@r\n\n+\n", "@r\nAC\n+\nIII\n", "@r\nACGT\n", "  @r desc\nAC\n+\nII", ">a\nAC\n@b\nGG\n",
	} {
		for _, nuc := range []bool{false, true} {
			checkLoad(t, fmt.Sprintf("%q", in), []byte(in), dir, nuc, []int{1, 2, 3, 5, 8, 4096}, []int{1, 2, 4})
		}
	}
}

// TestLoadReferenceCompressed: compressed inputs, whole and cut short, from a file and from stdin.
func TestLoadReferenceCompressed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	for i := range 30 {
		plain := randomReference(rng)
		if i%8 == 7 {
			plain = randomFASTQ(rng)
		}
		for k, kind := range []string{"gzip", "zstd", "xz", "bzip2", "bwz"} {
			if kind == "xz" && i%3 != k%3 {
				continue // each xz reader allocates its 8 MiB dictionary
			}
			var b bytes.Buffer
			w, err := formats.NewCompressor(&b, kind)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(plain)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			z := b.Bytes()
			what := fmt.Sprintf("case %d %s", i, kind)
			checkLoad(t, what, z, dir, i%2 == 0, []int{1, 64, 1 << 16}, []int{2})
			if len(z) > 20 {
				checkLoad(t, what+" cut short", z[:len(z)*2/3], dir, false, []int{3, 1 << 16}, []int{2})
			}
		}
	}
}

// failAfter reads data, then fails.
type failAfter struct {
	data []byte
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestLoadReferenceReadError: a read error is reported with the record and line where Reader
// reports it, wherever it comes.
func TestLoadReferenceReadError(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	disk := errors.New("disk on fire")
	for i := range 300 {
		in := randomReference(rng)
		if i%10 == 0 {
			in = randomFASTQ(rng)
		}
		cut := rng.IntN(len(in) + 1)
		want, werr := loadReferenceRecords("-", false, &failAfter{in[:cut], disk})
		for _, ch := range []int{1, 5, 64, 1 << 16} {
			got, gerr := loadReference("-", false, &failAfter{in[:cut], disk}, formats.ReferenceOptions{ChunkSize: ch})
			if d := sameReference(got, gerr, want, werr); d != "" {
				t.Fatalf("case %d, chunks of %d: %s\ninput %q", i, ch, d, in[:cut])
			}
		}
	}
}

// TestLoadReferenceOpenErrors: a missing file and a directory fail as before.
func TestLoadReferenceOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "nosuch.fa"), dir} {
		_, gerr := LoadReference(p, false, nil)
		_, werr := loadReferenceRecords(p, false, nil)
		if gerr == nil || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("%s: %v, want %v", p, gerr, werr)
		}
	}
}

// FuzzLoadReference: the parallel loader (tiny chunks, several threads) and the streamed one
// agree with reading one record at a time, on any input.
func FuzzLoadReference(f *testing.F) {
	for _, s := range []string{
		">a desc\nACGT\nAC\n>b\n\n>c\r\nGG\r\n", "junk>a\nAC>b\nGT", ">a\n>b x>y\nA C\tG\n>",
		"@r1\nACGT\n+\nIIII\n", "\n\n>r\n\n", ">a\nNRYK\x00\xff", "\x1f\x8b\x08garbage",
	} {
		f.Add([]byte(s), uint8(3), false)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "ref.fa")
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, nucOnly bool) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := loadReferenceRecords(path, nucOnly, nil)
		ch := int(chunk%64) + 1
		for _, th := range []int{1, 3} {
			got, gerr := loadReference(path, nucOnly, nil, formats.ReferenceOptions{Threads: th, ChunkSize: ch})
			if d := sameReference(got, gerr, want, werr); d != "" {
				t.Fatalf("file, %d threads, chunks of %d: %s", th, ch, d)
			}
		}
		want, werr = loadReferenceRecords("-", nucOnly, bytes.NewReader(in))
		got, gerr := loadReference("-", nucOnly, bytes.NewReader(in), formats.ReferenceOptions{ChunkSize: ch})
		if d := sameReference(got, gerr, want, werr); d != "" {
			t.Fatalf("stdin, chunks of %d: %s", ch, d)
		}
	})
}
