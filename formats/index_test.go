package formats

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sampleIndex returns an Index whose sections have the lengths version 3 wants (their contents
// are random: the container does not look inside the arrays), in one page, or in several when n
// allows.
func sampleIndex(rng *rand.Rand, n int) *Index {
	ix := &Index{NucleotidesOnly: rng.IntN(2) == 0, Sigma: 6, Note: "test index\n", Version: IndexVersion}
	for c := range ix.Code {
		ix.Code[c] = 1
	}
	for i, c := range "acgt" {
		ix.Code[c] = byte(2 + i)
	}
	ix.Text = make([]byte, n)
	for i := range ix.Text {
		ix.Text[i] = byte(2 + rng.IntN(4))
	}
	ix.Names = []string{"first"}
	ix.Starts = []int64{0}
	if n > 10 {
		ix.Text[n/2] = 1
		ix.Names = append(ix.Names, "second record")
		ix.Starts = append(ix.Starts, int64(n/2+1))
	}
	if n > 30 {
		ix.KmerLen = 2
	}
	pages := 1
	if n > 50 {
		pages = 1 + rng.IntN(3)
		ix.Overlap = rng.IntN(20)
	}
	for p := range pages {
		start, end := int64(n*p/pages), int64(n*(p+1)/pages)
		ix.Pages = append(ix.Pages, samplePage(rng, start, end, min(end+int64(ix.Overlap), int64(n)), ix.KmerLen))
	}
	return ix
}

// samplePage returns a page of random arrays of the lengths its bounds ask for.
func samplePage(rng *rand.Rand, start, end, winEnd int64, kmerLen int) IndexPage {
	pg := IndexPage{Start: start, End: end, WinEnd: winEnd}
	w := pg.Window()
	pg.SA = make([]int32, w+1)
	for i := range pg.SA {
		pg.SA[i] = rng.Int32()
	}
	pg.Occ = make([]uint64, 8*((w+1)/128+1))
	for i := range pg.Occ {
		pg.Occ[i] = rng.Uint64()
	}
	pg.LCPBytes = make([]byte, w+2)
	for i := range pg.LCPBytes {
		pg.LCPBytes[i] = byte(rng.IntN(256))
	}
	if k := rng.IntN(5); k > 0 {
		pg.LCPRows, pg.LCPValues = make([]int32, k), make([]int32, k)
	}
	pg.LCPMin1 = make([]int32, (w+2+63)/64)
	pg.LCPMin2 = make([]int32, (len(pg.LCPMin1)+63)/64)
	if kmerLen > 0 {
		pg.Kmers = make([]int32, 2*16)
		for i := range pg.Kmers {
			pg.Kmers[i] = rng.Int32N(int32(w))
		}
		pg.Keys = make([]int32, w+1)
		for i := range pg.Keys {
			pg.Keys[i] = int32(rng.Uint32())
		}
	}
	if winEnd > end {
		pg.Tail = make([]int32, winEnd-end)
	}
	for i := range pg.Tail {
		pg.Tail[i] = rng.Int32()
	}
	return pg
}

func writeIndex(t testing.TB, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteIndex(&buf, ix, 2); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIndexRoundTrip: what WriteIndex writes, ParseIndex reads back, from memory and mapped from
// a file, whatever the number of threads.
func TestIndexRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 5, 100, 3 << 20} {
		ix := sampleIndex(rng, n)
		data := writeIndex(t, ix)
		for _, threads := range []int{1, 3} {
			got, err := ParseIndex("x.sai", bytes.Clone(data), threads)
			if err != nil {
				t.Fatalf("n %d: %v", n, err)
			}
			if !reflect.DeepEqual(got, ix) {
				t.Fatalf("n %d: the index read back differs", n)
			}
		}
		path := filepath.Join(t.TempDir(), "x.sai")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := OpenIndex(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Mapped || f.Size != int64(len(data)) || !reflect.DeepEqual(f.Index, ix) {
			t.Errorf("n %d: mapped %v, size %d, equal %v", n, f.Mapped, f.Size, reflect.DeepEqual(f.Index, ix))
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestWriteIndexAt: WriteIndexAt writes into a file, at offsets on several goroutines, the bytes
// that WriteIndex writes in order; a writer's error is returned.
func TestWriteIndexAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 100, 3 << 20} {
		ix := sampleIndex(rng, n)
		want := writeIndex(t, ix)
		for _, threads := range []int{1, 4} {
			path := filepath.Join(t.TempDir(), "x.sai")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			size, err := WriteIndexAt(f, ix, threads)
			f.Close()
			got, _ := os.ReadFile(path)
			if err != nil || size != int64(len(want)) || !bytes.Equal(got, want) {
				t.Fatalf("n %d, %d threads: error %v, length %d of %d, same bytes %v", n, threads, err, size, len(want), bytes.Equal(got, want))
			}
		}
	}
	broken := errors.New("disk full")
	if _, err := WriteIndexAt(failAt{broken}, sampleIndex(rng, 3<<20), 4); !errors.Is(err, broken) {
		t.Errorf("a failing writer: %v, want %v", err, broken)
	}
}

// failAt is a WriterAt that fails.
type failAt struct{ err error }

func (f failAt) WriteAt([]byte, int64) (int, error) { return 0, f.err }
func (f failAt) Truncate(int64) error               { return nil }

// TestIndexVersion2: a file of version 2 (testdata/index/v2.sai, written by sapipe index before
// version 3, from v2.fa) reads as one page, and writes back as version 3 with the same contents.
func TestIndexVersion2(t *testing.T) {
	data, err := os.ReadFile("testdata/index/v2.sai")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := ParseIndex("v2.sai", data, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(ix.Text))
	if pg := ix.Pages; ix.Version != 2 || len(pg) != 1 || pg[0].Start != 0 || pg[0].End != n || pg[0].WinEnd != n || pg[0].Tail != nil {
		t.Fatalf("version %d, %d pages", ix.Version, len(ix.Pages))
	}
	if !slices.Equal(ix.Names, []string{"lam1", "lam2"}) || len(ix.Starts) != 2 || ix.Starts[1] != 3001 || n != 3001+2505 ||
		int64(len(ix.Pages[0].SA)) != n+1 || ix.Pages[0].SA[0] != int32(n) {
		t.Fatalf("names %q, starts %v, n %d", ix.Names, ix.Starts, n)
	}
	again, err := ParseIndex("v3.sai", writeIndex(t, ix), 1)
	if err != nil {
		t.Fatal(err)
	}
	again.Version = 2
	if !reflect.DeepEqual(again, ix) {
		t.Error("version 2 written as version 3 reads back differently")
	}
}

// reseal recomputes the header's checksum after a test changed the header.
func reseal(data []byte) {
	binary.LittleEndian.PutUint32(data[60:], crc32.Checksum(data[:60], Castagnoli))
}

// TestIndexDamage: damaged, truncated, foreign and wrong-version files are errors of one line
// naming the file, with the sentinel error a caller can test.
func TestIndexDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	good := writeIndex(t, sampleIndex(rng, 5000))
	cases := []struct {
		name   string
		damage func([]byte) []byte
		is     error
		msg    string
	}{
		{"empty", func(b []byte) []byte { return nil }, ErrNotIndex, "the file is empty"},
		{"fasta", func(b []byte) []byte { return []byte(">chr1\nACGT\n") }, ErrNotIndex, `">chr1\nAC"`},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, ErrNotIndex, "not a sapipe index"},
		{"version 1", func(b []byte) []byte { b[6] = 1; reseal(b); return b }, ErrIndexVersion, "version 1: this sapipe reads versions 2 and 3"},
		{"version 4", func(b []byte) []byte { b[6] = 4; reseal(b); return b }, ErrIndexVersion, "version 4"},
		{"version 2", func(b []byte) []byte { b[6] = 2; reseal(b); return b }, ErrIndexDamaged, "header"},
		{"pages", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[44:], 0); reseal(b); return b }, ErrIndexDamaged, "0 pages"},
		{"overlap", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[48:], 7); reseal(b); return b }, ErrIndexDamaged, "window ends at"},
		{"version 0", func(b []byte) []byte { b[6] = 0; return b }, ErrIndexVersion, "version 0"},
		{"short header", func(b []byte) []byte { return b[:40] }, ErrIndexDamaged, "truncated"},
		{"header crc", func(b []byte) []byte { b[20] ^= 1; return b }, ErrIndexDamaged, "header: damaged index: checksum mismatch"},
		{"flags", func(b []byte) []byte { b[9] = 1; reseal(b); return b }, ErrIndexDamaged, "unknown flags"},
		{"huge n", func(b []byte) []byte { binary.LittleEndian.PutUint64(b[16:], 1<<40+1); reseal(b); return b }, ErrIndexDamaged, "text length"},
		{"sections", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:], 5000); reseal(b); return b }, ErrIndexDamaged, "sections"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-100] }, ErrIndexDamaged, "truncated"},
		{"truncated in table", func(b []byte) []byte { return b[:100] }, ErrIndexDamaged, "truncated"},
		{"appended", func(b []byte) []byte { return append(b, 0) }, ErrIndexDamaged, "its header says"},
		{"table", func(b []byte) []byte { b[64+8] ^= 0x40; return b }, ErrIndexDamaged, "section table: damaged index: checksum mismatch"},
		{"data", func(b []byte) []byte {
			text := binary.LittleEndian.Uint64(b[64+4*32+8:]) // the fifth section, TEXT
			b[text+7] ^= 0x10
			return b
		}, ErrIndexDamaged, "section TEXT: damaged index: checksum mismatch"},
	}
	for _, c := range cases {
		data := c.damage(bytes.Clone(good))
		_, err := ParseIndex("ref.sai", data, 2)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) ||
			!strings.HasPrefix(err.Error(), "ref.sai: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want %v with %q", c.name, err, c.is, c.msg)
		}
	}
	// Every single flipped byte is caught, wherever it is.
	for range 300 {
		data := bytes.Clone(good)
		i := rng.IntN(len(data))
		data[i] ^= byte(1 + rng.IntN(255))
		if _, err := ParseIndex("ref.sai", data, 1); err == nil {
			t.Fatalf("a byte changed at %d went unnoticed", i)
		}
	}
	// Cut anywhere.
	for range 100 {
		if _, err := ParseIndex("ref.sai", good[:rng.IntN(len(good))], 1); err == nil {
			t.Fatal("a truncated file was accepted")
		}
	}
}

