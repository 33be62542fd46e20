package engine

import "unsafe"

// The fast path covers the task most inference services run: uint8 RGB (interleaved, any row and pixel
// order), bilinear without antialias, full-width output, normalised to float32 CHW. It computes
// exactly what the general path computes (TestFastPathEqualsGeneral), but lays the horizontal pass out
// per channel so the vertical pass and normalisation run over contiguous rows, with SIMD where the
// build has it (resize_fast_amd64.go, pure Go in resize_fast_other.go).

// pairTap is one output column of the fast horizontal pass: the two source pixels are adjacent, so one
// six bytes from off (the lower of the two) hold both; wLo/wHi weight the lower/higher pixel.
type pairTap struct {
	off      int32
	wLo, wHi int32
}

// fastPlan is set up by NewPlan when the plan qualifies; nil otherwise.
type fastPlan struct {
	taps   []pairTap // offsets relative to minOff, so never negative
	minOff int       // smallest tap offset from the row origin (negative for flipped sources)
	cmap   [3]int
	groups []pairGroup // 16-column groups for the byte-permute kernels (hresizeRow, fusedRow); nil: see buildGroups
	winEnd int         // end of the furthest byte any group reads, relative like pairTap.off
	// quadW and octEnd serve the AVX2 horizontal kernel (hresizeAVX2): per 4-column block the 16
	// int16 weights in its VPMADDWD order (wLo, wHi of columns 0, 1, 0, 1, then 2, 3, 2, 3), and per
	// 8-column block the relative end of its furthest 8-byte load.
	quadW  []int16
	octEnd []int32
	// fused: consecutive output rows (almost) never share a source row, as when downscaling by 2x or
	// more, so caching horizontal rows buys nothing and duoRows (AVX2, where the plan has duos) or
	// else fusedRow (AVX-512 VBMI, where it has groups) computes each output row in registers.
	fused bool
	// duos and duoEnd serve the AVX2 fused kernel (duoBlocks in resize_fast_amd64.go), built for fused
	// plans whose column pairs (2j, 2j+1) each fit one 16-byte load: per pair its load offset, shuffles
	// and weights; per 8-column block the relative end of its furthest 32-byte load. nil otherwise.
	duos   []pairDuo
	duoEnd []int32
	duoMax int32 // the largest duoEnd
	// duoNorm is, per source channel k, the normalisation of the output plane that reads it (cmap is
	// a permutation wherever duos is set).
	duoNorm [3]duoChan
}

// duoChan is the normalisation of one source channel on the duo path: normTables' per-channel
// constants of the output plane it goes to, its table and the plane.
type duoChan struct {
	scale, mean, std float32
	lut              *[256]float32
	plane            int
}

// pairDuo is one pair of output columns (2k, 2k+1), a and b, of duoBlocks. One 16-byte load at off
// (relative, like pairTap.off) holds both columns' pixels; a 128-bit lane holds that load from one
// source row, the other lane the same bytes of the other row. sh01 lays out, per lane, the
// zero-extended (lower, higher) pixel pairs as int16 of channels 0 and 1 of a, then of b; sh2 those of
// channel 2 of a and b in int32 lanes 0 and 2 (pairs 0 and 1 of a block) or 1 and 3 (pairs 2 and 3),
// so that two pairs' results merge with an OR. w holds the matching weights (wLo, wHi of a twice, then
// of b twice, in both lanes), so one VPMADDWD finishes two columns of two channels in both rows. The
// int16 packing of these sums leaves each channel's values of a block where one AND or shift per
// channel takes them out in column order (see duoBlocks). 128 bytes: a power of two to step by.
type pairDuo struct {
	sh01, sh2 [32]int8
	w         [16]int16
	off       int32
	_         [28]byte
}

