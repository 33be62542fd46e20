package engine

import (
	"math/bits"
	"slices"
	"unsafe"
)

// The fast antialias path: uint8 RGB (interleaved, ascending pixels), Pillow-arithmetic resize
// (bilinear or bicubic antialias), full-width output, normalised to float32 CHW: what a PIL /
// torchvision pipeline ported to goprep runs. It computes exactly what the general path computes
// (TestAntialiasFastPathEqualsGeneral): Pillow's 22-bit weights, rounding to uint8 after each pass.
// The horizontal pass writes planar rows (one plane per channel) into the worker's row cache; the
// vertical pass and the normalisation then run over contiguous plane rows straight into the CHW output.
// With SIMD (resize_aa_amd64.go) four source rows go through the horizontal pass at once, sharing
// the weight loads, 8 taps per step (aaHRows4W; aaHRows4, 4 taps per step with two rows per
// register, where aaHRows4W's loads would leave the array), the vertical pass takes the three planes
// of an output row at once (aaVRow3). aaHRows4W hands its columns, 16 at a time, to a loop in
// assembly: aaHRowsZ on AVX-512 VBMI + VNNI machines (one byte permute and one VPDPWSSD per 8 taps
// of a row, resize_aa_vnni*), aaHRowsY on the others (aaHRows4W's own AVX2 steps,
// resize_aa_avx2_amd64*); aaVRow3 takes 32 columns per step on AVX-512 (aaVRow3W). Each column's (and each
// output row's, for the vertical pass) weights w are split as w = hi*2^sh + lo with hi in int16 and a
// small centred lo (colShift), so that 16-bit multiply-adds (VPMADDWD) give exactly Pillow's 32-bit
// sums: sum(p*w) = 2^sh*sum(p*hi) + sum(p*lo). The kernels sum the high halves first (one multiply-add
// per tap pair, the count of torchvision's uint8 kernel) and add the low halves' sum only where the
// bound 0 <= p <= 255 leaves the rounded result in doubt (aaCol.thr, aaVHead): a few percent of the
// columns and vertical blocks. Rows are computed in groups of four; a group an output row leaves
// short is filled with rows the next output row reads (aaLookahead).
// Exactness is the contract: torchvision's kernel rounds its weights to 16 bits (results within 1 of
// Pillow); from_torchvision / from_timm keep exact Pillow results on PIL images (1e-5 after
// normalisation, tests/test_transforms.py), and this path is the one PIL images take.
// antialias="torch" tables (PyTorch's int16 weights) have no low halves at all (aaSplit.lo0): the
// same count of multiply-adds as torchvision's kernel and the same numbers.
// The speed of each step against torchvision is in docs/perf/2026-12-03-engine-notes.md.

// aaSplit is how a whole table's weights split for 16-bit multiply-adds: w = hi*2^sh + lo. The
// kernels split per column and per output row (colShift); what they take from aaSplit is lo0.
// PyTorch's uint8 weights (torchU8Taps: int16 values at precision p stored as w_p << (22-p)) are
// multiples of 2^(22-p) whose quotients fit int16, so lo = 0 everywhere (lo0) and one VPMADDWD per
// tap pair gives the same sums: the numbers torchvision's uint8 kernel computes, with its number of
// multiply-adds. Pillow's 22-bit weights have low halves (splitOf gives sh = 11).
type aaSplit struct {
	sh  uint8
	lo0 bool
}

// splitOf derives a table's split: the largest sh such that every weight is a multiple of 2^sh with
// w>>sh in int16 (lo0), else Pillow's sh = 11 (|w| < 2^22, so both halves fit int16).
func splitOf(ws []int32) aaSplit {
	var or int32
	for _, w := range ws {
		or |= w
	}
	sh := pilPrecisionBits
	if or != 0 {
		sh = min(sh, bits.TrailingZeros32(uint32(or)))
	}
	for _, w := range ws {
		if v := w >> sh; v != int32(int16(v)) {
			return aaSplit{sh: 11}
		}
	}
	return aaSplit{sh: uint8(sh), lo0: true}
}

