package cpu

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// cloneArrays deep-copies a, so that a test can damage the copy.
func cloneArrays(a PageArrays) PageArrays {
	return PageArrays{
		SA: slices.Clone(a.SA), Occ: slices.Clone(a.Occ), LCPBytes: slices.Clone(a.LCPBytes),
		LCPRows: slices.Clone(a.LCPRows), LCPValues: slices.Clone(a.LCPValues),
		LCPMin1: slices.Clone(a.LCPMin1), LCPMin2: slices.Clone(a.LCPMin2),
	}
}

// storeText is a random text with long repeats, so that some LCP values escape the byte.
func storeText(rng *rand.Rand, n, sigma int) []byte {
	t := searchText(rng, n, sigma)
	if n > 800 && rng.IntN(2) == 0 {
		copy(t[n/2:], t[:300+rng.IntN(n/2-300)]) // a repeat longer than 255
	}
	return t
}

// TestPageFromSAAndLoad: the page built around a given suffix array is NewPage's, and LoadPage
// rebuilds it from its arrays, for whole texts and for windows of them.
func TestPageFromSAAndLoad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for r := range 80 {
		sigma := []int{2, 3, 6, 6, 11, 40}[rng.IntN(6)]
		if sigma == 2 {
			sigma = 3 // codes 2.. need at least one matchable code for random texts
		}
		n := 1 + rng.IntN([]int{5, 100, 5000}[rng.IntN(3)])
		text := storeText(rng, n, sigma)
		start, end, winEnd := 0, n, n
		if r%2 == 1 && n > 3 {
			start = rng.IntN(n - 2)
			end = start + 1 + rng.IntN(n-start-1)
			winEnd = min(n, end+rng.IntN(30))
		}
		w := text[start:winEnd]
		want := NewPage(text, sigma, start, end, winEnd)
		sa := make([]int32, len(w)+1)
		SuffixArray(w, sa[1:])
		got := NewPageFromSA(text, sigma, start, end, winEnd, sa, 1+rng.IntN(3))
		if !reflect.DeepEqual(got.Arrays(), want.Arrays()) || got.c != want.c || got.Start != start || got.End != end || got.WinEnd != winEnd {
			t.Fatalf("round %d (n %d, sigma %d): NewPageFromSA differs from NewPage", r, n, sigma)
		}
		loaded, err := LoadPage(text, sigma, start, end, winEnd, cloneArrays(want.Arrays()), 1+rng.IntN(4))
		if err != nil {
			t.Fatalf("round %d (n %d, sigma %d): %v", r, n, sigma, err)
		}
		if !reflect.DeepEqual(loaded.Arrays(), want.Arrays()) || loaded.c != want.c || len(loaded.text) != n || loaded.n != len(w) {
			t.Fatalf("round %d: loaded page differs", r)
		}
		if !reflect.DeepEqual(loaded.occ, want.occ) || !reflect.DeepEqual(loaded.lcp, want.lcp) {
			t.Fatalf("round %d: loaded rank structure or LCP differs", r)
		}
		tail := want.TailRows(1 + rng.IntN(3))
		var naive []int32
		for k := 1; k <= len(w); k++ {
			if int(want.sa[k]) >= end-start {
				naive = append(naive, int32(k))
			}
		}
		if !slices.Equal(tail, naive) || loaded.CheckTailRows(tail) != nil {
			t.Fatalf("round %d: tail rows %v, want %v", r, tail, naive)
		}
		if len(tail) > 0 && loaded.CheckTailRows(tail[1:]) == nil {
			t.Fatalf("round %d: a tail row short went unnoticed", r)
		}
	}
}

