package cuda

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// The suffix array in slices (sa_sliced.cuh): for a text on the device whose suffix array sa.go's
// construction (about 62 bytes a base) cannot fit, the same prefix doubling with the state in the
// suffix array, the ranks and two bitmaps (about 8.25 bytes a base with the text and the suffix
// array outside the pool), and the work done a slice of at most `rows` suffixes at a time (about
// 50 bytes a suffix of the slice). The result is the same suffix array.

// Tile sizes, as in sa_sliced.cuh.
const (
	spRows   = 256 * 32 // SP_ROWS: rows a tile of the bitmaps' kernels
	sppTile  = 256 * 8  // SPP_TILE: positions a tile of the part kernels
	spBinsLg = 20       // at most 2^20 bins of first codes
)

// sliceRowsForced, when not zero, makes every construction of a suffix array on the device of a
// text already there (an index page's) take the sliced way with slices of that many rows: tests,
// and SAPIPE_GPU_SLICE_ROWS for measuring.
var sliceRowsForced, _ = strconv.Atoi(os.Getenv("SAPIPE_GPU_SLICE_ROWS"))

// slicedMinRows is the smallest slice worth running: below it the text is too large for the card.
const slicedMinRows = 1 << 16

// sliceBufs are the sliced construction's device arrays besides saBuffers' slice-sized ones.
type sliceBufs struct {
	done, headb             devPtr // a bit a row
	tileA, tileH, tileF     devPtr // per tile of spRows rows: rows not done, heads among them, first head
	offA, offH              devPtr // their exclusive scans
	phist, partCnt, partOff devPtr // bins of first codes; per tile of sppTile positions
	rowTiles, partTiles     int
}

// layoutSliced carves the buffers of a sliced construction for a text of n bytes in slices of
// rows suffixes (the text and the suffix array are not in the pool).
func layoutSliced(c *carver, n, rows int) (saBuffers, sliceBufs) {
	u, r := uint64(n), uint64(rows)
	var b saBuffers
	var s sliceBufs
	b.n = n
	s.rowTiles, s.partTiles = ceilDiv(n, spRows), ceilDiv(n, sppTile)
	b.codes = c.take(256)
	b.hist = c.take(256 * 4)
	b.rank = c.take(4 * u)
	s.done, s.headb = c.take(4*(u/32+1)), c.take(4*(u/32+1))
	rt := uint64(s.rowTiles)
	s.tileA, s.tileH, s.tileF, s.offA, s.offH = c.take(4*rt), c.take(4*rt), c.take(4*rt), c.take(4*rt), c.take(4*rt)
	s.phist = c.take(4 << spBinsLg)
	s.partCnt, s.partOff = c.take(4*uint64(s.partTiles)), c.take(4*uint64(s.partTiles))
	b.k[0], b.k[1] = c.take(8*r), c.take(8*r)
	b.v[0], b.v[1] = c.take(4*r), c.take(4*r)
	b.actSA[0], b.actG[0] = c.take(4*r), c.take(4*r)
	b.key, b.ord, b.headIdx, b.grp = c.take(4*r), c.take(4*r), c.take(4*r), c.take(4*r)
	b.head = c.take(r)
	ft := uint64(ceilDiv(rows, 256))
	b.sums = c.take(4 * (uint64(ceilDiv(max(s.partTiles, s.rowTiles, int(4*ft)), scanTile)) + 1))
	b.status = c.take(8*256*uint64(ceilDiv(rows, minRadixTile)) + 64)
	b.hist8, b.starts = c.take(8*256*4), c.take(8*256*4)
	b.tileMax = c.take(4 * ft)
	b.cnt = c.take(4 * 4 * ft)
	b.totals = c.take(64)
	return b, s
}

// slicedBytes is the pool a sliced construction of n bytes in slices of rows suffixes takes.
func slicedBytes(n, rows int) uint64 {
	var c carver
	layoutSliced(&c, n, rows)
	return c.used
}

