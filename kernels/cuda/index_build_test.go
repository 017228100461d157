package cuda

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// TestGPUIndexPage builds index pages on the device (IndexPage) and on the CPU (the suffix array,
// then cpu.NewPageFromSAKmers) and compares every array and the k-mer table, for references of
// several records with runs of n, IUPAC codes, a wide alphabet, pages of several sizes and k-mer
// lengths, and a long run of one letter (on the device with the LCP's second pass; on the host,
// with a note, when that pass's bound is below the run).
func TestGPUIndexPage(t *testing.T) {
	b := gpuBackend(t)
	var notes []string
	b.opts.Note = func(s string) { notes = append(notes, s) }
	defer func() { b.opts.Note = nil }()
	rng := rand.New(rand.NewPCG(31, 32))
	cases := pageCases(rng, 8, 4000)
	host := cpu.New(2)
	compare := func(what string, ref *kernels.Reference, bounds [][3]int, wantHost bool) {
		t.Helper()
		for i, bd := range bounds {
			n := bd[2] - bd[0]
			for _, k := range []int{0, 3, cpu.KmerLength(n, ref.Alpha.Size)} {
				where := fmt.Sprintf("%s page %d (%d codes) k %d", what, i, n, k)
				sa := make([]int32, n+1)
				if err := host.SuffixArray(ref.Text[bd[0]:bd[2]], sa[1:]); err != nil {
					t.Fatal(err)
				}
				wp, wk := cpu.NewPageFromSAKmers(ref.Text, ref.Alpha.Size, bd[0], bd[1], bd[2], sa, k, 2)
				notes = notes[:0]
				gp, gk, err := b.IndexPage(ref.Text, ref.Alpha.Size, bd[0], bd[1], bd[2], k, 2)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if onHost := len(notes) > 0; onHost != wantHost {
					t.Fatalf("%s: built on the host %v (notes %q), want %v", where, onHost, notes, wantHost)
				}
				wa, ga := wp.Arrays(), gp.Arrays()
				for _, c := range []struct {
					name string
					eq   bool
				}{
					{"SA", slices.Equal(ga.SA, wa.SA)}, {"LCP", slices.Equal(ga.LCPBytes, wa.LCPBytes)},
					{"LCP side rows", slices.Equal(ga.LCPRows, wa.LCPRows)}, {"LCP side values", slices.Equal(ga.LCPValues, wa.LCPValues)},
					{"LCP min1", slices.Equal(ga.LCPMin1, wa.LCPMin1)}, {"LCP min2", slices.Equal(ga.LCPMin2, wa.LCPMin2)},
					{"rank blocks", slices.Equal(ga.Occ, wa.Occ)},
					{"tail rows", slices.Equal(gp.TailRows(2), wp.TailRows(2))},
				} {
					if !c.eq {
						t.Fatalf("%s: %s differ from the CPU's", where, c.name)
					}
				}
				if (gk == nil) != (wk == nil) {
					t.Fatalf("%s: k-mer table %v, the CPU's %v", where, gk != nil, wk != nil)
				}
				if wk != nil && (gk.K != wk.K || !slices.Equal(gk.Rows, wk.Rows)) {
					t.Fatalf("%s: k-mer tables differ", where)
				}
			}
		}
	}
	for _, c := range cases {
		n := len(c.ref.Text)
		for _, ps := range []int{0, n / 3, 1500} {
			for _, overlap := range []int{0, 200} {
				bounds := cpu.PageBoundsOverlap(n, ps, overlap)
				compare(fmt.Sprintf("%s page size %d overlap %d", c.name, ps, overlap), c.ref, bounds, false)
			}
		}
	}
	// A device memory limit below what the page needs: built on the host, with a note.
	func() {
		defer func() { memLimit = 0 }()
		memLimit = 1 << 20
		big := cases[len(cases)-1].ref // the wide alphabet's 20,000 bytes
		compare("under a 1 MiB device limit", big, cpu.PageBoundsOverlap(len(big.Text), 0, 0), true)
	}()
	// A run of 3 * plcpCap of one letter in a longer text.
	defer func(c uint32) { plcpLongCap = c }(plcpLongCap)
	for _, longCap := range []uint32{plcpLongCap, plcpCap} {
		plcpLongCap = longCap
		rb := kernels.NewReferenceBuilder(false)
		rb.Add("A", append(append(randomSeq(rng, 5000, "acgt"), strings.Repeat("a", 3*plcpCap)...), randomSeq(rng, 5000, "acgt")...))
		ref, err := rb.Build()
		if err != nil {
			t.Fatal(err)
		}
		compare(fmt.Sprintf("one letter, second pass to %d", longCap), ref, cpu.PageBoundsOverlap(len(ref.Text), 0, 0), longCap < 3*plcpCap)
	}
}
