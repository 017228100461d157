//go:build amd64 && !purego

package cpu

import "unsafe"

// The kernels in assembly (sais_kernels_amd64.s); the build tag purego leaves them out.

//go:noescape
func gatherL8(a *scanArgs)

//go:noescape
func gatherL32(a *scanArgs)

//go:noescape
func gatherR8(a *scanArgs)

//go:noescape
func gatherR32(a *scanArgs)

//go:noescape
func gatherFL8(a *scanArgs)

//go:noescape
func gatherFL32(a *scanArgs)

//go:noescape
func gatherFR8(a *scanArgs)

//go:noescape
func gatherFR32(a *scanArgs)

//go:noescape
func gatherLW8(a *scanArgs)

//go:noescape
func gatherRW8(a *scanArgs)

// gatherLW and gatherRW are the gathers for wide entries (texts of 2^30 bytes or more), which are
// bytes; a reduced string is never that long.
func gatherLW[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherLW8(a)
	} else {
		gatherLWGo[T](a)
	}
}

func gatherRW[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherRW8(a)
	} else {
		gatherRWGo[T](a)
	}
}

func gatherL[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherL8(a)
	} else {
		gatherL32(a)
	}
}

func gatherR[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherR8(a)
	} else {
		gatherR32(a)
	}
}

func gatherFL[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherFL8(a)
	} else {
		gatherFL32(a)
	}
}

func gatherFR[T symbol](a *scanArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherFR8(a)
	} else {
		gatherFR32(a)
	}
}

//go:noescape
func placeL(a *placeArgs)

//go:noescape
func placeR(a *placeArgs)

//go:noescape
func placeFL(a *placeArgs)

//go:noescape
func placeFR(a *placeArgs)

//go:noescape
func countKinds8(a *textArgs)

//go:noescape
func countKinds32(a *textArgs)

//go:noescape
func placeLMS8(a *textArgs)

//go:noescape
func placeLMS32(a *textArgs)

//go:noescape
func gatherLMS8(a *textArgs)

//go:noescape
func gatherLMS32(a *textArgs)

func countKindsK[T symbol](a *textArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		countKindsVector(a)
	} else {
		countKindsVector32(a)
	}
}

func placeLMSK[T symbol](a *textArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		placeLMSVector(a)
	} else {
		placeLMSVector32(a)
	}
}

func gatherLMSK[T symbol](a *textArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		gatherLMSVector(a)
	} else {
		gatherLMSVector32(a)
	}
}

//go:noescape
func nameRun(run, names []int32, name int32) int32

//go:noescape
func mapRun(run, s1 []int32)

//go:noescape
func compactNames(s []int32) int

//go:noescape
func shiftMarks(run []int32)

// prefetchIdx asks for the line of base + ((v&0x7fffffff)>>rshift)<<lshift for each entry v.
//
//go:noescape
func prefetchIdx(base unsafe.Pointer, v []int32, rshift, lshift uint)
