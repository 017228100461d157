package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// TestSearchChunked: one-pattern-a-line input cut into runs of any size (down to one byte, so that
// run boundaries fall everywhere) prints what the same patterns as FASTA records print (read one
// by one), and both agree with a brute-force search.
func TestSearchChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	dir := t.TempDir()
	rounds := 20
	if testing.Short() {
		rounds = 6
	}
	for r := range rounds {
		fa, recs := randomFasta(rng, 1+rng.IntN(3), 500)
		var recNames []string
		for i := range recs {
			recNames = append(recNames, fmt.Sprintf("rec%d", i+1))
		}
		ix, err := BuildIndex(cpu.New(1), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(recs, "")
		var seqs []string
		var lines, fasta strings.Builder
		for range 1 + rng.IntN(80) {
			l := 1 + rng.IntN(12)
			a := rng.IntN(len(all) - l + 1)
			p := all[a : a+l]
			if rng.IntN(5) == 0 {
				p = revComp(p)
			}
			seqs = append(seqs, p)
			fmt.Fprintf(&lines, "%s%s%s\n", strings.Repeat(" ", rng.IntN(2)), p, []string{"", "\r", " \t"}[rng.IntN(3)])
			if rng.IntN(4) == 0 {
				lines.WriteString("\n \n")
			}
			fmt.Fprintf(&fasta, ">%s\n%s\n", p, p)
		}
		strands := []Strands{{Forward: true}, {Reverse: true}, {Forward: true, Reverse: true}}[rng.IntN(3)]
		locate := rng.IntN(2) == 0
		want := naiveSearchTable(seqs, seqs, recNames, recs, strands, locate, false)
		s, err := ix.Searcher()
		if err != nil {
			t.Fatal(err)
		}
		run := func(in string, chunk, threads int) string {
			opts := SearchOptions{Strands: strands, Locate: locate, Threads: threads, BatchSize: 1 + rng.IntN(100), ChunkSize: chunk}
			var got bytes.Buffer
			if err := Search(context.Background(), opts, ix, s, []string{"-"}, strings.NewReader(in), &got); err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
			return got.String()
		}
		if got := run(fasta.String(), 0, 2); got != want {
			t.Fatalf("round %d, FASTA: got\n%s\nwant\n%s", r, got, want)
		}
		for chunk := 1; chunk < 200; chunk += 1 + chunk/8 {
			if got := run(lines.String(), chunk, 1+chunk%3); got != want {
				t.Fatalf("round %d, runs of %d bytes: got\n%s\nwant\n%s", r, chunk, got, want)
			}
		}
	}
}

// TestSearchChunkedReadError: a read error in one-pattern-a-line input is reported with the line
// Next reports it at, whatever the run size.
func TestSearchChunkedReadError(t *testing.T) {
	dir := t.TempDir()
	ix, err := BuildIndex(cpu.New(1), writeTemp(t, dir, "ref.fa", ">r\nACGTACGTTTGACCA\n"), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ix.Searcher()
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 3, 7, 100} {
		in := io.MultiReader(strings.NewReader("ACG\n\nTTG\nCCA\nGG"), &failingReader{errors.New("disk on fire")})
		opts := SearchOptions{Strands: Strands{Forward: true}, Threads: 2, BatchSize: 10, ChunkSize: chunk}
		err := Search(context.Background(), opts, ix, s, []string{"-"}, in, io.Discard)
		if err == nil || err.Error() != "stdin: line 5: disk on fire" {
			t.Errorf("runs of %d: got %v", chunk, err)
		}
	}
}

type failingReader struct{ err error }

func (f *failingReader) Read([]byte) (int, error) { return 0, f.err }

// TestEncodeUnrolled: the eight-a-step encoders agree with one lookup a byte, at every length.
func TestEncodeUnrolled(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var tab [256]byte
	for i := range tab {
		tab[i] = byte(rng.IntN(256))
	}
	for n := range 70 {
		seq := make([]byte, n)
		for i := range seq {
			seq[i] = byte(rng.IntN(256))
		}
		fwd, rev := make([]byte, n+3), make([]byte, n+3)
		encodeForward(fwd, seq, &tab)
		encodeReverse(rev, seq, &tab)
		for i, c := range seq {
			if fwd[i] != tab[c] || rev[n-1-i] != tab[c] {
				t.Fatalf("length %d, byte %d: forward %d, reverse %d, want %d", n, i, fwd[i], rev[n-1-i], tab[c])
			}
		}
	}
}

// TestSearchFastxChunks: FASTA and FASTQ patterns read in chunks of any size print what they
// print read a record at a time, and fail with the same error, over several files and stdin.
func TestSearchFastxChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 1))
	dir := t.TempDir()
	rounds, errs := 30, 0
	if testing.Short() {
		rounds = 8
	}
	for r := range rounds {
		fa, recs := randomFasta(rng, 1+rng.IntN(3), 3000)
		ix, err := BuildIndex(cpu.New(1), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		s, err := ix.Searcher()
		if err != nil {
			t.Fatal(err)
		}
		paths, stdin := queryFiles(t, rng, dir, strings.Join(recs, ""), "p")
		opts := SearchOptions{Strands: []Strands{{Forward: true}, {Reverse: true}, {Forward: true, Reverse: true}}[rng.IntN(3)],
			Locate: rng.IntN(2) == 0, Threads: 1 + rng.IntN(3), BatchSize: 1 + rng.IntN(3000)}
		if compareChunkSizes(t, fmt.Sprintf("round %d", r), func(recordsOnly bool, chunk int) (string, string) {
			o := opts
			o.recordsOnly, o.ChunkSize = recordsOnly, chunk
			var out bytes.Buffer
			if err := Search(context.Background(), o, ix, s, paths, strings.NewReader(stdin), &out); err != nil {
				return out.String(), err.Error()
			}
			return out.String(), ""
		}) {
			errs++
		}
	}
	if errs < rounds/8 {
		t.Errorf("only %d of %d rounds tried errors", errs, rounds)
	}
}

