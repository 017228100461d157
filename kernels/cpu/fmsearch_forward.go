package cpu

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// The forward search starts from the k-mer table's rows of a pattern's FIRST K symbols. In a
// genome most K-mers occur a handful of times, so the rows are few and adjacent in the suffix
// array: the pattern's rows are those among them whose text, from K on, goes on as the pattern
// does. That is a short chain of dependent memory accesses (table, suffix array, the texts of all
// rows at once), where a backward search makes one or two per step for several steps and then
// still checks the text. Patterns whose table rows are many (repeats), shorter than K, or with
// no table go to the backward search instead.
//
// The accesses of many patterns overlap: patterns go through the stages in groups, software
// pipelined, each stage working on the group whose memory the stage before asked for one round
// earlier (see prefetcher), so that by the time a stage reads a table entry, suffix array entry
// or text, it has arrived.

const (
	// fwdGroup is how many patterns a stage handles per round: enough that a round's work hides
	// the latency of the loads it asked for the next round.
	fwdGroup = 32
	// fwdMaxRows is the most table rows a forward search scans (at most 64: a slot's row mask);
	// more go to the backward search, which narrows a repeat's rows in a few steps instead of
	// comparing the text of each.
	fwdMaxRows = 64
	// fwdStages is the depth of the pipeline: k-mer code, table, suffix array, the first bytes
	// of each row's text, the rest of the text of the rows that passed.
	fwdStages = 5
	// fwdHead is how many codes after the k-mer the first text check compares.
	fwdHead = 8
)

// fwdSlot is one pattern in the forward pipeline.
type fwdSlot struct {
	idx    int32  // the pattern's index
	from   int32  // its first code in Patterns.Codes
	to     int32  // its end
	lo, hi int32  // the k-mer's rows (at first lo holds the k-mer's code)
	rows   uint64 // bit r: row lo+r passed the first check
}

// fwdGroupSlots is the state of one group in the pipeline.
type fwdGroupSlots struct {
	n int
	s [fwdGroup]fwdSlot
}

