#include "textflag.h"

// The NEON YUV converter (yuv_arm64.go): yuvNEON converts dense runs (yuvConv) and sparse pixel pairs
// (yuvConvPairs) in one loop with two ways to gather a step's samples and two ways to store them.
// Instructions Go's assembler lacks are WORDs with their exact mnemonic in the comment
// (scripts/arm64_words.py check re-assembles them). Integer arithmetic only: MUL and MLA of int32
// lanes, exact here (every term and sum lies below 2^30 in magnitude: yuvVecs).
//
// A step is 16 pixels: 8 chroma pairs and, per row, their 16 Y samples. Registers:
//   V0, V1   the even and odd pixels' Y bytes (lanes 0-7) of the row being converted
//   V2, V3   the 8 pairs' U and V bytes
//   V4-V7    gathered samples before they are put in place (semi-planar: the pairs' first and
//            second chroma bytes in V4, V5; packed: bytes 0-3 of each pixel pair in V4-V7)
//   V8-V11   the sparse gathers' lanes (a sample or pixel pair per pair), before UZP splits them
//   V9-V14   the chroma terms kr + cr*V', kg + cgu*U' + cgv*V', kb + cb*U' (pairs 0-3, 4-7)
//   V20-V22  the row's R, G, B bytes in pixel order
//   V24 = {cy, cr, cgu, cgv}, V25 = {cb, kr, kg, kb}, V26-V28 kr, kg, kb, V29 ymin in every byte
// General registers: R0, R1 the rows' outputs (R1 0: one row), R2, R3 the rows' Y (packed: the
// pixel pairs), R4, R5 U and V (semi-planar: R4 the chroma pairs), R6 the pair list (0: dense),
// R7 the step's first pixel (dense) or pair index (sparse), R8 the last step's start, R10 the mode
// (yuvNEON* constants in yuv_arm64.go), R11 the row's output, R21 the row (0, 1), R23 the step's
// length; sparse: the step's 8 pair indices q in R12-R17, R19, R20, and R22 the row whose Y it gathers.

// func yuvNEON(d0, d1, y0, y1, u, v unsafe.Pointer, ps *int32, x0, n, mode int, k *[8]int32, ymin int)
// ps nil (dense): pixels [x0, n), n-x0 >= 16, both even; steps at x0, x0+16, ..., the last at n-16;
// each stores its 16 pixels' 48 bytes at 3*x0 with one ST3.
// ps not nil (sparse): the n >= 8 pixel pairs ps[0:n] (pair q: pixels 2q, 2q+1); steps at pairs 0,
// 8, ..., the last at n-8; each pair's 6 bytes are stored at 6q by lane (an ST3 of one pixel's R,
// G, B), so no other byte of the rows changes.
TEXT ·yuvNEON(SB), NOSPLIT, $0-96
	MOVD ps+48(FP), R6
	MOVD x0+56(FP), R7
	MOVD n+64(FP), R8
	MOVD $16, R23
	CBZ R6, steps
	MOVD $0, R7
	MOVD $8, R23
steps:
	SUB R23, R8 // the last step's start
	MOVD d0+0(FP), R0
	MOVD d1+8(FP), R1
	MOVD y0+16(FP), R2
	MOVD y1+24(FP), R3
	MOVD u+32(FP), R4
	MOVD v+40(FP), R5
	MOVD mode+72(FP), R10
	MOVD k+80(FP), R9
	VLD1 (R9), [V24.S4, V25.S4]
	VDUP V25.S[1], V26.S4
	VDUP V25.S[2], V27.S4
	VDUP V25.S[3], V28.S4
	MOVD ymin+88(FP), R9
	VDUP R9, V29.B16
loop:
	CMP R8, R7
	CSEL GT, R8, R7, R7 // the last step starts at R8, overlapping the one before
	MOVD $0, R21 // row 0
	CBNZ R6, sgather
	// dense: the samples of pixels R7 .. R7+15
	CMP $2, R10
	BEQ dplanar
	BGT dpacked
	ADD R7, R4, R9
	VLD2 (R9), [V4.B8, V5.B8]
dy:
	ADD R7, R2, R9
	VLD2 (R9), [V0.B8, V1.B8]
	B place
dplanar:
	LSR $1, R7, R9
	ADD R9, R4, R22
	VLD1 (R22), [V2.B8]
	ADD R9, R5, R22
	VLD1 (R22), [V3.B8]
	B dy
