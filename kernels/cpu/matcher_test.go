package cpu

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/internal/runseq"
	"github.com/sapipe/sapipe/kernels"
)

// naiveMatches computes the matches of q against ref by brute force, in (Query, Ref) order.
func naiveMatches(text, q []byte, mode kernels.Mode, minLen int) []kernels.Match {
	lcp := func(r, p int) int {
		k := 0
		for r+k < len(text) && p+k < len(q) && q[p+k] >= kernels.FirstCode && text[r+k] == q[p+k] {
			k++
		}
		return k
	}
	leftMax := func(r, p int) bool {
		return p == 0 || r == 0 || q[p-1] < kernels.FirstCode || text[r-1] != q[p-1]
	}
	var out []kernels.Match
	for p := range q {
		if mode == kernels.MaxMatch {
			for r := range text {
				if l := lcp(r, p); l >= minLen && leftMax(r, p) {
					out = append(out, kernels.Match{Ref: int64(r), Query: int32(p), Len: int32(l)})
				}
			}
			continue
		}
		best, count, at := 0, 0, 0
		for r := range text {
			l := lcp(r, p)
			switch {
			case l > best:
				best, count, at = l, 1, r
			case l == best && l > 0:
				count++
			}
		}
		if best >= minLen && count == 1 && leftMax(at, p) {
			out = append(out, kernels.Match{Ref: int64(at), Query: int32(p), Len: int32(best)})
		}
	}
	return out
}

func randomDNA(rng *rand.Rand, n int, alpha string) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.Intn(len(alpha))]
	}
	return b
}

// mutate copies s with substitutions and pasted repeats so that long matches and repeats occur.
func mutate(rng *rand.Rand, s []byte, rate float64) []byte {
	out := slices.Clone(s)
	for i := range out {
		if rng.Float64() < rate {
			out[i] = "acgtn"[rng.Intn(5)]
		}
	}
	return out
}

func TestMatcherAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	total := 0
	for iter := 0; iter < 300; iter++ {
		b := kernels.NewReferenceBuilder(iter%5 == 0)
		nrec := 1 + rng.Intn(3)
		var all []byte
		for r := 0; r < nrec; r++ {
			maxLen := 300
			if iter%7 == 0 {
				maxLen = 900 // repeats past the compact LCP's escape value of 255
			}
			s := randomDNA(rng, rng.Intn(maxLen), "acgt")
			if len(all) > 20 && rng.Intn(2) == 0 {
				k := rng.Intn(len(all) - 10)
				s = append(s, all[k:k+rng.Intn(len(all)-k)]...)
			}
			if rng.Intn(4) == 0 {
				s = append(s, "nnnnnnnnnn"...)
			}
			all = append(all, s...)
			b.Add(fmt.Sprint("r", r), s)
		}
		ref, err := b.Build()
		if err != nil {
			continue
		}
		src := mutate(rng, all, 0.03)
		if len(src) > 50 && rng.Intn(2) == 0 {
			src = src[rng.Intn(len(src)/2):]
		}
		q := kernels.EncodeQuery(nil, src, &ref.Alpha, rng.Intn(2) == 0, iter%5 == 0)
		minLen := 1 + rng.Intn(25)
		for _, mode := range []kernels.Mode{kernels.MaxMatch, kernels.MumReference} {
			want := naiveMatches(ref.Text, q, mode, minLen)
			total += len(want)
			for _, ps := range []int{0, 37, 150} {
				m, err := NewMatcher(ref, kernels.MatchOptions{Mode: mode, MinLen: minLen, PageSize: ps}, 2)
				if err != nil {
					t.Fatal(err)
				}
				for _, cut := range []int{len(q), 1 + len(q)/3} {
					batch := &kernels.Batch{Codes: q}
					for f := 0; f < len(q); f += cut {
						batch.Segs = append(batch.Segs, kernels.Segment{Off: 0, Len: len(q), From: f, To: min(f+cut, len(q))})
					}
					var res kernels.Result
					if err := m.Match(batch, &res); err != nil {
						t.Fatal(err)
					}
					got := res.Matches
					if got == nil {
						got = []kernels.Match{}
					}
					if want == nil {
						want = []kernels.Match{}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("iter %d mode %v minLen %d page %d cut %d:\n got %v\nwant %v", iter, mode, minLen, ps, cut, got, want)
					}
				}
			}
		}
	}
	if total < 1000 {
		t.Fatalf("only %d matches compared: the generator makes too few", total)
	}
	t.Logf("%d matches compared", total)
}

