//go:build amd64 && !purego

#include "textflag.h"

// The gather and place kernels of the induction scans (sais_kernels.go has their definitions in
// Go). The gathers share one skeleton: a prologue asks for the text lines of the run's first
// kernAhead (64) entries, the main loop handles an entry while asking for the line of the entry
// 64 on, and a tail loop handles the last 64. Registers in the gathers:
//
//	R9  the scanArgs	SI  the text	DI  the entry	R12 entries left in the loop
//	R11 the group number d	R10 the chunk multiplier	R8  zero
//	AX BX CX DX R13 scratch
//
// scanArgs: t 0, sa 8, n 16, d 24, chunk 32, side 40, wp 48 (side 0), 56 (side 1), ..., cnt 176.
// placeArgs: rec 0, n 8, sa 16, ptr 24, d 32, big 36.

// Text symbols: byte or int32, loaded zero-extended into a 32-bit register.
#define SYM8(i, dst) MOVBLZX (SI)(i*1), dst
#define SYM32(i, dst) MOVL (SI)(i*4), dst

// Ask for the text line before position v&mask (v in AX; BX scratch), per kind of scan. Entries
// that do not induce ask for t[-1], as does position 0.
#define ASK_L(scale, disp) MOVL AX, BX; ANDL $0x3fffffff, AX; TESTL $0x40000000, BX; CMOVLNE R8, AX; PREFETCHT0 disp(SI)(AX*scale)
#define ASK_R(scale, disp) MOVL AX, BX; ANDL $0x3fffffff, AX; TESTL $0x40000000, BX; CMOVLEQ R8, AX; PREFETCHT0 disp(SI)(AX*scale)
#define ASK_FL(scale, disp) TESTL AX, AX; CMOVLLT R8, AX; PREFETCHT0 disp(SI)(AX*scale)
#define ASK_FR(scale, disp) MOVL AX, BX; ANDL $0x7fffffff, AX; TESTL BX, BX; CMOVLGE R8, AX; PREFETCHT0 disp(SI)(AX*scale)

// The symbol before q (AX) into CX: t[q-1], or t[0] for q = 0.
#define PREV(SYM) LEAL -1(AX), CX; TESTL AX, AX; CMOVLEQ AX, CX; SYM(CX, CX)

// Append the record in R13 (h), CX (pos) [and R11 (grp)] to side 0 and count it in cnt (PUT1,
// PUT3: the byte kernels), or to the side of symbol BX (PUT1S, PUT3S: the int32 kernels;
// side[(BX*chunk)>>32]). BX, AX, DX are scratch. The count goes before the record: after the
// record's stores, a count's load and store took 20% longer (8192 entries of stage 1, cached).
#define PUT1 \
	MOVQ 176(R9), DX; MOVL (DX)(R13*4), AX; INCL AX; MOVL AX, (DX)(R13*4); MOVL R11, 8(DX)(R13*4); \
	MOVQ 48(R9), AX; \
	MOVL R13, (AX); MOVL CX, 4(AX); MOVL R11, 8(AX); \
	ADDQ $12, AX; MOVQ AX, 48(R9)
#define PUT3 \
	MOVQ 176(R9), DX; MOVL (DX)(R13*4), AX; INCL AX; MOVL AX, (DX)(R13*4); \
	MOVQ 48(R9), AX; \
	MOVL R13, (AX); MOVL CX, 4(AX); \
	ADDQ $8, AX; MOVQ AX, 48(R9)
#define SIDE \
	MOVL BX, AX; IMULQ R10, AX; SHRQ $32, AX; \
	MOVQ 40(R9), DX; MOVBLZX (DX)(AX*1), BX
#define PUT1S \
	SIDE; \
	MOVQ 48(R9)(BX*8), AX; \
	MOVL R13, (AX); MOVL CX, 4(AX); MOVL R11, 8(AX); \
	ADDQ $12, AX; MOVQ AX, 48(R9)(BX*8)
#define PUT3S \
	SIDE; \
	MOVQ 48(R9)(BX*8), AX; \
	MOVL R13, (AX); MOVL CX, 4(AX); \
	ADDQ $8, AX; MOVQ AX, 48(R9)(BX*8)

// The bodies: the entry is in AX. An entry that induces nothing jumps to next (a branch: whether
// entries induce comes in runs); one that induces puts a record and falls through to it.

// Stage 1, upwards: a mark advances the group number; LS entries (bit 30) and empty ones (0)
// induce nothing.
#define BODY_L(SYM, PUT, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; CMPL AX, $0x3fffffff; JCC next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	ANDL $0x40000000, CX; ORL AX, CX; \
	PUT

// Stage 1, downwards: entries with bit 30 (p-1 S-type) and a position over 0 induce.
#define BODY_R(SYM, PUT, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; CMPL AX, $0x40000000; JLS next; \
	ANDL $0x3fffffff, AX; DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	NOTL CX; ANDL $0x40000000, CX; ORL AX, CX; \
	PUT