// colShift is the split of one column's horizontal weights (the SIMD horizontal pass, aaHRows4): the
// smallest sh at which every rounded quotient hi = (w + 2^(sh-1)) >> sh fits int16, leaving
// lo = w - hi*2^sh in [-2^(sh-1), 2^(sh-1)). The pass sums p*hi (one VPMADDWD per tap pair) and adds
// the low halves' sum only for a column whose result it could change (aaCol.thr); small, centred low
// halves make that rare: sh is 4 for most columns of the 1080p -> 224 downscale (the border columns'
// larger weights need 5), and a few percent of the columns take the second pass (4.6% bilinear / 7.9%
// bicubic counted on a real 1080p photo -> 224; one shift for the whole table, rounded down, needed more).
// PyTorch's weights are multiples of 2^(22-p), so lo is 0 for every sh <= 22-p (aaPlan.hs.lo0).
// The rounded quotient is monotonic in w, so every weight's fits when the smallest's and the
// largest's do: one pass over the weights, then a few shifts of two values (a per-item training
// plan splits ~670 columns and rows, BenchmarkNewPlanTrainCrop).
func colShift(ws []int32) uint8 {
	if len(ws) == 0 {
		return 0
	}
	lo, hi := slices.Min(ws), slices.Max(ws)
	for sh := uint8(0); ; sh++ {
		if h, _ := colHalves(lo, sh); int32(h) == (lo+(1<<sh>>1))>>sh {
			if h, _ := colHalves(hi, sh); int32(h) == (hi+(1<<sh>>1))>>sh {
				return sh
			}
		}
	}
}

// colHalves splits w at sh with a rounded high half: w = hi*2^sh + lo, |lo| <= 2^(sh-1).
func colHalves(w int32, sh uint8) (hi, lo int16) {
	h := (w + (1 << sh >> 1)) >> sh
	return int16(h), int16(w - h<<sh)
}

// hi and lo are w's halves under the split.
func (s aaSplit) halves(w int32) (hi, lo int16) {
	return int16(w >> s.sh), int16(w & (1<<s.sh - 1))
}

// aaCol is one output column of the fast horizontal pass: its taps read the contiguous pixels at
// byte offset off (relative to aaPlan.minOff) onward.
type aaCol struct {
	off int32 // first tap's byte offset, relative (never negative)
	cnt int32 // live taps
	w   int32 // index of the column's first tap in the plan's cols.Taps (for the pure-Go kernel)
	ch  int32 // index of the column's first 4-tap chunk in aaPlan.chunks
	// The column's split (colShift) and the bounds of its low halves' sum L = sum(p*lo): with
	// 0 <= p <= 255, L lies in [lmin, lmin+width], lmin = 255*sum(lo < 0), width = 255*sum(|lo|).
	// aaHRows4 computes A = mul*sum(p*hi) + base, base = 2^21 + lmin; Pillow's result
	// (A + L - lmin) >> 22 equals A >> 22 whenever A mod 2^22 < thr = 2^22 - width.
	mul, base, thr int32
	// aaHRows4W's view: the index of the column's first 8-tap chunk in aaPlan.wide, how many it takes
	// whole, and the taps left over after them when 1 to 4 (wtail 1: 1 or 2, wtail 2: 3 or 4; none:
	// 0): that chunk's weights are in both lanes and it runs two rows per register, as aaHRows4 does,
	// half the multiply-adds of a whole chunk. The 1920 -> 224 columns' 17-18 taps (bilinear) are two
	// whole chunks and a tail of 1, their 34-35 (bicubic) four and a tail of 2.
	wch, wfull int32
	wtail      int8
}

