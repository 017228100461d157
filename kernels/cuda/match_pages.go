package cuda

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// The reference on the device: its text, whole, and the index of each page (kernels/cpu's Page,
// built on the host and copied up). When every page fits the memory budget they stay resident;
// otherwise a few frames hold pages in turn, loaded when a batch needs them.

// pageDev is the kernels' PageDev (match.cuh): one page's index in device memory, passed to every
// kernel by value. Keep the two layouts the same.
type pageDev struct {
	text, sa, lcp, bigRow, bigVal, min1, min2, occ, deep, c, up devPtr
	bigStart                                                    devPtr // made on the device (fillBigStart)
	start                                                       uint64 // the window's first text position
	n, owned, tail, nBig                                        uint32 // tail: text after the window, capped at 2^32-1
	planes, counts, stride                                      uint32
	endRun, tailRun                                             uint32 // cpu.WindowRuns, tailRun capped at tail
	pad                                                         uint32
}

// pageShape is what the layout of a page's arrays depends on.
type pageShape struct {
	start, end, winEnd, n int // as in cpu.Page; n = winEnd - start
	nBig                  int // LCP values in the side table
	planes, counts        int // rank structure: bit planes and count words a block
	stride, occWords      int // words a rank block, and in all
}

// occShape fills the rank structure's part of s for an alphabet of sigma codes (cpu.NewOcc's layout).
func (s *pageShape) occShape(sigma int) {
	sigma = max(sigma, 2)
	s.planes = max(bits.Len(uint(sigma-1)), 1)
	s.counts = (max(sigma-kernels.FirstCode, 0) + 1) / 2
	s.stride = s.counts + 2*s.planes
	s.occWords = ((s.n+1)/cpu.OccBlockRows + 1) * s.stride
}

// lcpBlocks returns the lengths of the LCP's block minima (64 rows, then 64 blocks).
func (s *pageShape) lcpBlocks() (min1, min2 int) {
	min1 = (s.n + 2 + 63) / 64
	return min1, (min1 + 63) / 64
}

// bigBuckets is the length of the page's bigStart: a bucket of 2^bigBucket rows each, and one past
// the last row's.
func (s *pageShape) bigBuckets() int { return (s.n+2)>>bigBucket + 2 }

// bigBucket is match.cuh's MT_BIG_BUCKET.
const bigBucket = 10

// lcpUp returns the length of each level of block minima above min2 (cpu.LCPUp's, which holds
// them one after the other), and of them all.
func (s *pageShape) lcpUp() ([4]int, int) {
	_, min2 := s.lcpBlocks()
	return cpu.LCPUpLens(min2)
}

// hostPage is one page's index on the host, ready to copy up.
type hostPage struct {
	a     cpu.DeviceArrays
	c     [256]uint32
	shape pageShape
	bytes uint64 // device memory it takes, as layoutPage carves it
}

func newHostPage(p *cpu.Page) hostPage { return hostPageOf(p.DeviceArrays()) }

// hostPageOf is newHostPage of a page's arrays.
func hostPageOf(a cpu.DeviceArrays) hostPage {
	h := hostPage{a: a}
	for i, v := range h.a.C {
		h.c[i] = uint32(v)
	}
	h.shape = pageShape{start: a.Start, end: a.End, winEnd: a.WinEnd, n: a.N, nBig: len(a.LCPBigRow),
		planes: a.OccPlanes, counts: a.OccCounts, stride: a.OccStride, occWords: len(a.Occ)}
	h.bytes = pageBytes(h.shape)
	return h
}

// pageBytes is the device memory of a page of shape s.
func pageBytes(s pageShape) uint64 {
	var c carver
	layoutPage(&c, s, 0, nil, nil)
	return c.used
}