// TestPageBounds: pages tile the text, each window runs the overlap past what its page owns (or
// to the text's end), and none is longer than kernels.MaxWindow, for references far over 2^32
// bases and any page size asked for.
func TestPageBounds(t *testing.T) {
	for _, c := range []struct{ n, pageSize, minLen int }{
		{10, 0, 3}, {10, 4, 3}, {10, 10, 3}, {10, 11, 3},
		{3_100_000_000, 0, 20}, {3_100_000_000, 1_000_000_000, 20}, {1 << 40, 0, 20}, {1 << 40, 1 << 50, 100},
		{kernels.MaxWindow, 0, 20}, {kernels.MaxWindow - 20, 0, 20}, {kernels.MaxWindow - 19, 0, 20},
	} {
		b := PageBounds(c.n, c.pageSize, c.minLen)
		if len(b) > 1<<20 {
			t.Fatalf("%+v: %d pages", c, len(b))
		}
		next := 0
		for i, pg := range b {
			start, end, win := pg[0], pg[1], pg[2]
			switch {
			case start != next || end <= start:
				t.Fatalf("%+v: page %d owns [%d, %d) after %d", c, i, start, end, next)
			case win != min(end+Overlap(c.minLen), c.n) && !(len(b) == 1 && win == c.n):
				t.Fatalf("%+v: page %d's window ends at %d", c, i, win)
			case win-start > kernels.MaxWindow:
				t.Fatalf("%+v: page %d's window is %d long", c, i, win-start)
			case c.pageSize > 0 && end-start > c.pageSize:
				t.Fatalf("%+v: page %d owns %d", c, i, end-start)
			}
			next = end
		}
		if next != c.n {
			t.Fatalf("%+v: pages end at %d", c, next)
		}
	}
}

// uniqueMatchesPaged is the MumReference candidates over several pages, one segment and one
// position at a time: the longest match at each position is the longest over the pages, and it
// is unique when exactly one owned position reaches it. The lanes of laneBatchPaged must agree.
func (m *Matcher) uniqueMatchesPaged(sc *scratch, q []byte, from, to int, out []kernels.Match) []kernels.Match {
	minLen := m.opts.MinLen
	best := slices.Grow(sc.best[:0], to-from)[:to-from]
	clear(best)
	for _, p := range m.pages {
		lo, hi, d := p.startState(q, to)
		for pos := to - 1; pos >= from; pos-- {
			lo, hi, d = p.extend(lo, hi, d, q[pos])
			if d < minLen {
				continue
			}
			c := p.pageBestClimb(q, pos, lo, hi, d, minLen)
			b := &best[pos-from]
			switch {
			case c.count == 0:
			case c.len > b.len:
				*b = c
			case c.len == b.len:
				b.count += c.count
			}
		}
	}
	sc.best = best
	return m.appendUnique(q, from, best, out)
}

// pageBestClimb is pageBest as first written, the tests' reference: it climbs every enclosing
// interval down to the overlap, and compares each match that reaches the window's end with the
// text after it (runOn), with no run worked out at once and nothing remembered.
func (p *Page) pageBestClimb(q []byte, pos, lo, hi, m, minLen int) candidate {
	c, _ := p.ownedBest(lo, hi, m, -1)
	owned := p.End - p.Start
	if p.WinEnd == len(p.text) {
		return c
	}
	// Matches cut short by the window's end: the only row at depth d that can run on is the
	// suffix of length d, which sorts first in its interval.
	consider := func(d, s int) {
		if s != p.n-d || s >= owned {
			return
		}
		c.reach(d, d+p.runOn(s, d, q, pos), int64(p.Start+s))
	}
	if c.count > 0 {
		consider(m, int(p.sa[lo]))
	}
	if m-1 <= p.n-owned {
		return c
	}
	a, b := lo, hi
	for {
		d := max(p.lcp.at(a), p.lcp.at(b))
		if int(d) < minLen || p.n-int(d) >= owned {
			break
		}
		a, b = p.lcp.prevSmaller(a, d), p.lcp.nextSmaller(b, d)
		consider(int(d), int(p.sa[a]))
	}
	return c
}

