//go:build goexperiment.simd && amd64

package engine

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"
)

// The antialias fast path's vertical pass on amd64 (archsimd, and aaVRow3Y's assembly in
// resize_aa_avx2_amd64.s): the planar rows of the horizontal pass (resize_aa_amd64.go) into
// normalised float32 output rows (aaVRow, aaVRow3) or uint8 rows (vresizeAAU8Paired). Pure-Go twins:
// resize_aa_vertical_other.go; NEON: resize_aa_vertical_arm64.go.

// aaVRow computes the antialias vertical pass plus normalisation of one output plane row from the
// planar rows hs (plane offset po): Pillow's 32-bit sums over the window's rows, 16 columns and 2 taps
// per step on the split weight pairs pw (aaVPairs, aaVPairSums), 8 columns with VPMULLD where the
// window is longer than aaVMaxPairs pairs or the row narrower than 16; the shift and clip to [0, 255],
// then (v*scale - mean) / std with one IEEE instruction per step, which equals the table aaVScalar
// reads bit for bit. Invariants: every row has 16 spare bytes of capacity past po+len(out)
// (worker.prepare), else (or without k.AVX2) it is aaVScalar.
// Twin: aaVScalar (resize_aa_vertical_other.go); proved by TestAAVRowEqualScalarRandom.
// Why: the per-plane fallback of aaVRow3, which takes the three planes at once where it can.
func (k *kernelSet) aaVRow(out []float32, hs [][]uint8, po int, wv []int32, pw []int32, vh aaVHead, scale, mean, std float32, lut *[256]float32) {
	n := len(out)
	ok := k.AVX2
	for _, h := range hs {
		ok = ok && len(h) > po && cap(h) >= po+n+16 // the 16-byte loads below (16 spare bytes of capacity: worker.prepare)
	}
	if !ok {
		aaVScalar(out, hs, po, wv, lut, 0)
		return
	}
	np := (len(hs) + 1) / 2
	paired := np <= aaVMaxPairs && n >= 16 && len(pw) >= aaVPairLen*np
	// zeroed (legacy-SSE MOVUPS) and filled before any vector register is dirty: see cpufeat_amd64.go
	var rows [2 * aaVMaxPairs]unsafe.Pointer
	if paired {
		aaVPairRows(&rows, hs, po)
	}
	half := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1))
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	vs, vm, vd := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(mean), archsimd.BroadcastFloat32x8(std)
	x := 0
	if paired {
		// taps in pairs, 16 columns per step (aaVPairSums)
		w0 := unsafe.Pointer(unsafe.SliceData(pw))
		rp := unsafe.Pointer(&rows[0])
		for ; x+16 <= n; x += 16 {
			a, b := aaVPairSums(rp, w0, np, x, &vh)
			a = a.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
			b = b.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
			a.Select128FromPair(0, 2, b).ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[x:])
			a.Select128FromPair(1, 3, b).ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[x+8:])
		}
	}
	for ; x+8 <= n; x += 8 {
		acc := half
		for t, h := range hs {
			// 16-byte load of which 8 are used: the rows have 16 spare bytes (worker.prepare)
			v := archsimd.LoadUint8x16((*[16]uint8)(h[po+x : po+x+16])).ExtendLo8ToUint32().AsInt32x8()
			acc = acc.Add(v.Mul(archsimd.BroadcastInt32x8(wv[t])))
		}
		acc.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top).ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[x:])
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	aaVScalar(out, hs, po, wv, lut, x)
}

