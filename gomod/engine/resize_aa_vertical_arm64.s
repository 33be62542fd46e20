#include "textflag.h"

// The NEON vertical pass of the antialias fast path (resize_aa_vertical_arm64.go), as
// resize_aa_arm64.s's horizontal one: WORDs carry the exact mnemonic (scripts/arm64_words.py check),
// the integer sums wrap in int32 as Go's do, and the normalisation is FMUL, FSUB, FDIV (never fused).

// func aaVNEON(out, hs unsafe.Pointer, nt, po int, wv unsafe.Pointer, nb int, scale, mean, std float32)
// nb >= 1 blocks of 16 columns; nt >= 1 taps: row t's data pointer at hs+24t (a [][]uint8), read
// from po on; weights wv (int32 each).
TEXT ·aaVNEON(SB), NOSPLIT, $0-60
	MOVD out+0(FP), R0
	MOVD hs+8(FP), R1
	MOVD nt+16(FP), R2
	MOVD po+24(FP), R12
	MOVD wv+32(FP), R3
	MOVD nb+40(FP), R4
	CMP $0, R4
	BLE vdone
	CMP $0, R2
	BLE vdone
	MOVWU scale+48(FP), R5
	VDUP R5, V25.S4
	MOVWU mean+52(FP), R5
	VDUP R5, V26.S4
	MOVWU std+56(FP), R5
	VDUP R5, V27.S4
	MOVD $(1<<21), R5
	VDUP R5, V28.S4
	VEOR V29.B16, V29.B16, V29.B16
	MOVD $255, R5
	VDUP R5, V30.S4
vblk:
	VMOV V28.B16, V16.B16
	VMOV V28.B16, V17.B16
	VMOV V28.B16, V18.B16
	VMOV V28.B16, V19.B16
	MOVD R1, R6 // the row headers
	MOVD R3, R7 // the weights
	MOVD R2, R8 // taps left
vtap:
	MOVD (R6), R9
	ADD $24, R6
	ADD R12, R9
	VLD1 (R9), [V0.B16]
	VLD1R.P 4(R7), [V1.S4]
	VUXTL V0.B8, V2.H8
	VUXTL2 V0.B16, V3.H8
	VUXTL V2.H4, V4.S4
	VUXTL2 V2.H8, V5.S4
	VUXTL V3.H4, V6.S4
	VUXTL2 V3.H8, V7.S4
	WORD $0x4ea19490 // mla v16.4s, v4.4s, v1.4s
	WORD $0x4ea194b1 // mla v17.4s, v5.4s, v1.4s
	WORD $0x4ea194d2 // mla v18.4s, v6.4s, v1.4s
	WORD $0x4ea194f3 // mla v19.4s, v7.4s, v1.4s
	SUBS $1, R8
	BNE vtap
	// >> 22, clamped to [0, 255] (clampU8), then (v*scale - mean) / std: the table's value
	WORD $0x4f2a0610 // sshr v16.4s, v16.4s, #22
	WORD $0x4ebd6610 // smax v16.4s, v16.4s, v29.4s
	WORD $0x4ebe6e10 // smin v16.4s, v16.4s, v30.4s
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x6e39de10 // fmul v16.4s, v16.4s, v25.4s
	WORD $0x4ebad610 // fsub v16.4s, v16.4s, v26.4s
	WORD $0x6e3bfe10 // fdiv v16.4s, v16.4s, v27.4s
	WORD $0x4f2a0631 // sshr v17.4s, v17.4s, #22
	WORD $0x4ebd6631 // smax v17.4s, v17.4s, v29.4s
	WORD $0x4ebe6e31 // smin v17.4s, v17.4s, v30.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x6e39de31 // fmul v17.4s, v17.4s, v25.4s
	WORD $0x4ebad631 // fsub v17.4s, v17.4s, v26.4s
	WORD $0x6e3bfe31 // fdiv v17.4s, v17.4s, v27.4s
	WORD $0x4f2a0652 // sshr v18.4s, v18.4s, #22
	WORD $0x4ebd6652 // smax v18.4s, v18.4s, v29.4s
	WORD $0x4ebe6e52 // smin v18.4s, v18.4s, v30.4s
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x6e39de52 // fmul v18.4s, v18.4s, v25.4s
	WORD $0x4ebad652 // fsub v18.4s, v18.4s, v26.4s
	WORD $0x6e3bfe52 // fdiv v18.4s, v18.4s, v27.4s
	WORD $0x4f2a0673 // sshr v19.4s, v19.4s, #22
	WORD $0x4ebd6673 // smax v19.4s, v19.4s, v29.4s
	WORD $0x4ebe6e73 // smin v19.4s, v19.4s, v30.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x6e39de73 // fmul v19.4s, v19.4s, v25.4s
	WORD $0x4ebad673 // fsub v19.4s, v19.4s, v26.4s
	WORD $0x6e3bfe73 // fdiv v19.4s, v19.4s, v27.4s
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R0)
	ADD $16, R12
	SUBS $1, R4
	BNE vblk
vdone:
	RET
