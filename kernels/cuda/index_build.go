package cuda

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// The pages of an index file (sapipe index) built whole on the device: the suffix array, the LCP
// with its side table and block minima, the rank structure (match_build.go's buildPageOn, the
// matcher's own page build) and the table of k-mers (pb_kmers), then copied back into host memory
// as kernels/cpu's arrays, identical to cpu.NewPageFromSAKmers's. The host then only checks them
// (cpu.LoadPage), where building the rank structure and the LCP from the suffix array took it most
// of a minute a billion bases on 16 cores.

// indexPageNeed is the least device memory that IndexPage needs for a window of n codes < sigma
// at its peak (buildPageOn's lean order): the window and its suffix array, then the larger of the
// suffix array's construction in slices (slicedLeastBytes; sa.go's, about 62 bytes a base, where
// the card has that) and the LCP's arrays with the page's frame (the permuted LCP, and a side
// table of a sixteenth of the rows). The k-mer table comes after and takes less.
func indexPageNeed(n, sigma int) uint64 {
	fixed := uint64(n+16) + uint64(4*(n+1))
	sa := slicedLeastBytes(n)
	s := pageShape{end: n, winEnd: n, n: n, nBig: n / 16}
	s.occShape(max(sigma, 2))
	lcp := uint64(4*n) + pageBytes(s)
	return fixed + max(sa, lcp)
}

// indexPageBytes is indexPageNeed with budget's margins.
func indexPageBytes(n, sigma int) uint64 {
	need := indexPageNeed(n, sigma)
	return need + need/32 + (64 << 20)
}

// MaxIndexPage returns the longest window whose whole index IndexPage can build on the GPU with
// the memory free now.
func (b *Backend) MaxIndexPage(sigma int) int {
	return b.longestFitting(func(n int) uint64 { return indexPageBytes(n, sigma) })
}

// IndexPage builds the index of the window text[start:winEnd] (codes < sigma), owning [start,
// end), with its table of k-mers of length k (none for k 0), on the GPU. A window too large for
// the memory left, or one whose repeats are too long for the device's LCP, is built as before
// (its suffix array on the GPU where it fits, the rest on the host), with a note.
func (b *Backend) IndexPage(text []byte, sigma, start, end, winEnd, k, threads int) (*cpu.Page, *cpu.KmerTable, error) {
	threads = max(threads, 1)
	var a cpu.PageArrays
	var rows []int32
	err := errTiny
	if winEnd-start >= 2 {
		a, rows, err = b.indexPageArrays(text, sigma, start, end, winEnd, k)
	}
	if err == errTiny || errors.Is(err, errRepetitive) || isOutOfMemory(err) {
		if err != errTiny {
			b.note(fmt.Sprintf("page [%d, %d): rank structure and LCP built on the host: %v", start, winEnd, err))
		}
		p, kt, _, err := cpu.NewPageSorted(b.SuffixArray, text, sigma, start, end, winEnd, k, threads)
		return p, kt, err
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := cpu.LoadPage(text, sigma, start, end, winEnd, a, threads)
	if err != nil {
		return nil, nil, fmt.Errorf("page built on %s: %w", b.Name(), err)
	}
	kt, err := cpu.LoadKmerTable(k, sigma, rows, nil, winEnd-start+1)
	if err != nil {
		return nil, nil, fmt.Errorf("k-mer table built on %s: %w", b.Name(), err)
	}
	return p, kt, nil
}

// errTiny: a window of one code, whose page the host builds at once.
var errTiny = errors.New("window of one code")

// indexPageArrays builds the page on the device and copies its arrays back.
func (b *Backend) indexPageArrays(text []byte, sigma, start, end, winEnd, k int) (cpu.PageArrays, []int32, error) {
	d := b.dev
	n := winEnd - start
	var a cpu.PageArrays
	var rows []int32
	if err := d.run(func() error { // before the window is copied up for nothing
		avail, err := d.roomNow()
		if need := indexPageBytes(n, sigma); err == nil && need > avail {
			err = fmt.Errorf("%w: a window of %d codes needs %d MiB, %d MiB free", errNoRoom, n, need>>20, avail>>20)
		}
		return err
	}); err != nil {
		return a, nil, err
	}
	var win devBuf
	f := &frame{page: -1}
	defer func() {
		_ = d.run(func() error {
			win.free(d)
			f.mem.free(d)
			return nil
		})
	}()
	if err := d.run(func() error {
		if err := win.ensureExact(d, uint64(n)+16); err != nil {
			return err
		}
		if err := d.copyIn(win.p, text[start:winEnd]); err != nil {
			return err
		}
		return d.sync()
	}); err != nil {
		return a, nil, err
	}
	// The device text is the window: the page reads nothing before start or past winEnd.
	shape, err := buildPageOn(d, f, text, win.p-devPtr(start), sigma, 1, start, end, winEnd, true)
	if err != nil {
		return a, nil, err
	}
	min1, min2 := shape.lcpBlocks()
	a = cpu.PageArrays{
		SA: make([]int32, n+1), LCPBytes: make([]byte, n+2), LCPRows: make([]int32, shape.nBig), LCPValues: make([]int32, shape.nBig),
		LCPMin1: make([]int32, min1), LCPMin2: make([]int32, min2), Occ: make([]uint64, shape.occWords),
	}
	entries := 0
	if base := sigma - kernels.FirstCode; k > 0 && base > 0 {
		entries = 1
		for range k {
			entries *= base
		}
		rows = make([]int32, 2*entries)
	}
	err = d.run(func() error {
		desc := &f.desc
		if entries > 0 {
			var kb devBuf
			defer kb.free(d)
			if err := kb.ensure(d, uint64(8*entries)); err != nil {
				return err
			}
			if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(kb.p, 0, uint64(2*entries))); err != nil {
				return err
			}
			if err := d.launch("pb_kmers", ceilDiv(n+1, 256), 256, 0, desc.sa, win.p, uint32(n), uint32(k),
				uint32(sigma-kernels.FirstCode), kb.p); err != nil {
				return err
			}
			if err := d.copyOut(int32Bytes(rows), kb.p); err != nil {
				return err
			}
		}
		for _, cp := range []struct {
			dst []byte
			src devPtr
		}{
			{int32Bytes(a.SA), desc.sa}, {a.LCPBytes, desc.lcp}, {int32Bytes(a.LCPRows), desc.bigRow},
			{int32Bytes(a.LCPValues), desc.bigVal}, {int32Bytes(a.LCPMin1), desc.min1}, {int32Bytes(a.LCPMin2), desc.min2},
			{uint64Bytes(a.Occ), desc.occ},
		} {
			if err := d.copyOut(cp.dst, cp.src); err != nil {
				return err
			}
		}
		return nil
	})
	return a, rows, err
}

// uint64Bytes views s as bytes.
func uint64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s))
}

// MaxIndexPage returns the longest window every card can index now.
func (g *Group) MaxIndexPage(sigma int) int {
	most := kernels.MaxWindow
	for _, b := range g.cards {
		most = min(most, b.MaxIndexPage(sigma))
	}
	return most
}

// IndexPage builds a page's index on the first free card.
func (g *Group) IndexPage(text []byte, sigma, start, end, winEnd, k, threads int) (*cpu.Page, *cpu.KmerTable, error) {
	b := g.take()
	defer g.give(b)
	return b.IndexPage(text, sigma, start, end, winEnd, k, threads)
}
