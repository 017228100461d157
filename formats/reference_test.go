package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// inHeaders returns, for every position of data, whether it is inside a header line, by MUMmer's
// grammar read byte by byte: a '>' outside a header starts one, a '\n' ends it.
func inHeaders(data []byte) []bool {
	in := make([]bool, len(data)+1)
	header := false
	for i, c := range data {
		in[i] = header
		switch {
		case !header && c == '>':
			header = true
		case header && c == '\n':
			header = false
		}
	}
	in[len(data)] = header
	return in
}

// referenceShapes returns FASTA inputs of many shapes, and a few FASTQ ones.
func referenceShapes(rng *rand.Rand, n int) [][]byte {
	var out [][]byte
	for i := range n {
		in := messyInput(rng, rng.IntN(30), i%10 == 9)
		switch i % 5 {
		case 1: // long lines and headers
			in = append([]byte(">"+strings.Repeat("h", rng.IntN(300))+"\n"+strings.Repeat("ACGT", rng.IntN(300))), in...)
		case 2: // '>' deep inside lines, headers running to the end
			in = append(in, []byte("AC>x y>z\nGG>w")...)
		}
		out = append(out, in)
	}
	return out
}

// TestCutFASTA: every cut is outside every header line, in increasing order, and cuts come where
// they can (a block start outside a header is a cut).
func TestCutFASTA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 5))
	for i, data := range referenceShapes(rng, 300) {
		in := inHeaders(data)
		for _, size := range []int{1, 2, 3, 7, 64, 1000} {
			for _, threads := range []int{1, 3} {
				cuts, err := cutFASTA(data, size, threads)
				if err != nil {
					t.Fatal(err)
				}
				if cuts[0] != 0 || cuts[len(cuts)-1] != len(data) {
					t.Fatalf("case %d size %d: cuts %v of %d bytes", i, size, cuts, len(data))
				}
				for k := 1; k < len(cuts); k++ {
					if cuts[k] <= cuts[k-1] && len(data) > 0 {
						t.Fatalf("case %d size %d: cuts %v not increasing", i, size, cuts)
					}
				}
				for _, c := range cuts[1 : len(cuts)-1] {
					if in[c] {
						t.Fatalf("case %d size %d: cut %d is inside a header: %q", i, size, c, data)
					}
				}
				for at := size; at < len(data); at += size {
					if !in[at] && !slices.Contains(cuts, at) {
						t.Fatalf("case %d size %d: no cut at %d, outside a header", i, size, at)
					}
				}
			}
		}
	}
}

// recordsText is the text Reader's records give, with the identity as fold and codes: the
// sequences with a 0 between neighbours.
func recordsText(name string, data []byte) (*ReferenceText, error) {
	r, err := NewReader(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	t := &ReferenceText{Text: []byte{}}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(t.Starts) > 0 {
			t.Text = append(t.Text, 0)
		}
		t.Starts = append(t.Starts, len(t.Text))
		t.Names = append(t.Names, string(rec.Name))
		t.Text = append(t.Text, rec.Seq...)
	}
	switch {
	case len(t.Starts) == 0:
		return nil, noSequences(name)
	case len(t.Starts) == 1 && len(t.Text) == 0:
		return nil, fmt.Errorf("%s: empty sequence in multiple fasta file", name)
	}
	return t, nil
}

// identityOptions reads the file's bytes as they are.
func identityOptions(threads, chunk int) ReferenceOptions {
	var fold, code [256]byte
	for i := range fold {
		fold[i], code[i] = byte(i), byte(i)
	}
	return ReferenceOptions{
		Fold:      &fold,
		Encode:    func(*[256]bool) *[256]byte { return &code },
		Threads:   threads,
		ChunkSize: chunk,
	}
}

func sameText(a *ReferenceText, aerr error, b *ReferenceText, berr error) string {
	if fmt.Sprint(aerr) != fmt.Sprint(berr) {
		return fmt.Sprintf("error %v, want %v", aerr, berr)
	}
	if aerr != nil {
		return ""
	}
	if !bytes.Equal(a.Text, b.Text) || !slices.Equal(a.Starts, b.Starts) || !slices.Equal(a.Names, b.Names) {
		return fmt.Sprintf("text %q starts %v names %q, want %q %v %q", a.Text, a.Starts, a.Names, b.Text, b.Starts, b.Names)
	}
	return ""
}

