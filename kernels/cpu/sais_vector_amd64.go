//go:build amd64 && !purego

package cpu

import "unsafe"

// The text passes of byte texts with AVX2 (sais_vector_amd64.s), where the processor has it: 32
// positions a block, their types from two compares and an addition, their LMS positions from a
// mask. Each kernel walks whole blocks and leaves the rest to the scalar kernel.

//go:noescape
func countKindsV8(a *textArgs)

//go:noescape
func placeLMSV8(a *textArgs)

//go:noescape
func gatherLMSV8(a *textArgs)

//go:noescape
func countKindsV32(a *textArgs)

//go:noescape
func placeLMSV32(a *textArgs)

//go:noescape
func gatherLMSV32(a *textArgs)

func hasAVX2() bool

var useAVX2 = hasAVX2()

// countKindsVector is countKinds8 with AVX2 for whole blocks, then the scalar kernel.
func countKindsVector(a *textArgs) {
	if useAVX2 {
		// The vector kernel counts LMS positions at 4a+1 and LS at 4a+2: its own table,
		// added in after.
		var tmp [4 * 256]int32
		v := *a
		v.tab = unsafe.Pointer(&tmp[0])
		countKindsV8(&v)
		cnt := unsafe.Slice((*int32)(a.tab), 4*256)
		for c := range 256 {
			cnt[4*c] += tmp[4*c]
			cnt[4*c+1] += tmp[4*c+2]
			cnt[4*c+2] += tmp[4*c+1]
			cnt[4*c+3] += tmp[4*c+3]
		}
		a.i, a.next, a.nextS = v.i, v.next, v.nextS
	}
	if a.i >= a.stop {
		countKinds8(a)
	}
}

func placeLMSVector(a *textArgs) {
	if useAVX2 {
		placeLMSV8(a)
	}
	if a.i >= a.stop {
		placeLMS8(a)
	}
}

func gatherLMSVector(a *textArgs) {
	if useAVX2 {
		gatherLMSV8(a)
	}
	if a.i >= a.stop && a.k > a.bottom {
		gatherLMS8(a)
	}
}

// The int32 passes (counts in the table's own layout): the counts and tails of a large alphabet
// (a.big) miss the caches, which the scalar kernels ask for ahead; those keep to them.
func countKindsVector32(a *textArgs) {
	if useAVX2 && a.big == 0 {
		countKindsV32(a)
	}
	if a.i >= a.stop {
		countKinds32(a)
	}
}

func placeLMSVector32(a *textArgs) {
	if useAVX2 && a.big == 0 {
		placeLMSV32(a)
	}
	if a.i >= a.stop {
		placeLMS32(a)
	}
}

func gatherLMSVector32(a *textArgs) {
	if useAVX2 {
		gatherLMSV32(a)
	}
	if a.i >= a.stop && a.k > a.bottom {
		gatherLMS32(a)
	}
}

// setVector turns the vector kernels off or back on (for the tests), if the processor has them,
// and reports whether it has.
func setVector(on bool) bool {
	useAVX2 = on && hasAVX2()
	return hasAVX2()
}