// runOn (pageBestClimb's, as first written) returns how far the match of length d of q[pos:]
// against window position s continues beyond the window's end, in the full text. Only a match
// that reaches the window's end can.
func (p *Page) runOn(s, d int, q []byte, pos int) int {
	if s+d != p.n || p.WinEnd == len(p.text) {
		return 0
	}
	t := p.text[p.WinEnd:]
	qq := q[pos+d:]
	return sameRun(qq, t, 0, min(len(t), len(qq)))
}

// repeatsRef is a reference of one record of n random DNA codes with copies of stretches of 10
// to 10+span codes (repeats, so that matches are not all unique).
func repeatsRef(rng *rand.Rand, n, repeats, span int) *kernels.Reference {
	text := make([]byte, n)
	for i := range text {
		text[i] = byte(kernels.FirstCode + rng.Intn(4))
	}
	for range repeats {
		l := 10 + rng.Intn(span)
		a, b := rng.Intn(n-l), rng.Intn(n-l)
		copy(text[b:b+l], text[a:a+l])
	}
	ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"r"}}
	ref.Alpha.Size = kernels.FirstCode + 4
	return ref
}

// TestLanesPaged: the MumReference candidates over several pages, walked in lanes, are those of
// the walk one position at a time, for segments cut anywhere.
func TestLanesPaged(t *testing.T) {
	rng := rand.New(rand.NewSource(27))
	for r := range 60 {
		n := 200 + rng.Intn(4000)
		ref := repeatsRef(rng, n, 4, 60) // repeats, so that matches are not unique
		text := ref.Text
		opts := kernels.MatchOptions{Mode: kernels.MumReference, MinLen: 4 + rng.Intn(12), PageSize: 50 + rng.Intn(n)}
		m, err := NewMatcher(ref, opts, 2)
		if err != nil {
			t.Fatal(err)
		}
		var b kernels.Batch
		for range 1 + rng.Intn(40) {
			l := 1 + rng.Intn(200)
			a := rng.Intn(n - l)
			q := append([]byte(nil), text[a:a+l]...)
			for range rng.Intn(4) {
				q[rng.Intn(l)] = byte(kernels.FirstCode + rng.Intn(4))
			}
			off := len(b.Codes)
			b.Codes = append(b.Codes, q...)
			from := rng.Intn(l)
			b.Segs = append(b.Segs, kernels.Segment{Off: off, Len: l, From: from, To: from + rng.Intn(l-from+1)})
		}
		var got kernels.Result
		if err := m.Match(&b, &got); err != nil {
			t.Fatal(err)
		}
		sc := new(scratch)
		for i, sg := range b.Segs {
			want := m.uniqueMatchesPaged(sc, b.Codes[sg.Off:sg.Off+sg.Len], sg.From, sg.To, nil)
			if g := got.Seg(i); !slices.Equal(g, want) {
				t.Fatalf("round %d (%d pages), segment %d: %v, want %v", r, len(m.pages), i, g, want)
			}
		}
	}
}

