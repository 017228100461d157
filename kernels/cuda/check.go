package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Checks of an index file's pages on the device (check.cuh): where a GPU matches against an
// index file, the pages' arrays go to the card while the host computes the file's checksums, and
// the card then checks them as kernels/cpu's LoadPage would (suffix array entries in range, the
// window's codes, the compact LCP's side table and block minima, the rank structure's counts) and
// makes what LoadPage and NewMatcherFromPages make on the host: C, the levels of LCP minima and
// the deep rows. The host reads the file once, for the checksums, instead of twice. Where a check
// fails, the host's own checks run for the error's words (errDeviceCheck).

// errDeviceCheck: an index page failed a check on the device; the host's checks say how.
var errDeviceCheck = errors.New("an index page failed its checks on the device")

// Slots of check.cuh's bad array.
const (
	ckSA = iota
	ckSide
	ckBlock
	ckMin2
	ckOccSym
	ckOccCnt
	ckEscapes
	ckEnds
	ckSlots
)

// earlyShapeOK reports whether the early arrays a have the lengths of their page's shape (what
// LoadPage checks first), so that copying them into the page's layout stays within it.
func earlyShapeOK(a *cpu.DeviceArrays, s pageShape) bool {
	min1, min2 := s.lcpBlocks()
	n := a.N
	return n >= 1 && len(a.SA) == n+1 && len(a.LCP) == n+2 && len(a.LCPBigVal) == len(a.LCPBigRow) &&
		len(a.LCPMin1) == min1 && len(a.LCPMin2) == min2 && s.stride > 0 && len(a.Occ) == ((n+1)/cpu.OccBlockRows+1)*s.stride
}

// checkArgs are the arrays of a page on the device that checkOnDevice checks: the window of n
// codes < sigma, its suffix array (n+1 rows), its rank structure, and its compact LCP (lcp 0: a
// page that is only searched, without one).
type checkArgs struct {
	n, sigma                        int
	win, sa, occ                    devPtr
	noText                          bool // win and sa are not on the device (counting only)
	planes, counts, stride          int
	lcp, bigRow, bigVal, min1, min2 devPtr
	nBig                            int
}

// checkPage checks the page of arrays a (early, as copied to desc) of a text of sigma codes on the
// device and returns its C; errDeviceCheck when a check fails. It also makes the page's levels of
// LCP minima and its deep rows for minLen. Device goroutine only.
func (m *gpuMatcher) checkPage(a *cpu.DeviceArrays, s pageShape, desc *pageDev, sigma, minLen int) ([256]uint32, error) {
	d := m.dev
	var c [256]uint32
	n, rows := a.N, a.N+2
	// What LoadPage checks first, on the host: a few values (the lengths were, by uploadEarly).
	if a.SA[0] != int32(n) || a.LCP[0] != 0 || a.LCP[1] != 0 || a.LCP[n+1] != 0 || sigma < 2 || sigma > 256 {
		return c, fmt.Errorf("%w: lengths or first rows", errDeviceCheck)
	}
	c, err := d.checkOnDevice(checkArgs{n: n, sigma: sigma, win: desc.text + devPtr(desc.start), sa: desc.sa, occ: desc.occ,
		planes: s.planes, counts: s.counts, stride: s.stride,
		lcp: desc.lcp, bigRow: desc.bigRow, bigVal: desc.bigVal, min1: desc.min1, min2: desc.min2, nBig: s.nBig})
	if err != nil {
		return c, err
	}
	// What the host would make: the deep rows and the levels above min2.
	min1, min2 := s.lcpBlocks()
	if err := d.launch("pb_deep_small", ceilDiv(min1, 256), 256, 0, desc.lcp, uint32(rows), uint32(minLen), desc.bigRow, desc.bigVal,
		uint32(s.nBig), desc.deep); err != nil {
		return c, err
	}
	upLens, _ := s.lcpUp()
	below, belowLen, out := desc.min2, min2, desc.up
	for _, l := range upLens {
		if err := d.launch("pb_block_min", ceilDiv(l, 256), 256, 0, below, uint32(belowLen), out); err != nil {
			return c, err
		}
		below, belowLen, out = out, l, out+devPtr(4*l)
	}
	if err := d.copyInFrom(desc.c, unsafe.Pointer(&c[0]), 4*256); err != nil {
		return c, err
	}
	return c, d.sync()
}

