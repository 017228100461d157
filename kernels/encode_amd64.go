//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// The query encoder's 32-byte blocks with AVX2 (encode_amd64.s): A, C, G, T and their lower
// case have four different low nibbles (1, 3, 7, 4), so one byte shuffle on the low nibble gives a
// block's codes and a second the letter each byte must be; a block holding any other byte (N,
// IUPAC codes, anything) is left to the table.

//go:noescape
func fillForwardAVX2(dst, src *byte, n int, t *fillTables) int

//go:noescape
func fillReverseAVX2(dst, src *byte, n int, t *fillTables) int

var useAVX2 = cpu.X86.HasAVX2

// fillVector encodes the leading whole blocks of seq that hold only a, c, g and t (either case)
// into dst as Fill does, and returns how many bytes of seq it did: a multiple of 32, stopping
// before the first block that holds another byte.
func (e *QueryEncoder) fillVector(dst, seq []byte, reverse bool) int {
	if !useAVX2 || !e.vec || len(seq) < 32 {
		return 0
	}
	if reverse {
		return fillReverseAVX2(&dst[0], &seq[0], len(seq), &e.revTab)
	}
	return fillForwardAVX2(&dst[0], &seq[0], len(seq), &e.fwdTab)
}

// vectorUsable reports whether fillVector can do anything for e.
func (e *QueryEncoder) vectorUsable() bool { return useAVX2 && e.vec }