// TestReadReferenceRecords: the text is Reader's records put together, from a file (mapped) and
// from a stream, for many thread counts and chunk sizes.
func TestReadReferenceRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 5))
	path := filepath.Join(t.TempDir(), "ref.fa")
	for i, in := range referenceShapes(rng, 200) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := recordsText(path, in)
		for _, chunk := range []int{1, 2, 5, 64, 1 << 20} {
			for _, threads := range []int{1, 2, 5} {
				got, gerr := ReadReference(path, identityOptions(threads, chunk))
				if d := sameText(got, gerr, want, werr); d != "" {
					t.Fatalf("case %d, file, chunks of %d, %d threads: %s\ninput %q", i, chunk, threads, d, in)
				}
			}
			opts := identityOptions(2, chunk)
			opts.Stdin = bytes.NewReader(in)
			got, gerr := ReadReference("-", opts)
			want, werr := recordsText("stdin", in)
			if d := sameText(got, gerr, want, werr); d != "" {
				t.Fatalf("case %d, stdin, chunks of %d: %s\ninput %q", i, chunk, d, in)
			}
		}
	}
}

// TestReadReferenceTruncated: a mapped file cut short while it is read is an error, not a crash.
func TestReadReferenceTruncated(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapping")
	}
	path := filepath.Join(t.TempDir(), "ref.fa")
	in := []byte(">a\n" + strings.Repeat("ACGT\n", 10000))
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap := mapReadOnly(f, len(in))
	if data == nil {
		t.Skip("no mapping")
	}
	defer unmap()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	opts := identityOptions(2, 4096)
	_, err = parseMappedFASTA(path, data, &opts)
	if err == nil || err.Error() != path+": the file changed while it was read" {
		t.Errorf("got %v", err)
	}
}

// writeBenchReference writes a deterministic FASTA of about bases bases: records of many sizes,
// random ACGT with runs of N and lowercase stretches, 60 or 80 bases a line.
func writeBenchReference(w io.Writer, bases int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	bw := bufio.NewWriterSize(w, 1<<20)
	line := make([]byte, 0, 81)
	lower, nrun := 0, 0
	var bits uint64
	nb := 0
	for rec, done := 0, 0; done < bases; rec++ {
		var n int
		switch rec % 10 {
		case 0:
			n = bases/8 + rng.IntN(bases/8+1)
		case 1, 2, 3:
			n = 1<<10 + rng.IntN(bases/64+1)
		default:
			n = 100 + rng.IntN(20000)
		}
		n = min(n, bases-done)
		width := 60
		if rec%3 == 1 {
			width = 80
		}
		fmt.Fprintf(bw, ">chr%d_%d some description len=%d\n", rec, rng.IntN(1000), n)
		for i := 0; i < n; {
			line = line[:0]
			for len(line) < width && i < n {
				if nrun == 0 && lower == 0 {
					switch r := rng.IntN(4096); {
					case r == 0:
						nrun = 1 + rng.IntN(50000)
					case r < 8:
						lower = 10 + rng.IntN(5000)
					}
				}
				var c byte
				if nrun > 0 {
					c = 'N'
					nrun--
				} else {
					if nb == 0 {
						bits, nb = rng.Uint64(), 32
					}
					c = "ACGT"[bits&3]
					bits >>= 2
					nb--
				}
				if lower > 0 {
					c |= 0x20
					lower--
				}
				line = append(line, c)
				i++
			}
			line = append(line, '\n')
			bw.Write(line)
		}
		done += n
	}
	return bw.Flush()
}

