package cuda

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// TestMergeRecords: the records of 1 to 7 pages, each page's in slot order with its runs of one
// slot in any order, come out of mergeRecords as sortRecords orders the whole, from fresh and
// from reused buffers.
func TestMergeRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf []outRec
	for trial := range 300 {
		pages := 1 + trial%7
		slots := 1 + rng.IntN(50)
		var recs []outRec
		starts := []int{}
		used := map[[2]uint64]bool{}
		for range pages {
			starts = append(starts, len(recs))
			var page []outRec
			for range rng.IntN(40) {
				r := outRec{slot: uint32(rng.IntN(slots)), ref: uint32(rng.IntN(1 << 20)), refHi: uint32(rng.IntN(3)), len: uint32(rng.IntN(100))}
				key := [2]uint64{uint64(r.slot), uint64(r.textPos())}
				if used[key] { // one record a slot and text position, as the pages' ownership gives
					continue
				}
				used[key] = true
				page = append(page, r)
			}
			slices.SortStableFunc(page, func(a, b outRec) int { return int(a.slot) - int(b.slot) })
			recs = append(recs, page...)
		}
		starts = append(starts, len(recs))
		want := slices.Clone(recs)
		sortRecords(want, false)
		var got []outRec
		got, buf = mergeRecords(recs, buf, starts)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d, %d pages: merged %v, want %v", trial, pages, got, want)
		}
	}
}

// BenchmarkRecordOrder orders a launch's -maxmatch records from two pages (8 M records, about 8
// a slot, as against a repetitive genome): sorted whole, or merged by slot (mergeRecords).
func BenchmarkRecordOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 8 << 20
	recs := make([]outRec, n)
	for i := range recs {
		recs[i] = outRec{slot: uint32(i % (n / 2) / 4), ref: rng.Uint32(), refHi: uint32(i / (n / 2)), len: 30}
	}
	starts := []int{0, n / 2, n}
	work := make([]outRec, n)
	b.Run("sort", func(b *testing.B) {
		for range b.N {
			copy(work, recs)
			sortRecords(work, false)
		}
	})
	b.Run("merge", func(b *testing.B) {
		var buf []outRec
		for range b.N {
			copy(work, recs)
			_, buf = mergeRecords(work, buf, starts)
		}
	})
}

// TestMergeRecordsLarge: millions of records, whose runs of one slot are sorted in parts on
// several goroutines, come out as sortRecords orders the whole.
func TestMergeRecordsLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 3 << 20
	recs := make([]outRec, n)
	for i := range recs { // two pages; runs of one slot of 1 to 8 records each, some long runs
		slot := uint32(i % (n / 2) / (1 + i%8))
		if i%(n/2) > n/2-5000 {
			slot = uint32(n) // one long run at the end of each page
		}
		recs[i] = outRec{slot: slot, ref: uint32(i), refHi: uint32(rng.IntN(4)), len: 20}
	}
	for _, page := range [][]outRec{recs[:n/2], recs[n/2:]} {
		slices.SortStableFunc(page, func(a, b outRec) int { return int(a.slot) - int(b.slot) })
	}
	want := slices.Clone(recs)
	sortRecords(want, false)
	got, _ := mergeRecords(recs, nil, []int{0, n / 2, n})
	if !slices.Equal(got, want) {
		t.Fatal("the records of two pages, merged and sorted in parts, are out of order")
	}
}

// unpackOneByOne is unpack as a single loop over the records: what unpack must give.
func unpackOneByOne(segSlot []uint32, batch []*request, recs []outRec) {
	k, seg := 0, 0
	for _, r := range batch {
		for _, sg := range r.b.Segs {
			base := segSlot[seg]
			seg++
			if sg.To > sg.From {
				for end := base + uint32(sg.To-sg.From); k < len(recs) && recs[k].slot < end; k++ {
					rc := recs[k]
					r.res.Matches = append(r.res.Matches, kernels.Match{Ref: rc.textPos(), Query: int32(sg.From + int(rc.slot-base)), Len: int32(rc.len)})
				}
			}
			r.res.Ends = append(r.res.Ends, len(r.res.Matches))
		}
	}
}

