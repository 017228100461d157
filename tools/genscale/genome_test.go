package main

import (
	"bytes"
	"slices"
	"testing"
)

// smallSpec is a genome of a few Mbp in chunks of 256 kbp, so that tests see many chunks.
func smallSpec(size int) genomeSpec {
	s := defaultGenomeSpec()
	s.size, s.recordSize, s.chunkSize = size, 1_000_000, 1<<18
	return s
}

func generateFasta(t testing.TB, spec genomeSpec, width int) []byte {
	t.Helper()
	g := newGenerator(spec)
	g.generate()
	var b bytes.Buffer
	if err := g.writeFasta(&b, width); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGenomeDeterministic(t *testing.T) {
	spec := smallSpec(3_000_000)
	spec.threads = 1
	one := generateFasta(t, spec, 60)
	for _, threads := range []int{2, 7} {
		spec.threads = threads
		if again := generateFasta(t, spec, 60); !bytes.Equal(one, again) {
			t.Fatalf("%d threads gave other bytes than 1 thread", threads)
		}
	}
	spec.seed++
	if other := generateFasta(t, spec, 60); bytes.Equal(one, other) {
		t.Fatal("another seed gave the same genome")
	}
}

func TestGenomeLayout(t *testing.T) {
	for _, width := range []int{60, 80} {
		spec := smallSpec(2_500_000)
		spec.threads = 2
		out := generateFasta(t, spec, width)
		g, err := parseFasta(bytes.NewReader(out), len(out), 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"chr1", "chr2", "chr3"}; !slices.Equal(g.names, want) {
			t.Fatalf("records %v, want %v", g.names, want)
		}
		for i, want := range []int{1_000_000, 1_000_000, 500_000} {
			if n := len(g.record(i)); n != want {
				t.Errorf("record %d: %d bases, want %d", i, n, want)
			}
		}
		// Every line full but each record's last; only ACGTN and soft-masked acgt.
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		for i, l := range lines {
			if l[0] == '>' {
				continue
			}
			last := i+1 == len(lines) || lines[i+1][0] == '>'
			if len(l) > width || (!last && len(l) != width) {
				t.Fatalf("width %d: line %d has %d bases", width, i+1, len(l))
			}
			if j := bytes.IndexFunc(l, func(r rune) bool { return !bytes.ContainsRune([]byte("ACGTNacgt"), r) }); j >= 0 {
				t.Fatalf("line %d: byte %q", i+1, l[j])
			}
		}
	}
	// Large layouts, not generated: 5 Gbp records (over 4 Gbp, past 32-bit positions).
	spec := genomeSpec{size: 16e9, recordSize: 5e9, prefix: "chr"}
	recs := spec.layout()
	if len(recs) != 4 || recs[3].length != 1e9 || recs[3].start != 15e9 || recs[1].name != "chr2" {
		t.Fatalf("16 Gbp in 5 Gbp records: %+v", recs)
	}
	spec = genomeSpec{size: 3.1e9, recordSize: 250e6, prefix: "chr"}
	if recs := spec.layout(); len(recs) != 13 || recs[12].length != 100e6 {
		t.Fatalf("3.1 Gbp: %d records, the last %d bases", len(recs), recs[len(recs)-1].length)
	}
}

type composition struct{ n, lower, gc, acgt int }

func compose(seq []byte) (c composition) {
	for _, b := range seq {
		switch b {
		case 'N':
			c.n++
		case 'a', 'c', 'g', 't':
			c.lower++
		}
		switch b | 0x20 {
		case 'g', 'c':
			c.gc++
			c.acgt++
		case 'a', 't':
			c.acgt++
		}
	}
	return c
}

func TestGenomeComposition(t *testing.T) {
	for _, nFrac := range []float64{0.015, 0.05} {
		spec := smallSpec(4_000_000)
		spec.nFrac, spec.threads = nFrac, 2
		g := newGenerator(spec)
		g.generate()
		c := compose(g.seq)
		n := float64(len(g.seq))
		if f := float64(c.n) / n; f < 0.8*nFrac || f > 1.2*nFrac {
			t.Errorf("N fraction %.4f, asked %.4f", f, nFrac)
		}
		if c.n+c.acgt != len(g.seq) {
			t.Errorf("%d bytes neither N nor ACGT", len(g.seq)-c.n-c.acgt)
		}
		// Soft-masked: the repeat copies (repeats+tandem, and their duplicates), ~47%.
		if f := float64(c.lower) / n; f < 0.35 || f > 0.6 {
			t.Errorf("lowercase fraction %.3f, want about 0.47", f)
		}
		if gc := float64(c.gc) / float64(c.acgt); gc < 0.38 || gc > 0.48 {
			t.Errorf("GC %.3f, want about 0.41-0.45", gc)
		}
	}
	spec := smallSpec(1_000_000)
	spec.softmask = 0
	g := newGenerator(spec)
	g.generate()
	if c := compose(g.seq); c.lower != 0 {
		t.Errorf("--softmask 0: %d lowercase bases", c.lower)
	}
}

// canonicalKmers calls fn with the canonical (smaller of both strands) k-mer, k <= 32, 2 bits
// a base, at every position of seq whose k bases have no N.
func canonicalKmers(seq []byte, k int, fn func(uint64)) {
	mask := uint64(1)<<(2*k) - 1
	if k == 32 {
		mask = ^uint64(0)
	}
	var f, r uint64
	valid := 0
	for _, c := range seq {
		b := uint64(baseIndex[c])
		if b == 4 {
			valid = 0
			continue
		}
		f = (f<<2 | b) & mask
		r = r>>2 | (3-b)<<(2*(k-1))
		if valid++; valid >= k {
			fn(min(f, r))
		}
	}
}

// repeatedShare returns the share of 32-mer positions (without N, either strand) whose 32-mer
// occurs more than once in seq.
func repeatedShare(seq []byte) float64 {
	var kmers []uint64
	canonicalKmers(seq, 32, func(x uint64) { kmers = append(kmers, x) })
	slices.Sort(kmers)
	repeated := 0
	for i := 0; i < len(kmers); {
		j := i + 1
		for j < len(kmers) && kmers[j] == kmers[i] {
			j++
		}
		if j-i > 1 {
			repeated += j - i
		}
		i = j
	}
	return float64(repeated) / float64(len(kmers))
}

func TestGenomeRepeats(t *testing.T) {
	spec := smallSpec(1_000_000)
	spec.threads = 2
	g := newGenerator(spec)
	g.generate()
	// Random 1 Mbp has about (1e6)^2/2/4^32 ~ 3e-8 repeated 32-mers; the repeat families, the
	// tandem arrays and the duplications make several % of positions repeated.
	share := repeatedShare(g.seq)
	if share < 0.03 {
		t.Errorf("%.4f of 32-mers repeated, want several %%", share)
	}
	spec.repeats, spec.tandem, spec.segdup = 0, 0, 0
	plain := newGenerator(spec)
	plain.generate()
	if s := repeatedShare(plain.seq); s > 0.001 {
		t.Errorf("without repeats, %.4f of 32-mers repeated, want ~0", s)
	}
	t.Logf("repeated 32-mers: %.4f with repeats, %.6f without", share, repeatedShare(plain.seq))
}

func TestSegmentalDuplications(t *testing.T) {
	spec := smallSpec(8_000_000)
	spec.threads = 2
	g := newGenerator(spec)
	events := g.planSegDups()
	covered := 0
	for _, e := range events {
		covered += e.length
	}
	if f := float64(covered) / float64(spec.size); f < 0.045 || f > 0.06 {
		t.Errorf("duplications cover %.3f, asked %.3f", f, spec.segdup)
	}
	g.generate()
	// A recent duplication (under 1% divergence) shares most of its 32-mers with its source.
	checked := 0
	for _, e := range events {
		if e.div > 0.01 || e.length < 5000 {
			continue
		}
		src := kmerSet(g.seq[e.src:e.src+e.length], 32)
		dst := kmerSet(g.seq[e.dst:e.dst+e.length], 32)
		shared := 0
		for k := range dst {
			if src[k] {
				shared++
			}
		}
		// Runs of N written over either copy lower the share; most events see none.
		if f := float64(shared) / float64(len(dst)); f < 0.5 {
			t.Errorf("duplication %+v: %.2f of its 32-mers in its source", e, f)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no recent duplication to check")
	}
}

// kmerSet returns the canonical k-mers (k <= 32) of seq without N.
func kmerSet(seq []byte, k int) map[uint64]bool {
	set := map[uint64]bool{}
	canonicalKmers(seq, k, func(x uint64) { set[x] = true })
	return set
}

func BenchmarkGenome(b *testing.B) {
	spec := defaultGenomeSpec()
	spec.size, spec.threads = 32_000_000, 2
	for b.Loop() {
		g := newGenerator(spec)
		g.generate()
	}
	b.SetBytes(int64(spec.size))
}