// TestPageBestRuns: pageBest against pageBestClimb at every position of queries with runs of one
// symbol (gaps of N, homopolymers), against pages whose windows end inside runs, just before and
// just after them, and whose text after the window goes on with the run or not: the runs that
// runBest works out at once, and the comparisons with the text after the window that tailWalk
// remembers.
func TestPageBestRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	const sigma = kernels.FirstCode + 5 // a fifth symbol stands for N
	ranOn, inRun := 0, 0
	for r := range 150 {
		minLen := 3 + rng.Intn(10)
		pageSize := 40 + rng.Intn(200)
		n := 3*pageSize + rng.Intn(600)
		text := make([]byte, n)
		for i := range text {
			text[i] = byte(kernels.FirstCode + rng.Intn(4))
		}
		run := func(at, l int) {
			x := byte(kernels.FirstCode + rng.Intn(5))
			for i := max(at, 0); i < min(at+l, n); i++ {
				text[i] = x
			}
		}
		bounds := PageBounds(n, pageSize, minLen)
		for _, b := range bounds[:len(bounds)-1] {
			// A run around the window's end: ending before it, on it or after it.
			run(b[2]-rng.Intn(4*minLen+30), rng.Intn(8*minLen+60))
		}
		for range 3 {
			run(rng.Intn(n), rng.Intn(6*minLen+40))
		}
		ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"r"}}
		ref.Alpha.Size = sigma
		m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MumReference, MinLen: minLen, PageSize: pageSize}, 2)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			// A stretch of the text with one of its runs made longer or shorter, and a
			// substitution now and then.
			l := 10 + rng.Intn(3*pageSize)
			a := rng.Intn(n - min(l, n-1))
			q := slices.Clone(text[a:min(a+l, n)])
			if i := rng.Intn(len(q)); rng.Intn(3) > 0 {
				j := i
				for j < len(q) && q[j] == q[i] {
					j++
				}
				if d := rng.Intn(2*minLen+10) - minLen - 5; d > 0 {
					q = slices.Insert(q, i, slices.Repeat(q[i:i+1], d)...)
				} else {
					q = slices.Delete(q, i, min(i-d, j))
				}
			}
			if rng.Intn(3) == 0 {
				q[rng.Intn(len(q))] = byte(kernels.FirstCode + rng.Intn(5))
			}
			for _, p := range m.pages {
				var tw tailWalk
				lo, hi, d := p.startState(q, len(q))
				for pos := len(q) - 1; pos >= 0; pos-- {
					lo, hi, d = p.extend(lo, hi, d, q[pos])
					if d < minLen {
						continue
					}
					want := p.pageBestClimb(q, pos, lo, hi, d, minLen)
					got, _ := p.pageBest(q, pos, lo, hi, d, minLen, -1, &tw)
					if got.len != want.len || min(got.count, 2) != min(want.count, 2) || (want.count == 1 && got.ref != want.ref) {
						t.Fatalf("round %d, page [%d, %d) of a window to %d (ends in %d of %d, %d more after), query %d long at %d (%d rows at depth %d): %+v, want %+v",
							r, p.Start, p.End, p.WinEnd, p.endRun, p.endSym, p.tailRun, len(q), pos, hi-lo, d, got, want)
					}
					if int(want.len) > d {
						ranOn++
						if q[pos] == p.endSym && p.endRun >= minLen {
							inRun++
						}
					}
				}
			}
		}
	}
	if inRun < 1000 {
		t.Fatalf("%d matches ran on past a window's end, %d of them from a run at its end: too few", ranOn, inRun)
	}
	t.Logf("%d matches ran on past a window's end, %d of them from a run at its end", ranOn, inRun)
}