// TestMatcherFromPages: matching against loaded pages gives NewMatcher's results in every mode,
// whatever the pages' size and overlap (at least the minimum length less one).
func TestMatcherFromPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for r := range 80 {
		n := 50 + rng.IntN(3000)
		text := storeText(rng, n, 6)
		ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"r"}}
		ref.Alpha.Size = 6
		opts := kernels.MatchOptions{Mode: kernels.Mode(rng.IntN(3)), MinLen: 1 + rng.IntN(20)}
		want, err := NewMatcher(ref, opts, 1)
		if err != nil {
			t.Fatal(err)
		}
		pageSize, overlap := n, 0
		if r%3 != 0 {
			pageSize = 20 + rng.IntN(n)
			overlap = max(opts.MinLen-1, 0) + rng.IntN(40)
		}
		var pages []*Page
		for s := 0; s < n; s += pageSize {
			e := min(s+pageSize, n)
			built := NewPage(text, 6, s, e, min(e+overlap, n))
			p, err := LoadPage(text, 6, s, e, min(e+overlap, n), cloneArrays(built.Arrays()), 2)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, p)
		}
		got, err := NewMatcherFromPages(ref, opts, pages, 3)
		if err != nil {
			t.Fatal(err)
		}
		var b kernels.Batch
		for range 1 + rng.IntN(6) {
			q := searchText(rng, 1+rng.IntN(300), 6)
			if rng.IntN(2) == 0 {
				a := rng.IntN(n)
				q = append(q, text[a:min(n, a+rng.IntN(400))]...)
			}
			b.Segs = append(b.Segs, kernels.Segment{Off: len(b.Codes), Len: len(q), From: 0, To: len(q)})
			b.Codes = append(b.Codes, q...)
		}
		var rw, rg kernels.Result
		if err := want.Match(&b, &rw); err != nil {
			t.Fatal(err)
		}
		if err := got.Match(&b, &rg); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rw, rg) {
			t.Fatalf("round %d (%v, -l %d, pages of %d overlapping by %d): matches differ", r, opts.Mode, opts.MinLen, pageSize, overlap)
		}
	}
	// Pages that do not tile the text, or overlap by less than the minimum length asks, are refused.
	text := searchText(rng, 500, 6)
	ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"r"}}
	if _, err := NewMatcherFromPages(ref, kernels.MatchOptions{MinLen: 5}, []*Page{NewPage(text, 6, 0, 200, 220)}, 1); err == nil {
		t.Error("a partial page was accepted")
	}
	pages := []*Page{NewPage(text, 6, 0, 250, 260), NewPage(text, 6, 250, 500, 500)}
	if _, err := NewMatcherFromPages(ref, kernels.MatchOptions{MinLen: 11}, pages, 1); err != nil {
		t.Errorf("-l 11 over pages overlapping by 10: %v", err)
	}
	if _, err := NewMatcherFromPages(ref, kernels.MatchOptions{MinLen: 12}, pages, 1); !errors.Is(err, ErrOverlap) {
		t.Errorf("-l 12 over pages overlapping by 10: %v, want ErrOverlap", err)
	}
	// A page loaded for searching only neither checks nor keeps the LCP, and cannot match.
	a := cloneArrays(NewPage(text, 6, 0, 500, 500).Arrays())
	a.LCPMin1[1]++
	if _, err := LoadPage(text, 6, 0, 500, 500, a, 1); err == nil {
		t.Error("LoadPage took LCP block minima that disagree with the LCP")
	}
	sp, err := LoadSearchPage(text, 6, 0, 500, 500, a, 1)
	if err != nil {
		t.Fatalf("LoadSearchPage: %v", err)
	}
	if sp.lcp != nil || sp.Bytes() != 4*len(sp.sa)+sp.occ.Bytes() {
		t.Error("a page loaded for searching keeps an LCP")
	}
	if _, err := NewMatcherFromPages(ref, kernels.MatchOptions{MinLen: 5}, []*Page{sp}, 1); err == nil {
		t.Error("a page loaded for searching only was taken for matching")
	}
}