// Stage 1 for texts of 2^30 bytes or more (wide entries: no bit for the type of p-1; the scans
// read only the regions that induce, so every entry but position 0 induces), both ways.
#define ASK_W(scale, disp) ANDL $0x7fffffff, AX; PREFETCHT0 disp(SI)(AX*scale)
#define BODY_LW(SYM, PUT, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; JS next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	MOVL AX, CX; \
	PUT
#define BODY_RW(SYM, PUT, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; JS next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	MOVL AX, CX; \
	PUT

// Stage 3, upwards: entries over 0 induce.
#define BODY_FL(SYM, PUT, next) \
	TESTL AX, AX; JLE next; DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; MOVL BX, R13; \
	PUT

// Stage 3, downwards: flagged entries induce, and their flag is cleared.
#define BODY_FR(SYM, PUT, next) \
	TESTL AX, AX; JGE next; \
	ANDL $0x7fffffff, AX; MOVL AX, (DI); DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; NOTL CX; \
	XORL R13, R13; TESTL AX, AX; SETNE R13B; NEGL R13; ANDL R13, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; MOVL BX, R13; \
	PUT

// The skeleton of a gather. step is +4 upwards, -4 downwards; ahead is 64 entries in bytes.
#define GATHER(ASK, scale, disp, BODY, SYM, PUT, step, ahead) \
	MOVQ a+0(FP), R9; \
	MOVQ 0(R9), SI; \
	MOVQ 8(R9), DI; \
	MOVQ 16(R9), R12; \
	MOVQ 32(R9), R10; \
	XORL R11, R11; \
	XORL R8, R8; \
	MOVQ R12, DX; \
	CMPQ DX, $64; \
	JLE  pro; \
	MOVQ $64, DX; \
pro: \
	TESTQ DX, DX; \
	JEQ main; \
	MOVQ DI, R13; \
proloop: \
	MOVL (R13), AX; \
	ASK(scale, disp); \
	ADDQ $step, R13; \
	DECQ DX; \
	JNE proloop; \
main: \
	SUBQ $64, R12; \
	JLE tailset; \
mainloop: \
	MOVL ahead(DI), AX; \
	ASK(scale, disp); \
	MOVL (DI), AX; \
	BODY(SYM, PUT, next1); \
next1: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE mainloop; \
tailset: \
	ADDQ $64, R12; \
	JEQ done; \
tailloop: \
	MOVL (DI), AX; \
	BODY(SYM, PUT, next2); \
next2: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE tailloop; \
done: \
	MOVL R11, 24(R9); \
	RET

// func gatherL8(a *scanArgs)
TEXT ·gatherL8(SB), NOSPLIT, $0-8
	GATHER(ASK_L, 1, -1, BODY_L, SYM8, PUT1, 4, 256)

// func gatherL32(a *scanArgs)
TEXT ·gatherL32(SB), NOSPLIT, $0-8
	GATHER(ASK_L, 4, -4, BODY_L, SYM32, PUT1S, 4, 256)

// func gatherR8(a *scanArgs)
TEXT ·gatherR8(SB), NOSPLIT, $0-8
	GATHER(ASK_R, 1, -1, BODY_R, SYM8, PUT1, -4, -256)

// func gatherR32(a *scanArgs)
TEXT ·gatherR32(SB), NOSPLIT, $0-8
	GATHER(ASK_R, 4, -4, BODY_R, SYM32, PUT1S, -4, -256)

// func gatherLW8(a *scanArgs)
TEXT ·gatherLW8(SB), NOSPLIT, $0-8
	GATHER(ASK_W, 1, -1, BODY_LW, SYM8, PUT1, 4, 256)

// func gatherRW8(a *scanArgs)
TEXT ·gatherRW8(SB), NOSPLIT, $0-8
	GATHER(ASK_W, 1, -1, BODY_RW, SYM8, PUT1, -4, -256)

// func gatherFL8(a *scanArgs)
TEXT ·gatherFL8(SB), NOSPLIT, $0-8
	GATHER(ASK_FL, 1, -1, BODY_FL, SYM8, PUT3, 4, 256)

// func gatherFL32(a *scanArgs)
TEXT ·gatherFL32(SB), NOSPLIT, $0-8
	GATHER(ASK_FL, 4, -4, BODY_FL, SYM32, PUT3S, 4, 256)

// func gatherFR8(a *scanArgs)
TEXT ·gatherFR8(SB), NOSPLIT, $0-8
	GATHER(ASK_FR, 1, -1, BODY_FR, SYM8, PUT3, -4, -256)

// func gatherFR32(a *scanArgs)
TEXT ·gatherFR32(SB), NOSPLIT, $0-8
	GATHER(ASK_FR, 4, -4, BODY_FR, SYM32, PUT3S, -4, -256)

// The places. Registers: SI the record, CX records left in the loop, DI the suffix array, R9
// the bucket pointers, R10 the group number before the run; AX BX DX scratch. The record size
// is 12 (stage 1) or 8 (stage 3).

// Stage 1, at the heads: mark the first of each group (ptr[h+2] holds the last group).
#define PLACE_L \
	MOVL (SI), AX; \
	MOVL 8(SI), BX; ADDL R10, BX; \
	MOVL 8(R9)(AX*4), DX; MOVL BX, 8(R9)(AX*4); \
	XORL BX, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; \
	MOVL (R9)(AX*4), BX; \
	ORL 4(SI), DX; MOVL DX, (DI)(BX*4); \
	INCL BX; MOVL BX, (R9)(AX*4)

