//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// aaPlanarJoin brings both lanes' first dwords to dwords 0 and 1.
var aaPlanarJoin = [8]uint32{0, 4, 0, 0, 0, 0, 0, 0}

// aaHPlanarRows is the planar horizontal pass of one or two source rows (h1 nil: one) into planar
// rows, on AVX2 (see resize_aa_planar.go): the six channel rows of two source rows, each in its own
// register, 8 taps per step zero-extended to int32 (VPMOVZXBD) and multiplied by the table's own
// 32-bit weights (VPMULLD); five VPHADDD and one lane fold reduce the six rows. One-chunk tables take
// aaHPlanar8.
// Invariants: the sums are Pillow's at any table precision (aaPlanarTab.shift); without k.AVX2, and
// for rows whose 16-byte loads could pass the end of src, it is aaHPlanar.
// Twin: aaHPlanar (resize_aa_planar_other.go); proved by TestAAPlanarRowsEqualPureGo and
// TestAAPlanarRowsOtherPrecision.
// Why: 32-bit multiplies need no weight split and no byte shuffle; a 16-bit multiply-add version
// measured no faster with more code and tables.
func (k *kernelSet) aaHPlanarRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	t := a.pl
	n := len(a.cols)
	one := h1 == nil
	if one {
		rb1 = rb0 // the second row's registers recompute the first's; their results are dropped
	}
	var r [6]int
	ok := k.AVX2
	for i := range r {
		rb := rb0
		if i >= 3 {
			rb = rb1
		}
		r[i] = rb + a.minOff + (i%3)*a.strideC
		if r[i] < 0 || r[i]+t.winEnd > len(src) {
			ok = false
		}
	}
	if !ok {
		aaHPlanar(h0, src, rb0, a, p)
		if !one {
			aaHPlanar(h1, src, rb1, a, p)
		}
		return
	}
	if t.single && n >= 8 {
		aaHPlanar8(h0[:3*n], src, r[0], r[1], r[2], a, n)
		if !one {
			aaHPlanar8(h1[:3*n], src, r[3], r[4], r[5], a, n)
		}
		return
	}
	h0 = h0[:3*n]
	if one {
		h1 = h0 // never written: see the stores below
	}
	h1 = h1[:3*n]
	base := unsafe.Pointer(unsafe.SliceData(src))
	p0, p1, p2 := unsafe.Add(base, r[0]), unsafe.Add(base, r[1]), unsafe.Add(base, r[2])
	p3, p4, p5 := unsafe.Add(base, r[3]), unsafe.Add(base, r[4]), unsafe.Add(base, r[5])
	half := archsimd.BroadcastInt32x8(1 << (t.shift - 1))
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	// the shift as a vector (VPSRAVD): the count-register form ShiftAllRight(t.shift) reloaded its count
	// with a legacy-SSE MOVSD every column, a stall that made this kernel 2.5x slower than aaHPlanar
	shift := archsimd.BroadcastInt32x8(int32(t.shift))
	pack, join := archsimd.LoadInt8x32(&aaPlanarPack32), archsimd.LoadUint32x8(&aaPlanarJoin)
	// byte stores through pointers: h0 and h1 hold 3n bytes (sliced above) and j < n
	d0, d1 := unsafe.Pointer(unsafe.SliceData(h0)), unsafe.Pointer(unsafe.SliceData(h1))
	px := func(pa unsafe.Pointer, off uintptr) archsimd.Int32x8 {
		return archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(pa, off))).ExtendLo8ToUint32().AsInt32x8()
	}
	for j := range a.cols {
		off := uintptr(a.cols[j].off)
		cks := t.chunks[t.first[j]:t.first[j+1]]
		var s0, s1, s2, s3, s4, s5 archsimd.Int32x8
		for q := range cks {
			w := archsimd.LoadInt32x8(&cks[q].w)
			s0, s1, s2 = s0.Add(px(p0, off).Mul(w)), s1.Add(px(p1, off).Mul(w)), s2.Add(px(p2, off).Mul(w))
			s3, s4, s5 = s3.Add(px(p3, off).Mul(w)), s4.Add(px(p4, off).Mul(w)), s5.Add(px(p5, off).Mul(w))
			off += 8
		}
		// [r0c0 r0c1 r0c2 r1c0 | same] halves, then [r1c1 r1c2 r1c1 r1c2 | same] halves
		g := s0.AddPairsGrouped(s1).AddPairsGrouped(s2.AddPairsGrouped(s3))
		h := s4.AddPairsGrouped(s5)
		h = h.AddPairsGrouped(h)
		v := archsimd.Int32x8{}.SetLo(g.GetLo().Add(g.GetHi())).SetHi(h.GetLo().Add(h.GetHi()))
		v = v.Add(half).ShiftRight(shift).Max(zero).Min(top)
		// packed to one uint64 in registers: storing the vector and loading its lanes back stalled on
		// the store (~25% of this kernel's perf samples, 512² eval transform)
		u := v.AsUint8x32().PermuteOrZeroGrouped(pack).AsInt32x8().Permute(join).GetLo().AsUint64x2().GetElem(0)
		*(*uint8)(unsafe.Add(d0, j)) = uint8(u)
		*(*uint8)(unsafe.Add(d0, n+j)) = uint8(u >> 8)
		*(*uint8)(unsafe.Add(d0, 2*n+j)) = uint8(u >> 16)
		if !one {
			*(*uint8)(unsafe.Add(d1, j)) = uint8(u >> 24)
			*(*uint8)(unsafe.Add(d1, n+j)) = uint8(u >> 32)
			*(*uint8)(unsafe.Add(d1, 2*n+j)) = uint8(u >> 40)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// aaPlanarPack32 moves the low byte of the low lane's four dwords to bytes 0-3 and of the high lane's
// first two to its bytes 0-1: with aaPlanarJoin, the six results in one uint64 in row order.
var aaPlanarPack32 = func() (s [32]int8) {
	for i := range s {
		s[i] = -128
	}
	for d := 0; d < 4; d++ {
		s[d] = int8(4 * d)
	}
	for d := 0; d < 2; d++ {
		s[16+d] = int8(4 * d)
	}
	return s
}()

// aaPlanarPack8 moves the low byte of each lane's four dwords to the lane's bytes 0-3: with
// aaPlanarJoin, eight results in one uint64 in column order.
var aaPlanarPack8 = func() (s [32]int8) {
	for i := range s {
		s[i] = -128
	}
	for d := 0; d < 4; d++ {
		s[d], s[16+d] = int8(4*d), int8(4*d)
	}
	return s
}()

// aaHPlanar8 is aaHPlanarRows for tables whose columns all have one chunk (at most 8 taps: bilinear
// down to ~3.5x, the ImageNet eval transform's 2x), one source row's three channel rows at origins
// r0-r2 into planar h: 8 columns per step, reduced together by 7 VPHADDD and one lane fold, and
// stored as one uint64. The same integer sums, rounding and clamp as aaHPlanarRows.
// Invariants: r0-r2 in bounds (checked by the caller); len(h) >= 3n, n >= 8; the last step
// recomputes the columns [n-8, n) when n is not a multiple of 8: the same bytes again.
// Twin: aaHPlanar; proved by TestAAPlanarRowsEqualPureGo.
// Why: aaHPlanarRows' per-column reduction and six byte stores ran ~120 instructions per column and
// pair of rows.
func aaHPlanar8(h []uint8, src []uint8, r0, r1, r2 int, a *aaPlan, n int) {
	t := a.pl
	half := archsimd.BroadcastInt32x8(1 << (t.shift - 1))
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	shift := archsimd.BroadcastInt32x8(int32(t.shift)) // VPSRAVD: see aaHPlanarRows
	pack, join := archsimd.LoadInt8x32(&aaPlanarPack8), archsimd.LoadUint32x8(&aaPlanarJoin)
	base := unsafe.Pointer(unsafe.SliceData(src))
	dst := unsafe.Pointer(unsafe.SliceData(h))
	// pointer steps through the packed offsets and chunks (t.offs and t.chunks hold n each: single):
	// indexing a.cols and t.chunks per column kept two bounds checks and a 40-byte stride each
	offs, cks := unsafe.Pointer(unsafe.SliceData(t.offs[:n])), unsafe.Pointer(unsafe.SliceData(t.chunks[:n]))
	for c, rb := range [3]int{r0, r1, r2} {
		row := unsafe.Add(base, rb)
		d := unsafe.Add(dst, c*n)
		for j := 0; j < n; j += 8 {
			j = min(j, n-8)
			o, w := unsafe.Add(offs, 4*j), unsafe.Add(cks, 32*j)
			col := func(q uintptr) archsimd.Int32x8 {
				px := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(row, *(*int32)(unsafe.Add(o, 4*q))))).ExtendLo8ToUint32().AsInt32x8()
				return px.Mul(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(w, 32*q))))
			}
			g0 := col(0).AddPairsGrouped(col(1)).AddPairsGrouped(col(2).AddPairsGrouped(col(3)))
			g1 := col(4).AddPairsGrouped(col(5)).AddPairsGrouped(col(6).AddPairsGrouped(col(7)))
			v := archsimd.Int32x8{}.SetLo(g0.GetLo().Add(g0.GetHi())).SetHi(g1.GetLo().Add(g1.GetHi()))
			v = v.Add(half).ShiftRight(shift).Max(zero).Min(top)
			u := v.AsUint8x32().PermuteOrZeroGrouped(pack).AsInt32x8().Permute(join).GetLo().AsUint64x2().GetElem(0)
			*(*uint64)(unsafe.Add(d, j)) = u
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}