dpacked:
	ADD R7<<1, R2, R9
	VLD4 (R9), [V4.B8, V5.B8, V6.B8, V7.B8]
	B place
sgather:
	// sparse: the samples of pairs ps[R7 .. R7+7]
	ADD R7<<2, R6, R9
	LDPW 0(R9), (R12, R13)
	LDPW 8(R9), (R14, R15)
	LDPW 16(R9), (R16, R17)
	LDPW 24(R9), (R19, R20)
	CMP $2, R10
	BEQ splanar
	BGT spacked
	// semi-planar: each pair's two chroma bytes, a halfword at 2q
	ADD R12<<1, R4, R9
	VLD1 (R9), V8.H[0]
	ADD R13<<1, R4, R9
	VLD1 (R9), V8.H[1]
	ADD R14<<1, R4, R9
	VLD1 (R9), V8.H[2]
	ADD R15<<1, R4, R9
	VLD1 (R9), V8.H[3]
	ADD R16<<1, R4, R9
	VLD1 (R9), V8.H[4]
	ADD R17<<1, R4, R9
	VLD1 (R9), V8.H[5]
	ADD R19<<1, R4, R9
	VLD1 (R9), V8.H[6]
	ADD R20<<1, R4, R9
	VLD1 (R9), V8.H[7]
	VUZP1 V8.B16, V8.B16, V4.B16
	VUZP2 V8.B16, V8.B16, V5.B16
	B sy
splanar:
	ADD R12, R4, R9
	VLD1 (R9), V2.B[0]
	ADD R12, R5, R9
	VLD1 (R9), V3.B[0]
	ADD R13, R4, R9
	VLD1 (R9), V2.B[1]
	ADD R13, R5, R9
	VLD1 (R9), V3.B[1]
	ADD R14, R4, R9
	VLD1 (R9), V2.B[2]
	ADD R14, R5, R9
	VLD1 (R9), V3.B[2]
	ADD R15, R4, R9
	VLD1 (R9), V2.B[3]
	ADD R15, R5, R9
	VLD1 (R9), V3.B[3]
	ADD R16, R4, R9
	VLD1 (R9), V2.B[4]
	ADD R16, R5, R9
	VLD1 (R9), V3.B[4]
	ADD R17, R4, R9
	VLD1 (R9), V2.B[5]
	ADD R17, R5, R9
	VLD1 (R9), V3.B[5]
	ADD R19, R4, R9
	VLD1 (R9), V2.B[6]
	ADD R19, R5, R9
	VLD1 (R9), V3.B[6]
	ADD R20, R4, R9
	VLD1 (R9), V2.B[7]
	ADD R20, R5, R9
	VLD1 (R9), V3.B[7]
sy:
	MOVD R2, R22
sgy:
	// the pairs' Y (two bytes at 2q) of the row at R22, split into even and odd pixels
	ADD R12<<1, R22, R9
	VLD1 (R9), V8.H[0]
	ADD R13<<1, R22, R9
	VLD1 (R9), V8.H[1]
	ADD R14<<1, R22, R9
	VLD1 (R9), V8.H[2]
	ADD R15<<1, R22, R9
	VLD1 (R9), V8.H[3]
	ADD R16<<1, R22, R9
	VLD1 (R9), V8.H[4]
	ADD R17<<1, R22, R9
	VLD1 (R9), V8.H[5]
	ADD R19<<1, R22, R9
	VLD1 (R9), V8.H[6]
	ADD R20<<1, R22, R9
	VLD1 (R9), V8.H[7]
	VUZP1 V8.B16, V8.B16, V0.B16
	VUZP2 V8.B16, V8.B16, V1.B16
	CBNZ R21, row // row 1: its Y was all that was missing
	B place