// layoutPage carves the arrays of a page of shape s from c and fills desc (text is the device
// text, whose codes on the host are hostText); with desc nil it only measures.
func layoutPage(c *carver, s pageShape, text devPtr, hostText []byte, desc *pageDev) {
	min1, min2 := s.lcpBlocks()
	sa := c.take(uint64(4 * (s.n + 1)))
	lcp := c.take(uint64(s.n + 2))
	bigRow := c.take(uint64(4 * s.nBig))
	bigVal := c.take(uint64(4 * s.nBig))
	m1 := c.take(uint64(4 * min1))
	m2 := c.take(uint64(4 * min2))
	occ := c.take(uint64(8 * s.occWords))
	deep := c.take(uint64(8 * min1))
	cc := c.take(4 * 256)
	_, upLen := s.lcpUp()
	up := c.take(uint64(4 * upLen))
	bigStart := c.take(uint64(4 * s.bigBuckets()))
	if desc == nil {
		return
	}
	tail := min(len(hostText)-s.winEnd, 1<<32-1)
	_, endRun, tailRun := cpu.WindowRuns(hostText, s.start, s.winEnd)
	*desc = pageDev{
		text: text, sa: sa, lcp: lcp, bigRow: bigRow, bigVal: bigVal, min1: m1, min2: m2, occ: occ, deep: deep, c: cc, up: up,
		bigStart: bigStart, start: uint64(s.start), n: uint32(s.n), owned: uint32(s.end - s.start), tail: uint32(tail),
		nBig:   uint32(s.nBig),
		planes: uint32(s.planes), counts: uint32(s.counts), stride: uint32(s.stride),
		endRun: uint32(endRun), tailRun: uint32(min(tailRun, tail)),
	}
}

// upload copies page h into device memory at base (of at least h.bytes) through the pinned ring
// and returns its descriptor; the copies may still be running (d.sync waits for them). Device
// goroutine only.
func (h *hostPage) upload(d *device, base devPtr, text devPtr, hostText []byte) (pageDev, error) {
	var desc pageDev
	c := carver{next: base}
	layoutPage(&c, h.shape, text, hostText, &desc)
	a := &h.a
	copies := []struct {
		dst devPtr
		src unsafe.Pointer
		n   int
	}{
		{desc.sa, ptrOf(a.SA), 4 * len(a.SA)},
		{desc.lcp, ptrOf(a.LCP), len(a.LCP)},
		{desc.bigRow, ptrOf(a.LCPBigRow), 4 * len(a.LCPBigRow)},
		{desc.bigVal, ptrOf(a.LCPBigVal), 4 * len(a.LCPBigVal)},
		{desc.min1, ptrOf(a.LCPMin1), 4 * len(a.LCPMin1)},
		{desc.min2, ptrOf(a.LCPMin2), 4 * len(a.LCPMin2)},
		{desc.occ, ptrOf(a.Occ), 8 * len(a.Occ)},
	}
	for _, cp := range copies {
		if err := d.copyInFrom(cp.dst, cp.src, cp.n); err != nil {
			return desc, err
		}
	}
	return desc, h.uploadMade(d, &desc)
}

// uploadMade copies what the host makes of page h besides the index file's arrays (the deep rows,
// C and the levels of LCP minima) into the page at desc, and makes its side table's buckets: the
// end of upload, and what follows the host's checks of an early page. Device goroutine only.
func (h *hostPage) uploadMade(d *device, desc *pageDev) error {
	a := &h.a
	for _, cp := range []struct {
		dst devPtr
		src unsafe.Pointer
		n   int
	}{
		{desc.deep, ptrOf(a.Deep), 8 * len(a.Deep)},
		{desc.c, unsafe.Pointer(&h.c[0]), 4 * 256},
		{desc.up, ptrOf(a.LCPUp), 4 * len(a.LCPUp)},
	} {
		if err := d.copyInFrom(cp.dst, cp.src, cp.n); err != nil {
			return err
		}
	}
	return d.fillBigStart(desc, h.shape)
}

// fillBigStart makes the page's bigStart from its side table's rows, which are on the device (or
// queued there before it). Every way a page reaches the device ends with it: upload, checkPage and
// the page build.
func (d *device) fillBigStart(desc *pageDev, s pageShape) error {
	nb := s.bigBuckets()
	return d.launch("pb_big_start", ceilDiv(nb, 256), 256, 0, desc.bigRow, uint32(s.nBig), desc.bigStart, uint32(nb))
}

