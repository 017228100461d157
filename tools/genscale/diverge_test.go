package main

import (
	"bytes"
	"slices"
	"testing"
)

// divergeFasta writes the diverged copy of g (inverted in place first) and reads it back.
func divergeFasta(t *testing.T, spec divergeSpec, g *fasta) (*fasta, [][3]int) {
	t.Helper()
	inv := spec.invert(g)
	var b bytes.Buffer
	if err := spec.write(&b, g, 60); err != nil {
		t.Fatal(err)
	}
	d, err := parseFasta(&b, b.Len(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return d, inv
}

// testGenome is a small generated genome, read back as FASTA.
func testGenome(t *testing.T, size int) *fasta {
	t.Helper()
	spec := smallSpec(size)
	spec.threads = 2
	out := generateFasta(t, spec, 60)
	g, err := parseFasta(bytes.NewReader(out), len(out), 0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDivergeSubstitutions(t *testing.T) {
	g := testGenome(t, 2_000_000)
	orig := bytes.Clone(g.seq)
	spec := defaultDivergeSpec()
	spec.indelFrac, spec.invRate, spec.chunkSize, spec.threads = 0, 0, 1<<18, 3
	d, _ := divergeFasta(t, spec, g)
	if !slices.Equal(d.names, []string{"chr1", "chr2"}) || len(d.seq) != len(orig) {
		t.Fatalf("records %v, %d bases; want chr1, chr2 and %d bases", d.names, len(d.seq), len(orig))
	}
	diff, acgt := 0, 0
	for i, c := range orig {
		if baseIndex[c] == 4 {
			if baseIndex[d.seq[i]] == 4 || d.seq[i]&0x20 != c&0x20 {
				t.Fatalf("position %d: %q became %q, want a random base", i, c, d.seq[i])
			}
			continue
		}
		acgt++
		if d.seq[i] != c {
			diff++
			if d.seq[i]|0x20 == c|0x20 || d.seq[i]&0x20 != c&0x20 {
				t.Fatalf("position %d: %q became %q", i, c, d.seq[i])
			}
		}
	}
	// 1% of ~1.97 M bases: ~19,700 substitutions, standard deviation ~140.
	if r := float64(diff) / float64(acgt); r < 0.0095 || r > 0.0105 {
		t.Errorf("substitution rate %.5f, asked 0.01", r)
	}
	// The same bytes whatever the threads.
	spec.threads = 1
	g2 := &fasta{names: g.names, start: g.start, seq: bytes.Clone(orig)}
	if d1, _ := divergeFasta(t, spec, g2); !bytes.Equal(d1.seq, d.seq) {
		t.Error("1 thread gave another copy than 3")
	}
}

// TestDivergeEdits checks the copy against the edits that made it: between indels the copy is
// the original shifted, with the substitutions logged and no others, at the rate asked.
func TestDivergeEdits(t *testing.T) {
	g := testGenome(t, 1_500_000)
	spec := defaultDivergeSpec()
	spec.chunkSize, spec.threads, spec.invRate = 1<<18, 2, 0
	orig := bytes.Clone(g.seq)
	d, _ := divergeFasta(t, spec, g)
	subs, indels, compared := 0, 0, 0
	for ri := range g.names {
		src, dst := orig[g.start[ri]:g.start[ri+1]], d.record(ri)
		j := 0 // position in dst
		for c := 0; c*spec.chunkSize < len(src); c++ {
			a := c * spec.chunkSize
			chunk := src[a:min(a+spec.chunkSize, len(src))]
			var log []edit
			spec.divergeChunk(nil, chunk, ri, c, &log)
			i := 0
			for _, e := range append(log, edit{len(chunk), 'e', 0}) {
				for ; i < e.pos; i, j = i+1, j+1 {
					if chunk[i] != dst[j] && baseIndex[chunk[i]] != 4 {
						t.Fatalf("record %d chunk %d: unlogged change at %d", ri, c, a+i)
					}
					compared++
				}
				switch e.kind {
				case 's':
					if baseIndex[chunk[i]] != 4 && chunk[i] == dst[j] {
						t.Fatalf("record %d: logged substitution at %d changed nothing", ri, a+i)
					}
					subs++
					i, j = i+1, j+1
				case 'i':
					indels++
					j += e.n
				case 'd':
					indels++
					i += e.n
				}
			}
		}
		if j != len(dst) {
			t.Fatalf("record %d: edits account for %d bases of %d", ri, j, len(dst))
		}
	}
	if r := float64(subs) / float64(len(orig)); r < 0.0093 || r > 0.0107 {
		t.Errorf("substitution rate %.5f, asked 0.01", r)
	}
	if r := float64(indels) / float64(subs); r < 0.07 || r > 0.13 {
		t.Errorf("indels per substitution %.3f, asked 0.1", r)
	}
	if compared < len(orig)*9/10 {
		t.Errorf("only %d of %d bases compared", compared, len(orig))
	}
}

// TestDivergeAlignment measures the divergence without the edit log: windows of the original
// are aligned (banded edit distance) with the copy where their k-mers place them.
func TestDivergeAlignment(t *testing.T) {
	g := testGenome(t, 1_000_000)
	spec := defaultDivergeSpec()
	spec.chunkSize, spec.threads, spec.invRate = 1<<18, 2, 0
	orig := bytes.Clone(g.record(0))
	d, _ := divergeFasta(t, spec, g)
	cp := d.record(0)
	const win, band, k = 2000, 40, 20
	edits, aligned := 0, 0
	for p := 20000; p+win+band < len(orig) && aligned < 40; p += 23000 {
		off, ok := placeWindow(orig[p:p+win], cp, p, k)
		if !ok || p+off < 0 || p+off+win+band > len(cp) {
			continue
		}
		edits += bandedEditDistance(orig[p:p+win], cp[p+off:p+off+win+band], band)
		aligned++
	}
	if aligned < 30 {
		t.Fatalf("only %d windows placed", aligned)
	}
	// Substitutions 1%, indel events 0.1% of ~2 bases each: ~1.2 edits a 100 bases.
	t.Logf("%d windows of %d bases: %.4f edits a base", aligned, win, float64(edits)/float64(aligned*win))
	if r := float64(edits) / float64(aligned*win); r < 0.0095 || r > 0.0145 {
		t.Errorf("edit distance %.4f a base, want about 0.012", r)
	}
}

// placeWindow returns the offset of w (at p in the original) in cp by a majority of its k-mers
// found within 1 kbp of p.
func placeWindow(w, cp []byte, p, k int) (int, bool) {
	votes := map[int]int{}
	lo, hi := max(0, p-1000), min(len(cp), p+len(w)+1000)
	at := map[string][]int{}
	for i := lo; i+k <= hi; i++ {
		at[string(cp[i:i+k])] = append(at[string(cp[i:i+k])], i)
	}
	for i := 0; i+k <= len(w); i += k {
		for _, q := range at[string(w[i:i+k])] {
			votes[q-(p+i)]++
		}
	}
	best, n := 0, 0
	for off, v := range votes {
		if v > n || (v == n && off < best) {
			best, n = off, v
		}
	}
	return best, n >= 10
}

// bandedEditDistance is the edit distance of a against a prefix of b (any length), within a
// diagonal band.
func bandedEditDistance(a, b []byte, band int) int {
	const inf = 1 << 30
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = inf
		if j <= band {
			prev[j] = j
		}
	}
	for i := 1; i <= len(a); i++ {
		for j := range cur {
			cur[j] = inf
		}
		if i <= band {
			cur[0] = i
		}
		for j := max(1, i-band); j <= min(len(b), i+band); j++ {
			c := prev[j-1]
			if a[i-1]|0x20 != b[j-1]|0x20 {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	best := inf
	for j := max(0, len(a)-band); j <= min(len(b), len(a)+band); j++ {
		best = min(best, prev[j])
	}
	return best
}

func TestDivergeInversions(t *testing.T) {
	g := testGenome(t, 2_000_000)
	orig := bytes.Clone(g.seq)
	spec := defaultDivergeSpec()
	spec.invRate, spec.rate, spec.chunkSize, spec.threads = 3e-6, 0.002, 1<<18, 2
	d, inv := divergeFasta(t, spec, g)
	if len(inv) < 2 {
		t.Fatalf("%d inversions at 3e-6 a base in 2 Mbp", len(inv))
	}
	// Each inversion's middle kilobase shows up reverse complemented in the copy, not forward.
	for _, v := range inv {
		ri, mid := v[0], (v[1]+v[2])/2
		w := orig[g.start[ri]+mid-500 : g.start[ri]+mid+500]
		cp := d.record(ri)
		copyKmers := kmerSetStranded(cp[max(0, mid-5000):min(len(cp), mid+5000)], 24)
		fwd, rev := 0, 0
		rc := bytes.Clone(w)
		reverseComplement(rc)
		for i := 0; i+24 <= len(w); i += 24 {
			if copyKmers[string(bytes.ToUpper(w[i:i+24]))] {
				fwd++
			}
			if copyKmers[string(bytes.ToUpper(rc[i:i+24]))] {
				rev++
			}
		}
		if rev < 20 || fwd > rev/4 {
			t.Errorf("inversion %v: %d reverse-complement and %d forward 24-mers of its middle found in the copy", v, rev, fwd)
		}
	}
}

// kmerSetStranded returns the k-mers of seq as uppercase strings, forward strand only.
func kmerSetStranded(seq []byte, k int) map[string]bool {
	up := bytes.ToUpper(seq)
	set := make(map[string]bool, len(seq))
	for i := 0; i+k <= len(up); i++ {
		set[string(up[i:i+k])] = true
	}
	return set
}
