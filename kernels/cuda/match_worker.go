package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// A device worker runs one launch at a time: the batches it took, packed into pinned memory, copied
// up, matched against every page and turned into compact records, which it copies down and hands
// to each batch's caller, who turns them into matches (request.finish). See matcher.go.

// piece is the kernels' Piece (match.cuh): positions [from, to) of a query sequence that starts
// at codes+q on the device; position from has slot `slot`. len codes of the sequence are there:
// all of it, or with cut set its first len (see pack).
type piece struct {
	q                              int64
	len, from, to, slot, cut, link uint32
}

// pieceBytes is the size of a piece on the device.
const pieceBytes = int(unsafe.Sizeof(piece{}))

// cutHitAt is where, in dTot and hTot, the kernels flag a search that reached a cut piece's len;
// linkedAt, where piece_link counts the pieces whose start state it linked to the next one's;
// longAt, where piece_start counts the pieces it lists for piece_long, and longTotalAt, where
// piece_long adds them up over the launch; runItemsAt, where mm_chain counts the items it took from
// a page's runs, and jumpsAt, where piece_start counts the start states moved on by them.
const (
	cutHitAt    = 16
	linkedAt    = cutHitAt + 4
	longAt      = linkedAt + 4
	longTotalAt = longAt + 4
	runItemsAt  = longTotalAt + 4
	jumpsAt     = runItemsAt + 4
)

// outRec is a match record from the device: text position (its low 32 bits, the high ones in
// refHi), length, slot.
type outRec struct {
	ref, len, slot, refHi uint32
}

// textPos returns the record's text position.
func (r outRec) textPos() int64 { return int64(r.refHi)<<32 | int64(r.ref) }

// codeSpan is the part of one batch's codes that a launch copies up: [lo, hi), at dev in the device
// buffer. Batches that share their codes (the chunks of one long sequence) share a span.
type codeSpan struct {
	lo, hi int
	dev    int
	src    []byte // the codes [lo, hi)
	key    *byte  // the codes' first byte: a buffer of the matcher's codeMemory, copied up from there
}

type worker struct {
	m *gpuMatcher
	s *stream

	hTot                      hostBuf
	hUp                       hostBuf // a launch's codes and pieces on their way up (upload)
	dCodes, dPieces, dCounts  devBuf
	dStarts, dEnds, dBlockEnd devBuf // the pieces' start states (piece_start, piece_link)
	dLong                     devBuf // pieces listed for piece_long
	dOffs, dSums, dTot        devBuf
	dRegion, dRegionPiece     devBuf // per slot: items (-maxmatch) or records (unique modes)
	dQRun                     devBuf // per slot (-maxmatch), 4 bytes: the run of one code at an item's position (mm_walk)
	dBest                     devBuf // per slot: best match so far over the pages (unique modes)
	dItems, dItemPiece        devBuf // compacted items
	dRangeCnt, dItemRows      devBuf
	dRangeOff                 devBuf
	dRanges, dRowCnt, dRowOff devBuf
	dCand, dValid, dValidOff  devBuf
	dOut                      devBuf
	dSort, dSortStatus        devBuf   // the card's sort of records: digit counts and starts; tiles' status (sortOnCard)
	sortHist, sortStarts      []uint32 // their copies on the host

	// Lines written on the card (match_print.go): the lines the launch's batches ask for, while
	// its records are kept on the card (nAll of them in dAll); the text, each segment's slots and
	// head and where its text ends, the heads; their host copies; the launch's text on the host,
	// and the pool of buffers for it.
	keep                       *kernels.Lines
	dAll                       devBuf
	nAll                       int
	dText, dSegLines, dSegEnds devBuf
	dHeads                     devBuf
	segLines                   []segLine
	heads                      []byte
	textNow                    *textBuf
	texts                      textPool

	spans      map[*byte]*codeSpan
	spanOrder  []*codeSpan
	pieces     []piece
	cut        bool     // some piece of the launch has only part of its sequence on the device
	segSlot    []uint32 // first slot of each segment of the launch
	recs       []outRec
	recsBack   chan []outRec // record buffers given back by the requests (unpack)
	recsOut    int           // the worker's record buffers out with requests
	spare      []outRec      // mergeRecords' other buffer
	itemRows   []uint32
	pageStarts []int // where each page's records start in recs

	// SAPIPE_GPU_TRACE: the last launch's records, and when they were ready on the host; the
	// time it spent packing, and growing device buffers (with the waits that growth takes).
	traceRecs    int
	traceMatched time.Time
	tracePack    time.Duration
	traceGrow    time.Duration

	ahead  int         // growAhead's factor for the launch being run
	direct []*codeSpan // upload's spans copied up from the matcher's pinned memory

	// Profiling: events recorded after each stage, and the stage names.
	events  []event
	evNames []string
	evUsed  int
}

// newWorker binds the calling goroutine's thread to the device and makes its stream.
func (m *gpuMatcher) newWorker() (*worker, error) {
	if err := m.dev.bindThread(); err != nil {
		return nil, err
	}
	s, err := newStream(m.dev)
	if err != nil {
		return nil, err
	}
	w := &worker{m: m, s: s, spans: make(map[*byte]*codeSpan)}
	if err := w.hTot.ensure(m.dev, jumpsAt+4); err != nil {
		w.free()
		return nil, err
	}
	if err := w.dTot.ensure(m.dev, jumpsAt+4); err != nil {
		w.free()
		return nil, err
	}
	return w, nil
}

func (w *worker) free() {
	d := w.m.dev
	w.hTot.free(d)
	w.hUp.free(d)
	for _, b := range []*devBuf{&w.dCodes, &w.dPieces, &w.dCounts, &w.dStarts, &w.dEnds, &w.dBlockEnd, &w.dLong, &w.dOffs,
		&w.dSums, &w.dTot, &w.dRegion, &w.dRegionPiece, &w.dQRun, &w.dBest, &w.dItems, &w.dItemPiece, &w.dRangeCnt, &w.dItemRows,
		&w.dRangeOff, &w.dRanges, &w.dRowCnt, &w.dRowOff, &w.dCand, &w.dValid, &w.dValidOff, &w.dOut, &w.dSort, &w.dSortStatus,
		&w.dAll, &w.dText, &w.dSegLines, &w.dSegEnds, &w.dHeads} {
		b.free(d)
	}
	w.freeText()
	for _, e := range w.events {
		w.s.destroyEvent(e)
	}
	w.s.destroy()
}