// sameArrays reports whether a and b are the same memory (the arrays a page's upload copies,
// but C, Deep and LCPUp).
func sameArrays(a, b *cpu.DeviceArrays) bool {
	same := func(p, q unsafe.Pointer, lp, lq int) bool { return p == q && lp == lq }
	return same(ptrOf(a.SA), ptrOf(b.SA), len(a.SA), len(b.SA)) &&
		same(ptrOf(a.LCP), ptrOf(b.LCP), len(a.LCP), len(b.LCP)) &&
		same(ptrOf(a.LCPBigRow), ptrOf(b.LCPBigRow), len(a.LCPBigRow), len(b.LCPBigRow)) &&
		same(ptrOf(a.LCPBigVal), ptrOf(b.LCPBigVal), len(a.LCPBigVal), len(b.LCPBigVal)) &&
		same(ptrOf(a.LCPMin1), ptrOf(b.LCPMin1), len(a.LCPMin1), len(b.LCPMin1)) &&
		same(ptrOf(a.LCPMin2), ptrOf(b.LCPMin2), len(a.LCPMin2), len(b.LCPMin2)) &&
		same(ptrOf(a.Occ), ptrOf(b.Occ), len(a.Occ), len(b.Occ))
}

// ptrOf returns the address of a slice's first element, or nil for an empty slice.
func ptrOf[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// frame is device memory that holds one page at a time.
type frame struct {
	page    int // the page held, -1 for none
	refs    int // batches using it
	loading bool
	used    uint64 // when last acquired, for choosing a frame to reload
	mem     devBuf
	desc    pageDev
}

// frameSet hands out pages: all resident, or loaded into frames on demand.
type frameSet struct {
	resident bool
	mu       sync.Mutex
	cond     *sync.Cond
	frames   []*frame
	tick     uint64
	loads    int64 // page uploads after the start
}

// order returns the order in which a batch should visit the pages: those loaded first.
func (fs *frameSet) order(pages int) []int {
	o := make([]int, 0, pages)
	if fs.resident {
		for i := range pages {
			o = append(o, i)
		}
		return o
	}
	fs.mu.Lock()
	held := make([]bool, pages)
	for _, f := range fs.frames {
		if f.page >= 0 && !f.loading {
			held[f.page] = true
			o = append(o, f.page)
		}
	}
	fs.mu.Unlock()
	for i := range pages {
		if !held[i] {
			o = append(o, i)
		}
	}
	return o
}

// acquire returns a frame holding page i, loading it if no frame does (waiting for a frame that no
// batch uses). Call release when the device work that reads it is complete.
func (fs *frameSet) acquire(m *gpuMatcher, i int) (*frame, error) {
	if fs.resident {
		return fs.frames[i], nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for {
		var hit, free *frame
		for _, f := range fs.frames {
			if f.page == i {
				hit = f
				break
			}
			if f.refs == 0 && !f.loading && (free == nil || f.used < free.used) {
				free = f
			}
		}
		if hit != nil && !hit.loading {
			fs.tick++
			hit.refs++
			hit.used = fs.tick
			return hit, nil
		}
		if hit == nil && free != nil {
			fs.tick++
			free.page, free.refs, free.loading, free.used = i, 1, true, fs.tick
			fs.loads++
			fs.mu.Unlock()
			var desc pageDev
			err := m.dev.run(func() error {
				var err error
				if desc, err = m.pages[i].upload(m.dev, free.mem.p, m.text.p, m.ref.Text); err != nil {
					return err
				}
				return m.dev.sync() // the workers' streams do not wait for the ring's
			})
			fs.mu.Lock()
			free.loading = false
			free.desc = desc
			if err != nil {
				free.page, free.refs = -1, 0
			}
			fs.cond.Broadcast()
			return free, err
		}
		fs.cond.Wait()
	}
}

func (fs *frameSet) release(f *frame) {
	if fs.resident {
		return
	}
	fs.mu.Lock()
	f.refs--
	fs.cond.Broadcast()
	fs.mu.Unlock()
}
