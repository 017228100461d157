package formats

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"
)

// gzpar.go inflates a gzip stream that is not BGZF (one member, as gzip and pigz write, or a few
// concatenated) on every core. The stream is cut into chunks of gzChunk bytes. A worker takes a
// chunk, finds the first block that starts in it (findBlock: a header that decodes, then its
// block), and decodes from there to the first block that starts in the next chunk, without the
// 32 KiB before its start (inflate.go's markers). The chain (one goroutine) takes the chunks in
// order: where a chunk's decoding starts at the very bit where the one before it stopped, it makes
// the window after it and hands it to a worker, which fills its markers from the window before
// it; anywhere else (a block the search missed or took wrongly, a member's end and the next one's
// header, a damaged block) the chain decodes the stream itself, a block at a time, up to the next
// chunk's start. Only what the chain has reached through the stream's own blocks is handed out,
// in order by Read, which checks each member's CRC-32 and size at its end.

// gzChunk is the compressed bytes of a chunk; gzOverlap the bytes of the next chunk that a
// chunk's decoding may read, for its last block. (Variables for the tests, which make them small.)
var (
	gzChunk   = 2 << 20
	gzOverlap = 512 << 10
)

// A chunk's decoding stops at the first block that takes its output past gzChunkOut times the
// chunk's bytes: where the data are that compressible (the runs of N of a genome: a thousand
// bytes to one) the chain decodes the rest, so that a chunk in flight holds tens of MB, not GB.
// A block of the chain's is held whole: gzBlockMax bounds one (zlib's are at most 8.4 MB, 32 Ki
// lengths of 258; only a stream made to be one could be larger).
const (
	gzChunkOut = 8
	gzBlockMax = 1 << 30
)

// gzJob is one chunk of the compressed stream and what a worker decoded of it.
type gzJob struct {
	idx   int
	raw   []byte // the chunk's bytes, then up to gzOverlap of the next chunk's
	own   int    // the chunk's own bytes in raw
	last  bool   // the stream ends with this chunk
	first int    // >= 0: the member starts at this bit of raw (the stream's first chunk); no search
	err   error  // reading the chunk failed (the stream ends here)

	start, end int      // bits of raw: where decoding started (-1: nowhere) and stopped
	final      bool     // the block before end was a member's last
	marked     []uint16 // output decoded while part of the window was unknown
	plain      []byte   // the rest of it, as bytes
	markedBuf  []uint16 // their buffers from the start (the window before them included), for
	plainBuf   []byte   // the pools
	done       chan struct{}

	// Set by the chain where it takes the decoding: the window before its start (the member's
	// bytes before it, up to winSize); then by the worker that fills it before it closes filled:
	// marked's bytes with the markers filled in, the CRC-32 of out then plain, or what is wrong
	// with a marker.
	win     []byte
	filled  chan struct{}
	out     []byte
	crc     uint32
	fillErr error
}

// gzItem is what the chain hands Read, in the stream's order: a chunk's decoding (once filled),
// bytes the chain decoded itself, a member's end (its CRC-32 to check; the chain checks its size),
// or the error that ends the stream.
type gzItem struct {
	job     *gzJob
	b       []byte
	trailer bool
	crc     uint32
	err     error
}

// gzparReader is an io.ReadCloser of the bytes of a gzip stream, inflated on several goroutines.
type gzparReader struct {
	src     *bufio.Reader
	chunk   int // gzChunk and gzOverlap when it started
	overlap int
	order   chan *gzJob
	work    chan *gzJob
	fills   chan *gzJob // decodings taken by the chain, to fill
	items   chan gzItem
	quit    chan struct{}
	once    sync.Once

	// The chain's.
	held     []*gzJob // jobs taken from order and not yet passed, in order (held[0].idx is base)
	base     int
	pos      int64  // the bit of the stream that the chain has reached
	inside   bool   // pos is within a member's deflate data (else at a member's header)
	win      []byte // the member's last bytes, up to winSize
	size     uint32 // the member's size so far
	f        inflater
	scratch  []byte // the chain's decoding's output
	span     []byte // compressed bytes across chunks, for a block that runs past its chunk's overlap
	spanAt   int64
	taken    int // chunks whose decoding was used, and blocks the chain decoded itself
	serial   int
	maxTaken int // the most output of a chunk's decoding used

	// Read's.
	outs  [][]byte // bytes ready
	cur   *gzJob   // the job whose bytes outs holds, given back once they are read
	check *gzItem  // a trailer to check, or an error to return, once outs are read
	crc   uint32   // the member's CRC-32 so far
	err   error
}