// TestUnpack: requests of reads and of pieces of long records (segments cut anywhere, some empty),
// with none, a few or millions of records a segment (the goroutines' path), onto results that
// hold matches already, come out as the one-by-one loop gives.
func TestUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 60 {
		w := worker{m: &gpuMatcher{quit: make(chan struct{})}}
		w.recsOut = trial % 2 // with one buffer out already, unpack waits for it
		var batch, want []*request
		var recs []outRec
		slot := uint32(0)
		for range 1 + rng.IntN(5) {
			bt := &kernels.Batch{}
			long := rng.IntN(3) == 0
			for range 1 + rng.IntN(40) {
				n := 1 + rng.IntN(200)
				if long && trial%4 == 0 {
					n = 1 + rng.IntN(400_000)
				}
				from := rng.IntN(n)
				to := from + rng.IntN(n-from+1)
				if rng.IntN(10) == 0 {
					to = from // nothing to match
				}
				bt.Segs = append(bt.Segs, kernels.Segment{Len: n, From: from, To: to})
				w.segSlot = append(w.segSlot, slot)
				for p := from; p < to; p++ {
					per := rng.IntN(3)
					if long && rng.IntN(50) == 0 {
						per = 20
					}
					for range per {
						recs = append(recs, outRec{slot: slot + uint32(p-from), ref: rng.Uint32(), refHi: uint32(rng.IntN(2)), len: uint32(rng.IntN(1000))})
					}
				}
				slot += uint32(to - from)
			}
			before := []kernels.Match{{Ref: 7, Query: 1, Len: 2}}
			batch = append(batch, &request{b: bt, res: &kernels.Result{Matches: slices.Clone(before), Ends: []int{1}}})
			want = append(want, &request{b: bt, res: &kernels.Result{Matches: slices.Clone(before), Ends: []int{1}}})
		}
		if trial%10 == 9 {
			recs = nil // a launch with no positions to match (pack found none) hands out no buffer
		}
		earlier := make([]outRec, 0, 8) // the buffer of the launch before, where one is out
		w.recsBack = make(chan []outRec, 2)
		if w.recsOut == 1 {
			w.recsBack <- earlier
		}
		w.unpack(batch, recs)
		unpackOneByOne(w.segSlot, want, recs)
		if cap(recs) > 0 {
			if trial%2 == 1 && (cap(w.recs) != cap(earlier) || w.recsOut != 1) {
				t.Fatalf("trial %d: the worker did not take back the buffer of the launch before (%d out)", trial, w.recsOut)
			}
			if trial%2 == 0 && (w.recs != nil || w.recsOut != 1) {
				t.Fatalf("trial %d: the worker kept a buffer it had handed out (%d out)", trial, w.recsOut)
			}
		}
		if cap(recs) > 0 && len(w.recsBack) > 0 {
			t.Fatalf("trial %d: the records were given back before the requests finished", trial)
		}
		// The requests finish in any order, each on its own goroutine (as Match's callers do);
		// in every third trial the launch failed after its records were handed out, and they
		// go back unread.
		failed := trial%3 == 2
		var wg sync.WaitGroup
		for _, i := range rng.Perm(len(batch)) {
			r := batch[i]
			r.done = make(chan error, 1)
			if failed {
				r.done <- errors.New("launch failed")
			} else {
				r.done <- nil
			}
			wg.Go(func() {
				if err := r.wait(); (err != nil) != failed {
					t.Errorf("trial %d: wait: %v", trial, err)
				}
			})
		}
		wg.Wait()
		if cap(recs) > 0 {
			select {
			case got := <-w.recsBack:
				if &got[:1][0] != &recs[:1][0] || len(w.recsBack) > 0 {
					t.Fatalf("trial %d: another buffer came back, or more than one", trial)
				}
			default:
				t.Fatalf("trial %d: the launch's records were not given back once every request finished", trial)
			}
		}
		for i := range batch {
			if failed {
				break
			}
			g, x := batch[i].res, want[i].res
			if !slices.Equal(g.Matches, x.Matches) || !slices.Equal(g.Ends, x.Ends) {
				t.Fatalf("trial %d (%d records), request %d: %d matches, ends %v; want %d, %v", trial, len(recs), i, len(g.Matches), g.Ends, len(x.Matches), x.Ends)
			}
		}
	}
}

