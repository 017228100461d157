package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// A randomly generated case: reference and query records and a mummer command line.
type fastaRec struct{ name, seq string }

func writeFasta(t testing.TB, path string, recs []fastaRec, width int, crlf bool) {
	t.Helper()
	var b strings.Builder
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	for _, r := range recs {
		b.WriteString(">" + r.name + " some description" + nl)
		for i := 0; i < len(r.seq); i += width {
			b.WriteString(r.seq[i:min(i+width, len(r.seq))] + nl)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// genSeq returns a sequence with repeats (forward and reverse complement copies of earlier
// pieces), N runs, mixed case and the odd IUPAC code.
func genSeq(rng *rand.Rand, n int) string {
	b := make([]byte, 0, n)
	for len(b) < n {
		switch k := rng.IntN(20); {
		case k < 3 && len(b) > 20: // repeat
			s := rng.IntN(len(b) - 10)
			e := min(len(b), s+10+rng.IntN(80))
			piece := slices.Clone(b[s:e])
			if rng.IntN(2) == 0 {
				piece = []byte(revComp(string(piece)))
			}
			for i := range piece {
				if rng.IntN(40) == 0 {
					piece[i] = "acgt"[rng.IntN(4)]
				}
			}
			b = append(b, piece...)
		case k == 3:
			b = append(b, bytes.Repeat([]byte{"Nn"[rng.IntN(2)]}, 1+rng.IntN(12))...)
		case k == 4:
			b = append(b, "ryswkmbdhv"[rng.IntN(10)])
		case k == 5: // a periodic stretch
			unit := make([]byte, 1+rng.IntN(3))
			for i := range unit {
				unit[i] = "acgt"[rng.IntN(4)]
			}
			b = append(b, bytes.Repeat(unit, 5+rng.IntN(15))...)
		default:
			for range 1 + rng.IntN(30) {
				c := "acgt"[rng.IntN(4)]
				if rng.IntN(3) == 0 {
					c -= 'a' - 'A'
				}
				b = append(b, c)
			}
		}
	}
	return string(b[:n])
}

// genQuery cuts a query from the reference text (maybe reverse complemented), mutates it, or
// makes it up.
func genQuery(rng *rand.Rand, ref []fastaRec, n int) string {
	var all strings.Builder
	for _, r := range ref {
		all.WriteString(r.seq)
	}
	t := all.String()
	if rng.IntN(6) == 0 || len(t) < 2 {
		return genSeq(rng, n)
	}
	s := rng.IntN(len(t) - 1)
	q := []byte(t[s:min(len(t), s+n)])
	for i := range q {
		if rng.IntN(25) == 0 {
			q[i] = "acgtN"[rng.IntN(5)]
		}
	}
	if rng.IntN(2) == 0 {
		return revComp(string(q))
	}
	return string(q)
}

var complement = func() [256]byte {
	var c [256]byte
	for i := range c {
		c[i] = 'n'
	}
	for _, p := range []string{"at", "cg", "ry", "ss", "ww", "mk", "bv", "dh"} {
		c[p[0]], c[p[1]] = p[1], p[0]
	}
	return c
}()

func revComp(s string) string {
	b := make([]byte, len(s))
	for i := range s {
		b[len(s)-1-i] = complement[lowerByte(s[i])]
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// naiveMummer is the brute-force MEM oracle: every reference position against every query
// position, with mummer's rules written out plainly.
func naiveMummer(ref, qry []fastaRec, o naiveOpts) []byte {
	var text []byte
	var starts []int
	for i, r := range ref {
		if i > 0 {
			text = append(text, 0)
		}
		starts = append(starts, len(text))
		text = append(text, strings.ToLower(r.seq)...)
	}
	matchable := func(c byte) bool {
		if o.nuc {
			return c == 'a' || c == 'c' || c == 'g' || c == 't'
		}
		return c != 0
	}
	eq := func(a, b byte) bool { return a == b && matchable(a) }
	recOf := func(p int) int {
		i, _ := slices.BinarySearch(starts, p+1)
		return i - 1
	}
	maxName := 0
	for _, r := range ref {
		maxName = max(maxName, len(r.name))
	}
	var out bytes.Buffer
	for _, qr := range qry {
		for _, reverse := range []bool{false, true} {
			if (!reverse && o.revOnly) || (reverse && !o.both && !o.revOnly) {
				continue
			}
			q := []byte(strings.ToLower(qr.seq))
			if reverse {
				q = []byte(revComp(qr.seq))
			}
			fmt.Fprintf(&out, "> %s", qr.name)
			if reverse {
				out.WriteString(" Reverse")
			}
			if o.showLen {
				fmt.Fprintf(&out, "  Len = %d", len(q))
			}
			out.WriteString("\n")
			var ms []kernels.Match
			for qp := range q {
				best, count, bestR := 0, 0, 0
				for rp := range text {
					l := 0
					for rp+l < len(text) && qp+l < len(q) && eq(text[rp+l], q[qp+l]) {
						l++
					}
					leftMax := qp == 0 || rp == 0 || !eq(text[rp-1], q[qp-1])
					if o.mode == kernels.MaxMatch {
						if l >= o.minLen && leftMax {
							ms = append(ms, kernels.Match{Ref: int64(rp), Query: int32(qp), Len: int32(l)})
						}
						continue
					}
					switch {
					case l > best:
						best, count, bestR = l, 1, rp
					case l == best:
						count++
					}
				}
				if o.mode != kernels.MaxMatch && best >= o.minLen && count == 1 &&
					(qp == 0 || bestR == 0 || !eq(text[bestR-1], q[qp-1])) {
					ms = append(ms, kernels.Match{Ref: int64(bestR), Query: int32(qp), Len: int32(best)})
				}
			}
			if o.mode == kernels.Mum {
				slices.SortFunc(ms, func(a, b kernels.Match) int {
					if a.Ref != b.Ref {
						return int(a.Ref - b.Ref)
					}
					return int(b.Len - a.Len)
				})
				ms = kernels.FilterMums(ms)
			}
			for _, m := range ms {
				ri := recOf(int(m.Ref))
				qpos := int(m.Query) + 1
				if reverse && o.revPos {
					qpos = len(q) - int(m.Query)
				}
				if len(ref) > 1 || o.four {
					fmt.Fprintf(&out, "  %-*s  ", maxName, ref[ri].name)
				}
				fmt.Fprintf(&out, "%8d  %8d  %8d\n", int(m.Ref)-starts[ri]+1, qpos, m.Len)
				if o.showString {
					fmt.Fprintf(&out, "%s\n", text[m.Ref:m.Ref+int64(m.Len)])
				}
			}
		}
	}
	return out.Bytes()
}

type naiveOpts struct {
	mode                                                  kernels.Mode
	minLen                                                int
	nuc, both, revOnly, revPos, showString, four, showLen bool
}

func (o naiveOpts) args() []string {
	a := []string{[]string{"-mumreference", "-mum", "-maxmatch"}[o.mode]}
	if o.mode == kernels.MumReference && o.minLen%2 == 0 {
		a[0] = "-mumcand"
	}
	a = append(a, "-l", fmt.Sprint(o.minLen))
	for _, f := range []struct {
		on   bool
		name string
	}{{o.nuc, "-n"}, {o.both, "-b"}, {o.revOnly, "-r"}, {o.revPos, "-c"}, {o.showString, "-s"}, {o.four, "-F"}, {o.showLen, "-L"}} {
		if f.on {
			a = append(a, f.name)
		}
	}
	return a
}

func randomOpts(rng *rand.Rand) naiveOpts {
	o := naiveOpts{mode: kernels.Mode(rng.IntN(3)), minLen: []int{3, 5, 8, 12, 20}[rng.IntN(5)]}
	o.nuc = rng.IntN(2) == 0
	switch rng.IntN(3) {
	case 1:
		o.both = true
	case 2:
		o.revOnly = true
	}
	o.revPos = (o.both || o.revOnly) && rng.IntN(2) == 0
	o.showString = rng.IntN(4) == 0
	o.four = rng.IntN(4) == 0
	o.showLen = rng.IntN(3) == 0
	return o
}

// randomCase writes a reference and a query file into dir.
func randomCase(t testing.TB, rng *rand.Rand, dir string, refLen, qLen int) (ref, qry []fastaRec) {
	for i := range 1 + rng.IntN(3) {
		n := 1 + rng.IntN(refLen)
		if i > 0 && rng.IntN(8) == 0 {
			n = 0 // empty records are allowed after the first
		}
		ref = append(ref, fastaRec{fmt.Sprintf("ref%d%s", i+1, strings.Repeat("x", rng.IntN(4))), genSeq(rng, n)})
	}
	for i := range 1 + rng.IntN(4) {
		n := 1 + rng.IntN(qLen)
		if rng.IntN(10) == 0 {
			n = 0
		}
		qry = append(qry, fastaRec{fmt.Sprintf("q%d", i+1), genQuery(rng, ref, n)})
	}
	writeFasta(t, filepath.Join(dir, "ref.fa"), ref, 1+rng.IntN(80), rng.IntN(5) == 0)
	writeFasta(t, filepath.Join(dir, "qry.fa"), qry, 1+rng.IntN(80), rng.IntN(5) == 0)
	return ref, qry
}

// TestNaiveOracle checks small random cases against the brute-force oracle.
func TestNaiveOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := range n {
		dir := t.TempDir()
		ref, qry := randomCase(t, rng, dir, 300, 200)
		o := randomOpts(rng)
		args := append([]string{"mummer"}, o.args()...)
		args = append(args, filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa"))
		got, stderr, st := runSapipe(t, nil, args...)
		if oneEmpty(ref) || oneEmpty(qry) {
			if st != 1 || !bytes.Contains(stderr, []byte("empty sequence in multiple fasta file")) {
				t.Fatalf("case %d %v: a file of one empty record: status %d: %s", i, args, st, stderr)
			}
			continue
		}
		if st != 0 {
			t.Fatalf("case %d %v: status %d: %s", i, args, st, stderr)
		}
		want := naiveMummer(ref, qry, o)
		if g, w := canonical(got, o.showString), canonical(want, o.showString); !bytes.Equal(g, w) {
			t.Fatalf("case %d %v differs from the naive oracle: %s", i, args, firstDiff(g, w))
		}
	}
}

// TestAgainstMummer compares with the real mummer on random inputs when it is installed (CI
// installs Debian's package); it skips otherwise.
func TestAgainstMummer(t *testing.T) {
	mummer, err := exec.LookPath("mummer")
	if err != nil {
		t.Skip("mummer not on PATH")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	n := 150
	if testing.Short() {
		n = 30
	}
	for i := range n {
		dir := t.TempDir()
		size := []int{200, 2000, 20000}[rng.IntN(3)]
		randomCase(t, rng, dir, size, min(size, 3000))
		o := randomOpts(rng)
		if size > 2000 && o.minLen < 8 {
			o.minLen = 12
		}
		args := append(o.args(), filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa"))
		cmd := exec.Command(mummer, args...)
		var want, mstderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &want, &mstderr
		merr := cmd.Run()
		extra := []string{"mummer", "--page-size", fmt.Sprint([]int{0, 200, 1000}[rng.IntN(3)]),
			"--batch-size", fmt.Sprint([]int{1, 50, 1 << 20}[rng.IntN(3)]), "-t", fmt.Sprint(1 + rng.IntN(4))}
		got, stderr, st := runSapipe(t, nil, append(extra, args...)...)
		if merr != nil {
			// mummer refused the input (a file whose only record is empty): sapipe must too, saying why.
			msg := lastLine(mstderr.Bytes())
			msg = msg[bytes.LastIndex(msg, []byte(": "))+2:]
			if st != 1 || !bytes.Contains(stderr, msg) {
				t.Fatalf("case %d: mummer %v failed (%s) but sapipe exited %d: %s", i, args, lastLine(mstderr.Bytes()), st, stderr)
			}
			continue
		}
		if st != 0 {
			t.Fatalf("case %d %v: status %d: %s", i, args, st, stderr)
		}
		if g, w := canonical(got, o.showString), canonical(want.Bytes(), o.showString); !bytes.Equal(g, w) {
			t.Fatalf("case %d %v differs from mummer: %s", i, append(extra, args...), firstDiff(g, w))
		}
	}
}

// lastLine returns the last non-empty line of b, where programs put their error message.
func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// oneEmpty reports whether recs is a file that MUMmer refuses: one record, with no sequence.
func oneEmpty(recs []fastaRec) bool { return len(recs) == 1 && recs[0].seq == "" }
