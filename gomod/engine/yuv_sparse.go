package engine

import "unsafe"

// Column-sparse YUV conversion: which source columns a YUV plan converts (yuvPlan.runs, .sparse) and
// the converter of scattered pixel pairs. A downscale's taps read few of a row's columns (bilinear
// 1920 -> 224 reads 448 of 1920, in pairs ~8.6 columns apart), so converting whole spans costs
// several times the pixels the resize reads. The plan converts instead:
//   - runs: spans of consecutive pixel pairs at least yuvDenseRun pixels long, through the dense
//     converter (kernelSet.yuvConv, 16 pixels a SIMD step);
//   - sparse: every other pixel pair a tap reads, through yuvConvPairs: on AVX-512 VBMI, 8 pairs a
//     step gathered from the plane rows and scattered into the converted row in registers
//     (yuv_sparse_amd64.go, from per-plan tables); else the pairs' samples gathered into a compact
//     semi-planar chunk, converted by the dense converter, and the chunk's RGB copied back to the
//     pairs' places (3x in the row, where the column table reads them); pure Go: per pair.
//
// A pixel is converted from its own Y and its chroma pair's U, V only, so converting a pixel alone
// or within a span gives the same bytes; every column a tap reads is converted either way, and the
// plan's result equals the dense conversion's bit for bit (TestYUVEqualsConvertThenResize and
// TestYUVSparseEqualsDense1080p force both). setColumns picks whichever costs less: sparse for
// scattered taps (a 1080p -> 224 squash on VBMI, 4K -> 224), merged spans where taps are dense
// (upscales, antialias windows that overlap, vertical-first rows, the 1080p crop task).

// yuvColMode picks how setColumns converts a plan's columns: by cost (yuvAuto, every plan), or
// forced to merged spans (yuvDense, the old conversion) or to exact pairs (yuvSparse), for tests
// and benchmarks that compare the two.
type yuvColMode uint8

const (
	yuvAuto yuvColMode = iota
	yuvDense
	yuvSparse
)

// yuvDenseRun: a span of consecutive pairs this many pixels long or longer is converted in place
// by the dense converter (one SIMD step is 16 pixels); shorter ones go through the gathered pairs.
const yuvDenseRun = 16

// yuvSparseCost: a pixel converted through yuvConvPairs' chunks (scalar gather, SIMD convert,
// scalar scatter) costs about this many pixels of a merged span's dense conversion, so setColumns
// converts sparsely only where needed pixels * cost < the merged spans' pixels. Measured with
// BenchmarkYUVConvPairs (AVX2 converter, 1920-pixel NV12 row pair, shared 2-core Xeon): dense
// 0.31-0.35 ns a pixel, chunked pairs 0.9-1.4 (the gather and scatter cost twice the conversion).
// yuvSparseCostVBMI is the same for the VBMI converter (amd64 yuvConvPairsVector, gathering and scattering
// in registers, two 8-pair blocks a step): 0.43 ns a pixel for every pair, 0.59 for every 4th,
// against dense 0.31 in the same run.
const (
	yuvSparseCost     = 4
	yuvSparseCostVBMI = 2
)

// yuvSparseCostOf is the sparse cost of a kernel set: the VBMI converter's where it runs.
func yuvSparseCostOf(k kernelSet) int {
	if k.VBMI {
		return yuvSparseCostVBMI
	}
	return yuvSparseCost
}

// yuvBlock is one block of the VBMI sparse converter (yuv_sparse_amd64.go: buildBlocks): up to 8
// consecutive pairs of yuvPlan.sparse. yb: the byte of the Y row (semi-planar chroma row too;
// packed: the row of pixel pairs) where its 128-byte window starts, gi the window bytes of each
// lane's samples (lane l's Y at 2l, 2l+1; packed: its 4 bytes at 4l); planar chroma: cb the start
// of the U and V rows' 64-byte windows, gc lane l's byte (at l in an even block, at 8+l, +64, in
// an odd one: a step pairs them). Its output windows are vwins[w0:w1].
type yuvBlock struct {
	yb, cb int32
	w0, w1 int32
	gi, gc [64]uint8
}

// yuvWin is a 64-byte window of a converted row at byte off that a block writes: idx picks each
// byte from its step's [R|G<<8 words | B words] (128 bytes), mask says which bytes are the block's
// pairs'.
type yuvWin struct {
	off  int32
	mask uint64
	idx  [64]uint8
}

// yuvPairChunk is the pixel pairs yuvConvPairs gathers per round, into stack buffers (~1.8 KB).
const yuvPairChunk = 128

