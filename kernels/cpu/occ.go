package cpu

import (
	"math/bits"
	"slices"

	"github.com/sapipe/sapipe/kernels"
)

// occBlock is the number of BWT rows covered by one block of the rank structure.
const occBlock = 128

// Occ answers rank queries on a BWT over a small alphabet: Rank(c, i) is the number of rows
// k < i whose BWT symbol is c. Each block of 128 rows stores the counts of the matchable symbols
// (codes >= kernels.FirstCode) before the block, two to a word, then the block's symbols as bit
// planes (bit t of each symbol in plane t, 128 bits a plane). For DNA (six codes: three planes,
// four counts) a block is exactly one 64-byte cache line, so a rank costs one memory access, and
// the structure takes half a byte per row.
type Occ struct {
	sigma  int
	planes int
	counts int      // words of counts per block
	stride int      // words per block
	data   []uint64 // blocks
}

// NewOcc builds the rank structure of bwt (symbols < sigma).
func NewOcc(bwt func(i int) byte, n, sigma int) *Occ { return NewOccThreads(bwt, n, sigma, 1) }

// NewOccThreads is NewOcc on up to threads goroutines: each fills the bit planes of a run of
// blocks and counts them from zero (bwt is read once a row, which for a BWT read through a suffix
// array is a random access each), then the counts of the runs before are added to each block.
func NewOccThreads(bwt func(i int) byte, n, sigma, threads int) *Occ {
	return newOccParts(func(_, i int) byte { return bwt(i) }, n, sigma, threads)
}

// newOccLayout is an Occ for an alphabet of sigma codes without its data: its bit planes, count
// words and words a block.
func newOccLayout(sigma int) *Occ {
	planes := max(bits.Len(uint(sigma-1)), 1)
	counts := (max(sigma-kernels.FirstCode, 0) + 1) / 2
	return &Occ{sigma: sigma, planes: planes, counts: counts, stride: counts + 2*planes}
}

// newOccParts is NewOccThreads with bwt told the part it is called for: a part is a run of
// consecutive rows, and bwt is called once a row, in increasing order within each part (parts run
// at once, on their own goroutines, numbered from 0).
func newOccParts(bwt func(t, i int) byte, n, sigma, threads int) *Occ {
	o := newOccLayout(sigma)
	planes := o.planes
	nb := n/occBlock + 1
	o.data = make([]uint64, nb*o.stride)
	parts := storeParts(nb, threads)
	totals := make([][]uint32, parts)
	storeParallel(nb, threads, func(t, lo, hi int) error {
		counts := make([]uint32, sigma)
		for b := lo; b < hi; b++ {
			blk := o.data[b*o.stride : (b+1)*o.stride]
			for c := kernels.FirstCode; c < sigma; c++ {
				k := c - kernels.FirstCode
				blk[k>>1] |= uint64(counts[c]) << (32 * (k & 1))
			}
			pl := blk[o.counts:]
			for k := 0; k < occBlock; k++ {
				i := b*occBlock + k
				if i >= n {
					break
				}
				c := bwt(t, i)
				counts[c]++
				for t := 0; t < planes; t++ {
					pl[2*t+k>>6] |= uint64((c>>t)&1) << (k & 63)
				}
			}
		}
		totals[t] = counts
		return nil
	})
	if parts > 1 {
		base := make([][]uint32, parts)
		run := make([]uint32, sigma)
		for t := range parts {
			base[t] = slices.Clone(run)
			for c, v := range totals[t] {
				run[c] += v
			}
		}
		storeParallel(nb, threads, func(t, lo, hi int) error {
			for b := lo; b < hi; b++ {
				blk := o.data[b*o.stride : (b+1)*o.stride]
				for c := kernels.FirstCode; c < sigma; c++ {
					k := c - kernels.FirstCode
					blk[k>>1] += uint64(base[t][c]) << (32 * (k & 1))
				}
			}
			return nil
		})
	}
	return o
}

// masks returns the bit masks of the rows of the block at offset base that hold symbol c.
func (o *Occ) masks(base int, c byte) (lo, hi uint64) {
	lo, hi = ^uint64(0), ^uint64(0)
	p := o.data[base+o.counts : base+o.stride]
	for t := 0; t < o.planes; t++ {
		a, b := p[2*t], p[2*t+1]
		if (c>>t)&1 == 0 {
			a, b = ^a, ^b
		}
		lo &= a
		hi &= b
	}
	return lo, hi
}

// blockMasks fills m[c], for every c below 1<<planes, with masks(base, c): the planes taken once
// each, every symbol's masks split from those of its lower bits.
func (o *Occ) blockMasks(base int, m *[256][2]uint64) {
	p := o.data[base+o.counts : base+o.stride]
	m[0] = [2]uint64{^uint64(0), ^uint64(0)}
	n := 1
	for t := 0; t < o.planes; t++ {
		a, b := p[2*t], p[2*t+1]
		for c := n - 1; c >= 0; c-- {
			lo, hi := m[c][0], m[c][1]
			m[c+n] = [2]uint64{lo & a, hi & b}
			m[c] = [2]uint64{lo &^ a, hi &^ b}
		}
		n *= 2
	}
}

// Rank returns the number of rows k < i with BWT symbol c, for a matchable c
// (c >= kernels.FirstCode).
func (o *Occ) Rank(c byte, i int) int {
	base := (i / occBlock) * o.stride
	off := uint(i % occBlock)
	k := int(c) - kernels.FirstCode
	r := int(uint32(o.data[base+k>>1] >> (32 * (k & 1))))
	if off == 0 {
		return r
	}
	lo, hi := o.masks(base, c)
	if off < 64 {
		return r + bits.OnesCount64(lo&(uint64(1)<<off-1))
	}
	return r + bits.OnesCount64(lo) + bits.OnesCount64(hi&(uint64(1)<<(off-64)-1))
}

// Symbol returns the BWT symbol of row i.
func (o *Occ) Symbol(i int) byte {
	base := (i/occBlock)*o.stride + o.counts
	off := uint(i % occBlock)
	w := int(off >> 6)
	off &= 63
	var c byte
	for t := 0; t < o.planes; t++ {
		c |= byte((o.data[base+2*t+w]>>off)&1) << t
	}
	return c
}

// Bytes returns the memory the structure holds.
func (o *Occ) Bytes() int { return 8 * len(o.data) }

// otherBefore is the number of rows before block blk whose BWT symbol is not c (c matchable).
func (o *Occ) otherBefore(c byte, blk int) int {
	k := int(c) - kernels.FirstCode
	return blk*occBlock - int(uint32(o.data[blk*o.stride+k>>1]>>(32*(k&1))))
}

// SelectOther returns the row of the t-th row (from 0, counted from row 0) whose BWT symbol is not
// c (c matchable), which must exist, looking from block blk on (at or before the row's): the
// block by galloping then bisecting on the blocks' counts, then the row in it from its bit
// planes.
func (o *Occ) SelectOther(c byte, t, blk int) int {
	nb := len(o.data) / o.stride
	lo, hi := blk, nb
	for step := 1; ; step *= 2 {
		b := lo + step
		if b >= nb || o.otherBefore(c, b) > t {
			hi = min(b, nb)
			break
		}
		lo = b
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if o.otherBefore(c, mid) <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	r := t - o.otherBefore(c, lo)
	ml, mh := o.masks(lo*o.stride, c)
	w := ^ml
	row := lo * occBlock
	if n := bits.OnesCount64(w); r >= n {
		r -= n
		w = ^mh
		row += 64
	}
	for ; r > 0; r-- {
		w &= w - 1
	}
	return row + bits.TrailingZeros64(w)
}