// TestSearchIntoFile: the table written into a regular file at offsets by several goroutines is
// the table written in order, after what the file held, with the file's offset left after it;
// and a file opened for appending gets the same.
func TestSearchIntoFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	dir := t.TempDir()
	fa, recs := randomFasta(rng, 2, 3000)
	ix, err := BuildIndex(cpu.New(1), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ix.Searcher()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(recs, "")
	var in strings.Builder
	for range 3000 {
		l := 1 + rng.IntN(8)
		a := rng.IntN(len(all) - l + 1)
		fmt.Fprintf(&in, "%s\n", all[a:a+l])
	}
	opts := SearchOptions{Strands: Strands{Forward: true, Reverse: true}, Locate: true, Threads: 3, BatchSize: 100}
	var want bytes.Buffer
	if err := Search(context.Background(), opts, ix, s, []string{"-"}, strings.NewReader(in.String()), &want); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []int{os.O_RDWR | os.O_CREATE | os.O_TRUNC, os.O_WRONLY | os.O_CREATE | os.O_APPEND} {
		path := filepath.Join(dir, "out.tsv")
		os.Remove(path)
		f, err := os.OpenFile(path, flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("head\n")
		if err := Search(context.Background(), opts, ix, s, []string{"-"}, strings.NewReader(in.String()), f); err != nil {
			t.Fatal(err)
		}
		f.WriteString("tail\n")
		f.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "head\n"+want.String()+"tail\n" {
			t.Errorf("flags %#x: %d bytes, want %d", flags, len(got), len("head\n"+want.String()+"tail\n"))
		}
	}
}

// plainSearcher hides a searcher's SearchLetters, so that Search encodes the patterns.
type plainSearcher struct{ kernels.Searcher }

// TestSearchLetters: over references of a, c, g and t alone, count and locate of the forward
// strand search the patterns' bytes without encoding them (cpu.Searcher.SearchLetters), and
// print what the encoded search and a brute-force search print, for patterns in either case,
// with other letters, white space and any byte in them, with and without -n.
func TestSearchLetters(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	dir := t.TempDir()
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	for r := range rounds {
		var fa strings.Builder
		var recs, recNames []string
		for i := range 1 + rng.IntN(3) {
			s := make([]byte, 1+rng.IntN(4000))
			for j := range s {
				s[j] = "acgtACGT"[rng.IntN(8)]
			}
			if len(s) > 100 && rng.IntN(2) == 0 { // a repeat
				l := 20 + rng.IntN(len(s)/2-20)
				copy(s[len(s)-l:], s[:l])
			}
			recs = append(recs, string(s))
			recNames = append(recNames, fmt.Sprintf("rec%d", i+1))
			fmt.Fprintf(&fa, ">rec%d\n%s\n", i+1, s)
		}
		nuc := rng.IntN(2) == 0
		iopts := IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2}
		if r%2 == 1 { // pages, some shorter than the patterns
			iopts = IndexOptions{PageSize: 50 + rng.IntN(5000), Overlap: rng.IntN(80), Threads: 2}
		}
		ix, err := BuildIndex(cpu.New(2), writeTemp(t, dir, "ref.fa", fa.String()), nuc, nil, iopts)
		if err != nil {
			t.Fatal(err)
		}
		if !isACGT(&ix.Ref.Alpha) {
			t.Fatalf("round %d: the alphabet of a reference of a, c, g, t is not a, c, g, t", r)
		}
		all := strings.Join(recs, "")
		var seqs []string
		var lines strings.Builder
		for range 6000 {
			l := 1 + rng.IntN(60)
			a := rng.IntN(len(all) - min(l, len(all)) + 1)
			p := []byte(all[a:min(a+l, len(all))])
			for i := range p {
				switch rng.IntN(60) {
				case 0:
					p[i] = "nNrY-*.\x01\xe1"[rng.IntN(9)]
				case 1:
					p[i] ^= 0x20 // the other case
				}
			}
			seqs = append(seqs, strings.TrimSpace(string(p)))
			fmt.Fprintf(&lines, "%s\n", p)
		}
		var names []string
		var in strings.Builder
		for _, p := range seqs {
			if p != "" {
				names = append(names, p)
				in.WriteString(p + "\n")
			}
		}
		locate := rng.IntN(2) == 0
		want := naiveSearchTable(names, names, recNames, recs, Strands{Forward: true}, locate, nuc)
		s, err := ix.Searcher()
		if err != nil {
			t.Fatal(err)
		}
		file := writeTemp(t, dir, "p.txt", in.String()) // mapped, not read
		for i, ss := range []kernels.Searcher{s, plainSearcher{s}, s} {
			opts := SearchOptions{Strands: Strands{Forward: true}, Locate: locate, Threads: 2, BatchSize: 1 + rng.IntN(20000)}
			paths := []string{"-"}
			if i == 2 {
				paths = []string{file, "-", file}
				want = want + strings.Repeat(want, 2)
			}
			var got bytes.Buffer
			if err := Search(context.Background(), opts, ix, ss, paths, strings.NewReader(in.String()), &got); err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
			if got.String() != want {
				t.Fatalf("round %d (%T, %v, -n %v, locate %v): the table differs from the naive one", r, ss, paths, nuc, locate)
			}
		}
	}
}
