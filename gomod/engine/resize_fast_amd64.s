//go:build goexperiment.simd && amd64

#include "textflag.h"

// func prefetchSpan(p unsafe.Pointer, n uintptr)
// PREFETCHT0 of every 64-byte line of [p, p+n): see prefetchRows in resize_fast_amd64.go.
TEXT ·prefetchSpan(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*1), CX
loop:
	CMPQ AX, CX
	JAE done
	PREFETCHT0 (AX)
	ADDQ $64, AX
	JMP loop
done:
	RET

