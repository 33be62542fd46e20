//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// The AVX-512 VBMI sparse converter: yuvConvPairs' pixel pairs gathered and scattered in
// registers, 8 pairs (16 pixels) a step, from per-plan tables (yuvPlan.vblocks, vwins). A step loads
// the 128 bytes of the Y row (and of a semi-planar chroma row) that hold its pairs and picks their
// bytes with one VPERMI2B, converts them with yuvConv's arithmetic (yuvVecs, yuvRGB16), and writes
// each pair's 6 bytes to its place in the converted row with VPERMB and masked byte stores over
// the 64-byte windows the pairs' outputs span. No byte outside the pairs' 6 is written.
// Twin: yuvConvPairs' chunked path and yuvConvScalar (TestYUVConvPairsEqualsScalar).
// Why: gathering and scattering through memory cost twice the conversion itself.

// yuvWinLim is the furthest a step's last pair may lie from its first (in pairs): its samples must
// fit the 128-byte window (2 bytes a pair of Y or semi-planar chroma, 4 of a packed pixel pair, 1
// of planar U or V in a 64-byte window).
func yuvWinLim(kind yuvKind) int {
	if kind == yuvPacked {
		return 31
	}
	return 63
}

// buildBlocks sets yp.vblocks and yp.vwins for a W-pixel image from yp.sparse: steps of up to 8
// consecutive sparse pairs within yuvWinLim, their windows clamped into the row (so every load
// stays inside its plane row), and per step the output windows that hold its pairs' bytes. Images
// narrower than 128 pixels get no tables (the chunked path converts them).
func (yp *yuvPlan) buildBlocks(w int) {
	yp.vblocks, yp.vwins = nil, nil
	if w < 128 || len(yp.sparse) == 0 {
		return
	}
	lim, ps := yuvWinLim(yp.kind), yp.sparse
	pxBytes := 2 // window bytes per pair: Y (semi/planar) or Y0 U Y1 V (packed: 4)
	if yp.kind == yuvPacked {
		pxBytes = 4
	}
	rowBytes := w / 2 * pxBytes
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && j-i < 8 && int(ps[j]-ps[i]) <= lim {
			j++
		}
		blk := ps[i:j]
		q := func(l int) int { return int(blk[min(l, len(blk)-1)]) } // lanes past the block repeat its last pair
		b := yuvBlock{w0: int32(len(yp.vwins))}
		yb := min(pxBytes*q(0), rowBytes-128)
		b.yb = int32(yb)
		for l := 0; l < 8; l++ {
			for e := 0; e < pxBytes; e++ {
				b.gi[pxBytes*l+e] = uint8(pxBytes*q(l) + e - yb)
			}
		}
		if yp.kind == yuvPlanar {
			cb := min(q(0), w/2-64)
			b.cb = int32(cb)
			for l := 0; l < 8; l++ {
				b.gc[l] = uint8(q(l) - cb)
			}
		}
		// output windows: pixel px = 2l+e of the step lies in yuvRGB16's words at word(px), R and
		// G in rg (bytes 0-31 of [rg | bb]), B in bb (32-63)
		word := func(px int) int {
			lane, p := px/8, px%8
			if p%2 == 0 {
				return lane*8 + p/2
			}
			return lane*8 + 4 + p/2
		}
		first, last := 6*q(0), 6*int(blk[len(blk)-1])+6
		for off := first; off < last; off += 64 {
			win := yuvWin{off: int32(off)}
			for l := range blk {
				for e := 0; e < 2; e++ {
					wd := word(2*l + e)
					for ch, src := range [3]int{2 * wd, 2*wd + 1, 32 + 2*wd} {
						at := 6*int(blk[l]) + 3*e + ch - off
						if at >= 0 && at < 64 {
							win.idx[at] = uint8(src)
							win.mask |= 1 << at
						}
					}
				}
			}
			if win.mask != 0 {
				yp.vwins = append(yp.vwins, win)
			}
		}
		b.w1 = int32(len(yp.vwins))
		yp.vblocks = append(yp.vblocks, b)
		i = j
	}
}

