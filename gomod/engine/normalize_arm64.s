#include "textflag.h"

// The NEON kernels of the float normalisation (normalize_arm64.go): (x*scale - mean) / std per value
// with FMUL, FSUB, FDIV, each rounded as normTables.apply rounds it (never a fused multiply-add).
// WORDs carry the exact mnemonic (scripts/arm64_words.py check).

// func normCHW3NEON(in, o0, o1, o2 unsafe.Pointer, nb int, k *[12]float32)
// nb >= 1 blocks of 4 pixels: LD3 splits 12 interleaved values into the three channels, each
// normalised and stored to its plane row o0, o1, o2. k: scale, mean, std of channels 0-2, each
// group of three padded to 4.
TEXT ·normCHW3NEON(SB), NOSPLIT, $0-48
	MOVD in+0(FP), R0
	MOVD o0+8(FP), R1
	MOVD o1+16(FP), R2
	MOVD o2+24(FP), R3
	MOVD nb+32(FP), R4
	CMP $0, R4
	BLE cdone
	MOVD k+40(FP), R5
	VLD1.P 16(R5), [V16.S4]
	VLD1.P 16(R5), [V19.S4]
	VLD1 (R5), [V22.S4]
	VDUP V22.S[2], V24.S4 // std 0, 1, 2 in V22-V24
	VDUP V22.S[1], V23.S4
	VDUP V22.S[0], V22.S4
	VDUP V19.S[2], V21.S4 // mean in V19-V21
	VDUP V19.S[1], V20.S4
	VDUP V19.S[0], V19.S4
	VDUP V16.S[2], V18.S4 // scale in V16-V18
	VDUP V16.S[1], V17.S4
	VDUP V16.S[0], V16.S4
cloop:
	VLD3.P 48(R0), [V0.S4, V1.S4, V2.S4]
	WORD $0x6e30dc00 // fmul v0.4s, v0.4s, v16.4s
	WORD $0x6e31dc21 // fmul v1.4s, v1.4s, v17.4s
	WORD $0x6e32dc42 // fmul v2.4s, v2.4s, v18.4s
	WORD $0x4eb3d400 // fsub v0.4s, v0.4s, v19.4s
	WORD $0x4eb4d421 // fsub v1.4s, v1.4s, v20.4s
	WORD $0x4eb5d442 // fsub v2.4s, v2.4s, v21.4s
	WORD $0x6e36fc00 // fdiv v0.4s, v0.4s, v22.4s
	WORD $0x6e37fc21 // fdiv v1.4s, v1.4s, v23.4s
	WORD $0x6e38fc42 // fdiv v2.4s, v2.4s, v24.4s
	VST1.P [V0.S4], 16(R1)
	VST1.P [V1.S4], 16(R2)
	VST1.P [V2.S4], 16(R3)
	SUBS $1, R4
	BNE cloop
cdone:
	RET

// func normHWC3NEON(in, out unsafe.Pointer, nb int, k *[12]float32)
// normCHW3NEON's arithmetic, stored interleaved again (ST3) into out.
TEXT ·normHWC3NEON(SB), NOSPLIT, $0-32
	MOVD in+0(FP), R0
	MOVD out+8(FP), R1
	MOVD nb+16(FP), R4
	CMP $0, R4
	BLE hdone
	MOVD k+24(FP), R5
	VLD1.P 16(R5), [V16.S4]
	VLD1.P 16(R5), [V19.S4]
	VLD1 (R5), [V22.S4]
	VDUP V22.S[2], V24.S4 // std 0, 1, 2 in V22-V24
	VDUP V22.S[1], V23.S4
	VDUP V22.S[0], V22.S4
	VDUP V19.S[2], V21.S4 // mean in V19-V21
	VDUP V19.S[1], V20.S4
	VDUP V19.S[0], V19.S4
	VDUP V16.S[2], V18.S4 // scale in V16-V18
	VDUP V16.S[1], V17.S4
	VDUP V16.S[0], V16.S4
hloop:
	VLD3.P 48(R0), [V0.S4, V1.S4, V2.S4]
	WORD $0x6e30dc00 // fmul v0.4s, v0.4s, v16.4s
	WORD $0x6e31dc21 // fmul v1.4s, v1.4s, v17.4s
	WORD $0x6e32dc42 // fmul v2.4s, v2.4s, v18.4s
	WORD $0x4eb3d400 // fsub v0.4s, v0.4s, v19.4s
	WORD $0x4eb4d421 // fsub v1.4s, v1.4s, v20.4s
	WORD $0x4eb5d442 // fsub v2.4s, v2.4s, v21.4s
	WORD $0x6e36fc00 // fdiv v0.4s, v0.4s, v22.4s
	WORD $0x6e37fc21 // fdiv v1.4s, v1.4s, v23.4s
	WORD $0x6e38fc42 // fdiv v2.4s, v2.4s, v24.4s
	VST3.P [V0.S4, V1.S4, V2.S4], 48(R1)
	SUBS $1, R4
	BNE hloop
hdone:
	RET
