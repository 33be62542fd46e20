package engine

// The patch layout (PatchSpec): the emit stage normalises an output row into per-channel plane rows
// (worker.patchRow) as for CHW, then copies each plane row's Size-value chunks to their places in the
// patch rows, Temporal times. The layout's offset of value (c, t, y, x) separates into a part of y, a
// part of x's chunk and a part of (c, t) (patchLayout), so each chunk is one contiguous copy.
// Why: Qwen2-VL's processor ran this rearrangement in PyTorch over the CHW result: a second pass
// over the whole (B, C, H, W) float32 batch, written, read back and rewritten T times larger.
//
// The fast CHW kernels (aaRow, fastRow, duoRows) write planes straight into the output, so patch
// plans do not take them (NewPlan); their rows come through emitU8 / emitF32. The GPU kernels have
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

// patchPlanes returns the worker's planar scratch row for p: OutC planes of OutW values.
func (w *worker) patchPlanes(p *Plan) []float32 {
	n := p.OutC * p.OutW
	if cap(w.patchRow) < n {
		w.patchRow = make([]float32, n)
	}
	return w.patchRow[:n]
}

// scatter copies planar row y of image img (planes: OutC planes of OutW values) to its places in the
// patch-layout output out.
func (l *patchLayout) scatter(out, planes []float32, oc, ow, elems, img, y int) {
	p, t, pp := l.p, l.t, l.pp
	base := img*elems + l.rowOff[y]
	for c := 0; c < oc; c++ {
		pl := planes[c*ow : (c+1)*ow]
		cb := base + c*t*pp
		for bx, co := range l.colOff {
			src := pl[bx*p : bx*p+p]
			d := cb + co
			for k := 0; k < t; k++ {
				copy(out[d+k*pp:d+k*pp+p], src)
			}
		}
	}
}

// emitPatchU8 is emitU8's patch layout: the row's values vals (OutW pixels of OutC channels) looked
// up in the normalisation tables into planes, then scattered.
func (w *worker) emitPatchU8(p *Plan, b *jobBufs, img, y int, vals []uint8) {
	oc, ow, n := p.OutC, p.OutW, p.norm
	planes := w.patchPlanes(p)
	if oc == 3 {
		l0, l1, l2 := &n.lutF32[0], &n.lutF32[1], &n.lutF32[2]
		o0, o1, o2 := planes[:ow], planes[ow:2*ow], planes[2*ow:3*ow]
		v := vals[:3*ow]
		for x := range o0 {
			px := (*[3]uint8)(v[3*x : 3*x+3])
			o0[x], o1[x], o2[x] = l0[px[0]], l1[px[1]], l2[px[2]]
		}
	} else {
		for c := 0; c < oc; c++ {
			lut, o := &n.lutF32[c], planes[c*ow:(c+1)*ow]
			for x := range o {
				o[x] = lut[vals[x*oc+c]]
			}
		}
	}
	p.patch.scatter(b.outF32, planes, oc, ow, p.OutImageElems(), img, y)
}

// emitPatchF32 is emitF32's patch layout: vals (OutW pixels of OutC channels, float32) normalised into
// planes as the CHW path computes them, then scattered.
func (w *worker) emitPatchF32(p *Plan, b *jobBufs, img, y int, vals []float32) {
	oc, ow, n := p.OutC, p.OutW, p.norm
	planes := w.patchPlanes(p)
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
	p.patch.scatter(b.outF32, planes, oc, ow, p.OutImageElems(), img, y)
}
