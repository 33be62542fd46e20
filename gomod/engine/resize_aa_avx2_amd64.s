//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "funcdata.h"
#include "resize_aa_asm_amd64.h"

// aaHRowsY: aaHRows4W's column loop in assembly on AVX2 (see resize_aa_avx2_amd64.go), with
// aaHRowsZ's structure (resize_aa_vnni_amd64.s) at 256 bits: per column and 8-tap chunk (aaWide),
// per row, one 32-byte load from 4 bytes before the chunk's first tap, two VPSHUFB (aaWideA/B), two
// VPMADDWD and two VPADDD (the first chunk's sums written, not added); a 1-4 tap tail with two rows
// per register (aaTailA/B); the rows' lanes folded (a permute and a blend) to [row 0 | row 1] and
// [row 2 | row 3]; each block of 16 packed and stored as aaHRowsZ does, per row pair. A column in
// doubt is recorded (in the frame) and, after the last block, each of its rows in doubt is
// computed whole and its bytes stored over the block's (see aaHRowsY's doc comment).

// one row's chunk: R the row pointer, ACC its accumulator; weights in Y6 (A) and Y7 (B)
#define YROW(R, ACC) \
	VMOVDQU (R)(AX*1), Y0; VPSHUFB Y12, Y0, Y1; VPSHUFB Y13, Y0, Y0; \
	VPMADDWD Y6, Y1, Y1; VPMADDWD Y7, Y0, Y0; VPADDD Y1, ACC, ACC; VPADDD Y0, ACC, ACC

// the same for a column's first chunk: the sums written, not added (no accumulators to zero)
#define YROW0(R, ACC) \
	VMOVDQU (R)(AX*1), Y0; VPSHUFB Y12, Y0, Y1; VPSHUFB Y13, Y0, Y0; \
	VPMADDWD Y6, Y1, Y1; VPMADDWD Y7, Y0, Y0; VPADDD Y1, Y0, ACC

#define YCHUNK0(W) \
	VMOVDQU (W), Y6; VMOVDQU 32(W), Y7; \
	YROW0(R8, Y8); YROW0(R9, Y9); YROW0(R10, Y10); YROW0(R11, Y11)

// one chunk of the four rows, weights at W
#define YCHUNK(W) \
	VMOVDQU (W), Y6; VMOVDQU 32(W), Y7; \
	YROW(R8, Y8); YROW(R9, Y9); YROW(R10, Y10); YROW(R11, Y11)

// a chunk D bytes of pixels and 128*D/24 bytes of weights past AX and DI (an unrolled step)
#define YROWD(R, ACC, D) \
	VMOVDQU D(R)(AX*1), Y0; VPSHUFB Y12, Y0, Y1; VPSHUFB Y13, Y0, Y0; \
	VPMADDWD Y6, Y1, Y1; VPMADDWD Y7, Y0, Y0; VPADDD Y1, ACC, ACC; VPADDD Y0, ACC, ACC

#define YCHUNKD(D, WD) \
	VMOVDQU WD(DI), Y6; VMOVDQU WD+32(DI), Y7; \
	YROWD(R8, Y8, D); YROWD(R9, Y9, D); YROWD(R10, Y10, D); YROWD(R11, Y11, D)

#define YZERO \
	VPXOR Y8, Y8, Y8; VPXOR Y9, Y9, Y9; VPXOR Y10, Y10, Y10; VPXOR Y11, Y11, Y11

// the four accumulators' lanes added: rows 0, 1 into Y0, rows 2, 3 into Y1, one lane-crossing
// permute and one blend a row pair ([a.hi | b.lo] + [a.lo | b.hi]): VPERM2I128 takes only port 5,
// VPBLENDD any vector port
#define YFOLD \
	VPERM2I128 $0x21, Y9, Y8, Y0; VPBLENDD $0xf0, Y9, Y8, Y1; VPADDD Y1, Y0, Y0; \
	VPERM2I128 $0x21, Y11, Y10, Y1; VPBLENDD $0xf0, Y11, Y10, Y2; VPADDD Y2, Y1, Y1

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

// func aaHRowsY(rows, dst *[4]unsafe.Pointer, cols *aaAsmCol, n int, w *aaWide, plane int, k *aaYConst, pf uintptr, pfn int)
// The frame (not zeroed, unlike the Go array it replaces, whose zeroing drew ~0.6% of a 1080p bicubic
// plan's samples, perf): a block's sums at sums-2056(SP) (16
// columns, four rows of [ch0 ch1 ch2 0]), the columns in doubt at fix-1032(SP) (YFIX_CAP entries
// j<<16 | lanes, row r's four lanes at bits 4r to 4r+3), the fix's row at frow-8(SP). No pointers:
// the function calls nothing, so the stack check at its entry is its only safe point.
TEXT ·aaHRowsY(SB), 0, $2056-72
	NO_LOCAL_POINTERS
	AA_ROWS4
	MOVQ k+48(FP), AX
	VMOVDQU YK_SHA(AX), Y12
	VMOVDQU YK_SHB(AX), Y13
	VMOVDQU YK_TA(AX), Y14
	VMOVDQU YK_TB(AX), Y15
	XORQ R13, R13
	XORQ R12, R12 // the columns in doubt so far (fix)
	CMPQ R13, n+24(FP)
	JGE ydone