// slicedLeastBytes is the pool that the sliced construction of n bytes is planned with: slices
// of a tenth of the text (or all of it, when that is under slicedMinRows), about 9.25 bytes a
// base. A card with more room gives the construction larger slices.
func slicedLeastBytes(n int) uint64 { return slicedBytes(n, min(n, max(n/10, slicedMinRows))) }

// slicedRows returns the largest slice (at most n rows) whose construction fits avail bytes of
// pool, or 0 when not even slicedMinRows do.
func slicedRows(n int, avail uint64) int {
	lo, hi := 0, n
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if slicedBytes(n, mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo < min(n, slicedMinRows) {
		return 0
	}
	return lo
}

// sliceRoom returns the largest slice of a sliced construction of n bytes that fits the device
// memory available now (with budget's margins), or 0. Device goroutine only.
func (d *device) sliceRoom(n int) int {
	avail, err := d.roomNow()
	if err != nil || avail < 64<<20 {
		return 0
	}
	return slicedRows(n, (avail-(64<<20))/33*32)
}

// alphabet counts the bytes of the n-byte text at text (into b.hist) and returns the codes in byte
// order and their width in bits.
func (d *device) alphabet(b *saBuffers, text devPtr, n int) (codes [256]byte, bw int, err error) {
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(b.hist, 0, 256)); err != nil {
		return codes, 0, err
	}
	if err := d.launch("byte_hist", min(ceilDiv(n, 256), 8*d.info.SMs), 256, 0, text, uint32(n), b.hist); err != nil {
		return codes, 0, err
	}
	var hist [256]uint32
	if err := d.toHost(unsafe.Pointer(&hist[0]), b.hist, 256*4); err != nil {
		return codes, 0, err
	}
	sigma := 0
	for i, h := range hist {
		codes[i] = byte(sigma)
		if h != 0 {
			sigma++
		}
	}
	return codes, bitsFor(uint64(sigma - 1)), nil
}

