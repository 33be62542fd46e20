//go:build goexperiment.simd && amd64

#include "textflag.h"
#include "resize_aa_asm_amd64.h"

// The antialias horizontal pass of four source rows on AVX-512 VBMI + VNNI (aaHRowsZ in
// resize_aa_vnni_amd64.go), in assembly because Go's archsimd has no VPDPWSSD and no zeroing masks.
//
// Per column and pair of 8-tap steps, per row: one 64-byte load from the first step's first tap,
// two VPERMB (aaZConst.idx: the two steps' 24 bytes as zero-extended VPMADDWD pairs of taps 0-1,
// 2-3, 4-5, 6-7 in the four 128-bit lanes; mask K1 zeroes the high bytes) and two VPDPWSSD into the
// row's even- and odd-step accumulators (two, for VPDPWSSD's latency). A column's last 1-4 taps (a
// tail: aaAsmCol.tail) take two rows per VPERMB (row A's bytes in the low 256 bits, row B's inserted
// in the high ones; aaZConst.tail) and one VPMADDWD, half the permutes of a full step. FOLD adds a
// row's lanes and gathers the four rows in one register: [row 0 | row 1 | row 2 | row 3], each lane
// [ch0 ch1 ch2 0]; a tail's products, [A taps 0-1 | A 2-3 | B 0-1 | B 2-3], add in at its first stage,
// whose sums have that layout.

// one 8-tap step of the four rows on the 64 bytes at AX+O, through permute index IDX, with the
// weights in Z12 (loaded by the caller), into accumulators A0-A3
#define STEP(O, IDX, A0, A1, A2, A3) \
	VMOVDQU8 O(R8)(AX*1), Z0; VPERMB.Z Z0, IDX, K1, Z4; VPDPWSSD Z12, Z4, A0; \
	VMOVDQU8 O(R9)(AX*1), Z1; VPERMB.Z Z1, IDX, K1, Z5; VPDPWSSD Z12, Z5, A1; \
	VMOVDQU8 O(R10)(AX*1), Z2; VPERMB.Z Z2, IDX, K1, Z6; VPDPWSSD Z12, Z6, A2; \
	VMOVDQU8 O(R11)(AX*1), Z3; VPERMB.Z Z3, IDX, K1, Z7; VPDPWSSD Z12, Z7, A3

// two steps: the even one's 24 bytes and the odd one's at 24-47 of the same loads
#define TWO(W) \
	VMOVDQU8 (R8)(AX*1), Z0; VMOVDQU8 (R9)(AX*1), Z1; VMOVDQU8 (R10)(AX*1), Z2; VMOVDQU8 (R11)(AX*1), Z3; \
	VMOVDQU16 (W), Z12; VMOVDQU16 64(W), Z13; \
	VPERMB.Z Z0, Z30, K1, Z4; VPERMB.Z Z0, Z31, K1, Z5; VPDPWSSD Z12, Z4, Z16; VPDPWSSD Z13, Z5, Z20; \
	VPERMB.Z Z1, Z30, K1, Z6; VPERMB.Z Z1, Z31, K1, Z7; VPDPWSSD Z12, Z6, Z17; VPDPWSSD Z13, Z7, Z21; \
	VPERMB.Z Z2, Z30, K1, Z8; VPERMB.Z Z2, Z31, K1, Z9; VPDPWSSD Z12, Z8, Z18; VPDPWSSD Z13, Z9, Z22; \
	VPERMB.Z Z3, Z30, K1, Z10; VPERMB.Z Z3, Z31, K1, Z11; VPDPWSSD Z12, Z10, Z19; VPDPWSSD Z13, Z11, Z23

// the last, even step alone
#define ONE(W) \
	VMOVDQU16 (W), Z12; \
	STEP(0, Z30, Z16, Z17, Z18, Z19)

// the tail: rows 0, 1 into Z14, rows 2, 3 into Z27 (32 bytes of each row from AX on)
#define TAIL(W) \
	VMOVDQU16 (W), Z12; \
	VMOVDQU8 (R8)(AX*1), Y0; VINSERTI64X4 $1, (R9)(AX*1), Z0, Z0; VPERMB.Z Z0, Z26, K1, Z4; VPMADDWD Z12, Z4, Z14; \
	VMOVDQU8 (R10)(AX*1), Y1; VINSERTI64X4 $1, (R11)(AX*1), Z1, Z1; VPERMB.Z Z1, Z26, K1, Z5; VPMADDWD Z12, Z5, Z27

