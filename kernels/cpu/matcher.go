package cpu

import (
	"cmp"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sapipe/sapipe/kernels"
)

// Backend is the pure-Go compute backend. It is always available.
type Backend struct {
	Threads int // goroutines for work that splits (page indexes, blocks); at least 1
}

// New returns the CPU backend using up to threads goroutines.
func New(threads int) *Backend { return &Backend{Threads: max(threads, 1)} }

// Name returns "cpu".
func (*Backend) Name() string { return "cpu" }

// Close does nothing; the CPU holds no device state.
func (*Backend) Close() error { return nil }

// NewMatcher indexes ref for matching with opts.
func (b *Backend) NewMatcher(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error) {
	return NewMatcher(ref, opts, b.Threads)
}

// SuffixArray fills sa with the suffix array of text.
func (b *Backend) SuffixArray(text []byte, sa []int32) error {
	if int64(len(text)) > 1<<31-1 {
		return kernels.ErrTooLarge
	}
	SuffixArrayThreads(text, sa, b.Threads)
	return nil
}

// SuffixArrayThreads is SuffixArray on up to threads threads instead of b.Threads: for callers
// that sort several texts at once.
func (b *Backend) SuffixArrayThreads(text []byte, sa []int32, threads int) error {
	if int64(len(text)) > 1<<31-1 {
		return kernels.ErrTooLarge
	}
	SuffixArrayThreads(text, sa, threads)
	return nil
}

// BWT transforms each block, up to Threads blocks at once.
func (b *Backend) BWT(src, dst [][]byte, primary []int) error {
	for _, s := range src {
		if int64(len(s)) > 1<<31-1 {
			return kernels.ErrTooLarge
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(b.Threads, 1))
	perBlock := 1 // blocks in parallel, each sorted on one thread
	if len(src) == 1 {
		perBlock = max(b.Threads, 1)
	}
	for i := range src {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			sa := make([]int32, len(src[i]))
			SuffixArrayThreads(src[i], sa, perBlock)
			primary[i] = BWTThreads(src[i], sa, dst[i], perBlock)
			<-sem
		}()
	}
	wg.Wait()
	return nil
}

// Matcher matches query batches against the pages of one reference.
type Matcher struct {
	ref   *kernels.Reference
	opts  kernels.MatchOptions
	pages []*Page
	pool  sync.Pool // *scratch
}

type scratch struct {
	best  []candidate
	lanes [laneCount][]kernels.Match // per-lane matches of maxMatchBatch
	sink  uint64                     // what the lanes' cache-touching loads read; never used
}

// candidate is the best match found so far at one query position across pages (MumReference).
type candidate struct {
	len   int32
	count int32
	ref   int64
}

// Overlap returns how far a page's window runs past the positions it owns: enough that every
// owned position has at least minLen bases of window text.
func Overlap(minLen int) int { return minLen }

// PageBounds cuts a text of length n into pages of size pageSize (0: as few as can be, one for a
// text of up to MaxPageSize bases) and returns the start, owned end and window end of each. No
// window is longer than kernels.MaxWindow, whatever pageSize asks.
func PageBounds(n, pageSize, minLen int) [][3]int {
	return PageBoundsOverlap(n, pageSize, Overlap(minLen))
}

// PageBoundsOverlap is PageBounds with windows that run overlap past what their pages own.
func PageBoundsOverlap(n, pageSize, overlap int) [][3]int {
	if most := kernels.MaxPageSize(overlap); pageSize <= 0 || pageSize > most {
		pageSize = most
	}
	if pageSize >= n {
		return [][3]int{{0, n, n}}
	}
	var b [][3]int
	for s := 0; s < n; s += pageSize {
		e := min(s+pageSize, n)
		b = append(b, [3]int{s, e, min(e+overlap, n)})
	}
	return b
}

// bigPage is the window length from which pages are indexed one at a time, each on every thread:
// several at once, each on one thread, would hold as many builds' memory.
const bigPage = 1 << 24