// Stage 1, at the tails.
#define PLACE_R \
	MOVL (SI), AX; \
	MOVL 8(SI), BX; ADDL R10, BX; \
	MOVL 8(R9)(AX*4), DX; MOVL BX, 8(R9)(AX*4); \
	XORL BX, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; \
	MOVL (R9)(AX*4), BX; DECL BX; \
	ORL 4(SI), DX; MOVL DX, (DI)(BX*4); \
	MOVL BX, (R9)(AX*4)

// Stage 3, at the heads.
#define PLACE_FL \
	MOVL (SI), AX; \
	MOVL (R9)(AX*4), BX; \
	MOVL 4(SI), DX; MOVL DX, (DI)(BX*4); \
	INCL BX; MOVL BX, (R9)(AX*4)

// Stage 3, at the tails.
#define PLACE_FR \
	MOVL (SI), AX; \
	MOVL (R9)(AX*4), BX; DECL BX; \
	MOVL 4(SI), DX; MOVL DX, (DI)(BX*4); \
	MOVL BX, (R9)(AX*4)

// Ask for the bucket pointer line of the record at off(SI), and the suffix array line of the
// pointer of the record at off2(SI) (asked for earlier: in cache). R11, R12 scratch.
#define ASK_PTR(off) MOVL off(SI), R11; PREFETCHT0 (R9)(R11*4)
#define ASK_SLOT(off) MOVL off(SI), R11; MOVL (R9)(R11*4), R12; PREFETCHT0 (DI)(R12*4)

#define PLACE_SETUP \
	MOVQ a+0(FP), R8; \
	MOVQ 0(R8), SI; \
	MOVQ 8(R8), CX; \
	MOVQ 16(R8), DI; \
	MOVQ 24(R8), R9; \
	MOVL 32(R8), R10

// A place: without asking ahead (small alphabets), or asking for the pointer lines 64 records on
// and the slots 32 on. size is the record size.
#define PLACE(BODY, size) \
	PLACE_SETUP; \
	MOVL 36(R8), DX; \
	TESTL DX, DX; \
	JNE big; \
	TESTQ CX, CX; \
	JEQ done; \
loop: \
	BODY; \
	ADDQ $size, SI; \
	DECQ CX; \
	JNE loop; \
done: \
	RET; \
big: \
	MOVQ CX, DX; \
	CMPQ DX, $64; \
	JLE pro; \
	MOVQ $64, DX; \
pro: \
	TESTQ DX, DX; \
	JEQ pro2; \
	MOVQ SI, BX; \
proloop: \
	MOVL (BX), R11; PREFETCHT0 (R9)(R11*4); \
	ADDQ $size, BX; \
	DECQ DX; \
	JNE proloop; \
pro2: \
	MOVQ CX, DX; \
	CMPQ DX, $32; \
	JLE pro3; \
	MOVQ $32, DX; \
pro3: \
	TESTQ DX, DX; \
	JEQ main; \
	MOVQ SI, BX; \
pro3loop: \
	MOVL (BX), R11; MOVL (R9)(R11*4), R12; PREFETCHT0 (DI)(R12*4); \
	ADDQ $size, BX; \
	DECQ DX; \
	JNE pro3loop; \
main: \
	SUBQ $64, CX; \
	JLE tailset; \
mainloop: \
	ASK_PTR(64*size); \
	ASK_SLOT(32*size); \
	BODY; \
	ADDQ $size, SI; \
	DECQ CX; \
	JNE mainloop; \
tailset: \
	ADDQ $64, CX; \
	JEQ done; \
tailloop: \
	BODY; \
	ADDQ $size, SI; \
	DECQ CX; \
	JNE tailloop; \
	RET

// func placeL(a *placeArgs)
TEXT ·placeL(SB), NOSPLIT, $0-8
	PLACE(PLACE_L, 12)

// func placeR(a *placeArgs)
TEXT ·placeR(SB), NOSPLIT, $0-8
	PLACE(PLACE_R, 12)

// func placeFL(a *placeArgs)
TEXT ·placeFL(SB), NOSPLIT, $0-8
	PLACE(PLACE_FL, 8)

// func placeFR(a *placeArgs)
TEXT ·placeFR(SB), NOSPLIT, $0-8
	PLACE(PLACE_FR, 8)

// The text passes (sais_text.go): each walks positions i from textArgs.i down to textArgs.stop,
// with the symbol after i and its type (1 for S) in AX and BX, classifying position i+1.
// textArgs: t 0, i 8, stop 16, next 24, nextS 28, tab 32, sa 40, trash 48, k 52, big 56, bottom 60.

// The type of i (symbol in DX) into R10: S-type when t[i] < t[i+1] + (type of i+1).
#define TYPE LEAL (AX)(BX*1), R9; XORL R10, R10; CMPL DX, R9; SETLT R10B

