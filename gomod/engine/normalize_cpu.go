package engine

// emitU8 writes output row y of image img from w.rowU8: padding outside the content, the channel map,
// then the conversion (copy, or the normalisation table) into the output layout (the patch layout:
// emitPatchU8).
func (w *worker) emitU8(p *Plan, b *jobBufs, img, y int, content bool) {
	vals := w.gatherU8(p, content)
	oc := p.OutC
	elems := p.OutImageElems()
	rowLen := p.OutW * oc
	if p.norm == nil {
		o := img*elems + y*rowLen
		copy(b.outU8[o:o+rowLen], vals)
		return
	}
	n := p.norm
	if p.patch != nil {
		w.emitPatchU8(p, b, img, y, vals)
		return
	}
	if p.CHW {
		plane := p.OutH * p.OutW
		o := img*elems + y*p.OutW
		if oc == 3 && !n.f16 { // one pass over the interleaved row, writing all three planes
			p.kern.normU8CHW3(b.outF32[o:o+p.OutW], b.outF32[o+plane:o+plane+p.OutW], b.outF32[o+2*plane:o+2*plane+p.OutW], vals, n)
			return
		}
		if oc == 1 && !n.f16 { // one plane: the channel-last kernel's layout
			p.kern.normU8HWC(b.outF32[o:o+p.OutW], vals, n, 1)
			return
		}
		for c := 0; c < oc; c++ {
			oc0 := o + c*plane
			if n.f16 {
				lut, out := &n.lutF16[c], b.outF16[oc0:oc0+p.OutW]
				for x := range out {
					out[x] = lut[vals[x*oc+c]]
				}
			} else {
				lut, out := &n.lutF32[c], b.outF32[oc0:oc0+p.OutW]
				for x := range out {
					out[x] = lut[vals[x*oc+c]]
				}
			}
		}
		return
	}
	o := img*elems + y*rowLen
	if n.f16 {
		out := b.outF16[o : o+rowLen]
		for i, v := range vals {
			out[i] = n.lutF16[i%oc][v]
		}
	} else {
		p.kern.normU8HWC(b.outF32[o:o+rowLen], vals, n, oc)
	}
}

// emitF32 is emitU8 for float32 sources: normalisation is computed, not looked up.
func (w *worker) emitF32(p *Plan, b *jobBufs, img, y int, content bool) {
	oc, ic := p.OutC, p.inC
	vals := w.valF32
	lo, hi := p.cols.Lo, p.cols.Hi
	if !content {
		lo, hi = 0, 0
	}
	if lo == 0 && hi == p.OutW && p.identityCMap {
		// nothing to pad or reorder (as gatherU8): the resized row is the output row's values.
		// Why: the gather loop cost ~58 instructions a pixel (qemu count, docs/perf/2026-12-03-neon.md)
		vals = w.rowF32[:len(vals)]
	} else {
		for i := 0; i < lo*oc; i++ {
			vals[i] = p.padF32[i%oc]
		}
		row := w.rowF32
		for x := lo; x < hi; x++ {
			for c := 0; c < oc; c++ {
				vals[x*oc+c] = row[(x-lo)*ic+p.cmap[c]]
			}
		}
		for i := hi * oc; i < len(vals); i++ {
			vals[i] = p.padF32[i%oc]
		}
	}
	elems := p.OutImageElems()
	rowLen := p.OutW * oc
	n := p.norm
	if n == nil {
		o := img*elems + y*rowLen
		copy(b.outF32[o:o+rowLen], vals)
		return
	}
	if p.patch != nil {
		w.emitPatchF32(p, b, img, y, vals)
		return
	}
	put := func(o int, v float32) {
		if n.f16 {
			b.outF16[o] = Float32ToFloat16(v)
		} else {
			b.outF32[o] = v
		}
	}
	if p.CHW {
		plane := p.OutH * p.OutW
		if oc == 3 && !n.f16 { // one pass over the interleaved row, writing all three planes
			o := img*elems + y*p.OutW
			p.kern.normCHW3(b.outF32[o:o+p.OutW], b.outF32[o+plane:o+plane+p.OutW], b.outF32[o+2*plane:o+2*plane+p.OutW], vals, n)
			return
		}
		for c := 0; c < oc; c++ {
			o := img*elems + c*plane + y*p.OutW
			for x := 0; x < p.OutW; x++ {
				put(o+x, n.apply(c, vals[x*oc+c]))
			}
		}
		return
	}
	o := img*elems + y*rowLen
	if oc == 3 && !n.f16 {
		p.kern.normHWC3(b.outF32[o:o+rowLen], vals, n)
		return
	}
	for i, v := range vals {
		put(o+i, n.apply(i%oc, v))
	}
}