// NewMatcher builds the page indexes of ref on up to threads goroutines: small pages several at
// once, each on one thread; large ones one at a time, each on every thread.
func NewMatcher(ref *kernels.Reference, opts kernels.MatchOptions, threads int) (*Matcher, error) {
	if err := opts.Validate(ref); err != nil {
		return nil, err
	}
	bounds := PageBounds(len(ref.Text), opts.PageSize, opts.MinLen)
	m := &Matcher{ref: ref, opts: opts, pages: make([]*Page, len(bounds))}
	threads = max(1, threads)
	atOnce := min(threads, len(bounds))
	if bounds[0][2]-bounds[0][0] >= bigPage {
		atOnce = 1
	}
	saThreads := max(1, threads/atOnce)
	sem := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for i, b := range bounds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			m.pages[i] = newPage(ref.Text, ref.Alpha.Size, b[0], b[1], b[2], saThreads)
			m.pages[i].markDeepThreads(opts.MinLen, saThreads)
			if opts.Mode == kernels.MaxMatch || len(bounds) == 1 {
				m.pages[i].markSkips(saThreads)
			}
			<-sem
		}()
	}
	wg.Wait()
	m.pool.New = func() any { return new(scratch) }
	return m, nil
}

// Pages returns the page indexes.
func (m *Matcher) Pages() []*Page { return m.pages }

// Close releases nothing; the indexes are garbage collected.
func (m *Matcher) Close() error { return nil }

// Match appends the matches of every segment of b to res.
func (m *Matcher) Match(b *kernels.Batch, res *kernels.Result) error {
	sc := m.pool.Get().(*scratch)
	defer m.pool.Put(sc)
	if m.opts.Mode == kernels.MaxMatch || len(m.pages) == 1 {
		m.laneBatch(sc, b, res)
		return nil
	}
	m.laneBatchPaged(sc, b, res)
	return nil
}

// laneBatchPaged appends the MumReference candidates of each segment of b to res over a
// reference of several pages, walking laneCount segments through each page at once: the best
// match at each position over the pages, then those that are unique and left-maximal.
func (m *Matcher) laneBatchPaged(sc *scratch, b *kernels.Batch, res *kernels.Result) {
	var bests [laneCount][]candidate
	for g := 0; g < len(b.Segs); g += laneCount {
		segs := b.Segs[g:min(g+laneCount, len(b.Segs))]
		total := 0
		for _, sg := range segs {
			total += max(sg.To-sg.From, 0)
		}
		all := slices.Grow(sc.best[:0], total)[:total]
		clear(all)
		sc.best = all
		at := 0
		for i, sg := range segs {
			n := max(sg.To-sg.From, 0)
			bests[i] = all[at : at+n : at+n]
			at += n
		}
		for _, p := range m.pages {
			p.walkLanesBest(b, segs, m.opts.MinLen, bests[:len(segs)], &sc.sink)
		}
		for i, sg := range segs {
			q := b.Codes[sg.Off : sg.Off+sg.Len]
			res.Matches = m.appendUnique(q, sg.From, bests[i], res.Matches)
			res.Ends = append(res.Ends, len(res.Matches))
		}
	}
}

// sortMatches puts matches in (Query, Ref) order. A single page emits them by descending query
// position, so reversing leaves only runs of equal positions to sort.
func sortMatches(ms []kernels.Match, descendingByQuery bool) {
	if !descendingByQuery {
		slices.SortFunc(ms, cmpMatch)
		return
	}
	slices.Reverse(ms)
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].Query == ms[i].Query {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ms[i:j], cmpMatch)
		}
		i = j
	}
}

func cmpMatch(a, b kernels.Match) int {
	if a.Query != b.Query {
		return int(a.Query) - int(b.Query)
	}
	return cmp.Compare(a.Ref, b.Ref)
}

// laneBatch appends the matches of each segment of b to res, walking laneCount segments through
// each page at once: every maximal match (-maxmatch), or the MumReference candidates when the
// reference is one page.
func (m *Matcher) laneBatch(sc *scratch, b *kernels.Batch, res *kernels.Result) {
	unique := m.opts.Mode != kernels.MaxMatch
	outs := sc.lanes[:]
	for g := 0; g < len(b.Segs); g += laneCount {
		segs := b.Segs[g:min(g+laneCount, len(b.Segs))]
		for i := range segs {
			outs[i] = outs[i][:0]
		}
		for _, p := range m.pages {
			p.walkLanes(b, segs, m.opts.MinLen, unique, outs[:len(segs)], &sc.sink)
		}
		// Grown once for the group: a segment in a repeat-rich region can have millions of
		// matches, and growing to them by appends copied and faulted in memory many times over.
		total := 0
		for i := range segs {
			total += len(outs[i])
		}
		res.Matches = slices.Grow(res.Matches, total)
		for i := range segs {
			start := len(res.Matches)
			res.Matches = append(res.Matches, outs[i]...)
			if unique {
				slices.Reverse(res.Matches[start:]) // one match a position, by descending position
			} else {
				sortMatches(res.Matches[start:], len(m.pages) == 1)
			}
			res.Ends = append(res.Ends, len(res.Matches))
		}
	}
}