// checkOnDevice runs the checks of cpu.LoadPage (LoadSearchPage without an LCP) that read the
// arrays of x, on the device, and returns the page's C; errDeviceCheck when one fails. The lengths
// are the caller's to check first. Device goroutine only.
func (d *device) checkOnDevice(x checkArgs) ([256]uint32, error) {
	var c [256]uint32
	n, rows := x.n, x.n+2
	min1 := (rows + 63) / 64
	min2 := (min1 + 63) / 64
	nb := (n+1)/cpu.OccBlockRows + 1
	syms := max(x.sigma-kernels.FirstCode, 0)
	var bad, hist, cnt, off, sums devBuf
	defer func() {
		for _, b := range []*devBuf{&bad, &hist, &cnt, &off, &sums} {
			b.free(d)
		}
	}()
	for _, b := range []struct {
		b *devBuf
		n int
	}{{&bad, 8 * ckSlots}, {&hist, 4 * 256}, {&cnt, 4 * max(syms*nb, 1)}, {&off, 4 * max(syms*nb, 1)},
		{&sums, 4 * (ceilDiv(max(syms*nb, 1), scanTile) + 1)}} {
		if err := b.b.ensureExact(d, uint64(b.n)); err != nil {
			return c, err
		}
	}
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(bad.p, ^uint32(0), 2*ckEscapes)); err != nil {
		return c, err
	}
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(bad.p+8*ckEscapes, 0, 2*(ckSlots-ckEscapes))); err != nil {
		return c, err
	}
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(hist.p, 0, 256)); err != nil {
		return c, err
	}
	grid := func(k int) int { return min(ceilDiv(k, 256), 16*d.info.SMs) }
	type launch struct {
		name        string
		grid, block int
		args        []any
	}
	launches := []launch{
		{"ck_occ_syms", nb, cpu.OccBlockRows, []any{x.occ, uint32(n + 1), uint32(nb), uint32(x.sigma), uint32(x.planes), uint32(x.counts),
			uint32(x.stride), cnt.p, bad.p}},
	}
	if !x.noText {
		launches = append(launches,
			launch{"ck_text_hist", grid(n), 256, []any{x.win, uint32(n), hist.p}},
			launch{"ck_sa", grid(n), 256, []any{x.sa, uint32(n), bad.p}})
	}
	if x.lcp != 0 {
		launches = append(launches,
			launch{"ck_lcp_side", ceilDiv(max(x.nBig, 1), 256), 256, []any{x.bigRow, x.bigVal, uint32(x.nBig), x.lcp, uint32(rows), uint32(n), bad.p}},
			launch{"ck_lcp_blocks", ceilDiv(min1, 256), 256, []any{x.lcp, uint32(rows), x.min1, x.bigRow, x.bigVal, uint32(x.nBig), bad.p}},
			launch{"ck_min2", ceilDiv(min2, 256), 256, []any{x.min1, uint32(min1), x.min2, uint32(min2), bad.p}})
	}
	for _, l := range launches {
		if err := d.launch(l.name, l.grid, l.block, 0, l.args...); err != nil {
			return c, err
		}
	}
	totals := make([]uint32, syms)
	if syms > 0 {
		if err := d.exclusiveScan(cnt.p, off.p, syms*nb, sums.p, 0); err != nil {
			return c, err
		}
		if err := d.launch("ck_occ_counts", ceilDiv(nb, 256), 256, 0, x.occ, off.p, uint32(nb), uint32(x.sigma), uint32(x.stride), bad.p); err != nil {
			return c, err
		}
		for k := range syms { // the code's total: its last block's start and count, less its first block's start
			var v [3]uint32
			first, last := devPtr(4*k*nb), devPtr(4*(k*nb+nb-1))
			for j, at := range []devPtr{off.p + first, off.p + last, cnt.p + last} {
				if err := d.toHost(unsafe.Pointer(&v[j]), at, 4); err != nil {
					return c, err
				}
			}
			totals[k] = v[1] + v[2] - v[0]
		}
	}
	var flags [ckSlots]uint64
	if err := d.toHost(unsafe.Pointer(&flags[0]), bad.p, 8*ckSlots); err != nil {
		return c, err
	}
	var h [256]uint32
	if x.noText {
		// The text's histogram is the rank structure's: its totals, and the rest of the n
		// symbols (the end of the text is the one more row) are the unmatchable code 1.
		rest := int64(n)
		for k, t := range totals {
			h[kernels.FirstCode+k] = t
			rest -= int64(t)
		}
		if rest < 0 {
			return c, fmt.Errorf("%w: rank structure holds %d symbols more than the text's %d", errDeviceCheck, -rest, n)
		}
		h[1] = uint32(rest)
	} else if err := d.toHost(unsafe.Pointer(&h[0]), hist.p, 4*256); err != nil {
		return c, err
	}
	for k := ckSA; k < ckEscapes; k++ {
		if flags[k] != ^uint64(0) {
			return c, fmt.Errorf("%w (check %d at %d)", errDeviceCheck, k, flags[k])
		}
	}
	if x.lcp != 0 && flags[ckEscapes] != uint64(x.nBig) || flags[ckEnds] != 1 || h[0] != 0 {
		return c, fmt.Errorf("%w: %d escapes for %d side-table rows, %d end symbols, %d zero codes", errDeviceCheck, flags[ckEscapes], x.nBig, flags[ckEnds], h[0])
	}
	for v := x.sigma; v < 256; v++ {
		if h[v] != 0 {
			return c, fmt.Errorf("%w: text code %d", errDeviceCheck, v)
		}
	}
	for k, t := range totals {
		if t != h[kernels.FirstCode+k] {
			return c, fmt.Errorf("%w: rank structure holds %d of code %d, the text %d", errDeviceCheck, t, kernels.FirstCode+k, h[kernels.FirstCode+k])
		}
	}
	c[0] = 1
	for v := 1; v < 256; v++ {
		c[v] = c[v-1] + h[v-1]
	}
	return c, nil
}

// checkEarly checks the early pages hps, copied to the matcher's frames, on the device, while the
// host computes the file's checksums (e.sums), whose error comes first. On success the pages are
// resident, with their C, deep rows and levels made on the device.
func (m *gpuMatcher) checkEarly(e *earlyPages, hps []hostPage) error {
	d := m.dev
	err := d.run(func() error {
		if err := d.sync(); err != nil { // the copies
			return err
		}
		for i := range hps {
			c, err := m.checkPage(&hps[i].a, hps[i].shape, &m.fs.frames[i].desc, m.ref.Alpha.Size, m.opts.MinLen)
			if err != nil {
				return err
			}
			hps[i].c = c
		}
		return nil
	})
	if serr := e.sums(); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	m.pages = hps
	m.fs.resident = true
	return nil
}
