package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Pattern search (sapipe count and locate) on the GPU: the index's text, suffix array, rank
// structure and k-mer table are copied to the device once; each batch of patterns crosses as its
// codes and end offsets, one thread searches each pattern (fmsearch.cu, kernels/cpu's Searcher
// step for step), and the intervals come back. The hits are then made on the host from the
// intervals by the CPU searcher's own code, so they are the CPU's.

// searchThreads is the block size of fm_search.
const searchThreads = 256

// NewPatternSearcher returns a searcher that runs the searches of s on the GPU. It falls back to
// s itself, with a note, when the index does not fit in the GPU memory left.
func (b *Backend) NewPatternSearcher(s *cpu.Searcher) (kernels.Searcher, error) {
	ix := s.Device()
	g := &gpuSearcher{b: b, cpu: s, ix: ix}
	err := b.dev.run(func() error { return g.upload(true) })
	if errors.Is(err, errNoRoom) {
		b.note(fmt.Sprintf("pattern search on the CPU: %v", err))
		return s, nil
	}
	if err != nil {
		b.dev.run(func() error { g.free(); return nil })
		return nil, err
	}
	return g, nil
}

// NewPatternSearcherEarly is NewPatternSearcher for an index file's page while the host checks it:
// early is the page's index without C, copied to the device at once; checked returns the
// searcher of the checked page (or the checks' error, which comes first), whose C follows.
// Nothing is searched before it has returned. With sums (the file's checksums) given, the card
// checks the page itself (check.go), and unchecked returns the searcher of the page taken without
// the host's checks (cpu.UncheckedSearchPage); checked then runs only where a check fails, for
// the error's words.
func (b *Backend) NewPatternSearcherEarly(early *cpu.DeviceIndex, sums func() error, unchecked, checked func() (*cpu.Searcher, error)) (kernels.Searcher, error) {
	g := &gpuSearcher{b: b, ix: early, countOnly: early.CountOnly}
	t0 := time.Now()
	err := b.dev.run(func() error { return g.upload(false) })
	trace("search page's copies issued", t0)
	if err == nil && sums != nil {
		dg, derr := b.checkedOnDevice(g, sums, unchecked)
		if derr == nil {
			return dg, nil
		}
		if !errors.Is(derr, errDeviceCheck) {
			return nil, derr
		}
		// The host's checks, for the error's words.
	}
	s, cerr := checked()
	if cerr != nil || err != nil {
		b.dev.run(func() error { g.free(); return nil })
		if cerr != nil {
			return nil, cerr
		}
		if errors.Is(err, errNoRoom) {
			b.note(fmt.Sprintf("pattern search on the CPU: %v", err))
			return s, nil
		}
		return nil, err
	}
	ix := s.Device()
	g.cpu, g.ix = s, ix
	err = b.dev.run(func() error {
		if !sameIndex(ix, early) {
			// The checks gave other arrays (copies of the file's): send the index again.
			g.free()
			return g.upload(true)
		}
		if err := g.b.dev.copyInFrom(g.cs, unsafe.Pointer(&ix.C[0]), 4*256); err != nil {
			return err
		}
		return g.b.dev.sync()
	})
	if err != nil {
		b.dev.run(func() error { g.free(); return nil })
		return nil, err
	}
	return g, nil
}

