package engine

import (
	"math"
	"unsafe"
)

// The resize rows of the CPU backend: the worker (cpu.go) calls these per output row.

// resizeRowU8 computes content row r (uint8, p.inC channels per pixel) into w.rowU8.
func (w *worker) resizeRowU8(p *Plan, src []uint8, base, r int) {
	rows, cols := &p.rows, &p.cols
	c, sc := p.inC, p.strideC
	dst := w.rowU8
	switch p.kernel {
	case kGather: // nearest, or no resize: a gather
		src, rb := w.srcRow(p, src, base, r)
		switch {
		case cols.contiguous && sc == 1: // whole pixels in order: one copy
			copy(dst, src[rb+cols.Off[0]:rb+cols.Off[0]+len(dst)])
		case c == 3 && sc == 1: // pixels of 3 bytes (offsets proven in bounds by Plan.checkBounds)
			row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb)
			for j, off := range cols.Off {
				*(*[3]uint8)(dst[3*j : 3*j+3]) = *(*[3]uint8)(unsafe.Add(row, off))
			}
		default:
			for j, off := range cols.Off {
				o := rb + off
				for ch := 0; ch < c; ch++ {
					dst[j*c+ch] = src[o+ch*sc]
				}
			}
		}
	case kPillow:
		if p.vfirst {
			w.vfirstRowU8(p, src, base, r)
			return
		}
		if p.aaU8 != nil {
			w.aaRowU8(p, src, base, r)
			return
		}
		hs := w.pillowRows(p, src, base, r, func(d, row []uint8, rb int) { hresizeAAU8(d, row, rb, cols, c, sc) })
		k := rows.Taps.K
		vresizeAAU8(dst, hs, rows.Taps.WI[r*k:r*k+len(hs)], w.acc)
	case kFloat:
		w.resizeRowFloatU8(p, src, base, r)
	default: // bilinear, OpenCV arithmetic
		var h [2][]int32
		for t := 0; t < 2; t++ {
			ri := r*2 + t
			s, ok := w.slot(rows.Src[ri])
			if !ok {
				row, rb := w.srcRow(p, src, base, ri)
				hresizeLinearU8(w.hI32[s], row, rb, cols, c, sc)
			}
			h[t] = w.hI32[s]
		}
		vresizeLinearU8(dst, h[0], h[1], rows.Taps.WI[2*r], rows.Taps.WI[2*r+1])
	}
}

// srcRow is where source row table entry ri is read: the source at its row offset, or for a YUV
// plan that row converted to RGB in the worker's buffer (worker.yuvAt), for a premultiplied plan
// that row premultiplied there (worker.premulAt).
func (w *worker) srcRow(p *Plan, src []uint8, base, ri int) ([]uint8, int) {
	if p.yuv != nil {
		return w.yuvBuf, w.yuvAt(p, src, base, ri)
	}
	if p.pm != nil {
		return w.yuvBuf, w.premulAt(p, src, base, ri)
	}
	return src, base + p.rows.Off[ri]
}

// vfirstRowU8 is resizeRowU8's Pillow row for a plan whose vertical pass runs first (Plan.vfirst):
// the taps' source rows are summed and rounded to uint8 (vresizeAAU8, Pillow's
// ImagingResampleVertical_8bpc; with SIMD vresizeAAU8Paired for all but the last columns) over the
// elements the horizontal pass reads, into w.vfU8, and hresizeAAU8 then reads that row (on
// interleaved RGB aaHRows, the fast pass's SIMD kernel, with the plan's vfH tables). Interleaved
// pixels (channel stride 1) take one span of bytes; any other channel stride one span per channel,
// laid out span apart. A span runs from base0 = min(vfLo, 0) to past the row's origin (0), so that
// every offset lands in it at a non-negative index. Measured (1 thread, ImageNet normalize fused):
// a 2000x800 photo -> 224x224 bicubic 8.7 ms all scalar, 2.2 ms with the SIMD vertical pass, 1.7 ms
// with aaHRows too.
func (w *worker) vfirstRowU8(p *Plan, src []uint8, base, r int) {
	c, sc := p.inC, p.strideC
	base0 := min(p.vfLo, 0)
	// the span reaches the row's origin too: hresizeAAU8 makes a pointer to it (checkptr)
	span, planes, ss := max(p.vfHi+c-1, 1)-base0, 1, 1 // interleaved: all channels in one span
	if sc != 1 {
		span, planes = max(p.vfHi, 1)-base0, c
		ss = span
	}
	n := planes * span
	if cap(w.vfU8) < n+32 {
		// 32 spare bytes: aaHRows's 16-byte loads reach past the last tap (into zero weights)
		w.vfU8 = make([]uint8, n+32)
	}
	if cap(w.vfAcc) < n {
		w.vfAcc = make([]int32, n)
	}
	vb := w.vfU8[:n]
	w.vfirstV(p, src, base, r, vb, span, planes)
	if a := p.vfH; a != nil { // interleaved RGB: the fast pass into planar rows, then interleaved
		nc := len(a.cols)
		if cap(w.vfPl) < 3*nc {
			w.vfPl = make([]uint8, 3*nc)
		}
		pl := w.vfPl[:3*nc]
		p.kern.aaHRows(pl, nil, w.vfU8[:cap(w.vfU8)], -base0, 0, a, p)
		interleave3(w.rowU8[:3*nc], pl)
		return
	}
	hresizeAAU8(w.rowU8, vb, -base0, &p.cols, c, ss)
}

