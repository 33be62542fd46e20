package engine

import "slices"

// Premultiplied alpha (ResizeSpec.Premultiply): Pillow's Image.resize of an "RGBA" image with any
// filter but NEAREST converts it to "RGBa" (each colour premultiplied by alpha), resizes the four
// channels, and converts back. A premultiplied plan reads its 4-channel uint8 source through the
// same converted-row buffer a YUV plan uses (worker.yuvBuf, yuvKeys; yuv.go): the worker
// premultiplies each source row the plan reads, only at the columns its taps read, into a slot of
// that buffer, and the Pillow row kernels (resizeRowU8's kPillow case, vfirstRowU8) read it as they
// read a source. Its column table addresses that buffer (interleaved, 4 bytes a pixel: NewPlan
// builds it with strides w = 4, c = 1), while its row table keeps the source's row offsets, which
// the converter reads. After the resize, unpremulRow converts the content row back before the
// channel map, padding and normalisation (emitU8). Both steps are Pillow's integer arithmetic
// (libImaging/Convert.c), so the result equals Image.fromarray(rgba).resize(...) bit for bit.
// The GPU kernels have no such step: premultiplied plans run on the CPU engine (GPUSupported).

// premulPlan is a premultiplied plan's reading of its source: the real pixel and channel strides
// (elements), the source columns converted, and the layout of the worker's buffer.
type premulPlan struct {
	sw, sc int      // the source's pixel and channel strides
	runs   [][2]int // source columns converted, [x0, x1) ascending
	// The buffer: ring slots of stride bytes, a slot's pixel 0 lead bytes into it; a row is kept in
	// slot idx % ring, idx its logical source row (axis.Src). A Pillow row reads at most K rows at
	// once (vfirstRowU8's window of consecutive rows), so a ring of K+1 never evicts one still held.
	ring, stride, lead int
}

// premulGap: columns converted in runs merge across gaps narrower than this (as yuvRunGap).
const premulGap = 16

// premultiplied reports whether a spec's resize runs premultiplied: asked for, and the size
// changes (Pillow returns an unchanged size as a copy, without the round trip through "RGBa").
func premultiplied(s *Spec) bool {
	return s.Resize.Premultiply && (s.Resize.H != s.Pre.H || s.Resize.W != s.Pre.W)
}

