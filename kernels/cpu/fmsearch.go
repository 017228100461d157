package cpu

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sapipe/sapipe/kernels"
)

// searchLanes is how many patterns one goroutine searches at once. Each backward step ends in a
// random access to the rank structure; touching every lane's next rank blocks before any lane
// uses them keeps that many cache misses in flight instead of one (as walkLanes does).
const searchLanes = 16

// Searcher counts and locates patterns in the index of a whole-text page: forward from the k-mer
// table through the suffix array and the text where it can, by backward search in the FM-index
// otherwise. It is safe for concurrent use.
type Searcher struct {
	p     *Page
	kmers *KmerTable // nil: every search starts from all rows
	seps  bool       // whether the text holds separators (CodeNone)
	pool  sync.Pool  // *searchScratch

	// The keyed search's rows (fmsearch_keyed.go), built once keyedAfter patterns have been
	// searched without them, on threads goroutines (all cores unless the backend says).
	keysOnce   sync.Once
	keys       atomic.Pointer[keyedIndex]
	searched   atomic.Int64
	keyedAfter int64
	threads    int
}

// The keyed search's arrays take about 14 bytes a base (rows, refined table, letters) and a few
// nanoseconds a base to build from the keys of an index file (several times that to compute the
// keys when the table has none), and save some 100 ns a pattern (E. coli): they are built for a
// text of at most maxKeyedText bases once a run has searched a pattern for every keyedPer bases
// of it, and at least keyedMin patterns, so that they are built only for a run that has already
// paid for most of them and likely goes on.
// Keyed reports whether a window of n codes is searched with keys (RowKeys), which are then worth
// building into an index.
func Keyed(n int) bool { return n <= maxKeyedText }

const (
	maxKeyedText = 1 << 27
	keyedPer     = 32
	keyedMin     = 4096
)

type searchScratch struct {
	iv    []Interval
	rest  []int32 // the patterns the forward search leaves to the backward one
	again []int32 // the patterns the first forward search leaves to a second
	// keyRest: the patterns the keyed search leaves; SearchLetters': letterRest, encoded into
	// sub, their outcomes subIv.
	keyRest, letterRest []int32
	sub                 kernels.Patterns
	subIv               []Interval
	pf                  prefetcher
	sink                uint64 // what the cache-touching loads read; never used
}

// Interval is the outcome of one pattern's search: its occurrences start at SA[k]-Shift for the
// rows k in [Lo, Hi). Shift > 0 only for a pattern that occurs once: a backward search that
// narrows to one row before the pattern's start checks the rest of the pattern against the text
// at that row instead of stepping on (Shift is the number of symbols so checked), and a forward
// search from a K-mer of the pattern at offset Shift finds the one row of that K-mer whose text
// is the pattern (fmsearch_forward.go). A pattern that does not occur has Lo == Hi == Shift == 0.
// Searches may reach different intervals of the same hits: a device runs the backward search
// alone, the CPU mostly the forward one; AppendHits makes the same hits of either.
type Interval struct {
	Lo, Hi, Shift int32
}

// NewSearcher returns a searcher over p's window, with the k-mer table of the window if kmers is
// not nil. Positions are the window's: for a page of a longer text, PagedSearcher makes them the
// text's and leaves out what the page does not own.
func NewSearcher(p *Page, kmers *KmerTable) (*Searcher, error) {
	if kmers != nil && kmers.base != p.occ.sigma-kernels.FirstCode {
		return nil, errors.New("the k-mer table is of another alphabet")
	}
	s := &Searcher{p: p, kmers: kmers, seps: bytes.IndexByte(p.w, kernels.CodeNone) >= 0, threads: runtime.GOMAXPROCS(0)}
	s.keyedAfter = max(keyedMin, int64(p.n/keyedPer))
	if p.n > maxKeyedText {
		s.keyedAfter = math.MaxInt64
	}
	s.pool.New = func() any { return new(searchScratch) }
	return s, nil
}

// NewPatternSearcher returns s, which builds what it builds on b's threads: the CPU runs its
// searches itself. A GPU backend's method of the same name runs them on the device, with the same
// results.
func (b *Backend) NewPatternSearcher(s *Searcher) (kernels.Searcher, error) {
	s.threads = b.Threads
	return s, nil
}

// Close releases nothing; the index belongs to its page.
func (*Searcher) Close() error { return nil }

// Search appends the hits of every pattern of b to h.
func (s *Searcher) Search(b *kernels.Patterns, locate bool, h *kernels.Hits) error {
	sc := s.pool.Get().(*searchScratch)
	defer s.pool.Put(sc)
	np := b.Len()
	iv := slices.Grow(sc.iv[:0], np)[:np]
	s.search(b, iv, sc)
	sc.iv = iv
	return s.AppendHits(iv, locate, h)
}