// grow makes b at least n bytes, first waiting for the stream's work (which may use b).
func (w *worker) grow(b *devBuf, n int) error {
	if uint64(max(n, 256)) <= b.n {
		return nil
	}
	if traceOn {
		defer w.traced(&w.traceGrow, time.Now())
	}
	if err := w.s.sync(); err != nil {
		return err
	}
	if b.n != 0 {
		w.m.stats.regrown.Add(1)
	}
	return b.ensure(w.m.dev, uint64(n))
}

// growAhead is grow for a buffer that holds so much a query position: its first allocation is
// made for w.ahead times this launch's positions (the launch bound's, at most four times), where
// the card has room for it. Grown a quarter at a time, a worker's buffers were reallocated
// about 70 times in a run's first second as its launches grew to the bound, and each free waits
// for the whole card (cuMemFree synchronises the device): 1,130 frees and 1,127 allocations in
// 3.1 s of the device workers' time, in 30 M E. coli reads on two H200 (an execution trace).
func (w *worker) growAhead(b *devBuf, n int) error {
	if b.n != 0 || w.ahead <= 1 {
		return w.grow(b, n)
	}
	if err := w.s.sync(); err != nil {
		return err
	}
	err := b.ensureRoom(w.m.dev, uint64(n), uint64(n)*uint64(w.ahead-1))
	if err == nil || !isOutOfMemory(err) {
		return err
	}
	return b.ensure(w.m.dev, uint64(n)) // no room for the bound's: this launch's
}

// growPass is grow for a buffer of a pass of -maxmatch's last stage, n bytes now and full for a
// pass of ChunkRows rows: it is made full at once where the card has room, so that it is not grown
// again. Grown to each pass's rows, the first launches' buffers of the 150 Mbp pair were grown
// again and again, 34-83 ms a launch on one H200 (SAPIPE_GPU_TRACE), each free waiting for the
// whole card.
func (w *worker) growPass(b *devBuf, n, full int) error {
	if uint64(max(n, 256)) <= b.n {
		return nil
	}
	if err := w.s.sync(); err != nil {
		return err
	}
	if b.n != 0 {
		w.m.stats.regrown.Add(1)
	}
	err := b.ensureRoom(w.m.dev, uint64(max(n, full)), 0)
	if err == nil || !isOutOfMemory(err) {
		return err
	}
	return b.ensure(w.m.dev, uint64(n)) // no room for a whole pass's: this one's
}

// setAhead sets w.ahead for a launch of nSlots positions: how many times its buffers' first
// allocations hold (growAhead).
func (w *worker) setAhead(nSlots int) {
	m := w.m
	w.ahead = 1
	if lim := m.cfg.sizer.limit(&m.cfg, m.opts.Mode, m.workers); nSlots > 0 && lim > nSlots {
		w.ahead = min(ceilDiv(lim, nSlots), maxAhead)
	}
}

// maxAhead bounds worker.ahead.
const maxAhead = 4

// traced adds the time since t0 to *d.
func (w *worker) traced(d *time.Duration, t0 time.Time) { *d += time.Since(t0) }