// yuvSparseGap: in the sparse choice, runs of tap pairs closer than this (pixels) join into one
// span (converting the gap costs less than a second run or more pairs); yuvRunCall is the cost
// of one dense run beyond its steps, in pixels of dense conversion (the constants, bounds checks
// and VZEROUPPER of a yuvConv call: about two steps, measured on the 1080p crop task's 25 runs).
const (
	yuvSparseGap = 4
	yuvRunCall   = 32
)

// setColumns sets yp.runs and yp.sparse from the source columns cols (ascending, distinct) that the
// plan's taps read, in a w-pixel image, and the VBMI converter's tables for the sparse pairs
// (buildBlocks). Two choices, costed in pixels of dense conversion (a run: its 16-pixel steps and
// yuvRunCall; a sparse pixel: cost):
//   - merged: the tap pairs' spans merged across gaps under yuvRunGap, all dense runs;
//   - sparse: the tap pairs' spans joined across gaps under yuvSparseGap; those of yuvDenseRun
//     pixels or more are dense runs, the rest sparse pairs.
//
// yuvAuto takes the cheaper (merged on a tie); yuvDense and yuvSparse force one.
func (yp *yuvPlan) setColumns(cols []int, w, cost int, mode yuvColMode) {
	yp.runs, yp.sparse = nil, nil
	defer yp.buildBlocks(w)
	join := func(gap int) (spans [][2]int) {
		for _, x := range cols {
			x0, x1 := x&^1, (x+2)&^1 // whole chroma pairs (W is even for every format)
			if n := len(spans); n > 0 && x0 <= spans[n-1][1]+gap {
				spans[n-1][1] = max(spans[n-1][1], x1)
			} else {
				spans = append(spans, [2]int{x0, x1})
			}
		}
		return spans
	}
	runCost := func(r [2]int) int { return (r[1]-r[0]+15)&^15 + yuvRunCall }
	merged := join(yuvRunGap)
	mergedCost := 0
	for _, r := range merged {
		mergedCost += runCost(r)
	}
	var runs [][2]int
	var sparse []int32
	sparseCost := 0
	for _, r := range join(yuvSparseGap - 1) {
		if r[1]-r[0] >= yuvDenseRun {
			runs = append(runs, r)
			sparseCost += runCost(r)
			continue
		}
		for x := r[0]; x < r[1]; x += 2 {
			sparse = append(sparse, int32(x/2))
		}
		sparseCost += (r[1] - r[0]) * cost
	}
	if mode == yuvDense || mode == yuvAuto && sparseCost >= mergedCost {
		yp.runs = merged
		return
	}
	yp.runs, yp.sparse = runs, sparse
}

// yuvCompact is the layout of yuvConvPairs' gathered chunk, read by the dense converter: Y samples
// in a row of bytes, chroma as byte pairs (semi-planar), V first where vFirst (nv21's own order,
// gathered as it lies), else U first.
func yuvCompact(c yuvCoef, vFirst bool) *yuvPlan {
	if vFirst {
		return &yuvPlan{coef: c, kind: yuvSemi, uOff: 1, vOff: 0, yStep: 1, cStep: 2}
	}
	return &yuvPlan{coef: c, kind: yuvSemi, uOff: 0, vOff: 1, yStep: 1, cStep: 2}
}