// suffixArraySliced builds the suffix array of the dio.n-byte text at dio.text into dio.sa, a slice
// of at most rows suffixes at a time. It reports errNoRoom when the pool cannot be had or a part or
// group holds more than rows suffixes (a run of one symbol longer than that).
func (d *device) suffixArraySliced(dio *saDevIO, rows int, st *saStats) error {
	n := dio.n
	rows = min(rows, n)
	if err := d.budget(slicedBytes(n, rows)); err != nil {
		return fmt.Errorf("%d bytes in slices of %d: %w", n, rows, err)
	}
	c := carver{next: d.pool.base}
	b, s := layoutSliced(&c, n, rows)
	if err := st.mark(d, "", 0); err != nil {
		return err
	}
	codes, bw, err := d.alphabet(&b, dio.text, n)
	if err != nil {
		return err
	}
	chars := 64 / bw
	keyBits := bw * chars
	if st != nil {
		st.Bits, st.Chars = bw, chars
	}
	if err := d.toDevice(b.codes, unsafe.Pointer(&codes[0]), 256); err != nil {
		return err
	}
	for _, p := range []devPtr{s.done, s.headb} {
		if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(p, 0, uint64(n/32+1))); err != nil {
			return err
		}
	}
	// Parts: runs of bins of the first q codes, each at most rows suffixes.
	q := max(1, min(chars, spBinsLg/bw))
	bins := 1 << (q * bw)
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(s.phist, 0, uint64(bins))); err != nil {
		return err
	}
	if err := d.launch("sp_prefix_hist", min(ceilDiv(n, 256), 8*d.info.SMs), 256, 0, dio.text, uint32(n), b.codes, uint32(bw), uint32(q), s.phist); err != nil {
		return err
	}
	hist := make([]uint32, bins)
	if err := d.toHost(unsafe.Pointer(&hist[0]), s.phist, 4*bins); err != nil {
		return err
	}
	type part struct{ lo, hi, off, m int }
	var parts []part
	for bin, off := 0, 0; bin < bins; {
		p := part{lo: bin, off: off}
		for bin < bins && p.m+int(hist[bin]) <= rows {
			p.m += int(hist[bin])
			bin++
		}
		if bin == p.lo {
			return fmt.Errorf("%w: %d suffixes start with one run of %d codes, slices of %d", errNoRoom, hist[bin], q, rows)
		}
		p.hi = bin
		off += p.m
		if p.m > 0 {
			parts = append(parts, p)
		}
	}
	if st != nil {
		st.Parts = len(parts)
	}
	if err := st.mark(d, fmt.Sprintf("alphabet and %d parts", len(parts)), 0); err != nil {
		return err
	}
	for _, p := range parts {
		m := p.m
		if err := d.launch("sp_part_count", s.partTiles, 256, 0, dio.text, uint32(n), b.codes, uint32(bw), uint32(q), uint32(p.lo), uint32(p.hi), s.partCnt); err != nil {
			return err
		}
		if err := d.exclusiveScan(s.partCnt, s.partOff, s.partTiles, b.sums, 0); err != nil {
			return err
		}
		if err := d.launch("sp_part_keys", s.partTiles, 256, 0, dio.text, uint32(n), b.codes, uint32(bw), uint32(q), uint32(chars),
			uint32(p.lo), uint32(p.hi), s.partOff, uint32(m), b.k[0], b.v[0]); err != nil {
			return err
		}
		cur, err := d.radixSortOnesweep(&b, b.k, b.v, m, 64-keyBits, 64, 8)
		if err != nil {
			return err
		}
		sa, rowsOf := b.v[cur], b.actG[0]
		if err := d.launch("sp_iota", ceilDiv(m, 256), 256, 0, rowsOf, uint32(m), uint32(p.off)); err != nil {
			return err
		}
		ft := flagTiles(m)
		if err := d.launch("sa_init_flags", ft, 256, 0, b.k[cur], sa, uint32(m), uint32(n), uint32(64-keyBits), uint32(chars), b.head, b.tileMax); err != nil {
			return err
		}
		if err := d.finishSlice(&b, &s, m, ft, sa, rowsOf, dio.sa); err != nil {
			return err
		}
	}
	if err := st.mark(d, "parts sorted", n); err != nil {
		return err
	}
	kb := bitsFor(uint64(n))
	tileA, tileF := make([]uint32, s.rowTiles), make([]uint32, s.rowTiles)
	for h, round := chars, 0; ; h, round = 2*h, round+1 {
		if err := d.launch("sp_tile_stats", s.rowTiles, 256, 0, s.done, s.headb, uint32(0), uint32(n), uint32(0), s.tileA, s.tileH, s.tileF); err != nil {
			return err
		}
		if err := d.toHost(unsafe.Pointer(&tileA[0]), s.tileA, 4*s.rowTiles); err != nil {
			return err
		}
		if err := d.toHost(unsafe.Pointer(&tileF[0]), s.tileF, 4*s.rowTiles); err != nil {
			return err
		}
		active := 0
		for _, a := range tileA {
			active += int(a)
		}
		if active == 0 {
			break
		}
		if st != nil {
			st.Rounds = round + 1
			st.MaxActive = max(st.MaxActive, active)
		}
		if h >= n || round > 64 {
			return fmt.Errorf("GPU suffix array: %d suffixes still unsorted at h=%d (internal error)", active, h)
		}
		cuts, err := sliceCuts(tileA, tileF, n, rows)
		if err != nil {
			return err
		}
		if st != nil {
			st.Slices = max(st.Slices, len(cuts))
		}
		for _, cut := range cuts {
			if err := d.sortSlice(&b, &s, cut[0], cut[1], h, kb, dio.sa); err != nil {
				return err
			}
		}
		if err := st.mark(d, fmt.Sprintf("round h=%d: %d in %d slices", h, active, len(cuts)), active); err != nil {
			return err
		}
	}
	return nil
}

