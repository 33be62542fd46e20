//go:build goexperiment.simd && amd64

package engine

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"
)

// Byte shuffles of the fast antialias horizontal pass (resize_aa.go): from the 16 bytes at a chunk's
// first tap, lay out the (tap, tap+1) pixel pairs of each channel as int16, [r0 r1 g0 g1 b0 b1 0 0],
// for taps 0, 1 (aaShufA) and 2, 3 (aaShufB); the same indices in both 128-bit lanes, which hold two
// different source rows. -128 selects zero.
var aaShufA, aaShufB = aaShuffle(0), aaShuffle(6)

func aaShuffle(first int8) (s [32]int8) {
	for lane := 0; lane < 2; lane++ {
		for ch := int8(0); ch < 3; ch++ {
			i := lane*16 + 4*int(ch)
			s[i], s[i+1], s[i+2], s[i+3] = first+ch, -128, first+ch+3, -128
		}
		for i := lane*16 + 12; i < lane*16+16; i++ {
			s[i] = -128
		}
	}
	return s
}

// aaPack01, aaPack23: after VPACKUSDW of the results of columns (j, j+1) and (j+2, j+3), these byte
// shuffles move each channel's low bytes into channel-major order, [c0 of j..j+3, c1 ..., c2 ..., 0],
// in both 128-bit lanes (the two source rows), so that three 32-bit stores per row write four columns.
var aaPack01, aaPack23 = aaPackShuffle(0), aaPackShuffle(2)

func aaPackShuffle(col int) (s [32]int8) {
	for i := range s {
		s[i] = -128
	}
	for lane := 0; lane < 2; lane++ {
		for ch := 0; ch < 3; ch++ {
			s[lane*16+4*ch+col] = int8(2 * ch)     // first column of the pair: words 0..2
			s[lane*16+4*ch+col+1] = int8(8 + 2*ch) // second column: words 4..6
		}
	}
	return s
}