spacked:
	// packed: each pixel pair's 4 bytes at 4q, (V8, V9) split into bytes 0-3 (V4-V7) by two rounds of UZP
	ADD R12<<2, R2, R9
	VLD1 (R9), V8.S[0]
	ADD R13<<2, R2, R9
	VLD1 (R9), V8.S[1]
	ADD R14<<2, R2, R9
	VLD1 (R9), V8.S[2]
	ADD R15<<2, R2, R9
	VLD1 (R9), V8.S[3]
	ADD R16<<2, R2, R9
	VLD1 (R9), V9.S[0]
	ADD R17<<2, R2, R9
	VLD1 (R9), V9.S[1]
	ADD R19<<2, R2, R9
	VLD1 (R9), V9.S[2]
	ADD R20<<2, R2, R9
	VLD1 (R9), V9.S[3]
	VUZP1 V9.B16, V8.B16, V10.B16 // bytes 0 and 2 of the 8 pairs
	VUZP2 V9.B16, V8.B16, V11.B16 // bytes 1 and 3
	VUZP1 V10.B16, V10.B16, V4.B16
	VUZP2 V10.B16, V10.B16, V6.B16
	VUZP1 V11.B16, V11.B16, V5.B16
	VUZP2 V11.B16, V11.B16, V7.B16
place:
	// the gathered samples to V0-V3 by mode (planar gathers in place)
	CMP $2, R10
	BEQ chroma
	BGT pplaced
	CBNZ R10, pvu
	VMOV V4.B16, V2.B16 // nv12: U, V
	VMOV V5.B16, V3.B16
	B chroma
pvu:
	VMOV V5.B16, V2.B16 // nv21: V, U
	VMOV V4.B16, V3.B16
	B chroma
pplaced:
	CMP $3, R10
	BNE puyvy
	VMOV V4.B16, V0.B16 // yuyv: Y0 U Y1 V
	VMOV V6.B16, V1.B16
	VMOV V5.B16, V2.B16
	VMOV V7.B16, V3.B16
	B chroma
puyvy:
	VMOV V5.B16, V0.B16 // uyvy: U Y0 V Y1
	VMOV V7.B16, V1.B16
	VMOV V4.B16, V2.B16
	VMOV V6.B16, V3.B16
chroma:
	// the chroma terms of the 8 pairs: widen U, V to int32, then MLA onto kr, kg, kb
	VUXTL V2.B8, V4.H8
	VUXTL V4.H4, V5.S4
	VUXTL2 V4.H8, V6.S4
	VUXTL V3.B8, V4.H8
	VUXTL V4.H4, V7.S4
	VUXTL2 V4.H8, V8.S4
	VMOV V26.B16, V9.B16
	VMOV V26.B16, V10.B16
WORD $0x6fb800e9 // mla v9.4s, v7.4s, v24.s[1]
WORD $0x6fb8010a // mla v10.4s, v8.4s, v24.s[1]
	VMOV V27.B16, V11.B16
	VMOV V27.B16, V12.B16
WORD $0x6f9808ab // mla v11.4s, v5.4s, v24.s[2]
WORD $0x6fb808eb // mla v11.4s, v7.4s, v24.s[3]
WORD $0x6f9808cc // mla v12.4s, v6.4s, v24.s[2]
WORD $0x6fb8090c // mla v12.4s, v8.4s, v24.s[3]
	VMOV V28.B16, V13.B16
	VMOV V28.B16, V14.B16
WORD $0x6f9900ad // mla v13.4s, v5.4s, v25.s[0]
WORD $0x6f9900ce // mla v14.4s, v6.4s, v25.s[0]
	MOVD R0, R11
row:
	// one row: Y raised to ymin, widened, times cy (even pixels V15/V16, odd V17/V18)
WORD $0x2e3d6400 // umax v0.8b, v0.8b, v29.8b
WORD $0x2e3d6421 // umax v1.8b, v1.8b, v29.8b
	VUXTL V0.B8, V7.H8
	VUXTL V7.H4, V15.S4
	VUXTL2 V7.H8, V16.S4
	VUXTL V1.B8, V8.H8
	VUXTL V8.H4, V17.S4
	VUXTL2 V8.H8, V18.S4