// runEmitFrom is RunEmitDepth, lowered by tests.
var runEmitFrom = RunEmitDepth

// emitRuns appends the -maxmatch matches at pos that the climb from an interval of depth d on
// would find, where q[pos:] begins with a run of k >= d codes x and q[pos-1] is x: the enclosing
// intervals are those of x^j, j <= d, down to the minimum length, and the only rows in them not
// preceded by x are the starts of the window's runs of x (rs, by length). A run j long, j <= d,
// matches j symbols (run on past the window's end where it reaches it); with d = k, a run longer
// than k matches k, and one exactly k long whose next symbol is q[pos+k] is in the deeper
// interval, already emitted with its longer match. tw runs a match on past the window's end
// (at every position of a gap that straddles it).
func (p *Page) emitRuns(rs []SymRun, d, k int, q []byte, pos int, tw *tailWalk, out []kernels.Match) []kernels.Match {
	for _, r := range rs {
		switch {
		case r.N <= d:
			if r.N == k && d == k && r.S+r.N < p.n && pos+k < len(q) && p.w[r.S+r.N] == q[pos+k] {
				continue
			}
			out = p.emitAt(r.S, r.N, q, pos, tw, out)
		case d == k:
			out = p.emitAt(r.S, k, q, pos, tw, out)
		default:
			return out // longer runs are in the deeper interval
		}
	}
	return out
}

// emitFromRuns is the rest of laneStep's -maxmatch climb from the interval [a, b) on, whose
// enclosing interval has depth d, taken from the page's runs where l's position is inside a run
// of its symbol x at least d long; false where it is not, or the runs were listed for a longer
// minimum. With x before the position too, the matches are the runs' starts (emitRuns); at the
// run's first position every row of the levels left is one, each matching d or its own run of x,
// whichever is less: the rows of the interval at the minimum length outside [a, b), at once
// rather than a level a symbol of the run.
func (p *Page) emitFromRuns(l *lane, a, b, d int, prev byte, minLen int) bool {
	q, pos := l.q, l.pos
	k := l.tw.runAt(q, pos)
	if d > k {
		return false
	}
	x := q[pos]
	byLen, byPos, ok := p.runsOf(x, minLen)
	if !ok {
		return false
	}
	if prev == x {
		l.out = p.emitRuns(byLen, d, k, q, pos, &l.tw, l.out)
		return true
	}
	l.out = p.emitRowsIn(p.lcp.prevSmaller(a, int32(minLen)), a, d, prev, q, pos, byPos, &l.tw, l.out)
	l.out = p.emitRowsIn(b, p.lcp.nextSmaller(b, int32(minLen)), d, prev, q, pos, byPos, &l.tw, l.out)
	return true
}

// pageRuns lists a page window's runs of a symbol that are at least minLen long, by length and by
// position, for each symbol a walk has asked about. A list, once made, is read without the lock:
// every position inside a gap of N asks for it, from every thread at once (a lock there is the
// kind that made 32 threads queue on GOMAXPROCS's; stages/mummer.go).
type pageRuns struct {
	mu     sync.Mutex   // taken to make a list
	minLen atomic.Int64 // 0 until the first list
	lists  [256]atomic.Pointer[symRuns]
}

// symRuns are one symbol's runs, by length and by position.
type symRuns struct{ byLen, byPos []SymRun }