// countKinds: cnt[4*next + 2*nextS + s]++. tab is cnt (DI), stop R12.
#define COUNT(SYM) \
	SYM(CX, DX); TYPE; \
	LEAL (R10)(BX*2), R11; LEAL (R11)(AX*4), R11; INCL (DI)(R11*4); \
	MOVL DX, AX; MOVL R10, BX

// placeLMS: position i+1 is LMS when i+1 is S-type and i is not; it goes to tail[next]-1. No
// branch: LMS positions are a quarter or so, at random in DNA and in text alike, and a branch on
// them was mispredicted at one position in four (cachegrind, the tar's first 4 MB); the others
// take 0 from their tail and write to the trash slot (R12). tab is tail (DI), sa R13, stop R8.
#define PLACELMS(SYM) \
	SYM(CX, DX); TYPE; \
	MOVL R10, R11; NOTL R11; ANDL BX, R11; \
	MOVL (DI)(AX*4), R9; SUBL R11, R9; MOVL R9, (DI)(AX*4); \
	LEAQ (R13)(R9*4), R9; TESTL R11, R11; CMOVQEQ R12, R9; \
	LEAL 1(CX), R11; MOVL R11, (R9); \
	MOVL DX, AX; MOVL R10, BX

// Ask for the table line of the symbol 64 positions on (int32 texts): shift by the scale of a
// symbol's entries (16 bytes for cnt, 4 for tail).
#define ASK_CNT MOVL -256(SI)(CX*4), R9; SHLL $1, R9; PREFETCHT0 (DI)(R9*8)
#define ASK_TAIL MOVL -256(SI)(CX*4), R9; PREFETCHT0 (DI)(R9*4)
#define ASK_NONE NOP

// A text pass: plain, or (big) asking ahead while i - 64 >= stop. STOP is the stop register; the
// function's own setup loads the others (the args in R11 first).
#define TEXTPASS(BODY, SYM, ASK, STOP) \
	MOVQ 8(R11), CX; \
	MOVQ 16(R11), STOP; \
	MOVL 24(R11), AX; \
	MOVL 28(R11), BX; \
	CMPL 56(R11), $0; \
	JEQ tail; \
	ADDQ $64, STOP; \
	CMPQ CX, STOP; \
	JLT tailfix; \
bigloop: \
	ASK; \
	BODY(SYM); \
	DECQ CX; \
	CMPQ CX, STOP; \
	JGE bigloop; \
tailfix: \
	SUBQ $64, STOP; \
tail: \
	CMPQ CX, STOP; \
	JLT done; \
loop: \
	BODY(SYM); \
	DECQ CX; \
	CMPQ CX, STOP; \
	JGE loop; \
done: \
	MOVQ a+0(FP), R11; \
	MOVQ CX, 8(R11); \
	MOVL AX, 24(R11); \
	MOVL BX, 28(R11)

// func countKinds8(a *textArgs)
TEXT ·countKinds8(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), R11
	MOVQ 0(R11), SI
	MOVQ 32(R11), DI
	TEXTPASS(COUNT, SYM8, ASK_NONE, R12)
	RET

// func countKinds32(a *textArgs)
TEXT ·countKinds32(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), R11
	MOVQ 0(R11), SI
	MOVQ 32(R11), DI
	TEXTPASS(COUNT, SYM32, ASK_CNT, R12)
	RET

// func placeLMS8(a *textArgs)
TEXT ·placeLMS8(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), R11
	MOVQ 0(R11), SI
	MOVQ 32(R11), DI
	MOVQ 40(R11), R13
	LEAQ 48(R11), R12
	TEXTPASS(PLACELMS, SYM8, ASK_NONE, R8)
	RET

// func placeLMS32(a *textArgs)
TEXT ·placeLMS32(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), R11
	MOVQ 0(R11), SI
	MOVQ 32(R11), DI
	MOVQ 40(R11), R13
	LEAQ 48(R11), R12
	TEXTPASS(PLACELMS, SYM32, ASK_TAIL, R8)
	RET

// gatherLMS: every position i+1 goes to sa[k-1], and k moves down when i+1 is LMS (what follows
// is written over by the next LMS position: no branch, no second slot), until k is down to
// bottom or i below stop. sa R13, k R8, bottom R12, stop DI.
#define GATHERLMS(SYM) \
	MOVQ a+0(FP), R11; \
	MOVQ 0(R11), SI; \
	MOVQ 8(R11), CX; \
	MOVQ 16(R11), DI; \
	MOVL 24(R11), AX; \
	MOVL 28(R11), BX; \
	MOVQ 40(R11), R13; \
	MOVL 52(R11), R8; \
	MOVL 60(R11), R12; \
	CMPL R8, R12; \
	JLE done; \
	CMPQ CX, DI; \
	JLT done; \
loop: \
	SYM(CX, DX); TYPE; \
	LEAL 1(CX), R9; MOVL R9, -4(R13)(R8*4); \
	MOVL R10, R9; NOTL R9; ANDL BX, R9; SUBL R9, R8; \
	MOVL DX, AX; MOVL R10, BX; \
	DECQ CX; \
	CMPL R8, R12; \
	JLE done; \
	CMPQ CX, DI; \
	JGE loop; \