// newPremulPlan builds the converter's tables; sw and sc are the source's real strides.
func newPremulPlan(p *Plan, sw, sc int) *premulPlan {
	pm := &premulPlan{sw: sw, sc: sc}
	cols := make([]int, 0, len(p.cols.Off))
	for _, o := range p.cols.Off {
		cols = append(cols, o/4)
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	for _, x := range cols {
		if n := len(pm.runs); n > 0 && x <= pm.runs[n-1][1]+premulGap {
			pm.runs[n-1][1] = x + 1
		} else {
			pm.runs = append(pm.runs, [2]int{x, x + 1})
		}
	}
	pm.ring = p.rows.Taps.K + 1
	pm.lead = 64
	pm.stride = (4*p.Spec.In.W + 2*pm.lead + 63) &^ 63
	return pm
}

// bufLen is the bytes of a worker's buffer: ring slots, and a slot's worth of slack past the last
// for the row kernels' loads past a row's end.
func (pm *premulPlan) bufLen() int { return (pm.ring + 1) * pm.stride }

// checkPremulBounds is checkBounds for a premultiplied plan: the column table holds buffer offsets
// of image columns (4 bytes a pixel), and every element the converter reads, at the real strides,
// lies in the source array for every image of the batch.
func (p *Plan) checkPremulBounds() error {
	pm, in := p.pm, &p.Spec.In
	for _, c := range p.cols.Off {
		if c < 0 || c%4 != 0 || c/4 >= in.W {
			return errf(CodeInternal, "", "plan tables address columns outside the image")
		}
	}
	rlo, rhi := slices.Min(p.rows.Off), slices.Max(p.rows.Off)
	xlo, xhi := pm.runs[0][0], pm.runs[len(pm.runs)-1][1]-1
	clo, chi := min(xlo*pm.sw, xhi*pm.sw), max(xlo*pm.sw, xhi*pm.sw)
	chLo, chHi := min(0, 3*pm.sc), max(0, 3*pm.sc)
	for _, img := range []int{0, p.N - 1} {
		base := -p.minOff + img*p.strideN
		if base+rlo+clo+chLo < 0 || base+rhi+chi+chHi >= p.spanElems {
			return errf(CodeInternal, "", "plan tables address memory outside the source array")
		}
	}
	return nil
}

// premulAt returns where source row table entry ri lies premultiplied in w.yuvBuf: the offset of
// its pixel 0, indexed from there as the column table indexes a row (4 bytes a pixel; only the
// plan's runs of columns hold converted values, elsewhere stale bytes no tap weighs). A row is
// converted once per worker and image while its slot keeps it.
func (w *worker) premulAt(p *Plan, src []uint8, base, ri int) int {
	pm := p.pm
	idx := int(p.rows.Src[ri])
	s := idx % pm.ring
	at := pm.lead + s*pm.stride
	if w.yuvKeys[s] == int32(idx) {
		return at
	}
	w.yuvKeys[s] = int32(idx)
	rb := base + p.rows.Off[ri]
	d := w.yuvBuf[at : at+4*p.Spec.In.W]
	for _, run := range pm.runs {
		premulRun(d, src, rb, run[0], run[1], pm.sw, pm.sc)
	}
	return at
}

// muldiv255 is Pillow's MULDIV255(c, a): c*a/255 rounded, in integers.
func muldiv255(c, a uint32) uint8 {
	t := c*a + 128
	return uint8(((t >> 8) + t) >> 8)
}

// premulRun premultiplies source pixels [x0, x1) of the row at rb (pixel x's channel ch at
// rb + x*sw + ch*sc) into d (4 bytes a pixel): Pillow's rgbA2rgba, MULDIV255 of each colour by
// alpha (alpha 255 keeps a colour, 0 makes it 0), alpha copied.
func premulRun(d, src []uint8, rb, x0, x1, sw, sc int) {
	if sw == 4 && sc == 1 {
		s := src[rb+4*x0 : rb+4*x1]
		dd := d[4*x0 : 4*x1]
		for i := 0; i+3 < len(s) && i+3 < len(dd); i += 4 {
			px, o := (*[4]uint8)(s[i:i+4]), (*[4]uint8)(dd[i:i+4])
			a := uint32(px[3])
			o[0], o[1], o[2], o[3] = muldiv255(uint32(px[0]), a), muldiv255(uint32(px[1]), a), muldiv255(uint32(px[2]), a), px[3]
		}
		return
	}
	for x := x0; x < x1; x++ {
		o := rb + x*sw
		a := src[o+3*sc]
		dd := (*[4]uint8)(d[4*x : 4*x+4])
		dd[0], dd[1], dd[2], dd[3] = muldiv255(uint32(src[o]), uint32(a)), muldiv255(uint32(src[o+sc]), uint32(a)),
			muldiv255(uint32(src[o+2*sc]), uint32(a)), a
	}
}

// unpremulRow converts a resized row of premultiplied pixels (4 bytes each) back: Pillow's
// rgba2rgbA, each colour times 255 divided by alpha in integers and clipped to 255, colours kept
// where alpha is 0 or 255.
func unpremulRow(row []uint8) {
	for i := 0; i+3 < len(row); i += 4 {
		px := (*[4]uint8)(row[i : i+4])
		a := uint32(px[3])
		if a == 0 || a == 255 {
			continue
		}
		px[0] = uint8(min(255*uint32(px[0])/a, 255))
		px[1] = uint8(min(255*uint32(px[1])/a, 255))
		px[2] = uint8(min(255*uint32(px[2])/a, 255))
	}
}
