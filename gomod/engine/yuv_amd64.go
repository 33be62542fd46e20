//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// yuvConv converts pixels [x0, x1) (x0, x1 even) of one luma row, or of two sharing a chroma row
// (d1 != nil), to interleaved RGB, as yuvConvScalar does: with k.AVX2, 16 pixels per step, the
// chroma products computed once per step for both rows.
//
// A step: the 8 chroma pairs' U and V zero-extended to int32 lanes (pair i in lane i; nv12/nv21 from
// one 16-byte load of U,V bytes, i420 from two 8-byte loads, yuyv/uyvy from the 32-byte load that
// holds the Y samples too), R/G/B chroma terms half + c*V' etc. with VPMULLD, exactly the scalar
// int32 products; each row's even and odd pixels' Y terms max(Y-yoff, ylo)*cy in lanes matching the
// chroma; the six sums shifted right by 20 (arithmetic). VPACKUSDW of (even, odd) and a min with 255
// saturate them as saturate_cast does (the sums' range, about [-300, 600], fits int16's), leaving per
// 128-bit lane the 8 pixels' values of one channel as uint16 in the order [0 2 4 6 1 3 5 7]; R|G<<8
// and B bytes are then put in RGB order by two byte shuffles per 16 output bytes (yuvShufP: the
// lane's output bytes 0-15, yuvShufQ: 16-23), and stored as 16-byte stores at 3x, 3x+16, 3x+24,
// 3x+40: each spills up to 8 bytes past its valid ones, which the next store (or the next step, or
// the scalar tail) overwrites, and past x1 into bytes no converted run holds yet (yuvPlan.stride's
// slack covers a run that ends the row).
// Invariants: every load of a step lies inside its plane row (x+16 <= x1 <= W). A tail of less than
// 16 pixels is the step at x1-16, overlapping the previous one (its pixels are rewritten with the
// same bytes; x1-16 is even, so pairs stay whole): a run of 16-31 pixels costs two steps, not a
// step and up to 15 pixels of yuvConvScalar.
// Twin: yuvConvScalar; proved by TestYUVConvSIMDEqualsScalar (and TestYUVEqualsConvertThenResize).
// Why: the scalar loop is ~2 ns a pixel; the antialiased 1080p -> 224 task converts ~0.9 Mpixel.
func (k *kernelSet) yuvConv(d0, d1, ys0, ys1, us, vs []uint8, x0, x1 int, yp *yuvPlan) {
	if !k.AVX2 || x1-x0 < 16 || d1 != nil && yp.kind == yuvPacked { // packed rows never pair (4:2:2)
		yuvConvScalar(d0, d1, ys0, ys1, us, vs, x0, x1, yp)
		return
	}
	n := x1 // the steps cover [x0, x1), the last at x1-16
	yStep, cStep := yp.yStep, yp.cStep
	// bounds of every load and store the steps make
	_, _, _ = d0[3*n+8-1], ys0[(n-1)*yStep], us[((n-1)>>1)*cStep]
	_ = vs[((n-1)>>1)*cStep]
	rows := 1
	if d1 != nil {
		_, _ = d1[3*n+8-1], ys1[(n-1)*yStep]
		rows = 2
	}
	dp0, dp1 := unsafe.Pointer(unsafe.SliceData(d0)), unsafe.Pointer(unsafe.SliceData(d1))
	yq0, yq1 := unsafe.Pointer(unsafe.SliceData(ys0)), unsafe.Pointer(unsafe.SliceData(ys1))
	up, vp := unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	cy, ymin, cr, cb, cgu, cgv, kr, kg, kb := yuvVecs(&yp.coef)
	lo16 := archsimd.BroadcastInt32x8(0xffff)
	top := archsimd.BroadcastUint16x16(255)
	kind := yp.kind
	// semi-planar: the chroma pair's first byte is U (nv12) or V (nv21)
	swap := kind == yuvSemi && yp.vOff < yp.uOff
	cp := up
	if swap {
		cp = vp
	}
	// packed: the bit positions of Y0, U, Y1, V in a pixel pair's 32 bits, and the pair's first byte
	pk := yp.pk
	sy0, su, sy1, sv := uint64(8*pk[0]), uint64(8*pk[1]), uint64(8*pk[2]), uint64(8*pk[3])
	pp := unsafe.Add(yq0, -pk[0])
	for x := x0; x < n; x += 16 {
		x = min(x, n-16)
		var u, v, ye, yo archsimd.Int32x8
		switch kind {
		case yuvSemi:
			cv := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(cp, x))).ExtendToUint16().AsInt32x8()
			u, v = cv.And(lo16), cv.ShiftAllRight(16)
			if swap {
				u, v = v, u
			}
		case yuvPlanar:
			u = archsimd.Uint64x2{}.SetElem(0, *(*uint64)(unsafe.Add(up, x>>1))).AsUint8x16().ExtendLo8ToUint32().AsInt32x8()
			v = archsimd.Uint64x2{}.SetElem(0, *(*uint64)(unsafe.Add(vp, x>>1))).AsUint8x16().ExtendLo8ToUint32().AsInt32x8()
		default:
			pv := archsimd.LoadUint8x32((*[32]uint8)(unsafe.Add(pp, 2*x))).AsUint32x8()
			lo8 := archsimd.BroadcastUint32x8(0xff)
			u = pv.ShiftAllRight(su).And(lo8).AsInt32x8()
			v = pv.ShiftAllRight(sv).AsInt32x8().And(lo8.AsInt32x8())
			ye = pv.ShiftAllRight(sy0).And(lo8).AsInt32x8()
			yo = pv.ShiftAllRight(sy1).And(lo8).AsInt32x8()
		}
		ruv := kr.Add(cr.Mul(v))
		guv := kg.Add(cgu.Mul(u)).Add(cgv.Mul(v))
		buv := kb.Add(cb.Mul(u))
		if kind != yuvPacked {
			yv := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(yq0, x))).ExtendToUint16().AsInt32x8()
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
		}
		yuvStore16(unsafe.Add(dp0, 3*x), ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		if rows == 2 {
			yv := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(yq1, x))).ExtendToUint16().AsInt32x8()
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
			yuvStore16(unsafe.Add(dp1, 3*x), ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// yuvSIMD: whether yuvConv has its SIMD loop here (yuvConvPairs then gathers pairs for it).
func (k *kernelSet) yuvSIMD() bool { return k.AVX2 }

// yuvVecs are yuvConv's constants as vectors. The scalar sums (max(Y-yoff, ylo)*cy + half +
// cr*(V-128)) etc. are regrouped: the Y term as max(Y, ymin)*cy with ymin = yoff+ylo (equal to the
// scalar's plus yoff*cy: Y >= 0 > yoff+ylo where ylo is -255), and the constants half - 128*c -
// yoff*cy folded into one per channel (kr, kg, kb). int32 sums are exact either way (all terms
// below 2^29), so the results are the scalar's bit for bit. Fewer live constants: AVX2 has 16
// vector registers.
func yuvVecs(c *yuvCoef) (cy, ymin, cr, cb, cgu, cgv, kr, kg, kb archsimd.Int32x8) {
	f := yuvFold(c)
	b := archsimd.BroadcastInt32x8
	return b(f[0]), b(f[1]), b(f[2]), b(f[3]), b(f[4]), b(f[5]), b(f[6]), b(f[7]), b(f[8])
}

// yuvRGB16 is one row's step of 16 pixels: the even (a) and odd (b) pixels' Y terms plus the
// chroma terms, shifted and saturated (VPACKUSDW and a min with top, 255) to R|G<<8 words (rg) and
// B words (bb), per 128-bit lane in the pixel order [0 2 4 6 1 3 5 7] of the lane's 8 pixels.
func yuvRGB16(a, b, ruv, guv, buv archsimd.Int32x8, top archsimd.Uint16x16) (rg, bb archsimd.Uint8x32) {
	r := a.Add(ruv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(ruv).ShiftAllRight(yuvShift)).Min(top)
	g := a.Add(guv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(guv).ShiftAllRight(yuvShift)).Min(top)
	bb = a.Add(buv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(buv).ShiftAllRight(yuvShift)).Min(top).AsUint8x32()
	return r.Or(g.ShiftAllLeft(8)).AsUint8x32(), bb
}

// yuvStore16 finishes one row's step of yuvConv: yuvRGB16's words put in RGB order and stored as
// 16 RGB pixels at d (48 bytes, and up to 8 bytes after them spilled; see yuvConv).
func yuvStore16(d unsafe.Pointer, a, b, ruv, guv, buv archsimd.Int32x8, top archsimd.Uint16x16) {
	rg, bb := yuvRGB16(a, b, ruv, guv, buv, top)
	pv := rg.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&yuvShufP[0])).Or(bb.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&yuvShufP[1])))
	qv := rg.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&yuvShufQ[0])).Or(bb.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&yuvShufQ[1])))
	pv.GetLo().Store((*[16]uint8)(d))
	qv.GetLo().Store((*[16]uint8)(unsafe.Add(d, 16)))
	pv.GetHi().Store((*[16]uint8)(unsafe.Add(d, 24)))
	qv.GetHi().Store((*[16]uint8)(unsafe.Add(d, 40)))
}