// TestPack: requests of reads (both strands in one code array) and pieces of long records (several
// requests sharing one code array, each with segments of its own) are packed for the device: every
// segment's codes from the one before its first position to its end are where its pieces point,
// the pieces cut its positions in order into runs of at most the piece length, and the slots run
// on from segment to segment (segSlot), request after request, skipping the empty segments; a
// piece followed by the next positions of its sequence links to that piece (Piece.link).
func TestPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	allCuts, allLinks, segLinks := 0, 0, 0 // segLinks: from one segment's last piece to the next segment's first
	for trial := range 40 {
		w := &worker{m: &gpuMatcher{dev: &device{info: Info{SMs: 1 + rng.IntN(4)}}, cfg: matchConfig{PieceLen: 1 + rng.IntN(300)}}, spans: map[*byte]*codeSpan{}}
		ahead := []int64{0, -1, 1 + rng.Int64N(100), 1 + rng.Int64N(3000)}[trial%4]
		w.m.lookahead.Store(ahead)
		var batch []*request
		var shared []byte
		var last kernels.Segment // the last segment made, to go on from
		var lastCodes []byte
		total := 0
		for range 1 + rng.IntN(6) {
			bt := &kernels.Batch{}
			if rng.IntN(3) == 0 && shared != nil {
				bt.Codes = shared // another request's pieces of the same record
			} else {
				bt.Codes = make([]byte, 1+rng.IntN(5000))
				for i := range bt.Codes {
					bt.Codes[i] = byte(rng.IntN(256))
				}
				shared = bt.Codes
			}
			for range rng.IntN(8) {
				off := rng.IntN(len(bt.Codes))
				n := 1 + rng.IntN(len(bt.Codes)-off)
				from := rng.IntN(n)
				if lastCodes != nil && &bt.Codes[0] == &lastCodes[0] && last.To < last.Len && rng.IntN(2) == 0 {
					off, n, from = last.Off, last.Len, last.To // the same sequence's next positions
				}
				to := from + rng.IntN(n-from+1)
				last, lastCodes = kernels.Segment{Off: off, Len: n, From: from, To: to}, bt.Codes
				bt.Segs = append(bt.Segs, last)
			}
			total += len(bt.Codes)
			batch = append(batch, &request{b: bt})
		}
		nPieces, nSlots, err := w.pack(batch)
		if err != nil {
			t.Fatal(err)
		}
		// The device's copy of the codes, as run makes it.
		codes := make([]byte, w.codeBytes())
		for _, sp := range w.spanOrder {
			if len(sp.src) != sp.hi-sp.lo || sp.dev%16 != 0 {
				t.Fatalf("trial %d: span %+v: %d codes at %d", trial, sp, len(sp.src), sp.dev)
			}
			copy(codes[sp.dev:], sp.src)
		}
		pieces := w.pieces
		pl := w.pieceLen(nSlots)
		k, slot, seg, cuts := 0, 0, 0, 0
		prevSeq, prevTo := "", uint32(0) // the last piece's sequence (its codes and offset) and end
		for ri, r := range batch {
			for si, sg := range r.b.Segs {
				what := fmt.Sprintf("trial %d, request %d, segment %d %+v", trial, ri, si, sg)
				if w.segSlot[seg] != uint32(slot) {
					t.Fatalf("%s: first slot %d, want %d", what, w.segSlot[seg], slot)
				}
				seg++
				seq := fmt.Sprintf("%p+%d", &r.b.Codes[0], sg.Off)
				for f := sg.From; f < sg.To; {
					to := min(f+pl, sg.To)
					if k >= len(pieces) {
						t.Fatalf("%s: %d pieces, want more", what, len(pieces))
					}
					p := pieces[k]
					if k > 0 {
						wantLink := uint32(0)
						if seq == prevSeq && prevTo == uint32(f) {
							wantLink = p.to - prevTo
						}
						if pieces[k-1].link != wantLink {
							t.Fatalf("%s: piece %+v links %d to the next, want %d", what, pieces[k-1], pieces[k-1].link, wantLink)
						}
						allLinks += int(min(wantLink, 1))
						if f == sg.From {
							segLinks += int(min(wantLink, 1))
						}
					}
					prevSeq, prevTo = seq, p.to
					k++
					if p.from != uint32(f) || p.to != uint32(to) || p.slot != uint32(slot+f-sg.From) {
						t.Fatalf("%s: piece %+v, want from %d to %d, slot %d (piece length %d)", what, p, f, to, slot+f-sg.From, pl)
					}
					// The sequence whole, or at least the lookahead past the segment's end.
					want := sg.Len
					if ahead > 0 {
						want = min(sg.Len, sg.To+int(ahead))
					}
					if int(p.len) < want || int(p.len) > sg.Len || (p.cut == 1) != (int(p.len) < sg.Len) || p.cut > 1 {
						t.Fatalf("%s: piece %+v: %d codes (cut %d), want %d to %d of %d, lookahead %d", what, p, p.len, p.cut, want, sg.Len, sg.Len, ahead)
					}
					cuts += int(p.cut)
					for pos := max(sg.From-1, 0); pos < int(p.len); pos++ {
						if codes[p.q+int64(pos)] != r.b.Codes[sg.Off+pos] {
							t.Fatalf("%s: the code at position %d is not the segment's", what, pos)
						}
					}
					f = to
				}
				slot += max(sg.To-sg.From, 0)
			}
		}
		if k > 0 && pieces[k-1].link != 0 {
			t.Fatalf("trial %d: the last piece links to the next", trial)
		}
		if k != nPieces || slot != nSlots || seg != len(w.segSlot) {
			t.Fatalf("trial %d: %d pieces, %d slots, %d segments; want %d, %d, %d", trial, nPieces, nSlots, len(w.segSlot), k, slot, seg)
		}
		if w.cut != (cuts > 0) {
			t.Fatalf("trial %d: the launch's cut %v with %d cut pieces", trial, w.cut, cuts)
		}
		allCuts += cuts
	}
	if allCuts == 0 {
		t.Fatal("no piece was cut: the lookaheads are too long for the sequences")
	}
	if allLinks == 0 || segLinks == 0 {
		t.Fatalf("%d pieces linked to the next, %d of them across segments", allLinks, segLinks)
	}
}

