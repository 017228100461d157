package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Real genomes from ../shared/data (beside the repository in CI), compared with the real mummer.
const sharedData = "../../../shared/data"

func readGenome(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedData, name))
	if err != nil {
		t.Skipf("real data not available: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sequenceOf returns the concatenated sequence lines of a FASTA file's first record.
func sequenceOf(fa []byte) string {
	var b strings.Builder
	for i, l := range strings.Split(string(fa), "\n") {
		if i == 0 {
			continue
		}
		if strings.HasPrefix(l, ">") {
			break
		}
		b.WriteString(strings.TrimSpace(l))
	}
	return b.String()
}

// mutate returns a copy of s with about 1% substitutions, 0.05% deletions and an inverted
// stretch, like the benchmark's mutated genome.
func mutate(rng *rand.Rand, s string) string {
	b := make([]byte, 0, len(s))
	for i := range len(s) {
		switch r := rng.Float64(); {
		case r < 0.01:
			b = append(b, "ACGT"[rng.IntN(4)])
		case r < 0.0105:
		default:
			b = append(b, s[i])
		}
	}
	a, e := len(b)/5, len(b)/5+len(b)/25
	inv := strings.ToUpper(revComp(string(b[a:e])))
	copy(b[a:e], inv)
	return string(b)
}

// simulateReads draws n reads of length l from both strands with 0.5% substitutions and the odd N.
func simulateReads(rng *rand.Rand, s string, n, l int) []fastaRec {
	reads := make([]fastaRec, n)
	for i := range reads {
		p := rng.IntN(len(s) - l)
		r := []byte(s[p : p+l])
		for j := range r {
			if x := rng.IntN(400); x < 2 {
				r[j] = "ACGTN"[rng.IntN(5)]
			}
		}
		seq := string(r)
		if rng.IntN(2) == 0 {
			seq = revComp(seq)
		}
		reads[i] = fastaRec{name: "read" + itoa(i+1), seq: seq}
	}
	return reads
}

func compareWithMummer(t *testing.T, args []string) {
	t.Helper()
	mummer, err := exec.LookPath("mummer")
	if err != nil {
		t.Skip("mummer not on PATH")
	}
	var want bytes.Buffer
	cmd := exec.Command(mummer, args...)
	cmd.Stdout = &want
	if err := cmd.Run(); err != nil {
		t.Fatalf("mummer %v: %v", args, err)
	}
	got, stderr, st := runSapipe(t, nil, append([]string{"mummer", "-q"}, args...)...)
	if st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	if want.Len() < 1000 {
		t.Fatalf("mummer printed only %d bytes: the case tests nothing", want.Len())
	}
	if g, w := canonical(got, false), canonical(want.Bytes(), false); !bytes.Equal(g, w) {
		t.Fatalf("%v: output differs from mummer: %s", args, firstDiff(g, w))
	}
}

// TestRealGenomes: E. coli against a mutated copy of itself and against the 1% eukaryote genomes.
func TestRealGenomes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs mummer on whole genomes")
	}
	dir := t.TempDir()
	ecoli := readGenome(t, "ecoli_k12_mg1655.fna.gz")
	ref := filepath.Join(dir, "ecoli.fa")
	os.WriteFile(ref, ecoli, 0o644)
	mut := filepath.Join(dir, "ecoli_mut.fa")
	writeFasta(t, mut, []fastaRec{{"ecoli_mut", mutate(rand.New(rand.NewPCG(11, 12)), sequenceOf(ecoli))}}, 80, false)
	t.Run("mutated-maxmatch", func(t *testing.T) { compareWithMummer(t, []string{"-maxmatch", "-l", "20", "-b", "-c", ref, mut}) })
	t.Run("mutated-mum", func(t *testing.T) { compareWithMummer(t, []string{"-mum", "-l", "20", "-b", "-c", "-L", ref, mut}) })
	for _, g := range []string{"dm1pct", "at1pct", "ce1pct"} {
		t.Run(g, func(t *testing.T) {
			p := filepath.Join(dir, g+".fa")
			os.WriteFile(p, readGenome(t, g+".fa.gz"), 0o644)
			// Unrelated genomes share few long matches: -l 15 gives some hundred kilobytes of them.
			compareWithMummer(t, []string{"-maxmatch", "-l", "15", "-b", "-c", ref, p})
			// The multi-record genome as the reference: 4-column output.
			compareWithMummer(t, []string{"-mumreference", "-l", "15", "-b", p, ref})
		})
	}
}

// TestRealReads: simulated 150 bp reads against E. coli, as a read-mapping step would run.
func TestRealReads(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs mummer")
	}
	dir := t.TempDir()
	ecoli := readGenome(t, "ecoli_k12_mg1655.fna.gz")
	ref := filepath.Join(dir, "ecoli.fa")
	os.WriteFile(ref, ecoli, 0o644)
	reads := filepath.Join(dir, "reads.fa")
	writeFasta(t, reads, simulateReads(rand.New(rand.NewPCG(13, 14)), sequenceOf(ecoli), 20000, 150), 150, false)
	compareWithMummer(t, []string{"-maxmatch", "-l", "20", "-b", "-c", ref, reads})
	compareWithMummer(t, []string{"-mum", "-l", "25", "-b", ref, reads})
	compareWithMummer(t, []string{"-n", "-l", "20", "-r", ref, reads})
}