// SearchLetters is Search for patterns of letters: pattern i is b.Codes[starts[i]:b.Ends[i]]
// (b.Codes[b.Ends[i-1]:b.Ends[i]] if starts is nil), the bytes of the pattern as read, not its
// codes, and the index is of a text whose matchable symbols are a, c, g and t alone (codes 2 to
// 5, as a DNA reference encodes them), where a pattern's a, c, g and t in either case match and
// any other byte never does, as kernels.EncodeQuery encodes them. So a caller can search the
// patterns where it read them. The patterns that the keyed search does not settle are encoded
// here.
func (s *Searcher) SearchLetters(b *kernels.Patterns, starts []int, locate bool, h *kernels.Hits) error {
	if s.p.occ.sigma != kernels.FirstCode+4 {
		return errors.New("a search of letters needs the index of a text of four symbols")
	}
	if starts != nil && len(starts) != b.Len() {
		return fmt.Errorf("%d pattern starts for %d patterns", len(starts), b.Len())
	}
	sc := s.pool.Get().(*searchScratch)
	defer s.pool.Put(sc)
	np := b.Len()
	iv := slices.Grow(sc.iv[:0], np)[:np]
	sc.iv = iv
	var rk *keyedIndex
	if s.kmers != nil {
		rk = s.keyed(np)
	}
	if rk == nil {
		encodeLetters(&sc.sub, b, starts, nil)
		if s.kmers == nil {
			s.p.searchLanes(&sc.sub, nil, nil, iv, &sc.sink)
		} else {
			s.searchUnkeyed(&sc.sub, nil, iv, sc)
		}
		return s.AppendHits(iv, locate, h)
	}
	rest := s.p.searchKeyed(b, starts, s.kmers, rk, true, s.seps, iv, sc.letterRest[:0], &sc.pf)
	sc.letterRest = rest
	if len(rest) > 0 {
		encodeLetters(&sc.sub, b, starts, rest)
		sub := slices.Grow(sc.subIv[:0], len(rest))[:len(rest)]
		sc.subIv = sub
		s.searchUnkeyed(&sc.sub, nil, sub, sc)
		for j, i := range rest {
			iv[i] = sub[j]
		}
	}
	return s.AppendHits(iv, locate, h)
}

// encodeLetters sets dst to the codes of the patterns of letters of b (with starts, as
// SearchLetters takes them) whose indices are in order (all if order is nil): a, c, g, t in
// either case 2 to 5, anything else CodeNone.
func encodeLetters(dst, b *kernels.Patterns, starts []int, order []int32) {
	dst.Reset()
	add := func(i int) {
		from := 0
		if starts != nil {
			from = starts[i]
		} else if i > 0 {
			from = b.Ends[i-1]
		}
		for _, c := range b.Codes[from:b.Ends[i]] {
			d := letterDigit[c]
			if d < 4 {
				d += kernels.FirstCode
			} else {
				d = kernels.CodeNone
			}
			dst.Codes = append(dst.Codes, d)
		}
		dst.Ends = append(dst.Ends, len(dst.Codes))
	}
	if order == nil {
		for i := range b.Len() {
			add(i)
		}
		return
	}
	for _, i := range order {
		add(int(i))
	}
}

// SearchIntervals is Intervals as IntervalSearch has it.
func (s *Searcher) SearchIntervals(b *kernels.Patterns, iv []Interval) error {
	s.Intervals(b, iv)
	return nil
}

// Intervals writes the outcome of the search of each pattern of b to iv (len(iv) == b.Len()):
// the CPU twin of a device's search.
func (s *Searcher) Intervals(b *kernels.Patterns, iv []Interval) {
	sc := s.pool.Get().(*searchScratch)
	defer s.pool.Put(sc)
	s.search(b, iv, sc)
}

// search writes the outcome of each pattern of b to iv: by forward search from the k-mer table
// where it can, keyed (fmsearch_keyed.go) once a run has searched enough patterns, else as in
// fmsearch_forward.go, and by backward search for the others.
func (s *Searcher) search(b *kernels.Patterns, iv []Interval, sc *searchScratch) {
	if s.kmers == nil {
		s.p.searchLanes(b, nil, nil, iv, &sc.sink)
		return
	}
	if rk := s.keyed(b.Len()); rk != nil {
		sc.rest = s.p.searchKeyed(b, nil, s.kmers, rk, false, s.seps, iv, sc.rest[:0], &sc.pf)
		if len(sc.rest) > 0 {
			sc.keyRest = append(sc.keyRest[:0], sc.rest...)
			s.searchUnkeyed(b, sc.keyRest, iv, sc)
		}
		return
	}
	s.searchUnkeyed(b, nil, iv, sc)
}