// TestLoadPageDamage: each kind of damage to the arrays is an error, never a page.
func TestLoadPageDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 3))
	n := 3000
	text := storeText(rng, n, 6)
	copy(text[1500:], text[:600]) // long LCP values, escaped
	good := NewPage(text, 6, 0, n, n).Arrays()
	if len(good.LCPRows) < 2 {
		t.Fatal("the test text has too few escaped LCP values")
	}
	// Parts of any size, so that the two goroutines of each pass check one half each.
	defer func(m int) { storeMinPart = m }(storeMinPart)
	storeMinPart = 1
	cases := []struct {
		name   string
		damage func(a *PageArrays)
		msg    string
	}{
		{"sa row 0", func(a *PageArrays) { a.SA[0] = 5 }, "row 0"},
		{"sa out of range", func(a *PageArrays) { a.SA[17] = int32(n) }, "row 17"},
		{"sa negative", func(a *PageArrays) { a.SA[n] = -3 }, "suffix array row"},
		{"sa short", func(a *PageArrays) { a.SA = a.SA[:n] }, "suffix array of"},
		{"occ count", func(a *PageArrays) { a.Occ[8*5] += 1 }, "rank structure"},
		{"occ plane", func(a *PageArrays) { a.Occ[8*7+2] ^= 1 << 9 }, "rank structure"},
		{"occ symbol", func(a *PageArrays) { a.Occ[8*3+2] |= 3; a.Occ[8*3+4] |= 3; a.Occ[8*3+6] |= 3 }, "rank structure"},
		{"occ short", func(a *PageArrays) { a.Occ = a.Occ[:len(a.Occ)-8] }, "rank structure of"},
		{"lcp row 0", func(a *PageArrays) { a.LCPBytes[0] = 1 }, "LCP rows 0"},
		{"lcp last", func(a *PageArrays) { a.LCPBytes[n+1] = 2 }, "LCP rows 0"},
		{"lcp min", func(a *PageArrays) { a.LCPMin1[3]++ }, "LCP minimum"},
		{"lcp min2", func(a *PageArrays) { a.LCPMin2[0] = 7 }, "LCP minimum"},
		{"lcp escape", func(a *PageArrays) { a.LCPBytes[a.LCPRows[0]] = 3 }, "LCP"},
		{"lcp extra escape", func(a *PageArrays) {
			for k := 2; ; k++ {
				if a.LCPBytes[k] != lcpEscape {
					a.LCPBytes[k] = lcpEscape
					return
				}
			}
		}, "LCP"},
		{"lcp side row", func(a *PageArrays) { a.LCPRows[0] = int32(n + 5) }, "LCP side table"},
		{"lcp side row negative", func(a *PageArrays) { a.LCPRows[len(a.LCPRows)/2-1] = -1 << 20 }, "LCP side table"}, // the last of the first part
		{"lcp side value", func(a *PageArrays) { a.LCPValues[0] = 12 }, "LCP side table"},
		{"lcp side length", func(a *PageArrays) { a.LCPValues = a.LCPValues[1:] }, "LCP side table"},
	}
	for _, c := range cases {
		a := cloneArrays(good)
		c.damage(&a)
		_, err := LoadPage(text, 6, 0, n, n, a, 2)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one about %q", c.name, err, c.msg)
		}
	}
	bad := slices.Clone(text)
	bad[100] = 7
	if _, err := LoadPage(bad, 6, 0, n, n, cloneArrays(good), 2); err == nil || !strings.Contains(err.Error(), "text code") {
		t.Errorf("a text code beyond the alphabet: %v", err)
	}
}

func BenchmarkLoadPage(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 5))
	n := 4 << 20
	text := searchText(rng, n, 6)
	a := NewPage(text, 6, 0, n, n).Arrays()
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := LoadPage(text, 6, 0, n, n, a, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// pageBenchText is a random text of DNA codes far larger than the caches, and its suffix array
// with the row of the empty suffix first, for the benchmarks of the passes over a suffix array.
func pageBenchText(b *testing.B) ([]byte, []int32) {
	rng := rand.New(rand.NewPCG(3, 9))
	n := 32 << 20
	text := make([]byte, n)
	for i := range text {
		text[i] = byte(kernels.FirstCode + rng.IntN(4))
	}
	sa := make([]int32, n+1)
	SuffixArrayThreads(text, sa[1:], 2)
	sa[0] = int32(n)
	return text, sa
}

// BenchmarkPageFromSA: the rank structure, the LCP and the 12-mer table of 32 Mbp from its
// suffix array, on two threads.
func BenchmarkPageFromSA(b *testing.B) {
	text, sa := pageBenchText(b)
	n := len(text)
	b.SetBytes(int64(n))
	for b.Loop() {
		NewPageFromSAKmers(text, 6, 0, n, n, sa, KmerLength(n, 6), 2)
	}
}

// BenchmarkCompactLCP: the LCP of 32 Mbp from its suffix array, on two threads.
func BenchmarkCompactLCP(b *testing.B) {
	text, sa := pageBenchText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buildCompactLCP(text, sa, 2)
	}
}

// TestLoadPageMinima: block minima too low, too high, and wrong for a block of escaped rows only
// (a long run of one code) are errors, whichever way the block is checked.
func TestLoadPageMinima(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 4))
	n := 5000
	text := storeText(rng, n, 6)
	for k := 2000; k < 3200; k++ {
		text[k] = 3
	}
	good := NewPage(text, 6, 0, n, n).Arrays()
	if _, err := LoadPage(text, 6, 0, n, n, cloneArrays(good), 2); err != nil {
		t.Fatal(err)
	}
	escaped, low := -1, -1
	for b := 0; b < (n+2)/64; b++ {
		all := true
		for _, v := range good.LCPBytes[b*64 : b*64+64] {
			all = all && v == lcpEscape
		}
		if all && escaped < 0 {
			escaped = b
		}
		if m := good.LCPMin1[b]; m > 0 && m < lcpEscape && low < 0 {
			low = b
		}
	}
	if escaped < 0 || low < 0 {
		t.Fatalf("no block of escapes only (%d) or of a positive minimum (%d)", escaped, low)
	}
	for _, c := range []struct {
		name   string
		damage func(a *PageArrays)
	}{
		{"too low", func(a *PageArrays) { a.LCPMin1[low]-- }},
		{"too high", func(a *PageArrays) { a.LCPMin1[low]++ }},
		{"escapes only, too high", func(a *PageArrays) { a.LCPMin1[escaped]++ }},
		{"escapes only, under the escape", func(a *PageArrays) { a.LCPMin1[escaped] = lcpEscape - 1 }},
		{"negative", func(a *PageArrays) { a.LCPMin1[low] = -1 }},
	} {
		a := cloneArrays(good)
		c.damage(&a)
		if _, err := LoadPage(text, 6, 0, n, n, a, 2); err == nil || !strings.Contains(err.Error(), "LCP minimum") {
			t.Errorf("%s: error %v, want one about an LCP minimum", c.name, err)
		}
	}
}

// TestUncheckedSearchPage: a page taken without its checks has LoadSearchPage's C (from the rank
// structure's last block, windows of every length modulo a block, with separators and without),
// and searches as it does; wrong lengths are refused.
func TestUncheckedSearchPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for r := range 60 {
		n := 1 + rng.IntN(700)
		sigma := 3 + rng.IntN(5)
		text := searchText(rng, n, sigma)
		if r%3 == 0 {
			for range 1 + n/100 {
				text[rng.IntN(n)] = kernels.CodeNone
			}
		}
		start := rng.IntN(n)
		end := start + 1 + rng.IntN(n-start)
		winEnd := end + rng.IntN(n-end+1)
		a := NewPage(text, sigma, start, end, winEnd).Arrays()
		want, err := LoadSearchPage(text, sigma, start, end, winEnd, a, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UncheckedSearchPage(text, sigma, start, end, winEnd, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.c != want.c {
			t.Fatalf("round %d (window %d, sigma %d): C %v, want %v", r, winEnd-start, sigma, got.c[:sigma+1], want.c[:sigma+1])
		}
		ws, _ := NewSearcher(want, nil)
		gs, _ := NewSearcher(got, nil)
		var pats kernels.Patterns
		for range 20 {
			a := start + rng.IntN(winEnd-start)
			pats.Add(text[a:min(winEnd, a+1+rng.IntN(12))])
		}
		wi, gi := make([]Interval, pats.Len()), make([]Interval, pats.Len())
		ws.Intervals(&pats, wi)
		gs.Intervals(&pats, gi)
		if !slices.Equal(wi, gi) {
			t.Fatalf("round %d: intervals %v, want %v", r, gi, wi)
		}
	}
	text := searchText(rng, 300, 6)
	a := NewPage(text, 6, 0, 300, 300).Arrays()
	a.Occ = a.Occ[:len(a.Occ)-1]
	if _, err := UncheckedSearchPage(text, 6, 0, 300, 300, a); err == nil {
		t.Error("a rank structure of the wrong length was taken")
	}
}

// TestSuffixRowsInRange: a suffix array's rows taken in parts anywhere pass where checkSA
// passes the whole, and a part holding a bad row (row 0 other than n, a row n or more) fails.
func TestSuffixRowsInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	const n = 5000
	sa := make([]int32, n+1)
	sa[0] = n
	for i, p := range rng.Perm(n) {
		sa[1+i] = int32(p)
	}
	parts := func(sa []int32) bool {
		for lo := 0; lo < len(sa); {
			hi := min(lo+1+rng.IntN(700), len(sa))
			if !SuffixRowsInRange(sa[lo:hi], lo, n) {
				return false
			}
			lo = hi
		}
		return true
	}
	if checkSA(sa, n, 2) != nil || !parts(sa) {
		t.Fatal("a good suffix array refused")
	}
	for _, c := range []struct{ row, val int }{{0, n - 1}, {0, n + 1}, {1, n}, {n, n}, {2500, -1}, {77, 1 << 30}} {
		bad := slices.Clone(sa)
		bad[c.row] = int32(c.val)
		if checkSA(bad, n, 2) == nil || parts(bad) {
			t.Errorf("row %d = %d passed", c.row, c.val)
		}
	}
}