// yuvShufP and yuvShufQ are yuvConv's byte shuffles, per 128-bit lane and the same in both: [0]
// picks from the R|G<<8 words, [1] from the B words, -1 gives 0. The lane's words hold its pixels in
// the order [0 2 4 6 1 3 5 7]; output byte j is channel j%3 of pixel j/3, P covering j = 0-15 and Q
// j = 16-23 (its bytes 8-15 zero).
var yuvShufP, yuvShufQ = yuvShuffles()

func yuvShuffles() (p, q [2][32]int8) {
	word := func(px int) int { // the word holding pixel px of a lane
		if px%2 == 0 {
			return px / 2
		}
		return 4 + px/2
	}
	for lane := 0; lane < 2; lane++ {
		for j := 0; j < 32; j++ {
			var dst *[2][32]int8
			var pos int
			switch {
			case j < 16:
				dst, pos = &p, j
			case j < 24:
				dst, pos = &q, j-16
			default:
				continue
			}
			w, ch := word(j/3), j%3
			at := lane*16 + pos
			dst[0][at], dst[1][at] = -1, -1
			switch ch {
			case 0:
				dst[0][at] = int8(2 * w)
			case 1:
				dst[0][at] = int8(2*w + 1)
			default:
				dst[1][at] = int8(2 * w)
			}
		}
		for pos := 8; pos < 16; pos++ {
			q[0][lane*16+pos], q[1][lane*16+pos] = -1, -1
		}
	}
	return p, q
}
