package engine

import "math"

// "area" is cv2.resize INTER_AREA. When neither axis grows it averages the source pixels each output
// pixel covers (computeResizeAreaTab, or resizeAreaFast_ for integer factors); when either axis grows,
// OpenCV switches both axes to a bilinear-like rule (area_mode in resizeGeneric), and so does goprep.

// areaRule is how a plan's area resize runs; areaNone for every other kind.
type areaRule int

const (
	areaNone   areaRule = iota
	areaLinear          // some axis grows: bilinear-like area_mode
	areaTable           // both axes shrink: computeResizeAreaTab
	areaFast            // both factors are integers: resizeAreaFast_
)

// planArea picks the rule for a resize of inH x inW and returns the integer block size of areaFast.
func planArea(r ResizeSpec, inH, inW int) (areaRule, int) {
	if r.Kind != "area" {
		return areaNone, 0
	}
	if !areaDown(inH, inW, r.H, r.W) {
		return areaLinear, 0
	}
	fy, okY := areaFactor(inH, r.H)
	fx, okX := areaFactor(inW, r.W)
	if okX && okY {
		return areaFast, fx * fy
	}
	return areaTable, 0
}

// areaDown reports whether an area resize of inH x inW to outH x outW uses true area averaging:
// OpenCV's scale_x >= 1 && scale_y >= 1, with scale = 1/(dst/src) in float64.
func areaDown(inH, inW, outH, outW int) bool {
	return 1.0/(float64(outH)/float64(inH)) >= 1 && 1.0/(float64(outW)/float64(inW)) >= 1
}

// areaFactor is OpenCV's is_area_fast test for one axis: the scale is an integer to within DBL_EPSILON.
func areaFactor(in, out int) (int, bool) {
	s := 1.0 / (float64(out) / float64(in))
	k := int(math.RoundToEven(s))
	return k, math.Abs(s-float64(k)) < 2.220446049250313e-16
}

// areaTaps is computeResizeAreaTab: each output coordinate reads the source cells [dx*scale,
// (dx+1)*scale), whole cells with weight 1/cellWidth and the partial cells at either end with their
// covered fraction (cells covering less than 1e-3 are dropped), weights rounded to float32. The taps
// are summed in this order in float32, as ResizeArea_Invoker does.
func areaTaps(in, out int) taps {
	scale := 1.0 / (float64(out) / float64(in))
	idx := make([][]int32, out)
	wf := make([][]float32, out)
	k := 1
	for dx := 0; dx < out; dx++ {
		fsx1 := float64(float64(dx) * scale)
		fsx2 := fsx1 + scale
		cell := math.Min(scale, float64(in)-fsx1)
		sx1, sx2 := int(math.Ceil(fsx1)), int(math.Floor(fsx2))
		sx2 = min(sx2, in-1)
		sx1 = min(sx1, sx2)
		if float64(sx1)-fsx1 > 1e-3 {
			idx[dx] = append(idx[dx], int32(sx1-1))
			wf[dx] = append(wf[dx], float32((float64(sx1)-fsx1)/cell))
		}
		for sx := sx1; sx < sx2; sx++ {
			idx[dx] = append(idx[dx], int32(sx))
			wf[dx] = append(wf[dx], float32(1.0/cell))
		}
		if fsx2-float64(sx2) > 1e-3 {
			idx[dx] = append(idx[dx], int32(sx2))
			wf[dx] = append(wf[dx], float32(math.Min(math.Min(fsx2-float64(sx2), 1), cell)/cell))
		}
		k = max(k, len(idx[dx]))
	}
	t := taps{K: k, Idx: make([]int32, k*out), WF: make([]float32, k*out), Cnt: make([]int32, out)}
	for dx := 0; dx < out; dx++ {
		n := len(idx[dx])
		t.Cnt[dx] = int32(max(n, 1))
		for j := 0; j < k; j++ {
			switch {
			case j < n:
				t.Idx[dx*k+j], t.WF[dx*k+j] = idx[dx][j], wf[dx][j]
			case n > 0:
				t.Idx[dx*k+j] = idx[dx][n-1] // weight 0, a real pixel
			}
		}
	}
	return t
}

// areaFastTaps is resizeAreaFast_ for an integer factor f: output dx sums source f*dx .. f*dx+f-1 with
// weight 1 (exact in float32), and the plan's final step divides (see areaFinal).
func areaFastTaps(in, out, f int) taps {
	t := taps{K: f, Idx: make([]int32, f*out), WF: make([]float32, f*out), Cnt: make([]int32, out)}
	for dx := 0; dx < out; dx++ {
		t.Cnt[dx] = int32(f)
		for j := 0; j < f; j++ {
			t.Idx[dx*f+j] = int32(min(f*dx+j, in-1))
			t.WF[dx*f+j] = 1
		}
	}
	return t
}

// areaLinearTaps is resizeGeneric's area_mode coordinate rule with INTER_LINEAR's 11-bit weights:
// sx = floor(dx*scale), fx = (float)((dx+1) - (sx+1)/scale), fx <= 0 ? 0 : fx - floor(fx). The border
// handling and the fixed-point arithmetic are INTER_LINEAR's (linearTapsCV).
func areaLinearTaps(in, out int, vertical bool) taps {
	t := taps{K: 2, Idx: make([]int32, 2*out), WI: make([]int32, 2*out), WF: make([]float32, 2*out)}
	inv := float64(out) / float64(in)
	scale := 1.0 / inv
	for o := 0; o < out; o++ {
		s := int(math.Floor(float64(o) * scale))
		f := float32(float64(o+1) - float64(float64(s+1)*inv))
		if f <= 0 {
			f = 0
		} else {
			f -= float32(math.Floor(float64(f)))
		}
		if !vertical {
			if s < 0 {
				s, f = 0, 0
			}
			if s >= in-1 {
				s, f = in-1, 0
			}
		}
		t.Idx[2*o], t.Idx[2*o+1] = int32(min(max(s, 0), in-1)), int32(min(max(s+1, 0), in-1))
		t.WI[2*o] = int32(math.RoundToEven(float64((1 - f) * cvCoefScale)))
		t.WI[2*o+1] = int32(math.RoundToEven(float64(f * cvCoefScale)))
		t.WF[2*o], t.WF[2*o+1] = 1-f, f
	}
	return t
}

// areaEnd is how the float tap sums of a plan become its result: resizeAreaFast_'s last step for an
// integer-factor area plan, nothing for any other. One rule for the CPU rows (resizeRowF32, finalU8)
// and the GPU descriptor (gpu_desc.go), so both engines end alike.
type areaEnd int

const (
	endNone  areaEnd = iota // the sum is the result (uint8: saturate_cast)
	endScale                // sum * inv in float32 (uint8: then saturate_cast)
	endQuad                 // uint8 2x2 blocks: ((int)sum + 2) >> 2, the rule of OpenCV's SIMD code
)

// areaEnd returns the plan's end rule and endScale's factor, 1/block rounded to float32.
func (p *Plan) areaEnd() (areaEnd, float32) {
	switch {
	case p.area != areaFast:
		return endNone, 1
	case p.InDType() == U8 && p.areaBlock == 4 && p.cols.Taps.K == 2:
		return endQuad, 1
	}
	return endScale, float32(1 / float64(p.areaBlock))
}
