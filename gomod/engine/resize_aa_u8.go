package engine

// The antialias path for uint8 rows (Plan.aaU8): Pillow's and PyTorch's uint8 resize (kPillow: both
// weight tables, antialiased or PyTorch's plain 2- / 4-tap kernel) where the output is not the fused
// CHW float32 of the fast antialias path (aaRow): a uint8 result (goprep.resize, antialias="torch" or
// "pil"), a padded or tiled canvas (from_hf's LLaVA-NeXT / Idefics3 canvases), an HWC or float16
// normalisation. The row it computes is resizeRowU8's (the content row, interleaved, input channel
// order), which emitU8 then pads, reorders and normalises as before; it equals the general kernels
// (hresizeAAU8 then vresizeAAU8) bit for bit: TestAAU8EqualsGeneral.
// RGB rows take the fast path's horizontal kernels into planar cached rows (aaWindow: interleaved
// sources aaHRows4W and its assembly column loops, aaHNEON on arm64; planar (C, H, W) sources
// aaHPlanarRows), interleaved into the content row after the vertical pass; gray rows take aaHGray
// (AVX2, 32-bit products); other sources keep hresizeAAU8. Every layout takes the paired vertical
// loop (vresizeAAU8Paired, 16 columns and 2 taps per step) where the build has it.
// Why: the general kernels are scalar: 1080p -> 384 x 384 bicubic with PyTorch's numerics ran 10x
// slower than torchvision's channels-last kernel (docs/perf/2026-12-06-aa-torch.md).

// newAAU8 builds the uint8 antialias tables of a kPillow plan the fast path (Plan.aa) and the
// vertical-first rows (Plan.vfirst) do not take: the vertical weight pairs of every content row
// (aaVTables); where the width is not resized, the identity columns' offset (identityCols: no
// horizontal pass); else, for RGB and gray sources whose columns read ascending pixels, the horizontal
// pass's column tables (newAAColumns; interleaved RGB newAAWide and newAAZ, planar RGB and gray
// aaPlanarTab; aaPlan.u8h). Nil for other plans and for premultiplied ones (their rows are read
// from the worker's premultiplied buffer: srcRow).
func newAAU8(p *Plan) *aaPlan {
	if p.aa != nil || p.vfirst || p.kernel != kPillow || p.Spec.In.DType != U8 || p.pm != nil ||
		len(p.rows.Taps.Cnt) == 0 || len(p.cols.Taps.Cnt) == 0 {
		return nil
	}
	a := &aaPlan{}
	if off, ok := identityCols(p); ok {
		a.hid, a.hoff = true, off
	} else if p.inC == 3 || p.inC == 1 {
		if h := newAAColumns(p); h != nil {
			a = h
			a.u8h = true
			switch {
			case a.planar || p.inC == 1:
				a.pl = newAAPlanarTab(a, p)
			default:
				newAAWide(a, p)
				if p.kern.AAHZ {
					newAAZ(a)
				}
			}
		}
	}
	a.vs = splitOf(p.rows.Taps.WI)
	a.vw, a.vh = aaVTables(&p.rows.Taps)
	return a
}

// identityCols reports whether every content column of p is the identity on an interleaved source
// (one live tap of weight 1, the others 0, reading pixel off+j*inC for column j, channels adjacent),
// and off: then the horizontal pass would copy the row's bytes [off, off+contentW), which the
// vertical pass can read in place. Not for YUV sources (their rows are converted into a ring the
// window need not fit in).
// Why: PyTorch skips the pass where the width is unchanged; Idefics3's upscale to its encoder canvas
// (819 x 1456 -> 1092 x 1456) spent 4x torchvision's time in 1-tap columns.
func identityCols(p *Plan) (int, bool) {
	ct := &p.cols.Taps
	if p.yuv != nil || (p.strideC != 1 && p.inC != 1) || len(ct.Cnt) == 0 {
		return 0, false
	}
	k, off := ct.K, 0
	for j := range ct.Cnt {
		one := -1
		for t := 0; t < int(ct.Cnt[j]); t++ {
			switch ct.WI[j*k+t] {
			case 0:
			case 1 << pilPrecisionBits:
				if one >= 0 {
					return 0, false
				}
				one = t
			default:
				return 0, false
			}
		}
		if one < 0 {
			return 0, false
		}
		o := p.cols.Off[j*k+one]
		if j == 0 {
			off = o
		}
		if o != off+j*p.inC {
			return 0, false
		}
	}
	return off, true
}

