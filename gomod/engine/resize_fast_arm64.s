#include "textflag.h"

// The NEON kernels of the OpenCV bilinear fast path (resize_fast_arm64.go). Instructions Go's
// assembler lacks are WORDs with their exact mnemonic in the comment (scripts/arm64_words.py check
// re-assembles them). No fused floating-point multiply-add anywhere: FMUL, FSUB and FDIV round each
// step as the pure-Go normalisation (normTables.apply) does.

// hIdx: per channel c, the byte indices into the 64-byte table V0-V3 (column k's 8-byte load at 8k)
// of the 8 columns' lower pixels (8k+c, bytes 0-7) and higher pixels (8k+c+3, bytes 8-15).
DATA hIdx<>+0(SB)/8, $0x3830282018100800
DATA hIdx<>+8(SB)/8, $0x3b332b231b130b03
DATA hIdx<>+16(SB)/8, $0x3931292119110901
DATA hIdx<>+24(SB)/8, $0x3c342c241c140c04
DATA hIdx<>+32(SB)/8, $0x3a322a221a120a02
DATA hIdx<>+40(SB)/8, $0x3d352d251d150d05
GLOBL hIdx<>(SB), RODATA|NOPTR, $48

// func hresizeNEON(base, tp, out unsafe.Pointer, nb int, n2 uintptr)
// nb >= 1 blocks of 8 columns: taps at tp (pairTap, 12 bytes), pixels at base+off (8-byte loads),
// int16 results at out (channel 0), out+n2 (1), out+2*n2 (2).
TEXT ·hresizeNEON(SB), NOSPLIT, $0-40
	MOVD base+0(FP), R0
	MOVD tp+8(FP), R1
	MOVD out+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD n2+32(FP), R4
	CMP $0, R3
	BLE hdone
	MOVD $hIdx<>(SB), R6
	VLD1 (R6), [V20.B16, V21.B16, V22.B16]
