package cpu

import "encoding/binary"

// Byte-wise comparisons eight bytes at a time (SIMD within a register), for the passes over the
// LCP bytes that opening an index and marking deep rows make over every row of a page: a byte loop
// with a branch a row took most of a 3.1 Gbp index's opening.

const (
	swarLow  = 0x0101010101010101
	swarHigh = 0x8080808080808080
	swarLow7 = 0x7f7f7f7f7f7f7f7f
)

// swarGE returns the high bit of each byte of x that is at least m, the other bits clear.
func swarGE(x uint64, m byte) uint64 {
	low7 := x & swarLow7
	if m < 128 {
		// low7 + 128 - m reaches 128 exactly when low7 >= m; no byte carries into the next.
		return (low7 + uint64(128-m)*swarLow | x) & swarHigh
	}
	// At least m >= 128: the high bit set and low7 >= m-128.
	return (low7 + uint64(256-int(m))*swarLow) & x & swarHigh
}

// swarEq returns the high bit of each byte of x that equals m, the other bits clear.
func swarEq(x uint64, m byte) uint64 {
	z := x ^ uint64(m)*swarLow // zero bytes where x's byte is m
	// (low 7 bits + 0x7f) sets the high bit for any nonzero low part; with z's own high bit,
	// every nonzero byte has it set. No carries cross bytes.
	return ^((z&swarLow7 + swarLow7) | z | swarLow7)
}

// swarBits gathers the high bits of x's bytes (as swarGE and swarEq leave them) into one byte:
// bit j for byte j (the j-th byte in memory of a little-endian load).
func swarBits(h uint64) uint64 {
	return ((h >> 7) * 0x0102040810204080) >> 56
}

// load8 reads 8 bytes of b from i, little-endian.
func load8(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }
