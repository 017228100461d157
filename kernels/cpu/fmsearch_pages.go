package cpu

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// IntervalSearch runs the searches of one page's Searcher, on the CPU (Searcher itself) or on a
// device, with identical intervals.
type IntervalSearch interface {
	SearchIntervals(b *kernels.Patterns, iv []Interval) error
}

// RowSearch is an IntervalSearch that also gives, where a pattern's search ends on one row with a
// shift, that row's suffix array value (a device reads it as it searches), so that PagedSearcher
// need not read it from the page's suffix array: a random read of host memory for most long
// patterns. rows[i] is pattern i's; the other patterns' entries are left as they are.
type RowSearch interface {
	IntervalSearch
	SearchIntervalsRows(b *kernels.Patterns, iv []Interval, rows []int32) error
}

// PagedSearcher counts and locates patterns in a text indexed in pages (a reference too long for
// one suffix array of 32-bit rows): each page's window is searched, and an occurrence counts for
// the page that owns its start. The occurrences in a window that start past what its page owns
// are the next page's: their rows (the page's tail rows) are left out of each interval. A pattern
// longer than the overlap plus one may run past its page's window: it is searched by its first
// overlap+1 symbols and each occurrence of those checked against the text. It is safe for
// concurrent use; the hits are those of one Searcher over the whole text.
type PagedSearcher struct {
	text    []byte
	pages   []*Page
	tails   [][]int32
	search  []IntervalSearch
	overlap int // the least overlap of a page that does not end the text
	pool    sync.Pool
}

// pagedScratch is one Search's memory.
type pagedScratch struct {
	short kernels.Patterns // the patterns cut to overlap+1 symbols
	iv    []Interval
	rows  []int32 // from a RowSearch
	count []int32
	// The located occurrences as offsets from their page's start, page by page and in a page
	// pattern by pattern, each pattern's in text order: page pi's of pattern i are
	// off[starts[pi*np+i]:starts[pi*np+i+1]].
	off    []uint32
	starts []int
	tmp    []uint32 // sortPositions' scratch
	pf     prefetcher
}

// NewPagedSearcher returns a searcher over pages that tile text in order, with each page's tail
// rows (Page.TailRows) and the search of each.
func NewPagedSearcher(text []byte, pages []*Page, tails [][]int32, search []IntervalSearch) (*PagedSearcher, error) {
	if len(pages) == 0 || len(tails) != len(pages) || len(search) != len(pages) {
		return nil, fmt.Errorf("a paged search of %d pages, %d tails and %d searches", len(pages), len(tails), len(search))
	}
	s := &PagedSearcher{text: text, pages: pages, tails: tails, search: search, overlap: len(text)}
	next := 0
	for i, p := range pages {
		if p.Start != next || p.End <= p.Start || len(tails[i]) != p.WinEnd-p.End {
			return nil, fmt.Errorf("page %d of a paged search does not follow the others", i)
		}
		if p.WinEnd < len(text) {
			s.overlap = min(s.overlap, p.WinEnd-p.End)
		}
		next = p.End
	}
	if next != len(text) {
		return nil, fmt.Errorf("the pages end at %d, the text at %d", next, len(text))
	}
	s.pool.New = func() any { return new(pagedScratch) }
	return s, nil
}

// Close releases nothing; the pages' searches are their owners'.
func (*PagedSearcher) Close() error { return nil }

