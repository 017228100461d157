package cpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// searchText makes a random text of codes 2..sigma-1 with repeats and a few separators (code 1).
func searchText(rng *rand.Rand, n, sigma int) []byte {
	t := make([]byte, n)
	for i := range t {
		t[i] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
	}
	for range rng.IntN(4) { // repeats, so that patterns occur several times
		l := 1 + rng.IntN(n/4+1)
		a, b := rng.IntN(n-l+1), rng.IntN(n-l+1)
		copy(t[b:b+l], t[a:a+l])
	}
	for range rng.IntN(4) {
		t[rng.IntN(n)] = kernels.CodeNone
	}
	return t
}

// searchPatterns draws patterns: substrings of text (some mutated), random strings, a few with
// unmatchable codes, and empty ones.
func searchPatterns(rng *rand.Rand, text []byte, sigma, count, maxLen int) *kernels.Patterns {
	var ps kernels.Patterns
	for range count {
		l := rng.IntN(maxLen + 1)
		var pat []byte
		switch k := rng.IntN(10); {
		case k < 6 && l <= len(text):
			a := rng.IntN(len(text) - l + 1)
			pat = slices.Clone(text[a : a+l])
			if k == 5 && l > 0 {
				pat[rng.IntN(l)] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
			}
		case k == 6 && l > 0:
			pat = searchText(rng, l, sigma)
			pat[rng.IntN(l)] = kernels.CodeNone
		default:
			pat = make([]byte, l)
			for i := range pat {
				pat[i] = byte(kernels.FirstCode + rng.IntN(sigma-kernels.FirstCode))
			}
		}
		ps.Add(pat)
	}
	return &ps
}

// naiveSearch returns the ascending start positions of pat in text; codes below FirstCode never
// match and an empty pattern has no occurrences.
func naiveSearch(text, pat []byte) []int64 {
	var out []int64
	if len(pat) == 0 || bytes.ContainsFunc(pat, func(r rune) bool { return r < kernels.FirstCode }) {
		return nil
	}
	for i := 0; ; {
		j := bytes.Index(text[i:], pat)
		if j < 0 {
			return out
		}
		out = append(out, int64(i+j))
		i += j + 1
	}
}

func checkSearch(t *testing.T, s kernels.Searcher, text []byte, ps *kernels.Patterns, what string) {
	t.Helper()
	var h kernels.Hits
	if err := s.Search(ps, true, &h); err != nil {
		t.Fatal(err)
	}
	var hc kernels.Hits
	if err := s.Search(ps, false, &hc); err != nil {
		t.Fatal(err)
	}
	if len(h.Count) != ps.Len() || len(h.PosEnds) != ps.Len() || !slices.Equal(h.Count, hc.Count) || len(hc.PosEnds) != 0 {
		t.Fatalf("%s: %d counts, %d position lists, count-only %d counts, for %d patterns", what, len(h.Count), len(h.PosEnds), len(hc.Count), ps.Len())
	}
	for i := range ps.Len() {
		want := naiveSearch(text, ps.Pattern(i))
		if got := h.Positions(i); int(h.Count[i]) != len(want) || !slices.Equal(got, want) {
			t.Fatalf("%s: pattern %d %v: count %d positions %v, want %v", what, i, ps.Pattern(i), h.Count[i], got, want)
		}
	}
}

// TestSearchNaive compares count and locate with a brute-force scan on random texts.
func TestSearchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for r := range rounds {
		sigma := []int{3, 4, 6, 6, 9, 20}[rng.IntN(6)]
		n := 1 + rng.IntN([]int{10, 200, 3000}[rng.IntN(3)])
		text := searchText(rng, n, sigma)
		p := NewPage(text, sigma, 0, n, n)
		var kt *KmerTable
		if k := rng.IntN(5); k > 0 && sigma < 10 {
			kt = BuildKmerTable(p, k)
			if naive := naiveKmerTable(text, sigma, k); !slices.Equal(kt.Rows, naive) {
				t.Fatalf("round %d: %d-mer table differs from the naive one", r, k)
			}
		}
		ps := searchPatterns(rng, text, sigma, 1+rng.IntN(100), 1+rng.IntN(40))
		for _, keyed := range []bool{false, true} {
			s := testSearcher(t, p, kt, keyed)
			checkSearch(t, s, text, ps, fmt.Sprintf("round %d (n %d, sigma %d, k-mer table %v, keyed %v)", r, n, sigma, kt != nil, keyed))
		}
	}
}