// aaAsmCol is one column for the assembly column loops, aaHRowsZ (AVX-512 VNNI, aaPlan.zcols) and
// aaHRowsY (AVX2, aaPlan.ycols): its first tap's byte offset (aaCol.off), its whole steps (8 taps;
// aaHRowsY: aaCol.wfull), its tail (aaHRowsZ: 1 when 1-4 taps follow them; aaHRowsY: aaCol.wtail),
// the index of its first step's weights (in aaPlan.zw; aaHRowsY: aaCol.wch in aaPlan.wide), and its
// split's shift, base and threshold less one (aaCol: sh with mul = 2^sh). 28 bytes: the kernels step
// through the table with that stride and read the fields at their offsets.
type aaAsmCol struct {
	off, steps, tail, w, sh, base, thrm1 int32
}

// asmCol is column c's aaAsmCol with the given steps, tail and weight index.
func asmCol(c *aaCol, steps, tail, w int32) aaAsmCol {
	return aaAsmCol{off: c.off, steps: steps, tail: tail, w: w,
		sh: int32(bits.TrailingZeros32(uint32(c.mul))), base: c.base, thrm1: c.thr - 1}
}

// aaWide holds the weights of 8 taps of one column for aaHRows4W, whose 32-byte load at the chunk's
// first tap minus 4 bytes puts taps 0-3 in the low 128-bit lane (bytes 4-15) and taps 4-7 in the high
// one (bytes 0-11): the (tap, tap+1) pairs of each channel [w0 w1 w0 w1 w0 w1 0 0 | w4 w5 ... 0 0]
// (A: taps 0, 1 and 4, 5) and [w2 w3 ... | w6 w7 ...] (B), high and low halves (colHalves).
type aaWide struct {
	hiA, hiB, loA, loB [16]int16
}

// aaChunk holds the SIMD weights of 4 taps of one column, as the two (tap, tap+1) pairs of each
// channel laid out for VPMADDWD: [w0 w1 w0 w1 w0 w1 0 0] (taps 0, 1) and the same for taps 2, 3,
// repeated in both 128-bit lanes (the lanes carry two different source rows). hi and lo are the
// split weight's halves (colHalves at the column's shift).
type aaChunk struct {
	hiA, hiB, loA, loB [16]int16
}

type aaPlan struct {
	hs, vs aaSplit // the weight splits of the horizontal (cols) and vertical (rows) tables
	cols   []aaCol
	chunks []aaChunk
	minOff int // smallest first-tap offset from the row origin
	winEnd int // relative end of the bytes any column's chunks read (16-byte loads)
	cmap   [3]int
	// planar: the source is planar (a torchvision (C, H, W) tensor read in place): each channel's
	// pixels are consecutive bytes, channels strideC apart; aaHPlanar runs its horizontal pass.
	planar  bool
	strideC int
	pl      *aaPlanarTab // the planar pass's SIMD tables (resize_aa_planar.go), when planar
	wide    []aaWide     // aaHRows4W's chunks (nil: it declines)
	ycols   []aaAsmCol   // aaHRowsY's columns: aaCol's off, wfull, wtail, wch and split (resize_aa_avx2_amd64.s)
	wideEnd int          // relative end of the bytes aaHRows4W's (and aaHRowsZ's) loads read (from off-4 on)
	zcols   []aaAsmCol   // aaHRowsZ's columns and weights (resize_aa_vnni.go; nil: aaHRows4W sums them itself)
	zw      []aaZW
	// aaVRow's weight pairs and split per content row (aaVTables)
	vw [][]int32
	vh []aaVHead
	// the NEON horizontal pass's tables (aaHNEON, resize_aa_arm64.go), built only under kernelSet.NEON
	// for interleaved sources (buildNEON); nil otherwise
	ncols []aaNCol
	nw    []int32 // per column its weights in groups of 8 taps, zero past its taps
	nend  []int32 // per column the furthest relative end of its 24-byte loads and all before it
	// u8h: a uint8-row plan's table (Plan.aaU8) whose horizontal pass runs aaWindow (interleaved RGB);
	// without it only vw and vh are set and the rows take hresizeAAU8 (resize_aa_u8.go)
	u8h bool
	// hid: the plan's columns are the identity on interleaved pixels (the width is not resized), the
	// content row's pixels at byte hoff from a source row's origin: aaRowU8 skips the horizontal pass
	hid  bool
	hoff int
}