// TestIndexContents: the records, names and alphabet are checked after the checksums, so that
// an index written from bad data (or forged) is refused.
func TestIndexContents(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	cases := []struct {
		name   string
		change func(*Index)
		msg    string
	}{
		{"start", func(ix *Index) { ix.Starts[1] = 3 }, "no separator"},
		{"first start", func(ix *Index) { ix.Starts[0] = 1 }, "record 1 starts"},
		{"alphabet order", func(ix *Index) { ix.Code['a'], ix.Code['c'] = 3, 2 }, "section ALPH"},
		{"alphabet size", func(ix *Index) { ix.Sigma = 7 }, "section ALPH"},
	}
	for _, c := range cases {
		ix := sampleIndex(rng, 300)
		c.change(ix)
		_, err := ParseIndex("ref.sai", writeIndex(t, ix), 1)
		if err == nil || !errors.Is(err, ErrIndexDamaged) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one about %q", c.name, err, c.msg)
		}
	}
	// The writer refuses what its reader would.
	ix := sampleIndex(rng, 300)
	ix.Names[0] = "two\nlines"
	if err := WriteIndex(&bytes.Buffer{}, ix, 1); err == nil {
		t.Error("a name with a newline was written")
	}
	ix = sampleIndex(rng, 300)
	ix.Pages[0].Keys = ix.Pages[0].Keys[1:]
	if err := WriteIndex(&bytes.Buffer{}, ix, 1); err == nil {
		t.Error("an index with a key too few was written")
	}
	ix = sampleIndex(rng, 300)
	ix.Pages[0].SA = ix.Pages[0].SA[1:]
	if err := WriteIndex(&bytes.Buffer{}, ix, 1); err == nil {
		t.Error("a suffix array of the wrong length was written")
	}
	ix = sampleIndex(rng, 300)
	ix.Pages[len(ix.Pages)-1].End--
	if err := WriteIndex(&bytes.Buffer{}, ix, 1); err == nil {
		t.Error("pages that do not tile the text were written")
	}
}