// TestPagedSearch: a text indexed in pages of any size and overlap gives the hits of a naive scan
// of the whole text, patterns longer than the overlap included, with each page searched keyed or
// not.
func TestPagedSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for r := range rounds {
		sigma := []int{3, 4, 6, 6, 9}[rng.IntN(5)]
		n := 2 + rng.IntN([]int{30, 400, 3000}[rng.IntN(3)])
		text := searchText(rng, n, sigma)
		pageSize := 1 + rng.IntN(n)
		overlap := rng.IntN(30)
		var pages []*Page
		var tails [][]int32
		var search []IntervalSearch
		keyed := rng.IntN(2) == 0
		withRows := rng.IntN(2) == 0 // as a device gives them (RowSearch)
		for st := 0; st < n; st += pageSize {
			e := min(st+pageSize, n)
			p := NewPage(text, sigma, st, e, min(e+overlap, n))
			var kt *KmerTable
			if k := rng.IntN(4); k > 0 && sigma < 10 {
				kt = BuildKmerTable(p, k)
			}
			pages = append(pages, p)
			tails = append(tails, p.TailRows(1+rng.IntN(3)))
			var is IntervalSearch = testSearcher(t, p, kt, keyed)
			if withRows {
				is = &rowsSearch{is.(*Searcher), p, 0}
			}
			search = append(search, is)
		}
		ps, err := NewPagedSearcher(text, pages, tails, search)
		if err != nil {
			t.Fatal(err)
		}
		pats := searchPatterns(rng, text, sigma, 1+rng.IntN(100), 1+rng.IntN(60))
		checkSearch(t, ps, text, pats, fmt.Sprintf("round %d (n %d, sigma %d, %d pages of %d overlapping by %d, keyed %v, rows given %v)",
			r, n, sigma, len(pages), pageSize, overlap, keyed, withRows))
	}
}

// rowsSearch is a RowSearch over a Searcher, as a device's: the rows of one-row outcomes with a
// shift read from the page's suffix array, or with poison a row whose occurrence lies past what
// the page owns.
type rowsSearch struct {
	*Searcher
	p      *Page
	poison int // 1: rows that place the occurrences past the page's end (in its window); 2: past the window
}

func (r *rowsSearch) SearchIntervalsRows(b *kernels.Patterns, iv []Interval, rows []int32) error {
	if err := r.SearchIntervals(b, iv); err != nil {
		return err
	}
	w := int32(r.p.WinEnd - r.p.Start)
	for i, v := range iv {
		if v.Shift > 0 {
			rows[i] = r.p.sa[v.Lo]
			switch r.poison {
			case 1:
				rows[i] = min(v.Shift+int32(r.p.End-r.p.Start), w)
			case 2:
				rows[i] = w + 1
			}
		}
	}
	return nil
}

// TestPagedSearchRows: the rows a RowSearch gives are the ones PagedSearcher takes, not the
// page's suffix array: rows that place the occurrences past each page's end lose them.
func TestPagedSearchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	const n, sigma = 4000, 6
	text := searchText(rng, n, sigma)
	var pages []*Page
	var tails [][]int32
	good, poisoned, wild := []IntervalSearch{}, []IntervalSearch{}, []IntervalSearch{}
	for st := 0; st < n; st += 1000 {
		p := NewPage(text, sigma, st, st+1000, min(st+1000+200, n))
		s := testSearcher(t, p, BuildKmerTable(p, 3), false)
		pages = append(pages, p)
		tails = append(tails, p.TailRows(1))
		good = append(good, &rowsSearch{s, p, 0})
		poisoned = append(poisoned, &rowsSearch{s, p, 1})
		wild = append(wild, &rowsSearch{s, p, 2})
	}
	pats := searchPatterns(rng, text, sigma, 200, 40)
	var hg, hp kernels.Hits
	for _, c := range []struct {
		search []IntervalSearch
		h      *kernels.Hits
	}{{good, &hg}, {poisoned, &hp}} {
		ps, err := NewPagedSearcher(text, pages, tails, c.search)
		if err != nil {
			t.Fatal(err)
		}
		if err := ps.Search(pats, false, c.h); err != nil {
			t.Fatal(err)
		}
	}
	lost := 0
	for i := range hg.Count {
		lost += int(hg.Count[i] - hp.Count[i])
	}
	if lost == 0 {
		t.Fatal("rows placing every one-row occurrence past its page changed no count: the rows given are not used")
	}
	// A row past its window (an unchecked suffix array's) is an error, not a count.
	var hw kernels.Hits
	if err := mustPaged(t, text, pages, tails, wild).Search(pats, false, &hw); err == nil || !strings.Contains(err.Error(), "outside the window") {
		t.Fatalf("rows past the window: %v", err)
	}
	checkSearch(t, mustPaged(t, text, pages, tails, good), text, pats, "rows given")
}

