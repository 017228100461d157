package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/sapipe/sapipe/kernels/cpu"
)

// Building a page's index on the device (page_build.cuh): its suffix array from the GPU suffix
// array (sa.go), then the LCP array, the compact LCP with its block minima, the deep bits and the
// rank structure, straight into the frame that keeps the page, identical to kernels/cpu's arrays.
// The CPU build (cpu.NewPage, copied up) remains for pages that are loaded in turn and for texts so
// repetitive that the chunked LCP would do too much work.

// errRepetitive reports a text whose LCP values are too long for the chunked LCP kernel.
var errRepetitive = errors.New("LCP values too long to compute in chunks")

// plcpChunk is the number of text positions one thread of pb_plcp handles; plcpCap bounds the
// comparison at the start of a chunk.
const (
	plcpChunk = 256
	plcpCap   = 1 << 16
)

// plcpLongCap bounds the second pass, over the chunks whose first value passed plcpCap (repeats
// of more than 64 Ki bases: segmental duplications, runs of N): each such chunk compares up to
// that many more symbols, so a run of one symbol of r bases costs about r*r/(2*plcpChunk) there.
// A text with a longer repeat (a run of N of many megabases) is built on the host, with a note. A
// variable, so that tests can lower it.
var plcpLongCap = uint32(1 << 21)

// buildKernels are the kernels of page_build.cuh.
var buildKernels = []string{"pb_phi", "pb_plcp", "pb_lcp_escapes", "pb_lcp_rows", "pb_block_min", "pb_occ_planes",
	"pb_occ_counts", "pb_copy_u32", "pb_kmers", "pb_big_start"}

// buildPage builds the index of the window text[start:winEnd], owning [start, end), into frame f
// (growing its memory to fit) and sets f.desc. The device text must be in place.
func (m *gpuMatcher) buildPage(f *frame, start, end, winEnd int) error {
	_, err := buildPageOn(m.dev, f, m.ref.Text, m.text.p, m.ref.Alpha.Size, m.opts.MinLen, start, end, winEnd, false)
	return err
}

