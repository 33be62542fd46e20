//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "resize_aa_asm_amd64.h"

// aaHRowsY: aaHRows4W's column loop in assembly on AVX2 (see resize_aa_avx2_amd64.go), with
// aaHRowsZ's structure (resize_aa_vnni_amd64.s) at 256 bits: per column and 8-tap chunk (aaWide),
// per row, one 32-byte load from 4 bytes before the chunk's first tap, two VPSHUFB (aaWideA/B), two
// VPMADDWD and two VPADDD; a 1-4 tap tail with two rows per register (aaTailA/B); the rows' lanes
// folded with VPERM2I128 to [row 0 | row 1] and [row 2 | row 3]; a column in doubt marked and
// completed after its block of 16; the block packed and stored as aaHRowsZ does, per row pair.

// one row's chunk: R the row pointer, ACC its accumulator; weights in Y6 (A) and Y7 (B)
#define YROW(R, ACC) \
	VMOVDQU (R)(AX*1), Y0; VPSHUFB Y12, Y0, Y1; VPSHUFB Y13, Y0, Y0; \
	VPMADDWD Y6, Y1, Y1; VPMADDWD Y7, Y0, Y0; VPADDD Y1, ACC, ACC; VPADDD Y0, ACC, ACC

// one chunk of the four rows, weights at W
#define YCHUNK(W) \
	VMOVDQU (W), Y6; VMOVDQU 32(W), Y7; \
	YROW(R8, Y8); YROW(R9, Y9); YROW(R10, Y10); YROW(R11, Y11)

#define YZERO \
	VPXOR Y8, Y8, Y8; VPXOR Y9, Y9, Y9; VPXOR Y10, Y10, Y10; VPXOR Y11, Y11, Y11

// the four accumulators' lanes added: rows 0, 1 into Y0, rows 2, 3 into Y1
#define YFOLD \
	VPERM2I128 $0x20, Y9, Y8, Y0; VPERM2I128 $0x31, Y9, Y8, Y1; VPADDD Y1, Y0, Y0; \
	VPERM2I128 $0x20, Y11, Y10, Y1; VPERM2I128 $0x31, Y11, Y10, Y2; VPADDD Y2, Y1, Y1

// a tail's first (A) or second (B) tap pair from the row pairs in Y2 (rows 0, 1) and Y3 (rows 2, 3),
// shuffle SH, weights at O(W), into Y0 and Y1
#define YTAIL(SH, O, W) \
	VMOVDQU O(W), Y6; \
	VPSHUFB SH, Y2, Y4; VPMADDWD Y6, Y4, Y4; VPADDD Y4, Y0, Y0; \
	VPSHUFB SH, Y3, Y5; VPMADDWD Y6, Y5, Y5; VPADDD Y5, Y1, Y1

// the tail's row pairs
#define YTAILROWS \
	VMOVDQU (R8)(AX*1), Y2; VINSERTI128 $1, (R9)(AX*1), Y2, Y2; \
	VMOVDQU (R10)(AX*1), Y3; VINSERTI128 $1, (R11)(AX*1), Y3, Y3

// four columns' sums of one row pair at scratch offsets A-D (DX) shifted and packed to bytes in R,
// each row's lane [ch0 c0-3 | ch1 | ch2 | ch3] (regroup shuffle at YK_REGROUP(BX))
#define YPACK4(A, B, C, D, R) \
	VMOVDQU A(DX), Y0; VPSRAD $22, Y0, Y0; VMOVDQU B(DX), Y1; VPSRAD $22, Y1, Y1; VPACKSSDW Y1, Y0, Y0; \
	VMOVDQU C(DX), Y1; VPSRAD $22, Y1, Y1; VMOVDQU D(DX), Y2; VPSRAD $22, Y2, Y2; VPACKSSDW Y2, Y1, Y1; \
	VPACKUSWB Y1, Y0, R; VPSHUFB YK_REGROUP(BX), R, R

// the transposed channels of a row pair (Y4-Y7 the four groups) stored: row pointers at P0 and
// P1 of the dst array (AX), plane stride in CX, column R13
#define YSTORE(P0, P1) \
	VPUNPCKLDQ Y5, Y4, Y0; VPUNPCKHDQ Y5, Y4, Y1; VPUNPCKLDQ Y7, Y6, Y2; VPUNPCKHDQ Y7, Y6, Y3; \
	VPUNPCKLQDQ Y2, Y0, Y8; VPUNPCKHQDQ Y2, Y0, Y9; VPUNPCKLQDQ Y3, Y1, Y10; \
	MOVQ P0(AX), SI; ADDQ R13, SI; \
	VMOVDQU X8, (SI); VMOVDQU X9, (SI)(CX*1); VMOVDQU X10, (SI)(CX*2); \
	MOVQ P1(AX), SI; ADDQ R13, SI; \
	VEXTRACTI128 $1, Y8, (SI); VEXTRACTI128 $1, Y9, (SI)(CX*1); VEXTRACTI128 $1, Y10, (SI)(CX*2)