// TestWalkStates: the two facts the walks lean on to skip reads. The rows around a match's
// interval share fewer than m symbols with it (pageBest skips the enclosing intervals while the
// overlap holds m-1 symbols), and a one-row interval extended by the symbol before its suffix is
// the row of the suffix one position left (the lanes carry the suffix array's value along).
func TestWalkStates(t *testing.T) {
	rng := rand.New(rand.NewSource(28))
	for r := range 40 {
		n := 200 + rng.Intn(3000)
		ref := repeatsRef(rng, n, 6, 80)
		text := ref.Text
		m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MumReference, MinLen: 5, PageSize: 60 + rng.Intn(n)}, 2)
		if err != nil {
			t.Fatal(err)
		}
		checked, carried := 0, 0
		for range 30 {
			l := 1 + rng.Intn(150)
			a := rng.Intn(n - l)
			q := append([]byte(nil), text[a:a+l]...)
			for range rng.Intn(4) {
				q[rng.Intn(l)] = byte(kernels.FirstCode + rng.Intn(4))
			}
			for _, p := range m.pages {
				lo, hi, d := p.startState(q, l)
				s := -1
				for pos := l - 1; pos >= 0; pos-- {
					plo, phi := lo, hi
					lo, hi, d = p.extend(lo, hi, d, q[pos])
					if s >= 0 && phi-plo == 1 && hi-lo == 1 && d > 0 && p.occ.Rank(q[pos], phi)-p.occ.Rank(q[pos], plo) == 1 {
						if got := int(p.sa[lo]); got != s-1 {
							t.Fatalf("round %d: row %d extended by %d holds suffix %d, want %d", r, plo, q[pos], got, s-1)
						}
						carried++
					}
					s = -1
					if hi-lo == 1 {
						s = int(p.sa[lo])
					}
					if d > 0 {
						if a, b := int(p.lcp.at(lo)), int(p.lcp.at(hi)); a >= d || b >= d {
							t.Fatalf("round %d: rows [%d, %d) of a %d-long match: LCPs %d and %d around it", r, lo, hi, d, a, b)
						}
						checked++
					}
				}
			}
		}
		if checked == 0 || carried == 0 {
			t.Fatalf("round %d: %d states checked, %d carried", r, checked, carried)
		}
	}
}

// TestStartStatesLinked: the start states of a long sequence's chunks, found from the last chunk to
// the first with matches that are one row taken from the next chunk's (startStates), are those of
// a search from each chunk's end (startState); the queries are the reference's own records, and
// copies with a substitution every few hundred symbols, in chunks of 1-60 positions.
func TestStartStatesLinked(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	linkable := 0
	for round := range 30 {
		b := kernels.NewReferenceBuilder(false)
		var recs [][]byte
		for r := range 1 + rng.Intn(3) {
			s := randomDNA(rng, 500+rng.Intn(3000), "acgt")
			if len(recs) > 0 && rng.Intn(2) == 0 {
				s = append(s, recs[0][:rng.Intn(len(recs[0]))]...) // a copy: two rows for a while
			}
			recs = append(recs, s)
			b.Add(fmt.Sprint("r", r), s)
		}
		ref, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 10, PageSize: []int{0, 700}[round%2]}, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			src := rec
			if rng.Intn(2) == 0 {
				src = mutate(rng, rec, 0.003)
			}
			q := kernels.EncodeQuery(nil, src, &ref.Alpha, rng.Intn(2) == 0, false)
			batch := &kernels.Batch{Codes: q}
			for f := 0; f < len(q); {
				to := min(f+1+rng.Intn(60), len(q))
				batch.Segs = append(batch.Segs, kernels.Segment{Off: 0, Len: len(q), From: f, To: to})
				f = to
			}
			for _, p := range m.pages {
				for g := 0; g < len(batch.Segs); g += laneCount {
					segs := batch.Segs[g:min(g+laneCount, len(batch.Segs))]
					var ls [laneCount]lane
					p.startStates(batch, segs, ls[:len(segs)])
					for i, sg := range segs {
						lo, hi, d := p.startState(q, sg.To)
						if l := ls[i]; l.lo != lo || l.hi != hi || l.m != d {
							t.Fatalf("round %d, segment %+v: state (%d, %d, %d), want (%d, %d, %d)", round, sg, l.lo, l.hi, l.m, lo, hi, d)
						}
						if i+1 < len(segs) && hi-lo == 1 && d >= segs[i+1].To-sg.To {
							if nlo, nhi, _ := p.startState(q, segs[i+1].To); nhi-nlo == 1 && p.sa[nlo] == p.sa[lo]+int32(segs[i+1].To-sg.To) {
								linkable++
							}
						}
					}
				}
			}
		}
	}
	if linkable < 100 {
		t.Fatalf("only %d start states could come from the next segment's", linkable)
	}
	t.Logf("%d start states could come from the next segment's", linkable)
}

