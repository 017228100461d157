package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestParseFasta(t *testing.T) {
	in := "\n>one desc\nACGT\nac\r\n>two\n>three x\nNNnn\nAC GT\n"
	g, err := parseFasta(strings.NewReader(in), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.names, []string{"one", "two", "three"}) || string(g.seq) != "ACGTacNNnnACGT" || !slices.Equal(g.start, []int{0, 6, 6, 14}) {
		t.Fatalf("got %q %q %v", g.names, g.seq, g.start)
	}
	// A limit cuts the last record short and reads no further.
	g, err = parseFasta(strings.NewReader(in), 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.names, []string{"one", "two", "three"}) || string(g.seq) != "ACGTacNN" || !slices.Equal(g.start, []int{0, 6, 6, 8}) {
		t.Fatalf("limit 8: got %q %q %v", g.names, g.seq, g.start)
	}
	// Lines longer than the reader's buffer.
	long := ">x\n" + strings.Repeat("ACGT", 1<<19) + "\n"
	if g, err = parseFasta(strings.NewReader(long), 0, 0); err != nil || len(g.seq) != 1<<21 {
		t.Fatalf("a 2 Mbp line: %v", err)
	}
}

func TestParseFastaErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ACGT\n", "line 1: sequence before the first '>' header"},
		{">a\nACGT\n>b\nAC1T\n", "record b (line 4): unexpected byte '1' at column 3"},
		{">\nACGT\n", "line 1: record 1 has no name"},
		{"", "no FASTA records"},
	} {
		_, err := parseFasta(strings.NewReader(c.in), 0, 0)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseFasta(f *testing.F) {
	f.Add([]byte(">a\nACGT\n>b c\nnn\n"), 0)
	f.Add([]byte(">a\r\nAC GT\r\n"), 3)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		limit = max(0, limit%64)
		g, err := parseFasta(bytes.NewReader(in), 0, limit)
		if err != nil {
			return
		}
		if len(g.start) != len(g.names)+1 || g.start[0] != 0 || g.start[len(g.start)-1] != len(g.seq) {
			t.Fatalf("records %q, starts %v, %d bases", g.names, g.start, len(g.seq))
		}
		if !slices.IsSorted(g.start) || (limit > 0 && len(g.seq) > limit) {
			t.Fatalf("starts %v, %d bases, limit %d", g.start, len(g.seq), limit)
		}
		for _, c := range g.seq {
			if !letter[c] {
				t.Fatalf("byte %q in a sequence", c)
			}
		}
	})
}

func TestFastaWriter(t *testing.T) {
	var b bytes.Buffer
	w := newFastaWriter(&b, 4)
	w.header("a")
	w.seq([]byte("ACG"))
	w.seq([]byte("TACGTA"))
	w.header("b")
	w.header("c")
	w.seq([]byte("ACGT"))
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if want := ">a\nACGT\nACGT\nA\n>b\n>c\nACGT\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestWriteRecords checks the parallel writer against the serial one.
func TestWriteRecords(t *testing.T) {
	r := newRNG(1, 99, 0)
	names := []string{"a", "empty", "b", "c"}
	seqs := [][]byte{randomSeq(10<<20+7, 0.4, &r), nil, randomSeq(59, 0.5, &r), randomSeq(4<<20, 0.5, &r)}
	for _, width := range []int{60, 80, 7} {
		var want, got bytes.Buffer
		fw := newFastaWriter(&want, width)
		for i, n := range names {
			fw.header(n)
			fw.seq(seqs[i])
		}
		if err := fw.close(); err != nil {
			t.Fatal(err)
		}
		if err := writeRecords(&got, names, func(i int) []byte { return seqs[i] }, width, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("width %d: the parallel writer differs from the serial one", width)
		}
	}
}

func BenchmarkParseFasta(b *testing.B) {
	spec := smallSpec(16_000_000)
	spec.threads = 2
	in := generateFasta(b, spec, 60)
	for b.Loop() {
		if _, err := parseFasta(bytes.NewReader(in), len(in), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(in)))
}
