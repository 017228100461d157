//go:build amd64 && !purego

package formats

import "golang.org/x/sys/cpu"

// lowRunAVX2 returns the index of the first byte below 0x21 (where all white space is) among the
// whole 32-byte blocks of p[:n], or the bytes of those blocks when there is none (space_amd64.s).
//
//go:noescape
func lowRunAVX2(p *byte, n int) int

var useAVX2 = cpu.X86.HasAVX2

// lowRun is lowRunAVX2 where the processor has it, else 0 (nothing skipped).
func lowRun(b []byte) int {
	if !useAVX2 || len(b) < 32 {
		return 0
	}
	return lowRunAVX2(&b[0], len(b))
}