// searchForward settles every pattern of b that a forward search can (see above), writing its
// outcome to iv, and appends the indices of the others to rest, which it returns.
func (p *Page) searchForward(b *kernels.Patterns, kt *KmerTable, iv []Interval, rest []int32, pf *prefetcher) []int32 {
	var ring [fwdStages]fwdGroupSlots
	np, next := b.Len(), 0
	codes, ends := b.Codes, b.Ends
	table, sa, w := kt.Rows, p.sa, p.w
	k := kt.K
	for round := 0; ; round++ {
		// Stage 5: compare the whole rest of each pattern with the rows that passed stage 4.
		if round >= 4 {
			g := &ring[(round-4)%fwdStages]
			for j := range g.n {
				sl := &g.s[j]
				pat := codes[sl.from:sl.to]
				first, last := int32(-1), int32(-1)
				for m := sl.rows; m != 0; m &= m - 1 {
					r := sl.lo + int32(bits.TrailingZeros64(m))
					pos := int(sa[r])
					if bytes.Equal(w[pos+k:pos+len(pat)], pat[k:]) {
						if first < 0 {
							first = r
						}
						last = r
					}
				}
				// The text holds separators (CodeNone), which never match; no other code that
				// cannot match is in the text.
				if first < 0 || bytes.IndexByte(pat[k:], kernels.CodeNone) >= 0 {
					iv[sl.idx] = Interval{}
				} else {
					iv[sl.idx] = Interval{Lo: first, Hi: last + 1}
				}
			}
			g.n = 0
		}
		// Stage 4: check the first codes after the k-mer of each row (asked for last round);
		// ask for the rest of the text of the rows that pass.
		if round >= 3 {
			g := &ring[(round-3)%fwdStages]
			m := 0
			for j := range g.n {
				sl := g.s[j]
				pat := codes[sl.from:sl.to]
				l := len(pat)
				head := min(l-k, fwdHead)
				var want uint64
				if head == fwdHead {
					want = binary.LittleEndian.Uint64(pat[k:])
				}
				rows := uint64(0)
				for r := sl.lo; r < sl.hi; r++ {
					pos := int(sa[r])
					if pos+l > len(w) {
						continue
					}
					if head == fwdHead {
						if binary.LittleEndian.Uint64(w[pos+k:]) != want {
							continue
						}
					} else if !bytes.Equal(w[pos+k:pos+k+head], pat[k:k+head]) {
						continue
					}
					rows |= 1 << uint(r-sl.lo)
					for a := pos + k + fwdHead; a < pos+l; a += 64 {
						pf.add(unsafe.Pointer(&w[a]))
					}
					if k+fwdHead < l {
						pf.add(unsafe.Pointer(&w[pos+l-1]))
					}
				}
				switch {
				case rows == 0:
					iv[sl.idx] = Interval{}
				case head < fwdHead || k+head == l:
					// The check compared the whole pattern: no need for stage 5, but for the
					// separators it may have matched.
					if bytes.IndexByte(pat[k:], kernels.CodeNone) >= 0 {
						iv[sl.idx] = Interval{}
					} else {
						first := sl.lo + int32(bits.TrailingZeros64(rows))
						iv[sl.idx] = Interval{Lo: first, Hi: sl.lo + 64 - int32(bits.LeadingZeros64(rows))}
					}
				default:
					sl.rows = rows
					g.s[m] = sl
					m++
				}
			}
			g.n = m
			pf.flush()
		}
		// Stage 3: the rows' suffix array entries (asked for last round); ask for the first codes
		// after the k-mer in their texts.
		if round >= 2 {
			g := &ring[(round-2)%fwdStages]
			for j := range g.n {
				sl := &g.s[j]
				for r := sl.lo; r < sl.hi; r++ {
					pos := int(sa[r]) + k
					if pos < len(w) {
						pf.add(unsafe.Pointer(&w[pos]))
						if pos+fwdHead <= len(w) {
							pf.add(unsafe.Pointer(&w[pos+fwdHead-1]))
						}
					}
				}
			}
			pf.flush()
		}
		// Stage 2: the k-mer's rows (asked for last round); ask for their suffix array entries.
		if round >= 1 {
			g := &ring[(round-1)%fwdStages]
			m := 0
			for j := range g.n {
				sl := g.s[j]
				lo, hi := table[2*sl.lo], table[2*sl.lo+1]
				switch {
				case lo >= hi:
					iv[sl.idx] = Interval{}
				case int(sl.to-sl.from) == k:
					iv[sl.idx] = Interval{Lo: lo, Hi: hi}
				case hi-lo > fwdMaxRows:
					rest = append(rest, sl.idx)
				default:
					sl.lo, sl.hi = lo, hi
					g.s[m] = sl
					m++
					pf.add(unsafe.Pointer(&sa[lo]))
					pf.add(unsafe.Pointer(&sa[hi-1]))
				}
			}
			g.n = m
			pf.flush()
		}
		// Stage 1: the next group's k-mer codes; ask for their table entries.
		g := &ring[round%fwdStages]
		g.n = 0
		for g.n < fwdGroup && next < np {
			i := next
			next++
			from := 0
			if i > 0 {
				from = ends[i-1]
			}
			to := ends[i]
			if to-from < k {
				if to == from {
					iv[i] = Interval{}
				} else {
					rest = append(rest, int32(i))
				}
				continue
			}
			code, ok := kt.code(codes[from : from+k])
			if !ok {
				iv[i] = Interval{}
				continue
			}
			g.s[g.n] = fwdSlot{idx: int32(i), from: int32(from), to: int32(to), lo: int32(code)}
			pf.add(unsafe.Pointer(&table[2*code]))
			g.n++
		}
		pf.flush()
		if next >= np {
			busy := false
			for s := range ring {
				busy = busy || ring[s].n > 0
			}
			if !busy {
				return rest
			}
		}
	}
}
