//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"
	"unsafe"
)

// The AVX-512 VBMI sparse converter: yuvConvPairs' pixel pairs gathered and scattered in
// registers, from per-plan tables (yuvPlan.vblocks, vwins). A block is up to 8 pairs within one
// 128-byte window of the Y row (and of a semi-planar chroma row); a step converts two consecutive
// blocks (A, the even one, in int32 lanes 0-7; B in lanes 8-15). Per block it loads the window and
// picks the pairs' bytes with one VPERMI2B; the step converts all 32 pixels with yuvConv's
// arithmetic in 16 int32 lanes (yuvFold's constants; the same integers); and it writes each pair's
// 6 bytes to its place in the converted row with VPERMI2B from [R|G<<8 words | B words] and a
// masked byte store per 64-byte output window the blocks' pairs span. No byte outside the pairs'
// 6 is written.
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
		half := len(yp.vblocks) % 2 // 0: a step's block A (lanes 0-7), 1: its block B (lanes 8-15)
		if yp.kind == yuvPlanar {
			// lane l's U (and V) byte: A's at byte l from its window (bytes 0-63 of the pair of
			// windows), B's at byte 8+l from its own (64-127); a step ORs the two blocks' indices
			cb := min(q(0), w/2-64)
			b.cb = int32(cb)
			for l := 0; l < 8; l++ {
				b.gc[8*half+l] = uint8(64*half + q(l) - cb)
			}
		}
		// output windows: pixel px = 2l+e of the block lies in the step's words at word(px) (per
		// 128-bit lane the order [0 2 4 6 1 3 5 7]; B's lanes after A's), R and G in rg (bytes 0-63
		// of [rg | bb]), B in bb (64-127)
		word := func(px int) int {
			lane, p := 2*half+px/8, px%8
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
					for ch, src := range [3]int{2 * wd, 2*wd + 1, 64 + 2*wd} {
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

// yuvConvPairsVector is yuvConvPairs on the plan's tables (k.VBMI and yp.vblocks); false when it
// cannot run (the caller then takes the chunked path). The slices are yuvConvPairs'; ps must be
// yp.sparse, which the tables describe.
func (k *kernelSet) yuvConvPairsVector(d0, d1, ys0, ys1, us, vs []uint8, ps []int32, yp *yuvPlan) bool {
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
	f := yuvFold(&yp.coef)
	bc := archsimd.BroadcastInt32x16
	cy, ymin, cr, cb, cgu, cgv, kr, kg, kb := bc(f[0]), bc(f[1]), bc(f[2]), bc(f[3]), bc(f[4]), bc(f[5]), bc(f[6]), bc(f[7]), bc(f[8])
	lo16 := archsimd.BroadcastInt32x16(0xffff)
	top := archsimd.BroadcastUint16x32(255)
	swap := kind == yuvSemi && yp.vOff < yp.uOff
	cp := up
	if swap {
		cp = vp
	}
	pk := yp.pk
	sy0, su, sy1, sv := uint64(8*pk[0]), uint64(8*pk[1]), uint64(8*pk[2]), uint64(8*pk[3])
	pp := unsafe.Add(yq0, -pk[0])
	// win is block bl's 128-byte window of row p permuted by its gather index (its samples first)
	win := func(p unsafe.Pointer, bl *yuvBlock) archsimd.Uint8x64 {
		a := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(p, bl.yb)))
		b := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(p, bl.yb+64)))
		return a.ConcatPermute(b, archsimd.LoadUint8x64(&bl.gi))
	}
	// pair16 is the 16 bytes of blocks a and b's 8 pairs (Y or semi-planar chroma) of row p as
	// int32 lanes of two bytes, a's in lanes 0-7
	pair16 := func(p unsafe.Pointer, a, b *yuvBlock) archsimd.Int32x16 {
		return archsimd.Uint8x32{}.SetLo(win(p, a).GetLo().GetLo()).SetHi(win(p, b).GetLo().GetLo()).ExtendToUint16().AsInt32x16()
	}
	bs := yp.vblocks
	for i := 0; i < len(bs); i += 2 {
		a, b := &bs[i], &bs[i] // a lone last block converts as both halves; only a's windows are written
		wEnd := a.w1
		if i+1 < len(bs) {
			b = &bs[i+1]
			wEnd = b.w1
		}
		var u, v, ye, yo archsimd.Int32x16
		switch kind {
		case yuvSemi:
			cv := pair16(cp, a, b)
			u, v = cv.And(lo16), cv.ShiftAllRight(16)
			if swap {
				u, v = v, u
			}
		case yuvPlanar:
			gc := archsimd.LoadUint8x64(&a.gc).Or(archsimd.LoadUint8x64(&b.gc))
			if a == b {
				gc = archsimd.LoadUint8x64(&a.gc)
			}
			ua, ub := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(up, a.cb))), archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(up, b.cb)))
			va, vb := archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(vp, a.cb))), archsimd.LoadUint8x64((*[64]uint8)(unsafe.Add(vp, b.cb)))
			u = ua.ConcatPermute(ub, gc).GetLo().GetLo().ExtendToUint32().AsInt32x16()
			v = va.ConcatPermute(vb, gc).GetLo().GetLo().ExtendToUint32().AsInt32x16()
		default:
			pv := archsimd.Uint8x64{}.SetLo(win(pp, a).GetLo()).SetHi(win(pp, b).GetLo()).AsUint32x16()
			lo8 := archsimd.BroadcastUint32x16(0xff)
			u = pv.ShiftAllRight(su).And(lo8).AsInt32x16()
			v = pv.ShiftAllRight(sv).And(lo8).AsInt32x16()
			ye = pv.ShiftAllRight(sy0).And(lo8).AsInt32x16()
			yo = pv.ShiftAllRight(sy1).And(lo8).AsInt32x16()
		}
		ruv := kr.Add(cr.Mul(v))
		guv := kg.Add(cgu.Mul(u)).Add(cgv.Mul(v))
		buv := kb.Add(cb.Mul(u))
		if kind != yuvPacked {
			yv := pair16(yq0, a, b)
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
		}
		yuvScatter(dp0, yp.vwins[a.w0:wEnd], ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		if d1 != nil {
			yv := pair16(yq1, a, b)
			ye, yo = yv.And(lo16), yv.ShiftAllRight(16)
			yuvScatter(dp1, yp.vwins[a.w0:wEnd], ye.Max(ymin).Mul(cy), yo.Max(ymin).Mul(cy), ruv, guv, buv, top)
		}
	}
	archsimd.ClearAVXUpperBits() // before scalar code: see cpufeat_amd64.go
	return true
}

// yuvScatter finishes one row's step of yuvConvPairsVector: the even (a) and odd (b) pixels' Y terms
// plus the chroma terms, shifted and saturated as yuvRGB16 does (VPACKUSDW and a min with top) to
// R|G<<8 words and B words of the step's 32 pixels, then permuted into each output window and
// stored under its mask.
func yuvScatter(d unsafe.Pointer, wins []yuvWin, a, b, ruv, guv, buv archsimd.Int32x16, top archsimd.Uint16x32) {
	r := a.Add(ruv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(ruv).ShiftAllRight(yuvShift)).Min(top)
	g := a.Add(guv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(guv).ShiftAllRight(yuvShift)).Min(top)
	bb := a.Add(buv).ShiftAllRight(yuvShift).SaturateToUint16ConcatGrouped(b.Add(buv).ShiftAllRight(yuvShift)).Min(top).AsUint8x64()
	rg := r.Or(g.ShiftAllLeft(8)).AsUint8x64()
	for i := range wins {
		wn := &wins[i]
		rg.ConcatPermute(bb, archsimd.LoadUint8x64(&wn.idx)).StoreMasked((*[64]uint8)(unsafe.Add(d, wn.off)), archsimd.Mask8x64FromBits(wn.mask))
	}
}