// buildDuos fills duos and duoEnd for the columns in whole 8-column blocks, or leaves them nil when a
// pair's pixels span more than 16 bytes (downscales beyond ~3.3x) or there is no whole block.
func (f *fastPlan) buildDuos() {
	nb := len(f.taps) / 8
	if nb == 0 {
		return
	}
	duos, ends := make([]pairDuo, 4*nb), make([]int32, nb)
	for k := range duos {
		a, b := f.taps[2*k], f.taps[2*k+1]
		off := min(a.off, b.off)
		ra, rb := int(a.off-off), int(b.off-off)
		ha, hb := ra+3, rb+3
		if a.wHi == 0 {
			ha = ra // weight 0; keep the index inside the pixel the column really reads
		}
		if b.wHi == 0 {
			hb = rb
		}
		if max(ha, hb)+3 > 16 {
			return
		}
		d := &duos[k]
		d.off = off
		c2 := 0 // int32 lane of column a's channel 2; b's is two further
		if k%4 >= 2 {
			c2 = 1
		}
		for lane := 0; lane < 32; lane += 16 {
			for i := 0; i < 16; i++ {
				d.sh01[lane+i], d.sh2[lane+i] = -1, -1
			}
			for i, x := range [8]int{ra, ha, ra + 1, ha + 1, rb, hb, rb + 1, hb + 1} {
				d.sh01[lane+2*i] = int8(x)
			}
			d.sh2[lane+4*c2], d.sh2[lane+4*c2+2] = int8(ra+2), int8(ha+2)
			d.sh2[lane+4*c2+8], d.sh2[lane+4*c2+10] = int8(rb+2), int8(hb+2)
		}
		for i := 0; i < 16; i += 8 {
			d.w[i], d.w[i+1], d.w[i+2], d.w[i+3] = int16(a.wLo), int16(a.wHi), int16(a.wLo), int16(a.wHi)
			d.w[i+4], d.w[i+5], d.w[i+6], d.w[i+7] = int16(b.wLo), int16(b.wHi), int16(b.wLo), int16(b.wHi)
		}
		ends[k/4] = max(ends[k/4], off+32)
	}
	f.duos, f.duoEnd = duos, ends
	for _, e := range ends {
		f.duoMax = max(f.duoMax, e)
	}
}

// pairGroup describes 16 consecutive output columns and a 128-byte window holding their 32 source
// pixels: the source row itself from start (relative, like pairTap.off). idx01 and idx2 index the
// window so that two byte permutes lay out, per channel, the pairs (lower pixel, higher pixel) of the
// 16 columns: channels 0 and 1 in idx01's halves, channel 2 in idx2's lower half. w holds the matching
// (wLo, wHi) pairs, so one multiply-add of pairs (VPMADDWD) finishes a channel.
type pairGroup struct {
	start       int32 // the window's first byte; it reads [start, start+windowBytes)
	idx01, idx2 [64]uint8
	w           [32]int16
}

// windowBytes is the span one pairGroup can read (two 64-byte registers).
const windowBytes = 128

// buildGroups fills groups for the columns in whole 16-column groups, or leaves it nil when some
// group's pixels span more than one window (a strong downscale, beyond ~2.5x: 1920 -> 224, 720 ->
// 224); the byte-permute kernels then leave the plan to the AVX2 ones. Why: assembling such a window
// from 8-byte reads through a buffer stalls on store forwarding (~6x slower than hresizeAVX2).
func (f *fastPlan) buildGroups() {
	n := len(f.taps)
	for g := 0; g+16 <= n; g += 16 {
		var pg pairGroup
		first, last := f.taps[g].off, f.taps[g].off
		for k := 0; k < 16; k++ {
			first, last = min(first, f.taps[g+k].off), max(last, f.taps[g+k].off)
		}
		if last+6-first > windowBytes {
			f.groups = nil
			return
		}
		pg.start = first
		for k := 0; k < 16; k++ {
			t := f.taps[g+k]
			rel := uint8(t.off - first)
			hi := rel + 3
			if t.wHi == 0 {
				hi = rel // weight 0; keep the index inside the pixel the column really reads
			}
			pg.idx01[2*k], pg.idx01[2*k+1] = rel, hi
			pg.idx01[32+2*k], pg.idx01[32+2*k+1] = rel+1, hi+1
			pg.idx2[2*k], pg.idx2[2*k+1] = rel+2, hi+2
			pg.w[2*k], pg.w[2*k+1] = int16(t.wLo), int16(t.wHi)
		}
		f.groups = append(f.groups, pg)
	}
}

// buildQuads fills quadW and octEnd for the columns in whole 8-column blocks.
func (f *fastPlan) buildQuads() {
	n := len(f.taps) / 8 * 8
	f.quadW = make([]int16, 4*n)
	f.octEnd = make([]int32, n/8)
	for j := 0; j < n; j++ {
		t := f.taps[j]
		q := f.quadW[16*(j/4):]
		at := 2*(j&1) + 8*(j&2>>1) // column k of the block: int32 lanes k&1 (+2) of 128-bit lane k>>1
		q[at], q[at+1], q[at+4], q[at+5] = int16(t.wLo), int16(t.wHi), int16(t.wLo), int16(t.wHi)
		f.octEnd[j/8] = max(f.octEnd[j/8], t.off+8)
	}
}

