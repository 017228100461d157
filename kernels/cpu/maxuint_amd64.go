//go:build amd64 && !purego

package cpu

import "unsafe"

// maxUint32 is the largest of s's values as unsigned: 32 values a step with AVX2 (maxuint_amd64.s)
// where the processor has it, the rest by maxUint32Go. The suffix arrays' range checks of an index
// file run it over gigabytes.
func maxUint32(s []int32) uint32 {
	n := len(s) &^ 31
	if !useAVX2 || n == 0 {
		return maxUint32Go(s)
	}
	return max(maxUint32AVX2((*int32)(unsafe.Pointer(unsafe.SliceData(s))), n), maxUint32Go(s[n:]))
}

// maxUint32AVX2 is the largest of the n values at p as unsigned; n is a positive multiple of 32.
//
//go:noescape
func maxUint32AVX2(p *int32, n int) uint32