// runsOf returns the window's runs of x at least minLen long, by length and by position, listed
// the first time x is asked about (with the minLen of the first list; ok is false for a shorter
// one, and for a page without the list). Only x's runs are listed: a gap of N needs no list of
// poly-A.
func (p *Page) runsOf(x byte, minLen int) (byLen, byPos []SymRun, ok bool) {
	r := p.runs
	if r == nil {
		return nil, nil, false
	}
	if m := r.minLen.Load(); m != 0 {
		if int64(minLen) < m {
			return nil, nil, false
		}
		if l := r.lists[x].Load(); l != nil {
			return l.byLen, l.byPos, true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.minLen.CompareAndSwap(0, int64(minLen))
	m := int(r.minLen.Load())
	if minLen < m {
		return nil, nil, false
	}
	if l := r.lists[x].Load(); l != nil {
		return l.byLen, l.byPos, true
	}
	byPos = listRuns(p.w, x, m)
	byLen = slices.Clone(byPos)
	sortRunsByLength(byLen)
	r.lists[x].Store(&symRuns{byLen, byPos})
	return byLen, byPos, true
}

// emitRows appends the left-maximal owned matches among rows [a, b), each matching d symbols of
// q[pos:] inside the window.
func (p *Page) emitRows(a, b, d int, prev byte, q []byte, pos int, tw *tailWalk, out []kernels.Match) []kernels.Match {
	return p.emitRowsIn(a, b, d, prev, q, pos, nil, tw, out)
}

// selectRows is how many rank blocks a candidate row found by SelectOther is taken to cost.
const selectRows = 4

// emitRowsIn is emitRows where, with byPos (a symbol's runs by position, each row's suffix
// starting in one), a row matches d or the rest of its run, whichever is less.
func (p *Page) emitRowsIn(a, b, d int, prev byte, q []byte, pos int, byPos []SymRun, tw *tailWalk, out []kernels.Match) []kernels.Match {
	if a >= b {
		return out
	}
	emit := func(k int) {
		if byPos == nil {
			out = p.emitRow(k, d, q, pos, tw, out)
			return
		}
		s := int(p.sa[k])
		i, _ := slices.BinarySearchFunc(byPos, s+1, func(r SymRun, t int) int { return cmp.Compare(r.S, t) })
		r := byPos[i-1] // the last run to start at or before s
		out = p.emitAt(s, min(d, r.S+r.N-s), q, pos, tw, out)
	}
	if prev < kernels.FirstCode {
		for k := a; k < b; k++ {
			emit(k)
		}
		return out
	}
	r1 := p.occ.Rank(prev, a)
	c := b - a - (p.occ.Rank(prev, b) - r1) // rows not preceded by prev
	if c == 0 {
		return out // every row is preceded by prev: none is left-maximal
	}
	if blocks := (b-1)/occBlock - a/occBlock + 1; c*selectRows < blocks {
		// Few candidates in many blocks (an interval of a satellite's copies): each found from
		// the blocks' counts rather than every block's planes read.
		t, blk := a-r1, a/occBlock
		for j := range c {
			k := p.occ.SelectOther(prev, t+j, blk)
			blk = k / occBlock
			emit(k)
		}
		return out
	}
	// A block of the rank structure at a time, only its rows not preceded by prev: in a repeat
	// the rows of an enclosing interval are thousands, nearly all preceded by prev.
	for k := a; k < b; {
		from := k &^ (occBlock - 1)
		end := min(b, from+occBlock)
		lo, hi := p.occ.masks((k/occBlock)*p.occ.stride, prev)
		rows := [2]uint64{^lo & rowsFrom(k-from) & rowsBelow(end-from), ^hi & rowsFrom(k-from-64) & rowsBelow(end-from-64)}
		for w, m := range rows {
			for ; m != 0; m &= m - 1 {
				emit(from + 64*w + bits.TrailingZeros64(m))
			}
		}
		k = end
	}
	return out
}

// rowsFrom is the mask of a word's bits i and up (all for i <= 0, none for i >= 64); rowsBelow,
// of its bits under i.
func rowsFrom(i int) uint64 {
	if i <= 0 {
		return ^uint64(0)
	}
	if i >= 64 {
		return 0
	}
	return ^uint64(0) << uint(i)
}

func rowsBelow(i int) uint64 { return ^rowsFrom(i) }

// emitRow appends the match of length d (run on past the window's end) at row k's suffix, if
// the page owns its position and it is left-maximal at the text's start.
func (p *Page) emitRow(k, d int, q []byte, pos int, tw *tailWalk, out []kernels.Match) []kernels.Match {
	return p.emitAt(int(p.sa[k]), d, q, pos, tw, out)
}

// emitAt is emitRow for the suffix at window position s; a match that reaches the window's end
// is run on by tw.tailMatch.
func (p *Page) emitAt(s, d int, q []byte, pos int, tw *tailWalk, out []kernels.Match) []kernels.Match {
	g := p.Start + s
	if g >= p.End {
		return out
	}
	if s == 0 && !p.leftMaximal(s, q, pos) {
		return out
	}
	full := d
	if s+d == p.n && p.WinEnd < len(p.text) {
		full += tw.tailMatch(p, q, pos, pos+d)
	}
	return append(out, kernels.Match{Ref: int64(g), Query: int32(pos), Len: int32(full)})
}

// pageBest finds, at one query position with window match state (lo, hi, m), the longest match
// over the reference positions this page owns, and how many owned positions reach that length.
// s is the suffix array's value at lo when the caller knows it and hi-lo is 1 (-1 otherwise);
// the value at lo is returned when the interval is one row and it was known or read, -1
// otherwise, so that a walk that extends that row need not read it again (extending row lo by
// the symbol before its suffix gives the row of suffix s-1). tw is the walk's (see tailWalk).
func (p *Page) pageBest(q []byte, pos, lo, hi, m, minLen, s int, tw *tailWalk) (candidate, int) {
	c, s := p.ownedBest(lo, hi, m, s)
	owned := p.End - p.Start
	if p.WinEnd == len(p.text) {
		return c, s
	}
	// Matches cut short by the window's end: the only row at depth d that can run on is the
	// suffix of length d, which sorts first in its interval.
	consider := func(d, s int) {
		if s != p.n-d || s >= owned {
			return
		}
		c.reach(d, d+tw.tailMatch(p, q, pos, pos+d), int64(p.Start+s))
	}
	if c.count > 0 {
		sLo := s
		if sLo < 0 {
			sLo = int(p.sa[lo])
		}
		consider(m, sLo)
	}
	// The enclosing intervals are shallower than m (the rows around an exact interval share
	// fewer than m symbols with it): none reaches the window's end from an owned position while
	// the page's overlap holds m-1 symbols, so their LCPs need not be read.
	if m-1 <= p.n-owned {
		return c, s
	}
	lb := max(minLen, p.n-owned+1) // the shallowest depth of a suffix from an owned position
	a, b := lo, hi
	for {
		d := int(max(p.lcp.at(a), p.lcp.at(b)))
		if d < lb {
			break
		}
		if k := tw.runAt(q, pos); d <= k {
			// q[pos:pos+d] is one symbol repeated, and so is every enclosing interval's
			// prefix: a run of N against a gap climbs as many levels as the run is long, at
			// every position of it. What they would find is worked out at once.
			c = p.runBest(c, q, pos, d, k, lb, tw)
			break
		}
		a, b = p.lcp.prevSmaller(a, int32(d)), p.lcp.nextSmaller(b, int32(d))
		consider(d, int(p.sa[a]))
	}
	return c, s
}

// runBest is what pageBest's climb finds from an interval of depth d on, where q[pos:] begins
// with a run of k >= d codes x: the enclosing intervals are those of x^j, j < d. The first row of
// x^j's interval is the window's last j symbols exactly when the window ends in a run of x of
// at least j (endRun): a match that runs on past the window's end, from an owned position
// while j >= lb. Past the window the text goes on with e = tailRun more x, so that the match of
// length j runs on to k in all (k-j < e), to j+e (k-j > e), or, for j = k-e alone, on past both
// runs. The candidates are taken in the climb's order (j descending), with consider's rules.
func (p *Page) runBest(c candidate, q []byte, pos, d, k, lb int, tw *tailWalk) candidate {
	if p.endSym != q[pos] {
		return c
	}
	e := p.tailRun
	top := min(d, p.endRun)
	take := func(j, full int) { c.reach(j, full, int64(p.Start+p.n-j)) }
	// j in [k-e+1, top]: each runs on to k.
	if low := max(lb, k-e+1); low <= top {
		take(top, k)
		if int(c.len) == k {
			c.count = addCount(c.count, top-low) // the rest, each j < k
		}
	}
	if j := k - e; j >= lb && j <= top {
		take(j, j+tw.tailMatch(p, q, pos, pos+j))
	}
	if j := min(top, k-e-1); j >= lb {
		take(j, j+e) // the longest of those that stop at e; the others are shorter
	}
	return c
}

// reach merges into c the match of length full at text position ref that runs on past the window's
// end, of which the window holds d: a longer one replaces c, one as long counts once more unless
// it did not run on (its row was counted inside the window).
func (c *candidate) reach(d, full int, ref int64) {
	switch {
	case full > int(c.len):
		*c = candidate{len: int32(full), count: 1, ref: ref}
	case full == int(c.len) && full > d:
		c.count = addCount(c.count, 1)
	}
}

// addCount adds n to a count of owned positions, at most 2 of them: only whether a count is 1
// matters, and counts are summed over the pages.
func addCount(c int32, n int) int32 {
	return c + int32(min(n, 2))
}

// tailWalk is what pageBest keeps from one position of a walk to the next, the walk going left a
// position at a time: the run of one code at a position, and the last two comparisons with the
// text after the window. Along a match that runs past the window's end (a sequence against
// itself) each position compares the same stretch of query with it, millions of codes: once now.
type tailWalk struct {
	runPos, run int // q[runPos:runPos+run] is one code repeated, and q[runPos+run] another or the end (run 0: none yet)
	memo        [2]struct{ at, n int }
	next        int
}

// runAt returns how many times q[pos], a symbol, repeats from pos on: from the run at pos+1 when
// known, else counted; asked again at the same position, at once.
func (tw *tailWalk) runAt(q []byte, pos int) int {
	switch {
	case tw.run > 0 && tw.runPos == pos:
	case tw.run > 0 && tw.runPos == pos+1 && q[pos] == q[pos+1]:
		tw.run++
	default:
		tw.run = 1 + sameRun(q[pos+1:], q[pos:], 0, len(q)-pos-1)
	}
	tw.runPos = pos
	return tw.run
}

// tailMatch returns how far q[at:] matches the text after p's window, at >= pos,
// the walk's position. Where q[at] is in q[pos:]'s first run and the text after the window
// begins with a run of that symbol too (tailRun), the match is the shorter run, unless both are
// as long: the window's end inside a gap of N that the query's gap is longer than matched each
// position's rest of the gap, one position after another.
func (tw *tailWalk) tailMatch(p *Page, q []byte, pos, at int) int {
	if e := p.tailRun; e > 0 && at < len(q) && q[at] == p.endSym && q[pos] == q[at] {
		if k := tw.runAt(q, pos); at < pos+k && pos+k-at != e {
			return min(pos+k-at, e)
		}
	}
	for _, e := range tw.memo {
		if e.at == at+1 {
			return e.n
		}
	}
	t := p.text[p.WinEnd:]
	qq := q[at:]
	n := sameRun(qq, t, 0, min(len(t), len(qq)))
	tw.memo[tw.next] = struct{ at, n int }{at + 1, n}
	tw.next ^= 1
	return n
}

// ownedBest is pageBest's match inside the window: rows [lo, hi) at depth m, counted where the
// page owns their positions (s as in pageBest).
func (p *Page) ownedBest(lo, hi, m, s int) (candidate, int) {
	var c candidate
	owned := p.End - p.Start
	switch {
	case hi-lo == 1:
		if s < 0 {
			s = int(p.sa[lo])
		}
		if s < owned {
			c = candidate{len: int32(m), count: 1, ref: int64(p.Start + s)}
		}
	case hi-lo > p.n-owned+1:
		c = candidate{len: int32(m), count: 2} // more occurrences than the overlap can hold
	default:
		// Only whether one owned position or several reach the length matters (a count of 2
		// stands for several, as above): a repeat's hundreds of rows are not all looked up.
		for k := lo; k < hi && c.count < 2; k++ {
			if s := int(p.sa[k]); s < owned {
				c.count++
				c.ref = int64(p.Start + s)
			}
		}
		if c.count > 0 {
			c.len = int32(m)
		}
	}
	return c, s
}

// appendUnique appends the matches of best (the best match over the pages at each position from
// from) that are unique in the reference and left-maximal.
func (m *Matcher) appendUnique(q []byte, from int, best []candidate, out []kernels.Match) []kernels.Match {
	minLen := m.opts.MinLen
	text := m.ref.Text
	for i, b := range best {
		if int(b.len) < minLen || b.count != 1 {
			continue
		}
		pos := from + i
		if pos > 0 && b.ref > 0 {
			if prev := q[pos-1]; prev >= kernels.FirstCode && text[b.ref-1] == prev {
				continue
			}
		}
		out = append(out, kernels.Match{Ref: b.ref, Query: int32(pos), Len: b.len})
	}
	return out
}