// vfirstRowsU8 is vfirstRowU8 for content rows r and r+1 of a plan whose horizontal pass runs
// aaHRows (Plan.vfH: interleaved RGB): both rows' vertical passes, then one aaHRows call for the
// pair, leaving row r in w.rowU8 and row r+1 in w.rowU8b. The same arithmetic per row; why: aaHRows
// costs one row as much as two, and a training batch's vertical-first items (about a fifth: the
// box's height shrinks more than twice its width) spent ~4% of a 1-thread call in single-row
// passes (docs/perf/2026-12-07-train-percore.md).
func (w *worker) vfirstRowsU8(p *Plan, src []uint8, base, r int) {
	a := p.vfH
	base0 := min(p.vfLo, 0)
	span := max(p.vfHi+p.inC-1, 1) - base0
	st := span + 32 // each row's 32 spare bytes, as vfirstRowU8's
	if cap(w.vfU8) < 2*st {
		w.vfU8 = make([]uint8, 2*st)
	}
	if cap(w.vfAcc) < span {
		w.vfAcc = make([]int32, span)
	}
	buf := w.vfU8[:cap(w.vfU8)]
	w.vfirstV(p, src, base, r, buf[:span], span, 1)
	w.vfirstV(p, src, base, r+1, buf[st:st+span], span, 1)
	nc := len(a.cols)
	if cap(w.vfPl) < 6*nc {
		w.vfPl = make([]uint8, 6*nc)
	}
	pl := w.vfPl[:6*nc]
	p.kern.aaHRows(pl[:3*nc], pl[3*nc:], buf, -base0, st-base0, a, p)
	interleave3(w.rowU8[:3*nc], pl[:3*nc])
	interleave3(w.rowU8b[:3*nc], pl[3*nc:])
}

// interleave3 writes the planar row pl (three planes of len(d)/3) into d as interleaved pixels.
func interleave3(d, pl []uint8) {
	nc := len(d) / 3
	for j := 0; j < nc; j++ {
		d[3*j], d[3*j+1], d[3*j+2] = pl[j], pl[nc+j], pl[2*nc+j]
	}
}

// vfirstV is the vertical pass of vfirstRowU8: content row r's window of source rows resampled into
// vb, planes spans of span bytes (the elements [vfLo, vfHi) of each, from min(vfLo, 0) on).
func (w *worker) vfirstV(p *Plan, src []uint8, base, r int, vb []uint8, span, planes int) {
	rows := &p.rows
	c, sc := p.inC, p.strideC
	base0 := min(p.vfLo, 0)
	k := rows.Taps.K
	kk := int(rows.Taps.Cnt[r])
	wi := rows.Taps.WI[r*k : r*k+kk]
	from, to := p.vfLo-base0, p.vfHi-base0 // the elements of a span the horizontal pass reads
	if sc == 1 {
		to += c - 1
	}
	for ch := 0; ch < planes; ch++ {
		hs := w.taps[:0]
		for t := 0; t < kk; t++ {
			row, rb := w.srcRow(p, src, base, r*k+t)
			o := rb + p.vfLo + ch*sc
			hs = append(hs, row[o:o+to-from])
		}
		w.taps = hs
		d := vb[ch*span+from : ch*span+to]
		x := p.kern.vresizeAAU8Paired(d, hs, p.vfW[r], p.vfV[r])
		for t := range hs {
			hs[t] = hs[t][x:]
		}
		vresizeAAU8(d[x:], hs, wi, w.vfAcc)
	}
}