var (
	gzRawPool    = sync.Pool{New: func() any { return new([]byte) }}
	gzMarkedPool = sync.Pool{New: func() any { return new([]uint16) }}
	gzPlainPool  = sync.Pool{New: func() any { return new([]byte) }}
)

// newGzparReader starts inflating the gzip stream src on threads goroutines.
func newGzparReader(src *bufio.Reader, threads int) *gzparReader {
	threads = max(threads, 1)
	// Jobs in flight (cut, decoded, waiting for the chain or Read) are bounded by order's and
	// items' room: each holds a chunk and about two and a half times its output.
	r := &gzparReader{src: src, chunk: gzChunk, overlap: gzOverlap, order: make(chan *gzJob, threads+2),
		work: make(chan *gzJob, threads), fills: make(chan *gzJob, threads), items: make(chan gzItem, 4),
		quit: make(chan struct{})}
	go r.cut()
	for range threads {
		go r.decode()
	}
	go r.chain()
	return r
}

// cut reads the stream into chunks, each handed to a worker once the next one's first bytes are
// read, and in order to Read.
func (r *gzparReader) cut() {
	defer close(r.order)
	defer close(r.work)
	var prev *gzJob
	for idx := 0; ; idx++ {
		bp := gzRawPool.Get().(*[]byte)
		buf := slices.Grow((*bp)[:0], r.chunk+r.overlap)[:r.chunk]
		n, err := io.ReadFull(r.src, buf)
		buf = buf[:n]
		if err == io.ErrUnexpectedEOF || (err == io.EOF && idx > 0) {
			err = nil
		}
		if prev != nil {
			prev.raw = append(prev.raw, buf[:min(n, r.overlap)]...)
			prev.last = n == 0 && err == nil
			if !r.send(prev) {
				return
			}
			prev = nil
		}
		if n == 0 && err == nil {
			gzRawPool.Put(bp)
			return
		}
		j := &gzJob{idx: idx, raw: buf, own: n, first: -1, err: err, done: make(chan struct{}),
			filled: make(chan struct{})}
		if idx == 0 {
			if h, err := gzHeaderLen(buf); err == nil {
				j.first = 8 * h
			}
		}
		if err != nil {
			j.last = true
			r.send(j)
			return
		}
		prev = j
	}
}

func (r *gzparReader) send(j *gzJob) bool {
	select {
	case r.order <- j:
	case <-r.quit:
		return false
	}
	select {
	case r.work <- j:
		return true
	case <-r.quit:
		return false
	}
}

// gzHeaderLen returns the length of the gzip header at the start of b, read by compress/gzip
// itself, or what it says is wrong with it (io.ErrUnexpectedEOF: b does not hold all of it).
func gzHeaderLen(b []byte) (int, error) {
	br := bytes.NewReader(b)
	if _, err := gzip.NewReader(br); err != nil {
		return 0, err
	}
	return len(b) - br.Len(), nil
}

// decode decodes jobs: from the member's start in the stream's first chunk, elsewhere from the
// first block found in the chunk, up to the first block that starts past it.
// The same goroutines fill in the markers of the decodings the chain takes (fill). None of them
// waits for anything but its next job.
func (r *gzparReader) decode() {
	var f inflater
	lut := new([1 << 16]byte)
	for i := range markerBase {
		lut[i] = byte(i)
	}
	work, fills := r.work, r.fills
	for work != nil || fills != nil {
		select {
		case j, ok := <-work:
			if !ok {
				work = nil
				continue
			}
			j.start = -1
			if j.first >= 0 {
				decodeChunk(&f, j, j.first, false)
			} else {
				for p := 0; p < 8*j.own; p++ {
					p = findBlock(&f, j.raw, p, 8*j.own)
					if p < 0 || decodeChunk(&f, j, p, true) {
						break
					}
				}
			}
			close(j.done)
		case j, ok := <-fills:
			if !ok {
				fills = nil
				continue
			}
			j.fill(lut)
			close(j.filled)
		case <-r.quit:
			return
		}
	}
}

