package engine

// The patch layout (PatchSpec): the emit stage normalises each output row into per-channel plane rows
// in a worker's buffer of one band of Size rows (worker.patchRow), and once the band is complete (or
// the worker's task ends) copies each plane row's Size-value chunks to their places in the patch rows,
// Temporal times, patch by patch. The layout's offset of value (c, t, y, x) separates into a part of y, a
// part of x's chunk and a part of (c, t) (patchLayout), so each chunk is one contiguous copy.
// Why: Qwen2-VL's processor ran this rearrangement in PyTorch over the CHW result: a second pass
// over the whole (B, C, H, W) float32 batch, written, read back and rewritten T times larger.
//
// The fast CHW kernels fastRow and duoRows write planes straight into the output, so patch plans do
// not take them (NewPlan); aaRow writes into the band buffer (planeRows3), the other rows come
// through emitU8 / emitF32. The GPU kernels have
// no patch layout: patch plans run on the CPU engine (GPUSupported).

// patchLayout is a PatchSpec's offsets for one output size. With y = (A*m + B)*p + I and
// x = (C*m + D)*p + J (p = Size, m = Merge, gw = W/p, dim = channels*T*p*p), value (c, t, y, x) of an
// image lies at rowOff[y] + colOff[x/p] + J + c*T*p*p + t*p*p, where
// rowOff[y] = (A*gw*m + B*m)*dim + I*p and colOff[x/p] = (C*m*m + D)*dim.
type patchLayout struct {
	p, t, pp int   // Size, Temporal, Size*Size
	rowOff   []int // per output row
	colOff   []int // per chunk of p columns
}

func newPatchLayout(ps *PatchSpec, c, h, w int) *patchLayout {
	p, m, t := ps.Size, ps.Merge, ps.Temporal
	gw := w / p
	dim := c * t * p * p
	l := &patchLayout{p: p, t: t, pp: p * p, rowOff: make([]int, h), colOff: make([]int, gw)}
	for y := range l.rowOff {
		by, i := y/p, y%p
		l.rowOff[y] = (by/m*gw*m+by%m*m)*dim + i*p
	}
	for bx := range l.colOff {
		l.colOff[bx] = (bx/m*m*m + bx%m) * dim
	}
	return l
}

// patchSlot returns the planar slot of output row y in the worker's band buffer (OutC planes of OutW
// values, slot y % Size of Size) and records the row as buffered: the rows a worker buffers are
// consecutive rows of one band of Size rows, of one image (worker.run flushes at a task's end).
func (w *worker) patchSlot(p *Plan, y int) []float32 {
	l, n := p.patch, p.OutC*p.OutW
	if cap(w.patchRow) < l.p*n {
		w.patchRow = make([]float32, l.p*n)
	}
	w.patchRow = w.patchRow[:l.p*n]
	if w.patchN == 0 {
		w.patchY0 = y
	}
	w.patchN++
	i := y % l.p
	return w.patchRow[i*n : (i+1)*n]
}

// patchRowDone flushes the band buffer when row y ends its band.
func (w *worker) patchRowDone(p *Plan, b *jobBufs, img, y int) {
	if y%p.patch.p == p.patch.p-1 {
		w.patchFlush(p, b, img)
	}
}

// patchFlush copies the buffered rows (w.patchN rows from w.patchY0, within one band) of image img to
// their places in the patch-layout output: for each patch of the band, for each channel and temporal
// copy, the rows' Size-value chunks, so the output is written in order within each run of Merge
// patches (the band's patches of one block row).
// Why: writing each row's chunks as it came (564 scattered 56-byte chunks a row, each cache line
// revisited Size rows later) made the patch plan ~2.5x slower than the CHW plan at 1080p -> 728 x 1316.
func (w *worker) patchFlush(p *Plan, b *jobBufs, img int) {
	if w.patchN == 0 {
		return
	}
	l, oc, ow := p.patch, p.OutC, p.OutW
	ps, t, pp := l.p, l.t, l.pp
	i0, i1 := w.patchY0%ps, w.patchY0%ps+w.patchN
	base := img*p.OutImageElems() + l.rowOff[w.patchY0] - i0*ps // the band's offset (I = 0)
	out, band := b.outF32, w.patchRow
	for bx, co := range l.colOff {
		x0 := bx * ps
		for c := 0; c < oc; c++ {
			d := base + co + c*t*pp
			for i := i0; i < i1; i++ {
				s := (i*oc+c)*ow + x0
				copy(out[d+i*ps:d+i*ps+ps], band[s:s+ps])
			}
			rows := out[d+i0*ps : d+i1*ps] // the temporal copies: the rows just written, as one block
			for k := 1; k < t; k++ {
				copy(out[d+k*pp+i0*ps:d+k*pp+i1*ps], rows)
			}
		}
	}
	w.patchN = 0
}

// emitPatchU8 is emitU8's patch layout: the row's values vals (OutW pixels of OutC channels) looked
// up in the normalisation tables into the row's planar slot of the band buffer (patchSlot).
func (w *worker) emitPatchU8(p *Plan, b *jobBufs, img, y int, vals []uint8) {
	oc, ow, n := p.OutC, p.OutW, p.norm
	planes := w.patchSlot(p, y)
	if oc == 3 {
		p.kern.normU8CHW3(planes[:ow], planes[ow:2*ow], planes[2*ow:3*ow], vals, n)
	} else {
		for c := 0; c < oc; c++ {
			lut, o := &n.lutF32[c], planes[c*ow:(c+1)*ow]
			for x := range o {
				o[x] = lut[vals[x*oc+c]]
			}
		}
	}
	w.patchRowDone(p, b, img, y)
}

// emitPatchF32 is emitF32's patch layout: vals (OutW pixels of OutC channels, float32) normalised into
// the row's planar slot as the CHW path computes them.
func (w *worker) emitPatchF32(p *Plan, b *jobBufs, img, y int, vals []float32) {
	oc, ow, n := p.OutC, p.OutW, p.norm
	planes := w.patchSlot(p, y)
	if oc == 3 {
		p.kern.normCHW3(planes[:ow], planes[ow:2*ow], planes[2*ow:3*ow], vals, n)
	} else {
		for c := 0; c < oc; c++ {
			o := planes[c*ow : (c+1)*ow]
			for x := range o {
				o[x] = n.apply(c, vals[x*oc+c])
			}
		}
	}
	w.patchRowDone(p, b, img, y)
}

// planeRows3 returns the three float32 plane rows that output row y of image img of a three-channel
// CHW plan is computed into: the CHW output's, or for the patch layout the row's slot of the band
// buffer (patchSlot; the caller then calls patchRowDone).
func (w *worker) planeRows3(p *Plan, b *jobBufs, img, y int) [3][]float32 {
	n := p.OutW
	if p.patch != nil {
		s := w.patchSlot(p, y)
		return [3][]float32{s[:n], s[n : 2*n], s[2*n : 3*n]}
	}
	plane := p.OutH * n
	o := img*p.OutImageElems() + y*n
	return [3][]float32{b.outF32[o : o+n], b.outF32[o+plane : o+plane+n], b.outF32[o+2*plane : o+2*plane+n]}
}