// aaHRows computes the antialias horizontal pass (Pillow's 22-bit or PyTorch's int16 weights, clipped
// to uint8) of one or two interleaved RGB source rows (h1 nil: one) into planar rows (channel c at
// h[c*n:]): two rows in the two 128-bit lanes, 4 taps per step as two byte shuffles and four
// VPMADDWD on the split weights (aaSplit, colShift), four columns packed and stored together.
// Invariants: without k.AVX2, or for a row whose 16-byte loads could pass the end of src, it is
// aaHScalar; len(h0), len(h1) >= 3n.
// Twin: aaHScalar (resize_aa_other.go); proved by TestAAHRowsEqualScalarRandom and
// TestAntialiasFastPathEqualsGeneral.
// Why: the pass for groups of one to three rows, and for vertical-first plans' single row.
func (k *kernelSet) aaHRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	n := len(a.cols)
	one := h1 == nil
	if one {
		rb1 = rb0
	}
	r0, r1 := rb0+a.minOff, rb1+a.minOff
	if !k.AVX2 || r0+a.winEnd > len(src) || r1+a.winEnd > len(src) {
		aaHScalar(h0, src, rb0, a, p, 0, n)
		if !one {
			aaHScalar(h1, src, rb1, a, p, 0, n)
		}
		return
	}
	h0 = h0[:3*n]
	d1 := h0 // one row: the second lane's results are written over the first's (then rewritten)
	if !one {
		d1 = h1[:3*n]
	}
	base := unsafe.Pointer(unsafe.SliceData(src))
	p0, p1 := unsafe.Add(base, r0), unsafe.Add(base, r1)
	q0, q1 := unsafe.Pointer(unsafe.SliceData(h0)), unsafe.Pointer(unsafe.SliceData(d1))
	shA, shB := archsimd.LoadInt8x32(&aaShufA), archsimd.LoadInt8x32(&aaShufB)
	pk01, pk23 := archsimd.LoadInt8x32(&aaPack01), archsimd.LoadInt8x32(&aaPack23)
	half := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1))
	top := archsimd.BroadcastUint16x16(255)
	cols := a.cols
	chunks := unsafe.Pointer(unsafe.SliceData(a.chunks))
	lo0 := a.hs.lo0
	col := func(c *aaCol) archsimd.Int32x8 {
		var hi, lo archsimd.Int32x8
		mul := archsimd.BroadcastInt32x8(c.mul) // the column's 2^sh (colShift)
		off := uintptr(c.off)
		ck := (*aaChunk)(unsafe.Add(chunks, uintptr(c.ch)*unsafe.Sizeof(aaChunk{})))
		if lo0 { // torch weights: lo is zero, one multiply-add per tap pair (aaSplit)
			for q := (uint32(c.cnt) + 3) / 4; q > 0; q-- {
				v := archsimd.Uint8x32{}.SetLo(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p0, off)))).
					SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p1, off))))
				pa := v.PermuteOrZeroGrouped(shA).AsInt16x16()
				pb := v.PermuteOrZeroGrouped(shB).AsInt16x16()
				hi = hi.Add(pa.DotProductPairs(archsimd.LoadInt16x16(&ck.hiA))).Add(pb.DotProductPairs(archsimd.LoadInt16x16(&ck.hiB)))
				off += 12
				ck = (*aaChunk)(unsafe.Add(unsafe.Pointer(ck), unsafe.Sizeof(aaChunk{})))
			}
			return hi.Mul(mul).Add(half).ShiftAllRight(pilPrecisionBits)
		}
		for q := (uint32(c.cnt) + 3) / 4; q > 0; q-- {
			v := archsimd.Uint8x32{}.SetLo(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p0, off)))).
				SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p1, off))))
			pa := v.PermuteOrZeroGrouped(shA).AsInt16x16()
			pb := v.PermuteOrZeroGrouped(shB).AsInt16x16()
			hi = hi.Add(pa.DotProductPairs(archsimd.LoadInt16x16(&ck.hiA))).Add(pb.DotProductPairs(archsimd.LoadInt16x16(&ck.hiB)))
			lo = lo.Add(pa.DotProductPairs(archsimd.LoadInt16x16(&ck.loA))).Add(pb.DotProductPairs(archsimd.LoadInt16x16(&ck.loB)))
			off += 12
			ck = (*aaChunk)(unsafe.Add(unsafe.Pointer(ck), unsafe.Sizeof(aaChunk{})))
		}
		return hi.Mul(mul).Add(lo).Add(half).ShiftAllRight(pilPrecisionBits)
	}
	j := 0
	for ; j+4 <= n; j += 4 {
		c := cols[j : j+4 : j+4]
		v0, v1 := col(&c[0]), col(&c[1])
		u01 := v0.SaturateToUint16ConcatGrouped(v1).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk01)
		v2, v3 := col(&c[2]), col(&c[3])
		u := v2.SaturateToUint16ConcatGrouped(v3).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk23).Or(u01)
		w0, w1 := u.GetLo().AsUint32x4(), u.GetHi().AsUint32x4()
		*(*uint32)(unsafe.Add(q1, j)) = w1.GetElem(0)
		*(*uint32)(unsafe.Add(q1, n+j)) = w1.GetElem(1)
		*(*uint32)(unsafe.Add(q1, 2*n+j)) = w1.GetElem(2)
		*(*uint32)(unsafe.Add(q0, j)) = w0.GetElem(0)
		*(*uint32)(unsafe.Add(q0, n+j)) = w0.GetElem(1)
		*(*uint32)(unsafe.Add(q0, 2*n+j)) = w0.GetElem(2)
	}
	var out [8]int32
	zero, top32 := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	for ; j < n; j++ { // the last n%4 columns
		col(&cols[j]).Max(zero).Min(top32).Store(&out)
		h0[j], h0[n+j], h0[2*n+j] = uint8(out[0]), uint8(out[1]), uint8(out[2])
		if !one {
			d1[j], d1[n+j], d1[2*n+j] = uint8(out[4]), uint8(out[5]), uint8(out[6])
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// aaHRows4 is aaHRows for four source rows at once (h[q] from the row at byte offset rb[q]): two
// pairs in two registers share each chunk's four weight loads and the loop. The high halves are
// summed first; a second pass adds the low halves only for a column whose rounded result they could
// change (aaCol.thr, colShift). Invariants: without k.AVX2, or for rows whose 32-byte loads could
// pass the end of src, it runs aaHRows on the two pairs; len(h[q]) >= 3n.
// Twin: aaHScalar; proved by TestAAHRowsEqualScalarRandom (which also checks that dropping the low
// halves is caught).
// Why: the fallback for the groups aaHRows4W declines; ~25% fewer instructions per row than two
// aaHRows calls.
func (k *kernelSet) aaHRows4(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan) {
	n := len(a.cols)
	ok := k.AVX2
	var q [4]unsafe.Pointer
	var ps [4]unsafe.Pointer
	base := unsafe.Pointer(unsafe.SliceData(src))
	for i := range h {
		r := rb[i] + a.minOff
		ok = ok && r+a.winEnd+16 <= len(src) && len(h[i]) >= 3*n // +16: the 32-byte loads below
		ps[i] = unsafe.Add(base, r)
	}
	if !ok {
		k.aaHRows(h[0], h[1], src, rb[0], rb[1], a, p)
		k.aaHRows(h[2], h[3], src, rb[2], rb[3], a, p)
		return
	}
	for i := range h {
		q[i] = unsafe.Pointer(unsafe.SliceData(h[i]))
	}
	// The four columns' sums go through memory (res): values kept in registers across the next
	// column's loop made the compiler reload five spilled registers in every chunk step. res and the
	// closure are zeroed (legacy-SSE MOVUPS) before any vector register is dirty: the shuffles are
	// loaded per column, not captured.
	var res [8]archsimd.Int32x8
	cols := a.cols
	chunks := unsafe.Pointer(unsafe.SliceData(a.chunks))
	p0, p1, p2, p3 := ps[0], ps[1], ps[2], ps[3]
	lo0 := a.hs.lo0
	// rows sums one column's chunks (hiA/hiB at byte offset wo in aaChunk: the high or the low
	// halves) for the four rows: rows 0, 1 and rows 2, 3 in the two lanes.
	rows := func(c *aaCol, wo uintptr) (s, s2 archsimd.Int32x8) {
		shA, shB := archsimd.LoadInt8x32(&aaShufA), archsimd.LoadInt8x32(&aaShufB)
		off := uintptr(c.off)
		ck := unsafe.Add(chunks, uintptr(c.ch)*unsafe.Sizeof(aaChunk{})+wo)
		for i := (uint32(c.cnt) + 3) / 4; i > 0; i-- {
			// a 32-byte load fills the low lane (its high half is replaced): one instruction
			// fewer than inserting into a zero register
			v := archsimd.LoadUint8x32((*[32]uint8)(unsafe.Add(p0, off))).SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p1, off))))
			u := archsimd.LoadUint8x32((*[32]uint8)(unsafe.Add(p2, off))).SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(p3, off))))
			pa, pb := v.PermuteOrZeroGrouped(shA).AsInt16x16(), v.PermuteOrZeroGrouped(shB).AsInt16x16()
			qa, qb := u.PermuteOrZeroGrouped(shA).AsInt16x16(), u.PermuteOrZeroGrouped(shB).AsInt16x16()
			wa, wb := archsimd.LoadInt16x16((*[16]int16)(ck)), archsimd.LoadInt16x16((*[16]int16)(unsafe.Add(ck, 32)))
			s = s.Add(pa.DotProductPairs(wa)).Add(pb.DotProductPairs(wb))
			s2 = s2.Add(qa.DotProductPairs(wa)).Add(qb.DotProductPairs(wb))
			off += 12
			ck = unsafe.Add(ck, unsafe.Sizeof(aaChunk{}))
		}
		return s, s2
	}
	col := func(c *aaCol) (archsimd.Int32x8, archsimd.Int32x8) {
		hi, hi2 := rows(c, 0)
		mul := archsimd.BroadcastInt32x8(c.mul) // the column's 2^sh (colShift)
		half := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1))
		if lo0 { // torch weights: lo is zero, one multiply-add per tap pair (aaSplit)
			return hi.Mul(mul).Add(half).ShiftAllRight(pilPrecisionBits),
				hi2.Mul(mul).Add(half).ShiftAllRight(pilPrecisionBits)
		}
		// split weights (Pillow): the high halves first, as above; the low halves' sum only where it
		// could change a result (aaCol.thr), in a second pass over the column
		base := archsimd.BroadcastInt32x8(c.base)
		hi, hi2 = hi.Mul(mul).Add(base), hi2.Mul(mul).Add(base)
		frac, thr := archsimd.BroadcastInt32x8(1<<pilPrecisionBits-1), archsimd.BroadcastInt32x8(c.thr-1)
		if hi.And(frac).Greater(thr).Or(hi2.And(frac).Greater(thr)).ToBits() != 0 {
			lo, lo2 := rows(c, unsafe.Offsetof(aaChunk{}.loA))
			fix := half.Sub(base) // A + L - lmin: the exact sum plus 2^21
			hi, hi2 = hi.Add(lo).Add(fix), hi2.Add(lo2).Add(fix)
		}
		return hi.ShiftAllRight(pilPrecisionBits), hi2.ShiftAllRight(pilPrecisionBits)
	}
	j := 0
	for ; j+4 <= n; j += 4 {
		c := cols[j : j+4 : j+4]
		res[0], res[4] = col(&c[0])
		res[1], res[5] = col(&c[1])
		res[2], res[6] = col(&c[2])
		res[3], res[7] = col(&c[3])
		u, y := aaPack4(&res)
		for i, wv := range [4]archsimd.Uint32x4{u.GetLo(), u.GetHi(), y.GetLo(), y.GetHi()} {
			*(*uint32)(unsafe.Add(q[i], j)) = wv.GetElem(0)
			*(*uint32)(unsafe.Add(q[i], n+j)) = wv.GetElem(1)
			*(*uint32)(unsafe.Add(q[i], 2*n+j)) = wv.GetElem(2)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	if j < n {                   // the last n%4 columns
		for i := range h {
			aaHScalar(h[i], src, rb[i], a, p, j, n)
		}
	}
}

// aaPack4 packs four columns' results of aaHRows4 and aaHRows4W (res[k] column k of rows 0, 1 in
// the two lanes, res[4+k] of rows 2, 3) to bytes, clamped to [0, 255]: per row [c0 of the 4 | c1 |
// c2 | 0], rows 0, 1 in u and rows 2, 3 in y (aaPack01/23).
func aaPack4(res *[8]archsimd.Int32x8) (u, y archsimd.Uint32x8) {
	top := archsimd.BroadcastUint16x16(255)
	pk01, pk23 := archsimd.LoadInt8x32(&aaPack01), archsimd.LoadInt8x32(&aaPack23)
	u = res[0].SaturateToUint16ConcatGrouped(res[1]).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk01).
		Or(res[2].SaturateToUint16ConcatGrouped(res[3]).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk23)).AsUint32x8()
	y = res[4].SaturateToUint16ConcatGrouped(res[5]).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk01).
		Or(res[6].SaturateToUint16ConcatGrouped(res[7]).Min(top).AsUint8x32().PermuteOrZeroGrouped(pk23)).AsUint32x8()
	return u, y
}