#define ZERO \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23; \
	VPXORD Z14, Z14, Z14; VPXORD Z27, Z27, Z27

// the accumulators' sum per row, into R: [row 0 | row 1 | row 2 | row 3]
#define FOLD(R) \
	VPADDD Z20, Z16, Z16; VPADDD Z21, Z17, Z17; VPADDD Z22, Z18, Z18; VPADDD Z23, Z19, Z19; \
	VSHUFI64X2 $0x88, Z17, Z16, Z20; VSHUFI64X2 $0xDD, Z17, Z16, Z21; VPADDD Z21, Z20, Z20; VPADDD Z14, Z20, Z20; \
	VSHUFI64X2 $0x88, Z19, Z18, Z22; VSHUFI64X2 $0xDD, Z19, Z18, Z23; VPADDD Z23, Z22, Z22; VPADDD Z27, Z22, Z22; \
	VSHUFI64X2 $0x88, Z22, Z20, Z16; VSHUFI64X2 $0xDD, Z22, Z20, Z17; VPADDD Z17, Z16, R

// four columns' sums at scratch offsets A-D (DX) shifted to their results and packed to bytes in R,
// each row's lane [ch0 c0-3 | ch1 | ch2 | ch3] (regroup shuffle in Z27)
#define PACK4(A, B, C, D, R) \
	VPSRAD $22, A(DX), Z0; VPSRAD $22, B(DX), Z2; VPACKSSDW Z2, Z0, Z0; \
	VPSRAD $22, C(DX), Z1; VPSRAD $22, D(DX), Z3; VPACKSSDW Z3, Z1, Z1; \
	VPACKUSWB Z1, Z0, R; VPSHUFB Z27, R, R

// func aaHRowsZ(rows, dst *[4]unsafe.Pointer, cols *aaAsmCol, n int, w *aaZW, plane, lodelta int, k *aaZConst, scratch *[16][16]int32, pf uintptr, pfn int)
TEXT ·aaHRowsZ(SB), NOSPLIT, $0-88
	AA_ROWS4
	MOVQ k+56(FP), AX
	VMOVDQU64 ZK_IDX0(AX), Z30
	VMOVDQU64 ZK_IDX1(AX), Z31
	VMOVDQU64 ZK_TAIL(AX), Z26
	VPBROADCASTD ZK_HALF(AX), Z28 // 2^21: the rounding half
	VPBROADCASTD ZK_FRAC(AX), Z29 // 2^22 - 1: the fraction bits
	MOVQ $0x5555555555555555, BX
	KMOVQ BX, K1
	XORQ R13, R13 // the block's first column
	CMPQ R13, n+24(FP)
	JGE done

block:
	MOVQ scratch+64(FP), DX
	MOVQ $16, CX
	XORQ R12, R12 // the block's columns in doubt: bit 15-k for column k

col:
	AA_PREFETCH(pf+72(FP), pfn+80(FP))
	MOVLQSX COL_OFF(SI), AX  // off
	MOVL COL_STEPS(SI), BX     // full steps
	MOVLQSX COL_W(SI), DI // the column's weights: w + 64*zcol.w
	SHLQ $6, DI
	ADDQ w+32(FP), DI
	ZERO
	SUBQ $2, BX
	JB hione
hitwo:
	TWO(DI)
	ADDQ $48, AX
	ADDQ $128, DI
	SUBQ $2, BX
	JAE hitwo
hione:
	CMPQ BX, $-1
	JNE hitail
	ONE(DI)
	ADDQ $24, AX
	ADDQ $64, DI
hitail:
	CMPL COL_TAIL(SI), $0
	JE hifold
	TAIL(DI)
