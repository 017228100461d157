//go:build amd64 && !purego

#include "textflag.h"

// The text passes of a byte text, 32 positions at a time with AVX2 (sais_vector_amd64.go). The
// types of 32 positions come from two compares and one addition: with the bytes reversed (bit j
// for position b+31-j), a position is S-type when it is smaller than the next, or equal to it and
// the next is S-type, which is the carry out of bit j when adding lt to ge (lt generates a carry,
// eq propagates it, gt kills it) with the type of position b+32 carried in. No chain of dependent
// compares position by position, and the LMS positions come out as a mask.

DATA revbytes<>+0(SB)/8, $0x08090a0b0c0d0e0f
DATA revbytes<>+8(SB)/8, $0x0001020304050607
DATA revbytes<>+16(SB)/8, $0x08090a0b0c0d0e0f
DATA revbytes<>+24(SB)/8, $0x0001020304050607
GLOBL revbytes<>(SB), RODATA|NOPTR, $32

// TYPES32 leaves in R13 the types of positions CX..CX+31 (bit j: position CX+31-j, 1 for S-type)
// and in R9 the types of CX+1..CX+32 (the same, shifted, with R8, the type of CX+32, at bit 0),
// and sets R8 to the type of CX. SI is the text, Y7 the byte reversal. AX BX R11 scratch.
#define TYPES32 \
	VMOVDQU (SI)(CX*1), Y0; \
	VMOVDQU 1(SI)(CX*1), Y1; \
	VPSHUFB Y7, Y0, Y0; VPERMQ $0x4E, Y0, Y0; \
	VPSHUFB Y7, Y1, Y1; VPERMQ $0x4E, Y1, Y1; \
	VPCMPEQB Y1, Y0, Y2; \
	VPMAXUB Y1, Y0, Y3; VPCMPEQB Y3, Y1, Y3; \
	VPMOVMSKB Y2, AX; \
	VPMOVMSKB Y3, BX; \
	MOVL AX, R11; NOTL R11; ANDL BX, R11; \
	LEAQ (BX)(R11*1), R13; ADDQ R8, R13; XORQ BX, R13; XORQ R11, R13; SHRQ $1, R13; \
	LEAQ (R8)(R13*2), R9; \
	MOVQ R13, R8; SHRQ $31, R8

// textArgs: t 0, i 8, stop 16, next 24, nextS 28, tab 32, sa 40, trash 48, k 52, big 56, bottom 60.
// Each kernel walks blocks of 32 positions i from a.i down while the block's lowest is at least
// a.stop, and leaves a.i, a.next, a.nextS for the scalar kernel to go on from.

#define VSETUP \
	MOVQ a+0(FP), R10; \
	MOVQ 0(R10), SI; \
	MOVQ 8(R10), CX; \
	MOVQ 16(R10), R12; \
	MOVL 28(R10), R8; \
	VMOVDQU revbytes<>(SB), Y7; \
	SUBQ $31, CX

#define VFINISH \
	ADDQ $31, CX; \
	MOVQ CX, 8(R10); \
	MOVBLZX 1(SI)(CX*1), AX; \
	MOVL AX, 24(R10); \
	MOVL R8, 28(R10); \
	VZEROUPPER; \
	RET

// One position of countKindsV8: x = DX (walking down), its kind bits at the bottom of R9 (type of
// x, then of x-1): cnt[4*t[x] + kind] += 1, in the layout LL, LMS, LS, S (the caller swaps).
#define COUNT1 \
	MOVBLZX (DX), AX; MOVL R9, BX; ANDL $3, BX; LEAL (BX)(AX*4), AX; INCL (DI)(AX*4); SHRQ $1, R9; DECQ DX
#define COUNT4 COUNT1; COUNT1; COUNT1; COUNT1

// func countKindsV8(a *textArgs)
TEXT ·countKindsV8(SB), NOSPLIT, $0-8
	VSETUP
	MOVQ 32(R10), DI
	CMPQ CX, R12
	JLT cdone
cloop:
	TYPES32
	LEAQ 32(SI)(CX*1), DX
	COUNT4; COUNT4; COUNT4; COUNT4; COUNT4; COUNT4; COUNT4; COUNT4
	SUBQ $32, CX
	CMPQ CX, R12
	JGE cloop
cdone:
	VFINISH