WORD $0x4f9881ef // mul v15.4s, v15.4s, v24.s[0]
WORD $0x4f988210 // mul v16.4s, v16.4s, v24.s[0]
WORD $0x4f988231 // mul v17.4s, v17.4s, v24.s[0]
WORD $0x4f988252 // mul v18.4s, v18.4s, v24.s[0]
	// R: the even pixels' sums narrowed to bytes in V5, the odd ones' in V6, zipped
	VADD V9.S4, V15.S4, V2.S4
	VADD V10.S4, V16.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9485 // uqshrn v5.8b, v4.8h, #4
	VADD V9.S4, V17.S4, V2.S4
	VADD V10.S4, V18.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9486 // uqshrn v6.8b, v4.8h, #4
	VZIP1 V6.B16, V5.B16, V20.B16
	// G: the even pixels' sums narrowed to bytes in V5, the odd ones' in V6, zipped
	VADD V11.S4, V15.S4, V2.S4
	VADD V12.S4, V16.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9485 // uqshrn v5.8b, v4.8h, #4
	VADD V11.S4, V17.S4, V2.S4
	VADD V12.S4, V18.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9486 // uqshrn v6.8b, v4.8h, #4
	VZIP1 V6.B16, V5.B16, V21.B16
	// B: the even pixels' sums narrowed to bytes in V5, the odd ones' in V6, zipped
	VADD V13.S4, V15.S4, V2.S4
	VADD V14.S4, V16.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9485 // uqshrn v5.8b, v4.8h, #4
	VADD V13.S4, V17.S4, V2.S4
	VADD V14.S4, V18.S4, V3.S4
WORD $0x2f108444 // sqshrun v4.4h, v2.4s, #16
WORD $0x6f108464 // sqshrun2 v4.8h, v3.4s, #16
WORD $0x2f0c9486 // uqshrn v6.8b, v4.8h, #4
	VZIP1 V6.B16, V5.B16, V22.B16
	CBNZ R6, sstore
	ADD R7<<1, R7, R9 // dense: 16 pixels at 3x
	ADD R9, R11, R9
	VST3 [V20.B16, V21.B16, V22.B16], (R9)
	B rowdone
sstore:
	// sparse: pair q's two pixels at 6q, 6q+3
	ADD R12<<1, R12, R9
	ADD R9<<1, R11, R9
WORD $0x0d9f2134 // st3 { v20.b, v21.b, v22.b }[0], [x9], #3
WORD $0x0d002534 // st3 { v20.b, v21.b, v22.b }[1], [x9]
	ADD R13<<1, R13, R9
	ADD R9<<1, R11, R9
WORD $0x0d9f2934 // st3 { v20.b, v21.b, v22.b }[2], [x9], #3
WORD $0x0d002d34 // st3 { v20.b, v21.b, v22.b }[3], [x9]
	ADD R14<<1, R14, R9
	ADD R9<<1, R11, R9
WORD $0x0d9f3134 // st3 { v20.b, v21.b, v22.b }[4], [x9], #3
WORD $0x0d003534 // st3 { v20.b, v21.b, v22.b }[5], [x9]
	ADD R15<<1, R15, R9
	ADD R9<<1, R11, R9
WORD $0x0d9f3934 // st3 { v20.b, v21.b, v22.b }[6], [x9], #3
WORD $0x0d003d34 // st3 { v20.b, v21.b, v22.b }[7], [x9]
	ADD R16<<1, R16, R9
	ADD R9<<1, R11, R9
WORD $0x4d9f2134 // st3 { v20.b, v21.b, v22.b }[8], [x9], #3
WORD $0x4d002534 // st3 { v20.b, v21.b, v22.b }[9], [x9]
	ADD R17<<1, R17, R9
	ADD R9<<1, R11, R9
WORD $0x4d9f2934 // st3 { v20.b, v21.b, v22.b }[10], [x9], #3
WORD $0x4d002d34 // st3 { v20.b, v21.b, v22.b }[11], [x9]
	ADD R19<<1, R19, R9
	ADD R9<<1, R11, R9
WORD $0x4d9f3134 // st3 { v20.b, v21.b, v22.b }[12], [x9], #3
WORD $0x4d003534 // st3 { v20.b, v21.b, v22.b }[13], [x9]
	ADD R20<<1, R20, R9
	ADD R9<<1, R11, R9
WORD $0x4d9f3934 // st3 { v20.b, v21.b, v22.b }[14], [x9], #3
WORD $0x4d003d34 // st3 { v20.b, v21.b, v22.b }[15], [x9]
rowdone:
	CBNZ R21, next
	CBZ R1, next
	MOVD $1, R21 // row 1: the same chroma terms, its own Y
	MOVD R1, R11
	CBNZ R6, srow1
	ADD R7, R3, R9
	VLD2 (R9), [V0.B8, V1.B8]
	B row
srow1:
	MOVD R3, R22
	B sgy
next:
	CMP R8, R7
	BGE done
	ADD R23, R7
	B loop
done:
	RET