done: \
	MOVQ CX, 8(R11); \
	MOVL AX, 24(R11); \
	MOVL BX, 28(R11); \
	MOVL R8, 52(R11); \
	RET

// func gatherLMS8(a *textArgs)
TEXT ·gatherLMS8(SB), NOSPLIT, $0-8
	GATHERLMS(SYM8)

// func gatherLMS32(a *textArgs)
TEXT ·gatherLMS32(SB), NOSPLIT, $0-8
	GATHERLMS(SYM32)

// The serial scans (sais_serial.go): a gather's skeleton, each entry's induction written at once.
// Registers: SI the text, DI the entry, R12 entries left in the loop, R11 the group number d, R10
// the suffix array, R9 the bucket pointers, R8 zero; AX BX CX DX R13 scratch.
// serialArgs: t 0, sa 8, ptr 16, first 24, n 32, d 40, trash 44.

// Stage 1, upwards: as BODY_L, then as PLACE_L.
#define SBODY_L(SYM, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; CMPL AX, $0x3fffffff; JCC next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	ANDL $0x40000000, CX; ORL AX, CX; \
	MOVL 8(R9)(R13*4), DX; MOVL R11, 8(R9)(R13*4); \
	XORL R11, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; ORL DX, CX; \
	MOVL (R9)(R13*4), BX; MOVL CX, (R10)(BX*4); INCL BX; MOVL BX, (R9)(R13*4)

// Stage 1, downwards: as BODY_R, then as PLACE_R.
#define SBODY_R(SYM, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; CMPL AX, $0x40000000; JLS next; \
	ANDL $0x3fffffff, AX; DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	NOTL CX; ANDL $0x40000000, CX; ORL AX, CX; \
	MOVL 8(R9)(R13*4), DX; MOVL R11, 8(R9)(R13*4); \
	XORL R11, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; ORL DX, CX; \
	MOVL (R9)(R13*4), BX; DECL BX; MOVL CX, (R10)(BX*4); MOVL BX, (R9)(R13*4)

// Stage 1 for wide entries (texts of 2^30 bytes or more), both ways.
#define SBODY_LW(SYM, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; JS next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	MOVL AX, CX; \
	MOVL 8(R9)(R13*4), DX; MOVL R11, 8(R9)(R13*4); \
	XORL R11, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; ORL DX, CX; \
	MOVL (R9)(R13*4), BX; MOVL CX, (R10)(BX*4); INCL BX; MOVL BX, (R9)(R13*4)
#define SBODY_RW(SYM, next) \
	MOVL AX, BX; SARL $31, BX; SUBL BX, R11; \
	ANDL $0x7fffffff, AX; DECL AX; JS next; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; \
	LEAL (BX*4), R13; SUBL CX, R13; \
	MOVL AX, CX; \
	MOVL 8(R9)(R13*4), DX; MOVL R11, 8(R9)(R13*4); \
	XORL R11, DX; NEGL DX; SBBL DX, DX; ANDL $0x80000000, DX; ORL DX, CX; \
	MOVL (R9)(R13*4), BX; DECL BX; MOVL CX, (R10)(BX*4); MOVL BX, (R9)(R13*4)

// Stage 3, upwards.
#define SBODY_FL(SYM, next) \
	TESTL AX, AX; JLE next; DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; \
	MOVL (R9)(BX*4), DX; MOVL CX, (R10)(DX*4); INCL DX; MOVL DX, (R9)(BX*4)

// Stage 3, downwards: the flag is cleared in place.
#define SBODY_FR(SYM, next) \
	TESTL AX, AX; JGE next; \
	ANDL $0x7fffffff, AX; MOVL AX, (DI); DECL AX; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; NOTL CX; \
	XORL R13, R13; TESTL AX, AX; SETNE R13B; NEGL R13; ANDL R13, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; \
	MOVL (R9)(BX*4), DX; DECL DX; MOVL CX, (R10)(DX*4); MOVL DX, (R9)(BX*4)

// Stage 3, upwards, without a branch, for small alphabets (sais_serial.go): an entry that induces
// nothing reads t[0], adds 0 to its bucket's pointer and writes to the trash slot (R11).
#define SBODY_FLB(SYM, next) \
	XORL CX, CX; TESTL AX, AX; SETGT CX; NEGL CX; \
	DECL AX; ANDL CX, AX; MOVL CX, R13; \
	SYM(AX, BX); PREV(SYM); \
	CMPL CX, BX; SBBL CX, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; \
	MOVL (R9)(BX*4), DX; \
	LEAQ (R10)(DX*4), AX; TESTL R13, R13; CMOVQEQ R11, AX; \
	MOVL CX, (AX); SUBL R13, DX; MOVL DX, (R9)(BX*4)