// checkedOnDevice checks the index g holds (copied, early) on the card while the host computes
// the checksums (sums, whose error comes first), then takes the host's unchecked searcher of the
// page. It returns an error wrapping errDeviceCheck, with g's memory kept, where a check fails;
// on any other error g is freed.
func (b *Backend) checkedOnDevice(g *gpuSearcher, sums func() error, unchecked func() (*cpu.Searcher, error)) (*gpuSearcher, error) {
	ix := g.ix
	var c [256]uint32
	t0 := time.Now()
	err := b.dev.run(func() error {
		if err := b.dev.sync(); err != nil { // the copies
			return err
		}
		n := len(ix.Text)
		if n < 1 || len(ix.SA) != n+1 || ix.SA[0] != int32(n) || ix.OccStride < 1 || len(ix.Occ) != ((n+1)/cpu.OccBlockRows+1)*ix.OccStride {
			return fmt.Errorf("%w: lengths or first rows", errDeviceCheck)
		}
		var err error
		trace("search page copied", t0)
		c, err = b.dev.checkOnDevice(checkArgs{n: n, sigma: ix.Sigma, win: g.text, sa: g.sa, occ: g.occ, noText: g.countOnly,
			planes: ix.OccPlanes, counts: ix.OccCounts, stride: ix.OccStride})
		trace("search page checked on the device", t0)
		return err
	})
	if serr := sums(); serr != nil {
		err = serr
	}
	var s *cpu.Searcher
	if err == nil {
		s, err = unchecked()
	}
	trace("search page's checksums and host arrays", t0)
	if err == nil {
		g.cpu = s
		d := s.Device()
		d.C = c
		g.ix = d
		err = b.dev.run(func() error {
			if err := b.dev.copyInFrom(g.cs, unsafe.Pointer(&g.ix.C[0]), 4*256); err != nil {
				return err
			}
			return b.dev.sync()
		})
	}
	if err != nil && !errors.Is(err, errDeviceCheck) {
		b.dev.run(func() error { g.free(); return nil })
		return nil, err
	}
	return g, err
}

// sameIndex reports whether a and b are the same memory and shape, C aside.
func sameIndex(a, b *cpu.DeviceIndex) bool {
	return unsafe.SliceData(a.Text) == unsafe.SliceData(b.Text) && len(a.Text) == len(b.Text) &&
		unsafe.SliceData(a.SA) == unsafe.SliceData(b.SA) && len(a.SA) == len(b.SA) &&
		unsafe.SliceData(a.Occ) == unsafe.SliceData(b.Occ) && len(a.Occ) == len(b.Occ) &&
		unsafe.SliceData(a.Kmers) == unsafe.SliceData(b.Kmers) && len(a.Kmers) == len(b.Kmers) &&
		a.Sigma == b.Sigma && a.OccStride == b.OccStride && a.OccCounts == b.OccCounts && a.OccPlanes == b.OccPlanes &&
		a.KmerLen == b.KmerLen
}

// gpuSearcher holds an index on the device. Its device fields are used on the device goroutine
// only.
type gpuSearcher struct {
	b   *Backend
	cpu *cpu.Searcher
	ix  *cpu.DeviceIndex

	index                    devPtr // one allocation: text, sa, occ, kmers, c
	text, sa, occ, kmers, cs devPtr // text and sa 0 where countOnly
	countOnly                bool   // cpu.DeviceIndex.CountOnly

	// The batches are searched on lanes, each a goroutine on a thread of its own with a stream
	// and the batch's buffers, so that several batches are on the card at once (startLanes).
	lanesOnce  sync.Once
	lanesErr   error
	lanes      chan *searchLane // the free ones
	all        []*searchLane
	lanesDone  sync.WaitGroup
	kernelTime atomic.Int64 // of the last batch's search, launch to completion, in ns
}

// searchLanes is how many batches of patterns may be on the card at once. A batch of 2 MiB of
// codes is about 25,000 patterns, a thread each: one alone leaves most of an H200 idle while its
// threads wait on the rank structure's memory.
const searchLanes = 4

// searchLane is one lane of a gpuSearcher: its goroutine runs the jobs sent to it, on a thread
// where the context is current, and issues its batches' copies and kernel on its stream.
type searchLane struct {
	jobs  chan func()
	s     *stream
	fn    uintptr // fm_search
	host  hostBuf // pinned: a batch's codes, ends and outcomes
	batch devBuf  // the same on the device
}

// run runs f on the lane's goroutine and returns its error.
func (l *searchLane) run(f func() error) error {
	done := make(chan error, 1)
	l.jobs <- func() { done <- f() }
	return <-done
}

