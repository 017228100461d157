package cpu

import "math/bits"

// occBlock is the number of BWT rows covered by one block of the rank structure.
const occBlock = 64

// Occ answers rank queries on a BWT over a small alphabet: Rank(c, i) is the number of rows
// k < i whose BWT symbol is c. Each block of 64 rows stores the counts of every symbol before the
// block and the block's symbols as bit planes (bit t of each symbol in plane t), so a query is
// one count load plus a few AND/NOT and one popcount, all in one or two cache lines.
type Occ struct {
	sigma  int
	planes int
	stride int      // uint32 words per block: sigma counts, then 2*planes words of planes
	data   []uint32 // blocks
}

// NewOcc builds the rank structure of bwt (symbols < sigma).
func NewOcc(bwt func(i int) byte, n, sigma int) *Occ {
	planes := bits.Len(uint(sigma - 1))
	if planes == 0 {
		planes = 1
	}
	o := &Occ{sigma: sigma, planes: planes}
	o.stride = sigma + 2*planes
	nb := n/occBlock + 1
	o.data = make([]uint32, nb*o.stride)
	counts := make([]uint32, sigma)
	for b := 0; b < nb; b++ {
		blk := o.data[b*o.stride : (b+1)*o.stride]
		copy(blk, counts)
		var pl [8]uint64
		for k := 0; k < occBlock; k++ {
			i := b*occBlock + k
			if i >= n {
				break
			}
			c := bwt(i)
			counts[c]++
			for t := 0; t < planes; t++ {
				pl[t] |= uint64((c>>t)&1) << k
			}
		}
		for t := 0; t < planes; t++ {
			blk[sigma+2*t] = uint32(pl[t])
			blk[sigma+2*t+1] = uint32(pl[t] >> 32)
		}
	}
	return o
}

// mask returns the bit mask of the rows of block blk that hold symbol c.
func (o *Occ) mask(blk []uint32, c byte) uint64 {
	m := ^uint64(0)
	p := blk[o.sigma:]
	for t := 0; t < o.planes; t++ {
		w := uint64(p[2*t]) | uint64(p[2*t+1])<<32
		if (c>>t)&1 == 0 {
			w = ^w
		}
		m &= w
	}
	return m
}

// Rank returns the number of rows k < i with BWT symbol c.
func (o *Occ) Rank(c byte, i int) int {
	b, off := i/occBlock, uint(i%occBlock)
	blk := o.data[b*o.stride : (b+1)*o.stride]
	r := int(blk[c])
	if off != 0 {
		r += bits.OnesCount64(o.mask(blk, c) & (uint64(1)<<off - 1))
	}
	return r
}

// Symbol returns the BWT symbol of row i.
func (o *Occ) Symbol(i int) byte {
	b, off := i/occBlock, uint(i%occBlock)
	p := o.data[b*o.stride+o.sigma:]
	var c byte
	for t := 0; t < o.planes; t++ {
		w := uint64(p[2*t]) | uint64(p[2*t+1])<<32
		c |= byte((w>>off)&1) << t
	}
	return c
}

// Bytes returns the memory the structure holds.
func (o *Occ) Bytes() int { return 4 * len(o.data) }