// Stage 3, downwards, without a branch: the flag is cleared in place (a store for every entry).
#define SBODY_FRB(SYM, next) \
	MOVL AX, CX; SARL $31, CX; \
	ANDL $0x7fffffff, AX; MOVL AX, (DI); \
	DECL AX; ANDL CX, AX; MOVL CX, R13; \
	SYM(AX, BX); PREV(SYM); \
	CMPL BX, CX; SBBL CX, CX; NOTL CX; \
	XORL DX, DX; TESTL AX, AX; SETNE DX; NEGL DX; ANDL DX, CX; \
	ANDL $0x80000000, CX; ORL AX, CX; \
	MOVL (R9)(BX*4), DX; ADDL R13, DX; \
	LEAQ (R10)(DX*4), AX; TESTL R13, R13; CMOVQEQ R11, AX; \
	MOVL CX, (AX); MOVL DX, (R9)(BX*4)

#define SERIAL(SETUP, FINISH, ASK, scale, disp, BODY, SYM, step, ahead) \
	MOVQ a+0(FP), DX; \
	MOVQ 0(DX), SI; \
	MOVQ 8(DX), R10; \
	MOVQ 16(DX), R9; \
	MOVQ 24(DX), DI; \
	MOVQ 32(DX), R12; \
	SETUP; \
	XORL R8, R8; \
	MOVQ R12, DX; \
	CMPQ DX, $64; \
	JLE  pro; \
	MOVQ $64, DX; \
pro: \
	TESTQ DX, DX; \
	JEQ main; \
	MOVQ DI, R13; \
proloop: \
	MOVL (R13), AX; \
	ASK(scale, disp); \
	ADDQ $step, R13; \
	DECQ DX; \
	JNE proloop; \
main: \
	SUBQ $64, R12; \
	JLE tailset; \
mainloop: \
	MOVL ahead(DI), AX; \
	ASK(scale, disp); \
	MOVL (DI), AX; \
	BODY(SYM, next1); \
next1: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE mainloop; \
tailset: \
	ADDQ $64, R12; \
	JEQ done; \
tailloop: \
	MOVL (DI), AX; \
	BODY(SYM, next2); \
next2: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE tailloop; \
done: \
	FINISH; \
	RET

// Stage 1 keeps the group number in R11; stage 3 the address of the trash slot.
#define GROUP_IN \
	MOVL 40(DX), R11
#define GROUP_OUT \
	MOVQ a+0(FP), DX; MOVL R11, 40(DX)
#define TRASH_IN \
	LEAQ 44(DX), R11
#define TRASH_OUT

// The serial scans for large alphabets (int32 texts, bigAlphabet), whose bucket pointers miss the
// caches: as libsais does, they ask for the text line of the entry 128 on and for the bucket
// pointers' line of the entry 64 on (its text line asked for 64 entries earlier). The position
// whose symbol gives the bucket goes into AX (0 for an entry that induces nothing).
#define POS_L MOVL AX, BX; ANDL $0x3fffffff, AX; TESTL $0x40000000, BX; CMOVLNE R8, AX
#define POS_R MOVL AX, BX; ANDL $0x3fffffff, AX; TESTL $0x40000000, BX; CMOVLEQ R8, AX
#define POS_FL TESTL AX, AX; CMOVLLT R8, AX
#define POS_FR MOVL AX, BX; ANDL $0x7fffffff, AX; TESTL BX, BX; CMOVLGE R8, AX

// Ask for the line of the bucket pointers of t[max(p-1, 0)]: 16 bytes a symbol in stage 1 (two
// pointers and two last groups), 4 in stage 3.
#define ASK_B16 DECL AX; CMOVLLT R8, AX; MOVL (SI)(AX*4), BX; SHLQ $4, BX; PREFETCHT0 (R9)(BX*1)
#define ASK_B4 DECL AX; CMOVLLT R8, AX; MOVL (SI)(AX*4), BX; PREFETCHT0 (R9)(BX*4)

#define SERIALBIG(SETUP, FINISH, ASK, POS, ASKB, BODY, step, ahead, ahead2) \
	MOVQ a+0(FP), DX; \
	MOVQ 0(DX), SI; \
	MOVQ 8(DX), R10; \
	MOVQ 16(DX), R9; \
	MOVQ 24(DX), DI; \
	MOVQ 32(DX), R12; \
	SETUP; \
	XORL R8, R8; \
	MOVQ R12, DX; \
	CMPQ DX, $128; \
	JLE  pro; \
	MOVQ $128, DX; \
pro: \
	TESTQ DX, DX; \
	JEQ done; \
	MOVQ DI, R13; \
proloop: \
	MOVL (R13), AX; \
	ASK(4, -4); \
	ADDQ $step, R13; \
	DECQ DX; \
	JNE proloop; \
	MOVQ R12, DX; \
	CMPQ DX, $64; \
	JLE  pro2; \
	MOVQ $64, DX; \
pro2: \
	MOVQ DI, R13; \
pro2loop: \
	MOVL (R13), AX; \
	POS; ASKB; \
	ADDQ $step, R13; \
	DECQ DX; \
	JNE pro2loop; \
	SUBQ $128, R12; \
	JLE midset; \
mainloop: \
	MOVL ahead2(DI), AX; \
	ASK(4, -4); \
	MOVL ahead(DI), AX; \
	POS; ASKB; \
	MOVL (DI), AX; \
	BODY(SYM32, next1); \