// TestOpenIndexErrors: a missing file and a directory are errors naming them.
func TestOpenIndexErrors(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "none.sai"), dir} {
		_, err := OpenIndex(p, 1)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	short := filepath.Join(dir, "short.sai")
	os.WriteFile(short, []byte("SAPIDX"), 0o644)
	if _, err := OpenIndex(short, 1); !errors.Is(err, ErrIndexDamaged) {
		t.Errorf("a 6-byte file: %v", err)
	}
}

// FuzzIndexFile: no input makes ParseIndex panic or allocate much; what it accepts, it accepts
// again after a round trip through WriteIndex.
func FuzzIndexFile(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 20} { // small: the fuzzer minimizes what it finds for a minute
		f.Add(writeIndex(f, sampleIndex(rng, n)))
	}
	if v2, err := os.ReadFile("testdata/index/v2.sai"); err == nil {
		f.Add(v2)
	}
	f.Add([]byte("SAPIDX\x01\x00"))
	f.Add([]byte("SAPIDX\x02\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ParseIndex("fuzz.sai", data, 1) // one goroutine: coverage must not depend on scheduling
		// With the checksums left to later, the same file gives the same error, from the parse or
		// from the checksums.
		_, verify, lerr := ParseIndexLate("fuzz.sai", data, 1)
		if lerr == nil {
			lerr = verify(func(tag string, page int, off int64, d []byte) {
				if off%(1<<20) != 0 || len(d) == 0 || len(d) > 1<<20 || page < -1 {
					t.Errorf("section %s page %d: a chunk of %d bytes at %d", tag, page, len(d), off)
				}
			})
		}
		if (err == nil) != (lerr == nil) || err != nil && err.Error() != lerr.Error() {
			t.Fatalf("ParseIndex: %v; ParseIndexLate and its checksums: %v", err, lerr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "fuzz.sai: ") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		if _, err := ParseIndex("again.sai", writeIndex(t, ix), 1); err != nil {
			t.Fatalf("accepted, but not after a round trip: %v", err)
		}
	})
}