// keyed returns the keyed search's rows, building them if the run has searched enough patterns
// with this batch of np, or nil.
func (s *Searcher) keyed(np int) *keyedIndex {
	rk := s.keys.Load()
	if rk == nil && s.searched.Add(int64(np)) > s.keyedAfter {
		s.keysOnce.Do(func() { s.keys.Store(buildKeyedIndex(s.p, s.kmers, s.threads)) })
		rk = s.keys.Load()
	}
	return rk
}

// searchUnkeyed writes the outcome of each pattern of b whose index is in order (all if order
// is nil) to iv by forward search from the k-mer table where it can (fmsearch_forward.go), by
// backward search for the others.
func (s *Searcher) searchUnkeyed(b *kernels.Patterns, order []int32, iv []Interval, sc *searchScratch) {
	sc.rest = s.p.searchForward(b, s.kmers, order, false, s.seps, iv, sc.rest[:0], &sc.pf)
	if len(sc.rest) > 0 {
		// Patterns that occur several times at another K-mer than their first: once more from
		// the first alone.
		sc.again = append(sc.again[:0], sc.rest...)
		sc.rest = s.p.searchForward(b, s.kmers, sc.again, true, s.seps, iv, sc.rest[:0], &sc.pf)
	}
	if len(sc.rest) > 0 {
		s.p.searchLanes(b, s.kmers, sc.rest, iv, &sc.sink)
	}
}

// AppendHits appends to h the hits of the patterns whose intervals are iv, located if locate. An
// interval that cannot be this index's (from a faulty device) is an error.
func (s *Searcher) AppendHits(iv []Interval, locate bool, h *kernels.Hits) error {
	rows := int32(len(s.p.sa))
	for i, v := range iv {
		if v.Lo < 0 || v.Lo > v.Hi || v.Hi > rows || v.Shift < 0 || (v.Shift > 0 && v.Hi-v.Lo != 1) {
			return fmt.Errorf("pattern %d: search interval %d..%d, shift %d, in %d rows", i, v.Lo, v.Hi, v.Shift, rows)
		}
		h.Count = append(h.Count, v.Hi-v.Lo)
	}
	if !locate {
		return nil
	}
	sa := s.p.sa
	var tmp []int64
	for i, v := range iv {
		start := len(h.Pos)
		for _, p := range sa[v.Lo:v.Hi] {
			if p < v.Shift {
				return fmt.Errorf("pattern %d: an occurrence before the text's start", i)
			}
			h.Pos = append(h.Pos, int64(p-v.Shift))
		}
		if v.Hi-v.Lo > 1 {
			tmp = sortPositions(h.Pos[start:], tmp)
		}
		h.PosEnds = append(h.PosEnds, len(h.Pos))
	}
	return nil
}

// DeviceIndex is what a device needs to run a Searcher's searches: its arrays (shared, not
// copied) and the layout of its rank structure (see Occ).
type DeviceIndex struct {
	Text      []byte
	SA        []int32
	Occ       []uint64
	C         [256]uint32 // C[x]: the first row whose suffix starts with x
	Sigma     int
	OccStride int // words per block of 128 rows
	OccCounts int // words of counts at the start of a block
	OccPlanes int // bit planes of a block, two words each
	KmerLen   int // 0: no k-mer table
	Kmers     []int32
	// CountOnly says that the searches will only be counted (sapipe count): a device need not
	// hold the text and suffix array, and a search that ends on one row goes on to the pattern's
	// start instead of comparing the rest with the text (the same count; Shift 0).
	CountOnly bool
}

// Device returns the index as a device needs it.
func (s *Searcher) Device() *DeviceIndex {
	p := s.p
	d := &DeviceIndex{Text: p.w, SA: p.sa, Occ: p.occ.data, Sigma: p.occ.sigma,
		OccStride: p.occ.stride, OccCounts: p.occ.counts, OccPlanes: p.occ.planes}
	for x, c := range p.c {
		d.C[x] = uint32(c)
	}
	if s.kmers != nil {
		d.KmerLen, d.Kmers = s.kmers.K, s.kmers.Rows
	}
	return d
}

// searchLane is the backward search of one pattern: rows [lo, hi) hold the suffixes that start
// with pat[i:]. Once one row is left, the lane checks pat[:i] against the text before that row's
// suffix instead, in two more steps (read the row's position, then compare), so that those cache
// misses too are touched with the other lanes' and overlap.
type searchLane struct {
	pat    []byte
	i      int
	lo, hi int
	s      int // laneKmer: the k-mer's code; laneText: the text position of pat[i:]
	phase  int // laneRank, laneKmer, laneSA or laneText
	idx    int
}