func newFastPlan(p *Plan) *fastPlan {
	s := &p.Spec
	// OpenCV's fixed point only (kLinear): PyTorch's plain uint8 bilinear (TorchU8) is kPillow's
	if s.In.DType != U8 || s.Resize.Kind != "bilinear" || p.kernel != kLinear || p.inC != 3 || p.strideC != 1 ||
		p.OutC != 3 || p.norm == nil || !p.CHW || p.norm.f16 || p.cols.Lo != 0 || p.cols.Hi != p.OutW ||
		len(p.cols.lin) == 0 {
		return nil
	}
	f := &fastPlan{taps: make([]pairTap, len(p.cols.lin))}
	for j, t := range p.cols.lin {
		if t.o0 != int(int32(t.o0)) || t.o1 != int(int32(t.o1)) {
			return nil // offsets beyond int32 (gigabyte strides): the general path handles them
		}
		lo, hi := int32(t.o0), int32(t.o1)
		wLo, wHi := t.a0, t.a1
		switch d := hi - lo; {
		case d == 0: // clamped border: one pixel
			wLo, wHi = t.a0+t.a1, 0
		case d == -3: // pixels in descending address order (a flipped source view)
			lo, wLo, wHi = hi, t.a1, t.a0
		case d != 3:
			return nil // not adjacent pixels (pixel stride is not 3 bytes)
		}
		f.taps[j] = pairTap{lo, wLo, wHi}
		f.minOff = min(f.minOff, int(lo))
	}
	for j := range f.taps {
		if int(f.taps[j].off)-f.minOff > 1<<30 {
			return nil // the row spans over a gigabyte: keep relative offsets far from int32's limit
		}
		f.taps[j].off -= int32(f.minOff)
	}
	f.buildGroups()
	f.buildQuads()
	for _, g := range f.groups {
		f.winEnd = max(f.winEnd, int(g.start)+windowBytes)
	}
	shared, rows := 0, len(p.rows.Src)/2
	for r := 0; r+1 < rows; r++ {
		a, b := p.rows.Src[2*r:2*r+2], p.rows.Src[2*r+2:2*r+4]
		if a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1] {
			shared++
		}
	}
	f.fused = shared*10 < rows
	copy(f.cmap[:], p.cmap)
	perm := f.cmap[0] != f.cmap[1] && f.cmap[0] != f.cmap[2] && f.cmap[1] != f.cmap[2]
	if f.fused && perm { // duoBlocks writes each source channel to one plane
		f.buildDuos()
	}
	nt := p.norm
	for c, k := range f.cmap {
		f.duoNorm[k] = duoChan{nt.scale[c], nt.mean[c], nt.std[c], &nt.lutF32[c], c}
	}
	return f
}

// hresizeScalar writes the horizontal pass of one source row planar, d[c*n + j] for channel c and
// column j, as OpenCV's s0*a0 + s1*a1 already shifted right by 4: the vertical pass only ever uses
// that shifted value (see vresizeLinearU8), and at <= 32640 it fits int16, which halves the traffic
// and lets the vertical pass multiply 16-bit lanes (VPMULHW, as OpenCV does).
// Columns [from, to) only, so the SIMD kernel can hand over the columns it does not cover. Byte loads
// and stores go through pointers (offsets were proven in bounds by Plan.checkBounds; d holds 3n values).
func hresizeScalar(d []int16, src []uint8, rb int, f *fastPlan, from, to int) {
	n := len(f.taps)
	d = d[:3*n]
	row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb+f.minOff)
	out := unsafe.Pointer(unsafe.SliceData(d))
	for j := from; j < to; j++ {
		t := f.taps[j]
		p := unsafe.Add(row, t.off)
		o0 := (*int16)(unsafe.Add(out, 2*j))
		o1 := (*int16)(unsafe.Add(out, 2*(n+j)))
		o2 := (*int16)(unsafe.Add(out, 2*(2*n+j)))
		lo := (*[3]uint8)(p)
		if t.wHi == 0 {
			// a clamped border column: its right neighbour may lie outside the array
			*o0, *o1, *o2 = int16(int32(lo[0])*t.wLo>>4), int16(int32(lo[1])*t.wLo>>4), int16(int32(lo[2])*t.wLo>>4)
			continue
		}
		hi := (*[3]uint8)(unsafe.Add(p, 3))
		*o0 = int16((int32(lo[0])*t.wLo + int32(hi[0])*t.wHi) >> 4)
		*o1 = int16((int32(lo[1])*t.wLo + int32(hi[1])*t.wHi) >> 4)
		*o2 = int16((int32(lo[2])*t.wLo + int32(hi[2])*t.wHi) >> 4)
	}
}