func BenchmarkParseIndex(b *testing.B) {
	data := writeIndex(b, sampleIndex(rand.New(rand.NewPCG(2, 2)), 4<<20))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseIndex("x.sai", data, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPatternReader: one pattern a line (blank lines skipped, CRLF and spaces trimmed), FASTA and
// FASTQ, plain or gzip-compressed.
func TestPatternReader(t *testing.T) {
	read := func(data []byte) (names, seqs []string, format string) {
		r, err := NewPatternReader("p", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names, seqs = append(names, string(rec.Name)), append(seqs, string(rec.Seq))
		}
		return names, seqs, r.Format()
	}
	gz := func(s string) []byte {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write([]byte(s))
		z.Close()
		return b.Bytes()
	}
	for _, c := range []struct {
		in          []byte
		names, seqs []string
		format      string
	}{
		{[]byte("ACGT\n\n  ggcc \r\nTTA"), []string{"ACGT", "ggcc", "TTA"}, []string{"ACGT", "ggcc", "TTA"}, "lines"},
		{gz("ACGT\nCC\n"), []string{"ACGT", "CC"}, []string{"ACGT", "CC"}, "lines"},
		{[]byte("\n\n>a x\nAC\nGT\n>b\n\n"), []string{"a", "b"}, []string{"ACGT", ""}, "fasta/fastq"},
		{gz("@r1\nACG\n+\nIII\n"), []string{"r1"}, []string{"ACG"}, "fasta/fastq"},
		{[]byte(""), nil, nil, "lines"},
		{[]byte(" \n\t\n"), nil, nil, "lines"},
	} {
		names, seqs, format := read(c.in)
		if !slices.Equal(names, c.names) || !slices.Equal(seqs, c.seqs) || format != c.format {
			t.Errorf("%q: names %q, seqs %q, %s; want %q, %q, %s", c.in, names, seqs, format, c.names, c.seqs, c.format)
		}
	}
	if _, err := NewPatternReader("p.gz", bytes.NewReader([]byte{0x1f, 0x8b, 0x08, 0, 1, 2})); err == nil {
		t.Error("a broken gzip header was accepted")
	}
}

// FuzzPatternReader: no input makes the pattern reader panic; in line form every pattern is a
// non-empty line without surrounding white space.
func FuzzPatternReader(f *testing.F) {
	f.Add([]byte("ACGT\n\nacg t\r\n"))
	f.Add([]byte(">a\nACGT\n"))
	f.Add([]byte("@a\nAC\n+\nII\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewPatternReader("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		defer r.Close()
		for range 10000 {
			rec, err := r.Next()
			if err != nil {
				return
			}
			if r.Format() == "lines" && (len(rec.Seq) == 0 || isSpace[rec.Seq[0]] || isSpace[rec.Seq[len(rec.Seq)-1]]) {
				t.Fatalf("line pattern %q", rec.Seq)
			}
		}
	})
}
