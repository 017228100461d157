//go:build !amd64 || purego

package cpu

// Without the assembly kernels (sais_kernels_amd64.s), the Go definitions run.

func serialL[T symbol](a *serialArgs)          { serialLGo[T](a) }
func serialR[T symbol](a *serialArgs)          { serialRGo[T](a) }
func serialFL[T symbol](a *serialArgs, _ bool) { serialFLGo[T](a) }
func serialFR[T symbol](a *serialArgs, _ bool) { serialFRGo[T](a) }
func serialLW[T symbol](a *serialArgs)         { serialLWGo[T](a) }
func serialRW[T symbol](a *serialArgs)         { serialRWGo[T](a) }

func serialBig(a *serialArgs, kind int) {
	switch kind {
	case scanL:
		serialLGo[int32](a)
	case scanR:
		serialRGo[int32](a)
	case scanFL:
		serialFLGo[int32](a)
	default:
		serialFRGo[int32](a)
	}
}
