package stages

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// TestSegmentEnd: a segment's end moves to the end of a run of one symbol that goes on for at
// least runSegment more, and nowhere else.
func TestSegmentEnd(t *testing.T) {
	seq := slices.Concat([]byte("acgt"), bytes.Repeat([]byte("n"), runSegment+10), []byte("acg"), bytes.Repeat([]byte("a"), runSegment), []byte("c"))
	n := len(seq)
	at := func(i int) byte { return seq[i] }
	gapEnd := 4 + runSegment + 10
	polyA := gapEnd + 3
	for _, c := range []struct{ to, want int }{
		{1, 1}, {4, 4}, // not inside a run
		{5, gapEnd}, {14, gapEnd}, // inside the gap, runSegment of it left or more
		{15, 15}, {gapEnd - 1, gapEnd - 1}, // less
		{polyA, polyA}, {polyA + 1, polyA + 1}, // poly-A: at its start, then less than runSegment left
		{n - 1, n - 1}, {n, n}, {n + 5, n},
	} {
		if got := segmentEnd(at, c.to, n); got != c.want {
			t.Errorf("segmentEnd(%d) = %d, want %d", c.to, got, c.want)
		}
	}
}

// TestQuerySegments reads records with gaps of N (longer and shorter than runSegment, across the
// cuts) through a QuerySource, short records and long ones (split into batches), both strands:
// each record's segments cover it in order, and none ends inside a run that goes on for
// runSegment more.
func TestQuerySegments(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var fa bytes.Buffer
	var seqs [][]byte
	for r := range 12 {
		var s []byte
		for len(s) < 200+rng.IntN(20000) {
			if rng.IntN(3) == 0 {
				s = append(s, bytes.Repeat([]byte{"nNa"[rng.IntN(3)]}, 1+rng.IntN(3*runSegment))...)
			} else {
				for range 1 + rng.IntN(2000) {
					s = append(s, "acgt"[rng.IntN(4)])
				}
			}
		}
		seqs = append(seqs, s)
		fmt.Fprintf(&fa, ">r%d\n%s\n", r, s)
	}
	path := filepath.Join(t.TempDir(), "q.fa")
	if err := os.WriteFile(path, fa.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rb := kernels.NewReferenceBuilder(false)
	rb.Add("ref", []byte("acgtn"))
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	alpha := &ref.Alpha
	moved := 0
	for _, batch := range []int{4096, 16384, 1 << 20} {
		src := NewQuerySource([]string{path}, alpha, Strands{Forward: true, Reverse: true}, false, batch)
		cut := max(batch/piecesPerBatch, 1)
		type key struct {
			rec int
			rev bool
		}
		next := map[key]int{}
		rec := -1
		for {
			b, err := src.Next()
			if err != nil {
				break
			}
			for i, sg := range b.Segs {
				in := b.Info[i]
				if in.First && !in.Reverse {
					rec++
				}
				seq := seqs[rec]
				k := key{rec, in.Reverse}
				if sg.Len != len(seq) || sg.From != next[k] || sg.To <= sg.From && len(seq) > 0 {
					t.Fatalf("batch %d, record %d (reverse %v): segment [%d, %d) of %d after %d", batch, rec, in.Reverse, sg.From, sg.To, sg.Len, next[k])
				}
				next[k] = sg.To
				if in.Last != (sg.To == len(seq)) {
					t.Fatalf("batch %d, record %d: Last %v at %d of %d", batch, rec, in.Last, sg.To, len(seq))
				}
				at := func(i int) byte { return seq[i] }
				if in.Reverse {
					at = func(i int) byte { return seq[len(seq)-1-i] }
				}
				if sg.To < len(seq) && at(sg.To-1) == at(sg.To) {
					e := sg.To
					for e < len(seq) && at(e) == at(sg.To) {
						e++
					}
					if e-sg.To >= runSegment {
						t.Fatalf("batch %d, record %d (reverse %v): segment ends at %d inside a run to %d", batch, rec, in.Reverse, sg.To, e)
					}
				}
				if sg.To-sg.From > cut {
					moved++
				}
			}
		}
		src.Close()
		if rec != len(seqs)-1 {
			t.Fatalf("batch %d: %d records read, want %d", batch, rec+1, len(seqs))
		}
		for k, v := range next {
			if v != len(seqs[k.rec]) {
				t.Fatalf("batch %d: record %d (reverse %v) covered to %d of %d", batch, k.rec, k.rev, v, len(seqs[k.rec]))
			}
		}
	}
	if moved < 10 {
		t.Fatalf("only %d segments moved past a run", moved)
	}
}