yblock:
	LEAQ sums-2056(SP), DX
	MOVQ $16, CX

ycol:
	AA_PREFETCH(pf+56(FP), pfn+64(FP))
	MOVLQSX COL_OFF(SI), AX  // off
	MOVL COL_STEPS(SI), BX     // whole chunks
	MOVLQSX COL_W(SI), DI // the column's first chunk: w + 128*wch
	SHLQ $7, DI
	ADDQ w+32(FP), DI
	TESTQ BX, BX
	JNZ yhifirst
	YZERO
	JMP yhifold
yhifirst:
	YCHUNK0(DI)
	// two and four chunks unrolled, the common cases (a 1080p -> 224 column's 17-18 taps bilinear,
	// 34-35 bicubic): the loop's three scalar instructions a chunk took ~3% of the bicubic pass
	CMPQ BX, $4
	JNE yhitwo
	YCHUNKD(24, 128)
	YCHUNKD(48, 256)
	YCHUNKD(72, 384)
	ADDQ $96, AX
	ADDQ $512, DI
	JMP yhifold
yhitwo:
	CMPQ BX, $2
	JNE yhirest
	YCHUNKD(24, 128)
	ADDQ $48, AX
	ADDQ $256, DI
	JMP yhifold
yhirest:
	ADDQ $24, AX
	ADDQ $128, DI
	DECQ BX
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
	MOVQ k+48(FP), BX
	VPBROADCASTD YK_FRAC(BX), Y3
	VPAND Y3, Y0, Y4
	VPAND Y3, Y1, Y5
	VPBROADCASTD COL_THRM1(SI), Y2
	VPCMPGTD Y2, Y4, Y4
	VPCMPGTD Y2, Y5, Y5
	// the column's lanes in doubt, m (row r's at bits 4r to 4r+3), recorded with its index j as
	// j<<16 | m at fix[R12]; R12 counts the column only if m != 0 (no branch: ~7% of the columns,
	// at random, are in doubt)
	VMOVMSKPS Y4, AX
	VMOVMSKPS Y5, BX
	SHLQ $8, BX
	ORQ AX, BX
	LEAQ 16(R13), AX
	SUBQ CX, AX
	SHLQ $16, AX
	ORQ BX, AX
	LEAQ fix-1032(SP), DI
	MOVL AX, (DI)(R12*4)
	CMPQ BX, $1
	SBBQ $-1, R12 // + 1 unless m == 0 (CF)
	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	ADDQ $64, DX
	ADDQ $COL_SIZE, SI
	DECQ CX
	JNZ ycol

ypack:
	LEAQ sums-2056(SP), DX
	MOVQ k+48(FP), BX
	MOVQ dst+8(FP), AX
	MOVQ plane+40(FP), CX
	MOVQ SI, DI // the next block's column
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
	MOVQ DI, SI
	ADDQ $16, R13
	CMPQ R13, n+24(FP)
	JLT yblock

ydone:
	// The lanes in doubt: each such row of a recorded column computed whole, its high and low halves'
	// sums from one pass over its bytes (Pillow's sum hi<<sh + lo + 2^21), and its three bytes
	// written over the ones the block stored. One row at a time: 1.1 rows a column in doubt on the
	// 1080p photos; after the last block, so that the loops' exits mispredict once a call, not once a
	// block.
	LEAQ fix-1032(SP), SI
yentry:
	TESTQ R12, R12
	JZ yend
	MOVL (SI), R13 // j<<16 | m
	ADDQ $4, SI
	DECQ R12
yrow:
	TESTL $0xffff, R13
	JZ yentry
	BSFL R13, BX
	SHRL $2, BX // the row
	MOVQ BX, frow-8(SP)
	LEAL (BX*4), CX
	MOVL $15, AX
	SHLL CX, AX
	NOTL AX
	ANDL AX, R13 // its lanes cleared
	MOVQ rows+0(FP), CX
	MOVQ (CX)(BX*8), CX
	MOVL R13, DX
	SHRL $16, DX
	IMULQ $COL_SIZE, DX
	ADDQ cols+16(FP), DX
	MOVLQSX COL_OFF(DX), AX
	MOVL COL_STEPS(DX), BX
	MOVLQSX COL_W(DX), DI
	SHLQ $7, DI
	ADDQ w+32(FP), DI
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	TESTQ BX, BX
	JZ yrfold