// aaNCol is one column of aaHNEON: its first tap's relative byte offset (aaCol.off), its whole
// groups of 8 taps, the index of its first weight in aaPlan.nw, and tail 1 when 1 to 4 taps follow
// the groups (5 to 7 make one more group). 16 bytes: the kernel steps through the table with that
// stride and reads the fields at their offsets.
type aaNCol struct {
	off, groups, w, tail int32
}

// buildNEON lays out aaHNEON's tables from the plan's column taps ct (offsets already relative):
// each column's weights padded with zeros to whole groups of 8 taps, or of 4 for a tail of 1 to 4
// (a 24-byte load reads the pixels after the last tap, which the zero weights cancel), and the
// loads' ends, as a running maximum so that the columns whose loads stay inside a row form a prefix
// (aaHRows searches it).
// Why: the kernel reads each column's weights as whole vectors; the 4-tap tail halves the work of
// the 1920 -> 224 columns' last 1-2 taps.
func (a *aaPlan) buildNEON(ct *taps) {
	a.ncols, a.nend = make([]aaNCol, len(a.cols)), make([]int32, len(a.cols))
	var end int32
	for j := range a.cols {
		c := &a.cols[j]
		g, tail := c.cnt/8, int32(0)
		switch r := c.cnt % 8; {
		case r > 4:
			g++
		case r > 0:
			tail = 1
		}
		a.ncols[j] = aaNCol{off: c.off, groups: g, w: int32(len(a.nw)), tail: tail}
		a.nw = append(a.nw, ct.WI[c.w:c.w+c.cnt]...)
		a.nw = append(a.nw, make([]int32, 8*g+4*tail-c.cnt)...)
		end = max(end, c.off+24*(g+tail))
		a.nend[j] = end
	}
}

func newAAPlan(p *Plan) *aaPlan {
	s := &p.Spec
	if s.In.DType != U8 || p.kernel != kPillow || p.vfirst || p.inC != 3 || p.OutC != 3 || p.norm == nil ||
		!p.CHW || p.norm.f16 || p.cols.Lo != 0 || p.cols.Hi != p.OutW {
		return nil
	}
	a := newAAColumns(p)
	if a == nil {
		return nil
	}
	a.vs = splitOf(p.rows.Taps.WI)
	copy(a.cmap[:], p.cmap)
	a.vw, a.vh = aaVTables(&p.rows.Taps)
	if a.planar {
		a.pl = newAAPlanarTab(a, p)
	} else {
		newAAWide(a, p)
		if p.kern.AAHZ {
			newAAZ(a)
		}
	}
	return a
}

// newAAVFirst builds the horizontal tables of a vertical-first plan (Plan.vfirst) on interleaved RGB
// for aaHRows, which vfirstRowU8 runs over its vertically resized row (aaPlan.cols and chunks only:
// the fused vertical pass and the normalisation stay on the general path). Nil where aaHRows cannot
// read the columns (other channel counts or strides, flipped or strided pixels).
func newAAVFirst(p *Plan) *aaPlan {
	if !p.vfirst || p.inC != 3 || p.strideC != 1 {
		return nil
	}
	return newAAColumns(p)
}