// yuvConvPairs converts the pixel pairs ps (ascending; pair q is pixels 2q and 2q+1) of luma row ys0
// into d0 and, when d1 is not nil, of ys1 into d1, both rows sharing the chroma row us/vs: the
// bytes yuvConvScalar writes for each pair, at d[6q:6q+6]; the 2 bytes after a pair whose next
// pair is not listed may change too (the SIMD path's 8-byte stores: d needs 2 bytes of slack
// after the last pair), no other byte of d. The slices are
// as yuvConvScalar's; yp.compact is yuvCompact(yp.coef, nv21).
// With the SIMD converter (k.yuvSIMD), rounds of yuvPairChunk pairs: the pairs' Y (each row) and
// U, V samples gathered into compact stack buffers, those converted by k.yuvConv as one
// semi-planar span (the same arithmetic per pixel), and each pair's 6 bytes copied to its place.
// Without, yuvConvScalar per pair. Bounds are checked once per call (ps ascends: its last pair is
// the furthest), then the loops read and write through pointers.
func (k *kernelSet) yuvConvPairs(d0, d1, ys0, ys1, us, vs []uint8, ps []int32, yp *yuvPlan) {
	if len(ps) == 0 || k.yuvConvPairsVector(d0, d1, ys0, ys1, us, vs, ps, yp) {
		return
	}
	if !k.yuvSIMD() {
		for _, q := range ps {
			x := 2 * int(q)
			yuvConvScalar(d0, d1, ys0, ys1, us, vs, x, x+2, yp)
		}
		return
	}
	yStep, cStep := yp.yStep, yp.cStep
	last := int(ps[len(ps)-1])
	_, _, _, _ = d0[6*last+7], ys0[(2*last+1)*yStep], us[last*cStep], vs[last*cStep]
	if ps[0] < 0 {
		panic("yuvConvPairs: negative pair index")
	}
	if d1 != nil {
		_, _ = d1[6*last+7], ys1[(2*last+1)*yStep]
	}
	dp0, dp1 := unsafe.Pointer(unsafe.SliceData(d0)), unsafe.Pointer(unsafe.SliceData(d1))
	yq0, yq1 := unsafe.Pointer(unsafe.SliceData(ys0)), unsafe.Pointer(unsafe.SliceData(ys1))
	up, vp := unsafe.Pointer(unsafe.SliceData(us)), unsafe.Pointer(unsafe.SliceData(vs))
	// the chunk: per pair its two Y samples of each row and its chroma pair, as 16-bit words (low
	// byte first: the byte order yp.compact reads); the converted RGB, 6 bytes a pair
	var yc0, yc1, cc [yuvPairChunk]uint16
	var tc0, tc1 [6*yuvPairChunk + 8]uint8 // + the converter's store spill
	var t1 []uint8
	if d1 != nil {
		t1 = tc1[:]
	}
	cp := up // semi-planar: the pair's first byte (U for nv12, V for nv21)
	if yp.vOff < yp.uOff {
		cp = vp
	}
	for len(ps) > 0 {
		m := min(len(ps), yuvPairChunk)
		chunk := ps[:m]
		ps = ps[m:]
		switch {
		case yp.kind == yuvSemi: // Y pairs and chroma pairs are 16-bit words at 2q
			for i, q := range chunk {
				yc0[i&(yuvPairChunk-1)] = *(*uint16)(unsafe.Add(yq0, 2*int(q)))
				cc[i&(yuvPairChunk-1)] = *(*uint16)(unsafe.Add(cp, 2*int(q)))
			}
		case yp.kind == yuvPlanar:
			for i, q := range chunk {
				yc0[i&(yuvPairChunk-1)] = *(*uint16)(unsafe.Add(yq0, 2*int(q)))
				cc[i&(yuvPairChunk-1)] = uint16(*(*uint8)(unsafe.Add(up, int(q)))) | uint16(*(*uint8)(unsafe.Add(vp, int(q))))<<8
			}
		default: // packed: a pixel pair is 4 bytes at 4q, the samples at yp.pk
			s0, s1, su, sv := 8*yp.pk[0], 8*yp.pk[2], 8*yp.pk[1], 8*yp.pk[3]
			pp := unsafe.Add(yq0, -yp.pk[0])
			for i, q := range chunk {
				v := *(*uint32)(unsafe.Add(pp, 4*int(q)))
				yc0[i&(yuvPairChunk-1)] = uint16(uint8(v>>s0)) | uint16(uint8(v>>s1))<<8
				cc[i&(yuvPairChunk-1)] = uint16(uint8(v>>su)) | uint16(uint8(v>>sv))<<8
			}
		}
		if d1 != nil { // 4:2:0 only: Y pairs are 16-bit words
			for i, q := range chunk {
				yc1[i&(yuvPairChunk-1)] = *(*uint16)(unsafe.Add(yq1, 2*int(q)))
			}
		}
		b0, b1 := unsafe.Slice((*uint8)(unsafe.Pointer(&yc0)), 2*m), unsafe.Slice((*uint8)(unsafe.Pointer(&yc1)), 2*m)
		bc := unsafe.Slice((*uint8)(unsafe.Pointer(&cc)), 2*m)
		cu, cv := bc, bc[1:] // the chunk's U and V, in yp.compact's order
		if yp.compact.vOff < yp.compact.uOff {
			cu, cv = cv, cu
		}
		k.yuvConv(tc0[:], t1, b0, b1, cu, cv, 0, 2*m, yp.compact)
		// 8-byte stores, the last 2 bytes spilling into pair q+1: a later pair of ps, or a pair no
		// run holds (runs are maximal, so the one after a sparse pair never starts a run), or the
		// row's slack
		tp0, tp1 := unsafe.Pointer(&tc0), unsafe.Pointer(&tc1)
		for i, q := range chunk {
			*(*uint64)(unsafe.Add(dp0, 6*int(q))) = *(*uint64)(unsafe.Add(tp0, 6*(i&(yuvPairChunk-1))))
		}
		if d1 != nil {
			for i, q := range chunk {
				*(*uint64)(unsafe.Add(dp1, 6*int(q))) = *(*uint64)(unsafe.Add(tp1, 6*(i&(yuvPairChunk-1))))
			}
		}
	}
}
