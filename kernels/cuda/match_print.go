package cuda

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
)

// -maxmatch lines written on the card. Where a launch's batches ask for their text
// (kernels.Batch.Lines), its records stay on the card from page to page and pass to pass
// (worker.dAll), are sorted there once into (slot, text position) order, and the card writes each
// segment's head (Batch.Heads) and match lines (mm_line_len, a scan, mm_print, mm_seg_text_ends).
// The text comes down into a pinned buffer of the worker's pool in place of the records, and each
// request's result borrows its part (request.finishText) until the caller has written it
// (kernels.Result.ReleaseText), when the last of the launch's requests gives the buffer back. The
// host's formatting of the lines was 25 of 55 CPU-s in -maxmatch -l 30 -b -c of 1 M reads against
// the 3.1 Gbp genscale genome (lent H200, 456 M lines), and copying the text instead of lending it
// cost as much again in memory bandwidth: kernels/cuda/NOTES.md.
//
// A launch of fewer than PrintMin records, one whose records outgrow the room kept for them, one
// whose text would pass printTextMax or whose sort or text finds no room on the card, and one
// that finds its worker's text buffers all lent go the host's way: its records come down, are
// sorted on the host and handed out as matches.

// printMin is the fewest records of a launch whose lines the card writes: a launch of reads
// against a bacterial genome has tens of thousands, whose formatting on the host costs less
// than the card's sort (a round trip for its digit counts) and the print's.
const printMin = 1 << 18

// printTextMax bounds a launch's text written on the card (and so each of a worker's pinned text
// buffers); keptMax bounds the records a launch keeps on the card for it.
const (
	printTextMax = 1 << 29
	keptMax      = printTextMax / 32
)

// segLine is the kernels' SegLine (match.cuh): a segment's slots and how its query positions print.
type segLine struct {
	slot0, n   uint32
	qbase      uint32
	step       int32
	hoff, hlen uint32
}

// printTable is what the card needs of a Lines to write lines: the reference records' starts and
// each record's name column ("  NAME<pad>  ", width bytes; none without FourColumn).
type printTable struct {
	lines  *kernels.Lines
	starts devBuf // uint64 a record
	prefix devBuf
	width  int
	nRec   int
	err    error
}

// printTableFor returns the matcher's table for l, made on the first launch that asks (on that
// worker's stream, which it waits for).
func (m *gpuMatcher) printTableFor(w *worker, l *kernels.Lines) (*printTable, error) {
	m.printMu.Lock()
	defer m.printMu.Unlock()
	if t := m.printTab; t != nil && t.lines == l {
		return t, t.err
	}
	if m.printTab != nil {
		return nil, errors.New("GPU matcher: a second form of lines") // not made: the host formats
	}
	t := &printTable{lines: l, nRec: len(m.ref.Starts)}
	m.printTab = t
	if t.nRec == 0 || len(l.Names) != t.nRec {
		t.err = errors.New("GPU matcher: lines' names do not match the reference's records")
		return nil, t.err
	}
	starts := make([]uint64, t.nRec)
	for i, s := range m.ref.Starts {
		starts[i] = uint64(s)
	}
	var prefix []byte
	if l.FourColumn {
		nw := l.NameWidth()
		t.width = 2 + nw + 2
		prefix = make([]byte, 0, t.width*t.nRec)
		for _, name := range l.Names {
			prefix = append(prefix, ' ', ' ')
			prefix = append(prefix, name...)
			for range nw - len(name) + 2 {
				prefix = append(prefix, ' ')
			}
		}
	}
	if t.err = t.starts.ensureExact(m.dev, uint64(8*t.nRec)); t.err != nil {
		return nil, t.err
	}
	if t.err = t.prefix.ensureExact(m.dev, uint64(len(prefix))); t.err != nil {
		return nil, t.err
	}
	if t.err = w.s.toDevice(t.starts.p, unsafe.Pointer(&starts[0]), 8*t.nRec); t.err != nil {
		return nil, t.err
	}
	if len(prefix) > 0 {
		if t.err = w.s.toDevice(t.prefix.p, unsafe.Pointer(&prefix[0]), len(prefix)); t.err != nil {
			return nil, t.err
		}
	}
	t.err = w.s.sync()
	return t, t.err
}