const (
	laneRank = iota // stepping back through the rank structure
	laneKmer        // the k-mer table's entry is next
	laneSA          // one row left: its suffix array entry is next
	laneText        // comparing the pattern's rest with the text
)

// searchLanes runs the backward search of the patterns of b whose indices are in order (of every
// pattern if order is nil), searchLanes at a time, and writes the outcome of pattern i to iv[i].
// A lane whose pattern ends takes the next one, so that lanes stay full whatever the patterns'
// lengths.
func (p *Page) searchLanes(b *kernels.Patterns, kmers *KmerTable, order []int32, iv []Interval, sink *uint64) {
	var ls [searchLanes]searchLane
	np, next := b.Len(), 0
	if order != nil {
		np = len(order)
	}
	// start loads the next pattern that needs a search into l, settling the trivial ones.
	start := func(l *searchLane) bool {
		for next < np {
			i := next
			if order != nil {
				i = int(order[i])
			}
			next++
			pat := b.Pattern(i)
			if len(pat) == 0 {
				iv[i] = Interval{}
				continue
			}
			*l = searchLane{pat: pat, i: len(pat), lo: 0, hi: p.n + 1, idx: i}
			if kmers == nil || len(pat) < kmers.K {
				return true
			}
			// The pattern's last K symbols, looked up in the next step.
			code, ok := kmers.code(pat[len(pat)-kmers.K:])
			if !ok {
				iv[i] = Interval{}
				continue
			}
			l.i -= kmers.K
			l.s, l.phase = code, laneKmer
			return true
		}
		return false
	}
	live := ls[:0]
	for len(live) < searchLanes && start(&ls[len(live)]) {
		live = live[:len(live)+1]
	}
	occ, stride, sa, w := p.occ.data, p.occ.stride, p.sa, p.w
	var table []int32
	if kmers != nil {
		table = kmers.Rows
	}
	var touched uint64
	for len(live) > 0 {
		for i := range live {
			switch l := &live[i]; l.phase {
			case laneRank:
				touched += occ[(l.lo/occBlock)*stride] + occ[(l.hi/occBlock)*stride]
			case laneKmer:
				touched += uint64(table[2*l.s])
			case laneSA:
				touched += uint64(sa[l.lo])
			default:
				touched += uint64(w[l.s-l.i])
			}
		}
		for i := 0; i < len(live); {
			l := &live[i]
			if done, v := p.searchStep(l, table); done {
				iv[l.idx] = v
				if !start(l) {
					live[i] = live[len(live)-1]
					live = live[:len(live)-1]
					continue
				}
			}
			i++
		}
	}
	*sink += touched
}

// searchStep moves l one step on. It reports whether the search is over, and then its outcome.
func (p *Page) searchStep(l *searchLane, table []int32) (bool, Interval) {
	switch l.phase {
	case laneKmer:
		lo, hi := int(table[2*l.s]), int(table[2*l.s+1])
		switch {
		case lo >= hi:
			return true, Interval{}
		case l.i == 0:
			return true, Interval{Lo: int32(lo), Hi: int32(hi)}
		}
		l.lo, l.hi, l.phase = lo, hi, laneRank
		if hi-lo == 1 {
			l.phase = laneSA
		}
		return false, Interval{}
	case laneSA:
		l.s = int(p.sa[l.lo])
		if l.s < l.i {
			return true, Interval{}
		}
		l.phase = laneText
		return false, Interval{}
	case laneText:
		// The text holds no code 0 but holds separators (CodeNone), which never match.
		pat := l.pat[:l.i]
		if !bytes.Equal(p.w[l.s-l.i:l.s], pat) || bytes.IndexByte(pat, kernels.CodeNone) >= 0 {
			return true, Interval{}
		}
		return true, Interval{Lo: int32(l.lo), Hi: int32(l.lo + 1), Shift: int32(l.i)}
	}
	l.i--
	x := l.pat[l.i]
	if x < kernels.FirstCode || int(x) >= p.occ.sigma {
		return true, Interval{}
	}
	lo := p.c[x] + p.occ.Rank(x, l.lo)
	hi := p.c[x] + p.occ.Rank(x, l.hi)
	switch {
	case lo >= hi:
		return true, Interval{}
	case l.i == 0:
		return true, Interval{Lo: int32(lo), Hi: int32(hi)}
	}
	l.lo, l.hi = lo, hi
	if hi-lo == 1 {
		l.phase = laneSA
	}
	return false, Interval{}
}