// fill makes j.out, j.marked with its markers filled from j.win, and j.crc. lut is the worker's
// table of what each 16-bit value stands for: 0-255 themselves (set once), then the window.
func (j *gzJob) fill(lut *[1 << 16]byte) {
	op := gzPlainPool.Get().(*[]byte)
	m := j.marked
	out := slices.Grow((*op)[:0], len(m))[:len(m)]
	win := j.win
	if len(win) == winSize {
		// One load a value, no branch: in FASTQ a marker every few tens of bytes ("+", the
		// names' prefixes copied from record to record back to the unknown window).
		copy(lut[markerBase:], win)
		for i, v := range m {
			out[i] = lut[v]
		}
	} else if k := fillMarked(out, m, win); k < len(m) {
		// Within 32 KiB of a member's start: a marker before it is damage.
		j.fillErr = flate.CorruptInputError(int64(j.idx))
		out = out[:k]
	}
	j.out = out
	m = j.markedBuf[:0]
	gzMarkedPool.Put(&m)
	j.marked, j.markedBuf = nil, nil
	j.crc = crc32Combine(crc32.ChecksumIEEE(out), crc32.ChecksumIEEE(j.plain), len(j.plain))
}

// fillMarked writes to dst the bytes of m, its markers filled from win (the bytes before m,
// up to winSize), up to the first marker that points before win's start; it returns how many.
func fillMarked(dst []byte, m []uint16, win []byte) int {
	for i, v := range m {
		if v < markerBase {
			dst[i] = byte(v)
			continue
		}
		back := winSize - int(v-markerBase)
		if back > len(win) {
			return i
		}
		dst[i] = win[len(win)-back]
	}
	return len(m)
}

// markerWindow is the window of a chunk whose bytes before it are not known: a marker each.
var markerWindow = sync.OnceValue(func() []uint16 {
	w := make([]uint16, winSize)
	for i := range w {
		w[i] = uint16(markerBase + i)
	}
	return w
})

// decodeChunk decodes j's blocks from bit p into j.marked and j.plain, until a block that ends at
// or past the chunk's end, a member's last block, or a block it cannot decode. found says p was
// found by search: then the first two blocks must decode (where the first does not reach the
// chunk's end), and a first block that is a member's last must be followed by a trailer and the
// stream's end or another member, or nothing is kept and it reports false. (Bits that read as a
// block header and a block are not rare: in a megabyte of deflate data there are a few.)
func decodeChunk(f *inflater, j *gzJob, p int, found bool) bool {
	mp := gzMarkedPool.Get().(*[]uint16)
	m := append((*mp)[:0], markerWindow()...)
	var pl []byte
	plainMode := false
	pos, blocks := p, 0
	stop := 8 * j.own
	limit := winSize + gzChunkOut*j.own
	for pos < stop || blocks == 0 {
		var err error
		var end int
		var final bool
		strict := found && blocks == 0
		if !plainMode {
			end, m, final, err = inflateBlock(f, j.raw, pos, m, strict, limit)
		} else {
			end, pl, final, err = inflateBlock(f, j.raw, pos, pl, strict, limit-len(m)+2*winSize)
		}
		if err == nil && found && final && !endsMember(j, end) {
			err = errCorrupt
		}
		if err != nil {
			if found && (blocks == 0 || (blocks == 1 && pos < stop)) {
				*mp = m[:0]
				gzMarkedPool.Put(mp)
				return false
			}
			break
		}
		blocks++
		pos = end
		if final {
			j.final = true
			break
		}
		if !plainMode && len(m) >= 2*winSize && clean(m[len(m)-winSize:]) {
			pp := gzPlainPool.Get().(*[]byte)
			pl = (*pp)[:0]
			for _, v := range m[len(m)-winSize:] {
				pl = append(pl, byte(v))
			}
			plainMode = true
		}
	}
	j.start, j.end = p, pos
	j.marked, j.markedBuf = m[winSize:], m
	if plainMode {
		j.plain, j.plainBuf = pl[winSize:], pl
	}
	return true
}