func mustPaged(t *testing.T, text []byte, pages []*Page, tails [][]int32, search []IntervalSearch) *PagedSearcher {
	t.Helper()
	ps, err := NewPagedSearcher(text, pages, tails, search)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// searchTextKinds makes texts of 4 matchable codes (DNA) of the kinds a forward search from the
// k-mer table must get right: random, one symbol repeated (a k-mer's rows are all rows),
// periodic, random with long repeats, and several records with separators between them.
func searchTextKinds(rng *rand.Rand, n int) map[string][]byte {
	dna := func(n int) []byte {
		t := make([]byte, n)
		for i := range t {
			t[i] = byte(kernels.FirstCode + rng.IntN(4))
		}
		return t
	}
	texts := map[string][]byte{"random": dna(n)}
	texts["all-A"] = bytes.Repeat([]byte{kernels.FirstCode}, n)
	period := dna(1 + rng.IntN(7))
	texts["periodic"] = bytes.Repeat(period, n/len(period)+1)[:n]
	rep := dna(n)
	for range 8 { // long repeats, a few to many copies: table rows of every size
		l := 1 + rng.IntN(min(60, n/2))
		src := rep[rng.IntN(n-l):]
		for range rng.IntN(40) {
			copy(rep[rng.IntN(n-l):], src[:l])
		}
	}
	texts["repeats"] = rep
	var multi []byte
	for len(multi) < n {
		if len(multi) > 0 {
			multi = append(multi, kernels.CodeNone)
		}
		multi = append(multi, dna(1+rng.IntN(n/4+1))...)
	}
	texts["records"] = multi
	return texts
}

// dnaPatterns draws count patterns from text: substrings (some with a symbol changed, an N put
// in or a code that cannot match), their extensions across record ends, random DNA, empty ones,
// of lengths around k.
func dnaPatterns(rng *rand.Rand, text []byte, k, count int) *kernels.Patterns {
	var ps kernels.Patterns
	for range count {
		var l int
		switch rng.IntN(5) {
		case 0:
			l = rng.IntN(k + 3)
		case 1:
			l = max(0, k-2+rng.IntN(12))
		case 2:
			l = rng.IntN(600) // longer than the text asked for ahead (fwdSpan)
		default:
			l = rng.IntN(160)
		}
		l = min(l, len(text))
		a := rng.IntN(len(text) - l + 1)
		pat := slices.Clone(text[a : a+l])
		if l > 0 {
			switch rng.IntN(12) {
			case 0:
				pat[rng.IntN(l)] = byte(kernels.FirstCode + rng.IntN(4))
			case 1:
				pat[rng.IntN(l)] = kernels.CodeNone
			case 2:
				pat[rng.IntN(l)] = byte([]int{0, 6, 7, 255}[rng.IntN(4)])
			case 3:
				for i := range pat {
					pat[i] = byte(kernels.FirstCode + rng.IntN(4))
				}
			}
		}
		ps.Add(pat)
	}
	return &ps
}

// TestSearchDNA compares count and locate with a brute-force scan on the texts of
// searchTextKinds, with no k-mer table, tables of k-mers shorter and longer than the patterns,
// and the table an index would have; and Intervals with Search.
func TestSearchDNA(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	sizes := []int{50, 700, 5000, 40000}
	if testing.Short() {
		sizes = sizes[:3]
	}
	for _, n := range sizes {
		for name, text := range searchTextKinds(rng, n) {
			p := NewPage(text, 6, 0, len(text), len(text))
			for _, k := range []int{0, 1, 3, KmerLength(len(text), 6), 8 + rng.IntN(3)} {
				var kt *KmerTable
				if k > 0 {
					kt = BuildKmerTable(p, k)
				}
				count := 300 + rng.IntN(300)
				if name == "all-A" || name == "periodic" { // thousands of hits each
					count = 2000000 / len(text)
				}
				ps := dnaPatterns(rng, text, max(k, 1), count)
				keyed := rng.IntN(2) == 0
				s := testSearcher(t, p, kt, keyed)
				what := fmt.Sprintf("%s text of %d, %d-mer table, keyed %v", name, len(text), k, keyed)
				checkSearch(t, s, text, ps, what)
				iv := make([]Interval, ps.Len())
				s.Intervals(ps, iv)
				var hi, hs kernels.Hits
				if err := s.AppendHits(iv, true, &hi); err != nil {
					t.Fatal(err)
				}
				if err := s.Search(ps, true, &hs); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(hi.Count, hs.Count) || !slices.Equal(hi.Pos, hs.Pos) {
					t.Fatalf("%s: Intervals' hits differ from Search's", what)
				}
				var hl kernels.Hits
				lp, starts := asLetters(rng, ps)
				if err := s.SearchLetters(lp, starts, true, &hl); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(hl.Count, hs.Count) || !slices.Equal(hl.Pos, hs.Pos) || !slices.Equal(hl.PosEnds, hs.PosEnds) {
					t.Fatalf("%s: SearchLetters' hits differ from Search's", what)
				}
			}
		}
	}
}

// testSearcher returns a searcher over p with the k-mer table kt that, if keyed, runs the keyed
// search on every batch (see fmsearch_keyed.go), however small.
func testSearcher(t *testing.T, p *Page, kt *KmerTable, keyed bool) *Searcher {
	t.Helper()
	s, err := NewSearcher(p, kt)
	if err != nil {
		t.Fatal(err)
	}
	if keyed {
		s.keyedAfter = -1
	}
	return s
}

// naiveKmerTable returns the rows of each k-mer of codes 2..sigma-1 by sorting the suffixes.
func naiveKmerTable(text []byte, sigma, k int) []int32 {
	n := len(text)
	sa := make([]int, n)
	for i := range sa {
		sa[i] = i
	}
	slices.SortFunc(sa, func(a, b int) int { return bytes.Compare(text[a:], text[b:]) })
	base, entries := sigma-kernels.FirstCode, 1
	for range k {
		entries *= base
	}
	rows := make([]int32, 2*entries)
	for j := range entries {
		kmer := make([]byte, k)
		for i, c := k-1, j; i >= 0; i, c = i-1, c/base {
			kmer[i] = byte(kernels.FirstCode + c%base)
		}
		lo, hi := -1, -1
		for r, p := range sa {
			if bytes.HasPrefix(text[p:], kmer) {
				if lo < 0 {
					lo = r + 1 // row 0 is the empty suffix
				}
				hi = r + 2
			}
		}
		if lo >= 0 {
			rows[2*j], rows[2*j+1] = int32(lo), int32(hi)
		}
	}
	return rows
}

// TestKmerLength: the table stays at about two bytes a base, and none for tiny texts.
func TestKmerLength(t *testing.T) {
	for _, c := range []struct{ n, sigma, k int }{{3, 6, 0}, {15, 6, 0}, {16, 6, 1}, {4641652, 6, 10}, {4641652, 7, 8}, {3 << 30, 6, 12}, {1000, 2, 0}} {
		if k := KmerLength(c.n, c.sigma); k != c.k {
			t.Errorf("KmerLength(%d, %d) = %d, want %d", c.n, c.sigma, k, c.k)
		}
	}
}

// TestLoadKmerTable: a table loads when its intervals lie within the rows, and not otherwise.
func TestLoadKmerTable(t *testing.T) {
	text := searchText(rand.New(rand.NewPCG(3, 3)), 2000, 6)
	kt := BuildKmerTable(NewPage(text, 6, 0, 2000, 2000), 3)
	if got, err := LoadKmerTable(3, 6, slices.Clone(kt.Rows), nil, 2001); err != nil || !slices.Equal(got.Rows, kt.Rows) {
		t.Fatalf("%v", err)
	}
	for _, bad := range []func(r []int32) []int32{
		func(r []int32) []int32 { r[5] = 2002; return r },
		func(r []int32) []int32 { r[4] = -1; return r },
		func(r []int32) []int32 { r[6], r[7] = 9, 8; return r },
		func(r []int32) []int32 { return r[2:] },
	} {
		if _, err := LoadKmerTable(3, 6, bad(slices.Clone(kt.Rows)), nil, 2001); err == nil {
			t.Error("a damaged table loaded")
		}
	}
	if _, err := LoadKmerTable(13, 6, nil, nil, 2001); err == nil {
		t.Error("a 13-mer table loaded")
	}
	keys := make([]int32, 2001)
	if got, err := LoadKmerTable(3, 6, slices.Clone(kt.Rows), keys, 2001); err != nil || len(got.Keys) != 2001 {
		t.Errorf("keys for every row: %v", err)
	}
	for _, bad := range []struct {
		k    int
		keys []int32
	}{{3, keys[1:]}, {0, keys}} {
		rows := slices.Clone(kt.Rows)
		if bad.k == 0 {
			rows = nil
		}
		if _, err := LoadKmerTable(bad.k, 6, rows, bad.keys, 2001); err == nil {
			t.Errorf("%d keys for %d rows with %d-mers loaded", len(bad.keys), 2001, bad.k)
		}
	}
}

// TestSearcherWindow: a page's searcher answers for its window, in the window's positions.
func TestSearcherWindow(t *testing.T) {
	text := searchText(rand.New(rand.NewPCG(1, 1)), 100, 6)
	s, err := NewSearcher(NewPage(text, 6, 30, 50, 60), nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := searchPatterns(rand.New(rand.NewPCG(2, 1)), text[30:60], 6, 50, 8)
	checkSearch(t, s, text[30:60], ps, "window 30..60")
}

func BenchmarkSearch(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	n := 4 << 20
	text := make([]byte, n) // random, so that most patterns narrow to one row in a dozen steps
	for i := range text {
		text[i] = byte(kernels.FirstCode + rng.IntN(4))
	}
	p := NewPage(text, 6, 0, n, n)
	s, _ := NewSearcher(p, BuildKmerTable(p, KmerLength(n, 6)))
	var ps kernels.Patterns
	for range 50000 {
		l := 20 + rng.IntN(131)
		a := rng.IntN(n - l)
		ps.Add(text[a : a+l])
	}
	benchSearch(b, s, &ps)
}

// benchSearch runs the sub-benchmarks count and locate of searching ps with s, in MB/s of
// pattern characters, patterns/s and ns/pattern.
func benchSearch(b *testing.B, s *Searcher, ps *kernels.Patterns) {
	for _, locate := range []bool{false, true} {
		name := "count"
		if locate {
			name = "locate"
		}
		b.Run(name, func(b *testing.B) {
			var h kernels.Hits
			b.SetBytes(int64(len(ps.Codes)))
			for b.Loop() {
				h.Reset()
				if err := s.Search(ps, locate, &h); err != nil {
					b.Fatal(err)
				}
			}
			np := float64(ps.Len()) * float64(b.N)
			b.ReportMetric(np/b.Elapsed().Seconds(), "patterns/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/np, "ns/pattern")
		})
	}
}

// ecoliSearch is the page, k-mer table and patterns of BenchmarkSearchEcoli, built once.
var ecoliSearch struct {
	sync.Once
	s    *Searcher
	pats kernels.Patterns
	err  error
}

// BenchmarkSearchEcoli counts and locates 200,000 patterns of 20 to 150 bases drawn from the E.
// coli genome (../shared/data/ecoli.fa or bench-data/ecoli.fa; skipped without either), as `sapipe count` does with the
// patterns of tools/benchpat: a real genome's repeats give the k-mer table intervals of all sizes.
func BenchmarkSearchEcoli(b *testing.B) {
	e := loadEcoliSearch()
	if e.err != nil {
		b.Skip(e.err)
	}
	benchSearch(b, e.s, &e.pats)
}

// loadEcoliSearch builds ecoliSearch once.
func loadEcoliSearch() *struct {
	sync.Once
	s    *Searcher
	pats kernels.Patterns
	err  error
} {
	e := &ecoliSearch
	e.Do(func() {
		data, err := os.ReadFile("../../../shared/data/ecoli.fa")
		if err != nil {
			data, err = os.ReadFile("../../bench-data/ecoli.fa")
		}
		if err != nil {
			e.err = err
			return
		}
		var text []byte
		for line := range bytes.Lines(data) {
			if line[0] == '>' {
				continue
			}
			for _, c := range bytes.TrimSpace(line) {
				code := byte(kernels.CodeNone)
				if i := bytes.IndexByte([]byte("ACGT"), c&^0x20); i >= 0 {
					code = byte(kernels.FirstCode + i)
				}
				text = append(text, code)
			}
		}
		n := len(text)
		p := NewPage(text, 6, 0, n, n)
		e.s, e.err = NewSearcher(p, BuildKmerTable(p, KmerLength(n, 6)))
		rng := rand.New(rand.NewPCG(1, 7))
		for range 200000 {
			l := 20 + rng.IntN(131)
			a := rng.IntN(n - l + 1)
			e.pats.Add(text[a : a+l])
		}
	})
	return e
}

// TestKmerCode compares KmerTable.code (eight DNA codes at a time) with the definition, on
// strings with codes that cannot match.
func TestKmerCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 20000 {
		base := 2 + rng.IntN(4)
		kt := &KmerTable{K: 1 + rng.IntN(maxKmer), base: base}
		pat := make([]byte, kt.K)
		for i := range pat {
			pat[i] = byte(kernels.FirstCode + rng.IntN(base))
			if rng.IntN(4*kt.K) == 0 {
				pat[i] = byte([]int{0, 1, kernels.FirstCode + base, 255}[rng.IntN(4)])
			}
		}
		want, wantOK := 0, true
		for _, x := range pat {
			s := int(x) - kernels.FirstCode
			wantOK = wantOK && s >= 0 && s < base
			want = want*base + s
		}
		if got, ok := kt.code(pat); ok != wantOK || ok && got != want {
			t.Fatalf("code(%v) in base %d = %d, %v; want %d, %v", pat, base, got, ok, want, wantOK)
		}
	}
}

// BenchmarkKeyedIndexEcoli builds the keyed search's arrays of E. coli (fmsearch_keyed.go), which
// the first large batch of a run pays for.
func BenchmarkKeyedIndexEcoli(b *testing.B) {
	e := loadEcoliSearch()
	if e.err != nil {
		b.Skip(e.err)
	}
	b.SetBytes(int64(e.s.p.n))
	for b.Loop() {
		buildKeyedIndex(e.s.p, e.s.kmers, runtime.GOMAXPROCS(0))
	}
}

// TestKeyedIndex: the keyed search's rows of K-mers hold their suffix array entries and keys that are
// the digits of the symbols after their first K (times two, plus one when they are all there and
// matchable), in order within each K-mer's rows, computed or from RowKeys (an index file's).
func TestKeyedIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 12))
	for r := range 40 {
		sigma := []int{4, 6, 6, 7, 9}[rng.IntN(5)]
		n := 1 + rng.IntN([]int{30, 500, 5000}[rng.IntN(3)])
		text := searchText(rng, n, sigma)
		p := NewPage(text, sigma, 0, n, n)
		k := 1 + rng.IntN(4)
		kt := BuildKmerTable(p, k)
		x := buildKeyedIndex(p, kt, 1+rng.IntN(3))
		kt.Keys = RowKeys(p, kt, 1+rng.IntN(3))
		if y := buildKeyedIndex(p, kt, 1+rng.IntN(3)); !slices.Equal(x.rows, y.rows) || !slices.Equal(x.table, y.table) {
			t.Fatalf("round %d: the keyed index from RowKeys differs from the one it computes", r)
		}
		base := sigma - kernels.FirstCode
		inKmer := make([]bool, len(x.rows)) // the rows that have keys
		for j := range len(kt.Rows) / 2 {
			for row := kt.Rows[2*j]; row < kt.Rows[2*j+1]; row++ {
				inKmer[row] = true
			}
		}
		for row, v := range x.rows {
			if !inKmer[row] {
				continue
			}
			if rowPos(v) != int(p.sa[row]) {
				t.Fatalf("round %d: row %d holds position %d, want %d", r, row, rowPos(v), p.sa[row])
			}
			q := int(p.sa[row]) + k
			exact := q+x.keyLen <= n && !bytes.ContainsFunc(text[q:q+x.keyLen], func(c rune) bool { return c < kernels.FirstCode })
			if got := rowExact(v); got != exact {
				t.Fatalf("round %d: row %d's key exact %v, want %v", r, row, got, exact)
			}
			if !exact {
				continue
			}
			want := uint64(0)
			for _, c := range text[q : q+x.keyLen] {
				want = want*uint64(base) + uint64(c-kernels.FirstCode)
			}
			if v>>32 != 2*want+1 {
				t.Fatalf("round %d: row %d has key %#x, want %#x", r, row, v>>32, want)
			}
		}
		parts := int(x.table2Parts())
		for j := range len(kt.Rows) / 2 {
			for row := kt.Rows[2*j] + 1; row < kt.Rows[2*j+1]; row++ {
				if x.rows[row]>>32 < x.rows[row-1]>>32 {
					t.Fatalf("round %d: k-mer %d: row %d's key is below the row before's", r, j, row)
				}
			}
			// The refined table cuts the K-mer's rows by the first digits of their keys.
			next := kt.Rows[2*j]
			for d := range parts {
				lo, hi := x.table[j*(parts+1)+d], x.table[j*(parts+1)+d+1]
				if lo != next || hi < lo {
					t.Fatalf("round %d: k-mer %d, digits %d: rows %d..%d after row %d", r, j, d, lo, hi, next)
				}
				for row := lo; row < hi; row++ {
					if x.rows[row]>>32/x.subDiv != uint64(d) {
						t.Fatalf("round %d: k-mer %d, digits %d: row %d has key %#x", r, j, d, row, x.rows[row]>>32)
					}
				}
				next = hi
			}
			if next != kt.Rows[2*j+1] {
				t.Fatalf("round %d: k-mer %d: the refined rows end at %d, not %d", r, j, next, kt.Rows[2*j+1])
			}
		}
	}
}