// newAAColumns builds the fast horizontal pass's column tables for the plan's content columns
// (aaPlan.cols, chunks, minOff, winEnd, hs, planar): nil unless each column reads ascending pixels.
// The chunks are the interleaved RGB kernels'; planar and gray plans read cols with aaPlanarTab.
func newAAColumns(p *Plan) *aaPlan {
	ct := &p.cols.Taps
	k := ct.K
	a := &aaPlan{cols: make([]aaCol, len(ct.Cnt)), planar: p.strideC != 1, strideC: p.strideC, hs: splitOf(ct.WI)}
	nch := 1 // the chunks' final length, with the one to spare below: one allocation
	for _, c := range ct.Cnt {
		nch += (int(c) + 3) / 4
	}
	a.chunks = make([]aaChunk, 0, nch)
	step := 3 // interleaved RGB: 3-byte pixels
	if a.planar || p.inC == 1 {
		step = 1 // planar: 1-byte pixels per channel plane; gray (aaHGray): 1-byte pixels
	}
	first := true
	for j := range a.cols {
		cnt := int(ct.Cnt[j])
		o0 := p.cols.Off[j*k]
		for t := 1; t < cnt; t++ {
			if p.cols.Off[j*k+t] != o0+step*t {
				return nil // not ascending pixels (a flipped or strided source view)
			}
		}
		if o0 != int(int32(o0)) {
			return nil
		}
		if first || o0 < a.minOff {
			a.minOff, first = o0, false
		}
		sh := colShift(ct.WI[j*k : j*k+cnt])
		var lmin, width int64
		for t := 0; t < cnt; t++ {
			_, lo := colHalves(ct.WI[j*k+t], sh)
			width += 255 * int64(max(lo, -lo))
			lmin += 255 * int64(min(lo, 0))
		}
		a.cols[j] = aaCol{off: int32(o0), cnt: int32(cnt), w: int32(j * k), ch: int32(len(a.chunks)),
			mul: 1 << sh, base: int32(1<<(pilPrecisionBits-1) + lmin), thr: int32(max(1<<pilPrecisionBits-width, 0))}
		for c := 0; c < cnt; c += 4 {
			var hs, ls [4]int16 // the 4 taps' halves; taps past cnt weigh 0
			for q := 0; q < 4 && c+q < cnt; q++ {
				hs[q], ls[q] = colHalves(ct.WI[j*k+c+q], sh)
			}
			a.chunks = append(a.chunks, aaChunk{hiA: chunkPairs(hs[0], hs[1]), hiB: chunkPairs(hs[2], hs[3]),
				loA: chunkPairs(ls[0], ls[1]), loB: chunkPairs(ls[2], ls[3])})
		}
	}
	// one chunk of capacity to spare: the kernels' chunk pointer steps past a column's last chunk
	// (never read there), which checkptr accepts only inside the allocation
	a.chunks = slices.Grow(a.chunks, 1)
	for j := range a.cols {
		a.cols[j].off -= int32(a.minOff)
		if int(a.cols[j].off) > 1<<30 {
			return nil
		}
		n := (int(a.cols[j].cnt) + 3) / 4
		a.winEnd = max(a.winEnd, int(a.cols[j].off)+12*(n-1)+16)
	}
	if p.kern.NEON && !a.planar {
		a.buildNEON(ct)
	}
	return a
}

// chunkPairs is one (tap, tap+1) pair's lanes of an aaChunk: [u v u v u v 0 0] twice.
func chunkPairs(u, v int16) [16]int16 { return widePairs(u, v, u, v) }

// widePairs is two pairs' lanes of an aaWide: [u v u v u v 0 0 | x y x y x y 0 0].
func widePairs(u, v, x, y int16) [16]int16 {
	return [16]int16{u, v, u, v, u, v, 0, 0, x, y, x, y, x, y, 0, 0}
}