next1: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE mainloop; \
midset: \
	ADDQ $64, R12; \
	JLE tailset; \
midloop: \
	MOVL ahead(DI), AX; \
	POS; ASKB; \
	MOVL (DI), AX; \
	BODY(SYM32, next2); \
next2: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE midloop; \
tailset: \
	ADDQ $64, R12; \
	JEQ done; \
tailloop: \
	MOVL (DI), AX; \
	BODY(SYM32, next3); \
next3: \
	ADDQ $step, DI; \
	DECQ R12; \
	JNE tailloop; \
done: \
	FINISH; \
	RET

// func serialL8(a *serialArgs)
TEXT ·serialL8(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_L, 1, -1, SBODY_L, SYM8, 4, 256)

// func serialL32(a *serialArgs)
TEXT ·serialL32(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_L, 4, -4, SBODY_L, SYM32, 4, 256)

// func serialR8(a *serialArgs)
TEXT ·serialR8(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_R, 1, -1, SBODY_R, SYM8, -4, -256)

// func serialR32(a *serialArgs)
TEXT ·serialR32(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_R, 4, -4, SBODY_R, SYM32, -4, -256)

// func serialLBig32(a *serialArgs)
TEXT ·serialLBig32(SB), NOSPLIT, $0-8
	SERIALBIG(GROUP_IN, GROUP_OUT, ASK_L, POS_L, ASK_B16, SBODY_L, 4, 256, 512)

// func serialRBig32(a *serialArgs)
TEXT ·serialRBig32(SB), NOSPLIT, $0-8
	SERIALBIG(GROUP_IN, GROUP_OUT, ASK_R, POS_R, ASK_B16, SBODY_R, -4, -256, -512)

// func serialFLBig32(a *serialArgs)
TEXT ·serialFLBig32(SB), NOSPLIT, $0-8
	SERIALBIG(TRASH_IN, TRASH_OUT, ASK_FL, POS_FL, ASK_B4, SBODY_FL, 4, 256, 512)

// func serialFRBig32(a *serialArgs)
TEXT ·serialFRBig32(SB), NOSPLIT, $0-8
	SERIALBIG(TRASH_IN, TRASH_OUT, ASK_FR, POS_FR, ASK_B4, SBODY_FR, -4, -256, -512)

// func serialLW8(a *serialArgs)
TEXT ·serialLW8(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_W, 1, -1, SBODY_LW, SYM8, 4, 256)

// func serialRW8(a *serialArgs)
TEXT ·serialRW8(SB), NOSPLIT, $0-8
	SERIAL(GROUP_IN, GROUP_OUT, ASK_W, 1, -1, SBODY_RW, SYM8, -4, -256)

// func serialFL8(a *serialArgs)
TEXT ·serialFL8(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FL, 1, -1, SBODY_FL, SYM8, 4, 256)

// func serialFL32(a *serialArgs)
TEXT ·serialFL32(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FL, 4, -4, SBODY_FL, SYM32, 4, 256)

// func serialFR8(a *serialArgs)
TEXT ·serialFR8(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FR, 1, -1, SBODY_FR, SYM8, -4, -256)

// func serialFR32(a *serialArgs)
TEXT ·serialFR32(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FR, 4, -4, SBODY_FR, SYM32, -4, -256)

// func serialFLB8(a *serialArgs)
TEXT ·serialFLB8(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FL, 1, -1, SBODY_FLB, SYM8, 4, 256)

// func serialFRB8(a *serialArgs)
TEXT ·serialFRB8(SB), NOSPLIT, $0-8
	SERIAL(TRASH_IN, TRASH_OUT, ASK_FR, 1, -1, SBODY_FRB, SYM8, -4, -256)

// func prefetchIdx(base unsafe.Pointer, v []int32, rshift, lshift uint)
// Asks for base + ((v&0x7fffffff)>>rshift)<<lshift for each entry v.
TEXT ·prefetchIdx(SB), NOSPLIT, $0-48
	MOVQ base+0(FP), SI
	MOVQ v_base+8(FP), DI
	MOVQ v_len+16(FP), R12
	MOVQ rshift+32(FP), R9
	MOVQ lshift+40(FP), R10
	TESTQ R12, R12
	JEQ donei
loopi:
	MOVL (DI), AX
	ANDL $0x7fffffff, AX
	MOVQ R9, CX
	SHRQ CX, AX
	MOVQ R10, CX
	SHLQ CX, AX
	PREFETCHT0 (SI)(AX*1)
	ADDQ $4, DI
	DECQ R12
	JNE loopi
donei:
	RET

// The naming kernels (sais.go).

// func nameRun(run, names []int32, name int32) int32
// Registers: DI the entry, CX entries left, SI names, R11 the name; AX BX DX scratch.
TEXT ·nameRun(SB), NOSPLIT, $0-60
	MOVQ run_base+0(FP), DI
	MOVQ run_len+8(FP), CX
	MOVQ names_base+24(FP), SI
	MOVL name+48(FP), R11
	MOVQ CX, DX
	CMPQ DX, $64
	JLE  npro
	MOVQ $64, DX