// TestMaxUint32: the vector maximum (where there is one) equals the loop's, for lengths around
// its steps and values with the top bit set (negative as int32, the largest unsigned).
func TestMaxUint32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for n := range 300 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.Uint32() >> uint(rng.IntN(32)))
		}
		for range 3 {
			if got, want := maxUint32(s), maxUint32Go(s); got != want {
				t.Fatalf("%d values: %d, want %d", n, got, want)
			}
			if n > 0 {
				s[rng.IntN(n)] = int32(rng.Uint32() | 1<<31)
			}
		}
	}
}

// BenchmarkMaxUint32 runs over 1 MiB (an index file's chunk, as the checksums' pass gives it).
func BenchmarkMaxUint32(b *testing.B) {
	s := make([]int32, 1<<18)
	for i := range s {
		s[i] = int32(i)
	}
	b.Run("vector", func(b *testing.B) {
		b.SetBytes(4 << 18)
		for b.Loop() {
			maxUint32(s)
		}
	})
	b.Run("loop", func(b *testing.B) {
		b.SetBytes(4 << 18)
		for b.Loop() {
			maxUint32Go(s)
		}
	})
}

// TestSideTableIndex: the side table's index by buckets (bigStart) gives every escaped row its
// entry, in a page built and in the same page loaded in parts of any size.
func TestSideTableIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	n := 40000
	text := storeText(rng, n, 6)
	copy(text[20000:], text[:9000]) // a long repeat: runs of escaped rows across buckets
	copy(text[31000:], text[29000:31000])
	built := NewPage(text, 6, 0, n, n)
	defer func(m int) { storeMinPart = m }(storeMinPart)
	storeMinPart = 1
	for _, threads := range []int{1, 2, 3, 7} {
		loaded, err := LoadPage(text, 6, 0, n, n, built.Arrays(), threads)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []*compactLCP{built.lcp, loaded.lcp} {
			if len(l.bigRow) < 3000 {
				t.Fatalf("only %d escaped rows", len(l.bigRow))
			}
			for i, r := range l.bigRow {
				if got := l.bigIndex(int(r)); got != i {
					t.Fatalf("%d threads: escaped row %d: entry %d, want %d", threads, r, got, i)
				}
			}
		}
	}
}

// FuzzLoadPage: a page's arrays with changes the fuzzer picks (a value of an array set at an
// index, five bytes each: the array, the index's two bytes and the value's two) load as a page or
// as an error, never a fault; a page that loads matches without one.
func FuzzLoadPage(f *testing.F) {
	rng := rand.New(rand.NewPCG(14, 15))
	n := 1500
	text := searchText(rng, n, 6)
	copy(text[800:], text[:500]) // escaped LCP values
	good := NewPage(text, 6, 0, n, n).Arrays()
	if len(good.LCPRows) == 0 {
		f.Fatal("the fuzz text has no escaped LCP values")
	}
	f.Add([]byte{})
	f.Add([]byte{3, 0, 0, 0x80, 0})
	f.Add([]byte{3, 1, 0, 0, 0, 4, 0, 0, 0, 1, 2, 10, 0, 0xff, 0})
	f.Fuzz(func(t *testing.T, changes []byte) {
		a := cloneArrays(good)
		for ; len(changes) >= 5; changes = changes[5:] {
			i := int(changes[1]) | int(changes[2])<<8
			v := int32(int16(uint16(changes[3]) | uint16(changes[4])<<8))
			switch changes[0] % 7 {
			case 0:
				a.SA[i%len(a.SA)] = v
			case 1:
				a.Occ[i%len(a.Occ)] ^= uint64(uint16(v)) << (16 * (i % 4))
			case 2:
				a.LCPBytes[i%len(a.LCPBytes)] = byte(v)
			case 3:
				a.LCPRows[i%len(a.LCPRows)] = v
			case 4:
				a.LCPValues[i%len(a.LCPValues)] = v
			case 5:
				a.LCPMin1[i%len(a.LCPMin1)] = v
			case 6:
				a.LCPMin2[i%len(a.LCPMin2)] = v
			}
		}
		p, err := LoadPage(text, 6, 0, n, n, a, 3)
		if err != nil {
			return
		}
		l := p.lcp
		for k := 0; k < n+2; k += 7 {
			for _, d := range []int32{1, 30, 300} {
				l.prevSmaller(k, d)
				l.nextSmaller(k, d)
			}
			if l.small[k] == lcpEscape {
				l.at(k)
			}
		}
	})
}