// buildPageOn builds the index of the window text[start:winEnd] (codes < sigma), owning [start,
// end), into frame f (growing its memory to fit), sets f.desc and returns the page's shape. The
// text is at devText on the device (the window at devText+start, which is all that is read).
// minLen sets the deep bits. With lean set, the suffix array's construction memory is given back
// before the LCP's is taken, so that the build needs no more than the larger of the two: about 15
// bytes a base for the LCP's (the suffix array, the permuted LCP and the frame), and for the suffix
// array's as much as the card has, down to about 15 (sa.go's construction where it fits, else
// sa_sliced.go's).
func buildPageOn(d *device, f *frame, text []byte, devText devPtr, sigma, minLen, start, end, winEnd int, lean bool) (pageShape, error) {
	w := text[start:winEnd]
	n := len(w)
	t0 := time.Now()
	// The window's symbols are counted on the host while the device sorts its suffixes: on one
	// goroutine that was 50-75 ms of a 150 Mbp page's build before its first kernel.
	counted := make(chan [256]int, 1)
	go func() { counted <- cpu.CountCodes(w, max(runtime.GOMAXPROCS(0)/2, 1)) }()
	shape := pageShape{start: start, end: end, winEnd: winEnd, n: n}
	sigma = max(sigma, 2)
	shape.occShape(sigma)
	nb := shape.occWords / shape.stride
	syms := sigma - 2
	return shape, d.run(func() error {
		var dSA, dPhi, dEsc, dEscOff, dCnt, dCntOff, dSums, dTot, dFailed devBuf
		defer func() {
			for _, x := range []*devBuf{&dSA, &dPhi, &dEsc, &dEscOff, &dCnt, &dCntOff, &dSums, &dTot, &dFailed} {
				x.free(d)
			}
		}()
		rows := n + 2
		type sized struct {
			b *devBuf
			n int
		}
		lcpBlocks := ceilDiv(rows, 256)
		bufs := []sized{{&dSA, 4 * (n + 1)}, {&dPhi, 4 * n}, {&dEsc, 4 * lcpBlocks}, {&dEscOff, 4 * lcpBlocks},
			{&dCnt, 4 * syms * nb}, {&dCntOff, 4 * syms * nb}, {&dSums, 4 * (ceilDiv(max(lcpBlocks, syms*nb), scanTile) + 1)}, {&dTot, 16},
			{&dFailed, ceilDiv(n, plcpChunk) + 16}}
		alloc := func(bufs []sized) error {
			for _, x := range bufs {
				if err := x.b.ensureExact(d, uint64(x.n)); err != nil {
					return err
				}
			}
			return nil
		}
		first := bufs
		if lean {
			first = bufs[:1] // the suffix array's output only, for now
		}
		if err := alloc(first); err != nil {
			return err
		}
		scan := func(in, out devPtr, n int) (uint32, error) {
			tiles := ceilDiv(n, scanTile)
			if err := d.launch("scan_reduce", tiles, 256, 0, in, uint32(n), dSums.p); err != nil {
				return 0, err
			}
			if err := d.launch("scan_single", 1, 1024, 0, dSums.p, uint32(tiles), uint32(0), dTot.p); err != nil {
				return 0, err
			}
			if err := d.launch("scan_down", tiles, 256, 0, in, out, uint32(n), dSums.p); err != nil {
				return 0, err
			}
			var t uint32
			err := d.toHost(unsafe.Pointer(&t), dTot.p, 4)
			return t, err
		}
		// With SAPIPE_GPU_TRACE, the device's time for each step (waiting for it).
		traceStep := func(name string) error {
			if !traceOn {
				return nil
			}
			if err := d.sync(); err != nil {
				return err
			}
			trace("page: "+name, t0)
			return nil
		}
		wText := devText + devPtr(start)
		// The window's suffix array, with row 0 for the empty suffix (the value n), built from
		// the text already on the device and left there.
		if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(dSA.p, uint32(n), 1)); err != nil {
			return err
		}
		if n == 1 {
			if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(dSA.p+4, 0, 1)); err != nil {
				return err
			}
		} else if _, err := d.suffixArray(nil, nil, nil, nil, 0, nil, &saDevIO{text: wText, sa: dSA.p + 4, n: n}); err != nil {
			return err
		}
		trace("page: suffix array", t0)
		if lean {
			d.pool.release(d)
			if err := alloc(bufs[1:]); err != nil {
				return err
			}
		}
		if err := d.launch("pb_phi", ceilDiv(n, 256), 256, 0, dSA.p, uint32(n), dPhi.p); err != nil {
			return err
		}
		if err := traceStep("phi"); err != nil {
			return err
		}
		if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(dTot.p, 0, 4)); err != nil {
			return err
		}
		// Chunks whose first value passes plcpCap (repeats of over 64 Ki bases) are redone alone,
		// from that length on.
		for pass, c := range [][2]uint32{{plcpCap, 0}, {plcpLongCap, plcpCap}} {
			if err := d.launch("pb_plcp", ceilDiv(ceilDiv(n, plcpChunk), 128), 128, 0, wText, uint32(n), dPhi.p, uint32(plcpChunk),
				c[0], c[1], dFailed.p, uint32(pass), dTot.p+4); err != nil {
				return err
			}
			var tooLong uint32
			if err := d.toHost(unsafe.Pointer(&tooLong), dTot.p+4, 4); err != nil {
				return err
			}
			if tooLong == 0 {
				break
			}
			if pass == 1 {
				return errRepetitive
			}
			if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(dTot.p+4, 0, 1)); err != nil {
				return err
			}
		}
		if err := traceStep("permuted LCP"); err != nil {
			return err
		}
		if err := d.launch("pb_lcp_escapes", lcpBlocks, 256, 0, dSA.p, dPhi.p, uint32(n), dEsc.p); err != nil {
			return err
		}
		nBig, err := scan(dEsc.p, dEscOff.p, lcpBlocks)
		if err != nil {
			return err
		}
		shape.nBig = int(nBig)
		if err := traceStep("escapes counted"); err != nil {
			return err
		}
		if err := f.mem.ensureExact(d, pageBytes(shape)); err != nil {
			return err
		}
		if err := traceStep("frame allocated"); err != nil {
			return err
		}
		var desc pageDev
		cv := carver{next: f.mem.p}
		layoutPage(&cv, shape, devText, text, &desc)
		min1, min2 := shape.lcpBlocks()
		type step struct {
			name        string
			grid, block int
			args        []any
		}
		steps := []step{
			{"pb_copy_u32", ceilDiv(n+1, 256), 256, []any{dSA.p, uint32(n + 1), desc.sa}},
			{"pb_lcp_rows", lcpBlocks, 256, []any{dSA.p, dPhi.p, uint32(n), uint32(minLen), dEscOff.p, desc.lcp, desc.bigRow, desc.bigVal,
				desc.min1, desc.deep}},
			{"pb_block_min", ceilDiv(min2, 256), 256, []any{desc.min1, uint32(min1), desc.min2}},
		}
		// The levels above min2 (cpu.LCPUp), each from the one below.
		upLens, _ := shape.lcpUp()
		below, belowLen, out := desc.min2, min2, desc.up
		for _, l := range upLens {
			steps = append(steps, step{"pb_block_min", ceilDiv(l, 256), 256, []any{below, uint32(belowLen), out}})
			below, belowLen, out = out, l, out+devPtr(4*l)
		}
		for _, st := range steps {
			if err := d.launch(st.name, st.grid, st.block, 0, st.args...); err != nil {
				return err
			}
		}
		if err := d.fillBigStart(&desc, shape); err != nil {
			return err
		}
		if err := traceStep("suffix array copied, LCP rows and minima"); err != nil {
			return err
		}
		if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(desc.occ, 0, uint64(2*shape.occWords))); err != nil {
			return err
		}
		if err := d.launch("pb_occ_planes", nb, 128, 0, dSA.p, wText, uint32(n+1), uint32(nb), uint32(sigma), uint32(shape.planes),
			uint32(shape.counts), uint32(shape.stride), desc.occ, dCnt.p); err != nil {
			return err
		}
		if syms > 0 {
			if _, err := scan(dCnt.p, dCntOff.p, syms*nb); err != nil {
				return err
			}
			if err := d.launch("pb_occ_counts", ceilDiv(nb, 256), 256, 0, dCntOff.p, uint32(nb), uint32(sigma), uint32(shape.stride), desc.occ); err != nil {
				return err
			}
		}
		counts := <-counted
		var c [256]uint32
		c[0] = 1
		for x := 1; x < 256; x++ {
			c[x] = c[x-1] + uint32(counts[x-1])
		}
		if err := d.toDevice(desc.c, unsafe.Pointer(&c[0]), 4*256); err != nil {
			return err
		}
		if err := d.sync(); err != nil {
			return err
		}
		trace("page: LCP, rank structure and tables", t0)
		f.desc = desc
		return nil
	})
}

// buildResident builds every page on the device, one frame each. It reports errRepetitive (or a
// memory error) when the host should build them instead.
func (m *gpuMatcher) buildResident(bounds [][3]int) error {
	for i, bd := range bounds {
		f := &frame{page: i}
		m.fs.frames = append(m.fs.frames, f)
		if err := m.buildPage(f, bd[0], bd[1], bd[2]); err != nil {
			return fmt.Errorf("page %d: %w", i, err)
		}
	}
	// The suffix arrays' scratch memory is not needed for matching.
	return m.dev.run(func() error {
		m.dev.pool.release(m.dev)
		return nil
	})
}
