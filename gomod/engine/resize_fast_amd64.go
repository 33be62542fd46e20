//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// duoEnabled reports whether fused plans take duoRow: AVX2 without VBMI (with VBMI, fusedRow).
func duoEnabled() bool { return hasAVX2 && !hasVBMI }

// fusedEnabled reports whether fusedRow can run (it checks the rest itself).
func fusedEnabled() bool { return hasVBMI }

// duoH computes duoRow's scratch row: duoBlocks over the runs of 8-column blocks whose loads stay
// inside the array in both rows, duoScalar for the other blocks and the last n%8 columns. Exactly
// vlinear on hresizeScalar's values of the two rows (TestDuoHEqualsScalar).
func duoH(d []int16, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	n := len(f.taps)
	d = d[:3*n]
	r0, r1 := rb0+f.minOff, rb1+f.minOff
	lim := min(len(src)-r0, len(src)-r1) // the nearer array end, relative to both rows
	base := unsafe.Pointer(unsafe.SliceData(src))
	p0, p1 := unsafe.Add(base, r0), unsafe.Add(base, r1)
	out := unsafe.Pointer(unsafe.SliceData(d))
	duos := unsafe.Pointer(unsafe.SliceData(f.duos))
	ends := f.duoEnd
	for b := 0; b < len(ends); {
		if int(ends[b]) > lim {
			duoScalar(d, src, rb0, rb1, f, b0, b1, 8*b, 8*b+8)
			b++
			continue
		}
		e := b + 1
		for e < len(ends) && int(ends[e]) <= lim {
			e++
		}
		duoBlocks(p0, p1, unsafe.Add(duos, 4*b*int(unsafe.Sizeof(pairDuo{}))), unsafe.Add(out, 16*b), e-b, uintptr(2*n), b0, b1)
		b = e
	}
	if done := 8 * len(ends); done < n {
		duoScalar(d, src, rb0, rb1, f, b0, b1, done, n)
	}
}

// duoBlocks runs nb 8-column blocks of duoH from rows p0 and p1, pairs from dp, values to out
// (channel 0; a channel's row is n2 bytes). Per pair one 32-byte load of row 0 (its upper half
// replaced) and a 16-byte insert of row 1 put the two rows in the two lanes; two VPSHUFB and two
// VPMADDWD give OpenCV's horizontal sums of two columns, three channels, both rows. Shifted right by
// 4 and packed to int16 (exact: <= 32640), each row's lane is multiplied by its vertical weight
// (VPMULHW, as vnormRow), the lanes added, rounded (+2, >>2) and put in column order (VPERMD).
func duoBlocks(p0, p1, dp, out unsafe.Pointer, nb int, n2 uintptr, b0, b1 int32) {
	wb := archsimd.BroadcastInt16x16(int16(b0)).Select128FromPair(0, 2, archsimd.BroadcastInt16x16(int16(b1)))
	two, two8 := archsimd.BroadcastInt16x16(2), archsimd.BroadcastInt16x8(2)
	perm := archsimd.LoadUint32x8(&duoPerm)
	for ; nb > 0; nb-- {
		d := (*[4]pairDuo)(dp)
		pair := func(k int) (a, c archsimd.Int32x8) {
			o := uintptr(d[k].off)
			v := archsimd.LoadUint8x32((*[32]uint8)(unsafe.Add(p0, o))).SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p1, o))))
			w := archsimd.LoadInt16x16(&d[k].w)
			a = v.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&d[k].sh01)).AsInt16x16().DotProductPairs(w)
			c = v.PermuteOrZeroGrouped(archsimd.LoadInt8x32(&d[k].sh2)).AsInt16x16().DotProductPairs(w)
			return a, c
		}
		a0, c0 := pair(0)
		a1, c1 := pair(1)
		x := a0.ShiftAllRight(4).SaturateToInt16ConcatGrouped(a1.ShiftAllRight(4)).MulHigh(wb)
		a2, c2 := pair(2)
		a3, c3 := pair(3)
		y := a2.ShiftAllRight(4).SaturateToInt16ConcatGrouped(a3.ShiftAllRight(4)).MulHigh(wb)
		z := c0.Or(c1).ShiftAllRight(4).SaturateToInt16ConcatGrouped(c2.Or(c3).ShiftAllRight(4)).MulHigh(wb)
		s := x.Select128FromPair(0, 2, y).Add(x.Select128FromPair(1, 3, y)).Add(two).ShiftAllRight(2)
		s = s.AsInt32x8().Permute(perm).AsInt16x16()
		s.GetLo().Store((*[8]int16)(out))
		s.GetHi().Store((*[8]int16)(unsafe.Add(out, n2)))
		z.GetLo().Add(z.GetHi()).Add(two8).ShiftAllRight(2).Store((*[8]int16)(unsafe.Add(out, 2*n2)))
		dp, out = unsafe.Add(dp, 4*unsafe.Sizeof(pairDuo{})), unsafe.Add(out, 16)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see hasAVX2
}

// duoPerm: after the lanes are added, int16 pairs (dwords) hold channel 0 of columns (0,1), channel 1
// of (0,1), channel 0 of (2,3), ...; this puts channel 0's in the lower and channel 1's in the upper half.
var duoPerm = [8]uint32{0, 2, 4, 6, 1, 3, 5, 7}

// normI16 normalises one plane row of values 0..255 (duoRow's scratch) with one IEEE instruction per
// step, which equals the table normI16Scalar reads bit for bit (as in vnormRow).
func normI16(out []float32, v []int16, scale, mean, std float32, lut *[256]float32) {
	n := len(out)
	v = v[:n]
	if nb := n / 8; hasAVX2 && nb > 0 {
		normBlocks(unsafe.Pointer(unsafe.SliceData(out)), unsafe.Pointer(unsafe.SliceData(v)), nb, scale, mean, std)
	}
	if done := n / 8 * 8; done < n || !hasAVX2 {
		if !hasAVX2 {
			done = 0
		}
		normI16Scalar(out[done:], v[done:], lut)
	}
}

// normBlocks is normI16's loop over nb blocks of 8 values, pointers stepping (see byteBlocks).
func normBlocks(out, in unsafe.Pointer, nb int, scale, mean, std float32) {
	vs, vm, vd := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(mean), archsimd.BroadcastFloat32x8(std)
	for ; nb > 0; nb-- {
		archsimd.LoadInt16x8((*[8]int16)(in)).ExtendToInt32().ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).Store((*[8]float32)(out))
		in, out = unsafe.Add(in, 16), unsafe.Add(out, 32)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see hasAVX2
}