// func placeLMSV8(a *textArgs)
// The LMS positions of the block (bit j: x = CX+32-j is S-type and x-1 L-type) go to their
// buckets' tails, x going down. tab is tail (DI), sa DX.
TEXT ·placeLMSV8(SB), NOSPLIT, $0-8
	VSETUP
	MOVQ 32(R10), DI
	MOVQ 40(R10), DX
	CMPQ CX, R12
	JLT pdone
ploop:
	TYPES32
	ANDNQ R9, R13, R9
	MOVL R9, R9
	TESTQ R9, R9
	JEQ pnext
pbit:
	BSFQ R9, AX
	LEAQ -1(R9), BX; ANDQ BX, R9
	NEGQ AX; LEAQ 32(CX)(AX*1), AX
	MOVBLZX (SI)(AX*1), BX
	MOVL (DI)(BX*4), R11; DECL R11; MOVL R11, (DI)(BX*4)
	MOVL AX, (DX)(R11*4)
	TESTQ R9, R9
	JNE pbit
pnext:
	SUBQ $32, CX
	CMPQ CX, R12
	JGE ploop
pdone:
	VFINISH

// func gatherLMSV8(a *textArgs)
// The LMS positions of the block go to sa[k-1], k going down (sa DI, k DX).
TEXT ·gatherLMSV8(SB), NOSPLIT, $0-8
	VSETUP
	MOVQ 40(R10), DI
	MOVL 52(R10), DX
	CMPL DX, 60(R10)
	JLE gdone
	CMPQ CX, R12
	JLT gdone
gloop:
	TYPES32
	ANDNQ R9, R13, R9
	MOVL R9, R9
	TESTQ R9, R9
	JEQ gnext
gbit:
	BSFQ R9, AX
	LEAQ -1(R9), BX; ANDQ BX, R9
	NEGQ AX; LEAQ 32(CX)(AX*1), AX
	DECL DX
	MOVL AX, (DI)(DX*4)
	CMPL DX, 60(R10)
	JLE gfull
	TESTQ R9, R9
	JNE gbit
gnext:
	SUBQ $32, CX
	CMPQ CX, R12
	JGE gloop
gdone:
	MOVL DX, 52(R10)
	VFINISH
gfull:
	// The stretch is full at LMS position x (AX): stop there, as the scalar kernel would,
	// with i = x-2 and the symbol and type (L) of x-1 after it.
	MOVL DX, 52(R10)
	LEAQ -2(AX), CX
	MOVQ CX, 8(R10)
	MOVBLZX 1(SI)(CX*1), AX
	MOVL AX, 24(R10)
	MOVL $0, 28(R10)
	VZEROUPPER
	RET

// The same for int32 texts (names, below 2^31): 8 symbols a register, reversed by VPERMD (Y6),
// the masks put together in reverse order.
DATA revdwords<>+0(SB)/8, $0x0000000600000007
DATA revdwords<>+8(SB)/8, $0x0000000400000005
DATA revdwords<>+16(SB)/8, $0x0000000200000003
DATA revdwords<>+24(SB)/8, $0x0000000000000001
GLOBL revdwords<>(SB), RODATA|NOPTR, $32

// One register's worth: symbols CX+off/4 .. +8 against the next ones; their eq and lt masks
// (reversed) into AX and BX at bit shift sh.
#define TYPES8W(off, sh) \
	VMOVDQU off(SI)(CX*4), Y0; \
	VMOVDQU off+4(SI)(CX*4), Y1; \
	VPERMD Y0, Y6, Y0; \
	VPERMD Y1, Y6, Y1; \
	VPCMPEQD Y1, Y0, Y2; \
	VPCMPGTD Y0, Y1, Y3; \
	VMOVMSKPS Y2, R11; SHLQ $sh, R11; ORQ R11, AX; \
	VMOVMSKPS Y3, R11; SHLQ $sh, R11; ORQ R11, BX

#define TYPES32W \
	XORL AX, AX; XORL BX, BX; \
	TYPES8W(96, 0); TYPES8W(64, 8); TYPES8W(32, 16); TYPES8W(0, 24); \
	MOVQ AX, R11; ORQ BX, R11; \
	LEAQ (R11)(BX*1), R13; ADDQ R8, R13; XORQ R11, R13; XORQ BX, R13; SHRQ $1, R13; \
	LEAQ (R8)(R13*2), R9; \
	MOVQ R13, R8; SHRQ $31, R8