// sliceCuts cuts the rows [0, n) into slices of at most rows rows not done, each ending where a
// group starts (tileA and tileF: sp_tile_stats's counts and first heads of each tile). It reports
// errNoRoom for a group of more than rows suffixes.
func sliceCuts(tileA, tileF []uint32, n, rows int) ([][2]int, error) {
	var cuts [][2]int
	for start := 0; start < n; {
		acc, best, t := 0, -1, start/spRows
		for ; t < len(tileA); t++ {
			if f := int(tileF[t]); tileF[t] != ^uint32(0) && f > start && acc+int(tileA[t]) <= rows {
				best = f // [start, f) holds at most the tiles' rows so far
			}
			acc += int(tileA[t])
			if acc > rows {
				break
			}
		}
		end := n
		if t < len(tileA) {
			if best < 0 {
				return nil, fmt.Errorf("%w: a group of more than %d suffixes in a round", errNoRoom, rows)
			}
			end = best
		}
		cuts = append(cuts, [2]int{start, end})
		start = end
	}
	return cuts, nil
}

// sortSlice sorts the groups of the rows [r0, r1) not done by rank[i+h] and writes them back.
func (d *device) sortSlice(b *saBuffers, s *sliceBufs, r0, r1, h, kb int, SA devPtr) error {
	t0 := r0 / spRows
	nt := ceilDiv(r1, spRows) - t0
	if err := d.launch("sp_tile_stats", nt, 256, 0, s.done, s.headb, uint32(r0), uint32(r1), uint32(t0), s.tileA, s.tileH, s.tileF); err != nil {
		return err
	}
	if err := d.exclusiveScan(s.tileA, s.offA, nt, b.sums, b.totals); err != nil {
		return err
	}
	if err := d.exclusiveScan(s.tileH, s.offH, nt, b.sums, b.totals+4); err != nil {
		return err
	}
	var tot [2]uint32
	if err := d.toHost(unsafe.Pointer(&tot[0]), b.totals, 8); err != nil {
		return err
	}
	m, groups := int(tot[0]), int(tot[1])
	if m == 0 {
		return nil
	}
	sa, rowsOf := b.actSA[0], b.actG[0]
	if err := d.launch("sp_gather", nt, 256, 0, s.done, s.headb, uint32(r0), uint32(r1), uint32(t0), s.offA, s.offH, SA, sa, rowsOf, b.ord); err != nil {
		return err
	}
	ob := 0
	if groups > 1 {
		ob = bitsFor(uint64(groups - 1))
	}
	if err := d.launch("sa_large_keys", ceilDiv(m, 256), 256, 0, uint32(m), sa, b.ord, b.rank, uint32(b.n), uint32(h), uint32(kb), b.k[0], b.v[0]); err != nil {
		return err
	}
	r, err := d.radixSort(b, b.k, b.v, m, 0, kb+ob)
	if err != nil {
		return err
	}
	if err := d.launch("sa_large_unpack", ceilDiv(m, 256), 256, 0, uint32(m), b.k[r], b.v[r], uint32(kb), b.key, sa); err != nil {
		return err
	}
	ft := flagTiles(m)
	if err := d.launch("sa_flags", ft, 256, 0, b.key, rowsOf, uint32(m), b.head, b.tileMax); err != nil {
		return err
	}
	return d.finishSlice(b, s, m, ft, sa, rowsOf, SA)
}

// finishSlice sets the ranks of a sorted slice of m members (its heads flagged in b.head) and
// writes its suffixes, head bits and done bits to their rows.
func (d *device) finishSlice(b *saBuffers, s *sliceBufs, m, tiles int, sa, rowsOf, SA devPtr) error {
	if err := d.headRanks(b, m, tiles, sa, rowsOf); err != nil {
		return err
	}
	return d.launch("sp_finish", ceilDiv(m, 256), 256, 0, uint32(m), b.head, b.headIdx, b.grp, sa, rowsOf, SA, s.done, s.headb)
}
