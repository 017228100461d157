//go:build amd64 && !purego

#include "textflag.h"

// func maxUint32AVX2(p *int32, n int) uint32
// Four chains of VPMAXUD over 32 values a step, folded to one lane at the end. Only VEX
// instructions (see NOTES.md on the SSE/AVX transition), VZEROUPPER before returning.
TEXT ·maxUint32AVX2(SB), NOSPLIT, $0-20
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $5, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
loop:
	VPMAXUD (SI), Y0, Y0
	VPMAXUD 32(SI), Y1, Y1
	VPMAXUD 64(SI), Y2, Y2
	VPMAXUD 96(SI), Y3, Y3
	ADDQ $128, SI
	DECQ CX
	JNE loop
	VPMAXUD Y1, Y0, Y0
	VPMAXUD Y3, Y2, Y2
	VPMAXUD Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPMAXUD X1, X0, X0
	VMOVD X0, AX
	VZEROUPPER
	MOVL AX, ret+16(FP)
	RET