// freePrint releases the print table (device goroutine).
func (m *gpuMatcher) freePrint() {
	if t := m.printTab; t != nil {
		t.starts.free(m.dev)
		t.prefix.free(m.dev)
		m.printTab = nil
	}
}

// printable says whether the launch of batch may keep its records on the card for its lines: its
// batches all ask for the same lines, the card holds the whole reference (no chain) and
// PrintMin allows it.
func (w *worker) printable(batch []*request) *kernels.Lines {
	m := w.m
	if m.opts.Mode != kernels.MaxMatch || m.cfg.PrintMin < 0 || m.cfg.part != nil {
		return nil
	}
	var l *kernels.Lines
	for _, r := range batch {
		if r.b.Lines == nil || (l != nil && r.b.Lines != l) || (r.b.Reverse != nil && len(r.b.Reverse) != len(r.b.Segs)) ||
			(r.b.Heads != nil && len(r.b.HeadEnds) != len(r.b.Segs)) {
			return nil
		}
		l = r.b.Lines
	}
	return l
}

// keptCount is how many records the launch has so far, on the card or on the host.
func (w *worker) keptCount() int { return w.nAll + len(w.recs) }

// keepRoom makes room in dAll for n more records, keeping those there; false where that would
// pass keptMax or the card has no room: the launch's records then go the host's way (flushKept).
func (w *worker) keepRoom(n int) (bool, error) {
	need := w.nAll + n
	if lim := w.m.cfg.keepMax; need > keptMax || lim > 0 && need > lim {
		return false, nil
	}
	if uint64(16*need) <= w.dAll.n {
		return true, nil
	}
	if err := w.s.sync(); err != nil {
		return false, err
	}
	var nb devBuf
	err := nb.ensureRoom(w.m.dev, uint64(16*max(need, w.m.cfg.ChunkRows)), uint64(16*need/2))
	if err != nil {
		if isOutOfMemory(err) {
			return false, nil
		}
		return false, err
	}
	if err := w.s.onDevice(nb.p, w.dAll.p, 16*w.nAll); err != nil {
		nb.free(w.m.dev)
		return false, err
	}
	if err := w.s.sync(); err != nil {
		nb.free(w.m.dev)
		return false, err
	}
	if w.dAll.n != 0 {
		w.m.stats.regrown.Add(1)
	}
	w.dAll.free(w.m.dev)
	w.dAll = nb
	return true, nil
}

// flushKept copies the records kept on the card down to w.recs and ends the keeping: the rest of
// the launch goes the host's way.
func (w *worker) flushKept() error { return w.unprinted(w.dAll.p, false) }