// asLetters returns the patterns of codes ps as letters: codes 2 to 5 as a, c, g, t in either
// case, other codes as bytes that are none of those (an N, white space, anything); and, half the
// time, with bytes between them, and the starts that say where they are.
func asLetters(rng *rand.Rand, ps *kernels.Patterns) (*kernels.Patterns, []int) {
	notBase := func() byte {
		for {
			b := byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b = "nN \r\x00\x01\x02\x05!AaA"[rng.IntN(12)]
			}
			if letterDigit[b] == 255 {
				return b
			}
		}
	}
	gaps := rng.IntN(2) == 0
	out := &kernels.Patterns{}
	var starts []int
	for i := range ps.Len() {
		if gaps {
			for range rng.IntN(3) {
				out.Codes = append(out.Codes, "\nacgtACGTN"[rng.IntN(10)])
			}
			starts = append(starts, len(out.Codes))
		}
		for _, c := range ps.Pattern(i) {
			if d := int(c) - kernels.FirstCode; d >= 0 && d < 4 {
				out.Codes = append(out.Codes, "acgtACGT"[d+4*rng.IntN(2)])
			} else {
				out.Codes = append(out.Codes, notBase())
			}
		}
		out.Ends = append(out.Ends, len(out.Codes))
	}
	return out, starts
}

