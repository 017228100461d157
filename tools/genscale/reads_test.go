package main

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func sampleReads(t *testing.T, spec readsSpec, g *fasta) []byte {
	t.Helper()
	s, err := newReadSampler(spec, g)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// origin parses a read name rINDEX_RECORD_POSITION_STRAND (RECORD may hold '_').
func origin(t *testing.T, name string) (index int, rec string, pos int, minus bool) {
	t.Helper()
	f := strings.Split(name, "_")
	if len(f) < 4 || f[0][0] != 'r' {
		t.Fatalf("read name %q", name)
	}
	index, err1 := strconv.Atoi(f[0][1:])
	pos, err2 := strconv.Atoi(f[len(f)-2])
	strand := f[len(f)-1]
	if err1 != nil || err2 != nil || (strand != "+" && strand != "-") {
		t.Fatalf("read name %q", name)
	}
	return index, strings.Join(f[1:len(f)-2], "_"), pos, strand == "-"
}

func TestReadsOrigin(t *testing.T) {
	g := testGenome(t, 2_000_000)
	spec := defaultReadsSpec()
	spec.n, spec.errRate, spec.nRate, spec.chunkReads, spec.threads = 20000, 0.01, 0.001, 1000, 3
	out := sampleReads(t, spec, g)
	spec.threads = 1
	if again := sampleReads(t, spec, g); !bytes.Equal(out, again) {
		t.Fatal("1 thread gave other reads than 3")
	}
	// Fewer reads with the same seed are the first of them.
	spec.n = 1500
	if few := sampleReads(t, spec, g); !bytes.HasPrefix(out, few) {
		t.Fatal("1500 reads are not the first 1500 of 20000")
	}
	spec.n = 20000
	recs := map[string][]byte{}
	for i, n := range g.names {
		recs[n] = g.record(i)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4*spec.n {
		t.Fatalf("%d lines for %d reads", len(lines), spec.n)
	}
	var subs, ns, refN, bases, minus, worst int
	perRecord := map[string]int{}
	for k := 0; k < len(lines); k += 4 {
		head, seq, plus, qual := lines[k], lines[k+1], lines[k+2], lines[k+3]
		if head[0] != '@' || plus != "+" || len(qual) != len(seq) || len(seq) != 150 {
			t.Fatalf("read %d: not a FASTQ record of 150 bases: %q", k/4+1, lines[k:k+4])
		}
		index, rec, pos, rc := origin(t, head[1:])
		if index != k/4+1 {
			t.Fatalf("read %d named %q", k/4+1, head)
		}
		ref := bytes.ToUpper(bytes.Clone(recs[rec][pos-1 : pos-1+len(seq)]))
		for i, c := range ref {
			if baseIndex[c] == 4 {
				ref[i] = 'N'
			}
		}
		if rc {
			reverseComplement(ref)
			minus++
		}
		perRecord[rec]++
		mism := 0
		for i := range seq {
			switch {
			case seq[i] == 'N':
				if qual[i] != '#' {
					t.Fatalf("read %d: N with quality %q", k/4+1, qual[i])
				}
				ns++
			case ref[i] == 'N':
				refN++ // a random base where the genome has N
			case seq[i] != ref[i]:
				mism++
				if qual[i] > '5' {
					t.Errorf("read %d: error at %d with quality %q", k/4+1, i, qual[i])
				}
			}
			if qual[i] < '#' || qual[i] > 'J' {
				t.Fatalf("read %d: quality %q", k/4+1, qual[i])
			}
		}
		subs += mism
		worst = max(worst, mism)
		bases += len(seq)
	}
	// Reads come from where their names say, up to the errors: 1% substitutions (1.5 a read on
	// average), 0.1% N.
	if r := float64(subs) / float64(bases); r < 0.009 || r > 0.011 {
		t.Errorf("substitution rate %.5f, asked 0.01", r)
	}
	if r := float64(ns) / float64(bases); r < 0.0007 || r > 0.0013 {
		t.Errorf("N rate %.5f, asked 0.001", r)
	}
	if refN == 0 {
		t.Error("no read over a run of N")
	}
	if bytes.Contains(out, bytes.Repeat([]byte("N"), 10)) {
		t.Error("a read has a run of N")
	}
	if worst > 12 {
		t.Errorf("a read differs from its origin at %d bases", worst)
	}
	if f := float64(minus) / float64(spec.n); f < 0.48 || f > 0.52 {
		t.Errorf("%.3f of reads on the minus strand", f)
	}
	if f := float64(perRecord["chr1"]) / float64(spec.n); f < 0.47 || f > 0.53 {
		t.Errorf("%.3f of reads from chr1, which holds half the genome", f)
	}
}

func TestReadsFormats(t *testing.T) {
	g := testGenome(t, 1_000_000)
	spec := defaultReadsSpec()
	spec.n, spec.minLen, spec.maxLen, spec.errRate, spec.nRate = 3000, 20, 150, 0, 0
	spec.format = "fasta"
	fa := strings.Split(strings.TrimSuffix(string(sampleReads(t, spec, g)), "\n"), "\n")
	spec.format = "lines"
	lines := strings.Split(strings.TrimSuffix(string(sampleReads(t, spec, g)), "\n"), "\n")
	if len(fa) != 2*spec.n || len(lines) != spec.n {
		t.Fatalf("%d FASTA lines and %d lines for %d reads", len(fa), len(lines), spec.n)
	}
	short, long := 0, 0
	for k, l := range lines {
		if len(l) < 20 || len(l) > 150 {
			t.Fatalf("pattern of %d bases", len(l))
		}
		short += btoi(len(l) < 50)
		long += btoi(len(l) > 120)
		// The same reads in both formats; without errors each is its origin exactly (but for
		// random bases where the genome has N).
		if fa[2*k][0] != '>' || fa[2*k+1] != l {
			t.Fatalf("read %d: FASTA %q, line %q", k+1, fa[2*k:2*k+2], l)
		}
		_, rec, pos, rc := origin(t, fa[2*k][1:])
		ri := slices.Index(g.names, rec)
		ref := bytes.ToUpper(bytes.Clone(g.record(ri)[pos-1 : pos-1+len(l)]))
		if rc {
			reverseComplement(ref)
		}
		for i := range ref {
			if ref[i] != l[i] && ref[i] != 'N' {
				t.Fatalf("read %q is %s, its origin %s", fa[2*k], l, ref)
			}
		}
	}
	if short < 400 || long < 400 {
		t.Errorf("lengths not spread over 20-150: %d under 50, %d over 120", short, long)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReadsTooShort(t *testing.T) {
	g := &fasta{names: []string{"a"}, start: []int{0, 100}, seq: bytes.Repeat([]byte("A"), 100)}
	spec := defaultReadsSpec()
	if _, err := newReadSampler(spec, g); err == nil {
		t.Error("150-base reads from a 100-base genome: no error")
	}
}

func BenchmarkReads(b *testing.B) {
	spec := smallSpec(4_000_000)
	g := newGenerator(spec)
	g.generate()
	f := &fasta{names: []string{"chr1", "chr2", "chr3", "chr4"}, start: []int{0, 1e6, 2e6, 3e6, 4e6}, seq: g.seq}
	rs := defaultReadsSpec()
	rs.n, rs.threads = 200_000, 2
	s, err := newReadSampler(rs, f)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for b.Loop() {
		var w countingWriter
		if err := s.write(&w); err != nil {
			b.Fatal(err)
		}
		n = int64(w)
	}
	b.SetBytes(n)
	b.ReportMetric(float64(rs.n)*float64(b.N)/b.Elapsed().Seconds(), "reads/s")
}

type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