// BenchmarkReadReference reads a generated 64 Mbp FASTA: mapped on 1 and 2 threads (the
// parallel path), and streamed plain and gzipped (the one-pass path).
func BenchmarkReadReference(b *testing.B) {
	dir := b.TempDir()
	plain := filepath.Join(dir, "ref.fa")
	f, err := os.Create(plain)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeBenchReference(f, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(plain)
	if err != nil {
		b.Fatal(err)
	}
	gz := filepath.Join(dir, "ref.fa.gz")
	if err := os.WriteFile(gz, compress(b, "gzip", data), 0o644); err != nil {
		b.Fatal(err)
	}
	var fold [256]byte
	for i := range fold {
		fold[i] = byte(i) | 0x20
	}
	code := func(seen *[256]bool) *[256]byte {
		var t [256]byte
		n := byte(2)
		for c, ok := range seen {
			if ok && c > 0 {
				t[c] = n
				n++
			}
		}
		return &t
	}
	run := func(b *testing.B, path string, threads int, stdin bool) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			opts := ReferenceOptions{Fold: &fold, Encode: code, Threads: threads}
			p := path
			var f *os.File
			if stdin {
				var err error
				if f, err = os.Open(path); err != nil {
					b.Fatal(err)
				}
				opts.Stdin, p = f, "-"
			}
			if _, err := ReadReference(p, opts); err != nil {
				b.Fatal(err)
			}
			if f != nil {
				f.Close()
			}
		}
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("mapped-%dthreads", threads), func(b *testing.B) { run(b, plain, threads, false) })
	}
	b.Run("stream-plain", func(b *testing.B) { run(b, plain, 2, true) })
	b.Run("stream-gzip", func(b *testing.B) { run(b, gz, 2, false) })
}

// TestPieceChanged: the second pass stops, writing nothing out of place, where a piece does not
// hold what the first pass found in it.
func TestPieceChanged(t *testing.T) {
	var code [256]byte
	for i := range code {
		code[i] = byte(i)
	}
	piece := []byte("AC\n>a x\nACGT\n>b\nGG")
	for _, c := range []struct {
		gts  []int
		size int
		ok   bool
	}{
		{[]int{3, 13}, 9, true},
		{[]int{3, 13}, 8, false},  // more sequence than counted
		{[]int{3, 13}, 10, false}, // less
		{[]int{3, 12}, 9, false},  // no '>' there
		{[]int{13, 3}, 9, false},
		{[]int{3, 13, 14}, 9, false},
		{nil, 9, false},
	} {
		text := make([]byte, c.size+8) // room after, to see nothing is written there
		tx := &ReferenceText{Starts: make([]int, 8), Names: make([]string, 8)}
		ok := piecePlace{text: 0, rec: 0}.write(piece, c.gts, text[:c.size], tx, &code, 0)
		if ok != c.ok {
			t.Errorf("%v, %d bytes: %v", c.gts, c.size, ok)
		}
		if !bytes.Equal(text[c.size:], make([]byte, 8)) {
			t.Errorf("%v, %d bytes: written past the piece's text: %q", c.gts, c.size, text)
		}
		if ok && string(text[:c.size]) != "ACACGT\x00GG" {
			t.Errorf("text %q", text)
		}
	}
}

// TestReadReferenceSeenStream: the bytes seen in a streamed reference's text (what its encoding is
// chosen from), parsed in chunks on several goroutines, are the mapped file's (0, the records'
// separator, aside: the stream's text holds it; kernels.NewAlphabet reads the set from byte 1).
func TestReadReferenceSeenStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	path := filepath.Join(t.TempDir(), "ref.fa")
	for i, in := range referenceShapes(rng, 100) {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		seenOf := func(stream bool, chunk int) (string, error) {
			var seen [256]bool
			opts := identityOptions(3, chunk)
			opts.Encode = func(s *[256]bool) *[256]byte {
				seen = *s
				seen[0] = false
				var code [256]byte
				for c := range code {
					code[c] = byte(c)
				}
				return &code
			}
			p := path
			if stream {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				opts.Stdin, p = struct{ io.Reader }{f}, "-"
			}
			_, err := ReadReference(p, opts)
			return fmt.Sprint(seen), err
		}
		want, werr := seenOf(false, 1<<20)
		for _, chunk := range []int{1, 7, 64, 1 << 20} {
			got, err := seenOf(true, chunk)
			if (err == nil) != (werr == nil) || (err == nil && got != want) {
				t.Fatalf("case %d, chunks of %d: %v %s, want %v %s", i, chunk, err, got, werr, want)
			}
		}
	}
}