// printKept writes the lines of the launch's kept records on the card and brings them down into
// a text buffer, or, where the launch is too small or its lines too long, flushes them (false).
func (w *worker) printKept(batch []*request, nSlots int) (bool, error) {
	m, s := w.m, w.s
	if w.textNow != nil { // a launch that failed after it took a text buffer
		w.putText(w.textNow)
		w.textNow = nil
	}
	n := w.nAll
	if n < m.cfg.PrintMin || n == 0 {
		return false, w.flushKept()
	}
	tab, err := m.printTableFor(w, w.keep)
	if err != nil {
		return false, w.flushKept()
	}
	// The segments, in the order pack gave them slots, and their heads.
	w.segLines, w.heads = w.segLines[:0], w.heads[:0]
	k := 0
	for _, r := range batch {
		for i, sg := range r.b.Segs {
			sl := segLine{slot0: w.segSlot[k], qbase: uint32(sg.From + 1), step: 1, hoff: uint32(len(w.heads))}
			if sg.To > sg.From {
				sl.n = uint32(sg.To - sg.From)
			}
			if r.b.Reverse != nil && r.b.Reverse[i] && w.keep.ReversePositions {
				sl.qbase, sl.step = uint32(sg.Len-sg.From), -1
			}
			if r.b.Heads != nil {
				w.heads = append(w.heads, r.b.Head(i)...)
			}
			sl.hlen = uint32(len(w.heads)) - sl.hoff
			w.segLines = append(w.segLines, sl)
			k++
		}
	}
	nSegs := len(w.segLines)
	// The longest line: the name column, a text position and two 32-bit values of "%8d".
	if uint64(n)*uint64(tab.width+20+2+10+2+10+1)+uint64(len(w.heads)) >= 1<<32 {
		return false, w.flushKept()
	}
	tb := bits.Len(uint(len(m.ref.Text)))
	if bits.Len(uint(max(nSlots-1, 0)))+tb > 64 || tb >= 64 {
		return false, w.flushKept()
	}
	t := w.takeText()
	if t == nil { // every text buffer is out with batches not yet written
		return false, w.flushKept()
	}
	w.textNow = t // given back to the pool by a failed launch's next one
	// Where the card has no room for the sort or the text, the host's way, as for a launch too
	// large for it.
	for _, b := range []*devBuf{&w.dCand, &w.dOut} {
		if err := w.grow(b, 16*n); err != nil {
			if isOutOfMemory(err) {
				return false, w.unprinted(w.dAll.p, false)
			}
			return false, err
		}
	}
	recs, err := w.sortOnCard(w.dAll.p, n, nSlots, w.dCand.p, w.dOut.p)
	if err != nil {
		return false, err
	}
	for _, g := range []struct {
		b *devBuf
		n int
	}{{&w.dSegLines, segLineBytes * nSegs}, {&w.dSegEnds, 4 * nSegs}, {&w.dValid, 4 * n}, {&w.dValidOff, 4 * n}, {&w.dHeads, len(w.heads)}} {
		if err := w.grow(g.b, g.n); err != nil {
			if isOutOfMemory(err) {
				return false, w.unprinted(recs, true)
			}
			return false, err
		}
	}
	if err := s.toDevice(w.dSegLines.p, unsafe.Pointer(&w.segLines[0]), segLineBytes*nSegs); err != nil {
		return false, err
	}
	if len(w.heads) > 0 {
		if err := s.toDevice(w.dHeads.p, unsafe.Pointer(&w.heads[0]), len(w.heads)); err != nil {
			return false, err
		}
	}
	if err := s.launch("mm_line_len", m.fn["mm_line_len"], ceilDiv(n, 256), 256, recs, uint32(n), w.dSegLines.p, uint32(nSegs),
		tab.starts.p, uint32(tab.nRec), uint32(tab.width), w.dValid.p); err != nil {
		return false, err
	}
	lines32, err := w.scan(w.dValid.p, w.dValidOff.p, n)
	if err != nil {
		return false, err
	}
	total := int(lines32) + len(w.heads)
	if lim := m.cfg.textMax; total > printTextMax || lim > 0 && total > lim {
		return false, w.unprinted(recs, true)
	}
	if err := w.grow(&w.dText, total); err != nil {
		if isOutOfMemory(err) {
			return false, w.unprinted(recs, true)
		}
		return false, err
	}
	if err := s.launch("mm_print", m.fn["mm_print"], ceilDiv(n, 256), 256, recs, uint32(n), w.dSegLines.p, uint32(nSegs),
		tab.starts.p, uint32(tab.nRec), tab.prefix.p, uint32(tab.width), w.dValidOff.p, w.dText.p); err != nil {
		return false, err
	}
	if err := s.launch("mm_seg_text_ends", m.fn["mm_seg_text_ends"], ceilDiv(nSegs, 256), 256, recs, uint32(n), w.dSegLines.p, uint32(nSegs),
		w.dValidOff.p, lines32, w.dHeads.p, w.dText.p, w.dSegEnds.p); err != nil {
		return false, err
	}
	for _, g := range []struct {
		h *hostBuf
		n int
	}{{&t.text, total}, {&t.ends, 4 * nSegs}} {
		if g.h.n < g.n {
			g.h.free(m.dev) // not kept: the next text is written over it
			if err := g.h.ensure(m.dev, g.n); err != nil {
				return false, err
			}
		}
	}
	if err := s.toHost(t.text.p, w.dText.p, total); err != nil {
		return false, err
	}
	if err := s.toHost(t.ends.p, w.dSegEnds.p, 4*nSegs); err != nil {
		return false, err
	}
	if err := s.sync(); err != nil {
		return false, err
	}
	t.n, t.nSegs = total, nSegs
	m.stats.printed.Add(int64(n))
	return true, w.mark("print")
}

// segLineBytes is the size of a segLine on the device.
const segLineBytes = int(unsafe.Sizeof(segLine{}))