// TestLongestPrefixTandem: longestPrefix's rows and length are those that comparing the pattern
// with every suffix of the window gives, in texts of tandem arrays (periods 1 to 12, with some
// copies changed), where the rows split a copy at a time and share long prefixes.
func TestLongestPrefixTandem(t *testing.T) {
	rng := rand.New(rand.NewSource(37))
	checked := 0
	for round := range 40 {
		var text []byte
		for len(text) < 3000 {
			text = appendTandem(rng, text, 12, 1, 120)
		}
		n := len(text)
		p := newPage(text, kernels.FirstCode+4, 0, n, n, 1)
		for range 60 {
			a := rng.Intn(n)
			pat := append([]byte(nil), text[a:min(n, a+1+rng.Intn(600))]...)
			if rng.Intn(2) == 0 {
				pat[rng.Intn(len(pat))] = byte(kernels.FirstCode + rng.Intn(4))
			}
			lo, hi, m := p.longestPrefix(pat)
			best := 0
			common := func(s int) int {
				k := 0
				for k < len(pat) && s+k < n && text[s+k] == pat[k] {
					k++
				}
				return k
			}
			for s := range n {
				best = max(best, common(s))
			}
			if m != best {
				t.Fatalf("round %d: length %d, want %d", round, m, best)
			}
			for r := 1; r <= n; r++ {
				if in, long := r >= lo && r < hi, common(int(p.sa[r])) >= m; in != long {
					t.Fatalf("round %d: row %d in [%d, %d) is %v; its suffix shares %d of the pattern, the match is %d",
						round, r, lo, hi, in, common(int(p.sa[r])), m)
				}
			}
			checked++
		}
	}
	t.Logf("%d patterns checked", checked)
}

// TestEmitRows: emitRows, which takes the rows not preceded by prev a block of the rank structure
// at a time, emits what a scan of every row of [a, b) does, for ranges within a block, across
// blocks and up to the last row, pages that own part of their window, and every prev.
func TestEmitRows(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	emitted := 0
	for round := range 30 {
		n := 300 + rng.Intn(3000)
		ref := repeatsRef(rng, n, 6, 200)
		end := n
		if round%2 == 1 {
			end = n/2 + rng.Intn(n/2)
		}
		p := newPage(ref.Text, ref.Alpha.Size, 0, end, n, 1)
		q := append([]byte(nil), ref.Text[rng.Intn(n/2):]...)
		for range 200 {
			a := rng.Intn(n + 1)
			b := a + rng.Intn(min(n+1-a, 400)+1)
			d, pos := 1+rng.Intn(30), rng.Intn(len(q))
			prev := byte(kernels.FirstCode + rng.Intn(4))
			if rng.Intn(5) == 0 {
				prev = kernels.CodeNone
			}
			var want []kernels.Match
			for k := a; k < b; k++ {
				if prev >= kernels.FirstCode && p.occ.Symbol(k) == prev {
					continue
				}
				want = p.emitRow(k, d, q, pos, new(tailWalk), want)
			}
			got := p.emitRows(a, b, d, prev, q, pos, new(tailWalk), nil)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, rows [%d, %d), prev %d: %v, want %v", round, a, b, prev, got, want)
			}
			emitted += len(want)
		}
	}
	if emitted < 1000 {
		t.Fatalf("only %d matches emitted", emitted)
	}
}

// appendTandem appends a tandem array to text: a random unit of 1 to maxUnit symbols, repeated
// minCopies plus up to copySpan-1 more times, one copy in 20 with a substitution.
func appendTandem(rng *rand.Rand, text []byte, maxUnit, minCopies, copySpan int) []byte {
	unit := make([]byte, 1+rng.Intn(maxUnit))
	for i := range unit {
		unit[i] = byte(kernels.FirstCode + rng.Intn(4))
	}
	for range minCopies + rng.Intn(copySpan) {
		text = append(text, unit...)
		if rng.Intn(20) == 0 {
			text[len(text)-1-rng.Intn(len(unit))] = byte(kernels.FirstCode + rng.Intn(4))
		}
	}
	return text
}