hifold:
	FOLD(Z24)
	// A = sum(p*hi) << sh + base; exact when A mod 2^22 < thr in every lane (aaCol). A column in
	// doubt is only marked here and completed after the block's loop: a branch on it here (taken
	// by ~8% of the bicubic 1080p -> 224 columns on photographs) resolves only after the whole
	// column's chain and flushed the columns behind it when mispredicted (perf: the shift below and
	// the next column's first loads drew the most samples)
	VPSLLVD.BCST COL_SH(SI), Z24, Z24
	VPADDD.BCST COL_BASE(SI), Z24, Z24
	VPANDD Z29, Z24, Z15
	VPCMPGTD.BCST COL_THRM1(SI), Z15, K2
	KORTESTW K2, K2
	AA_MARK
	VMOVDQU32 Z24, (DX)
	ADDQ $64, DX
	ADDQ $COL_SIZE, SI
	DECQ CX
	JNZ col

fix:
	// the columns in doubt: the low halves' sum, from the weights lodelta bytes past the high ones
	TESTQ R12, R12
	JZ pack
	AA_FIXCOL(6)
	ZERO
	SUBQ $2, BX
	JB loone
lotwo:
	TWO(DI)
	ADDQ $48, AX
	ADDQ $128, DI
	SUBQ $2, BX
	JAE lotwo
loone:
	CMPQ BX, $-1
	JNE lotail
	ONE(DI)
	ADDQ $24, AX
	ADDQ $64, DI
lotail:
	CMPL COL_TAIL(DX), $0
	JE lofold
	TAIL(DI)
lofold:
	FOLD(Z25)
	AA_SLOT
	VPADDD (BX), Z25, Z25
	VPADDD Z28, Z25, Z25
	VPSUBD.BCST COL_BASE(DX), Z25, Z25 // A + L + 2^21 - base: the exact sum plus 2^21
	VMOVDQU32 Z25, (BX)
	JMP fix

pack:
	// the block's 16 columns shifted to their results, and to bytes: per four columns, two
	// saturating packs give each row's lane [c0 ch0-3 | c1 | c2 | c3]; a byte shuffle makes it
	// [ch0 c0-3 | ch1 | ch2 | ch3], and a 4x4 transpose of dwords over the four groups gives each
	// channel's 16 columns of each row in lanes, stored at column R13 of the row's three planes
	MOVQ scratch+64(FP), DX
	MOVQ k+56(FP), AX
	VMOVDQU64 ZK_REGROUP(AX), Z27
	PACK4(0, 64, 128, 192, Z8)
	PACK4(256, 320, 384, 448, Z9)
	PACK4(512, 576, 640, 704, Z10)
	PACK4(768, 832, 896, 960, Z11)
	VPUNPCKLDQ Z9, Z8, Z0
	VPUNPCKHDQ Z9, Z8, Z1
	VPUNPCKLDQ Z11, Z10, Z2
	VPUNPCKHDQ Z11, Z10, Z3
	VPUNPCKLQDQ Z2, Z0, Z4 // channel 0: row i's 16 columns in lane i
	VPUNPCKHQDQ Z2, Z0, Z5 // channel 1
	VPUNPCKLQDQ Z3, Z1, Z6 // channel 2
	MOVQ dst+8(FP), AX
	MOVQ plane+40(FP), BX
	MOVQ 0(AX), DX
	ADDQ R13, DX
	VMOVDQU X4, (DX)
	VMOVDQU X5, (DX)(BX*1)
	VMOVDQU X6, (DX)(BX*2)
	MOVQ 8(AX), DX
	ADDQ R13, DX
	VEXTRACTI32X4 $1, Z4, (DX)
	VEXTRACTI32X4 $1, Z5, (DX)(BX*1)
	VEXTRACTI32X4 $1, Z6, (DX)(BX*2)
	MOVQ 16(AX), DX
	ADDQ R13, DX
	VEXTRACTI32X4 $2, Z4, (DX)
	VEXTRACTI32X4 $2, Z5, (DX)(BX*1)
	VEXTRACTI32X4 $2, Z6, (DX)(BX*2)
	MOVQ 24(AX), DX
	ADDQ R13, DX
	VEXTRACTI32X4 $3, Z4, (DX)
	VEXTRACTI32X4 $3, Z5, (DX)(BX*1)
	VEXTRACTI32X4 $3, Z6, (DX)(BX*2)
	ADDQ $16, R13
	CMPQ R13, n+24(FP)
	JLT block

done:
	VZEROUPPER
	RET