// aaVPairSums is the paired vertical loop of aaVRow and vresizeAAU8Paired for the 16 columns at x:
// per tap pair the two rows (rp: aaVPairRows' pointers) widened to int16 and interleaved (VPMOVZXBW,
// VPUNPCKL/HWD), then VPMADDWD on the split weights w0 (aaVPairs: hi*2^sh + lo, colShift, as in the
// horizontal pass), the low halves' sum only where it could change a result (A = mul*sum(p*hi) +
// base, exact when A mod 2^22 < thr in every lane, as in aaHRows4). It returns Pillow's sums plus
// 2^21, columns [0..3, 8..11] in a and [4..7, 12..15] in b.
// Invariants: np <= aaVMaxPairs; each row pointer has 16 readable bytes at x.
// Twin: aaVScalar / vresizeAAU8; proved by TestAAVRowEqualScalarRandom and
// TestVResizeAAU8PairedEqualsScalar.
// Why: 14 instructions per 2 taps x 16 columns instead of 20 with VPMULLD; a call, not inlined, ran
// as fast.
func aaVPairSums(rp, w0 unsafe.Pointer, np, x int, vh *aaVHead) (a, b archsimd.Int32x8) {
	var aH, bH archsimd.Int32x8
	r, w := rp, w0
	for i := np; i > 0; i-- {
		u := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(*(*unsafe.Pointer)(r), x))).ExtendToUint16()
		v := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(*(*unsafe.Pointer)(unsafe.Add(r, 8)), x))).ExtendToUint16()
		pa, pb := u.InterleaveLoGrouped(v).AsInt16x16(), u.InterleaveHiGrouped(v).AsInt16x16()
		wh := archsimd.LoadInt32x8((*[8]int32)(w)).AsInt16x16()
		aH, bH = aH.Add(pa.DotProductPairs(wh)), bH.Add(pb.DotProductPairs(wh))
		r, w = unsafe.Add(r, 16), unsafe.Add(w, 4*aaVPairLen)
	}
	mul, base := archsimd.BroadcastInt32x8(vh.mul), archsimd.BroadcastInt32x8(vh.base)
	a, b = aH.Mul(mul).Add(base), bH.Mul(mul).Add(base)
	frac, thr := archsimd.BroadcastInt32x8(1<<pilPrecisionBits-1), archsimd.BroadcastInt32x8(vh.thr-1)
	if vh.lo0 || a.And(frac).Greater(thr).Or(b.And(frac).Greater(thr)).ToBits() == 0 {
		return a, b
	}
	var aL, bL archsimd.Int32x8
	r, w = rp, w0
	for i := np; i > 0; i-- {
		u := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(*(*unsafe.Pointer)(r), x))).ExtendToUint16()
		v := archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(*(*unsafe.Pointer)(unsafe.Add(r, 8)), x))).ExtendToUint16()
		pa, pb := u.InterleaveLoGrouped(v).AsInt16x16(), u.InterleaveHiGrouped(v).AsInt16x16()
		wl := archsimd.LoadInt32x8((*[8]int32)(unsafe.Add(w, 2*aaVPairLen))).AsInt16x16()
		aL, bL = aL.Add(pa.DotProductPairs(wl)), bL.Add(pb.DotProductPairs(wl))
		r, w = unsafe.Add(r, 16), unsafe.Add(w, 4*aaVPairLen)
	}
	fix := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1)).Sub(base)
	return a.Add(aL).Add(fix), b.Add(bL).Add(fix)
}