// TestLetters: the letter digits, k-mer codes and comparisons of patterns of letters agree with
// the encoding of kernels.EncodeQuery for an alphabet of a, c, g and t, for every byte value.
func TestLetters(t *testing.T) {
	var a kernels.Alphabet
	for i := range a.Code {
		a.Code[i] = kernels.CodeNone
	}
	for d, c := range []byte("acgt") {
		a.Code[c] = byte(kernels.FirstCode + d)
	}
	a.Size = kernels.FirstCode + 4
	enc := kernels.NewQueryEncoder(&a, false)
	code := func(c byte) byte {
		var out [1]byte
		enc.Fill(out[:], []byte{c}, false)
		return out[0]
	}
	rng := rand.New(rand.NewPCG(8, 1))
	for c := range 256 {
		want := code(byte(c))
		if d := letterDigit[c]; (d < 4) != (want >= kernels.FirstCode) || d < 4 && d+kernels.FirstCode != want {
			t.Fatalf("byte %#x: digit %d, code %d", c, d, want)
		}
		for lane := range 8 {
			v := []byte("AcGtaCgT")
			v[lane] = byte(c)
			got, ok := letterBits8(binary.BigEndian.Uint64(v))
			codes := make([]byte, 8)
			for i, x := range v {
				codes[i] = code(x)
			}
			wantBits, wantOK := dnaBits8(binary.BigEndian.Uint64(codes))
			if ok != wantOK || ok && got != wantBits {
				t.Fatalf("byte %#x in lane %d: %#x %v, want %#x %v", c, lane, got, ok, wantBits, wantOK)
			}
			if kc, kok := letterCode(v[:3+lane%6]); kok != (bytes.IndexFunc(codes[:3+lane%6], func(r rune) bool { return r < kernels.FirstCode }) < 0) || kok && kc != naiveKmerCode(codes[:3+lane%6]) {
				t.Fatalf("byte %#x in lane %d: k-mer code %d %v", c, lane, kc, kok)
			}
		}
	}
	for range 20000 {
		n := rng.IntN(40)
		text := make([]byte, n)
		for i := range text {
			text[i] = "acgt\x00"[rng.IntN(5)]
		}
		pat := make([]byte, n)
		for i := range pat {
			pat[i] = text[i]
			switch rng.IntN(4) {
			case 0:
				pat[i] -= 'a' - 'A'
			case 1:
				if rng.IntN(8) == 0 {
					pat[i] = byte(rng.IntN(256))
				}
			}
		}
		want := true
		for i := range pat {
			if code(pat[i]) < kernels.FirstCode || text[i] != "acgt"[code(pat[i])-kernels.FirstCode] {
				want = false
			}
		}
		if got := equalLetters(text, pat); got != want {
			t.Fatalf("%q against %q: equal %v, want %v", pat, text, got, want)
		}
	}
}