// aaVRow computes the antialias vertical pass plus normalisation of one output plane row from the
// planar rows hs (plane offset po): Pillow's 32-bit sums over the window's rows, 16 columns and 2 taps
// per step on the split weight pairs pw (aaVPairs, aaVPairSums), 8 columns with VPMULLD where the
// window is longer than aaVMaxPairs pairs or the row narrower than 16; the shift and clip to [0, 255],
// then (v*scale - mean) / std with one IEEE instruction per step, which equals the table aaVScalar
// reads bit for bit. Invariants: every row has 16 spare bytes of capacity past po+len(out)
// (worker.prepare), else (or without k.AVX2) it is aaVScalar.
// Twin: aaVScalar (resize_aa_other.go); proved by TestAAVRowEqualScalarRandom.
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

// aaHRows4W is aaHRows4 with 8 taps per step and one plain load per row: the 32 bytes from 4 before a
// chunk's first tap hold taps 0-3 at bytes 4-15 of the low 128-bit lane and taps 4-7 at bytes 0-11
// of the high one, so two byte shuffles (aaWideA, aaWideB) give every tap pair of the 8 in [r r g g b
// b 0 0] form, lanes (0,1 | 4,5) and (2,3 | 6,7), with one 32-byte weight load per pair of
// multiply-adds for the four rows (aaWide). A row's two lanes are summed at the column's end, which
// leaves aaHRows4's layout; the rest (split, low halves only where aaCol.thr leaves a result in
// doubt, packing, stores) is aaHRows4's. The columns [0, n&^15) run in assembly where the kernel set
// says so: aaHRowsZ (k.AAHZ and the plan has its tables), else aaHRowsY (k.AAHY); else, and for the
// last n%16 columns, this function's archsimd loop.
// Invariants: returns false, having written nothing, where it cannot run (no k.AVX2, no aaWide
// tables, a row offset before the array, an output row shorter than 3n): the caller then runs
// aaHRows4. A row whose loads would pass either end of src is copied into its slot of edge first.
// Twin: aaHScalar; proved by TestAAHRowsEqualScalarRandom, each column loop forced in turn through
// kernelOverrides (NoZ, NoY), with a broken twin that must be caught.
// Why: per 8 taps and four rows, half the loads, inserts and weight loads of aaHRows4.
func (k *kernelSet) aaHRows4W(h *[4][]uint8, rb *[4]int, src []uint8, a *aaPlan, p *Plan, edge []byte) bool {
	n := len(a.cols)
	if !k.AVX2 || a.wide == nil {
		return false
	}
	var ps, q [4]unsafe.Pointer
	base := unsafe.Pointer(unsafe.SliceData(src))
	for i := range h {
		r := rb[i] + a.minOff
		if r < 0 || len(h[i]) < 3*n {
			return false
		}
		q[i] = unsafe.Pointer(unsafe.SliceData(h[i]))
		if r >= 4 && r+a.wideEnd <= len(src) {
			ps[i] = unsafe.Add(base, r-4)
		} else {
			// A row whose loads would pass either end of the array (the image's first or last
			// row): the bytes its loads read, [r-4, r+wideEnd), are copied into its slot of edge
			// (aaPlan.edgeStride bytes per row) as far as the array has them; the rest of the slot
			// meets only zero weights or bytes the shuffles skip (so the edge rows need no
			// aaHScalar).
			st := a.edgeStride()
			if len(edge) < 4*st {
				return false
			}
			e := edge[i*st : (i+1)*st]
			copy(e[max(4-r, 0):], src[max(r-4, 0):min(r+a.wideEnd, len(src))])
			ps[i] = unsafe.Pointer(unsafe.SliceData(e))
		}
	}
	// The columns [0, n&^15) in assembly, aaHRowsZ where AVX-512 VNNI is there, else aaHRowsY; the
	// rest below.
	j := 0
	if z := k.AAHZ && a.zw != nil; n >= 16 && (z || k.AAHY) {
		j = n &^ 15
		pf, pfn := aaPrefetch(k.AAPref, rb, src, a, j, ps[0])
		if z {
			var scratch [16][16]int32
			var zr [4]unsafe.Pointer
			for i := range zr {
				zr[i] = unsafe.Add(ps[i], 4) // ps: from 4 before the row's origin
			}
			aaHRowsZ(&zr, &q, &a.zcols[0], j, &a.zw[0], n, len(a.zw)/2*int(unsafe.Sizeof(aaZW{})), &aaZK, &scratch, pf, pfn)
		} else {
			// in calls of aaYFixCap columns at most (the doubt list's length)
			for c0 := 0; c0 < j; c0 += aaYFixCap {
				var qc [4]unsafe.Pointer
				for i := range qc {
					qc[i] = unsafe.Add(q[i], c0)
				}
				aaHRowsY(&ps, &qc, &a.ycols[c0], min(j-c0, aaYFixCap), &a.wide[0], n, &aaYK, pf+uintptr(c0*pfn), pfn)
			}
		}
		if j == n {
			return true
		}
	}
	var res [8]archsimd.Int32x8  // zeroed before any vector register is dirty: see aaHRows4
	var grp [8]archsimd.Uint32x8 // the same
	cols := a.cols
	chunks := unsafe.Pointer(unsafe.SliceData(a.wide))
	p0, p1, p2, p3 := ps[0], ps[1], ps[2], ps[3]
	lo0 := a.hs.lo0
	// rows sums one column's chunks (hiA/hiB at byte offset wo in aaWide: the high or the low halves)
	// for the four rows, each row's two lanes added: rows 0, 1 and rows 2, 3 in the two lanes.
	rows := func(c *aaCol, wo uintptr) (archsimd.Int32x8, archsimd.Int32x8) {
		var s0, s1, s2, s3 archsimd.Int32x8
		shA, shB := archsimd.LoadInt8x32(&aaWideA), archsimd.LoadInt8x32(&aaWideB)
		off := uintptr(c.off)
		r0, r1, r2, r3 := unsafe.Add(p0, off), unsafe.Add(p1, off), unsafe.Add(p2, off), unsafe.Add(p3, off)
		ck := unsafe.Add(chunks, uintptr(c.wch)*unsafe.Sizeof(aaWide{})+wo)
		for i := uint32(c.wfull); i > 0; i-- {
			wa, wb := archsimd.LoadInt16x16((*[16]int16)(ck)), archsimd.LoadInt16x16((*[16]int16)(unsafe.Add(ck, 32)))
			v := archsimd.LoadUint8x32((*[32]uint8)(r0))
			s0 = s0.Add(v.PermuteOrZeroGrouped(shA).AsInt16x16().DotProductPairs(wa)).Add(v.PermuteOrZeroGrouped(shB).AsInt16x16().DotProductPairs(wb))
			v = archsimd.LoadUint8x32((*[32]uint8)(r1))
			s1 = s1.Add(v.PermuteOrZeroGrouped(shA).AsInt16x16().DotProductPairs(wa)).Add(v.PermuteOrZeroGrouped(shB).AsInt16x16().DotProductPairs(wb))
			v = archsimd.LoadUint8x32((*[32]uint8)(r2))
			s2 = s2.Add(v.PermuteOrZeroGrouped(shA).AsInt16x16().DotProductPairs(wa)).Add(v.PermuteOrZeroGrouped(shB).AsInt16x16().DotProductPairs(wb))
			v = archsimd.LoadUint8x32((*[32]uint8)(r3))
			s3 = s3.Add(v.PermuteOrZeroGrouped(shA).AsInt16x16().DotProductPairs(wa)).Add(v.PermuteOrZeroGrouped(shB).AsInt16x16().DotProductPairs(wb))
			r0, r1, r2, r3 = unsafe.Add(r0, 24), unsafe.Add(r1, 24), unsafe.Add(r2, 24), unsafe.Add(r3, 24)
			ck = unsafe.Add(ck, unsafe.Sizeof(aaWide{}))
		}
		t01 := s0.Select128FromPair(0, 2, s1).Add(s0.Select128FromPair(1, 3, s1))
		t23 := s2.Select128FromPair(0, 2, s3).Add(s2.Select128FromPair(1, 3, s3))
		if c.wtail != 0 { // 1 to 4 taps left: two rows per register, their weights in both lanes (aaCol.wtail)
			tA, tB := archsimd.LoadInt8x32(&aaTailA), archsimd.LoadInt8x32(&aaTailB)
			wa := archsimd.LoadInt16x16((*[16]int16)(ck))
			v := archsimd.LoadUint8x32((*[32]uint8)(r0)).SetHi(archsimd.LoadUint8x16((*[16]uint8)(r1)))
			u := archsimd.LoadUint8x32((*[32]uint8)(r2)).SetHi(archsimd.LoadUint8x16((*[16]uint8)(r3)))
			t01 = t01.Add(v.PermuteOrZeroGrouped(tA).AsInt16x16().DotProductPairs(wa))
			t23 = t23.Add(u.PermuteOrZeroGrouped(tA).AsInt16x16().DotProductPairs(wa))
			if c.wtail == 2 {
				wb := archsimd.LoadInt16x16((*[16]int16)(unsafe.Add(ck, 32)))
				t01 = t01.Add(v.PermuteOrZeroGrouped(tB).AsInt16x16().DotProductPairs(wb))
				t23 = t23.Add(u.PermuteOrZeroGrouped(tB).AsInt16x16().DotProductPairs(wb))
			}
		}
		return t01, t23
	}
	col := func(c *aaCol) (archsimd.Int32x8, archsimd.Int32x8) {
		hi, hi2 := rows(c, 0)
		mul := archsimd.BroadcastInt32x8(c.mul) // the column's 2^sh (colShift)
		if lo0 {                                // torch weights: lo is zero (aaSplit)
			half := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1))
			return hi.Mul(mul).Add(half).ShiftAllRight(pilPrecisionBits), hi2.Mul(mul).Add(half).ShiftAllRight(pilPrecisionBits)
		}
		bs := archsimd.BroadcastInt32x8(c.base)
		hi, hi2 = hi.Mul(mul).Add(bs), hi2.Mul(mul).Add(bs)
		frac, thr := archsimd.BroadcastInt32x8(1<<pilPrecisionBits-1), archsimd.BroadcastInt32x8(c.thr-1)
		if hi.And(frac).Greater(thr).Or(hi2.And(frac).Greater(thr)).ToBits() != 0 {
			lo, lo2 := rows(c, unsafe.Offsetof(aaWide{}.loA))
			fix := archsimd.BroadcastInt32x8(1 << (pilPrecisionBits - 1)).Sub(bs) // A + L - lmin: the exact sum plus 2^21
			hi, hi2 = hi.Add(lo).Add(fix), hi2.Add(lo2).Add(fix)
		}
		return hi.ShiftAllRight(pilPrecisionBits), hi2.ShiftAllRight(pilPrecisionBits)
	}
	// four columns' results packed to bytes: per row [c0 of the 4 | c1 | c2 | 0], rows 0, 1 in u and
	// rows 2, 3 in y (aaPack01/23)
	four := func(c []aaCol) (u, y archsimd.Uint32x8) {
		res[0], res[4] = col(&c[0])
		res[1], res[5] = col(&c[1])
		res[2], res[6] = col(&c[2])
		res[3], res[7] = col(&c[3])
		return aaPack4(&res)
	}
	// Sixteen columns at a time: four groups' packed words go through memory (grp), a 4x4 transpose
	// of 32-bit words per lane makes each plane's 16 bytes of a row contiguous, and one 16-byte store
	// writes them: 12 stores per 16 columns instead of 48 extracted 32-bit ones, which (with their
	// address arithmetic) took ~45 instructions per four columns.
	for ; j+16 <= n; j += 16 {
		grp[0], grp[4] = four(cols[j : j+4 : j+4])
		grp[1], grp[5] = four(cols[j+4 : j+8 : j+8])
		grp[2], grp[6] = four(cols[j+8 : j+12 : j+12])
		grp[3], grp[7] = four(cols[j+12 : j+16 : j+16])
		for i := 0; i < 2; i++ {
			u0, u1, u2, u3 := grp[4*i], grp[4*i+1], grp[4*i+2], grp[4*i+3]
			t0, t1 := u0.InterleaveLoGrouped(u1).AsUint64x4(), u0.InterleaveHiGrouped(u1).AsUint64x4()
			t2, t3 := u2.InterleaveLoGrouped(u3).AsUint64x4(), u2.InterleaveHiGrouped(u3).AsUint64x4()
			c0, c1, c2 := t0.InterleaveLoGrouped(t2).AsUint8x32(), t0.InterleaveHiGrouped(t2).AsUint8x32(), t1.InterleaveLoGrouped(t3).AsUint8x32()
			ra, rb := q[2*i], q[2*i+1]
			c0.GetLo().Store((*[16]uint8)(unsafe.Add(ra, j)))
			c0.GetHi().Store((*[16]uint8)(unsafe.Add(rb, j)))
			c1.GetLo().Store((*[16]uint8)(unsafe.Add(ra, n+j)))
			c1.GetHi().Store((*[16]uint8)(unsafe.Add(rb, n+j)))
			c2.GetLo().Store((*[16]uint8)(unsafe.Add(ra, 2*n+j)))
			c2.GetHi().Store((*[16]uint8)(unsafe.Add(rb, 2*n+j)))
		}
	}
	for ; j+4 <= n; j += 4 {
		u, y := four(cols[j : j+4 : j+4])
		for i, wv := range [4]archsimd.Uint32x4{u.GetLo(), u.GetHi(), y.GetLo(), y.GetHi()} {
			*(*uint32)(unsafe.Add(q[i], j)) = wv.GetElem(0)
			*(*uint32)(unsafe.Add(q[i], n+j)) = wv.GetElem(1)
			*(*uint32)(unsafe.Add(q[i], 2*n+j)) = wv.GetElem(2)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	if j < n {                   // the last n%4 columns
		for i := range h {
			aaHScalar(h[i], src, rb[i], a, p, j, n)
		}
	}
	return true
}

// aaPrefetch is what aaHRowsZ and aaHRowsY prefetch over a call of j columns: with next, the next
// call's rows, the four after rb's when they are evenly spaced (a downscale's groups, aaRow) and about
// as far apart as the bytes read, pfn bytes a column (two lines at most); else pfn 0 and the two
// lines at p0, which the call reads anyway (an address, never dereferenced).
// Why: next (kernelSet.AAPref) is on for Intel CPUs only, where it was measured faster; on AMD Zen 3
// a software prefetch of the next rows made the archsimd pass slower.
func aaPrefetch(next bool, rb *[4]int, src []uint8, a *aaPlan, j int, p0 unsafe.Pointer) (pf uintptr, pfn int) {
	if s := rb[1] - rb[0]; next && s > 0 && rb[2]-rb[1] == s && rb[3]-rb[2] == s && s <= 2*(a.wideEnd+64) {
		return uintptr(unsafe.Pointer(unsafe.SliceData(src))) + uintptr(rb[3]+s+a.minOff), min((4*s/j+63)&^63, 128)
	}
	return uintptr(p0), 0
}

// aaWideA and aaWideB are aaHRows4W's byte shuffles of the 32 bytes from 4 before a chunk's first
// tap: the (tap, tap+1) pairs of each channel as int16, [c0 c0' c1 c1' c2 c2' 0 0], of taps 0, 1 (low
// lane, bytes 4-9) and 4, 5 (high lane, bytes 0-5) for A, of taps 2, 3 (bytes 10-15) and 6, 7 (bytes
// 6-11) for B.
var aaWideA, aaWideB = aaShuffle2(4, 0), aaShuffle2(10, 6)

// aaTailA and aaTailB are the same for a tail chunk (aaCol.wtail), whose two lanes hold two rows'
// bytes from 4 before its first tap: taps 0, 1 and 2, 3 in both lanes.
var aaTailA, aaTailB = aaShuffle2(4, 4), aaShuffle2(10, 10)

func aaShuffle2(lo, hi int8) (s [32]int8) {
	a, b := aaShuffle(lo), aaShuffle(hi)
	copy(s[:16], a[:16])
	copy(s[16:], b[16:])
	return s
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
