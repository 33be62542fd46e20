//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// aaPlanarShuf widens the first 8 bytes of each 128-bit lane to int16 (-128 selects zero).
var aaPlanarShuf = func() (s [32]int8) {
	for lane := 0; lane < 2; lane++ {
		for i := 0; i < 8; i++ {
			s[lane*16+2*i], s[lane*16+2*i+1] = int8(i), -128
		}
	}
	return s
}()

// aaPlanarPack moves the low byte of each lane's dwords 0, 1, 2 to the lane's bytes 0, 1, 2, and
// aaPlanarJoin both lanes' first dwords to dwords 0 and 1: the six results of a column in one uint64.
var aaPlanarPack = func() (s [32]int8) {
	for i := range s {
		s[i] = -128
	}
	for lane := 0; lane < 2; lane++ {
		for d := 0; d < 3; d++ {
			s[lane*16+d] = int8(4 * d)
		}
	}
	return s
}()

var aaPlanarJoin = [8]uint32{0, 4, 0, 0, 0, 0, 0, 0}

// aaHPlanarRows is the planar horizontal pass of one or two source rows (h1 nil: one) into planar
// rows, on AVX2 (see resize_aa_planar.go): the six channel rows of two source rows in the six 128-bit
// lanes of three registers, 8 taps per step; exactly the integers of aaHPlanar, which takes CPUs
// without AVX2 and rows whose 16-byte loads could run past the end of the array.
func aaHPlanarRows(h0, h1 []uint8, src []uint8, rb0, rb1 int, a *aaPlan, p *Plan) {
	t := a.pl
	n := len(a.cols)
	one := h1 == nil
	if one {
		rb1 = rb0 // the second row's lanes recompute the first's; their results are dropped
	}
	var r [6]int // rows r0c0 r0c1 r0c2 r1c0 r1c1 r1c2, as offsets into src
	ok := hasAVX2
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
	h0 = h0[:3*n]
	if one {
		h1 = h0 // never written: see the stores below
	}
	h1 = h1[:3*n]
	base := unsafe.Pointer(unsafe.SliceData(src))
	// register k holds rows 2k (low lane) and 2k+1 (high lane)
	p0, p1, p2 := unsafe.Add(base, r[0]), unsafe.Add(base, r[1]), unsafe.Add(base, r[2])
	p3, p4, p5 := unsafe.Add(base, r[3]), unsafe.Add(base, r[4]), unsafe.Add(base, r[5])
	sh := archsimd.LoadInt8x32(&aaPlanarShuf)
	half := archsimd.BroadcastInt32x8(1 << (t.shift - 1))
	zero, top := archsimd.BroadcastInt32x8(0), archsimd.BroadcastInt32x8(255)
	// the shift as a vector (VPSRAVD): the count-register form ShiftAllRight(t.shift) reloaded its count
	// with a legacy-SSE MOVSD every column, a stall that made this kernel 2.5x slower than aaHPlanar
	shift, split := archsimd.BroadcastInt32x8(int32(t.shift)), t.split
	load := func(pa, pb unsafe.Pointer, off uintptr) archsimd.Int16x16 {
		return archsimd.Uint8x32{}.SetLo(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(pa, off)))).
			SetHi(archsimd.LoadUint8x16((*[16]uint8)(unsafe.Add(pb, off)))).PermuteOrZeroGrouped(sh).AsInt16x16()
	}
	pack, join := archsimd.LoadInt8x32(&aaPlanarPack), archsimd.LoadUint32x8(&aaPlanarJoin)
	// byte stores through pointers: h0 and h1 hold 3n bytes (sliced above) and j < n
	d0, d1 := unsafe.Pointer(unsafe.SliceData(h0)), unsafe.Pointer(unsafe.SliceData(h1))
	for j := range a.cols {
		off := uintptr(a.cols[j].off)
		cks := t.chunks[t.first[j]:t.first[j+1]]
		var s0, s1, s2, l0, l1, l2 archsimd.Int32x8
		for q := range cks {
			ck := &cks[q]
			e0, e1, e2 := load(p0, p1, off), load(p2, p3, off), load(p4, p5, off)
			wh := archsimd.LoadInt16x16(&ck.hi)
			s0, s1, s2 = s0.Add(e0.DotProductPairs(wh)), s1.Add(e1.DotProductPairs(wh)), s2.Add(e2.DotProductPairs(wh))
			if split {
				wl := archsimd.LoadInt16x16(&ck.lo)
				l0, l1, l2 = l0.Add(e0.DotProductPairs(wl)), l1.Add(e1.DotProductPairs(wl)), l2.Add(e2.DotProductPairs(wl))
			}
			off += 8
		}
		if split {
			s0 = s0.ShiftAllLeft(aaPlanarSplit).Add(l0)
			s1 = s1.ShiftAllLeft(aaPlanarSplit).Add(l1)
			s2 = s2.ShiftAllLeft(aaPlanarSplit).Add(l2)
		}
		// lanes after the three horizontal adds: [r0c0 r0c2 r1c1 r1c1 | r0c1 r1c0 r1c2 r1c2]; packed
		// to one uint64 in registers (storing the vector and loading its lanes back stalled on the
		// store: ~25% of this kernel's samples in perf, 512² eval transform)
		v := s0.AddPairsGrouped(s1).AddPairsGrouped(s2.AddPairsGrouped(s2)).Add(half).ShiftRight(shift).Max(zero).Min(top)
		u := v.AsUint8x32().PermuteOrZeroGrouped(pack).AsInt32x8().Permute(join).GetLo().AsUint64x2().GetElem(0)
		*(*uint8)(unsafe.Add(d0, j)) = uint8(u)
		*(*uint8)(unsafe.Add(d0, 2*n+j)) = uint8(u >> 8)
		*(*uint8)(unsafe.Add(d0, n+j)) = uint8(u >> 32)
		if !one {
			*(*uint8)(unsafe.Add(d1, n+j)) = uint8(u >> 16)
			*(*uint8)(unsafe.Add(d1, j)) = uint8(u >> 40)
			*(*uint8)(unsafe.Add(d1, 2*n+j)) = uint8(u >> 48)
		}
	}
}
