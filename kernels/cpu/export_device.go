package cpu

// DeviceArrays is a Page's index as flat arrays, for a backend that copies it to a device and runs
// the same searches there (kernels/cuda matches against it with kernels that follow page.go, lcp.go,
// occ.go and lanes.go step for step). The slices share the page's memory: read them, never write.
type DeviceArrays struct {
	Start, End, WinEnd int // as in Page
	N                  int // window length, WinEnd-Start

	SA []int32 // N+1 rows; row 0 is the empty suffix

	LCP       []uint8 // N+2 rows; LCPEscape means the value is in LCPBigVal
	LCPBigRow []int32 // rows whose LCP is LCPEscape or more, ascending
	LCPBigVal []int32
	LCPMin1   []int32 // least LCP of each 64 rows
	LCPMin2   []int32 // least of each 64 LCPMin1 values
	LCPUp     []int32 // the levels above LCPMin2, each the least of 64 of the one below (LCPUp)

	Occ                             []uint64 // rank blocks of OccBlockRows rows (see Occ)
	OccPlanes, OccCounts, OccStride int      // bit planes, count words and words per block

	C    [256]int // C[x]: first row whose suffix starts with x
	Deep []uint64 // bit k: row k's LCP is at least the minimum match length (nil before NewMatcher)
}

// OccBlockRows and LCPEscape describe the layouts of DeviceArrays.Occ and DeviceArrays.LCP.
const (
	OccBlockRows = occBlock
	LCPEscape    = lcpEscape
)

// DeviceArrays returns the page's index arrays (without the LCP for a page loaded for searching
// only).
func (p *Page) DeviceArrays() DeviceArrays {
	a := DeviceArrays{
		Start: p.Start, End: p.End, WinEnd: p.WinEnd, N: p.n,
		SA:  p.sa,
		Occ: p.occ.data, OccPlanes: p.occ.planes, OccCounts: p.occ.counts, OccStride: p.occ.stride,
		C:    p.c,
		Deep: p.deep,
	}
	if l := p.lcp; l != nil {
		a.LCP, a.LCPBigRow, a.LCPBigVal, a.LCPMin1, a.LCPMin2, a.LCPUp = l.small, l.bigRow, l.bigVal, l.min1, l.min2, l.up
	}
	return a
}

// UncheckedDeviceArrays returns the arrays of an index file's page of the window [start, winEnd)
// owning [start, end), as LoadPage would give them (with the rank structure's layout for sigma
// codes) but unchecked, and without C, Deep and LCPUp, which LoadPage and NewMatcherFromPages make: for
// copying the arrays to a device while LoadPage checks them. Nothing may use the copies before it
// has returned the page.
func UncheckedDeviceArrays(start, end, winEnd, sigma int, a PageArrays) DeviceArrays {
	o := newOccLayout(max(sigma, 2))
	return DeviceArrays{
		Start: start, End: end, WinEnd: winEnd, N: winEnd - start,
		SA:  a.SA,
		LCP: a.LCPBytes, LCPBigRow: a.LCPRows, LCPBigVal: a.LCPValues,
		LCPMin1: a.LCPMin1, LCPMin2: a.LCPMin2,
		Occ: a.Occ, OccPlanes: o.planes, OccCounts: o.counts, OccStride: o.stride,
	}
}

// UncheckedDeviceIndex is Searcher.Device for an index file's page of window w (sigma codes, and
// K-mer table kmers of k-mers of kmerLen, or none) before LoadPage and LoadKmerTable check it, C
// aside: for copying it to a device while they do. Nothing may use the copy before they have
// returned.
func UncheckedDeviceIndex(w []byte, sigma int, a PageArrays, kmerLen int, kmers []int32) *DeviceIndex {
	o := newOccLayout(max(sigma, 2))
	d := &DeviceIndex{Text: w, SA: a.SA, Occ: a.Occ, Sigma: o.sigma, OccStride: o.stride, OccCounts: o.counts, OccPlanes: o.planes}
	if len(kmers) > 0 {
		d.KmerLen, d.Kmers = kmerLen, kmers
	}
	return d
}