// startLanes starts the lanes, once.
func (g *gpuSearcher) startLanes() error {
	g.lanesOnce.Do(func() {
		d := g.b.dev
		var fn uintptr
		if g.lanesErr = d.run(func() (err error) { fn, err = d.fn("fm_search"); return err }); g.lanesErr != nil {
			return
		}
		g.lanes = make(chan *searchLane, searchLanes)
		for range searchLanes {
			l := &searchLane{jobs: make(chan func())}
			ready := make(chan error, 1)
			g.lanesDone.Go(func() {
				err := d.bindThread()
				if err == nil {
					l.s, err = newStream(d)
				}
				ready <- err
				if err != nil {
					return
				}
				l.fn = fn
				for job := range l.jobs {
					job()
				}
				l.host.free(d)
				l.batch.free(d)
				l.s.destroy()
			})
			if err := <-ready; err != nil {
				g.lanesErr = err
				close(l.jobs)
				return
			}
			g.all = append(g.all, l)
			g.lanes <- l
		}
	})
	return g.lanesErr
}

// stopLanes ends the lanes' goroutines, which free their buffers and streams; a later search
// starts them again (an index sent again after the host's checks frees the first copy).
func (g *gpuSearcher) stopLanes() {
	for _, l := range g.all {
		close(l.jobs)
	}
	g.lanesDone.Wait()
	g.all, g.lanes, g.lanesErr = nil, nil, nil
	g.lanesOnce = sync.Once{}
}

// upload copies the index to the device, and with wait waits for the copies. Device goroutine
// only.
func (g *gpuSearcher) upload(wait bool) error {
	ix := g.ix
	sizes := []uint64{uint64(len(ix.Text)), 4 * uint64(len(ix.SA)), 8 * uint64(len(ix.Occ)), 4 * uint64(max(len(ix.Kmers), 1)), 4 * 256}
	if g.countOnly {
		sizes[0], sizes[1] = 0, 0
	}
	var total uint64
	for _, s := range sizes {
		total += (s + 255) &^ 255
	}
	free, _, err := g.b.dev.memInfo()
	if err != nil {
		return err
	}
	if total+total/4+(256<<20) > free {
		return fmt.Errorf("%w: the index takes %d MiB, %d MiB free", errNoRoom, total>>20, free>>20)
	}
	d := g.b.dev
	if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&g.index, total)); err != nil {
		return err
	}
	c := carver{next: g.index}
	g.text, g.sa, g.occ, g.kmers, g.cs = c.take(sizes[0]), c.take(sizes[1]), c.take(sizes[2]), c.take(sizes[3]), c.take(sizes[4])
	if g.countOnly {
		g.text, g.sa = 0, 0
	}
	for _, cp := range []struct {
		dst devPtr
		src unsafe.Pointer
		n   int
	}{
		{g.text, unsafe.Pointer(unsafe.SliceData(ix.Text)), len(ix.Text)},
		{g.sa, unsafe.Pointer(unsafe.SliceData(ix.SA)), 4 * len(ix.SA)},
		{g.occ, unsafe.Pointer(unsafe.SliceData(ix.Occ)), 8 * len(ix.Occ)},
		{g.kmers, unsafe.Pointer(unsafe.SliceData(ix.Kmers)), 4 * len(ix.Kmers)},
		{g.cs, unsafe.Pointer(&ix.C[0]), 4 * 256},
	} {
		if cp.dst == 0 { // not held: counting only
			continue
		}
		if err := d.copyInFrom(cp.dst, cp.src, cp.n); err != nil {
			return err
		}
	}
	if !wait {
		return nil
	}
	return d.sync()
}

// Search appends the hits of every pattern of p to h, searching on the GPU.
func (g *gpuSearcher) Search(p *kernels.Patterns, locate bool, h *kernels.Hits) error {
	iv := make([]cpu.Interval, p.Len())
	if err := g.intervals(p, iv, nil); err != nil {
		return err
	}
	return g.cpu.AppendHits(iv, locate, h)
}

// SearchIntervals runs the searches of p's patterns on the GPU and writes their intervals to iv,
// for a search over several pages (cpu.PagedSearcher) that makes the hits itself.
func (g *gpuSearcher) SearchIntervals(p *kernels.Patterns, iv []cpu.Interval) error {
	return g.intervals(p, iv[:p.Len()], nil)
}