// naiveKmerCode returns the code of a k-mer of codes 2 to 5 in base 4.
func naiveKmerCode(codes []byte) int {
	c := 0
	for _, x := range codes {
		c = 4*c + int(x-kernels.FirstCode)
	}
	return c
}

// TestKmerTableThreads: the k-mer table built in parts on several goroutines is the naive one,
// for windows of texts with separators and repeats.
func TestKmerTableThreads(t *testing.T) {
	defer func(m int) { storeMinPart = m }(storeMinPart)
	storeMinPart = 1
	rng := rand.New(rand.NewPCG(17, 4))
	for r := range 60 {
		sigma := []int{3, 4, 6, 7}[rng.IntN(4)]
		n := 1 + rng.IntN(3000)
		text := searchText(rng, n, sigma)
		start := rng.IntN(n)
		p := NewPage(text, sigma, start, n, n)
		k := 1 + rng.IntN(4)
		want := naiveKmerTable(text[start:], sigma, k)
		for _, threads := range []int{1, 2, 5} {
			if got := BuildKmerTableThreads(p, k, threads); !slices.Equal(got.Rows, want) {
				t.Fatalf("round %d (n %d, sigma %d, k %d, %d threads): table differs from the naive one", r, n-start, sigma, k, threads)
			}
			// the same table from the pass that builds the rank structure
			sa := slices.Clone(p.sa)
			q, got := NewPageFromSAKmers(text, sigma, start, n, n, sa, k, threads)
			if got == nil || !slices.Equal(got.Rows, want) {
				t.Fatalf("round %d (n %d, sigma %d, k %d, %d threads): table of NewPageFromSAKmers differs from the naive one", r, n-start, sigma, k, threads)
			}
			if !slices.Equal(q.occ.data, p.occ.data) {
				t.Fatalf("round %d: rank structure differs", r)
			}
		}
	}
}