yrstep:
	VMOVDQU (CX)(AX*1), Y0
	VPSHUFB Y12, Y0, Y1
	VPSHUFB Y13, Y0, Y0
	VPMADDWD (DI), Y1, Y4
	VPMADDWD WIDE_HIB(DI), Y0, Y5
	VPADDD Y4, Y2, Y2
	VPADDD Y5, Y2, Y2
	VPMADDWD WIDE_LOA(DI), Y1, Y1
	VPMADDWD WIDE_LOB(DI), Y0, Y0
	VPADDD Y1, Y3, Y3
	VPADDD Y0, Y3, Y3
	ADDQ $24, AX
	ADDQ $128, DI
	DECQ BX
	JNZ yrstep
yrfold:
	VEXTRACTI128 $1, Y2, X4
	VPADDD X4, X2, X2
	VEXTRACTI128 $1, Y3, X4
	VPADDD X4, X3, X3
	MOVL COL_TAIL(DX), BX
	TESTL BX, BX
	JZ yrpost
	VMOVDQU (CX)(AX*1), X0 // the row's 16 bytes: lane 0 of the tail's row pair
	VPSHUFB X14, X0, X1
	VPMADDWD (DI), X1, X4
	VPADDD X4, X2, X2
	VPMADDWD WIDE_LOA(DI), X1, X4
	VPADDD X4, X3, X3
	VPSHUFB X15, X0, X1 // the second pair even for a tail of one: its weights are zero (no branch)
	VPMADDWD WIDE_HIB(DI), X1, X4
	VPADDD X4, X2, X2
	VPMADDWD WIDE_LOB(DI), X1, X4
	VPADDD X4, X3, X3
yrpost:
	VPBROADCASTD COL_SH(DX), X4
	VPSLLVD X4, X2, X2
	VPADDD X3, X2, X2
	MOVQ k+48(FP), BX
	VPBROADCASTD YK_HALF(BX), X4
	VPADDD X4, X2, X2
	VPSRAD $22, X2, X2
	VPACKSSDW X2, X2, X2
	VPACKUSWB X2, X2, X2
	VMOVD X2, AX // the row's bytes: R | G<<8 | B<<16
	MOVQ frow-8(SP), BX
	MOVQ dst+8(FP), DI
	MOVQ (DI)(BX*8), DI
	MOVL R13, BX
	SHRL $16, BX
	ADDQ BX, DI
	MOVQ plane+40(FP), BX
	MOVB AX, (DI)
	SHRL $8, AX
	MOVB AX, (DI)(BX*1)
	SHRL $8, AX
	MOVB AX, (DI)(BX*2)
	JMP yrow

yend:
	VZEROUPPER
	RET

// aaVRow3Y: aaVRow3's column loop in assembly (see resize_aa_avx2_amd64.go): per block of 16
// columns and tap pair, the two rows' 16 bytes of each plane interleaved (VPUNPCKL/HBW, the second
// row from memory), widened to words (VPMOVZXBW) and multiplied by the pair's high halves (one
// VPMADDWD per 8 columns): six accumulators, columns 0-7 and 8-15 of the three planes, in order.
// A plane's block in doubt adds that plane's low halves only (with all three planes' whenever one
// was in doubt, the 1080p -> 224 blocks took them ~3x as often: any of 48 lanes instead of 16).

// one plane's pair: rows at AX and BX, the plane's block at offset O; sums into A (columns 0-7) and
// B (8-15); weights at WO(R9)
#define YVPAIR(O, A, B, WO) \
	VMOVDQU (AX)(O*1), X10; VPUNPCKLBW (BX)(O*1), X10, X11; VPUNPCKHBW (BX)(O*1), X10, X10; \
	VPMOVZXBW X11, Y11; VPMOVZXBW X10, Y10; VPMADDWD WO(R9), Y11, Y11; VPMADDWD WO(R9), Y10, Y10; \
	VPADDD Y11, A, A; VPADDD Y10, B, B

// the split sums of a plane: A = sum(p*hi) << sh + base, the lanes in doubt tested (ZF clear: some)
#define YVSPLIT(A, B) \
	VPSLLVD Y6, A, A; VPSLLVD Y6, B, B; VPADDD Y7, A, A; VPADDD Y7, B, B; \
	VPAND Y8, A, Y10; VPAND Y8, B, Y11; VPCMPGTD Y9, Y10, Y10; VPCMPGTD Y9, Y11, Y11; \
	VPOR Y11, Y10, Y10; VPTEST Y10, Y10