// tandemText is n codes of tandem arrays (units of 1-60 symbols, 2-400 copies) between stretches
// of random sequence: a satellite-rich genome in small.
func tandemText(rng *rand.Rand, n int) []byte {
	text := make([]byte, 0, n)
	for len(text) < n {
		for range rng.Intn(2000) {
			text = append(text, byte(kernels.FirstCode+rng.Intn(4)))
		}
		text = appendTandem(rng, text, 60, 2, 400)
	}
	return text[:n]
}

// BenchmarkMaxMatchTandem: -maxmatch of 64 kbp of tandem arrays against themselves (minimum
// length 50), one thread: the enclosing intervals of satellites, emitRows and the LCP's side table.
func BenchmarkMaxMatchTandem(b *testing.B) {
	rng := rand.New(rand.NewSource(43))
	text := tandemText(rng, 1<<16)
	ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"t"}}
	ref.Alpha.Size = kernels.FirstCode + 4
	m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 50}, 1)
	if err != nil {
		b.Fatal(err)
	}
	benchMatch(b, m, text)
}

// longestPrefix is longestPrefixCapped without a cap.
func (p *Page) longestPrefix(pat []byte) (lo, hi, m int) {
	lo, hi, m, _ = p.longestPrefixCapped(pat, 0)
	return lo, hi, m
}

// startState returns the match state of q[to:], searched for on its own: what startStates finds
// with the next segment's help.
func (p *Page) startState(q []byte, to int) (int, int, int) {
	if to >= len(q) {
		return 0, p.n + 1, 0
	}
	return p.longestPrefix(q[to:])
}

// BenchmarkMumPagedGap: -mum of a sequence against itself over pages, where a gap of N straddles
// one window's end and another sits inside a window (64 kbp of random DNA with two gaps of
// 8 kbp, pages of 24 kbp). Every position in a gap climbed an interval a symbol of the gap, and
// compared each match that ran past the window's end to the end of the sequence.
func BenchmarkMumPagedGap(b *testing.B) {
	rng := rand.New(rand.NewSource(44))
	const n, gap, page = 1 << 16, 8 << 10, 24 << 10
	text := make([]byte, n)
	for i := range text {
		text[i] = byte(kernels.FirstCode + rng.Intn(4))
	}
	for _, at := range []int{page + Overlap(50) - gap/2, 2*page + gap/2} {
		for i := at; i < at+gap; i++ {
			text[i] = kernels.FirstCode + 4
		}
	}
	ref := &kernels.Reference{Text: text, Starts: []int{0}, Names: []string{"g"}}
	ref.Alpha.Size = kernels.FirstCode + 5
	m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.Mum, MinLen: 50, PageSize: page}, 1)
	if err != nil {
		b.Fatal(err)
	}
	benchMatch(b, m, text)
}