// newAAWide builds aaHRows4W's 8-tap chunks (aaCol.wch, aaPlan.wide, wideEnd) with each column's
// split (colShift), as the 4-tap chunks have it.
func newAAWide(a *aaPlan, p *Plan) {
	ct := &p.cols.Taps
	total := 0
	for j := range a.cols {
		total += (int(a.cols[j].cnt) + 7) / 8
	}
	a.wide = make([]aaWide, 0, total+1) // one to spare, as a.chunks has (newAAPlan)
	for j := range a.cols {
		c := &a.cols[j]
		sh := uint8(bits.TrailingZeros32(uint32(c.mul))) // the column's colShift (newAAColumns)
		c.wch, c.wfull = int32(len(a.wide)), c.cnt/8
		if r := c.cnt % 8; r > 4 {
			c.wfull++
		} else if r > 0 {
			c.wtail = int8((r + 1) / 2)
		}
		for t0 := int32(0); t0 < c.cnt; t0 += 8 {
			var hs, ls [8]int16 // the 8 taps' halves; taps past cnt weigh 0
			for q := int32(0); q < 8 && t0+q < c.cnt; q++ {
				hs[q], ls[q] = colHalves(ct.WI[c.w+t0+q], sh)
			}
			if t0/8 == c.wfull { // the tail chunk (at most 4 taps): taps 0-3 in both lanes (two rows)
				hs[4], hs[5], hs[6], hs[7] = hs[0], hs[1], hs[2], hs[3]
				ls[4], ls[5], ls[6], ls[7] = ls[0], ls[1], ls[2], ls[3]
			}
			a.wide = append(a.wide, aaWide{hiA: widePairs(hs[0], hs[1], hs[4], hs[5]), hiB: widePairs(hs[2], hs[3], hs[6], hs[7]),
				loA: widePairs(ls[0], ls[1], ls[4], ls[5]), loB: widePairs(ls[2], ls[3], ls[6], ls[7])})
		}
		a.wideEnd = max(a.wideEnd, int(c.off)-4+24*((int(c.cnt)+7)/8-1)+32)
	}
	a.ycols = make([]aaAsmCol, len(a.cols))
	for j := range a.cols {
		c := &a.cols[j]
		a.ycols[j] = asmCol(c, c.wfull, int32(c.wtail), c.wch)
	}
}

// edgeStride is the size of one row's slot in aaHRows4W's edge scratch (worker.aaEdge holds four):
// its loads read from 4 bytes before the row's first column to wideEnd past it.
func (a *aaPlan) edgeStride() int { return a.wideEnd + 4 }

// aaRow computes content row y of image img straight into the CHW output (the patch layout: into
// the worker's band buffer, planeRows3).
func (w *worker) aaRow(p *Plan, b *jobBufs, base, img, y int) {
	a := p.aa
	r := y - p.rows.Lo
	hs := w.aaWindow(p, a, b.srcU8, base, r)
	n := p.OutW
	rows := &p.rows
	k, kk := rows.Taps.K, len(hs)
	wv := rows.Taps.WI[r*k : r*k+kk]
	pw, vh := a.vw[r], a.vh[r] // aaVPairs' layout, laid out once per plan (newAAPlan)
	nt := p.norm
	out := w.planeRows3(p, b, img, y)
	po := [3]int{a.cmap[0] * n, a.cmap[1] * n, a.cmap[2] * n}
	if !p.kern.aaVRow3(&out, hs, &po, wv, pw, vh, nt, &[3]*[256]float32{&nt.lutF32[0], &nt.lutF32[1], &nt.lutF32[2]}, a.zw != nil) {
		for c := 0; c < 3; c++ {
			p.kern.aaVRow(out[c], hs, po[c], wv, pw, vh, nt.scale[c], nt.mean[c], nt.std[c], &nt.lutF32[c])
		}
	}
	if p.patch != nil {
		w.patchRowDone(p, b, img, y)
	}
}

