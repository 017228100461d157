//go:build amd64 && !purego

#include "textflag.h"

// Each function takes dst, src, n and a *fillTables: 16 bytes of codes by low nibble, 16 bytes of
// the lower-case letter each low nibble stands for (0 where none), 32 bytes of the byte order
// that reverses each 128-bit lane. It encodes the 32-byte blocks of src from the start while every
// byte b of the block has (b|0x20) == letter[b&15], and returns the bytes done.

// func fillForwardAVX2(dst, src *byte, n int, t *fillTables) int
TEXT ·fillForwardAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ t+24(FP), DX
	VBROADCASTI128 (DX), Y4   // codes
	VBROADCASTI128 16(DX), Y5 // letters
	MOVL $0x0f0f0f0f, R9
	MOVQ R9, X6
	VPBROADCASTD X6, Y6
	MOVL $0x20202020, R9
	MOVQ R9, X7
	VPBROADCASTD X7, Y7
	XORQ AX, AX

fwdloop:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JA   fwddone
	VMOVDQU (SI)(AX*1), Y0
	VPAND   Y6, Y0, Y1     // low nibbles
	VPOR    Y7, Y0, Y2     // lower case
	VPSHUFB Y1, Y5, Y3     // the letter each nibble stands for
	VPCMPEQB Y3, Y2, Y3
	VPMOVMSKB Y3, R8
	CMPL    R8, $0xffffffff
	JNE     fwddone
	VPSHUFB Y1, Y4, Y0     // codes
	VMOVDQU Y0, (DI)(AX*1)
	MOVQ    BX, AX
	JMP     fwdloop

fwddone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// func fillReverseAVX2(dst, src *byte, n int, t *fillTables) int
// The block at src+i lands reversed at dst+n-32-i.
TEXT ·fillReverseAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ t+24(FP), DX
	VBROADCASTI128 (DX), Y4
	VBROADCASTI128 16(DX), Y5
	VMOVDQU 32(DX), Y8        // reverses each lane
	MOVL $0x0f0f0f0f, R9
	MOVQ R9, X6
	VPBROADCASTD X6, Y6
	MOVL $0x20202020, R9
	MOVQ R9, X7
	VPBROADCASTD X7, Y7
	LEAQ -32(DI)(CX*1), DI    // where the first block lands
	XORQ AX, AX

revloop:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JA   revdone
	VMOVDQU (SI)(AX*1), Y0
	VPAND   Y6, Y0, Y1
	VPOR    Y7, Y0, Y2
	VPSHUFB Y1, Y5, Y3
	VPCMPEQB Y3, Y2, Y3
	VPMOVMSKB Y3, R8
	CMPL    R8, $0xffffffff
	JNE     revdone
	VPSHUFB Y1, Y4, Y0
	VPSHUFB Y8, Y0, Y0     // each lane reversed
	VPERMQ  $0x4e, Y0, Y0  // and the lanes swapped
	VMOVDQU Y0, (DI)
	SUBQ    $32, DI
	MOVQ    BX, AX
	JMP     revloop

revdone:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