hloop:
	// column k's 8 bytes from its offset into V(k/2).D[k%2]
	MOVWU 0(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V0.D[0]
	MOVWU 12(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V0.D[1]
	MOVWU 24(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V1.D[0]
	MOVWU 36(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V1.D[1]
	MOVWU 48(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V2.D[0]
	MOVWU 60(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V2.D[1]
	MOVWU 72(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V3.D[0]
	MOVWU 84(R1), R5
	MOVD (R0)(R5), R5
	VMOV R5, V3.D[1]
	// the weights: LD3 splits off, wLo, wHi of four taps; UZP1 keeps each int32's low int16
	VLD3.P 48(R1), [V4.S4, V5.S4, V6.S4]
	VLD3.P 48(R1), [V7.S4, V8.S4, V9.S4]
	VUZP1 V8.H8, V5.H8, V16.H8
	VUZP1 V9.H8, V6.H8, V17.H8
	ADD R4, R2, R7
	ADD R4, R7, R8
	// channel 0
	VTBL V20.B16, [V0.B16, V1.B16, V2.B16, V3.B16], V10.B16
	VUXTL V10.B8, V11.H8
	VUXTL2 V10.B16, V12.H8
	WORD $0x0e70c16d // smull v13.4s, v11.4h, v16.4h
	WORD $0x4e70c16e // smull2 v14.4s, v11.8h, v16.8h
	WORD $0x0e71818d // smlal v13.4s, v12.4h, v17.4h
	WORD $0x4e71818e // smlal2 v14.4s, v12.8h, v17.8h
	WORD $0x0f1c85af // shrn v15.4h, v13.4s, #4
	WORD $0x4f1c85cf // shrn2 v15.8h, v14.4s, #4
	VST1 [V15.H8], (R2)
	// channel 1
	VTBL V21.B16, [V0.B16, V1.B16, V2.B16, V3.B16], V10.B16
	VUXTL V10.B8, V11.H8
	VUXTL2 V10.B16, V12.H8
	WORD $0x0e70c16d // smull v13.4s, v11.4h, v16.4h
	WORD $0x4e70c16e // smull2 v14.4s, v11.8h, v16.8h
	WORD $0x0e71818d // smlal v13.4s, v12.4h, v17.4h
	WORD $0x4e71818e // smlal2 v14.4s, v12.8h, v17.8h
	WORD $0x0f1c85af // shrn v15.4h, v13.4s, #4
	WORD $0x4f1c85cf // shrn2 v15.8h, v14.4s, #4
	VST1 [V15.H8], (R7)
	// channel 2
	VTBL V22.B16, [V0.B16, V1.B16, V2.B16, V3.B16], V10.B16
	VUXTL V10.B8, V11.H8
	VUXTL2 V10.B16, V12.H8
	WORD $0x0e70c16d // smull v13.4s, v11.4h, v16.4h
	WORD $0x4e70c16e // smull2 v14.4s, v11.8h, v16.8h
	WORD $0x0e71818d // smlal v13.4s, v12.4h, v17.4h
	WORD $0x4e71818e // smlal2 v14.4s, v12.8h, v17.8h
	WORD $0x0f1c85af // shrn v15.4h, v13.4s, #4
	WORD $0x4f1c85cf // shrn2 v15.8h, v14.4s, #4
	VST1 [V15.H8], (R8)
	ADD $16, R2
	SUBS $1, R3
	BNE hloop
hdone:
	RET

// func vnormNEON(out, s0, s1 unsafe.Pointer, nb int, b0, b1 int32, scale, mean, std float32)
// nb >= 1 blocks of 8 columns.
TEXT ·vnormNEON(SB), NOSPLIT, $0-52
	MOVD out+0(FP), R0
	MOVD s0+8(FP), R1
	MOVD s1+16(FP), R2
	MOVD nb+24(FP), R3
	CMP $0, R3
	BLE vdone
	MOVW b0+32(FP), R5
	VDUP R5, V16.H8
	MOVW b1+36(FP), R5
	VDUP R5, V17.H8
	MOVD $2, R5
	VDUP R5, V18.H8
	MOVWU scale+40(FP), R5
	VDUP R5, V19.S4
	MOVWU mean+44(FP), R5
	VDUP R5, V20.S4
	MOVWU std+48(FP), R5
	VDUP R5, V21.S4
vloop:
	VLD1.P 16(R1), [V0.H8]
	VLD1.P 16(R2), [V1.H8]
	WORD $0x0e70c002 // smull v2.4s, v0.4h, v16.4h
	WORD $0x4e70c003 // smull2 v3.4s, v0.8h, v16.8h
	WORD $0x0e71c024 // smull v4.4s, v1.4h, v17.4h
	WORD $0x4e71c025 // smull2 v5.4s, v1.8h, v17.8h
	VUZP2 V3.H8, V2.H8, V6.H8 // (s0*b0) >> 16: the products' high halves (VPMULHW)
	VUZP2 V5.H8, V4.H8, V7.H8
	VADD V7.H8, V6.H8, V6.H8
	VADD V18.H8, V6.H8, V6.H8
	WORD $0x4f1e04c6 // sshr v6.8h, v6.8h, #2
	WORD $0x0f10a4c0 // sxtl v0.4s, v6.4h
	WORD $0x4f10a4c1 // sxtl2 v1.4s, v6.8h
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x6e33dc00 // fmul v0.4s, v0.4s, v19.4s
	WORD $0x6e33dc21 // fmul v1.4s, v1.4s, v19.4s
	WORD $0x4eb4d400 // fsub v0.4s, v0.4s, v20.4s
	WORD $0x4eb4d421 // fsub v1.4s, v1.4s, v20.4s
	WORD $0x6e35fc00 // fdiv v0.4s, v0.4s, v21.4s
	WORD $0x6e35fc21 // fdiv v1.4s, v1.4s, v21.4s
	VST1.P [V0.S4, V1.S4], 32(R0)
	SUBS $1, R3
	BNE vloop
vdone:
	RET