// traceLaunch prints, with SAPIPE_GPU_TRACE=1, what launch l (taken at t0) held and when its
// records were on the host and its batches filled: the launches' timeline, to see whether a
// run's card or its host waits.
func (w *worker) traceLaunch(l *launch, t0 time.Time) {
	npos := 0
	for _, r := range l.batch {
		npos += r.npos
	}
	at := func(t time.Time) float64 { return float64(t.Sub(traceStart).Microseconds()) / 1000 }
	matched := 0.0
	if !w.traceMatched.Before(t0) {
		matched = at(w.traceMatched)
	}
	fmt.Fprintf(os.Stderr, "sapipe gpu trace: launch of %d batches, %d positions, %d records: taken at %.1f ms, records at %.1f ms, unpacked at %.1f ms; pack %.1f ms, buffers grown %.1f ms\n",
		len(l.batch), npos, w.traceRecs, at(t0), matched, at(time.Now()), ms(w.tracePack), ms(w.traceGrow))
	w.tracePack, w.traceGrow = 0, 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// mark records the end of a stage when profiling.
func (w *worker) mark(name string) error {
	if !w.m.cfg.Profile {
		return nil
	}
	if w.evUsed == len(w.events) {
		e, err := w.s.newEvent()
		if err != nil {
			return err
		}
		w.events = append(w.events, e)
		w.evNames = append(w.evNames, "")
	}
	w.evNames[w.evUsed] = name
	err := w.s.record(w.events[w.evUsed])
	w.evUsed++
	return err
}

// collect adds the stage times of a completed launch to the statistics.
func (w *worker) collect() error {
	if !w.m.cfg.Profile {
		return nil
	}
	for i := 1; i < w.evUsed; i++ {
		ms, err := w.s.elapsed(w.events[i-1], w.events[i])
		if err != nil {
			return err
		}
		w.m.stats.addPhase(w.evNames[i], time.Duration(float64(ms)*1e6))
	}
	w.evUsed = 0
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// errMoreCodes says that a search reached the end of the codes copied up for a long record's
// batch (Piece.cut), so that its match may go on: the launch is done again with more of the record.
var errMoreCodes = errors.New("a search reached the end of the codes on the device")

// run matches the batches of launch l against this card's pages and fills their results; or, on a
// card of a chain that is not the last, leaves what the next card needs in l and returns forward.
// A launch whose searches reach the end of a long record's codes on the device is done again,
// with more of the record (up to all of it).
func (w *worker) run(l *launch) (forward bool, err error) {
	for {
		forward, err = w.runOnce(l)
		if !errors.Is(err, errMoreCodes) {
			return forward, err
		}
		w.m.lookMore()
		w.m.stats.relaunches.Add(1)
	}
}

func (w *worker) runOnce(l *launch) (forward bool, err error) {
	m := w.m
	batch := l.batch
	part := m.cfg.part
	firstCard, lastCard := part.first(), part.last()
	var t0 time.Time
	if traceOn {
		t0 = time.Now()
	}
	nPieces, nSlots, err := w.pack(batch)
	if traceOn {
		w.traced(&w.tracePack, t0)
	}
	if err != nil {
		return false, err
	}
	w.recs = w.recs[:0]
	if nSlots == 0 {
		w.unpack(batch, nil)
		return false, nil
	}
	m.stats.launches.Add(1)
	m.stats.positions.Add(int64(nSlots))
	m.stats.pieces.Add(int64(nPieces))
	if err := w.mark(""); err != nil {
		return false, err
	}
	// 16 bytes past the codes: the kernels read eight at a time from aligned words (mt_load8).
	w.setAhead(nSlots)
	if err := w.growAhead(&w.dCodes, w.codeBytes()+16); err != nil {
		return false, err
	}
	for _, g := range []struct {
		b *devBuf
		n int
	}{{&w.dPieces, pieceBytes * nPieces}, {&w.dCounts, 4 * nPieces}, {&w.dOffs, 4 * nPieces},
		{&w.dStarts, 16 * nPieces}, {&w.dEnds, 8 * nPieces}, {&w.dBlockEnd, 4 * ceilDiv(nPieces, pieceLinkBlock)}, {&w.dLong, 16 * nPieces},
		{&w.dRegion, 16 * nSlots}, {&w.dRegionPiece, 4 * nSlots}} {
		if err := w.growAhead(g.b, g.n); err != nil {
			return false, err
		}
	}
	if err := w.upload(nPieces); err != nil {
		return false, err
	}
	if m.opts.Mode == kernels.MaxMatch {
		if err := w.growAhead(&w.dQRun, 4*nSlots); err != nil {
			return false, err
		}
	}
	if err := w.s.memset32(w.dTot.p+cutHitAt, 0, 6); err != nil {
		return false, err
	}
	if err := w.mark("copy up"); err != nil {
		return false, err
	}
	var recs []outRec
	printed := false
	if m.opts.Mode == kernels.MaxMatch {
		if l.recs != nil { // the records of the cards before, page after page
			old := w.recs
			w.recs, l.recs = l.recs, nil
			part.links.putRecs(old)
		}
		starts := append(w.pageStarts[:0], l.starts...)
		w.keep, w.nAll = w.printable(batch), 0
		for _, i := range m.fs.order(m.npages) {
			starts = append(starts, w.keptCount())
			f, err := m.fs.acquire(m, i)
			if err != nil {
				return false, err
			}
			err = w.maxMatchPage(i, &f.desc, nPieces, nSlots)
			if err == nil && !m.fs.resident {
				err = w.s.sync()
			}
			m.fs.release(f)
			if err != nil {
				return false, err
			}
		}
		if !lastCard {
			l.recs, l.starts = w.recs, append(l.starts[:0], starts...)
			w.recs, w.pageStarts = part.links.getRecs(), starts
			return true, w.collect()
		}
		w.pageStarts = append(starts, w.keptCount())
		if w.keep != nil {
			if printed, err = w.printKept(batch, nSlots); err != nil {
				return false, err
			}
		}
		if !printed {
			t := time.Now()
			if len(w.pageStarts) == 2 {
				sortRecords(w.recs, true)
			} else {
				w.recs, w.spare = mergeRecords(w.recs, w.spare, w.pageStarts)
			}
			if m.cfg.Profile {
				m.stats.addPhase("host sort", time.Since(t))
			}
		}
		recs = w.recs
	} else {
		recs, err = w.unique(l, nPieces, nSlots, firstCard, lastCard)
		if err != nil || !lastCard {
			return err == nil, err
		}
	}
	hit := unsafe.Add(w.hTot.p, cutHitAt)
	if err := w.s.toHost(hit, w.dTot.p+cutHitAt, 24); err != nil {
		return false, err
	}
	if err := w.s.sync(); err != nil {
		return false, err
	}
	m.stats.linked.Add(int64(*(*uint32)(unsafe.Add(w.hTot.p, linkedAt))))
	m.stats.long.Add(int64(*(*uint32)(unsafe.Add(w.hTot.p, longTotalAt))))
	m.stats.runItems.Add(int64(*(*uint32)(unsafe.Add(w.hTot.p, runItemsAt))))
	m.stats.jumps.Add(int64(*(*uint32)(unsafe.Add(w.hTot.p, jumpsAt))))
	if err := w.collect(); err != nil {
		return false, err
	}
	if w.cut && *(*uint32)(hit) != 0 {
		if printed {
			w.putText(w.textNow)
			w.textNow, w.nAll = nil, 0
		}
		return false, errMoreCodes
	}
	nRecs := len(recs)
	if printed {
		nRecs = w.nAll
		w.nAll = 0
	}
	m.stats.matches.Add(int64(nRecs))
	m.cfg.sizer.done(nSlots, nRecs)
	t := time.Now()
	w.traceRecs, w.traceMatched = nRecs, t
	if printed {
		w.unpackText(batch)
	} else {
		w.unpack(batch, recs)
	}
	if m.cfg.Profile {
		m.stats.addPhase("host unpack", time.Since(t))
	}
	return false, nil
}

// uploadPinned sends a launch's codes and pieces up from the worker's pinned buffer;
// SAPIPE_GPU_UPLOAD=driver sends them from Go memory, through the driver's staging (for measuring).
var uploadPinned = os.Getenv("SAPIPE_GPU_UPLOAD") != "driver"

// upload queues the copies of the launch's codes (w.spanOrder) and pieces to the device. The
// worker copies them into its pinned buffer, and the copy engine takes them from there while the
// worker goes on. From Go memory the driver stages each copy through pinned buffers of its own, a
// context's copies one at a time: 8-9 GB/s a card however many workers copy (the 30 GB of codes
// of 100 M reads of 150 bases, both strands, took a third of a card's run). The buffer is free
// again once the stream has done the last launch's copies: a worker mostly waits for its
// launch's results before it packs the next, and upload makes sure. A launch that sends a long
// record whole (done again with all of it, or on a card of a chain) grows the buffer to it; not
// measured (kernels/cuda/NOTES.md).
func (w *worker) upload(nPieces int) error {
	pb := pieceBytes * nPieces
	if !uploadPinned {
		for _, sp := range w.spanOrder {
			if err := w.s.toDevice(w.dCodes.p+devPtr(sp.dev), unsafe.Pointer(&sp.src[0]), len(sp.src)); err != nil {
				return err
			}
		}
		return w.s.toDevice(w.dPieces.p, unsafe.Pointer(&w.pieces[0]), pb)
	}
	if err := w.s.sync(); err != nil {
		return err
	}
	cb := (w.codeBytes() + 15) &^ 15
	// Grown by at least a quarter, in MiB: an allocation of pinned memory takes milliseconds and
	// waits for the other workers' driver calls. The first is made for the launch bound's
	// positions, as growAhead's (where the host can pin that much).
	need := (cb + pb + 1<<20 - 1) &^ (1<<20 - 1)
	if w.hUp.n == 0 && w.ahead > 1 && w.hUp.ensure(w.m.dev, need*w.ahead) == nil {
		need = 0
	}
	if err := w.hUp.ensure(w.m.dev, need); err != nil {
		return err
	}
	up := hostSlice[byte](&w.hUp, cb+pb)
	// The batches' codes are copied on goroutines of their own where they are large: the copies
	// were a tenth of the device workers' time, which sets the pace of a run of short reads,
	// while cores were left idle (100 M E. coli reads on two cards: 10 of 104 CPU-s). Codes in
	// the matcher's pinned memory (codeMemory) are copied up from where they are, after the
	// buffer's transfer (whose bytes in their place are not the codes).
	var wg sync.WaitGroup
	direct := w.direct[:0]
	for _, sp := range w.spanOrder {
		if w.m.cfg.codes.owns(sp.key) {
			direct = append(direct, sp)
			continue
		}
		dst := up[sp.dev : sp.dev+len(sp.src)]
		if len(sp.src) >= copyPart {
			wg.Go(func() { parallelCopy(dst, sp.src) })
		} else {
			copy(dst, sp.src)
		}
	}
	copy(up[cb:], unsafe.Slice((*byte)(unsafe.Pointer(&w.pieces[0])), pb))
	wg.Wait()
	w.direct = direct
	if len(direct) < len(w.spanOrder) {
		if err := w.s.toDevice(w.dCodes.p, w.hUp.p, w.codeBytes()); err != nil {
			return err
		}
	}
	for _, sp := range direct {
		if err := w.s.toDevice(w.dCodes.p+devPtr(sp.dev), unsafe.Pointer(&sp.src[0]), len(sp.src)); err != nil {
			return err
		}
	}
	return w.s.toDevice(w.dPieces.p, unsafe.Add(w.hUp.p, cb), pb)
}

// codeBytes is the size of the packed codes.
func (w *worker) codeBytes() int {
	if len(w.spanOrder) == 0 {
		return 0
	}
	last := w.spanOrder[len(w.spanOrder)-1]
	return last.dev + last.hi - last.lo
}

// pieceLen chooses how many positions a thread walks: the configured length, shorter when the
// launch would otherwise have too few pieces to fill the device (each piece costs a search for its
// start state, so not much shorter).
func (w *worker) pieceLen(nSlots int) int {
	pl := w.m.cfg.PieceLen
	want := 512 * max(w.m.dev.info.SMs, 1)
	if nSlots/pl < want {
		pl = max(min(256, pl), nSlots/want)
	}
	return max(pl, 1)
}

// pack finds the codes the launch needs (w.spanOrder) and cuts the segments into pieces (w.pieces).
//
// A piece's search reads its sequence from the symbol before its first position to the end of
// its start state's match, which may run to the sequence's end. A batch of a long record (a
// chromosome's, cut into batches of 2 Mi positions) would copy the rest of the record, hundreds of
// MB, for every launch; its codes go only up to the matcher's lookahead past the batch's last
// position (pieces with cut set), and a launch whose search reaches that end is done again with
// more (run, lookMore). Within a card of a chain every sequence goes whole.
func (w *worker) pack(batch []*request) (nPieces, nSlots int, err error) {
	nSegs := 0
	clear(w.spans)
	w.spanOrder = w.spanOrder[:0]
	ahead := w.m.lookahead.Load()
	if part := w.m.cfg.part; !part.first() || !part.last() {
		ahead = 0
	}
	w.cut = false
	for _, r := range batch {
		if len(r.b.Codes) == 0 {
			continue
		}
		// The request's span first, then one look-up (a batch of reads has thousands of
		// segments; pieces of one long record share their codes across requests).
		lo, hi := math.MaxInt, -1
		for _, sg := range r.b.Segs {
			if sg.To <= sg.From {
				continue
			}
			nSlots += sg.To - sg.From
			nSegs++
			end := sg.Off + sg.Len
			if ahead > 0 && int64(sg.Len-sg.To) > ahead {
				end = sg.Off + sg.To + int(ahead)
			}
			lo, hi = min(lo, sg.Off+max(sg.From-1, 0)), max(hi, end)
		}
		if hi < 0 {
			continue
		}
		key := &r.b.Codes[0]
		if sp := w.spans[key]; sp == nil {
			sp = &codeSpan{lo: lo, hi: hi, key: key}
			w.spans[key] = sp
			w.spanOrder = append(w.spanOrder, sp)
		} else {
			sp.lo, sp.hi = min(sp.lo, lo), max(sp.hi, hi)
		}
	}
	at := 0
	for _, sp := range w.spanOrder {
		sp.dev = at
		at += (sp.hi - sp.lo + 15) &^ 15
	}
	for _, r := range batch {
		if len(r.b.Codes) == 0 {
			continue
		}
		if sp := w.spans[&r.b.Codes[0]]; sp != nil && sp.src == nil {
			sp.src = r.b.Codes[sp.lo:sp.hi]
		}
	}
	pl := w.pieceLen(nSlots)
	// A piece or more a segment: the buffer, kept from launch to launch, grows where segments are
	// longer than a piece. A pass over the segments to count their pieces first was 13-15% of
	// pack (BenchmarkPack, 2-core VM: 30.6-31.3 ns a read against 26.3-26.7 without it).
	ps := slices.Grow(w.pieces[:0], nSegs)
	w.segSlot = w.segSlot[:0]
	slot := 0
	for _, r := range batch {
		var sp *codeSpan
		for _, sg := range r.b.Segs {
			w.segSlot = append(w.segSlot, uint32(slot))
			if sg.To <= sg.From {
				continue
			}
			if sp == nil {
				sp = w.spans[&r.b.Codes[0]]
			}
			q := int64(sp.dev - sp.lo + sg.Off)
			n, cut := sg.Len, uint32(0)
			if avail := sp.hi - sg.Off; avail < n {
				n, cut = avail, 1
				w.cut = true
			}
			for f := sg.From; f < sg.To; {
				to := min(f+pl, sg.To)
				if k := len(ps); k > 0 && ps[k-1].q == q && ps[k-1].to == uint32(f) {
					ps[k-1].link = uint32(to - f)
				}
				ps = append(ps, piece{q: q, len: uint32(n), from: uint32(f), to: uint32(to), slot: uint32(slot + f - sg.From), cut: cut})
				f = to
			}
			slot += sg.To - sg.From
		}
	}
	w.pieces = ps
	return len(ps), nSlots, nil
}

// unpack hands each request of the launch its records (in slot order, found by galloping from
// the last request's end) and the slot of its first segment; the requester turns them into
// matches (request.finish) once it has its answer, so that the device worker goes on to its next
// launch. The records then belong to the requests, and the last of them gives the buffer back:
// to the worker, which has two and fills one while the requests of its last launch hold the
// other (a buffer stays with its worker, grown to its launches, its pages warm), or on a chain's
// last card to the first card, which makes the buffers.
func (w *worker) unpack(batch []*request, recs []outRec) {
	h := &recHold{recs: recs}
	k, seg := 0, 0
	for _, r := range batch {
		n := len(r.b.Segs)
		if n == 0 {
			continue
		}
		last := r.b.Segs[n-1]
		end := w.segSlot[seg+n-1] + uint32(max(last.To-last.From, 0))
		c := recsBefore(recs[k:], end)
		r.recs, r.slot0, r.hold = recs[k:k+c], w.segSlot[seg], h
		h.left.Add(1)
		k += c
		seg += n
	}
	if cap(recs) == 0 || h.left.Load() == 0 {
		return
	}
	if part := w.m.cfg.part; part != nil && part.links != nil {
		h.links = part.links
		w.recs = part.links.getRecs()
		return
	}
	if w.recsBack == nil {
		w.recsBack = make(chan []outRec, 2)
	}
	h.back = w.recsBack
	w.recsOut++
	w.recs = nil // a second buffer, made as the next launch needs it
	if w.recsOut == 2 {
		// The launch before this one's, given back once its requests have finished (a closing
		// matcher's worker does not wait for them).
		select {
		case w.recs = <-w.recsBack:
			w.recsOut--
		case <-w.m.quit:
		}
	}
}

// recHold is a launch's records, out with its requests until the last of them has finished. It
// gives the buffer back to one of back and links, set by unpack where there is a buffer to give.
type recHold struct {
	recs  []outRec
	back  chan []outRec // the worker's
	links *chainLinks   // on a chain's last card: the first card's
	left  atomic.Int32
}

func (h *recHold) release() {
	if h.left.Add(-1) != 0 {
		return
	}
	if h.back != nil {
		select {
		case h.back <- h.recs[:0]:
		default: // a closing matcher's worker has stopped counting them
		}
	} else {
		h.links.putRecs(h.recs) // nil links: nothing to give back
	}
}

// finish appends each of r's segments' records, as matches, to its result, and releases them.
// Each segment's are found by galloping from the last segment's end, and the result's matches
// grow once; they are turned into matches on several goroutines where there are many (against
// repeats, millions a launch: on one goroutine that had taken as long as the card's work).
func (r *request) finish() {
	if r.textHold != nil {
		r.finishText()
		return
	}
	if r.hold == nil {
		return
	}
	defer func() { r.recs, r.hold = nil, nil }()
	defer r.hold.release()
	recs, res := r.recs, r.res
	at := len(res.Matches)
	res.Matches = slices.Grow(res.Matches, len(recs))
	res.Ends = slices.Grow(res.Ends, len(r.b.Segs))
	var parts []recPart
	k, base := 0, r.slot0
	for _, sg := range r.b.Segs {
		if sg.To > sg.From {
			c := recsBefore(recs[k:], base+uint32(sg.To-sg.From))
			res.Matches = res.Matches[:at+c]
			if len(recs) < 2*unpackPart {
				recPart{dst: res.Matches[at : at+c], src: recs[k : k+c], base: base, from: sg.From}.convert()
			} else {
				for i := 0; i < c; i += unpackPart {
					j := min(i+unpackPart, c)
					parts = append(parts, recPart{dst: res.Matches[at+i : at+j], src: recs[k+i : k+j], base: base, from: sg.From})
				}
			}
			k += c
			at += c
			base += uint32(sg.To - sg.From)
		}
		res.Ends = append(res.Ends, at)
	}
	if len(parts) == 0 {
		return
	}
	// Goroutines of about equal numbers of records, each a run of parts.
	g := min(runtime.GOMAXPROCS(0), len(recs)/unpackPart)
	var wg sync.WaitGroup
	from, done, started := 0, 0, 0
	for i := range parts {
		done += len(parts[i].src)
		if i == len(parts)-1 || done >= len(recs)*(started+1)/g {
			run := parts[from : i+1]
			wg.Go(func() {
				for _, p := range run {
					p.convert()
				}
			})
			from, started = i+1, started+1
		}
	}
	wg.Wait()
}

// unpackPart is the most records one part of unpack's work holds, so that a long segment's are
// shared out too.
const unpackPart = 1 << 15

// recPart is some of one segment's records and where their matches go.
type recPart struct {
	dst  []kernels.Match
	src  []outRec
	base uint32 // the segment's first slot
	from int    // its first query position
}

func (p recPart) convert() {
	dst := p.dst[:len(p.src)]
	for i, rc := range p.src {
		dst[i] = kernels.Match{Ref: rc.textPos(), Query: int32(p.from + int(rc.slot-p.base)), Len: int32(rc.len)}
	}
}

// recsBefore returns how many of recs, in slot order, have a slot below end: galloping, since a
// segment of a read has a few records and one of a long record millions.
func recsBefore(recs []outRec, end uint32) int {
	if len(recs) == 0 || recs[0].slot >= end {
		return 0
	}
	lo, hi := 1, 2 // recs[lo-1].slot < end
	for hi < len(recs) && recs[hi-1].slot < end {
		lo, hi = hi, 2*hi
	}
	hi = min(hi, len(recs))
	return lo + sort.Search(hi-lo, func(i int) bool { return recs[lo+i].slot >= end })
}

// scan writes the exclusive prefix sums of the n words at in to out and returns their total
// (waiting for the stream).
func (w *worker) scan(in, out devPtr, n int) (uint32, error) {
	if n == 0 {
		return 0, nil
	}
	m := w.m
	tiles := ceilDiv(n, scanTile)
	if err := w.grow(&w.dSums, 4*(tiles+1)); err != nil {
		return 0, err
	}
	if err := w.s.launch("scan_reduce", m.fn["scan_reduce"], tiles, 256, in, uint32(n), w.dSums.p); err != nil {
		return 0, err
	}
	if err := w.s.launch("scan_single", m.fn["scan_single"], 1, 1024, w.dSums.p, uint32(tiles), uint32(0), w.dTot.p); err != nil {
		return 0, err
	}
	if err := w.s.launch("scan_down", m.fn["scan_down"], tiles, 256, in, out, uint32(n), w.dSums.p); err != nil {
		return 0, err
	}
	if err := w.s.toHost(w.hTot.p, w.dTot.p, 4); err != nil {
		return 0, err
	}
	if err := w.s.sync(); err != nil {
		return 0, err
	}
	return *(*uint32)(w.hTot.p), nil
}

// unique finds the -mumreference candidates (also -mum's) over every page. On a card of a chain,
// the best match of each slot over the pages of the cards before comes in l.best, and on every card
// but the last the best over this card's pages too goes on in it, instead of the records.
func (w *worker) unique(l *launch, nPieces, nSlots int, firstCard, lastCard bool) ([]outRec, error) {
	m := w.m
	order := m.fs.order(m.npages)
	if len(order) > 1 || !firstCard || !lastCard {
		if err := w.growAhead(&w.dBest, 16*nSlots); err != nil {
			return nil, err
		}
	}
	if !firstCard {
		if err := w.s.toDevice(w.dBest.p, l.best.p, 16*nSlots); err != nil {
			return nil, err
		}
	}
	for i, pi := range order {
		f, err := m.fs.acquire(m, pi)
		if err != nil {
			return nil, err
		}
		var runs pageLists
		runs, err = m.pageRuns(w, pi, &f.desc)
		if err == nil {
			err = w.startStates(&f.desc, runs, nPieces)
		}
		if err == nil {
			err = w.s.launch("mu_walk", m.fn["mu_walk"], ceilDiv(nPieces, 128), 128, &f.desc, w.dCodes.p, w.dPieces.p, uint32(nPieces),
				w.dStarts.p, w.dEnds.p, w.dBlockEnd.p, uint32(m.opts.MinLen), w.dBest.p, b2u(firstCard && i == 0),
				b2u(lastCard && i == len(order)-1), w.dRegion.p, w.dCounts.p, w.dTot.p+cutHitAt)
		}
		if err == nil && !m.fs.resident {
			err = w.s.sync()
		}
		m.fs.release(f)
		if err != nil {
			return nil, err
		}
	}
	if !lastCard {
		if l.best == nil {
			var err error
			if l.best, err = m.cfg.part.links.getBest(m, 16*nSlots); err != nil {
				return nil, err
			}
		}
		if err := w.s.toHost(l.best.p, w.dBest.p, 16*nSlots); err != nil {
			return nil, err
		}
		if err := w.mark("walk and best copied down"); err != nil {
			return nil, err
		}
		if err := w.s.sync(); err != nil {
			return nil, err
		}
		return nil, w.collect()
	}
	if err := w.mark("walk"); err != nil {
		return nil, err
	}
	nOut, err := w.scan(w.dCounts.p, w.dOffs.p, nPieces)
	if err != nil || nOut == 0 {
		return nil, err
	}
	if err := w.grow(&w.dOut, 16*int(nOut)); err != nil {
		return nil, err
	}
	w.recs = growRecs(w.recs[:0], int(nOut))
	if err := w.s.launch("compact_pieces", m.fn["compact_pieces"], ceilDiv(32*nPieces, 128), 128, w.dPieces.p, uint32(nPieces),
		w.dCounts.p, w.dOffs.p, w.dRegion.p, devPtr(0), w.dOut.p, devPtr(0)); err != nil {
		return nil, err
	}
	if err := w.s.toHost(unsafe.Pointer(&w.recs[0]), w.dOut.p, 16*int(nOut)); err != nil {
		return nil, err
	}
	if err := w.mark("compact and copy down"); err != nil {
		return nil, err
	}
	return w.recs, nil
}

// growRecs extends recs by n records (for a copy from the device into them), doubling its capacity
// where it must grow: a launch against a repetitive genome gets millions of records in hundreds
// of parts, and append's growth by a quarter for large slices copied them over and over (the
// copies were 2.1 of 33 CPU-s of -maxmatch -l 30 against the 3.1 Gbp genscale genome, lent H200).
func growRecs(recs []outRec, n int) []outRec {
	if need := len(recs) + n; need > cap(recs) {
		grown := make([]outRec, len(recs), max(need, 2*cap(recs)))
		copy(grown, recs)
		recs = grown
	}
	return recs[:len(recs)+n]
}

// pieceLinkBlock is piece_link's block size (PL_BLOCK in match.cuh).
const pieceLinkBlock = 256

// startStates finds the pieces' start states against one page (piece_start and piece_link in
// match.cuh): a stretch of query that matches on for millions of symbols is compared once, not
// once for every piece on it.
func (w *worker) startStates(desc *pageDev, runs pageLists, nPieces int) error {
	m := w.m
	if err := w.s.memset32(w.dTot.p+longAt, 0, 1); err != nil {
		return err
	}
	if err := w.s.launch("piece_start", m.fn["piece_start"], ceilDiv(nPieces, 128), 128, desc, w.dCodes.p, w.dPieces.p, uint32(nPieces),
		w.dStarts.p, w.dLong.p, w.dTot.p+longAt, w.dTot.p+cutHitAt, runs.runs, runs.runOff, uint32(runJumpFrom(m.opts.MinLen)),
		w.dTot.p+jumpsAt); err != nil {
		return err
	}
	// Two blocks an SM, on each listed piece in turn: a sequence against itself lists one piece
	// or two a launch, most launches none.
	if err := w.s.launch("piece_long", m.fn["piece_long"], 2*max(m.dev.info.SMs, 1), 256, desc, w.dCodes.p, w.dPieces.p,
		w.dLong.p, w.dTot.p+longAt, w.dTot.p+longTotalAt); err != nil {
		return err
	}
	if err := w.s.launch("piece_link", m.fn["piece_link"], ceilDiv(nPieces, pieceLinkBlock), pieceLinkBlock, desc, w.dCodes.p, w.dPieces.p,
		uint32(nPieces), w.dStarts.p, w.dLong.p, w.dEnds.p, w.dBlockEnd.p, w.dTot.p+linkedAt, w.dTot.p+cutHitAt); err != nil {
		return err
	}
	if w.cut {
		// A start state that reached the end of the codes on the device (a sequence against
		// itself, whose batches match on to the record's end): done again now, before the
		// walks and the records, rather than after them.
		hit := unsafe.Add(w.hTot.p, cutHitAt)
		if err := w.s.toHost(hit, w.dTot.p+cutHitAt, 4); err != nil {
			return err
		}
		if err := w.s.sync(); err != nil {
			return err
		}
		if *(*uint32)(hit) != 0 {
			return errMoreCodes
		}
	}
	return w.mark("start states")
}

// maxMatchPage appends to w.recs the -maxmatch records of page i (see match.cuh).
func (w *worker) maxMatchPage(i int, desc *pageDev, nPieces, nSlots int) error {
	m := w.m
	s := w.s
	minLen := uint32(m.opts.MinLen)
	runs, err := m.pageRuns(w, i, desc)
	if err != nil {
		return err
	}
	if err := w.startStates(desc, runs, nPieces); err != nil {
		return err
	}
	if err := s.launch("mm_walk", m.fn["mm_walk"], ceilDiv(nPieces, 128), 128, desc, w.dCodes.p, w.dPieces.p, uint32(nPieces),
		w.dStarts.p, w.dEnds.p, w.dBlockEnd.p, minLen, w.dRegion.p, w.dRegionPiece.p, w.dCounts.p, w.dQRun.p); err != nil {
		return err
	}
	if err := w.mark("walk"); err != nil {
		return err
	}
	nItems32, err := w.scan(w.dCounts.p, w.dOffs.p, nPieces)
	if err != nil || nItems32 == 0 {
		return err
	}
	nItems := int(nItems32)
	m.stats.items.Add(int64(nItems))
	for _, g := range []struct {
		b *devBuf
		n int
	}{{&w.dItems, 16 * nItems}, {&w.dItemPiece, 4 * nItems}, {&w.dRangeCnt, 4 * nItems}, {&w.dItemRows, 4 * nItems}, {&w.dRangeOff, 4 * nItems}} {
		if err := w.growAhead(g.b, g.n); err != nil {
			return err
		}
	}
	if err := s.launch("compact_pieces", m.fn["compact_pieces"], ceilDiv(32*nPieces, 128), 128, w.dPieces.p, uint32(nPieces),
		w.dCounts.p, w.dOffs.p, w.dRegion.p, w.dRegionPiece.p, w.dItems.p, w.dItemPiece.p); err != nil {
		return err
	}
	totalRows := w.dTot.p + 8
	if err := s.memset32(totalRows, 0, 2); err != nil {
		return err
	}
	// Both passes of mm_chain take the same runs, and so make the same ranges.
	cutHit, runItems := w.dTot.p+cutHitAt, w.dTot.p+runItemsAt
	if err := s.launch("mm_chain", m.fn["mm_chain"], ceilDiv(nItems, 128), 128, desc, w.dCodes.p, w.dPieces.p, w.dItems.p, w.dItemPiece.p,
		uint32(0), uint32(nItems), w.dRangeCnt.p, w.dItemRows.p, totalRows, devPtr(0), devPtr(0), devPtr(0),
		runs.runs, runs.runOff, w.dQRun.p, uint32(runFrom), minLen, cutHit, runItems); err != nil {
		return err
	}
	hRows := unsafe.Add(w.hTot.p, 8)
	if err := s.toHost(hRows, totalRows, 8); err != nil {
		return err
	}
	if err := s.sync(); err != nil {
		return err
	}
	if err := w.mark("items"); err != nil {
		return err
	}
	// Groups of items whose candidate rows number less than 2^31, so that 32-bit scans hold them.
	const maxGroupRows = 1<<31 - 1
	groups := [][2]int{{0, nItems}}
	if *(*uint64)(hRows) > maxGroupRows {
		w.itemRows = slices.Grow(w.itemRows[:0], nItems)[:nItems]
		if err := m.dev.toHost(unsafe.Pointer(&w.itemRows[0]), w.dItemRows.p, 4*nItems); err != nil {
			return err
		}
		groups = groups[:0]
		start, sum := 0, 0
		for i, r := range w.itemRows {
			if sum+int(r) > maxGroupRows {
				groups = append(groups, [2]int{start, i})
				start, sum = i, 0
			}
			sum += int(r)
		}
		groups = append(groups, [2]int{start, nItems})
	}
	chunk := m.cfg.ChunkRows
	for _, g := range groups {
		i0, gn := g[0], g[1]-g[0]
		nRanges32, err := w.scan(w.dRangeCnt.p+devPtr(4*i0), w.dRangeOff.p, gn)
		if err != nil {
			return err
		}
		if nRanges32 == 0 {
			continue
		}
		nRanges := int(nRanges32)
		m.stats.ranges.Add(int64(nRanges))
		for _, g := range []struct {
			b *devBuf
			n int
		}{{&w.dRanges, 16 * nRanges}, {&w.dRowCnt, 4 * nRanges}, {&w.dRowOff, 4 * nRanges}} {
			if err := w.growAhead(g.b, g.n); err != nil {
				return err
			}
		}
		if err := s.launch("mm_chain", m.fn["mm_chain"], ceilDiv(gn, 128), 128, desc, w.dCodes.p, w.dPieces.p, w.dItems.p, w.dItemPiece.p,
			uint32(i0), uint32(gn), devPtr(0), devPtr(0), devPtr(0), w.dRangeOff.p, w.dRanges.p, w.dRowCnt.p,
			runs.runs, runs.runOff, w.dQRun.p, uint32(runFrom), minLen, cutHit, runItems); err != nil {
			return err
		}
		nRows32, err := w.scan(w.dRowCnt.p, w.dRowOff.p, nRanges)
		if err != nil {
			return err
		}
		nRows := int(nRows32)
		m.stats.rows.Add(int64(nRows))
		if err := w.mark("chain"); err != nil {
			return err
		}
		for r0 := 0; r0 < nRows; r0 += chunk {
			cnt := min(chunk, nRows-r0)
			for _, g := range []struct {
				b *devBuf
				n int
			}{{&w.dCand, 16 * cnt}, {&w.dValid, 4 * cnt}, {&w.dValidOff, 4 * cnt}, {&w.dOut, 16 * cnt}} {
				if err := w.growPass(g.b, g.n, g.n/cnt*chunk); err != nil {
					return err
				}
			}
			if err := s.launch("mm_rows", m.fn["mm_rows"], ceilDiv(cnt, 256), 256, desc, w.dCodes.p, w.dPieces.p, w.dItems.p, w.dItemPiece.p,
				w.dRanges.p, w.dRowOff.p, uint32(nRanges), uint32(r0), uint32(cnt), w.dCand.p, w.dValid.p, cutHit, runs.runs, runs.runsPos, runs.runOff,
				w.dQRun.p); err != nil {
				return err
			}
			nValid32, err := w.scan(w.dValid.p, w.dValidOff.p, cnt)
			if err != nil {
				return err
			}
			if nValid32 == 0 {
				continue
			}
			nValid := int(nValid32)
			if w.keep != nil {
				// Kept on the card for the launch's lines, where there is room.
				ok, err := w.keepRoom(nValid)
				if err != nil {
					return err
				}
				if ok {
					if err := s.launch("compact_valid", m.fn["compact_valid"], ceilDiv(cnt, 256), 256, w.dValid.p, w.dValidOff.p, w.dCand.p,
						uint32(cnt), w.dAll.p+devPtr(16*w.nAll)); err != nil {
						return err
					}
					w.nAll += nValid
					if err := w.mark("rows kept"); err != nil {
						return err
					}
					continue
				}
				if err := w.flushKept(); err != nil {
					return err
				}
			}
			if err := s.launch("compact_valid", m.fn["compact_valid"], ceilDiv(cnt, 256), 256, w.dValid.p, w.dValidOff.p, w.dCand.p,
				uint32(cnt), w.dOut.p); err != nil {
				return err
			}
			// Many records are sorted on the card; the host sorts those of a slot that two
			// chunks share, and the chunks of few.
			out := w.dOut.p
			if m.cfg.CardSort > 0 && nValid >= m.cfg.CardSort {
				if out, err = w.sortOnCard(w.dOut.p, nValid, nSlots, w.dCand.p, w.dOut.p); err != nil {
					return err
				}
			}
			// Into Go memory (the driver stages a copy into pageable memory).
			at := len(w.recs)
			w.recs = growRecs(w.recs, nValid)
			if err := s.toHost(unsafe.Pointer(&w.recs[at]), out, 16*nValid); err != nil {
				return err
			}
			if err := s.sync(); err != nil {
				return err
			}
			if err := w.mark("rows and copy down"); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortOnCard sorts the n records at src (a chunk's in w.dOut, or a launch's kept in w.dAll) into
// (slot, text position) order on the card, and returns where they are then: keys of slot << tb |
// text position (the slots of a launch are below nSlots) are radix-sorted with the records'
// lengths beside them, in the room of a and b (16n bytes each; src may be b), whose records are
// then made again in the other of the two. On the host, sorting records took 17 of 77 CPU-s of
// -maxmatch -l 30 against the 3.1 Gbp genscale genome (456 M records, lent H200): runs of
// millions of records in a satellite's slots.
// Where the key would not fit 64 bits, the records are left to the host.
func (w *worker) sortOnCard(src devPtr, n, nSlots int, a, b devPtr) (devPtr, error) {
	m, s := w.m, w.s
	tb := bits.Len(uint(len(m.ref.Text)))
	hi := bits.Len(uint(max(nSlots-1, 0))) + tb
	if hi > 64 || tb >= 64 {
		return src, nil
	}
	passes := ceilDiv(hi, 8)
	tile := 256 * cardSortItems
	tiles := ceilDiv(n, tile)
	if err := w.grow(&w.dSort, 2*4*256*8); err != nil {
		return 0, err
	}
	if err := w.grow(&w.dSortStatus, 8*256*tiles+64); err != nil {
		return 0, err
	}
	hist, starts := w.dSort.p, w.dSort.p+4*256*8
	keys := [2]devPtr{a, b}
	lens := [2]devPtr{a + devPtr(8*n), b + devPtr(8*n)}
	if err := s.launch("mm_sort_keys", m.fn["mm_sort_keys"], ceilDiv(n, 256), 256, src, uint32(n), uint32(tb), keys[0], lens[0]); err != nil {
		return 0, err
	}
	if err := s.memset32(hist, 0, 256*passes); err != nil {
		return 0, err
	}
	if err := s.launch("radix_hist_all", m.fn["radix_hist_all"], min(ceilDiv(n, 256), 4*m.dev.info.SMs), 256, keys[0], uint32(n), uint32(0),
		uint32(passes), hist); err != nil {
		return 0, err
	}
	if w.sortHist == nil {
		w.sortHist, w.sortStarts = make([]uint32, 256*8), make([]uint32, 256*8)
	}
	if err := s.toHost(unsafe.Pointer(&w.sortHist[0]), hist, 4*256*passes); err != nil {
		return 0, err
	}
	if err := s.sync(); err != nil {
		return 0, err
	}
	run := digitStarts(w.sortHist, w.sortStarts, passes, n)
	cur := 0
	if len(run) > 0 {
		if err := s.toDevice(starts, unsafe.Pointer(&w.sortStarts[0]), 4*256*passes); err != nil {
			return 0, err
		}
		status := w.dSortStatus.p
		counters := status + devPtr(8*256*tiles)
		if err := s.memset32(status, 0, 2*256*tiles+16); err != nil {
			return 0, err
		}
		name := fmt.Sprintf("radix_pass_%d", cardSortItems)
		for e, p := range run {
			epoch := e + 1
			if err := s.launch(name, m.fn[name], tiles, 256, keys[cur], lens[cur], uint32(n), uint32(8*p), starts+devPtr(4*256*p),
				status, counters+devPtr(4*epoch), uint32(epoch), keys[1-cur], lens[1-cur]); err != nil {
				return 0, err
			}
			cur = 1 - cur
		}
	}
	// The records into the buffer that does not hold the sorted keys.
	out := [2]devPtr{b, a}[cur]
	if err := s.launch("mm_sort_recs", m.fn["mm_sort_recs"], ceilDiv(n, 256), 256, keys[cur], lens[cur], uint32(n), uint32(tb), out); err != nil {
		return 0, err
	}
	m.stats.cardSorted.Add(int64(n))
	return out, w.mark("card sort")
}

// cardSortItems is the keys a thread of radix_pass takes in the card's sort of records.
const cardSortItems = 8
