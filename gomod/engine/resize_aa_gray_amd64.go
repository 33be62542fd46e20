//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// aaHGray is the antialias horizontal pass of one gray (1-channel) source row at byte offset rb into
// d (len(a.cols) bytes), on AVX2: eight columns per step, each column's taps 8 at a time zero-extended
// to int32 (VPMOVZXBD) and multiplied by the table's own 32-bit weights (aaPlanarTab, VPMULLD: exact
// at any precision), the eight sums reduced together by 7 VPHADDD and one lane fold (as aaHPlanar8),
// rounded, shifted and clamped, stored as one uint64.
// Invariants: without k.AVX2, for fewer than 8 columns, or for a row whose 16-byte loads could pass
// either end of src, it is aaHGrayScalar; the last step recomputes the columns [n-8, n) when n is not
// a multiple of 8 (the same bytes again).
// Twin: aaHGrayScalar (resize_aa_gray_other.go); proved by TestAAHGrayEqualsScalar and
// TestAAU8EqualsGeneral.
// Why: the general kernel (hresizeAAU8) reads every tap through a bounds-checked index.
func (k *kernelSet) aaHGray(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan) {
	t := a.pl
	n := len(a.cols)
	r := rb + a.minOff
	if !k.AVX2 || n < 8 || r < 0 || r+t.winEnd > len(src) || len(d) < n {
		aaHGrayScalar(d, src, rb, a, p)
		return
	}
	half := archsimd.BroadcastInt32x8(1 << (t.shift - 1))
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	shift := archsimd.BroadcastInt32x8(int32(t.shift)) // VPSRAVD: see aaHPlanarRows
	pack, join := archsimd.LoadInt8x32(&aaPlanarPack8), archsimd.LoadUint32x8(&aaPlanarJoin)
	row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), r)
	dst := unsafe.Pointer(unsafe.SliceData(d))
	offs, first := t.offs[:n], t.first[:n+1]
	cks := unsafe.Pointer(unsafe.SliceData(t.chunks))
	col := func(c int) archsimd.Int32x8 {
		var s archsimd.Int32x8
		px := unsafe.Add(row, offs[c])
		for q := first[c]; q < first[c+1]; q++ { // the weight pointer never steps past the table (checkptr)
			v := archsimd.LoadUint8x16((*[16]uint8)(px)).ExtendLo8ToUint32().AsInt32x8()
			s = s.Add(v.Mul(archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(cks, 32*uintptr(q))))))
			px = unsafe.Add(px, 8)
		}
		return s
	}
	for j := 0; j < n; j += 8 {
		j = min(j, n-8)
		g0 := col(j).AddPairsGrouped(col(j + 1)).AddPairsGrouped(col(j + 2).AddPairsGrouped(col(j + 3)))
		g1 := col(j + 4).AddPairsGrouped(col(j + 5)).AddPairsGrouped(col(j + 6).AddPairsGrouped(col(j + 7)))
		v := archsimd.Int32x8{}.SetLo(g0.GetLo().Add(g0.GetHi())).SetHi(g1.GetLo().Add(g1.GetHi()))
		v = v.Add(half).ShiftRight(shift).Max(zero).Min(top)
		*(*uint64)(unsafe.Add(dst, j)) = v.AsUint8x32().PermuteOrZeroGrouped(pack).AsInt32x8().Permute(join).GetLo().AsUint64x2().GetElem(0)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}
