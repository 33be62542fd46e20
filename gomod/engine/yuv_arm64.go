package engine

import "unsafe"

// The YUV converters on arm64: NEON (yuvNEON, yuv_arm64.s, for dense runs and sparse pairs) where
// the kernel set says so (kernelSet.NEON), else yuvConvScalar, which it equals bit for bit
// (TestYUVConvNEONEqualsScalar, TestYUVPairsNEONEqualsScalar and TestYUVEqualsConvertThenResize
// under qemu-aarch64: scripts/test_arm64.sh).

// The modes: how yuvNEON reads a step's samples: the format's layout.
const (
	yuvNEONSemiUV = iota // nv12: chroma pairs U, V (the chroma pointer at the pair's first byte)
	yuvNEONSemiVU        // nv21: chroma pairs V, U (the same pointer)
	yuvNEONPlanar        // i420: U and V rows
	yuvNEONYUYV          // packed pixel pairs Y0 U Y1 V (the Y pointer at the pair's first byte)
	yuvNEONUYVY          // packed pixel pairs U Y0 V Y1
)

// yuvNEONArgs are the NEON kernels' mode, chroma pointers, Y pointer offset and constants for plan
// yp: the mode, the pointers to pass for U and V (semi-planar: the pair's first byte as U), the
// byte offset to add to a Y row pointer (packed: back to the pixel pair's first byte), and
// yuvFold's constants as the kernels load them: cy, cr, cgu, cgv, cb, kr, kg, kb; ymin as the byte
// the Y samples are raised to (max(ymin, 0): Y >= 0, so max(Y, ymin) is unchanged by it).
func yuvNEONArgs(yp *yuvPlan, us, vs []uint8) (mode int, up, vp unsafe.Pointer, yAdj int, k [8]int32, ymin uint8) {
	up, vp = unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	switch {
	case yp.kind == yuvSemi && yp.vOff < yp.uOff:
		mode, up = yuvNEONSemiVU, vp
	case yp.kind == yuvSemi:
		mode = yuvNEONSemiUV
	case yp.kind == yuvPlanar:
		mode = yuvNEONPlanar
	case yp.pk[0] == 0:
		mode, yAdj = yuvNEONYUYV, -yp.pk[0]
	default:
		mode, yAdj = yuvNEONUYVY, -yp.pk[0]
	}
	f := yuvFold(&yp.coef)
	k = [8]int32{f[0], f[2], f[4], f[5], f[3], f[6], f[7], f[8]}
	return mode, up, vp, yAdj, k, uint8(min(max(f[1], 0), 255))
}

// yuvConv converts pixels [x0, x1) (x0, x1 even) of one luma row, or of two sharing a chroma row
// (d1 != nil), to interleaved RGB, as yuvConvScalar does: with k.NEON, 16 pixels per step in
// yuvNEON, a tail of less than 16 as the step at x1-16, overlapping the previous one (its pixels
// are rewritten with the same bytes), as yuv_amd64.go's loop does.
// Invariants: the slices are yuvConvScalar's; every load of a step lies inside its plane row
// (x+16 <= x1 <= W); the stores write exactly d[3x0:3x1] (ST3: no spill).
// Twin: yuvConvScalar; proved by TestYUVConvNEONEqualsScalar and TestYUVConvSIMDEqualsScalar.
// Why: under qemu's count the scalar loop executes ~40 instructions a pixel (a row pair), the NEON
// steps ~4.8 (docs/perf/2026-12-07-yuv-neon.md).
func (k *kernelSet) yuvConv(d0, d1, ys0, ys1, us, vs []uint8, x0, x1 int, yp *yuvPlan) {
	if !k.NEON || x1-x0 < 16 || d1 != nil && yp.kind == yuvPacked { // packed rows never pair (4:2:2)
		yuvConvScalar(d0, d1, ys0, ys1, us, vs, x0, x1, yp)
		return
	}
	n := x1
	yStep, cStep := yp.yStep, yp.cStep
	// bounds of every load and store the steps make (the loads' last bytes are the samples of
	// pixel n-1 and its chroma pair: the scalar loop's)
	_, _, _, _ = d0[3*n-1], ys0[(n-1)*yStep], us[((n-1)>>1)*cStep], vs[((n-1)>>1)*cStep]
	var dp1, yq1 unsafe.Pointer
	if d1 != nil {
		_, _ = d1[3*n-1], ys1[(n-1)*yStep]
		dp1, yq1 = unsafe.Pointer(unsafe.SliceData(d1)), unsafe.Pointer(unsafe.SliceData(ys1))
	}
	if x0 < 0 {
		panic("yuvConv: negative x0")
	}
	mode, up, vp, yAdj, kc, ymin := yuvNEONArgs(yp, us, vs)
	yq0 := unsafe.Add(unsafe.Pointer(unsafe.SliceData(ys0)), yAdj)
	yuvNEON(unsafe.Pointer(unsafe.SliceData(d0)), dp1, yq0, yq1, up, vp, nil, x0, n, mode, &kc, int(ymin))
}

// yuvSIMD: whether yuvConv has its SIMD loop here (yuvConvPairs' chunked path runs where the
// register converter, yuvConvPairsVector here yuvPairsNEON, declines).
func (k *kernelSet) yuvSIMD() bool { return k.NEON }

// yuvNEON is the NEON converter of yuvConv (ps nil: pixels [x0, n), n-x0 >= 16, x0 and n even) and
// of yuvConvPairs (ps: n >= 8 ascending pixel pairs; x0 unused). A step is 16 pixels: the 8 chroma
// pairs' U and V (dense: LD2 of the semi-planar pairs, two 8-byte loads of the planar rows, LD4 of
// 16 packed pixels, which splits Y0, U, Y1, V; sparse: a lane load per pair and sample, split by
// UZP) widened to int32, the chroma terms kr + cr*V etc. (MLA by element: yuvFold's regrouping,
// exact int32 as in yuvVecs); per row the even and odd pixels' Y raised to ymin (UMAX), widened and
// multiplied by cy; each sum narrowed by SQSHRUN #16 then UQSHRN #4, which is sat_u8(s >> 20) for
// every int32 s (s < 0 gives 0; else s >> 16 < 2^15 never saturates, and its >> 4 saturates at 255),
// the scalar yuvSat's value; ZIP1 of the even and odd pixels' bytes puts R, G, B in pixel order.
// Dense steps store 48 bytes at 3x with one ST3 (the last step at n-16, overlapping the one before
// with the same bytes); sparse steps store each pixel's 3 bytes by lane (ST3 of one lane) at 6q and
// 6q+3 (the last step at pair n-8). d1 nil: one row (y1 unused). Modes, pointers and k:
// yuvNEONArgs. Invariants: the callers check every load and store's bounds.
// Twin: yuvConvScalar; proved by TestYUVConvNEONEqualsScalar and TestYUVPairsNEONEqualsScalar.
// Why: the loop in assembly (Go 1.26's archsimd has no arm64 types); one loop for both, so the
// conversion is written once.
//
//go:noescape
func yuvNEON(d0, d1, y0, y1, u, v unsafe.Pointer, ps *int32, x0, n, mode int, k *[8]int32, ymin int)