// SearchIntervalsRows is SearchIntervals with the suffix array values of the one-row outcomes
// (cpu.RowSearch).
func (g *gpuSearcher) SearchIntervalsRows(p *kernels.Patterns, iv []cpu.Interval, rows []int32) error {
	return g.intervals(p, iv[:p.Len()], rows[:p.Len()])
}

// intervals runs the searches of p's patterns on the GPU and writes their outcomes to iv, and
// with rows the suffix array values of those that ended on one row with a shift. The batch goes
// to a free lane: the caller's goroutine copies it into the lane's pinned memory, and the lane
// queues the copies and the kernel on its stream and waits for them, while other lanes' batches
// run beside it on the card.
func (g *gpuSearcher) intervals(p *kernels.Patterns, iv []cpu.Interval, rows []int32) error {
	np := p.Len()
	if np == 0 {
		return nil
	}
	if len(p.Codes) > 1<<32-1 || np > 1<<31/3 {
		return fmt.Errorf("a batch of %d patterns, %d codes, is too large for one search", np, len(p.Codes))
	}
	codesLen := (len(p.Codes) + 255) &^ 255
	endsLen := (4*np + 255) &^ 255
	outLen := 16 * np // (lo, hi, shift, row) a pattern
	need := codesLen + endsLen + outLen
	if err := g.startLanes(); err != nil {
		return err
	}
	l := <-g.lanes
	defer func() { g.lanes <- l }()
	d := g.b.dev
	if l.host.n < need {
		if err := l.run(func() error {
			l.host.free(d) // and allocate anew: ensure would copy the old contents
			return l.host.ensure(d, need)
		}); err != nil {
			return err
		}
	}
	host := unsafe.Slice((*byte)(l.host.p), need)
	copy(host, p.Codes)
	ends := unsafe.Slice((*uint32)(unsafe.Pointer(&host[codesLen])), np)
	for i, e := range p.Ends {
		ends[i] = uint32(e)
	}
	ix := g.ix
	err := l.run(func() error {
		if err := l.batch.ensure(d, uint64(need)); err != nil {
			return err
		}
		codes, endp, out := l.batch.p, l.batch.p+devPtr(codesLen), l.batch.p+devPtr(codesLen+endsLen)
		if err := l.s.toDevice(codes, l.host.p, codesLen+endsLen); err != nil {
			return err
		}
		t0 := time.Now()
		err := l.s.launch("fm_search", l.fn, ceilDiv(np, searchThreads), searchThreads,
			g.text, g.sa, g.occ, g.kmers, g.cs, uint32(len(ix.Text)), uint32(ix.Sigma),
			uint32(ix.OccStride), uint32(ix.OccCounts), uint32(ix.OccPlanes), uint32(ix.KmerLen),
			codes, endp, uint32(np), out)
		if err != nil {
			return err
		}
		if err := l.s.toHost(unsafe.Pointer(&host[codesLen+endsLen]), out, outLen); err != nil {
			return err
		}
		if err := l.s.sync(); err != nil {
			return err
		}
		g.kernelTime.Store(int64(time.Since(t0)))
		if traceOn { // a batch at a time: no string made otherwise
			trace(fmt.Sprintf("search of %d patterns, %d codes", np, len(p.Codes)), t0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	out := unsafe.Slice((*[4]int32)(unsafe.Pointer(&host[codesLen+endsLen])), np)
	for i, o := range out {
		iv[i] = cpu.Interval{Lo: o[0], Hi: o[1], Shift: o[2]}
	}
	if rows != nil {
		for i, o := range out {
			rows[i] = o[3]
		}
	}
	return nil
}

// free releases the device memory. Device goroutine only.
func (g *gpuSearcher) free() {
	d := g.b.dev
	if g.index != 0 {
		d.drv.cuMemFree(g.index)
		g.index = 0
	}
	g.stopLanes()
}

// Close frees the device memory of the index.
func (g *gpuSearcher) Close() error {
	return g.b.dev.run(func() error { g.free(); return nil })
}

var (
	_ kernels.Searcher = (*gpuSearcher)(nil)
	_ cpu.RowSearch    = (*gpuSearcher)(nil)
)