// aaRowU8 computes content row r (uint8, p.inC channels per pixel, interleaved) into w.rowU8, as
// resizeRowU8's kPillow case does, on the tables of p.aaU8.
func (w *worker) aaRowU8(p *Plan, src []uint8, base, r int) {
	a := p.aaU8
	rows := &p.rows
	k := rows.Taps.K
	dst := w.rowU8
	if a.hid { // the width is not resized: the vertical pass reads the source rows in place
		kk := int(rows.Taps.Cnt[r])
		hs := w.taps[:0]
		for t := 0; t < kk; t++ {
			rb := base + rows.Off[r*k+t] + a.hoff
			hs = append(hs, src[rb:rb+len(dst)])
		}
		w.taps = hs
		w.aaVU8(p, dst, hs, r)
		return
	}
	if a.u8h && p.inC == 3 {
		hs := w.aaWindow(p, a, src, base, r)
		n := len(a.cols)
		if cap(w.vfPl) < 3*n { // a plan with aaU8 is never vertical-first: vfPl is free
			w.vfPl = make([]uint8, 3*n)
		}
		pl := w.vfPl[:3*n]
		w.aaVU8(p, pl, hs, r)
		aaInterleave3(dst[:3*n], pl, n)
		return
	}
	var hs [][]uint8
	if a.u8h { // gray
		hs = w.pillowRows(p, src, base, r, func(d, row []uint8, rb int) { p.kern.aaHGray(d, row, rb, a, p) })
	} else {
		hs = w.pillowRows(p, src, base, r, func(d, row []uint8, rb int) { hresizeAAU8(d, row, rb, &p.cols, p.inC, p.strideC) })
	}
	w.aaVU8(p, dst, hs, r)
}

// pillowRows returns content row r's horizontal rows in tap order (in w.taps), computing each one the
// row cache lacks with hrow (the source row read at rb, into the cache row d): the kPillow row loop
// of resizeRowU8 and aaRowU8. Rows past the filter's support have weight 0 and are skipped (Cnt).
func (w *worker) pillowRows(p *Plan, src []uint8, base, r int, hrow func(d, row []uint8, rb int)) [][]uint8 {
	rows := &p.rows
	k := rows.Taps.K
	hs := w.taps[:0]
	for t := 0; t < int(rows.Taps.Cnt[r]); t++ {
		ri := r*k + t
		s, ok := w.slot(rows.Src[ri])
		if !ok {
			row, rb := w.srcRow(p, src, base, ri)
			hrow(w.hU8[s], row, rb)
		}
		hs = append(hs, w.hU8[s])
	}
	w.taps = hs
	return hs
}

// aaVU8 is the vertical pass of content row r over the horizontal rows hs into d (vresizeAAU8's
// bytes): vresizeAAU8Paired on the columns it takes, vresizeAAU8 on the rest.
func (w *worker) aaVU8(p *Plan, d []uint8, hs [][]uint8, r int) {
	a := p.aaU8
	k := p.rows.Taps.K
	wi := p.rows.Taps.WI[r*k : r*k+len(hs)]
	x := p.kern.vresizeAAU8Paired(d, hs, a.vw[r], a.vh[r])
	if x == len(d) {
		return
	}
	if cap(w.aaTail) < len(hs) {
		w.aaTail = make([][]uint8, len(hs))
	}
	rest := w.aaTail[:len(hs)]
	for t, h := range hs {
		rest[t] = h[x:]
	}
	vresizeAAU8(d[x:], rest, wi, w.acc)
}

// aaInterleave3 writes the planar row pl (channel c of column j at c*n+j) as interleaved pixels
// into d (len 3n).
func aaInterleave3(d, pl []uint8, n int) {
	p0, p1, p2 := pl[:n], pl[n:2*n], pl[2*n:3*n]
	d = d[:3*n]
	for j := range p0 {
		px := (*[3]uint8)(d[3*j : 3*j+3])
		px[0], px[1], px[2] = p0[j], p1[j], p2[j]
	}
}

// aaHGrayScalar is the pure-Go horizontal pass of one gray source row at byte offset rb into d
// (hresizeAAU8's bytes for one channel): aaHPlane on the row.
func aaHGrayScalar(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan) {
	aaHPlane(d, src, rb+a.minOff, a, p)
}
