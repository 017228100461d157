//go:build amd64 && !purego

package cpu

import "unsafe"

// The serial scans in assembly (sais_serial_amd64.s).

//go:noescape
func serialL8(a *serialArgs)

//go:noescape
func serialL32(a *serialArgs)

//go:noescape
func serialR8(a *serialArgs)

//go:noescape
func serialR32(a *serialArgs)

//go:noescape
func serialFL8(a *serialArgs)

//go:noescape
func serialFL32(a *serialArgs)

//go:noescape
func serialFR8(a *serialArgs)

//go:noescape
func serialFR32(a *serialArgs)

//go:noescape
func serialFLB8(a *serialArgs)

//go:noescape
func serialFRB8(a *serialArgs)

//go:noescape
func serialLW8(a *serialArgs)

//go:noescape
func serialRW8(a *serialArgs)

func serialLW[T symbol](a *serialArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		serialLW8(a)
	} else {
		serialLWGo[T](a)
	}
}

func serialRW[T symbol](a *serialArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		serialRW8(a)
	} else {
		serialRWGo[T](a)
	}
}

//go:noescape
func serialLBig32(a *serialArgs)

//go:noescape
func serialRBig32(a *serialArgs)

//go:noescape
func serialFLBig32(a *serialArgs)

//go:noescape
func serialFRBig32(a *serialArgs)

// serialBig is the serial scan of kind for large alphabets (int32 texts), which asks ahead for
// the bucket pointers too.
func serialBig(a *serialArgs, kind int) {
	switch kind {
	case scanL:
		serialLBig32(a)
	case scanR:
		serialRBig32(a)
	case scanFL:
		serialFLBig32(a)
	default:
		serialFRBig32(a)
	}
}

func serialL[T symbol](a *serialArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		serialL8(a)
	} else {
		serialL32(a)
	}
}

func serialR[T symbol](a *serialArgs) {
	var z T
	if unsafe.Sizeof(z) == 1 {
		serialR8(a)
	} else {
		serialR32(a)
	}
}

func serialFL[T symbol](a *serialArgs, branchless bool) {
	var z T
	if unsafe.Sizeof(z) == 1 && branchless {
		serialFLB8(a)
	} else if unsafe.Sizeof(z) == 1 {
		serialFL8(a)
	} else {
		serialFL32(a)
	}
}

func serialFR[T symbol](a *serialArgs, branchless bool) {
	var z T
	if unsafe.Sizeof(z) == 1 && branchless {
		serialFRB8(a)
	} else if unsafe.Sizeof(z) == 1 {
		serialFR8(a)
	} else {
		serialFR32(a)
	}
}