// TestMaxMatchRuns: -maxmatch against the brute force where queries and references have runs of
// one symbol (gaps of N, homopolymers) of every length around the minimum, over pages whose
// windows end inside runs, with emitRuns taking over from the climb at any depth.
func TestMaxMatchRuns(t *testing.T) {
	defer func(v int) { runEmitFrom = v }(runEmitFrom)
	rng := rand.New(rand.NewSource(45))
	listed, total := 0, 0
	for iter := range 150 {
		runEmitFrom = 1 + rng.Intn(20)
		b := kernels.NewReferenceBuilder(false)
		var all []byte
		for r, s := range runseq.Records(rng.Intn, 2, 50, 300, 4, 80) {
			all = append(all, s...)
			b.Add(fmt.Sprint("r", r), s)
		}
		ref, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		// The query: the records, with each run made longer or shorter and a few substitutions.
		src := runseq.Stretch(rng.Intn, all, 10)
		src = mutate(rng, src, 0.005)
		q := kernels.EncodeQuery(nil, src, &ref.Alpha, rng.Intn(2) == 0, false)
		minLen := 3 + rng.Intn(25)
		want := naiveMatches(ref.Text, q, kernels.MaxMatch, minLen)
		total += len(want)
		for _, ps := range []int{0, 40 + rng.Intn(100)} {
			m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: minLen, PageSize: ps}, 2)
			if err != nil {
				t.Fatal(err)
			}
			batch := &kernels.Batch{Codes: q, Segs: []kernels.Segment{{Off: 0, Len: len(q), From: 0, To: len(q)}}}
			var res kernels.Result
			if err := m.Match(batch, &res); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Matches, want) && (len(res.Matches) > 0 || len(want) > 0) {
				t.Fatalf("iter %d minLen %d page %d (emitRuns from depth %d):\n got %v\nwant %v", iter, minLen, ps, runEmitFrom, res.Matches, want)
			}
			for _, p := range m.pages {
				if p.runs != nil && p.runs.minLen.Load() != 0 {
					listed++
				}
			}
		}
	}
	if listed < 50 || total < 1000 {
		t.Fatalf("%d pages listed their runs, %d matches compared: too few", listed, total)
	}
	t.Logf("%d pages listed their runs, %d matches compared", listed, total)
}

// BenchmarkMaxMatchGap: -maxmatch -l 100 of a record of 20 kbp, a gap of 40 kbp of N and 20 kbp
// against itself, one page. Each position in the gap climbed an interval a base of the rest of
// the gap to find its one left-maximal match (mummer 3.23 takes 39.7 s for it on the 2-core VM).
func BenchmarkMaxMatchGap(b *testing.B) {
	ref, rec, m := gapMatcher(b, 46, 'n', 40000)
	benchMatch(b, m, kernels.EncodeQuery(nil, rec, &ref.Alpha, false, false))
}

// gapMatcher returns a record of 20 kbp, a run of gap bytes fill and 20 kbp (random DNA from
// seed), its reference, and a one-page -maxmatch -l 100 matcher of it.
func gapMatcher(b *testing.B, seed int64, fill byte, gap int) (*kernels.Reference, []byte, *Matcher) {
	rng := rand.New(rand.NewSource(seed))
	rec := slices.Concat(randomDNA(rng, 20000, "acgt"), slices.Repeat([]byte{fill}, gap), randomDNA(rng, 20000, "acgt"))
	rb := kernels.NewReferenceBuilder(false)
	rb.Add("g", rec)
	ref, err := rb.Build()
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewMatcher(ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 100}, 1)
	if err != nil {
		b.Fatal(err)
	}
	return ref, rec, m
}

// benchMatch matches codes against m b.N times, cut into segments of 4 Ki positions as stages
// cuts a long record, and reports the matches found.
func benchMatch(b *testing.B, m *Matcher, codes []byte) {
	batch := &kernels.Batch{Codes: codes}
	for f := 0; f < len(codes); f += 1 << 12 {
		batch.Segs = append(batch.Segs, kernels.Segment{Off: 0, Len: len(codes), From: f, To: min(f+1<<12, len(codes))})
	}
	var res kernels.Result
	b.SetBytes(int64(len(codes)))
	for b.Loop() {
		res = kernels.Result{}
		if err := m.Match(batch, &res); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(res.Matches)), "matches")
}

// BenchmarkRunsOf asks a page for a symbol's runs from every thread at once, as the positions
// inside a long run (a gap of N, poly-A) do under -maxmatch: the lists once made are read
// without a lock.
func BenchmarkRunsOf(b *testing.B) {
	ref, _, m := gapMatcher(b, 47, 'a', 4000)
	p := m.pages[0]
	x := ref.Text[22000] // inside the run
	if _, _, ok := p.runsOf(x, 100); !ok {
		b.Fatal("no list of runs")
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if byLen, _, ok := p.runsOf(x, 100); !ok || len(byLen) != 1 {
				b.Fatalf("%d runs, ok %v", len(byLen), ok)
			}
		}
	})
}