// normCHW3Scalar normalises pixels [from, len(o0)) of an interleaved three-channel float32 row vals
// into three plane rows: o_c[x] = normTables.apply(c, vals[3x+c]), each step rounded to float32 (the
// explicit conversions: no fused multiply-add), the channels' constants held in locals.
// Twin of normCHW3NEON (normalize_arm64.go); the kernel of every other build (normalize_other.go).
func normCHW3Scalar(o0, o1, o2, vals []float32, n *normTables, from int) {
	m := len(o0)
	o1, o2, vals = o1[:m], o2[:m], vals[:3*m]
	s0, s1, s2 := n.scale[0], n.scale[1], n.scale[2]
	m0, m1, m2 := n.mean[0], n.mean[1], n.mean[2]
	d0, d1, d2 := n.std[0], n.std[1], n.std[2]
	for x := from; x < m; x++ {
		px := (*[3]float32)(vals[3*x : 3*x+3])
		o0[x] = float32(float32(px[0]*s0)-m0) / d0
		o1[x] = float32(float32(px[1]*s1)-m1) / d1
		o2[x] = float32(float32(px[2]*s2)-m2) / d2
	}
}

// normHWC3Scalar normalises values [from, len(out)) of an interleaved three-channel float32 row:
// out[i] = normTables.apply(i%3, vals[i]), as normCHW3Scalar rounds it. len(out) and from are
// multiples of 3 (whole pixels).
// Twin of normHWC3NEON (normalize_arm64.go); the kernel of every other build (normalize_other.go).
func normHWC3Scalar(out, vals []float32, n *normTables, from int) {
	vals = vals[:len(out)]
	s0, s1, s2 := n.scale[0], n.scale[1], n.scale[2]
	m0, m1, m2 := n.mean[0], n.mean[1], n.mean[2]
	d0, d1, d2 := n.std[0], n.std[1], n.std[2]
	for i := from; i+3 <= len(out); i += 3 {
		o, v := (*[3]float32)(out[i:i+3]), (*[3]float32)(vals[i:i+3])
		o[0] = float32(float32(v[0]*s0)-m0) / d0
		o[1] = float32(float32(v[1]*s1)-m1) / d1
		o[2] = float32(float32(v[2]*s2)-m2) / d2
	}
}

// gatherU8 lays out one output row of pixel values: padding outside the content, channels mapped.
func (w *worker) gatherU8(p *Plan, content bool) []uint8 {
	oc, ic := p.OutC, p.inC
	lo, hi := p.cols.Lo, p.cols.Hi
	if !content {
		lo, hi = 0, 0
	}
	row := w.rowU8
	if lo == 0 && hi == p.OutW && p.identityCMap {
		return row // nothing to pad or reorder: convert straight from the resized row
	}
	vals := w.valU8
	for i := 0; i < lo*oc; i++ {
		vals[i] = p.padU8[i%oc]
	}
	switch {
	case oc == 3 && ic == 3 && p.cmap[0] == 2 && p.cmap[1] == 1 && p.cmap[2] == 0:
		for x := lo; x < hi; x++ {
			s := row[(x-lo)*3 : (x-lo)*3+3 : (x-lo)*3+3]
			d := vals[x*3 : x*3+3 : x*3+3]
			d[0], d[1], d[2] = s[2], s[1], s[0]
		}
	default:
		for x := lo; x < hi; x++ {
			for c := 0; c < oc; c++ {
				vals[x*oc+c] = row[(x-lo)*ic+p.cmap[c]]
			}
		}
	}
	for i := hi * oc; i < len(vals); i++ {
		vals[i] = p.padU8[i%oc]
	}
	return vals
}