// endsMember reports whether a member's last block ending at bit end of j.raw is followed by its
// trailer and then the stream's end or another member's header; where raw ends before that, yes.
func endsMember(j *gzJob, end int) bool {
	next := (end+7)/8 + 8
	switch {
	case next > len(j.raw):
		return !j.last
	case next == len(j.raw):
		return true
	case next+3 > len(j.raw):
		return !j.last
	}
	return j.raw[next] == 0x1f && j.raw[next+1] == 0x8b && j.raw[next+2] == 8
}

// clean reports whether no marker is in m.
func clean(m []uint16) bool {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] >= markerBase {
			return false
		}
	}
	return true
}

// findBlock returns the first bit from p (and before stop) where a block header of a stored or
// dynamic block reads as compress/flate would take it (findBlock's checks are stricter: zero
// padding, an end-of-block code), or -1. Fixed-code blocks are not looked for: nearly any bits
// read as one.
func findBlock(f *inflater, src []byte, p, stop int) int {
	stop = min(stop, 8*len(src))
	r := bitReader{src: src}
	for ; p < stop; p++ {
		// A word of the bits at p: BFINAL, BTYPE, then HLIT and HDIST for a dynamic block.
		i := p >> 3
		var w uint64
		if i+8 <= len(src) {
			w = binary.LittleEndian.Uint64(src[i:]) >> (p & 7)
		} else {
			for k := len(src) - 1; k >= i; k-- {
				w = w<<8 | uint64(src[k])
			}
			w >>= p & 7
		}
		switch w >> 1 & 3 {
		case 2:
			if w>>3&31 > 29 || w>>8&31 > 29 || !clPlausible(w) {
				continue
			}
		case 0:
		default:
			continue
		}
		r.seek(p)
		if _, _, _, err := f.blockHeader(&r, true); err == nil {
			return p
		}
	}
	return -1
}

// clPlausible reports whether the code-length code's lengths in w (a dynamic block's header at
// its lowest bit) are not over-subscribed as far as w holds them: the first 13 (bits 17-55),
// which most bits taken for a header fail.
func clPlausible(w uint64) bool {
	n := min(int(w>>13&15)+4, 13)
	sum := 0 // Kraft's sum in 128ths
	for i := range n {
		if l := w >> (17 + 3*i) & 7; l != 0 {
			sum += 128 >> l
		}
	}
	return sum <= 128
}

// crc32Combine returns the CRC-32 of a then b, from crcA, crcB and b's length.
func crc32Combine(crcA, crcB uint32, lenB int) uint32 {
	return multModP(xPow8n(uint64(lenB)), crcA) ^ crcB
}

// multModP multiplies a and b modulo CRC-32's polynomial, in its reflected form (x^0 the highest
// bit).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n returns x^(8n) modulo the polynomial, by squares: x^(2^k) for the bits of 8n.
func xPow8n(n uint64) uint32 {
	p := uint32(1) << 31  // x^0
	sq := uint32(1) << 23 // x^8
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(sq, p)
		}
		sq = multModP(sq, sq)
	}
	return p
}

// job returns the job of chunk idx, waiting for its decoding; nil past the stream's last chunk,
// or once Close has stopped the workers.
func (r *gzparReader) job(idx int) *gzJob {
	j := r.chunkOf(idx)
	if j != nil {
		select {
		case <-j.done:
		case <-r.quit:
			return nil
		}
	}
	return j
}

// chunkOf returns the job of chunk idx, not waiting for its decoding (its bytes are there).
func (r *gzparReader) chunkOf(idx int) *gzJob {
	for idx >= r.base+len(r.held) {
		var j *gzJob
		var ok bool
		select {
		case j, ok = <-r.order:
		case <-r.quit:
		}
		if !ok {
			return nil
		}
		if len(r.held) == 0 {
			r.base = j.idx
		}
		r.held = append(r.held, j)
	}
	if idx < r.base {
		return nil
	}
	return r.held[idx-r.base]
}

// release passes the jobs before chunk idx: their chunks given back.
func (r *gzparReader) release(idx int) {
	for len(r.held) > 0 && r.base < idx {
		j := r.held[0]
		r.held = r.held[1:]
		r.base++
		select {
		case <-j.done: // a chunk passed over may still be in its worker's hands
		case <-r.quit:
			continue // closed: its worker may never reach it; its bytes are left to the collector
		}
		raw := j.raw[:0]
		gzRawPool.Put(&raw)
		j.raw = nil
	}
}

// chain follows the stream's blocks from its start, handing Read each chunk's decoding that
// starts where it stands (its window made from the one before) and decoding the blocks between
// itself.
func (r *gzparReader) chain() {
	defer close(r.items)
	defer close(r.fills)
	defer r.release(1 << 62)
	for {
		it := r.step()
		if it.job == nil && it.b == nil && !it.trailer && it.err == nil {
			continue
		}
		select {
		case r.items <- it:
		case <-r.quit:
			return
		}
		if it.err != nil {
			return
		}
	}
}

// step moves the chain on by a chunk's decoding, a block, a member's end or a header.
func (r *gzparReader) step() gzItem {
	k := int(r.pos / int64(8*r.chunk))
	r.release(k)
	j := r.job(k)
	if j == nil {
		if r.inside {
			return gzItem{err: io.ErrUnexpectedEOF}
		}
		return gzItem{err: io.EOF}
	}
	if j.err != nil && int(r.pos/8)-k*r.chunk >= j.own {
		return gzItem{err: j.err}
	}
	if !r.inside {
		return gzItem{err: r.header(k)}
	}
	at := int(r.pos - int64(8*r.chunk*k))
	if j.start == at && (j.end > at || j.final) {
		return r.take(j)
	}
	return r.block(k)
}

// take hands Read j's decoding, its window the chain's, and moves the window on by its last bytes.
func (r *gzparReader) take(j *gzJob) gzItem {
	r.taken++
	old := slices.Clone(r.win)
	// The window after j: its last bytes, the markers among them filled from the window before.
	n := len(j.marked) + len(j.plain)
	r.maxTaken = max(r.maxTaken, n)
	tail := j.marked[max(0, len(j.marked)-max(winSize-len(j.plain), 0)):]
	t := make([]byte, len(tail))
	fillMarked(t, tail, old) // a marker before the member's start: the worker reports it
	r.slide(t)
	r.slide(j.plain)
	j.win = old
	select {
	case r.fills <- j:
	case <-r.quit:
		return gzItem{err: io.ErrClosedPipe}
	}
	r.size += uint32(n)
	r.pos = int64(8*r.chunk*j.idx) + int64(j.end)
	if j.final {
		r.inside = false
		return r.trailer(gzItem{job: j})
	}
	return gzItem{job: j}
}

// slide appends b to the window, keeping its last winSize bytes.
func (r *gzparReader) slide(b []byte) {
	if len(b) >= winSize {
		r.win = append(r.win[:0], b[len(b)-winSize:]...)
		return
	}
	if drop := len(r.win) + len(b) - winSize; drop > 0 {
		r.win = append(r.win[:0], r.win[drop:]...)
	}
	r.win = append(r.win, b...)
}

// bytesAt returns the stream's compressed bytes from byte off, within chunk k (which holds off)
// and at least want bytes past off where the stream has them.
func (r *gzparReader) bytesAt(k int, off int64, want int) []byte {
	j := r.job(k)
	if j == nil {
		return nil // closed
	}
	at := int(off) - k*r.chunk
	if len(j.raw)-at >= want || j.last || j.err != nil {
		return j.raw[at:]
	}
	if r.span != nil && r.spanAt <= off && int(r.spanAt)+len(r.span)-int(off) >= want {
		return r.span[off-r.spanAt:]
	}
	r.span = append(r.span[:0], j.raw[at:j.own]...)
	for i := k + 1; len(r.span) < want; i++ {
		n := r.chunkOf(i)
		if n == nil {
			break
		}
		r.span = append(r.span, n.raw[:n.own]...)
		if n.err != nil {
			break
		}
	}
	r.spanAt = off
	return r.span
}

