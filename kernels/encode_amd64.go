//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

var vecFill = cpu.X86.HasAVX2

// fillAVX2 encodes the whole 32-byte blocks of src[:n] by t, up to the first block holding a byte
// that t does not take, and returns the bytes encoded (encode_amd64.s). The block at j goes to
// dst[j:j+32], or with rev, reversed and by t's complement codes, to dst[n-32-j:n-j].
//
//go:noescape
func fillAVX2(dst, src *byte, n int, t *vecTables, rev bool) int

// fillFwdVec encodes the leading blocks of src into dst (len(dst) >= len(src) >= 32).
func fillFwdVec(dst, src []byte, t *vecTables) int {
	_ = dst[len(src)-1]
	return fillAVX2(&dst[0], &src[0], len(src), t, false)
}

// fillRevVec encodes the leading blocks of src, reversed, into the end of dst
// (len(dst) == len(src) >= 32).
func fillRevVec(dst, src []byte, t *vecTables) int {
	_ = dst[len(src)-1]
	return fillAVX2(&dst[0], &src[0], len(src), t, true)
}