// vresizeAAU8Paired is vresizeAAU8 (Pillow's vertical pass, rounded to uint8) on AVX2 for the
// vertical-first plans (vfirstRowU8, which runs it over source rows): aaVRow's loop over tap pairs
// (the split weights pw and head vh from aaVPairs, 16 columns per step, the low halves only where a
// result is in doubt), the results packed to bytes instead of normalised. It computes the columns
// [0, x) of the x it returns, and the caller the rest.
// Invariants: 16 columns at a time while every row has the 16 bytes to load (its capacity bounds the
// loads: the source image may end with the last row); x is 0 without k.AVX2.
// Twin: vresizeAAU8 (the other build's method computes no column); proved by
// TestVResizeAAU8PairedEqualsScalar.
// Why: the vertical pass is most of a vertical-first plan's work.
func (k *kernelSet) vresizeAAU8Paired(dst []uint8, hs [][]uint8, pw []int32, vh aaVHead) int {
	np := (len(hs) + 1) / 2
	n := len(dst)
	for _, h := range hs {
		n = min(n, cap(h))
	}
	if !k.AVX2 || len(hs) == 0 || np > aaVMaxPairs || len(pw) < aaVPairLen*np || n < 16 {
		return 0
	}
	// zeroed (legacy-SSE MOVUPS) and filled before any vector register is dirty: see cpufeat_amd64.go
	var rows [2 * aaVMaxPairs]unsafe.Pointer
	aaVPairRows(&rows, hs, 0)
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	pack := archsimd.LoadInt8x32(&vPackU8)
	w0 := unsafe.Pointer(unsafe.SliceData(pw))
	rp := unsafe.Pointer(&rows[0])
	x := 0
	for ; x+16 <= n; x += 16 {
		a, b := aaVPairSums(rp, w0, np, x, &vh)
		a = a.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
		b = b.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
		// VPACKSSDW puts each lane's columns in order (a's 0..3 then b's 4..7 | 8..11, 12..15); one
		// byte shuffle takes the low byte of every word to the lane's first 8 bytes
		q := a.SaturateToInt16ConcatGrouped(b).AsUint8x32().PermuteOrZeroGrouped(pack)
		*(*uint64)(unsafe.Pointer(&dst[x])) = q.GetLo().AsUint64x2().GetElem(0)
		*(*uint64)(unsafe.Pointer(&dst[x+8])) = q.GetHi().AsUint64x2().GetElem(0)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	return x
}

// vPackU8 is vresizeAAU8Paired's shuffle: the low byte of each of a lane's 8 words, then zeros.
var vPackU8 = [32]int8{0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1}

// aaVPairRows stores the rows of aaVRow's tap pairs, offset by po: pair i reads rows[2i] and
// rows[2i+1]; an odd last tap pairs with itself (its partner's weight is 0). Pure scalar code: it runs
// before aaVRow dirties a vector register.
func aaVPairRows(rows *[2 * aaVMaxPairs]unsafe.Pointer, hs [][]uint8, po int) {
	for t, h := range hs {
		rows[t] = unsafe.Pointer(&h[po])
	}
	if len(hs)%2 == 1 {
		rows[len(hs)] = rows[len(hs)-1]
	}
}

// aaVRow3 is aaVRow's paired loop for the three planes of one output row at once: each tap pair's
// row pointers and weights are loaded once for the three planes. A block of 16 columns whose sums
// leave a plane's results in doubt (aaVHead.thr) adds that plane's low halves. The blocks of 16 run
// in assembly (aaVRow3Y), after aaVRow3W's blocks of 32 where wide (the row's horizontal pass ran in
// aaHRowsZ: the plan has its tables) and k.AAV3W; the last n%16 columns take aaVScalar.
// Invariants: returns false, having written nothing, where aaVRow's paired loop would not run (no
// k.AVX2, a window over aaVMaxPairs pairs, fewer than 16 columns, rows without 16 spare bytes):
// the caller then calls aaVRow per plane. An odd window's last row is repeated past len(hs).
// Twin: aaVScalar per plane; proved by TestAAVRowEqualScalarRandom (with and without aaVRow3W,
// through kernelOverrides.No512V).
// Why: ~30% fewer instructions per pair than three aaVRow calls; the assembly keeps its
// accumulators in registers where the archsimd version spilled them.
func (k *kernelSet) aaVRow3(out *[3][]float32, hs [][]uint8, po *[3]int, wv, pw []int32, vh aaVHead, nt *normTables, luts *[3]*[256]float32, wide bool) bool {
	n := len(out[0])
	np := (len(hs) + 1) / 2
	if !k.AVX2 || np > aaVMaxPairs || n < 16 || len(pw) < aaVPairLen*np || len(out[1]) != n || len(out[2]) != n || len(nt.scale) < 3 {
		return false
	}
	pmax := max(po[0], po[1], po[2])
	for _, h := range hs {
		if len(h) <= pmax || cap(h) < pmax+n+16 || po[0] < 0 || po[1] < 0 || po[2] < 0 {
			return false
		}
	}
	// aaVRow3Y reads the pairs' rows from the slice headers, hs[2i] and hs[2i+1]: an odd window's
	// last pair repeats its row past len(hs) (its weight is zero), where aaRow puts it (in hs's
	// spare capacity), else in a copy of the headers
	hp := hs
	if kk := len(hs); kk%2 == 1 {
		if hp = hs[:kk:kk]; cap(hs) > kk && unsafe.SliceData(hs[:kk+1][kk]) == unsafe.SliceData(hs[kk-1]) {
			hp = hs[:kk+1]
		} else {
			hp = append(hp, hs[kk-1])
		}
	}
	vc := aaVConst{sh: int32(bits.TrailingZeros32(uint32(vh.mul))), base: vh.base, frac: 1<<pilPrecisionBits - 1,
		thrm1: vh.thr - 1, top: 255, fix: 1<<(pilPrecisionBits-1) - vh.base,
		scale: [3]float32(nt.scale[:3]), mean: [3]float32(nt.mean[:3]), std: [3]float32(nt.std[:3])}
	o := [3]unsafe.Pointer{unsafe.Pointer(&out[0][0]), unsafe.Pointer(&out[1][0]), unsafe.Pointer(&out[2][0])}
	w0 := unsafe.Pointer(unsafe.SliceData(pw))
	x := 0
	if wide && k.AAV3W && n >= 32 {
		var rows [2 * aaVMaxPairs]unsafe.Pointer // zeroed and filled before any vector register is dirty: see cpufeat_amd64.go
		aaVPairRows(&rows, hs, 0)
		x = aaVRow3W(out, unsafe.Pointer(&rows[0]), np, po, w0, vh, nt)
	}
	if end := x + (n-x)&^15; end > x {
		aaVRow3Y(&o, unsafe.Pointer(&hp[0]), np, x, end, po, w0, &vc)
		x = end
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	for c := range out {
		aaVScalar(out[c], hs, po[c], wv, luts[c], x)
	}
	return true
}

// aaVRow3W is aaVRow3's loop on AVX-512 for the columns [0, n&^31), 32 per step (n >= 32): the same
// pairs (rows at rp, weights from w0 in aaVPairs' layout, 64 bytes of each half), each row's 32 bytes
// widened to int16 (VPMOVZXBW) and interleaved with its partner's (VPUNPCKL/HWD), one VPMADDWD per
// half; the low halves for a plane's block in doubt, as there. The interleave leaves columns
// [0..3, 8..11, 16..19, 24..27] in a and the rest in b: two two-table permutes put them in order
// before the normalisation. It returns n&^31.
// Twin: aaVScalar; proved by TestAAVRowEqualScalarRandom on AVX-512 VNNI CPUs.
// Why: twice aaVRow3Y's columns per step, after a horizontal pass that already runs at 512 bits.
func aaVRow3W(out *[3][]float32, rp unsafe.Pointer, np int, po *[3]int, w0 unsafe.Pointer, vh aaVHead, nt *normTables) int {
	n := len(out[0]) &^ 31
	half := archsimd.BroadcastInt32x16(1 << (pilPrecisionBits - 1))
	zero, top := archsimd.BroadcastInt32x16(0), archsimd.BroadcastInt32x16(255)
	mul, base := archsimd.BroadcastInt32x16(vh.mul), archsimd.BroadcastInt32x16(vh.base)
	frac, thr := archsimd.BroadcastInt32x16(1<<pilPrecisionBits-1), archsimd.BroadcastInt32x16(vh.thr-1)
	fix := half.Sub(base)
	o0, o1, o2 := uintptr(po[0]), uintptr(po[1]), uintptr(po[2])
	// pairs sums the halves at byte offset wo of each pair's weights over the 32 columns at x of the
	// rows at offset o
	pairs := func(x, o, wo uintptr) (a, b archsimd.Int32x16) {
		r, w := rp, unsafe.Add(w0, wo)
		for i := np; i > 0; i-- {
			p, q := unsafe.Add(*(*unsafe.Pointer)(r), x+o), unsafe.Add(*(*unsafe.Pointer)(unsafe.Add(r, 8)), x+o)
			wt := archsimd.LoadInt32x16((*[16]int32)(w)).AsInt16x32()
			u := archsimd.LoadUint8x32((*[32]uint8)(p)).ExtendToUint16()
			v := archsimd.LoadUint8x32((*[32]uint8)(q)).ExtendToUint16()
			a, b = a.Add(u.InterleaveLoGrouped(v).AsInt16x32().DotProductPairs(wt)), b.Add(u.InterleaveHiGrouped(v).AsInt16x32().DotProductPairs(wt))
			r, w = unsafe.Add(r, 16), unsafe.Add(w, 4*aaVPairLen)
		}
		return a, b
	}
	lo, hi := archsimd.LoadUint32x16(&aaVOrder[0]), archsimd.LoadUint32x16(&aaVOrder[1])
	plane := func(o []float32, x int, off uintptr, c int) {
		a, b := pairs(uintptr(x), off, 0)
		a, b = a.Mul(mul).Add(base), b.Mul(mul).Add(base)
		if !vh.lo0 && a.And(frac).Greater(thr).Or(b.And(frac).Greater(thr)).ToBits() != 0 {
			l, m := pairs(uintptr(x), off, 2*aaVPairLen)
			a, b = a.Add(l).Add(fix), b.Add(m).Add(fix)
		}
		a = a.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
		b = b.ShiftAllRight(pilPrecisionBits).Max(zero).Min(top)
		vs, vm, vd := archsimd.BroadcastFloat32x16(nt.scale[c]), archsimd.BroadcastFloat32x16(nt.mean[c]), archsimd.BroadcastFloat32x16(nt.std[c])
		a.ConcatPermute(b, lo).ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).Store((*[16]float32)(unsafe.Pointer(&o[x])))
		a.ConcatPermute(b, hi).ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).Store((*[16]float32)(unsafe.Pointer(&o[x+16])))
	}
	out0, out1, out2 := out[0][:n], out[1][:n], out[2][:n]
	for x := 0; x < n; x += 32 {
		plane(out0, x, o0, 0)
		plane(out1, x, o1, 1)
		plane(out2, x, o2, 2)
	}
	return n
}

// aaVOrder is aaVRow3W's two permutes of (a, b) into column order: a's lanes hold columns 8l..8l+3,
// b's 8l+4..8l+7.
var aaVOrder = [2][16]uint32{
	{0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23},
	{8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31},
}