// aaWindow computes the horizontal pass (a's tables: planar rows, channel c at c*len(a.cols)) of
// the source rows content row r's vertical taps read and the worker's row cache lacks, in groups of
// four with lookahead (aaLookahead), and returns the window's rows in tap order; for an odd window
// the slice's spare capacity holds its last row again (aaVRow3 and vresizeAAU8Paired read it as the
// zero-weight partner of the last pair). src is the source (a YUV plan's rows are converted first).
func (w *worker) aaWindow(p *Plan, a *aaPlan, src []uint8, base, r int) [][]uint8 {
	rows := &p.rows
	k := rows.Taps.K
	kk := int(rows.Taps.Cnt[r])
	if cap(w.aaRows) < kk+1 { // one to spare: aaVRow3 repeats an odd window's last row there
		w.aaRows = make([][]uint8, kk+1)
	}
	hs := w.aaRows[:kk]
	if len(w.aaEdge) < 4*a.edgeStride() {
		w.aaEdge = make([]byte, 4*a.edgeStride())
	}
	var missing [4]int // taps of rows the cache lacks, computed in groups (aaHRows4)
	nm := 0
	var hd [4][]uint8
	var ho [4]int
	flush := func() {
		if a.planar { // planar rows go in pairs (aaHPlanarRows); no lookahead
			for q := 0; q+1 < nm; q += 2 {
				p.kern.aaHPlanarRows(hs[missing[q]], hs[missing[q+1]], src, base+rows.Off[r*k+missing[q]], base+rows.Off[r*k+missing[q+1]], a, p)
			}
			if nm%2 == 1 {
				p.kern.aaHPlanarRows(hs[missing[nm-1]], nil, src, base+rows.Off[r*k+missing[nm-1]], 0, a, p)
			}
			nm = 0
			return
		}
		var ent [4]int // the rows' table entries
		for q, t := range missing[:nm] {
			hd[q], ent[q] = hs[t], r*k+t
		}
		m := nm
		if m < 4 && m > 0 {
			// fill the group with rows the next output row will read: one row costs as much as two
			// in aaHRows, and four rows in aaHRows4 ~25% less than two pairs (a downscaled output
			// row needs a number of new rows that is rarely a multiple of 4)
			m += w.aaLookahead(p, r, kk, hd[m:], ent[m:])
		}
		hsrc := src
		if p.yuv != nil {
			// the rows converted into the worker's buffer (their slots cannot evict one another:
			// yuvPlan.ring), which the kernels then read as they read the source
			for q := range m {
				ho[q] = w.yuvAt(p, src, base, ent[q])
			}
			hsrc = w.yuvBuf
		} else {
			for q := range m {
				ho[q] = base + rows.Off[ent[q]]
			}
		}
		switch m {
		case 4:
			if !p.kern.aaHRows4W(&hd, &ho, hsrc, a, p, w.aaEdge) {
				p.kern.aaHRows4(&hd, &ho, hsrc, a, p)
			}
		case 3:
			p.kern.aaHRows(hd[0], hd[1], hsrc, ho[0], ho[1], a, p)
			p.kern.aaHRows(hd[2], nil, hsrc, ho[2], 0, a, p)
		case 2:
			p.kern.aaHRows(hd[0], hd[1], hsrc, ho[0], ho[1], a, p)
		case 1:
			p.kern.aaHRows(hd[0], nil, hsrc, ho[0], 0, a, p)
		}
		nm = 0
	}
	for t := 0; t < kk; t++ {
		s, ok := w.slot(rows.Src[r*k+t])
		hs[t] = w.hU8[s]
		if !ok {
			missing[nm] = t
			if nm++; nm == 4 {
				flush()
			}
		}
	}
	flush()
	if kk%2 == 1 {
		w.aaRows[kk] = hs[kk-1] // aaVRow3's last pair reads it (the second row's weight is zero)
	}
	return hs
}

