package formats

import (
	"bytes"
	"io"

	"runtime"
	"slices"
	"sync/atomic"
)

// A long FASTA sequence read on every core. A Reader of a plain file on its own (what
// BlockFile.Resume hands over: a query file whose records outgrow a chunk, a genome's
// chromosomes) read each sequence one line at a time on one goroutine, growing its buffer by
// doubling: a 150 Mbp query took 0.3 s of a 1.4 s GPU run in which every other core waited
// (an execution trace on the lent H200). Once a sequence has passed longSeq bytes, the rest of it
// is read from a mapping of the file: windows of it are cut into parts, scanned at once for the
// record's end (the next '>') with their sequence bytes and newlines counted, until the end is
// found; then the parts are copied without white space into the sequence's buffer, grown once,
// each at its own offset.

// longSeq is how long a sequence grows, one buffer at a time, before the rest of it is read from
// the mapping.
var longSeq = 4 << 20

// longWindow is the most of the file one round of the parallel reading takes: a record's end is
// found within a window past it, not at the file's end.
var longWindow = 256 << 20

// longPart is the least one goroutine takes of a window.
var longPart = 1 << 20

// mappedSeqs counts the sequences read by scanSeqMapped (tests).
var mappedSeqs atomic.Int64

// seqPart is what the first pass learns of a part of a window.
type seqPart struct {
	end     int // bytes of the part that belong to the sequence (up to a '>', or all)
	gt      bool
	n, nl   int // sequence bytes and newlines in part[:end]
	dst, at int // where its bytes go in seqBuf; its offset in the file
}

// scanPart returns what b, at offset at of the file, holds of the sequence: up to its first '>'
// (or all of it), the sequence bytes and newlines in that.
func scanPart(b []byte, at int) seqPart {
	p := seqPart{at: at, end: len(b)}
	if g := bytes.IndexByte(b, '>'); g >= 0 {
		p.end, p.gt = g, true
	}
	p.n = nonSpaceCount(b[:p.end])
	p.nl = bytes.Count(b[:p.end], []byte{'\n'})
	return p
}

// scanSeqMapped reads the rest of the current sequence from a mapping of r.whole, as scanSeq
// does: it appends its bytes without white space to seqBuf, counts its newlines, and consumes the
// '>' that ends it, reporting whether there was one. ok is false where the mapping cannot be made
// or too little is left to be worth it: scanSeq goes on reading then. The Reader's buffer must be
// empty (every byte read from the file used), so that the file's offset is the next byte.
func (r *Reader) scanSeqMapped() (found, ok bool) {
	f := r.whole
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return false, false
	}
	st, err := f.Stat()
	if err != nil || st.Size()-off < int64(2*longPart) || int64(int(st.Size())) != st.Size() {
		return false, false
	}
	size := int(st.Size())
	data, unmap := mapReadOnly(f, size)
	if data == nil {
		return false, false
	}
	defer unmap()
	mappedSeqs.Add(1)
	threads := runtime.GOMAXPROCS(0)
	at := int(off)
	// First the record's end, window after window, each window's parts scanned at once for a
	// '>' and counted; windows double from four times longSeq, so that what is scanned past the
	// record's end (the window's parts after its '>') stays below twice the record's bytes: a file
	// of many records a little longer than longSeq is not scanned 256 MiB a record.
	var parts []seqPart
	next := data[at:min(at+longSeq, size)]
	populate(next, false) // its pages mapped at once, not faulted in one by one
	if bytes.IndexByte(next, '>') >= 0 {
		// It ends within longSeq bytes: one part, on this goroutine.
		p := scanPart(next, at)
		parts = append(parts, p)
		at, found = at+p.end+1, true
	}
	step := min(4*longSeq, longWindow)
	for ; at < size && !found; step = min(2*step, longWindow) {
		win := data[at:min(at+step, size)]
		k := min(threads, max(len(win)/longPart, 1))
		first := len(parts)
		for i := range k {
			parts = append(parts, seqPart{at: at + len(win)*i/k})
		}
		round := parts[first:]
		if forEach(threads, k, func(i int) {
			b := data[at+len(win)*i/k : at+len(win)*(i+1)/k] // round[i]'s bytes, to round[i+1]'s
			populate(b, false)
			round[i] = scanPart(b, round[i].at)
		}) != nil {
			r.rerr = errFileChanged
			return false, true
		}
		for i := range round {
			if round[i].gt {
				parts, found = parts[:first+i+1], true
				break
			}
		}
		last := parts[len(parts)-1]
		at = last.at + last.end
		if found {
			at++ // the '>'
		}
	}
	// Then its bytes, each part at its place in seqBuf, grown once.
	n, total := len(r.seqBuf), 0
	for i := range parts {
		parts[i].dst = n + total
		total += parts[i].n
		r.nl += parts[i].nl
	}
	r.seqBuf = slices.Grow(r.seqBuf, total)[:n+total]
	if forEach(threads, len(parts), func(i int) {
		p := &parts[i]
		appendSeq(r.seqBuf[p.dst:p.dst:p.dst+p.n], data[p.at:p.at+p.end], new(int))
	}) != nil {
		r.rerr = errFileChanged
		return false, true
	}
	if _, err := f.Seek(int64(at), io.SeekStart); err != nil {
		r.rerr = err
		return false, true
	}
	r.pos, r.end = 0, 0
	return found, true
}