// randomIntervals is an IntervalSearch that gives each pattern a random interval of one to four
// rows (most patterns' occurrences) anywhere in a page of n rows.
type randomIntervals struct {
	rng *rand.Rand
	n   int
}

func (r *randomIntervals) SearchIntervals(b *kernels.Patterns, iv []Interval) error {
	for i := range iv {
		lo := 1 + r.rng.IntN(r.n-4)
		iv[i] = Interval{Lo: int32(lo), Hi: int32(lo + 1 + r.rng.IntN(4))}
	}
	return nil
}

// BenchmarkPagedLocate: reading the positions of 64 Ki patterns a batch from random rows of a
// suffix array of 2^28 rows (1 GiB, out of every cache), as locate does against a large index.
func BenchmarkPagedLocate(b *testing.B) {
	const n = 1 << 28
	text := make([]byte, n)
	sa := make([]int32, n+1)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sa {
		sa[i] = int32(rng.IntN(n))
	}
	sa[0] = n
	p := &Page{Start: 0, End: n, WinEnd: n, text: text, w: text, n: n, sa: sa}
	ps, err := NewPagedSearcher(text, []*Page{p}, [][]int32{nil}, []IntervalSearch{&randomIntervals{rng, n}})
	if err != nil {
		b.Fatal(err)
	}
	var pats kernels.Patterns
	for range 1 << 16 {
		pats.Add([]byte{kernels.FirstCode, kernels.FirstCode + 1})
	}
	var h kernels.Hits
	b.ReportAllocs()
	for b.Loop() {
		h = kernels.Hits{Count: h.Count[:0], Pos: h.Pos[:0], PosEnds: h.PosEnds[:0]}
		if err := ps.Search(&pats, true, &h); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(1<<16), "ns/pattern")
}