// hresizeLinearU8 is OpenCV's HResizeLinear: d = s0*a0 + s1*a1 with 11-bit coefficients, kept unrounded.
// Reads go through unsafe pointers: every offset in the tables was proven in bounds by Plan.checkBounds,
// and dropping the per-byte bounds checks (with the taps packed into one struct per column) took
// BenchmarkImagenet512, the whole 512->224 ImageNet task on 1 thread, from 1010us to 557us.
func hresizeLinearU8(d []int32, src []uint8, rb int, cols *axis, c, sc int) {
	row := unsafe.Pointer(unsafe.SliceData(src))
	row = unsafe.Add(row, rb)
	if c == 3 && sc == 1 {
		hx := cols.lin
		d = d[:len(hx)*3]
		for j, t := range hx {
			p0, p1 := unsafe.Add(row, t.o0), unsafe.Add(row, t.o1)
			dd := (*[3]int32)(d[3*j : 3*j+3])
			dd[0] = int32(*(*uint8)(p0))*t.a0 + int32(*(*uint8)(p1))*t.a1
			dd[1] = int32(*(*uint8)(unsafe.Add(p0, 1)))*t.a0 + int32(*(*uint8)(unsafe.Add(p1, 1)))*t.a1
			dd[2] = int32(*(*uint8)(unsafe.Add(p0, 2)))*t.a0 + int32(*(*uint8)(unsafe.Add(p1, 2)))*t.a1
		}
		return
	}
	for j, t := range cols.lin {
		for ch := 0; ch < c; ch++ {
			co := ch * sc
			d[j*c+ch] = int32(*(*uint8)(unsafe.Add(row, t.o0+co)))*t.a0 + int32(*(*uint8)(unsafe.Add(row, t.o1+co)))*t.a1
		}
	}
}

// vresizeLinearU8 is OpenCV's vectorised VResizeLinear for 8-bit output (VResizeLinearVec_32s8u):
// each row is pre-shifted by 4, multiplied keeping the high 16 bits, summed, then rounded by 2 bits.
// This, not the textbook (a*b0 + b*b1 + 2^21) >> 22, is what cv2.resize computes on x86 and ARM.
// With b0+b1 = 2048 and s <= 255*2048 the result is provably within [0, 255], so no clamp.
func vresizeLinearU8(dst []uint8, s0, s1 []int32, b0, b1 int32) {
	s0, s1 = s0[:len(dst)], s1[:len(dst)]
	for i := range dst {
		dst[i] = uint8(vlinear(b0, b1, s0[i]>>4, s1[i]>>4))
	}
}

// vlinear is OpenCV's vertical step on two horizontal values already shifted right by 4: each term
// keeps the high 16 bits of its product, and the sum is rounded by 2 bits.
func vlinear(b0, b1, s0, s1 int32) int32 { return ((b0*s0)>>16 + (b1*s1)>>16 + 2) >> 2 }

func clampU8(v int32) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// hresizeAAU8 is Pillow's ImagingResampleHorizontal_8bpc: 22-bit weights, rounded to uint8 per pass.
// Only each column's live taps are summed, and 3-channel pixels are read through pointers (offsets
// proven in bounds by Plan.checkBounds): BenchmarkAntialias512 went from 7.5 ms to 2.9 ms.
func hresizeAAU8(d []uint8, src []uint8, rb int, cols *axis, c, sc int) {
	k := cols.Taps.K
	off, wi, cnt := cols.Off, cols.Taps.WI, cols.Taps.Cnt
	const half = int32(1 << (pilPrecisionBits - 1))
	if c == 3 && sc == 1 {
		row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb)
		for j := range cnt {
			s0, s1, s2 := half, half, half
			for t := j * k; t < j*k+int(cnt[j]); t++ {
				p, w := (*[3]uint8)(unsafe.Add(row, off[t])), wi[t]
				s0 += int32(p[0]) * w
				s1 += int32(p[1]) * w
				s2 += int32(p[2]) * w
			}
			dd := (*[3]uint8)(d[3*j : 3*j+3])
			dd[0], dd[1], dd[2] = clampU8(s0>>pilPrecisionBits), clampU8(s1>>pilPrecisionBits), clampU8(s2>>pilPrecisionBits)
		}
		return
	}
	for j := range cnt {
		for ch := 0; ch < c; ch++ {
			ss := half
			for t := j * k; t < j*k+int(cnt[j]); t++ {
				ss += int32(src[rb+off[t]+ch*sc]) * wi[t]
			}
			d[j*c+ch] = clampU8(ss >> pilPrecisionBits)
		}
	}
}