npro:
	TESTQ DX, DX
	JEQ nmain
	MOVQ DI, R8
nproloop:
	MOVL (R8), AX; ANDL $0x7fffffff, AX; SHRL $1, AX; PREFETCHT0 (SI)(AX*4)
	ADDQ $4, R8
	DECQ DX
	JNE nproloop
nmain:
	SUBQ $64, CX
	JLE ntailset
nloop:
	MOVL 256(DI), AX; ANDL $0x7fffffff, AX; SHRL $1, AX; PREFETCHT0 (SI)(AX*4)
	MOVL (DI), AX; MOVL AX, BX; ANDL $0x7fffffff, AX; MOVL AX, (DI)
	SHRL $1, AX; LEAL 1(R11), DX; MOVL DX, (SI)(AX*4)
	SARL $31, BX; SUBL BX, R11
	ADDQ $4, DI
	DECQ CX
	JNE nloop
ntailset:
	ADDQ $64, CX
	JEQ ndone
ntail:
	MOVL (DI), AX; MOVL AX, BX; ANDL $0x7fffffff, AX; MOVL AX, (DI)
	SHRL $1, AX; LEAL 1(R11), DX; MOVL DX, (SI)(AX*4)
	SARL $31, BX; SUBL BX, R11
	ADDQ $4, DI
	DECQ CX
	JNE ntail
ndone:
	MOVL R11, ret+56(FP)
	RET

// func mapRun(run, s1 []int32)
// Registers: DI the entry, CX entries left, SI s1; AX BX scratch. Asks 128 entries ahead.
TEXT ·mapRun(SB), NOSPLIT, $0-48
	MOVQ run_base+0(FP), DI
	MOVQ run_len+8(FP), CX
	MOVQ s1_base+24(FP), SI
	MOVQ CX, DX
	CMPQ DX, $128
	JLE  mpro
	MOVQ $128, DX
mpro:
	TESTQ DX, DX
	JEQ mmain
	MOVQ DI, R8
mproloop:
	MOVL (R8), AX; PREFETCHT0 (SI)(AX*4)
	ADDQ $4, R8
	DECQ DX
	JNE mproloop
mmain:
	SUBQ $128, CX
	JLE mtailset
mloop:
	MOVL 512(DI), BX; PREFETCHT0 (SI)(BX*4)
	MOVL (DI), AX; MOVL (SI)(AX*4), AX; MOVL AX, (DI)
	ADDQ $4, DI
	DECQ CX
	JNE mloop
mtailset:
	ADDQ $128, CX
	JEQ mdone
mtail:
	MOVL (DI), AX; MOVL (SI)(AX*4), AX; MOVL AX, (DI)
	ADDQ $4, DI
	DECQ CX
	JNE mtail
mdone:
	RET

// func compactNames(s []int32) int
// Walks s down (DI), writing v-1 at R8 and moving R8 down when v is not zero; two entries a step.
TEXT ·compactNames(SB), NOSPLIT, $0-32
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), CX
	LEAQ -4(SI)(CX*4), DI
	MOVQ DI, R8
	SHRQ $1, CX
	JEQ cone
cloop:
	MOVL (DI), AX; LEAL -1(AX), BX; MOVL BX, (R8); NEGL AX; SBBQ AX, AX; LEAQ (R8)(AX*4), R8
	MOVL -4(DI), AX; LEAL -1(AX), BX; MOVL BX, (R8); NEGL AX; SBBQ AX, AX; LEAQ (R8)(AX*4), R8
	SUBQ $8, DI
	DECQ CX
	JNE cloop
cone:
	MOVQ s_len+8(FP), CX
	TESTQ $1, CX
	JEQ cdone
	MOVL (DI), AX; LEAL -1(AX), BX; MOVL BX, (R8); NEGL AX; SBBQ AX, AX; LEAQ (R8)(AX*4), R8
cdone:
	LEAQ -4(SI)(CX*4), AX
	SUBQ R8, AX
	SHRQ $2, AX
	MOVQ AX, ret+24(FP)
	RET

// func shiftMarks(run []int32)
// Walks run down (DI), each entry taking the mark of the one above (DX; the last, a mark).
TEXT ·shiftMarks(SB), NOSPLIT, $0-24
	MOVQ run_base+0(FP), SI
	MOVQ run_len+8(FP), CX
	MOVL $0x80000000, DX
	LEAQ -4(SI)(CX*4), DI
	SHRQ $1, CX
	JEQ sone
sloop:
	MOVL (DI), AX; MOVL AX, BX; ANDL $0x7fffffff, AX; ORL DX, AX; MOVL AX, (DI); ANDL $0x80000000, BX
	MOVL -4(DI), AX; MOVL AX, DX; ANDL $0x7fffffff, AX; ORL BX, AX; MOVL AX, -4(DI); ANDL $0x80000000, DX
	SUBQ $8, DI
	DECQ CX
	JNE sloop
sone:
	MOVQ run_len+8(FP), CX
	TESTQ $1, CX
	JEQ sdone
	MOVL (DI), AX; ANDL $0x7fffffff, AX; ORL DX, AX; MOVL AX, (DI)
sdone:
	RET