// a plane's results: the sums' bytes (>> 22, clamped), normalised as normTables.apply does (float32
// multiply, subtract, divide), stored at column DX of plane C's row (its pointer at 8*C(R13))
#define YVEMIT(A, B, C) \
	VPSRAD $22, A, A; VPSRAD $22, B, B; VPXOR Y10, Y10, Y10; VPMAXSD Y10, A, A; VPMAXSD Y10, B, B; \
	VPMINSD Y13, A, A; VPMINSD Y13, B, B; VCVTDQ2PS A, A; VCVTDQ2PS B, B; \
	VBROADCASTSS VK_SCALE+4*C(CX), Y10; VMULPS Y10, A, A; VMULPS Y10, B, B; \
	VBROADCASTSS VK_MEAN+4*C(CX), Y10; VSUBPS Y10, A, A; VSUBPS Y10, B, B; \
	VBROADCASTSS VK_STD+4*C(CX), Y10; VDIVPS Y10, A, A; VDIVPS Y10, B, B; \
	MOVQ 8*C(R13), DI; VMOVUPS A, (DI)(DX*4); VMOVUPS B, 32(DI)(DX*4)

// func aaVRow3Y(out *[3]unsafe.Pointer, hs unsafe.Pointer, np, x, n int, po *[3]int, w unsafe.Pointer, k *aaVConst)
TEXT ·aaVRow3Y(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), R13
	MOVQ k+56(FP), CX
	VPBROADCASTD VK_SH(CX), Y6
	VPBROADCASTD VK_BASE(CX), Y7
	VPBROADCASTD VK_FRAC(CX), Y8
	VPBROADCASTD VK_THRM1(CX), Y9
	VPBROADCASTD VK_TOP(CX), Y13
	VPBROADCASTD VK_FIX(CX), Y14
	MOVQ x+24(FP), DX
	CMPQ DX, n+32(FP)
	JGE yvdone

yvblock:
	// the three planes' offsets of this block: po[c] + x
	MOVQ po+40(FP), SI
	MOVQ 0(SI), R10
	ADDQ DX, R10
	MOVQ 8(SI), R11
	ADDQ DX, R11
	MOVQ 16(SI), R12
	ADDQ DX, R12
	MOVQ hs+8(FP), R8
	MOVQ w+48(FP), R9
	MOVQ np+16(FP), SI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
yvpair:
	MOVQ 0(R8), AX  // hs[2i]'s data
	MOVQ 24(R8), BX // hs[2i+1]'s
	YVPAIR(R10, Y0, Y1, 0)
	YVPAIR(R11, Y2, Y3, 0)
	YVPAIR(R12, Y4, Y5, 0)
	ADDQ $48, R8
	ADDQ $VPAIR_SIZE, R9
	DECQ SI
	JNZ yvpair

	YVSPLIT(Y0, Y1)
	JNZ yvlow0
yvemit0:
	YVEMIT(Y0, Y1, 0)
	YVSPLIT(Y2, Y3)
	JNZ yvlow1
yvemit1:
	YVEMIT(Y2, Y3, 1)
	YVSPLIT(Y4, Y5)
	JNZ yvlow2
yvemit2:
	YVEMIT(Y4, Y5, 2)
	ADDQ $16, DX
	CMPQ DX, n+32(FP)
	JLT yvblock

yvdone:
	VZEROUPPER
	RET

// A plane's block in doubt (a few percent): its low halves' sums over the pairs into Y12 (columns
// 0-7) and Y15 (8-15), the plane's offset in BX, then back to the plane's emit (SI: the plane).
yvlow0:
	MOVQ R10, DI
	XORQ SI, SI
	JMP yvlow
yvlow1:
	MOVQ R11, DI
	MOVQ $1, SI
	JMP yvlow
yvlow2:
	MOVQ R12, DI
	MOVQ $2, SI
yvlow:
	MOVQ hs+8(FP), R8
	MOVQ w+48(FP), R9
	MOVQ np+16(FP), CX
	VPXOR Y12, Y12, Y12
	VPXOR Y15, Y15, Y15
yvlowpair:
	MOVQ 0(R8), AX
	MOVQ 24(R8), BX
	YVPAIR(DI, Y12, Y15, VPAIR_LO)
	ADDQ $48, R8
	ADDQ $VPAIR_SIZE, R9
	DECQ CX
	JNZ yvlowpair
	MOVQ k+56(FP), CX
	// A + L + (2^21 - base): Pillow's sum plus its rounding
	VPADDD Y14, Y12, Y12
	VPADDD Y14, Y15, Y15
	CMPQ SI, $1
	JEQ yvback1
	JGT yvback2
	VPADDD Y12, Y0, Y0
	VPADDD Y15, Y1, Y1
	JMP yvemit0
yvback1:
	VPADDD Y12, Y2, Y2
	VPADDD Y15, Y3, Y3
	JMP yvemit1
yvback2:
	VPADDD Y12, Y4, Y4
	VPADDD Y15, Y5, Y5
	JMP yvemit2
