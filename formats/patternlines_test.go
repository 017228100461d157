package formats

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// linesBySerial reads every pattern of data with Next: the patterns, then the error that ended
// the input (nil at a clean end).
func linesBySerial(t testing.TB, rd io.Reader) ([]string, error) {
	r, err := NewPatternReader("p.txt", rd)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var pats []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return pats, nil
		}
		if err != nil {
			return pats, err
		}
		if !bytes.Equal(rec.Name, rec.Seq) {
			t.Fatalf("name %q, pattern %q", rec.Name, rec.Seq)
		}
		pats = append(pats, string(rec.Seq))
	}
}

// linesByChunks reads every pattern of data with ReadLines in runs of size bytes and PatternLines.
func linesByChunks(t testing.TB, rd io.Reader, size int) ([]string, error) {
	r, err := NewPatternReader("p.txt", rd)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Format() != "lines" {
		t.Fatalf("format %s", r.Format())
	}
	var pats []string
	var buf []byte
	var spans []Span
	unterminated := false
	for {
		run, err := r.ReadLines(buf, size)
		if errors.Is(err, io.EOF) {
			return pats, nil
		}
		if err != nil {
			return pats, err
		}
		// A run ends at a line end, or is the input's last, unterminated line.
		if len(run) == 0 || unterminated {
			t.Fatalf("run %q after an unterminated one", run)
		}
		unterminated = run[len(run)-1] != '\n'
		spans = PatternLines(spans[:0], run)
		for _, sp := range spans {
			pats = append(pats, string(run[sp.From:sp.To]))
		}
		buf = run
	}
}

// randomLines returns one-pattern-a-line text with blank lines, white space around patterns,
// CRLF line ends and long lines.
func randomLines(rng *rand.Rand) string {
	var b strings.Builder
	spaces := " \t\r\v\f"
	for range rng.IntN(40) {
		for range rng.IntN(3) {
			b.WriteByte(spaces[rng.IntN(len(spaces))])
		}
		n := rng.IntN(12)
		if rng.IntN(10) == 0 {
			n = rng.IntN(300)
		}
		for i := range n {
			c := "ACGTacgtN "[rng.IntN(10)]
			if i == 0 {
				c = 'G'
			}
			b.WriteByte(c)
		}
		for range rng.IntN(2) {
			b.WriteByte(spaces[rng.IntN(len(spaces))])
		}
		b.WriteByte('\n')
	}
	s := b.String()
	if rng.IntN(3) == 0 && len(s) > 0 {
		s = s[:len(s)-1] // no newline at the end
	}
	return s
}