#define VSETUPW \
	MOVQ a+0(FP), R10; \
	MOVQ 0(R10), SI; \
	MOVQ 8(R10), CX; \
	MOVQ 16(R10), R12; \
	MOVL 28(R10), R8; \
	VMOVDQU revdwords<>(SB), Y6; \
	SUBQ $31, CX

#define VFINISHW \
	ADDQ $31, CX; \
	MOVQ CX, 8(R10); \
	MOVL 4(SI)(CX*4), AX; \
	MOVL AX, 24(R10); \
	MOVL R8, 28(R10); \
	VZEROUPPER; \
	RET

// Its kind bits swapped into the table's layout (LL, LS, LMS, S): 5b>>1 & 3 swaps b's two bits.
#define COUNT1W \
	MOVL (DX), AX; MOVL R9, BX; ANDL $3, BX; LEAL (BX)(BX*4), BX; SHRL $1, BX; ANDL $3, BX; \
	LEAL (BX)(AX*4), AX; INCL (DI)(AX*4); SHRQ $1, R9; SUBQ $4, DX
#define COUNT4W COUNT1W; COUNT1W; COUNT1W; COUNT1W

// func countKindsV32(a *textArgs)
TEXT ·countKindsV32(SB), NOSPLIT, $0-8
	VSETUPW
	MOVQ 32(R10), DI
	CMPQ CX, R12
	JLT cdone
cloop:
	TYPES32W
	LEAQ 128(SI)(CX*4), DX
	COUNT4W; COUNT4W; COUNT4W; COUNT4W; COUNT4W; COUNT4W; COUNT4W; COUNT4W
	SUBQ $32, CX
	CMPQ CX, R12
	JGE cloop
cdone:
	VFINISHW

// func placeLMSV32(a *textArgs)
TEXT ·placeLMSV32(SB), NOSPLIT, $0-8
	VSETUPW
	MOVQ 32(R10), DI
	MOVQ 40(R10), DX
	CMPQ CX, R12
	JLT pdone
ploop:
	TYPES32W
	ANDNQ R9, R13, R9
	MOVL R9, R9
	TESTQ R9, R9
	JEQ pnext
pbit:
	BSFQ R9, AX
	LEAQ -1(R9), BX; ANDQ BX, R9
	NEGQ AX; LEAQ 32(CX)(AX*1), AX
	MOVL (SI)(AX*4), BX
	MOVL (DI)(BX*4), R11; DECL R11; MOVL R11, (DI)(BX*4)
	MOVL AX, (DX)(R11*4)
	TESTQ R9, R9
	JNE pbit
pnext:
	SUBQ $32, CX
	CMPQ CX, R12
	JGE ploop
pdone:
	VFINISHW

// func gatherLMSV32(a *textArgs)
TEXT ·gatherLMSV32(SB), NOSPLIT, $0-8
	VSETUPW
	MOVQ 40(R10), DI
	MOVL 52(R10), DX
	CMPL DX, 60(R10)
	JLE gdone
	CMPQ CX, R12
	JLT gdone
gloop:
	TYPES32W
	ANDNQ R9, R13, R9
	MOVL R9, R9
	TESTQ R9, R9
	JEQ gnext
gbit:
	BSFQ R9, AX
	LEAQ -1(R9), BX; ANDQ BX, R9
	NEGQ AX; LEAQ 32(CX)(AX*1), AX
	DECL DX
	MOVL AX, (DI)(DX*4)
	CMPL DX, 60(R10)
	JLE gfull
	TESTQ R9, R9
	JNE gbit
gnext:
	SUBQ $32, CX
	CMPQ CX, R12
	JGE gloop
gdone:
	MOVL DX, 52(R10)
	VFINISHW
gfull:
	MOVL DX, 52(R10)
	LEAQ -2(AX), CX
	MOVQ CX, 8(R10)
	MOVL 4(SI)(CX*4), AX
	MOVL AX, 24(R10)
	MOVL $0, 28(R10)
	VZEROUPPER
	RET

// func hasAVX2() bool
// AVX2 and BMI1 (ANDN), and the operating system saving the YMM registers.
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	XORL AX, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JLT no
	MOVL $1, AX
	XORL CX, CX
	CPUID
	// OSXSAVE (27) and AVX (28)
	MOVL CX, R8
	ANDL $0x18000000, R8
	CMPL R8, $0x18000000
	JNE no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	// AVX2 (5) and BMI1 (3)
	ANDL $0x28, BX
	CMPL BX, $0x28
	JNE no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET
