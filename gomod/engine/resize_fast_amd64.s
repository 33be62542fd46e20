//go:build goexperiment.simd && amd64

#include "textflag.h"

// func prefetchSpan(p unsafe.Pointer, n uintptr)
// PREFETCHT0 of every 64-byte line of [p, p+n): see prefetchAhead in resize_fast_amd64.go. Four lines
// per step: a 1.5 KB row is 24 lines, and duoRows asks for two rows per output row.
TEXT ·prefetchSpan(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*1), CX
	LEAQ -192(CX), DX
loop4:
	CMPQ AX, DX
	JAE loop
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	ADDQ $256, AX
	JMP loop4
loop:
	CMPQ AX, CX
	JAE done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP loop
done:
	RET