// unprinted sends the launch's kept records (at src, sorted or not) the host's way after all,
// giving back its text buffer where it took one.
func (w *worker) unprinted(src devPtr, sorted bool) error {
	if w.textNow != nil {
		w.putText(w.textNow)
		w.textNow = nil
	}
	w.keep = nil
	n := w.nAll
	if n == 0 {
		return nil
	}
	w.nAll = 0
	at := len(w.recs) // none: the records are kept on the card or on the host, not both
	w.recs = growRecs(w.recs, n)
	if err := w.s.toHost(unsafe.Pointer(&w.recs[at]), src, 16*n); err != nil {
		return err
	}
	if sorted {
		w.pageStarts = append(w.pageStarts[:0], 0, n) // one run, in order: the host checks each slot's
	}
	return w.s.sync()
}

// textBuf is a launch's lines on the host, in pinned memory: n bytes of text, and where each of
// its nSegs segments' lines end (uint32 offsets).
type textBuf struct {
	text, ends hostBuf
	n, nSegs   int
}

func (t *textBuf) bytes() []byte { return unsafe.Slice((*byte)(t.text.p), t.n) }

func (t *textBuf) segEnds() []uint32 { return unsafe.Slice((*uint32)(t.ends.p), t.nSegs) }

// textPool is a worker's text buffers: those not out with requests. A launch's text is lent to
// its batches until they are written (kernels.Result.Release), so several launches' may be out at
// once: the pool makes more, up to maxTextBufs, then lets launches go the host's way until some
// come back (never waiting: the batches holding them may wait for this worker's launch).
type textPool struct {
	mu   sync.Mutex
	idle []*textBuf
	made int
}

// maxTextBufs bounds a worker's text buffers.
const maxTextBufs = 16

// takeText returns an idle or new text buffer, or nil where the worker has maxTextBufs out.
func (w *worker) takeText() *textBuf {
	p := &w.texts
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		t := p.idle[n-1]
		p.idle = p.idle[:n-1]
		w.m.stats.textsOut.Add(1)
		return t
	}
	if p.made == maxTextBufs {
		return nil
	}
	p.made++
	w.m.stats.textsMade.Add(1)
	w.m.stats.textsOut.Add(1)
	return &textBuf{}
}

// putText gives a text buffer back to its worker's pool.
func (w *worker) putText(t *textBuf) {
	p := &w.texts
	p.mu.Lock()
	p.idle = append(p.idle, t)
	p.mu.Unlock()
	w.m.stats.textsOut.Add(-1)
}

// freeText releases the worker's idle text buffers (those out with batches when the matcher
// closes stay until the process ends: they are not the matcher's to free while lent).
func (w *worker) freeText() {
	p := &w.texts
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.idle {
		t.text.free(w.m.dev)
		t.ends.free(w.m.dev)
	}
	p.idle = nil
}

// textHold is a launch's text, out with its requests until the last gives it back.
type textHold struct {
	t    *textBuf
	w    *worker
	left atomic.Int32 // counted before any request is told its launch is done
}

func (h *textHold) release() {
	if h.left.Add(-1) == 0 {
		h.w.putText(h.t)
	}
}

// unpackText hands each request of the launch its segments' lines.
func (w *worker) unpackText(batch []*request) {
	t := w.textNow
	w.textNow = nil
	h := &textHold{t: t, w: w}
	text, ends := t.bytes(), t.segEnds()
	seg := 0
	for _, r := range batch {
		n := len(r.b.Segs)
		if n == 0 {
			continue
		}
		lo := 0
		if seg > 0 {
			lo = int(ends[seg-1])
		}
		hi := int(ends[seg+n-1])
		r.text, r.textEnds, r.textLo, r.textHold = text[lo:hi], ends[seg:seg+n], lo, h
		h.left.Add(1)
		seg += n
	}
	if h.left.Load() == 0 {
		w.putText(t)
	}
}

// finishText gives r's result its text, one TextEnds entry a segment: lent, where the result
// has none yet (the caller writes it from the pinned buffer, then gives it back), else appended
// to what the result has.
func (r *request) finishText() {
	h := r.textHold
	defer func() { r.text, r.textEnds, r.textHold = nil, nil, nil }()
	res := r.res
	base := len(res.Text) - r.textLo
	if len(res.Text) == 0 && res.Release == nil {
		res.Text, res.Release = r.text, h.release
	} else {
		res.Text = append(res.Text, r.text...)
		defer h.release()
	}
	for _, e := range r.textEnds {
		res.TextEnds = append(res.TextEnds, base+int(e))
		res.Ends = append(res.Ends, len(res.Matches))
	}
}