// block decodes the block at pos itself, from the window: where no chunk's decoding starts there.
func (r *gzparReader) block(k int) gzItem {
	want := 1 << 16
	for {
		off := r.pos / 8
		src := r.bytesAt(k, off, want)
		out := append(r.scratch[:0], r.win...)
		end, out, final, err := inflateBlock(&r.f, src, int(r.pos-8*off), out, false, len(r.win)+gzBlockMax)
		r.scratch = out[:0]
		if err == errShort && len(src) >= want {
			want *= 2
			continue
		}
		if err == errShort {
			return gzItem{err: io.ErrUnexpectedEOF}
		}
		if err == errTooBig {
			return gzItem{err: fmt.Errorf("flate: a block of over %d bytes at offset %d: not read", gzBlockMax, off)}
		}
		if err != nil {
			return gzItem{err: flate.CorruptInputError(off)}
		}
		r.serial++
		b := append([]byte(nil), out[len(r.win):]...)
		r.size += uint32(len(b))
		r.slide(b)
		r.pos = 8*off + int64(end)
		if final {
			r.inside = false
			return r.trailer(gzItem{b: b})
		}
		return gzItem{b: b}
	}
}

// trailer adds to it the member's CRC-32 and size, read after its last block, for Read to check,
// and moves pos to the next member's header.
func (r *gzparReader) trailer(it gzItem) gzItem {
	off := (r.pos + 7) / 8
	k := int(off / int64(r.chunk))
	t := r.bytesAt(k, off, 8) // nil past the stream's end
	if len(t) < 8 {
		it.err = io.ErrUnexpectedEOF
		return it
	}
	it.trailer, it.crc = true, binary.LittleEndian.Uint32(t)
	if binary.LittleEndian.Uint32(t[4:]) != r.size {
		it.err = gzip.ErrChecksum
	}
	r.pos = 8 * (off + 8)
	return it
}

// header reads the header of the member that starts at pos: nil, the stream's end (io.EOF) or,
// as compress/gzip says, what is wrong with it.
func (r *gzparReader) header(k int) error {
	off := r.pos / 8
	want := 1 << 9
	for {
		src := r.bytesAt(k, off, want)
		if len(src) == 0 {
			return io.EOF
		}
		h, err := gzHeaderLen(src)
		if err == io.ErrUnexpectedEOF && len(src) >= want {
			want *= 2
			continue
		}
		if err != nil {
			return err
		}
		r.pos = 8 * (off + int64(h))
		r.inside, r.size, r.win = true, 0, r.win[:0]
		return nil
	}
}

func (r *gzparReader) Read(p []byte) (int, error) {
	for len(r.outs) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.giveBack()
		if r.check != nil {
			it := r.check
			r.check = nil
			if it.err != nil {
				r.err = it.err
			} else if it.trailer && it.crc != r.crc {
				r.err = gzip.ErrChecksum
			}
			r.crc = 0
			continue
		}
		it, ok := <-r.items
		if !ok {
			r.err = io.EOF
			continue
		}
		if j := it.job; j != nil {
			<-j.filled
			r.crc = crc32Combine(r.crc, j.crc, len(j.out)+len(j.plain))
			r.outs = append(r.outs, j.out, j.plain)
			r.cur = j
			if j.fillErr != nil {
				r.outs = r.outs[:1]
				it.err = j.fillErr
			}
		}
		if it.b != nil {
			r.crc = crc32.Update(r.crc, crc32.IEEETable, it.b)
			r.outs = append(r.outs, it.b)
		}
		if it.trailer || it.err != nil {
			r.check = &it
		}
		for len(r.outs) > 0 && len(r.outs[0]) == 0 {
			r.outs = r.outs[1:]
		}
	}
	n := copy(p, r.outs[0])
	if r.outs[0] = r.outs[0][n:]; len(r.outs[0]) == 0 {
		r.outs = r.outs[1:]
	}
	return n, nil
}

// giveBack gives the buffers of the job whose bytes Read has handed out to the pools.
func (r *gzparReader) giveBack() {
	if j := r.cur; j != nil {
		r.cur = nil
		for _, b := range [][]byte{j.out, j.plainBuf} {
			if b != nil {
				b = b[:0]
				gzPlainPool.Put(&b)
			}
		}
		j.out, j.plain, j.plainBuf = nil, nil, nil
	}
}

// Close stops the goroutines, without waiting for the one that may be in a read of the source.
func (r *gzparReader) Close() error {
	r.once.Do(func() {
		close(r.quit)
		go func() {
			for range r.order {
			}
		}()
		go func() {
			for range r.items {
			}
		}()
	})
	return nil
}
