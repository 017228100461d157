//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

var vecFill = cpu.X86.HasAVX2

// fillFwdAVX2 encodes the whole 32-byte blocks of src[:n] into dst by t, up to the first block
// holding a byte that t does not take; it returns the bytes encoded (encode_amd64.s).
//
//go:noescape
func fillFwdAVX2(dst, src *byte, n int, t *vecTables) int

// fillRevAVX2 is fillFwdAVX2 for the reverse strand: src's block at j goes, reversed and by t's
// complement codes, to dst[n-32-j : n-j].
//
//go:noescape
func fillRevAVX2(dst, src *byte, n int, t *vecTables) int

// fillFwdVec encodes the leading blocks of src into dst (len(dst) >= len(src) >= 32).
func fillFwdVec(dst, src []byte, t *vecTables) int {
	_ = dst[len(src)-1]
	return fillFwdAVX2(&dst[0], &src[0], len(src), t)
}

// fillRevVec encodes the leading blocks of src, reversed, into the end of dst
// (len(dst) == len(src) >= 32).
func fillRevVec(dst, src []byte, t *vecTables) int {
	_ = dst[len(src)-1]
	return fillRevAVX2(&dst[0], &src[0], len(src), t)
}
