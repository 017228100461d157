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

// DeviceArrays returns the page's index arrays.
func (p *Page) DeviceArrays() DeviceArrays {
	return DeviceArrays{
		Start: p.Start, End: p.End, WinEnd: p.WinEnd, N: p.n,
		SA:  p.sa,
		LCP: p.lcp.small, LCPBigRow: p.lcp.bigRow, LCPBigVal: p.lcp.bigVal,
		LCPMin1: p.lcp.min1, LCPMin2: p.lcp.min2,
		Occ: p.occ.data, OccPlanes: p.occ.planes, OccCounts: p.occ.counts, OccStride: p.occ.stride,
		C:    p.c,
		Deep: p.deep,
	}
}
