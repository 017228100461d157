//go:build amd64 && !purego

#include "textflag.h"

// The tables (vecTables): expect at 0, fwd at 16, rev at 32, backwards at 48, fold at 64.
// A byte b is taken when x = b | 0x20 equals expect[x & 15] (VPSHUFB gives 0 for x >= 0x80, and
// 0 is no x); its code is then the code table's entry at x & 15.
// No legacy SSE instruction may follow the first write of a Y register: on the lent H200 hosts'
// Xeons (AVX-512, in a virtual machine) one such (a MOVQ to X5 that set up fold) made each call
// take about 300 ns, six times the 256-entry tables' time (BenchmarkFill).

// func fillAVX2(dst, src *byte, n int, t *vecTables, rev bool) int
TEXT ·fillAVX2(SB), NOSPLIT, $0-48
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVQ    t+24(FP), DX
	MOVBLZX rev+32(FP), R11
	VBROADCASTI128 0(DX), Y6
	VBROADCASTI128 16(DX), Y7
	TESTQ   R11, R11
	JZ      ready
	VBROADCASTI128 32(DX), Y7

ready:
	VBROADCASTI128 48(DX), Y4
	VBROADCASTI128 64(DX), Y5
	XORQ    AX, AX

loop:
	LEAQ      32(AX), BX
	CMPQ      BX, CX
	JA        done
	VMOVDQU   (SI)(AX*1), Y0
	VPOR      Y5, Y0, Y0
	VPSHUFB   Y0, Y6, Y1
	VPCMPEQB  Y0, Y1, Y1
	VPMOVMSKB Y1, R8
	CMPL      R8, $0xffffffff
	JNE       done
	VPSHUFB   Y0, Y7, Y2
	TESTQ     R11, R11
	JNZ       back
	VMOVDQU   Y2, (DI)(AX*1)
	MOVQ      BX, AX
	JMP       loop

back:
	// The block reversed (within each lane, then the lanes swapped) lands at dst[n-32-j:n-j].
	VPSHUFB Y4, Y2, Y2
	VPERMQ  $0x4e, Y2, Y2
	MOVQ    CX, R10
	SUBQ    BX, R10
	VMOVDQU Y2, (DI)(R10*1)
	MOVQ    BX, AX
	JMP     loop

done:
	VZEROUPPER
	MOVQ AX, ret+40(FP)
	RET
