package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refArg returns the reference argument of a mummer command line and whether it has -n.
func refArg(args []string) (ref string, at int, nuc bool) {
	at = -1
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-l":
			i++
		case a == "-n":
			nuc = true
		case strings.HasPrefix(a, "-") && a != "-":
		case at < 0:
			ref, at = a, i
		}
	}
	return ref, at, nuc
}

// TestIndexGolden: on every golden case, mummer against the index (as the reference argument and
// with --index) prints exactly what it prints against the FASTA file.
func TestIndexGolden(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/mummer/*/args")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases found: %v", err)
	}
	tmp := t.TempDir()
	for _, a := range dirs {
		dir, _ := filepath.Abs(filepath.Dir(a))
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, "exit_status"))))) != "0" {
				t.Skip("a case of failure")
			}
			args := strings.Fields(string(must(os.ReadFile(filepath.Join(dir, "args")))))
			t.Chdir(dir)
			want, stderr, st := runSapipe(t, nil, append([]string{"mummer"}, args...)...)
			if st != 0 {
				t.Fatalf("status %d: %s", st, stderr)
			}
			ref, at, nuc := refArg(args)
			sai := filepath.Join(tmp, filepath.Base(dir)+".sai")
			iargs := []string{"index", "-q", ref, "-o", sai}
			if nuc {
				iargs = append(iargs, "-n")
			}
			if _, stderr, st := runSapipe(t, nil, iargs...); st != 0 {
				t.Fatalf("sapipe index: status %d: %s", st, stderr)
			}
			inPlace := slices.Clone(args)
			inPlace[at] = sai
			withOpt := append([]string{"--index", sai}, slices.Delete(slices.Clone(args), at, at+1)...)
			for _, a := range [][]string{inPlace, withOpt} {
				got, stderr, st := runSapipe(t, nil, append([]string{"mummer"}, a...)...)
				if st != 0 || !bytes.Equal(got, want) {
					t.Fatalf("mummer %v: status %d (%s), output differs from the FASTA run: %s", a, st, stderr, firstDiff(got, want))
				}
			}
		})
	}
}

// TestIndexRandom: on random cases, mummer against the index prints what it prints against the
// FASTA file, whatever the options (the index built with -n when the run has it).
func TestIndexRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	n := 120
	if testing.Short() {
		n = 25
	}
	for i := range n {
		dir := t.TempDir()
		ref, qry := randomCase(t, rng, dir, 400, 300)
		if oneEmpty(ref) || oneEmpty(qry) {
			continue
		}
		o := randomOpts(rng)
		refPath, qryPath, sai := filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa"), filepath.Join(dir, "ref.sai")
		args := append([]string{"mummer"}, o.args()...)
		want, stderr, st := runSapipe(t, nil, append(slices.Clone(args), refPath, qryPath)...)
		if st != 0 {
			t.Fatalf("case %d: %s", i, stderr)
		}
		iargs := []string{"index", "-q", "-o", sai, refPath}
		if o.nuc {
			iargs = append(iargs, "-n")
		}
		// Half the cases in pages, some overlapping by less than -l asks.
		pageSize, overlap := 0, 0
		if i%2 == 1 {
			pageSize, overlap = 10+rng.IntN(300), rng.IntN(30)
			iargs = append(iargs, "--page-size", fmt.Sprint(pageSize), "--overlap", fmt.Sprint(overlap))
		}
		if _, stderr, st := runSapipe(t, nil, iargs...); st != 0 {
			t.Fatalf("case %d: sapipe index: %s", i, stderr)
		}
		got, stderr, st := runSapipe(t, nil, append(slices.Clone(args), sai, qryPath)...)
		if pageSize > 0 && o.minLen > overlap+1 && pageSize < refLen(ref) {
			if st != 1 || len(got) != 0 || !strings.Contains(string(stderr), "rebuild the index with sapipe index --overlap") {
				t.Fatalf("case %d %v against pages of %d overlapping by %d: status %d, stderr %q", i, args, pageSize, overlap, st, stderr)
			}
			continue
		}
		if st != 0 || !bytes.Equal(got, want) {
			t.Fatalf("case %d %v (pages of %d overlapping by %d): status %d (%s): %s", i, args, pageSize, overlap, st, stderr, firstDiff(got, want))
		}
	}
}

// TestIndexErrors: -n disagreeing with the index, and damaged, truncated or foreign index files,
// are one-line errors with status 1 that leave no output file.
func TestIndexErrors(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.fa")
	qry := filepath.Join(dir, "qry.fa")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaacccnnnnacgtttgca\n>s\nggggcccaaatttacgatcgatcg\n"), 0o644)
	os.WriteFile(qry, []byte(">q\nacgtacgtaaa\n"), 0o644)
	sai := filepath.Join(dir, "ref.sai")
	if _, stderr, st := runSapipe(t, nil, "index", "-q", ref, "-o", sai); st != 0 {
		t.Fatal(string(stderr))
	}
	good := must(os.ReadFile(sai))
	bad := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x20
	version := slices.Clone(good)
	version[6] = 9
	out := filepath.Join(dir, "out.txt")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"mummer", "-n", "-l", "3", sai, qry}, "built without -n"},
		{[]string{"mummer", "-l", "3", "--index", ref, qry}, "not a sapipe index file"},
		{[]string{"mummer", "-l", "3", "--index", sai}, "missing query file"},
		{[]string{"mummer", "-l", "3", "-o", out, bad("flip.sai", flipped), qry}, "damaged index: checksum mismatch"},
		{[]string{"mummer", "-l", "3", "-o", out, bad("cut.sai", good[:len(good)-7]), qry}, "truncated"},
		{[]string{"mummer", "-l", "3", bad("v9.sai", version), qry}, "unsupported index version 9"},
		{[]string{"count", "-o", out, "-i", bad("flip2.sai", flipped), qry}, "checksum mismatch"},
		{[]string{"locate", "-i", bad("cut2.sai", good[:100]), qry}, "truncated"},
		{[]string{"count", qry}, "-i INDEX is needed"},
		{[]string{"count", "-i", sai, "-b", "-r", qry}, "exclude each other"},
		{[]string{"count", "-i", sai, "-n", qry}, "built without -n"},
		{[]string{"count", "-i", sai, filepath.Join(dir, "none.fa")}, "none.fa"},
		{[]string{"count", "-i", filepath.Join(dir, "none.sai"), qry}, "none.sai"},
		{[]string{"index", "-q"}, "want one reference file"},
		{[]string{"index", "-q", "-"}, "-o is needed"},
		{[]string{"index", "-q", ref, "--bogus"}, "not defined"},
		{[]string{"index", "-q", filepath.Join(dir, "none.fa"), "-o", out}, "none.fa"},
	} {
		stdout, stderr, st := runSapipe(t, nil, c.args...)
		if st != 1 || len(stdout) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) ||
			!bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want one line with %q", c.args, st, stdout, stderr, c.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: left %s behind", c.args, out)
			os.Remove(out)
		}
	}
	// The same index built with -n serves -n runs.
	if _, stderr, st := runSapipe(t, nil, "index", "-q", "-n", "-o", sai, ref); st != 0 {
		t.Fatal(string(stderr))
	}
	if _, stderr, st := runSapipe(t, nil, "mummer", "-n", "-l", "3", sai, qry); st != 0 {
		t.Errorf("-n index with -n: %s", stderr)
	}
	if _, stderr, st := runSapipe(t, nil, "mummer", "-l", "3", sai, qry); st != 1 || !bytes.Contains(stderr, []byte("built with -n")) {
		t.Errorf("-n index without -n: status %d, %s", st, stderr)
	}
}

// TestCountLocateCLI: count and locate from an index file and from the FASTA file agree with
// each other and with a brute-force search, with patterns as lines, FASTA and FASTQ, from files
// and stdin.
func TestCountLocateCLI(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 5))
	dir := t.TempDir()
	ref := []fastaRec{{"chrA", genSeq(rng, 3000)}, {"chrB", genSeq(rng, 800)}, {"chrC", genSeq(rng, 1500)}}
	refPath, sai, paged := filepath.Join(dir, "ref.fa"), filepath.Join(dir, "ref.sai"), filepath.Join(dir, "paged.sai")
	writeFasta(t, refPath, ref, 70, false)
	if _, stderr, st := runSapipe(t, nil, "index", refPath, "-o", sai, "-q"); st != 0 {
		t.Fatal(string(stderr))
	}
	// Pages of 700 bases overlapping by 9: patterns of up to 25 bases run past their windows.
	if _, stderr, st := runSapipe(t, nil, "index", refPath, "-o", paged, "-q", "--page-size", "700", "--overlap", "9"); st != 0 {
		t.Fatal(string(stderr))
	}
	var pats []fastaRec
	for i := range 200 {
		l := 1 + rng.IntN(25)
		r := ref[rng.IntN(len(ref))].seq
		p := genSeq(rng, l)
		if rng.IntN(3) > 0 && len(r) > l {
			a := rng.IntN(len(r) - l)
			p = r[a : a+l]
		}
		if rng.IntN(4) == 0 {
			p = revComp(p)
		}
		pats = append(pats, fastaRec{fmt.Sprintf("p%d", i+1), p})
	}
	patFa := filepath.Join(dir, "pats.fa")
	writeFasta(t, patFa, pats, 10, false)
	var lines strings.Builder
	for _, p := range pats {
		lines.WriteString(p.seq + "\n")
	}
	for _, strand := range [][]string{nil, {"-b"}, {"-r"}} {
		// Brute force: occurrences on the lowercased records, forward then reverse complement.
		var wantCount, wantLocate, wantLineCount strings.Builder
		for _, p := range pats {
			total := 0
			for _, s := range []struct {
				pat  string
				sign string
				on   bool
			}{{p.seq, "+", len(strand) == 0 || strand[0] == "-b"}, {revComp(p.seq), "-", len(strand) > 0}} {
				if !s.on {
					continue
				}
				pl := strings.ToLower(s.pat)
				for _, r := range ref {
					rl := strings.ToLower(r.seq)
					for at := 0; at+len(pl) <= len(rl); at++ {
						if rl[at:at+len(pl)] == pl {
							total++
							fmt.Fprintf(&wantLocate, "%s\t%s\t%d\t%s\n", p.name, r.name, at+1, s.sign)
						}
					}
				}
			}
			fmt.Fprintf(&wantCount, "%s\t%d\n", p.name, total)
			fmt.Fprintf(&wantLineCount, "%s\t%d\n", p.seq, total)
		}
		for _, idx := range []string{sai, refPath, paged} {
			got, stderr, st := runSapipe(t, nil, append([]string{"count", "-q", "-i", idx, patFa}, strand...)...)
			if st != 0 || string(got) != wantCount.String() {
				t.Fatalf("count %v -i %s: status %d (%s): %s", strand, idx, st, stderr, firstDiff(got, []byte(wantCount.String())))
			}
			got, stderr, st = runSapipe(t, nil, append([]string{"locate", "-q", "-t", "1", "--batch-size", "50", "-i", idx, patFa}, strand...)...)
			if st != 0 || string(got) != wantLocate.String() {
				t.Fatalf("locate %v -i %s: status %d (%s): %s", strand, idx, st, stderr, firstDiff(got, []byte(wantLocate.String())))
			}
			got, stderr, st = runSapipe(t, []byte(lines.String()), append([]string{"count", "-q", "-i", idx, "-"}, strand...)...)
			if st != 0 || string(got) != wantLineCount.String() {
				t.Fatalf("count %v of lines on stdin: status %d (%s): %s", strand, st, stderr, firstDiff(got, []byte(wantLineCount.String())))
			}
		}
	}
	// Options after the file, as in "sapipe index ref.fa -o ref.sai", and -o writes the file.
	out := filepath.Join(dir, "counts.tsv")
	if _, stderr, st := runSapipe(t, nil, "count", patFa, "-i", sai, "-o", out, "-q"); st != 0 {
		t.Fatal(string(stderr))
	}
	if b := must(os.ReadFile(out)); !bytes.HasPrefix(b, []byte("p1\t")) {
		t.Errorf("count -o wrote %q", b[:min(len(b), 40)])
	}
}

// TestCountRealGenome: count and locate on E. coli (../shared/data) agree with a brute-force
// search for reads cut from the genome, both strands.
func TestCountRealGenome(t *testing.T) {
	if testing.Short() {
		t.Skip("real genome: not in -short")
	}
	fa := readGenome(t, "ecoli_k12_mg1655.fna.gz")
	seq := strings.ToLower(sequenceOf(fa))
	dir := t.TempDir()
	refPath, sai := filepath.Join(dir, "ecoli.fa"), filepath.Join(dir, "ecoli.sai")
	os.WriteFile(refPath, fa, 0o644)
	if _, stderr, st := runSapipe(t, nil, "index", "-q", "-o", sai, refPath); st != 0 {
		t.Fatal(string(stderr))
	}
	rng := rand.New(rand.NewPCG(33, 6))
	var in, want strings.Builder
	name := strings.Fields(string(fa[1:bytes.IndexByte(fa, '\n')]))[0]
	for i := range 60 {
		l := []int{8, 12, 20, 50, 150}[rng.IntN(5)]
		a := rng.IntN(len(seq) - l)
		p := seq[a : a+l]
		if i%3 == 0 {
			p = strings.ToLower(mutate(rng, p))
		}
		fmt.Fprintf(&in, ">r%d\n%s\n", i, strings.ToUpper(p))
		for _, s := range []struct{ pat, sign string }{{p, "+"}, {strings.ToLower(revComp(p)), "-"}} {
			for at := 0; ; {
				k := strings.Index(seq[at:], s.pat)
				if k < 0 || len(s.pat) == 0 {
					break
				}
				fmt.Fprintf(&want, "r%d\t%s\t%d\t%s\n", i, name, at+k+1, s.sign)
				at += k + 1
			}
		}
	}
	got, stderr, st := runSapipe(t, []byte(in.String()), "locate", "-q", "-b", "-i", sai, "-")
	if st != 0 || string(got) != want.String() {
		t.Fatalf("status %d (%s): %s", st, stderr, firstDiff(got, []byte(want.String())))
	}
}

// refLen returns the length of the text that ref's records make: their bases and one separator
// between neighbours.
func refLen(ref []fastaRec) int {
	n := len(ref) - 1
	for _, r := range ref {
		n += len(r.seq)
	}
	return n
}

// TestIndexVersion2CLI: an index file of version 2 (written before pages) still serves mummer,
// count and locate, with the output of its FASTA file.
func TestIndexVersion2CLI(t *testing.T) {
	fa, sai := "../../formats/testdata/index/v2.fa", "../../formats/testdata/index/v2.sai"
	text := string(must(os.ReadFile(fa)))
	lines := strings.Split(text, "\n")
	var reads strings.Builder
	for i := 1; i+1 < len(lines); i += 7 {
		if !strings.HasPrefix(lines[i], ">") && len(lines[i]) > 30 {
			fmt.Fprintf(&reads, ">q%d\n%s\n", i, lines[i])
		}
	}
	q := filepath.Join(t.TempDir(), "q.fa")
	if err := os.WriteFile(q, []byte(reads.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mummer", "-maxmatch", "-l", "15", "-b", "-c"}, {"mummer", "-mum", "-l", "20"}, {"count", "-b", "-i"}, {"locate", "-i"}} {
		run := func(ref string) []byte {
			a := append(slices.Clone(args), ref, q)
			out, stderr, st := runSapipe(t, nil, a...)
			if st != 0 {
				t.Fatalf("%v: status %d: %s", a, st, stderr)
			}
			return out
		}
		want, got := run(fa), run(sai)
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%v: the version 2 index prints otherwise than its FASTA file: %s", args, firstDiff(got, want))
		}
	}
}