// vresizeAAU8 is Pillow's ImagingResampleVertical_8bpc, accumulated row by row into acc.
func vresizeAAU8(dst []uint8, rows [][]uint8, w []int32, acc []int32) {
	acc = acc[:len(dst)]
	for i := range acc {
		acc[i] = 1 << (pilPrecisionBits - 1)
	}
	for t, r := range rows {
		wt := w[t]
		r = r[:len(acc)]
		for i, v := range r {
			acc[i] += int32(v) * wt
		}
	}
	for i, v := range acc {
		dst[i] = clampU8(v >> pilPrecisionBits)
	}
}

// resizeRowF32 computes content row r of a float32 image into w.rowF32: the taps' weighted sums in
// float32, horizontal first, in tap order (PyTorch's order for bilinear).
func (w *worker) resizeRowF32(p *Plan, src []float32, base, r int) {
	rows, cols := &p.rows, &p.cols
	c, sc := p.inC, p.strideC
	dst := w.rowF32
	if p.kernel == kGather {
		rb := base + rows.Off[r]
		for j, off := range cols.Off {
			o := rb + off
			for ch := 0; ch < c; ch++ {
				dst[j*c+ch] = src[o+ch*sc]
			}
		}
		return
	}
	k := rows.Taps.K
	if p.kernel == kLinear && p.Spec.Resize.Kind == "bilinear" {
		// Bilinear as a lerp, a + w1*(b - a): the same formula as PyTorch's w0*a + w1*b within float32
		// rounding, but a constant image stays exactly constant (w0 + w1 need not be 1 in float32).
		var h [2][]float32
		for t := 0; t < 2; t++ {
			ri := r*2 + t
			s, ok := w.slot(rows.Src[ri])
			if !ok {
				hlerpF32(w.hF32[s], src, base+rows.Off[ri], cols, c, sc)
			}
			h[t] = w.hF32[s][:len(dst)]
		}
		wt := rows.Taps.WF[2*r+1]
		for i := range dst {
			dst[i] = h[0][i] + float32(wt*float32(h[1][i]-h[0][i])) // explicit rounding: no FMA
		}
		return
	}
	for i := range dst {
		dst[i] = 0
	}
	for t := 0; t < k; t++ {
		ri := r*k + t
		s, ok := w.slot(rows.Src[ri])
		if !ok {
			hresizeF32(w.hF32[s], src, base+rows.Off[ri], cols, c, sc)
		}
		wt := rows.Taps.WF[ri]
		h := w.hF32[s][:len(dst)]
		for i := range dst {
			dst[i] = dst[i] + float32(wt*h[i]) // explicit rounding: never fused into an FMA
		}
	}
	if end, inv := p.areaEnd(); end == endScale { // resizeAreaFast_: the block sum times 1/area in float32
		for i := range dst {
			dst[i] *= inv
		}
	}
}

// hlerpF32 is the horizontal bilinear pass of float32 images in lerp form (see resizeRowF32).
func hlerpF32(d []float32, src []float32, rb int, cols *axis, c, sc int) {
	off, wf := cols.Off, cols.Taps.WF
	for j := 0; j < len(off)/2; j++ {
		o0, o1, wt := rb+off[2*j], rb+off[2*j+1], wf[2*j+1]
		for ch := 0; ch < c; ch++ {
			a, b := src[o0+ch*sc], src[o1+ch*sc]
			d[j*c+ch] = a + float32(wt*float32(b-a))
		}
	}
}

// hresizeF32 is the horizontal pass of the tap kernels on float32 images: each column's taps summed in
// order in float32 (padded taps have weight 0).
func hresizeF32(d []float32, src []float32, rb int, cols *axis, c, sc int) {
	k := cols.Taps.K
	off, wf := cols.Off, cols.Taps.WF
	for j := 0; j < len(off)/k; j++ {
		for ch := 0; ch < c; ch++ {
			var s float32
			for t := 0; t < k; t++ {
				s = s + float32(wf[j*k+t]*src[rb+off[j*k+t]+ch*sc])
			}
			d[j*c+ch] = s
		}
	}
}

