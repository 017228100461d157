//go:build !amd64 || purego

package kernels

// fillVector is Fill's vector path, on processors without one: nothing done.
func (e *QueryEncoder) fillVector(dst, seq []byte, reverse bool) int { return 0 }

// vectorUsable reports whether fillVector can do anything: never here.
func (e *QueryEncoder) vectorUsable() bool { return false }
