#include "textflag.h"

// The NEON horizontal pass of the antialias (Pillow / PyTorch uint8) fast path (resize_aa_arm64.go;
// the vertical pass: resize_aa_vertical_arm64.s). As in resize_fast_arm64.s: WORDs carry the exact
// mnemonic (scripts/arm64_words.py check) and the integer sums wrap in int32 as Go's do.

// func aaHNEON(row, cols, nw, d unsafe.Pointer, nc, n int)
// nc >= 1 columns from cols (aaNCol: off, groups, w, tail), weights at nw (8 int32 per group, 4 for
// the tail, zero past the column's taps), pixels at row+off (24-byte loads per group and tail),
// uint8 results at d (plane 0), d+n, d+2n; d steps by one per column.
TEXT ·aaHNEON(SB), NOSPLIT, $0-48
	MOVD row+0(FP), R0
	MOVD cols+8(FP), R1
	MOVD nw+16(FP), R2
	MOVD d+24(FP), R3
	MOVD nc+32(FP), R10
	MOVD n+40(FP), R4
	CMP $0, R10
	BLE hdone
	ADD R4, R4, R12 // 2n
	VEOR V29.B16, V29.B16, V29.B16
	MOVD $(1<<21), R5 // Pillow's rounding half, in lane 0 of each accumulator
	VMOV R5, V29.S[0]
hcol:
	MOVWU 0(R1), R5 // off
	MOVWU 4(R1), R6 // groups
	MOVWU 8(R1), R7 // first weight, in int32s
	MOVWU 12(R1), R11 // a tail of 1-4 taps
	ADD R0, R5, R8
	ADD R7<<2, R2, R9
	VMOV V29.B16, V16.B16
	VMOV V29.B16, V17.B16
	VMOV V29.B16, V18.B16
	CBZ R6, htail
hgrp:
	// 8 taps: LD3 splits the 8 pixels' channels, each widens to int32 and multiply-adds its weights
	VLD3.P 24(R8), [V0.B8, V1.B8, V2.B8]
	VLD1.P 32(R9), [V4.S4, V5.S4]
	VUXTL V0.B8, V0.H8
	VUXTL V0.H4, V6.S4
	VUXTL2 V0.H8, V7.S4
	WORD $0x4ea494d0 // mla v16.4s, v6.4s, v4.4s
	WORD $0x4ea594f0 // mla v16.4s, v7.4s, v5.4s
	VUXTL V1.B8, V1.H8
	VUXTL V1.H4, V6.S4
	VUXTL2 V1.H8, V7.S4
	WORD $0x4ea494d1 // mla v17.4s, v6.4s, v4.4s
	WORD $0x4ea594f1 // mla v17.4s, v7.4s, v5.4s
	VUXTL V2.B8, V2.H8
	VUXTL V2.H4, V6.S4
	VUXTL2 V2.H8, V7.S4
	WORD $0x4ea494d2 // mla v18.4s, v6.4s, v4.4s
	WORD $0x4ea594f2 // mla v18.4s, v7.4s, v5.4s
	SUBS $1, R6
	BNE hgrp
htail:
	// the last 1-4 taps: the 8 pixels' low half only (their 4 weights)
	CBZ R11, hsum
	VLD3 (R8), [V0.B8, V1.B8, V2.B8]
	VLD1 (R9), [V4.S4]
	VUXTL V0.B8, V0.H8
	VUXTL V0.H4, V6.S4
	WORD $0x4ea494d0 // mla v16.4s, v6.4s, v4.4s
	VUXTL V1.B8, V1.H8
	VUXTL V1.H4, V6.S4
	WORD $0x4ea494d1 // mla v17.4s, v6.4s, v4.4s
	VUXTL V2.B8, V2.H8
	VUXTL V2.H4, V6.S4
	WORD $0x4ea494d2 // mla v18.4s, v6.4s, v4.4s
hsum:
	// [sum0, sum1, sum2, sum2], >> 22, clamped to [0, 255] by the saturating narrows
	VADDP V17.S4, V16.S4, V20.S4
	VADDP V18.S4, V18.S4, V21.S4
	VADDP V21.S4, V20.S4, V20.S4
	WORD $0x4f2a0694 // sshr v20.4s, v20.4s, #22
	WORD $0x2e612a94 // sqxtun v20.4h, v20.4s
	WORD $0x2e214a94 // uqxtn v20.8b, v20.8h
	VMOV V20.S[0], R5
	MOVB R5, (R3)
	LSR $8, R5
	MOVB R5, (R3)(R4)
	LSR $8, R5
	MOVB R5, (R3)(R12)
	ADD $1, R3
	ADD $16, R1
	SUBS $1, R10
	BNE hcol
hdone:
	RET