// resizeRowFloatU8 is the kFloat kernel on uint8 images (cv2's INTER_CUBIC and INTER_AREA): each
// horizontal tap sum and then the vertical sum in float32, in tap order, the first product standing
// alone, then one rounding to uint8 (areaFinalU8). cv2 adds in the same order.
func (w *worker) resizeRowFloatU8(p *Plan, src []uint8, base, r int) {
	rows, cols := &p.rows, &p.cols
	c, sc := p.inC, p.strideC
	k := rows.Taps.K
	kk := k
	if rows.Taps.Cnt != nil {
		kk = int(rows.Taps.Cnt[r])
	}
	acc := w.rowF32
	for t := 0; t < kk; t++ {
		ri := r*k + t
		s, ok := w.slot(rows.Src[ri])
		if !ok {
			row, rb := w.srcRow(p, src, base, ri)
			hresizeFloatU8(w.hF32[s], row, rb, cols, c, sc)
		}
		wt := rows.Taps.WF[ri]
		h := w.hF32[s][:len(acc)]
		if t == 0 {
			for i, v := range h {
				acc[i] = wt * v
			}
			continue
		}
		for i, v := range h {
			acc[i] = acc[i] + float32(wt*v) // explicit rounding: never fused into an FMA
		}
	}
	finalU8(w.rowU8, acc, p)
}

// hresizeFloatU8 sums each column's live taps of a uint8 row in float32, in order.
func hresizeFloatU8(d []float32, src []uint8, rb int, cols *axis, c, sc int) {
	k := cols.Taps.K
	off, wf, cnt := cols.Off, cols.Taps.WF, cols.Taps.Cnt
	n := len(off) / k
	if c == 3 && sc == 1 {
		row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb)
		for j := 0; j < n; j++ {
			kk := k
			if cnt != nil {
				kk = int(cnt[j])
			}
			t := j * k
			p, wt := (*[3]uint8)(unsafe.Add(row, off[t])), wf[t]
			s0, s1, s2 := wt*float32(p[0]), wt*float32(p[1]), wt*float32(p[2])
			for t++; t < j*k+kk; t++ {
				p, wt = (*[3]uint8)(unsafe.Add(row, off[t])), wf[t]
				s0 = s0 + float32(wt*float32(p[0]))
				s1 = s1 + float32(wt*float32(p[1]))
				s2 = s2 + float32(wt*float32(p[2]))
			}
			dd := (*[3]float32)(d[3*j : 3*j+3])
			dd[0], dd[1], dd[2] = s0, s1, s2
		}
		return
	}
	for j := 0; j < n; j++ {
		kk := k
		if cnt != nil {
			kk = int(cnt[j])
		}
		for ch := 0; ch < c; ch++ {
			var s float32
			for t := j * k; t < j*k+kk; t++ {
				v := float32(wf[t] * float32(src[rb+off[t]+ch*sc]))
				if t == j*k {
					s = v
				} else {
					s = s + v
				}
			}
			d[j*c+ch] = s
		}
	}
}

// finalU8 rounds the float sums of the kFloat kernel to uint8 as cv2 does: saturate_cast (round half to
// even, then clamp), except resizeAreaFast_'s integer block sums: (s + 2) >> 2 for 2x2 blocks (its SIMD
// rule), cvRound(s * (1/area)) in float32 otherwise.
func finalU8(dst []uint8, acc []float32, p *Plan) {
	acc = acc[:len(dst)]
	switch end, inv := p.areaEnd(); end {
	case endQuad:
		for i, v := range acc {
			dst[i] = uint8((int32(v) + 2) >> 2)
		}
	case endScale:
		for i, v := range acc {
			dst[i] = roundU8(v * inv)
		}
	default:
		for i, v := range acc {
			dst[i] = roundU8(v)
		}
	}
}

// roundU8 is OpenCV's saturate_cast<uchar>(float): round half to even (cvRound), then clamp.
func roundU8(v float32) uint8 {
	if !(v > -0.5) { // also NaN, which cannot occur: weights and pixels are finite
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(math.RoundToEven(float64(v)))
}