// func aaHRowsY(rows, dst *[4]unsafe.Pointer, cols *aaAsmCol, n int, w *aaWide, plane, lodelta int, k *aaYConst, scratch *[16][16]int32, pf uintptr, pfn int)
TEXT ·aaHRowsY(SB), NOSPLIT, $0-88
	AA_ROWS4
	MOVQ k+56(FP), AX
	VMOVDQU YK_SHA(AX), Y12
	VMOVDQU YK_SHB(AX), Y13
	VMOVDQU YK_TA(AX), Y14
	VMOVDQU YK_TB(AX), Y15
	XORQ R13, R13
	CMPQ R13, n+24(FP)
	JGE ydone

yblock:
	MOVQ scratch+64(FP), DX
	MOVQ $16, CX
	XORQ R12, R12

ycol:
	AA_PREFETCH
	MOVLQSX COL_OFF(SI), AX  // off
	MOVL COL_STEPS(SI), BX     // whole chunks
	MOVLQSX COL_W(SI), DI // the column's first chunk: w + 128*wch
	SHLQ $7, DI
	ADDQ w+32(FP), DI
	YZERO
	TESTQ BX, BX
	JZ yhifold
yhistep:
	YCHUNK(DI)
	ADDQ $24, AX
	ADDQ $128, DI
	DECQ BX
	JNZ yhistep
yhifold:
	YFOLD
	MOVL COL_TAIL(SI), BX // tail: 0, 1 or 2 tap pairs
	TESTL BX, BX
	JZ yhipost
	YTAILROWS
	YTAIL(Y14, 0, DI)
	CMPL BX, $2
	JNE yhipost
	YTAIL(Y15, 32, DI)
yhipost:
	// A = sum(p*hi) << sh + base, and whether any lane's result is in doubt (aaHRowsZ)
	VPBROADCASTD COL_SH(SI), Y2
	VPSLLVD Y2, Y0, Y0
	VPSLLVD Y2, Y1, Y1
	VPBROADCASTD COL_BASE(SI), Y2
	VPADDD Y2, Y0, Y0
	VPADDD Y2, Y1, Y1
	MOVQ k+56(FP), BX
	VPBROADCASTD YK_FRAC(BX), Y3
	VPAND Y3, Y0, Y4
	VPAND Y3, Y1, Y5
	VPBROADCASTD COL_THRM1(SI), Y2
	VPCMPGTD Y2, Y4, Y4
	VPCMPGTD Y2, Y5, Y5
	VPOR Y5, Y4, Y4
	VPTEST Y4, Y4
	AA_MARK
	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	ADDQ $64, DX
	ADDQ $COL_SIZE, SI
	DECQ CX
	JNZ ycol

yfix:
	TESTQ R12, R12
	JZ ypack
	AA_FIXCOL(7)
	YZERO
	TESTQ BX, BX
	JZ ylofold
ylostep:
	YCHUNK(DI)
	ADDQ $24, AX
	ADDQ $128, DI
	DECQ BX
	JNZ ylostep
ylofold:
	YFOLD
	MOVL COL_TAIL(DX), BX
	TESTL BX, BX
	JZ ylopost
	YTAILROWS
	YTAIL(Y14, 0, DI)
	CMPL BX, $2
	JNE ylopost
	YTAIL(Y15, 32, DI)
ylopost:
	AA_SLOT
	VPADDD (BX), Y0, Y0
	VPADDD 32(BX), Y1, Y1
	VPBROADCASTD COL_BASE(DX), Y2 // base
	VPSUBD Y2, Y0, Y0
	VPSUBD Y2, Y1, Y1
	MOVQ k+56(FP), DI
	VPBROADCASTD YK_HALF(DI), Y2 // 2^21
	VPADDD Y2, Y0, Y0
	VPADDD Y2, Y1, Y1
	VMOVDQU Y0, (BX)
	VMOVDQU Y1, 32(BX)
	JMP yfix

ypack:
	MOVQ scratch+64(FP), DX
	MOVQ k+56(FP), BX
	MOVQ dst+8(FP), AX
	MOVQ plane+40(FP), CX
	MOVQ SI, R12 // the next block's column
	YPACK4(0, 64, 128, 192, Y4)
	YPACK4(256, 320, 384, 448, Y5)
	YPACK4(512, 576, 640, 704, Y6)
	YPACK4(768, 832, 896, 960, Y7)
	YSTORE(0, 8)
	YPACK4(32, 96, 160, 224, Y4)
	YPACK4(288, 352, 416, 480, Y5)
	YPACK4(544, 608, 672, 736, Y6)
	YPACK4(800, 864, 928, 992, Y7)
	YSTORE(16, 24)
	MOVQ R12, SI
	ADDQ $16, R13
	CMPQ R13, n+24(FP)
	JLT yblock

ydone:
	VZEROUPPER
	RET