// Search appends the hits of every pattern of b to h.
func (s *PagedSearcher) Search(b *kernels.Patterns, locate bool, h *kernels.Hits) error {
	sc := s.pool.Get().(*pagedScratch)
	defer s.pool.Put(sc)
	np := b.Len()
	most := s.overlap + 1
	q := b
	long := false
	for i := range np {
		if len(b.Pattern(i)) > most {
			long = true
			break
		}
	}
	if long {
		sc.short.Reset()
		for i := range np {
			p := b.Pattern(i)
			sc.short.Add(p[:min(len(p), most)])
		}
		q = &sc.short
	}
	sc.iv = slices.Grow(sc.iv[:0], np)[:np]
	sc.count = slices.Grow(sc.count[:0], np)[:np]
	clear(sc.count)
	sc.off = sc.off[:0]
	sc.starts = slices.Grow(sc.starts[:0], len(s.pages)*np+1)[:len(s.pages)*np+1]
	for pi, p := range s.pages {
		rs, withRows := s.search[pi].(RowSearch)
		if withRows {
			sc.rows = slices.Grow(sc.rows[:0], np)[:np]
			if err := rs.SearchIntervalsRows(q, sc.iv, sc.rows); err != nil {
				return err
			}
		} else if err := s.search[pi].SearchIntervals(q, sc.iv); err != nil {
			return err
		}
		owned := int32(p.End - p.Start)
		rows := int32(len(p.sa))
		if locate {
			room := 0 // the page's occurrences, at most: room for them at once
			for _, v := range sc.iv {
				room += int(max(v.Hi-v.Lo, 0))
			}
			sc.off = slices.Grow(sc.off, room)
		}
		starts := sc.starts[pi*np : (pi+1)*np]
		for i, v := range sc.iv {
			if locate && i%saAhead == 0 {
				// Each pattern's rows lie anywhere in a suffix array of gigabytes: their lines
				// are asked for a group of patterns ahead, so that many misses overlap.
				lo := i + saAhead
				if i == 0 {
					lo = 0
				}
				for _, w := range sc.iv[min(lo, np):min(i+2*saAhead, np)] {
					if w.Lo >= 0 && w.Lo < w.Hi && w.Hi <= rows {
						sc.pf.add(unsafe.Pointer(&p.sa[w.Lo]))
					}
				}
				sc.pf.flush()
			}
			starts[i] = len(sc.off)
			if v.Lo < 0 || v.Lo > v.Hi || v.Hi > rows || v.Shift < 0 || (v.Shift > 0 && v.Hi-v.Lo != 1) {
				return fmt.Errorf("page %d, pattern %d: search interval %d..%d, shift %d, in %d rows", pi, i, v.Lo, v.Hi, v.Shift, rows)
			}
			pat := b.Pattern(i)
			if len(pat) > most && !matchable(pat) {
				continue // a symbol that never matches: no occurrence, as Searcher has it
			}
			if !locate && len(pat) <= most && v.Shift == 0 {
				// Count alone: the interval's rows less those past the page's end.
				tail := s.tails[pi]
				a := sort.Search(len(tail), func(k int) bool { return tail[k] >= v.Lo })
				z := sort.Search(len(tail), func(k int) bool { return tail[k] >= v.Hi })
				sc.count[i] += v.Hi - v.Lo - int32(z-a)
				continue
			}
			start := len(sc.off)
			sa := p.sa[v.Lo:v.Hi]
			if withRows && v.Shift > 0 { // one row (checked above), its value given
				sa = sc.rows[i : i+1]
			}
			for _, r := range sa {
				at := r - v.Shift
				if r < v.Shift || r >= rows {
					// A suffix array the host has not checked (a device's count) can hold
					// anything: an error, not a wrong count.
					return fmt.Errorf("page %d, pattern %d: an occurrence at %d, outside the window of %d", pi, i, int64(r)-int64(v.Shift), rows-1)
				}
				if at >= owned {
					continue
				}
				if len(pat) > most {
					g := int64(p.Start) + int64(at)
					if !bytes.Equal(s.text[g:min(g+int64(len(pat)), int64(len(s.text)))], pat) {
						continue
					}
				}
				sc.off = append(sc.off, uint32(at))
			}
			if len(sc.off)-start > 1 {
				sc.tmp = sortPositions(sc.off[start:], sc.tmp)
			}
		}
	}
	sc.starts[len(s.pages)*np] = len(sc.off)
	if locate {
		h.Pos = slices.Grow(h.Pos, len(sc.off))
	}
	for i := range np {
		// A page's occurrences start at its own start: the pages' runs follow in text order.
		for pi := range s.pages {
			from, to := sc.starts[pi*np+i], sc.starts[pi*np+i+1]
			sc.count[i] += int32(to - from)
			if locate {
				base, n := int64(s.pages[pi].Start), len(h.Pos)
				h.Pos = h.Pos[:n+to-from]
				for k, o := range sc.off[from:to] {
					h.Pos[n+k] = base + int64(o)
				}
			}
		}
		h.Count = append(h.Count, sc.count[i])
		if locate {
			h.PosEnds = append(h.PosEnds, len(h.Pos))
		}
	}
	return nil
}

// saAhead is how many patterns ahead PagedSearcher asks for the suffix array lines of their
// occurrences, in groups of as many (at most prefetchMax).
const saAhead = 32

// matchable reports whether every symbol of pat can match.
func matchable(pat []byte) bool {
	for _, x := range pat {
		if x < kernels.FirstCode {
			return false
		}
	}
	return true
}

var _ kernels.Searcher = (*PagedSearcher)(nil)