// aaLookahead claims the cache slots of up to len(hd) source rows that output rows r+1 to r+3 read and
// the cache lacks, within 3 rows past row r's window (rows [lo, hi] of its kk taps), and stores them in hd
// and their row table entries in ent. Their slots cannot hold a row of r's window, since the ring has 4 slots more than the widest
// window (worker.prepare). It returns how many it claimed (none for the last output row, or an
// upscale's shared rows). Why rows past r+1: a mild downscale (1920 -> 1456) needs one or two new
// rows per output row, which r+1 alone leaves short of aaHRows4W's four (the pair kernel aaHRows then
// took most of the time).
func (w *worker) aaLookahead(p *Plan, r, kk int, hd [][]uint8, ent []int) int {
	rows := &p.rows
	k := rows.Taps.K
	if r+1 >= len(rows.Taps.Cnt) || w.ring < kk+3 {
		return 0
	}
	lo, hi := rows.Src[r*k], rows.Src[r*k]
	for _, v := range rows.Src[r*k+1 : r*k+kk] {
		lo, hi = min(lo, v), max(hi, v)
	}
	if int(hi-lo) != kk-1 {
		return 0 // not consecutive rows: no adjacency argument
	}
	got := 0
	for n := r + 1; n <= r+3 && n < len(rows.Taps.Cnt) && got < len(hd); n++ {
		for t := 0; t < int(rows.Taps.Cnt[n]) && got < len(hd); t++ {
			v := rows.Src[n*k+t]
			if (v <= hi || v > hi+3) && (v >= lo || v < lo-3) {
				continue
			}
			if s, cached := w.slot(v); !cached {
				hd[got], ent[got] = w.hU8[s], n*k+t
				got++
			}
		}
	}
	return got
}

// aaHScalar is the pure-Go horizontal pass of columns [from, to) of the row at rb into planar d (plane
// c at c*n): Pillow's ImagingResampleHorizontal_8bpc, as hresizeAAU8 computes it.
func aaHScalar(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan, from, to int) {
	n := len(a.cols)
	d = d[:3*n]
	row := unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), rb+a.minOff)
	wi := p.cols.Taps.WI
	const half = int32(1 << (pilPrecisionBits - 1))
	for j := from; j < to; j++ {
		c := a.cols[j]
		px := unsafe.Add(row, c.off)
		s0, s1, s2 := half, half, half
		for t := int32(0); t < c.cnt; t++ {
			q, wt := (*[3]uint8)(unsafe.Add(px, 3*t)), wi[c.w+t]
			s0 += int32(q[0]) * wt
			s1 += int32(q[1]) * wt
			s2 += int32(q[2]) * wt
		}
		d[j], d[n+j], d[2*n+j] = clampU8(s0>>pilPrecisionBits), clampU8(s1>>pilPrecisionBits), clampU8(s2>>pilPrecisionBits)
	}
}

// aaHPlanar is aaHScalar for a planar source (aaPlan.planar): each channel's taps are consecutive
// bytes of its plane. Pure Go on every build: the same integers as the general path.
func aaHPlanar(d []uint8, src []uint8, rb int, a *aaPlan, p *Plan) {
	n := len(a.cols)
	for ch := 0; ch < 3; ch++ {
		aaHPlane(d[ch*n:ch*n+n], src, rb+a.minOff+ch*a.strideC, a, p)
	}
}

// aaHPlane is the horizontal pass of one plane's row starting at byte offset row of src into d (one
// byte a column): per column clampU8((2^(shift-1) + sum(p*w)) >> shift) over its consecutive
// pixels, shift the table's precision (aaPlanarTab), as the SIMD kernels read it. aaHPlanar's
// channels and aaHGrayScalar's one.
func aaHPlane(d []uint8, src []uint8, row int, a *aaPlan, p *Plan) {
	wi := p.cols.Taps.WI
	shift := a.pl.shift
	half := int32(1) << (shift - 1)
	d = d[:len(a.cols)]
	for j := range d {
		c := a.cols[j]
		px := src[row+int(c.off) : row+int(c.off)+int(c.cnt)]
		ws := wi[c.w : int(c.w)+len(px)]
		s := half
		for t, v := range px {
			s += int32(v) * ws[t]
		}
		d[j] = clampU8(s >> shift)
	}
}
