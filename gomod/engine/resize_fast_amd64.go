//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// hresizeRow computes OpenCV's horizontal bilinear pass of one interleaved RGB row into three int16
// planes (channel c at d[c*n:], n = len(f.taps)): (s0*a0 + s1*a1) >> 4 per column and channel. With
// k.VBMI and the plan's 16-column groups, 16 columns per step (pairGroup.pairs); else hresizeAVX2
// (k.AVX2) or hresizeScalar. Invariants: len(d) >= 3n; a group whose 128-byte window passes the
// end of src, and the columns no group covers, take hresizeScalar.
// Twin: hresizeScalar (resize_fast_other.go); proved by TestFastPathEqualsGeneral, and on AVX2 alone
// by TestFastPathWithoutAVX512.
// Why: VPMADDWD on int16 pairs does two taps per multiply-add, where int32 lanes need two VPMULLD.
func (k *kernelSet) hresizeRow(d []int16, src []uint8, rb int, f *fastPlan) {
	n := len(f.taps)
	if !k.VBMI || f.groups == nil { // no groups: see buildGroups
		if k.AVX2 {
			hresizeAVX2(d, src, rb, f)
			return
		}
		hresizeScalar(d, src, rb, f, 0, n)
		return
	}
	d = d[:3*n]
	row := src[rb+f.minOff:]
	for gi := range f.groups {
		g := &f.groups[gi]
		j := 16 * gi
		if int(g.start)+windowBytes > len(row) {
			// the array ends inside the window: reading it whole could touch memory past the end
			archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
			hresizeScalar(d, src, rb, f, j, j+16)
			continue
		}
		c0, c1, c2 := g.pairs(row)
		c0.ShiftAllRight(4).TruncateToInt16().StoreSlice(d[j:])
		c1.ShiftAllRight(4).TruncateToInt16().StoreSlice(d[n+j:])
		c2.ShiftAllRight(4).TruncateToInt16().StoreSlice(d[2*n+j:])
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	if done := 16 * len(f.groups); done < n {
		hresizeScalar(d, src, rb, f, done, n)
	}
}

// hresizeAVX2 is hresizeRow on AVX2 without VBMI, 8 columns per step: each column's two pixels are
// one 8-byte load at its offset, four columns to a register (two per 128-bit lane); a per-lane byte
// shuffle (VPSHUFB, hShuf01) lays out the zero-extended (lower, higher) pairs of channel 0 then 1 of
// a lane's two columns, another (hShuf2) those of channel 2, VPMADDWD with the weights in the same
// order (fastPlan.quadW) gives OpenCV's sums; two blocks of four packed together (VPACKSSDW, exact:
// the shifted sums are <= 32640) and put in column order by one VPERMD give channel 0 in the low and
// channel 1 in the high 128 bits.
// Invariants: a column with a clamped border (wHi 0) multiplies whatever follows its pixel by 0; an
// 8-column block whose loads could pass the end of the array, and the last n%8 columns, take
// hresizeScalar. Caller: k.AVX2.
// Twin: hresizeScalar; proved by TestHresizeAVX2EqualsScalar.
// Why: one load and two shuffles per column replace six scalar loads (about 2x on 512 -> 224).
func hresizeAVX2(d []int16, src []uint8, rb int, f *fastPlan) {
	n := len(f.taps)
	d = d[:3*n]
	row := src[rb+f.minOff:]
	base := unsafe.Pointer(unsafe.SliceData(row))
	out := unsafe.Pointer(unsafe.SliceData(d))
	qw := unsafe.Pointer(unsafe.SliceData(f.quadW))
	taps := f.taps
	ends := f.octEnd
	for b := 0; b < len(ends); {
		if int(ends[b]) > len(row) {
			hresizeScalar(d, src, rb, f, 8*b, 8*b+8)
			b++
			continue
		}
		e := b + 1
		for e < len(ends) && int(ends[e]) <= len(row) {
			e++
		}
		byteBlocks(base, unsafe.Pointer(&taps[8*b]), unsafe.Add(qw, 64*b), unsafe.Add(out, 16*b), e-b, uintptr(2*n))
		b = e
	}
	if done := 8 * len(f.octEnd); done < n {
		hresizeScalar(d, src, rb, f, done, n)
	}
}

// byteBlocks runs hresizeAVX2's kernel over nb blocks: tp, qw and out point at the first block's
// taps, weights and channel-0 output; a channel's row is n2 bytes. Invariant: every block's loads
// lie inside the array (hresizeAVX2 checks fastPlan.octEnd); no pointer steps past its array.
// Twin: hresizeScalar; proved by TestHresizeAVX2EqualsScalar.
// Why: pointers stepping in a function of its own (no call in its loop) keep the loop in registers;
// indexing inside hresizeAVX2 spilled ~10 values per block.
func byteBlocks(base, tp, qw, out unsafe.Pointer, nb int, n2 uintptr) {
	if nb <= 0 {
		return
	}
	s01, s2 := archsimd.LoadInt8x32(&hShuf01), archsimd.LoadInt8x32(&hShuf2)
	perm := archsimd.LoadUint32x8(&hPerm)
	// the pointers step only when another block follows: none points past its array (checkptr)
	for i := 1; ; i++ {
		t := (*[8]pairTap)(tp)
		ld := func(k int) uint64 { return *(*uint64)(unsafe.Add(base, t[k].off)) }
		va := archsimd.Uint8x32{}.SetLo(archsimd.Uint64x2{}.SetElem(0, ld(0)).SetElem(1, ld(1)).AsUint8x16()).
			SetHi(archsimd.Uint64x2{}.SetElem(0, ld(2)).SetElem(1, ld(3)).AsUint8x16())
		vb := archsimd.Uint8x32{}.SetLo(archsimd.Uint64x2{}.SetElem(0, ld(4)).SetElem(1, ld(5)).AsUint8x16()).
			SetHi(archsimd.Uint64x2{}.SetElem(0, ld(6)).SetElem(1, ld(7)).AsUint8x16())
		wa := archsimd.LoadInt16x16((*[16]int16)(qw))
		wb := archsimd.LoadInt16x16((*[16]int16)(unsafe.Add(qw, 32)))
		pa := va.PermuteOrZeroGrouped(s01).AsInt16x16().DotProductPairs(wa).ShiftAllRight(4)
		pb := vb.PermuteOrZeroGrouped(s01).AsInt16x16().DotProductPairs(wb).ShiftAllRight(4)
		x := pa.SaturateToInt16ConcatGrouped(pb).AsInt32x8().Permute(perm).AsInt16x16()
		qa := va.PermuteOrZeroGrouped(s2).AsInt16x16().DotProductPairs(wa).ShiftAllRight(4)
		qb := vb.PermuteOrZeroGrouped(s2).AsInt16x16().DotProductPairs(wb).ShiftAllRight(4)
		y := qa.SaturateToInt16ConcatGrouped(qb).AsInt32x8().Permute(perm).AsInt16x16()
		x.GetLo().Store((*[8]int16)(out))
		x.GetHi().Store((*[8]int16)(unsafe.Add(out, n2)))
		y.GetLo().Store((*[8]int16)(unsafe.Add(out, 2*n2)))
		if i == nb {
			break
		}
		tp, qw, out = unsafe.Add(tp, 8*unsafe.Sizeof(pairTap{})), unsafe.Add(qw, 64), unsafe.Add(out, 16)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// hShuf01 and hShuf2 are hresizeAVX2's per-lane byte shuffles of two 8-byte column loads (bytes 0-7
// and 8-15 of a lane) into zero-extended int16 pairs: (lo, hi) of channel 0 of both columns, then of
// channel 1 (hShuf01); of channel 2, upper half zero (hShuf2). hPerm puts the packed dwords (int16
// pairs) in column order: channel 0's then channel 1's (or channel 2's then nothing).
var (
	hShuf01 = [32]int8{0, -1, 3, -1, 8, -1, 11, -1, 1, -1, 4, -1, 9, -1, 12, -1,
		0, -1, 3, -1, 8, -1, 11, -1, 1, -1, 4, -1, 9, -1, 12, -1}
	hShuf2 = [32]int8{2, -1, 5, -1, 10, -1, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1,
		2, -1, 5, -1, 10, -1, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	hPerm = [8]uint32{0, 4, 2, 6, 1, 5, 3, 7}
)

// pairs is the horizontal pass of group g over one row, on AVX-512 VBMI: load the group's window into
// two registers, gather each channel's (lower, higher) pixel pairs with two two-register byte permutes
// (VPERMI2B), widen to int16 and multiply-add the weight pairs (VPMADDWD). It returns OpenCV's
// s0*a0 + s1*a1 for the 16 columns of channels 0, 1 and 2.
// Invariants: pixels (<= 255) and weights (<= 2048) fit int16, the pair sums (<= 255*2048) int32:
// exact. row must hold g.start+windowBytes bytes.
// Twin: hresizeScalar over the group's columns; proved by TestFastPathEqualsGeneral.
// Why: one window load serves 16 columns, where hresizeAVX2 loads each column.
func (g *pairGroup) pairs(row []uint8) (c0, c1, c2 archsimd.Int32x16) {
	win := (*[windowBytes]uint8)(row[g.start : g.start+windowBytes])
	x := archsimd.LoadUint8x64((*[64]uint8)(win[:64]))
	y := archsimd.LoadUint8x64((*[64]uint8)(win[64:]))
	a := x.ConcatPermute(y, archsimd.LoadUint8x64(&g.idx01))
	b := x.ConcatPermute(y, archsimd.LoadUint8x64(&g.idx2))
	w := archsimd.LoadInt16x32(&g.w)
	c0 = a.GetLo().ExtendToUint16().AsInt16x32().DotProductPairs(w)
	c1 = a.GetHi().ExtendToUint16().AsInt16x32().DotProductPairs(w)
	c2 = b.GetLo().ExtendToUint16().AsInt16x32().DotProductPairs(w)
	return c0, c1, c2
}

// vnormRow computes OpenCV's vertical bilinear step of two int16 plane rows and the normalisation,
// into one float32 output row: ((s0*b0)>>16 + (s1*b1)>>16 + 2) >> 2 per column (VPMULHW on the
// pre-shifted values, OpenCV's own step), then (v*scale - mean) / std with one IEEE instruction per
// step (no FMA). Invariants: len(s0), len(s1) >= len(out); the sum is <= 255, so widening to int32
// and float32 is exact; without k.AVX2 it is vnormScalar.
// Twin: vnormScalar, which reads the same values from the normalisation table; proved by
// TestFastPathEqualsGeneral.
// Why: computing the formula as NumPy rounds it equals the table bit for bit, without a gather.
// AVX2 on AVX-512 machines too: a 512-bit loop measured slower (docs/perf/2026-12-03-engine-notes.md).
func (k *kernelSet) vnormRow(out []float32, s0, s1 []int16, b0, b1 int32, scale, mean, std float32, lut *[256]float32) {
	if !k.AVX2 {
		vnormScalar(out, s0, s1, b0, b1, lut)
		return
	}
	n := len(out)
	s0, s1 = s0[:n], s1[:n]
	i := 0
	if nb := n / 16; nb > 0 { // 16 int16 lanes per multiply, then 8 lanes at a time
		vnormBlocks(unsafe.Pointer(&out[0]), unsafe.Pointer(&s0[0]), unsafe.Pointer(&s1[0]), nb, b0, b1, scale, mean, std)
		i = 16 * nb
	}
	vs, vm, vd := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(mean), archsimd.BroadcastFloat32x8(std)
	w0, w1, two := archsimd.BroadcastInt16x8(int16(b0)), archsimd.BroadcastInt16x8(int16(b1)), archsimd.BroadcastInt16x8(2)
	for ; i+8 <= n; i += 8 {
		v := archsimd.LoadInt16x8Slice(s0[i:]).MulHigh(w0).Add(archsimd.LoadInt16x8Slice(s1[i:]).MulHigh(w1)).Add(two).ShiftAllRight(2)
		v.ExtendToInt32().ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).StoreSlice(out[i:])
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	if i < n {
		vnormScalar(out[i:], s0[i:], s1[i:], b0, b1, lut)
	}
}

// vnormBlocks is vnormRow's AVX2 loop over nb blocks of 16 columns (nb >= 1 to do anything).
// Twin: vnormScalar; proved by TestFastPathEqualsGeneral.
// Why: pointers stepping in a function of its own (see byteBlocks); the loop over slices spent ~10
// instructions per block on bounds and bases.
func vnormBlocks(out, s0, s1 unsafe.Pointer, nb int, b0, b1 int32, scale, mean, std float32) {
	if nb <= 0 {
		return
	}
	vs, vm, vd := archsimd.BroadcastFloat32x8(scale), archsimd.BroadcastFloat32x8(mean), archsimd.BroadcastFloat32x8(std)
	w0, w1, two := archsimd.BroadcastInt16x16(int16(b0)), archsimd.BroadcastInt16x16(int16(b1)), archsimd.BroadcastInt16x16(2)
	for i := 1; ; i++ { // the pointers step only when another block follows (checkptr: see byteBlocks)
		v := archsimd.LoadInt16x16((*[16]int16)(s0)).MulHigh(w0).Add(archsimd.LoadInt16x16((*[16]int16)(s1)).MulHigh(w1)).Add(two).ShiftAllRight(2)
		v.GetLo().ExtendToInt32().ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).Store((*[8]float32)(out))
		v.GetHi().ExtendToInt32().ConvertToFloat32().Mul(vs).Sub(vm).Div(vd).Store((*[8]float32)(unsafe.Add(out, 32)))
		if i == nb {
			break
		}
		out, s0, s1 = unsafe.Add(out, 64), unsafe.Add(s0, 32), unsafe.Add(s1, 32)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// fusedRow computes one output row of a fused plan (fastPlan.fused: a downscale where no source row
// is shared) straight from its two source rows, 16 columns per step on AVX-512 VBMI, keeping the
// horizontal sums in registers; the vertical step is OpenCV's in 32-bit lanes, ((d>>4)*b)>>16, the
// same integers as VPMULHW on the pre-shifted values, then the normalisation and channel map.
// Invariants: returns false, having written nothing, without k.VBMI, without groups (buildGroups) or
// when a window would pass the end of src. Fused plans with duoBlocks tables take duoRows instead
// (kernelSet.Duo); this serves the rest (a channel map that is not a permutation).
// Twin: none needed (the caller runs hresizeRow + vnormRow on false); proved by
// TestFusedDownscaleEqualsGeneral (kernelOverrides.NoDuo).
// Why: skipping the int16 row's store and reload beat hresizeRow + vnormRow by ~20% there.
func (k *kernelSet) fusedRow(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, nt *normTables) bool {
	if !k.VBMI || len(f.groups) == 0 {
		return false
	}
	n := len(f.taps)
	r0, r1 := src[rb0+f.minOff:], src[rb1+f.minOff:]
	if f.winEnd > len(r0) || f.winEnd > len(r1) {
		return false
	}
	o0, o1, o2 := out[0][:n], out[1][:n], out[2][:n]
	w0, w1, two := archsimd.BroadcastInt32x16(b0), archsimd.BroadcastInt32x16(b1), archsimd.BroadcastInt32x16(2)
	vs := archsimd.BroadcastFloat32x16(nt.scale[0])
	m0, m1, m2 := archsimd.BroadcastFloat32x16(nt.mean[0]), archsimd.BroadcastFloat32x16(nt.mean[1]), archsimd.BroadcastFloat32x16(nt.mean[2])
	s0, s1, s2 := archsimd.BroadcastFloat32x16(nt.std[0]), archsimd.BroadcastFloat32x16(nt.std[1]), archsimd.BroadcastFloat32x16(nt.std[2])
	cm := f.cmap
	pick := func(k int, v0, v1, v2 archsimd.Int32x16) archsimd.Int32x16 {
		switch k {
		case 0:
			return v0
		case 1:
			return v1
		}
		return v2
	}
	vert := func(p, q archsimd.Int32x16) archsimd.Int32x16 {
		return p.ShiftAllRight(4).Mul(w0).ShiftAllRight(16).Add(q.ShiftAllRight(4).Mul(w1).ShiftAllRight(16)).Add(two).ShiftAllRight(2)
	}
	for gi := range f.groups {
		g := &f.groups[gi]
		j := 16 * gi
		p0, p1, p2 := g.pairs(r0)
		q0, q1, q2 := g.pairs(r1)
		v0, v1, v2 := vert(p0, q0), vert(p1, q1), vert(p2, q2)
		pick(cm[0], v0, v1, v2).ConvertToFloat32().Mul(vs).Sub(m0).Div(s0).StoreSlice(o0[j:])
		pick(cm[1], v0, v1, v2).ConvertToFloat32().Mul(vs).Sub(m1).Div(s1).StoreSlice(o1[j:])
		pick(cm[2], v0, v1, v2).ConvertToFloat32().Mul(vs).Sub(m2).Div(s2).StoreSlice(o2[j:])
	}
	archsimd.ClearAVXUpperBits()              // before scalar code: see cpufeat_amd64.go
	for j := 16 * len(f.groups); j < n; j++ { // the last columns, fewer than 16
		p0, p1, p2 := pixD(src, rb0, f, j)
		q0, q1, q2 := pixD(src, rb1, f, j)
		v := [3]int32{vlinear(b0, b1, p0, q0), vlinear(b0, b1, p1, q1), vlinear(b0, b1, p2, q2)}
		o0[j], o1[j], o2[j] = nt.lutF32[0][v[cm[0]]], nt.lutF32[1][v[cm[1]]], nt.lutF32[2][v[cm[2]]]
	}
	return true
}

// prefetchSpan issues PREFETCHT0 for every 64-byte line of [p, p+n) (resize_fast_amd64.s: archsimd
// has no prefetch; the hint never faults).
//
//go:noescape
func prefetchSpan(p unsafe.Pointer, n uintptr)

// prefetchDist is how many output rows ahead duoRows prefetches its two source rows.
// Why: the hardware prefetchers lose each new pair of rows; 2 was the best of 1, 2 and 4 on
// BenchmarkImagenet512Cold (docs/perf/2026-12-03-engine-notes.md).
const prefetchDist = 2

// prefetchAhead prefetches source row t (0 or 1) of content row r of image img, or of the next
// image's row r-rows when r is past the last row: the bytes duoH reads from it.
func prefetchAhead(p *Plan, src []uint8, base, img, r, t int) {
	if rows := len(p.rows.Off) / 2; r >= rows {
		if img+1 >= p.N {
			return
		}
		r, base = r-rows, base+p.strideN
		if r >= rows { // a plan with fewer content rows than prefetchDist
			return
		}
	}
	f := p.fast
	prefetchSpan(unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), base+p.rows.Off[2*r+t]+f.minOff), uintptr(f.duoMax))
}

// duoH computes one output row of a fused plan from its two source rows, straight into each source
// channel's plane row out[k]: duoBlocks over the runs of 8-column blocks whose loads stay inside the
// array in both rows, duoScalar for the other blocks and the last n%8 columns (all of them without
// k.AVX2).
// Twin: duoScalar (resize_fast_other.go); proved by TestDuoHEqualsScalar and
// TestFusedDownscaleEqualsGeneral.
// Why: the one kernel of a fused row; its blocks are where 512 -> 224 spends its time.
func (k *kernelSet) duoH(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32) {
	n := len(f.taps)
	if !k.AVX2 {
		duoScalar(out, src, rb0, rb1, f, b0, b1, 0, n)
		return
	}
	o0, o1, o2 := out[0][:n], out[1][:n], out[2][:n]
	r0, r1 := rb0+f.minOff, rb1+f.minOff
	lim := min(len(src)-r0, len(src)-r1) // the nearer array end, relative to both rows
	base := unsafe.Pointer(unsafe.SliceData(src))
	p0, p1 := unsafe.Add(base, r0), unsafe.Add(base, r1)
	q := [3]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(o0)), unsafe.Pointer(unsafe.SliceData(o1)), unsafe.Pointer(unsafe.SliceData(o2))}
	duos := unsafe.Pointer(unsafe.SliceData(f.duos))
	ends := f.duoEnd
	if int(f.duoMax) <= lim { // every block in bounds, as for all rows but the array's last
		duoBlocks(p0, p1, duos, &q, len(ends), b0, b1, &f.duoNorm)
		if done := 8 * len(ends); done < n {
			duoScalar(out, src, rb0, rb1, f, b0, b1, done, n)
		}
		return
	}
	for b := 0; b < len(ends); {
		if int(ends[b]) > lim {
			duoScalar(out, src, rb0, rb1, f, b0, b1, 8*b, 8*b+8)
			b++
			continue
		}
		e := b + 1
		for e < len(ends) && int(ends[e]) <= lim {
			e++
		}
		at := [3]unsafe.Pointer{unsafe.Add(q[0], 32*b), unsafe.Add(q[1], 32*b), unsafe.Add(q[2], 32*b)}
		duoBlocks(p0, p1, unsafe.Add(duos, 4*b*int(unsafe.Sizeof(pairDuo{}))), &at, e-b, b0, b1, &f.duoNorm)
		b = e
	}
	if done := 8 * len(ends); done < n {
		duoScalar(out, src, rb0, rb1, f, b0, b1, done, n)
	}
}

// duoBlocks runs nb 8-column blocks of duoH from rows p0 and p1, pairs from dp, floats to the planes
// at out[k] (source channel k). Per pair one 32-byte load of row 0 (its upper half replaced) and a
// 16-byte insert of row 1 put the two rows in the two lanes; two VPSHUFB and two VPMADDWD give
// OpenCV's horizontal sums of two columns, three channels, both rows (pairDuo). Shifted right by 4 and
// packed to int16 (exact: <= 32640), each row's lane is multiplied by its vertical weight (VPMULHW, as
// vnormRow), the rows' lanes added and rounded (+2, >>2). The packing leaves int32 lanes holding
// (channel 0, channel 1) of columns 0..7 in order, so channel 0 is an AND away and channel 1 a shift,
// and (channel 2 of column j, of column j+4), taken out by a multiply-add with (1, 0) or (0, 1); each
// is normalised with one IEEE instruction per step, which equals the table duoScalar reads bit for
// bit (as in vnormRow).
// Invariants: each pair's pixels lie in 16 bytes (pairDuo; stronger downscales than 512 -> 224 keep
// hresizeAVX2 and vnormRow); every block's loads lie inside the array (duoH, duoRows check).
// Twin: duoScalar; proved by TestDuoHEqualsScalar.
// Why: normalising in the loop, with the AND/shift layout, removes the int16 row's second pass; the
// loop is bound by instruction throughput, not by the divisions.
func duoBlocks(p0, p1, dp unsafe.Pointer, out *[3]unsafe.Pointer, nb int, b0, b1 int32, ns *[3]duoChan) {
	if nb <= 0 {
		return
	}
	wb := archsimd.BroadcastInt16x16(int16(b0)).Select128FromPair(0, 2, archsimd.BroadcastInt16x16(int16(b1)))
	two := archsimd.BroadcastInt16x16(2)
	low := archsimd.BroadcastUint32x8(0xffff)
	sel := archsimd.LoadInt16x16(&duoSel)
	vs := archsimd.BroadcastFloat32x8(ns[0].scale) // one scale for every channel (normTables)
	m0, m1, m2 := archsimd.BroadcastFloat32x8(ns[0].mean), archsimd.BroadcastFloat32x8(ns[1].mean), archsimd.BroadcastFloat32x8(ns[2].mean)
	d0, d1, d2 := archsimd.BroadcastFloat32x8(ns[0].std), archsimd.BroadcastFloat32x8(ns[1].std), archsimd.BroadcastFloat32x8(ns[2].std)
	// one output pointer and the planes' distances from it: fewer instructions per block (the loop
	// is bound by their throughput)
	q0 := out[0]
	e1, e2 := uintptr(out[1])-uintptr(q0), uintptr(out[2])-uintptr(q0)
	for i := 1; ; i++ { // the pointers step only when another block follows (checkptr: see byteBlocks)
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
		z := c0.Or(c2).ShiftAllRight(4).SaturateToInt16ConcatGrouped(c1.Or(c3).ShiftAllRight(4)).MulHigh(wb)
		// Int32x8's shift, not Uint32x8's (the same here: the values are below 2^15): Go 1.26 compiles
		// Uint32x8.ShiftAllRight(16) as a shift by register, its count set with a legacy-SSE MOVQ inside
		// the loop (the stall of cpufeat_amd64.go)
		s := x.Select128FromPair(0, 2, y).Add(x.Select128FromPair(1, 3, y)).Add(two).ShiftAllRight(2).AsUint32x8()
		t := z.Add(z.Select128FromPair(1, 0, z)).Add(two).ShiftAllRight(2).DotProductPairs(sel)
		s.And(low).AsInt32x8().ConvertToFloat32().Mul(vs).Sub(m0).Div(d0).Store((*[8]float32)(q0))
		s.AsInt32x8().ShiftAllRight(16).ConvertToFloat32().Mul(vs).Sub(m1).Div(d1).Store((*[8]float32)(unsafe.Add(q0, e1)))
		t.ConvertToFloat32().Mul(vs).Sub(m2).Div(d2).Store((*[8]float32)(unsafe.Add(q0, e2)))
		if i == nb {
			break
		}
		dp, q0 = unsafe.Add(dp, 4*unsafe.Sizeof(pairDuo{})), unsafe.Add(q0, 32)
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
}

// duoSel: channel 2's int16 values of columns 0..3 are the low halves of the lower lane's int32s,
// those of columns 4..7 the high halves of the upper lane's (both lanes hold the same words); one
// VPMADDWD with these (1, 0) and (0, 1) pairs takes each out (instead of a VPSRLVD and an AND).
var duoSel = [16]int16{1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1}

// duoRows computes the content rows [y, y1) of image img with duoH, straight into each source
// channel's plane rows, or nothing when the plan does not take duoH (not fused, no duoBlocks tables,
// or not kernelSet.Duo: then fastRow runs); it returns how many rows it wrote. Rows whose blocks are
// all in bounds (all but the array's last rows) call duoBlocks from here, the output pointers stepping
// by a row.
// Twin: the declining duoRows of resize_fast_other.go; proved by TestFusedDownscaleEqualsGeneral and
// TestDuoRowsBatchEqualsGeneral.
// Why: a call per row through fastRow and duoH spent ~6% of a 512 -> 224 plan on slices and checks.
func (w *worker) duoRows(p *Plan, b *jobBufs, base, img, y, y1 int) int {
	f := p.fast
	if !f.fused || f.duos == nil || !p.kern.Duo || p.yuv != nil { // YUV: fastRow's converted rows
		return 0
	}
	y1 = min(y1, p.rows.Hi)
	if y1 <= y {
		return 0
	}
	n, ow := len(f.taps), p.OutW
	plane := p.OutH * ow
	o := img*p.OutImageElems() + y*ow
	span := (y1-y-1)*ow + n // the elements the rows write in each plane
	var q [3]unsafe.Pointer
	for k := range q {
		at := o + f.duoNorm[k].plane*plane
		q[k] = unsafe.Pointer(unsafe.SliceData(b.outF32[at : at+span]))
	}
	src := b.srcU8
	sp := unsafe.Pointer(unsafe.SliceData(src))
	duos := unsafe.Pointer(unsafe.SliceData(f.duos))
	nb := len(f.duoEnd)
	whole := 8*nb == n
	for yy := y; yy < y1; yy++ {
		r := yy - p.rows.Lo
		// Software prefetch of the source rows prefetchDist output rows ahead: at a band's first
		// row, all the rows up to there at once; after that one source row before each half of the
		// row's blocks, which spreads a pair's prefetches over the row (issued at once, they wait
		// for miss buffers).
		first := yy == y
		if first {
			for ahead := 1; ahead <= prefetchDist; ahead++ {
				prefetchAhead(p, src, base, img, r+ahead, 0)
				prefetchAhead(p, src, base, img, r+ahead, 1)
			}
		}
		b0, b1 := p.rows.Taps.WI[2*r], p.rows.Taps.WI[2*r+1]
		r0, r1 := base+p.rows.Off[2*r]+f.minOff, base+p.rows.Off[2*r+1]+f.minOff
		if whole && int(f.duoMax) <= min(len(src)-r0, len(src)-r1) {
			h := nb
			if !first {
				h = nb / 2
				prefetchAhead(p, src, base, img, r+prefetchDist, 0)
			}
			p0, p1 := unsafe.Add(sp, r0), unsafe.Add(sp, r1)
			duoBlocks(p0, p1, duos, &q, h, b0, b1, &f.duoNorm)
			if h < nb {
				prefetchAhead(p, src, base, img, r+prefetchDist, 1)
				qh := [3]unsafe.Pointer{unsafe.Add(q[0], 32*h), unsafe.Add(q[1], 32*h), unsafe.Add(q[2], 32*h)}
				duoBlocks(p0, p1, unsafe.Add(duos, 4*h*int(unsafe.Sizeof(pairDuo{}))), &qh, nb-h, b0, b1, &f.duoNorm)
			}
		} else {
			if !first {
				prefetchAhead(p, src, base, img, r+prefetchDist, 0)
				prefetchAhead(p, src, base, img, r+prefetchDist, 1)
			}
			var out [3][]float32
			for k := range out {
				out[k] = unsafe.Slice((*float32)(q[k]), n)
			}
			p.kern.duoH(&out, src, base+p.rows.Off[2*r], base+p.rows.Off[2*r+1], f, b0, b1)
		}
		if yy+1 < y1 { // the next row's planes (never past the last row's: checkptr)
			for k := range q {
				q[k] = unsafe.Add(q[k], 4*ow)
			}
		}
	}
	return y1 - y
}