// yuvConvPairsVBMI is yuvConvPairs on the plan's tables (k.VBMI and yp.vblocks); false when it
// cannot run (the caller then takes the chunked path). The slices are yuvConvPairs'; ps must be
// yp.sparse, which the tables describe.
func (k *kernelSet) yuvConvPairsVBMI(d0, d1, ys0, ys1, us, vs []uint8, ps []int32, yp *yuvPlan) bool {
	if !k.VBMI || len(yp.vblocks) == 0 || len(ps) != len(yp.sparse) || d1 != nil && yp.kind == yuvPacked {
		return false
	}
	kind := yp.kind
	last := int(ps[len(ps)-1])
	// bounds: every window's bytes lie in the plane rows (buildBlocks clamps them), and every
	// masked store's bytes in d: check each row's whole extent once
	_ = d0[6*last+5]
	if d1 != nil {
		_ = d1[6*last+5]
	}
	yq0, yq1 := unsafe.Pointer(unsafe.SliceData(ys0)), unsafe.Pointer(unsafe.SliceData(ys1))
	up, vp := unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	yEnd := int(yp.vblocks[len(yp.vblocks)-1].yb) + 128
	switch kind {
	case yuvSemi:
		_ = ys0[yEnd-1]
		if d1 != nil {
			_ = ys1[yEnd-1]
		}
		lo := us
		if yp.vOff < yp.uOff {
			lo = vs
		}
		_ = lo[yEnd-1]
	case yuvPlanar:
		_, _, _ = ys0[yEnd-1], us[int(yp.vblocks[len(yp.vblocks)-1].cb)+63], vs[int(yp.vblocks[len(yp.vblocks)-1].cb)+63]
		if d1 != nil {
			_ = ys1[yEnd-1]
		}
	default: // the window starts pk[0] bytes before ys0 (at the row's first pixel pair)
		_ = ys0[yEnd-1-yp.pk[0]]
	}
	dp0, dp1 := unsafe.Pointer(unsafe.SliceData(d0)), unsafe.Pointer(unsafe.SliceData(d1))
	cy, ymin, cr, cb, cgu, cgv, kr, kg, kb := yuvVecs(&yp.coef)
	lo16 := archsimd.BroadcastInt32x8(0xffff)
	top := archsimd.BroadcastUint16x16(255)
	swap := kind == yuvSemi && yp.vOff < yp.uOff
	cp := up
	if swap {
		cp = vp
	}
	pk := yp.pk
	sy0, su, sy1, sv := uint64(8*pk[0]), uint64(8*pk[1]), uint64(8*pk[2]), uint64(8*pk[3])
	pp := unsafe.Add(yq0, -pk[0])
	win := func(p unsafe.Pointer, at int32, idx *[64]uint8) archsimd.Uint8x64 {
		a := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(p, at)))
		b := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(p, at+64)))
		return a.ConcatPermute(b, archsimd.LoadUint8x64(idx))
	}
	for bi := range yp.vblocks {
		bl := &yp.vblocks[bi]
		var u, v, ye, yo archsimd.Int32x8
		switch kind {
		case yuvSemi:
			cv := win(cp, bl.yb, &bl.gi).GetLo().GetLo().ExtendToUint16().AsInt32x8()
			u, v = cv.And(lo16), cv.ShiftAllRight(16)
			if swap {
				u, v = v, u
			}
		case yuvPlanar:
			gc := archsimd.LoadUint8x64(&bl.gc)
			u = archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(up, bl.cb))).Permute(gc).GetLo().GetLo().ExtendLo8ToUint32().AsInt32x8()
			v = archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(vp, bl.cb))).Permute(gc).GetLo().GetLo().ExtendLo8ToUint32().AsInt32x8()
		default:
			pv := win(pp, bl.yb, &bl.gi).GetLo().AsUint32x8()
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
			yv := win(yq0, bl.yb, &bl.gi).GetLo().GetLo().ExtendToUint16().AsInt32x8()
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
		}
		yuvScatter(dp0, yp.vwins[bl.w0:bl.w1], ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		if d1 != nil {
			yv := win(yq1, bl.yb, &bl.gi).GetLo().GetLo().ExtendToUint16().AsInt32x8()
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
			yuvScatter(dp1, yp.vwins[bl.w0:bl.w1], ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	return true
}

// yuvScatter finishes one row's step of yuvConvPairsVBMI: the 16 pixels' RGB (yuvRGB16's words,
// [rg | bb] in one 64-byte vector) permuted into each output window and stored under its mask.
func yuvScatter(d unsafe.Pointer, wins []yuvWin, a, b, ruv, guv, buv archsimd.Int32x8, top archsimd.Uint16x16) {
	rg, bb := yuvRGB16(a, b, ruv, guv, buv, top)
	all := archsimd.Uint8x64{}.SetLo(rg).SetHi(bb)
	for i := range wins {
		wn := &wins[i]
		all.Permute(archsimd.LoadUint8x64(&wn.idx)).StoreMasked((*[64]uint8)(unsafe.Add(d, wn.off)), archsimd.Mask8x64FromBits(wn.mask))
	}
}
