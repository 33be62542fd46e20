//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// The antialias fast path's horizontal pass on amd64 (archsimd, with the assembly column loops of
// resize_aa_avx2_amd64.s and resize_aa_vnni_amd64.s): interleaved RGB source rows into the planar
// rows the vertical pass (resize_aa_vertical_amd64.go) reads. Pure-Go twins: resize_aa_other.go.

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
