// Package bytecount counts byte values, for the packages on both sides of a transform: the LZP
// pass of formats/bwz (which picks the rarest byte as its escape) and the inverse transform of
// kernels/cpu (which places each byte in its bucket of rows).
package bytecount

// Of counts each byte value of b. Four tables take turns, so that a run of one byte (a transform
// is mostly runs) does not make each count wait for the one before it to be written back: 76 ->
// 38 ms for the Linux tar's 72 MB transform.
func Of(b []byte) (count [256]uint32) {
	var c [4][256]uint32
	for len(b) >= 4 {
		c[0][b[0]]++
		c[1][b[1]]++
		c[2][b[2]]++
		c[3][b[3]]++
		b = b[4:]
	}
	for _, x := range b {
		c[0][x]++
	}
	for i := range count {
		count[i] = c[0][i] + c[1][i] + c[2][i] + c[3][i]
	}
	return count
}