// BenchmarkSortLongRuns orders 4 Mi records in runs of one slot of 64 Ki (reads in a satellite
// under -maxmatch), their text positions anywhere in 3.1 Gbp.
func BenchmarkSortLongRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 4 << 20
	recs := make([]outRec, n)
	for i := range recs {
		p := rng.Int64N(3_100_000_000)
		recs[i] = outRec{slot: uint32(i >> 16), ref: uint32(p), refHi: uint32(p >> 32), len: 30}
	}
	work := make([]outRec, n)
	for b.Loop() {
		copy(work, recs)
		sortRecords(work, true)
	}
}

// runOfSlot returns n records of one slot at random text positions in [base, base+span), equal
// ones too (each numbered by its place in its length), and the same in stable text-position order.
func runOfSlot(rng *rand.Rand, n int, base, span int64) (run, want []outRec) {
	run = make([]outRec, n)
	for i := range run {
		p := base + rng.Int64N(span)
		run[i] = outRec{slot: 7, ref: uint32(p), refHi: uint32(p >> 32), len: uint32(i)}
	}
	want = slices.Clone(run)
	slices.SortStableFunc(want, byTextPos)
	return run, want
}

// TestSortKeyed: runs of 17 to 255 records of one slot come out in the order of a stable sort by
// text position, for positions spanning one to five bytes and for a span too wide for the packed
// keys (positions near 2^62, sorted by comparison).
func TestSortKeyed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	var scratch []outRec
	for trial := range 500 {
		n := 17 + rng.IntN(radixRecs-17)
		base := rng.Int64N(1 << 40)
		span := int64(1) << uint(1+rng.IntN(40))
		if trial%50 == 0 {
			base, span = 0, 1<<62
		}
		run, want := runOfSlot(rng, n, base, span)
		scratch = sortKeyed(run, scratch)
		if !slices.Equal(run, want) {
			t.Fatalf("trial %d (%d records, span %d): not in stable text-position order", trial, n, span)
		}
	}
}

// BenchmarkSortMidRuns: sortRecords on 4 Mi records in runs of 17 to 255 a slot, the runs that
// sortKeyed orders.
func BenchmarkSortMidRuns(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 7))
	const n = 4 << 20
	recs := make([]outRec, n)
	slot := uint32(0)
	for i := 0; i < n; {
		run := min(17+rng.IntN(radixRecs-17), n-i)
		for range run {
			p := rng.Int64N(3_100_000_000)
			recs[i] = outRec{slot: slot, ref: uint32(p), refHi: uint32(p >> 32), len: 30}
			i++
		}
		slot++
	}
	work := make([]outRec, n)
	for b.Loop() {
		copy(work, recs)
		sortRecords(work, true)
	}
}

// TestSortByTextPos: runs of one slot sorted by radix come out as pdqsort orders them, for text
// positions spanning one to five bytes (an odd or even number of passes, bytes they share).
func TestSortByTextPos(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var scratch []outRec
	for trial := range 200 {
		n := radixRecs + rng.IntN(3000)
		base := rng.Int64N(1 << 40)
		span := int64(1) << uint(1+rng.IntN(40))
		run, want := runOfSlot(rng, n, base, span)
		scratch = sortByTextPos(run, scratch)
		if !slices.Equal(run, want) {
			t.Fatalf("trial %d: %d records over a span of %d out of order", trial, n, span)
		}
	}
}

// TestGrowRecs: records copied in, part after part, keep them all, in order, and grows the capacity at
// least twofold each time it must grow (a few copies for millions of records).
func TestGrowRecs(t *testing.T) {
	var recs, want []outRec
	grows := 0
	for i := range 3000 {
		more := make([]outRec, i%700)
		for k := range more {
			more[k] = outRec{ref: uint32(i), slot: uint32(k)}
		}
		before := cap(recs)
		at := len(recs)
		recs = growRecs(recs, len(more))
		copy(recs[at:], more)
		if cap(recs) != before {
			grows++
			if before > 0 && cap(recs) < 2*before {
				t.Fatalf("capacity %d grew to %d", before, cap(recs))
			}
		}
		want = append(want, more...)
	}
	if !slices.Equal(recs, want) {
		t.Fatal("records lost or out of order")
	}
	if grows > 25 {
		t.Fatalf("%d growths for %d records", grows, len(recs))
	}
}

// TestSortRecordsOrderedRuns: runs of one slot already in text-position order (the card's sort,
// or pages merged in order) are left as they are and the others sorted, every length of run: the
// result is a stable sort by (slot, text position) either way.
func TestSortRecordsOrderedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	var recs []outRec
	for slot := range uint32(400) {
		n := []int{1, 2, 5, 17, 40, radixRecs, radixRecs + 300}[rng.IntN(7)]
		run, sorted := runOfSlot(rng, n, rng.Int64N(1<<33), 1<<uint(1+rng.IntN(33)))
		if rng.IntN(2) == 0 {
			run = sorted
		}
		for i := range run {
			run[i].slot = slot
		}
		recs = append(recs, run...)
	}
	want := slices.Clone(recs)
	slices.SortStableFunc(want, func(a, b outRec) int { return cmp.Or(cmp.Compare(a.slot, b.slot), byTextPos(a, b)) })
	sortRecords(recs, true)
	if !slices.Equal(recs, want) {
		t.Fatal("records not in stable (slot, text position) order")
	}
}

// TestDigitStarts: each pass's starts are the sums of the counts of the digits below, and a pass
// is left out exactly where one digit holds every key.
func TestDigitStarts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 200 {
		passes, n := 1+rng.IntN(8), 1+rng.IntN(5000)
		hist := make([]uint32, 256*8)
		for p := range passes {
			if rng.IntN(3) == 0 {
				hist[p*256+rng.IntN(256)] = uint32(n) // one digit for all
				continue
			}
			for range n {
				hist[p*256+rng.IntN(256)]++
			}
		}
		starts := make([]uint32, 256*8)
		run := digitStarts(hist, starts, passes, n)
		var want []int
		for p := range passes {
			sum, one := uint32(0), false
			for d := range 256 {
				if starts[p*256+d] != sum {
					t.Fatalf("trial %d pass %d digit %d: start %d, want %d", trial, p, d, starts[p*256+d], sum)
				}
				sum += hist[p*256+d]
				one = one || hist[p*256+d] == uint32(n)
			}
			if !one {
				want = append(want, p)
			}
		}
		if !slices.Equal(run, want) {
			t.Fatalf("trial %d: passes %v, want %v", trial, run, want)
		}
	}
}