// TestReadLinesMatchesNext: runs of lines cut by PatternLines give Next's patterns, whatever the
// run size, so that boundaries fall everywhere; and a read error comes after the same patterns,
// with the same words and line number.
func TestReadLinesMatchesNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	rounds := 80
	if testing.Short() {
		rounds = 20
	}
	for round := range rounds {
		text := randomLines(rng)
		if strings.TrimLeft(text, " \t\r\v\f\n") != "" && strings.TrimLeft(text, " \t\r\v\f\n")[0] == '>' {
			continue
		}
		want, werr := linesBySerial(t, strings.NewReader(text))
		if werr != nil {
			t.Fatal(werr)
		}
		for size := 1; size <= len(text)+2; size += 1 + size/16 {
			got, err := linesByChunks(t, strings.NewReader(text), size)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("round %d, size %d: %q\ngot  %q\nwant %q", round, size, text, got, want)
			}
		}
		// The input broken off at every byte by a read error.
		for cut := 0; cut <= len(text); cut += 1 + len(text)/20 {
			fail := func() io.Reader { return &errReader{[]byte(text[:cut]), errors.New("disk on fire")} }
			want, werr := linesBySerial(t, fail())
			for _, size := range []int{1, 2, 5, 64, 1 << 16} {
				got, err := linesByChunks(t, fail(), size)
				if strings.Join(got, "|") != strings.Join(want, "|") || errString(err) != errString(werr) {
					t.Fatalf("round %d, cut %d, size %d: %q\ngot  %q, %v\nwant %q, %v", round, cut, size, text[:cut], got, err, want, werr)
				}
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzPatternLines: runs of any size cut by PatternLines give exactly Next's patterns.
func FuzzPatternLines(f *testing.F) {
	f.Add([]byte("ACGT\n\nacg t\r\n"), uint8(3))
	f.Add([]byte("  A\n\tC \nGGG"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		r, err := NewPatternReader("p.txt", bytes.NewReader(data))
		if err != nil || r.Format() != "lines" {
			return
		}
		r.Close()
		want, werr := linesBySerial(t, bytes.NewReader(data))
		got, err := linesByChunks(t, bytes.NewReader(data), int(size))
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || errString(err) != errString(werr) {
			t.Fatalf("size %d: got %q, %v; want %q, %v", size, got, err, want, werr)
		}
		// The same bytes as a mapped file's, read in place.
		if werr != nil {
			return
		}
		m := &PatternReader{name: "p.txt", mapped: data, unmap: func() error { return nil }}
		var all []byte
		got = got[:0]
		for {
			run, err := m.ReadLines(nil, int(size))
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || len(run) == 0 {
				t.Fatalf("size %d: run %q, %v", size, run, err)
			}
			all = append(all, run...)
			for _, sp := range PatternLines(nil, run) {
				got = append(got, string(run[sp.From:sp.To]))
			}
		}
		if !bytes.Equal(all, data) && len(data) > 0 || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("size %d, mapped: runs %q, patterns %q; want %q", size, all, got, want)
		}
	})
}

// TestMappedLines: a plain file of one pattern a line is mapped (where the system maps files) and
// read in place, in runs of whole lines that PatternLines cuts into Next's patterns, whatever the
// run size; Next of a mapped file gives them too; runs stay valid after Close while KeepMapping
// holds the mapping; FASTA, FASTQ and compressed files are read as before.
func TestMappedLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	dir := t.TempDir()
	path := filepath.Join(dir, "p.txt")
	for round := range 40 {
		text := randomLines(rng)
		if k := firstNonSpace([]byte(text)); k >= 0 && (text[k] == '>' || text[k] == '@') {
			continue
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := linesBySerial(t, strings.NewReader(text))
		if werr != nil {
			t.Fatal(werr)
		}
		r, err := OpenPatterns(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(rec.Seq))
		}
		r.Close()
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("round %d, Next: got %q, want %q", round, got, want)
		}
		for size := 1; size <= len(text)+2; size += 1 + size/8 {
			r, err := OpenPatterns(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if mapped := r.Mapped(); runtime.GOOS == "linux" && mapped != (len(text) > 0) {
				t.Fatalf("round %d: a file of %d bytes mapped %v", round, len(text), mapped)
			}
			release := r.KeepMapping()
			var runs [][]byte
			for {
				run, err := r.ReadLines(nil, size)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, run)
			}
			r.Close() // the runs stay valid: KeepMapping holds the mapping
			var all []byte
			got = got[:0]
			for i, run := range runs {
				if len(run) == 0 || i < len(runs)-1 && run[len(run)-1] != '\n' {
					t.Fatalf("round %d, size %d: run %d %q", round, size, i, run)
				}
				all = append(all, run...)
				for _, sp := range PatternLines(nil, run) {
					got = append(got, string(run[sp.From:sp.To]))
				}
			}
			if release != nil {
				if err := release(); err != nil {
					t.Fatal(err)
				}
			}
			if string(all) != text || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("round %d, size %d: runs %q, patterns %q, want %q", round, size, all, got, want)
			}
		}
	}
	for _, text := range []string{">r\nACGT\n", "\n @r\nACGT\n+\nIIII\n", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenPatterns(path, nil)
		if err != nil {
			continue // an empty gzip stream is no input
		}
		if r.Mapped() || r.KeepMapping() != nil {
			t.Errorf("%q was mapped", text)
		}
		r.Close()
	}
}