// pixD returns OpenCV's horizontal value (pre-shifted by 4, as in hresizeScalar) of the three
// channels of column j of the row at rb: hresizeScalar's per-column step, for the columns no SIMD
// block covers (after the last group, or, in duoScalar, blocks near the end of the array).
// hresizeScalar keeps its own copy of it inlined: calling pixD per column (it is over the inlining
// budget) made the pure-Go BenchmarkImagenet512 about 40% slower.
func pixD(src []uint8, rb int, f *fastPlan, j int) (d0, d1, d2 int32) {
	t := f.taps[j]
	o := rb + f.minOff + int(t.off)
	d0, d1, d2 = int32(src[o])*t.wLo, int32(src[o+1])*t.wLo, int32(src[o+2])*t.wLo
	if t.wHi != 0 {
		d0 += int32(src[o+3]) * t.wHi
		d1 += int32(src[o+4]) * t.wHi
		d2 += int32(src[o+5]) * t.wHi
	}
	return d0 >> 4, d1 >> 4, d2 >> 4
}

// fastRow computes output row y (content) of image img straight into the CHW output.
func (w *worker) fastRow(p *Plan, b *jobBufs, base, img, y int) {
	f := p.fast
	r := y - p.rows.Lo
	n := len(f.taps)
	b0, b1 := p.rows.Taps.WI[2*r], p.rows.Taps.WI[2*r+1]
	plane := p.OutH * p.OutW
	o := img*p.OutImageElems() + y*p.OutW
	// (fused plans with duos take duoRows in resize_fast_amd64.go, whole bands at a time)
	if p.yuv != nil && f.fused {
		// the two rows converted into the worker's buffer, then the fused kernels on them
		out := [3][]float32{b.outF32[o : o+n], b.outF32[o+plane : o+plane+n], b.outF32[o+2*plane : o+2*plane+n]}
		rb0, rb1 := w.yuvAt(p, b.srcU8, base, 2*r), w.yuvAt(p, b.srcU8, base, 2*r+1)
		if p.kern.VBMI && p.kern.fusedRow(&out, w.yuvBuf, rb0, rb1, f, b0, b1, p.norm) {
			return
		}
		if f.duos != nil {
			var q [3][]float32
			for k := range q { // duoH writes each source channel to its plane row
				q[k] = out[f.duoNorm[k].plane]
			}
			p.kern.duoH(&q, w.yuvBuf, rb0, rb1, f, b0, b1)
			return
		}
	}
	if f.fused && p.kern.VBMI && p.yuv == nil {
		out := [3][]float32{b.outF32[o : o+n], b.outF32[o+plane : o+plane+n], b.outF32[o+2*plane : o+2*plane+n]}
		if p.kern.fusedRow(&out, b.srcU8, base+p.rows.Off[2*r], base+p.rows.Off[2*r+1], f, b0, b1, p.norm) {
			return
		}
	}
	var h [2][]int16
	for t := 0; t < 2; t++ {
		ri := r*2 + t
		s, ok := w.slot(p.rows.Src[ri])
		if !ok {
			row, rb := w.srcRow(p, b.srcU8, base, ri)
			p.kern.hresizeRow(w.hI16[s], row, rb, f)
		}
		h[t] = w.hI16[s]
	}
	for c := 0; c < 3; c++ {
		sc := f.cmap[c] * n
		nt := p.norm
		p.kern.vnormRow(b.outF32[o+c*plane:o+c*plane+n], h[0][sc:sc+n], h[1][sc:sc+n], b0, b1, nt.scale[c], nt.mean[c], nt.std[c],
			&nt.lutF32[c])
	}
}

// duoScalar computes duoH's columns [from, to): OpenCV's vertical step (vlinear) on the two rows'
// horizontal values (pixD), through each channel's normalisation table.
func duoScalar(out *[3][]float32, src []uint8, rb0, rb1 int, f *fastPlan, b0, b1 int32, from, to int) {
	n := len(f.taps)
	o0, o1, o2 := out[0][:n], out[1][:n], out[2][:n]
	l0, l1, l2 := f.duoNorm[0].lut, f.duoNorm[1].lut, f.duoNorm[2].lut
	for j := from; j < to; j++ {
		p0, p1, p2 := pixD(src, rb0, f, j)
		q0, q1, q2 := pixD(src, rb1, f, j)
		o0[j], o1[j], o2[j] = l0[uint8(vlinear(b0, b1, p0, q0))], l1[uint8(vlinear(b0, b1, p1, q1))], l2[uint8(vlinear(b0, b1, p2, q2))]
	}
}

// vnormScalar is the portable row kernel: OpenCV's vertical arithmetic on the pre-shifted rows, then
// the normalisation table.
func vnormScalar(out []float32, s0, s1 []int16, b0, b1 int32, lut *[256]float32) {
	s0, s1 = s0[:len(out)], s1[:len(out)]
	for i := range out {
		out[i] = lut[uint8(vlinear(b0, b1, int32(s0[i]), int32(s1[i])))]
	}
}
