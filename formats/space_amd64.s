//go:build amd64 && !purego

#include "textflag.h"

// func lowRunAVX2(p *byte, n int) int
// A byte b is low when min(b, 0x20) == b, unsigned.
TEXT ·lowRunAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x20202020, R9
	MOVQ R9, X7
	VPBROADCASTD X7, Y7
	XORQ AX, AX

loop:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JA   done
	VMOVDQU (SI)(AX*1), Y0
	VPMINUB Y7, Y0, Y1
	VPCMPEQB Y0, Y1, Y1
	VPMOVMSKB Y1, R8
	TESTL R8, R8
	JNZ  found
	MOVQ BX, AX
	JMP  loop

found:
	BSFL R8, R8
	ADDQ R8, AX

done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET
