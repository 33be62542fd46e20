package engine

import "math"

// taps is one axis of a resize: output coordinate o reads K source coordinates Idx[o*K+t] with weights
// WI (fixed point, uint8 images) or WF (float32 images). Unused taps repeat the last index with weight 0,
// so every coordinate has exactly K taps and inner loops have no per-coordinate branches.
type taps struct {
	K   int
	Idx []int32
	WI  []int32
	WF  []float32
	Cnt []int32 // taps in use per coordinate (the rest pad to K); nil when all K are
}

// OpenCV's INTER_LINEAR fixed point: 11-bit coefficients in each direction (INTER_RESIZE_COEF_BITS).
const cvCoefBits = 11
const cvCoefScale = 1 << cvCoefBits

// Pillow's resampling fixed point (PRECISION_BITS = 32 - 8 - 2).
const pilPrecisionBits = 22

// linearTapsCV reproduces cv::resize's INTER_LINEAR coordinate and coefficient tables: the source
// position is computed in float32 from a double scale (1/(dst/src)), clamped at both borders, and the
// coefficients are rounded to 11-bit integers. Matching this bit for bit is what makes goprep agree with
// cv2.resize on uint8 images. OpenCV clamps the weight to the border only horizontally; vertically it
// keeps the fractional weight and clamps the row index, so a border row blends one row with itself
// through the truncating vertical arithmetic (which shifts some values by one).
func linearTapsCV(in, out int, vertical bool) taps {
	t := taps{K: 2, Idx: make([]int32, 2*out), WI: make([]int32, 2*out)}
	scale := 1.0 / (float64(out) / float64(in))
	for o := 0; o < out; o++ {
		f := float32(float64((float64(o)+0.5)*scale) - 0.5)
		s := int(math.Floor(float64(f)))
		f -= float32(s)
		if vertical {
			s0, s1 := min(max(s, 0), in-1), min(max(s+1, 0), in-1)
			t.Idx[2*o], t.Idx[2*o+1] = int32(s0), int32(s1)
			t.WI[2*o] = int32(math.RoundToEven(float64((1 - f) * cvCoefScale)))
			t.WI[2*o+1] = int32(math.RoundToEven(float64(f * cvCoefScale)))
			continue
		}
		if s < 0 {
			s, f = 0, 0
		}
		if s >= in-1 {
			s, f = in-1, 0
		}
		s1 := min(s+1, in-1)
		t.Idx[2*o], t.Idx[2*o+1] = int32(s), int32(s1)
		t.WI[2*o] = int32(math.RoundToEven(float64((1 - f) * cvCoefScale)))
		t.WI[2*o+1] = int32(math.RoundToEven(float64(f * cvCoefScale)))
	}
	return t
}

// linearTapsTorch is PyTorch's upsample_bilinear2d (align_corners=False) index and weight formula.
// Coordinates are computed in float64 (PyTorch uses float32): at source coordinates in the hundreds,
// float32 loses ~3e-5 of a pixel, which moved results by 1.5e-5 of the data range in
// TestBilinearF32MatchesFloat64Reference; float64 keeps goprep within 1e-5 of the exact formula.
func linearTapsTorch(in, out int) taps {
	t := taps{K: 2, Idx: make([]int32, 2*out), WF: make([]float32, 2*out)}
	scale := float64(in) / float64(out)
	for o := 0; o < out; o++ {
		src := max(float64(scale*(float64(o)+0.5))-0.5, 0)
		i0 := int(src) // src >= 0, so truncation is floor
		l1 := min(max(src-float64(i0), 0), 1)
		i1 := min(i0+1, in-1)
		t.Idx[2*o], t.Idx[2*o+1] = int32(i0), int32(i1)
		t.WF[2*o], t.WF[2*o+1] = float32(1-l1), float32(l1)
	}
	return t
}

// nearestTaps is cv::resize INTER_NEAREST: src = min(floor(dst * (1/(dst_size/src_size))), src_size-1).
// Equal sizes give the identity, which is how "no resize" is executed.
func nearestTaps(in, out int) taps {
	t := taps{K: 1, Idx: make([]int32, out), WI: make([]int32, out), WF: make([]float32, out)}
	scale := 1.0 / (float64(out) / float64(in))
	for o := 0; o < out; o++ {
		s := min(int(math.Floor(float64(o)*scale)), in-1)
		t.Idx[o], t.WI[o], t.WF[o] = int32(s), 1, 1
	}
	return t
}

// antialiasTaps is Pillow's precompute_coeffs for the bilinear (triangle) filter: the filter support is
// widened by the downscale factor, weights are normalised per output pixel, and uint8 weights are
// rounded to 22-bit fixed point. Upscaling keeps support 1, which is plain bilinear inside the image.
func antialiasTaps(in, out int) taps { return pillowTaps(in, out, triangleFilter, 1) }

// triangleFilter is Pillow's bilinear_filter.
func triangleFilter(x float64) float64 {
	x = math.Abs(x)
	if x < 1 {
		return 1 - x
	}
	return 0
}

// pillowTaps is Pillow's precompute_coeffs plus normalize_coeffs_8bpc for any filter of the given
// support (1 for the triangle, 2 for bicubic, 3 for Lanczos): the support is widened by the downscale factor, the
// weights (computed in float64, as Pillow does) are normalised per output pixel, and uint8 weights are
// rounded to 22-bit fixed point away from zero, (int)(w*2^22 +- 0.5). PyTorch's antialiased float
// kernels (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa) use the same formula with interp_size/2 as
// support, so the float weights WF serve them too.
func pillowTaps(in, out int, filter func(float64) float64, filterSupport float64) taps {
	t, _ := pillowTapsAll(in, out, filter, filterSupport, false)
	return t
}

// pillowTapsF64 is pillowTaps plus the normalised float64 weights, laid out as WI (0 past Cnt).
func pillowTapsF64(in, out int, filter func(float64) float64, filterSupport float64) (taps, []float64) {
	return pillowTapsAll(in, out, filter, filterSupport, true)
}

// pillowTapsAll is pillowTaps, plus the float64 weights when f64 (else nil: pillowTaps, every
// antialiased plan's tables, need not allocate them).
func pillowTapsAll(in, out int, filter func(float64) float64, filterSupport float64, f64 bool) (taps, []float64) {
	scale := float64(in) / float64(out)
	filterScale := max(scale, 1.0)
	support := float64(filterSupport * filterScale) // rounded: it is added to center below (no FMA)
	k := int(math.Ceil(support))*2 + 1
	t := taps{K: k, Idx: make([]int32, k*out), WI: make([]int32, k*out), WF: make([]float32, k*out), Cnt: make([]int32, out)}
	w := make([]float64, k)
	var all []float64
	if f64 {
		all = make([]float64, k*out)
	}
	for o := 0; o < out; o++ {
		center := float64((float64(o) + 0.5) * scale)
		ss := 1.0 / filterScale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), in) - xmin
		xmax = min(xmax, k)
		t.Cnt[o] = int32(max(xmax, 1))
		var sum float64
		for x := 0; x < xmax; x++ {
			w[x] = filter(float64((float64(x+xmin) - center + 0.5) * ss))
			sum += w[x]
		}
		for x := 0; x < k; x++ {
			idx := o*k + x
			if x < xmax {
				if sum != 0 {
					w[x] /= sum
				}
				t.Idx[idx] = int32(xmin + x)
				if w[x] < 0 {
					t.WI[idx] = int32(-0.5 + float64(w[x]*(1<<pilPrecisionBits))) // Go's conversion truncates, as C's (int)
				} else {
					t.WI[idx] = int32(0.5 + float64(w[x]*(1<<pilPrecisionBits)))
				}
				t.WF[idx] = float32(w[x])
				if f64 {
					all[idx] = w[x]
				}
			} else {
				t.Idx[idx] = int32(xmin + max(xmax-1, 0))
			}
		}
	}
	return t, all
}

// torchU8Taps is pillowTaps with the uint8 weights rounded as PyTorch's uint8 antialias kernel
// (UpSampleKernel.cpp, compute_index_ranges_int16_weights; torchvision's tensor Resize and the Hugging
// Face torchvision-backed processors run it) rounds them: int16 weights with the largest precision p
// (at most 22) for which round(max weight * 2^p) stays below 2^15, rounded away from zero. Stored as
// 22-bit values (w_p << (22-p)), the Pillow kernels compute exactly PyTorch's sums: the bias 2^21 is
// 2^(p-1) << (22-p) and the shift by 22 is PyTorch's shift by p, so no kernel changes. Pillow's 22-bit
// weights put rare pixels 2 levels from PyTorch's after both passes (CLIP / ConvNeXt bicubic).
func torchU8Taps(in, out int, filter func(float64) float64, filterSupport float64) taps {
	t, w := pillowTapsF64(in, out, filter, filterSupport)
	var wmax float64
	for _, v := range w {
		wmax = max(wmax, v)
	}
	torchInt16Weights(&t, w, wmax)
	return t
}

// torchInt16Weights stores the float64 weights w as PyTorch's uint8 kernels round them
// (_compute_index_ranges_int16_weights): int16 at the largest precision p below 22 for which
// round(wmax * 2^(p+1)) stays below 2^15, rounded away from zero, kept as w_p << (22-p).
func torchInt16Weights(t *taps, w []float64, wmax float64) {
	p := 0
	for ; p < pilPrecisionBits; p++ {
		if int(0.5+float64(wmax*float64(int(1)<<(p+1)))) >= 1<<15 {
			break
		}
	}
	for i, v := range w {
		v = float64(v * float64(int(1)<<p))
		if v < 0 {
			t.WI[i] = int32(int16(v-0.5)) << (pilPrecisionBits - p)
		} else {
			t.WI[i] = int32(int16(v+0.5)) << (pilPrecisionBits - p)
		}
	}
}

// torchU8PlainTaps is PyTorch's uint8 bilinear / bicubic kernel without antialias
// (_compute_indices_min_size_weights; torchvision v2's Resize(antialias=False) on uint8 tensors):
// real = scale*(o+0.5) - 0.5 (clamped at 0 for bilinear), i = min(floorf(real), in-1) (floorf: the
// double rounded to float32 first), lambda = clamp(real - i, 0, 1); taps i-n/2+1 .. i+n/2 for n = 2
// (triangle) or 4 (cubic, A = -0.75, not Pillow's -0.5), weight filter(k+1-n/2 - lambda), taps out of
// the image added into the border tap in PyTorch's order, not normalised; then torchInt16Weights with
// wmax the largest value any weight took while being summed, as PyTorch tracks it. The kernels are the
// antialias ones (kPillow): H pass, rounding to uint8, V pass.
func torchU8PlainTaps(in, out int, cubic bool) taps {
	n, filter := 2, triangleFilter
	if cubic {
		n, filter = 4, torchCubicFilter
	}
	half := n / 2
	t := taps{K: n, Idx: make([]int32, n*out), WI: make([]int32, n*out), WF: make([]float32, n*out), Cnt: make([]int32, out)}
	w := make([]float64, n*out)
	scale := float64(in) / float64(out)
	var wmax float64
	for o := 0; o < out; o++ {
		src := float64(scale*(float64(o)+0.5)) - 0.5
		if !cubic && src < 0 {
			src = 0
		}
		i := min(int(math.Floor(float64(float32(src)))), in-1)
		lambda := min(max(src-float64(i), 0), 1)
		umin := i - half + 1
		lo := max(umin, 0)
		size := min(max(min(i+half+1, in)-lo, 0), n)
		t.Cnt[o] = int32(max(size, 1))
		ws := w[o*n : o*n+n]
		wi := 0
		for k := 0; k < n; k++ {
			if umin+k <= 0 {
				wi = 0
			} else if umin+k >= in-1 {
				wi = size - 1
			}
			ws[wi] += filter(float64(k+1-half) - lambda)
			wmax = max(wmax, ws[wi])
			wi++
		}
		for k := 0; k < n; k++ {
			t.Idx[o*n+k] = int32(lo + min(k, max(size-1, 0)))
			t.WF[o*n+k] = float32(ws[k])
		}
	}
	torchInt16Weights(&t, w, wmax)
	return t
}

// resizeTaps picks the table builder for one axis; area is the plan's area rule (resize_area.go).
func resizeTaps(r ResizeSpec, dt DType, in, out int, vertical bool, area areaRule) taps {
	switch {
	case r.Kind == "none" || r.Kind == "nearest":
		return nearestTaps(in, out)
	case r.Kind == "nearest-exact":
		return nearestExactTaps(in, out)
	case r.Kind == "nearest-pil":
		return nearestPILTaps(in, out)
	case r.Kind == "nearest-torch":
		return nearestTorchTaps(in, out)
	case area == areaFast:
		f, _ := areaFactor(in, out)
		return areaFastTaps(in, out, f)
	case area == areaTable:
		return areaTaps(in, out)
	case area == areaLinear:
		return areaLinearTaps(in, out, vertical)
	case r.Kind == "lanczos" && r.TorchU8 && dt == U8:
		return torchU8Taps(in, out, lanczosFilter, lanczosSupport)
	case r.Kind == "lanczos":
		return pillowTaps(in, out, lanczosFilter, lanczosSupport)
	case r.TorchU8 && !r.Antialias && dt == U8:
		return torchU8PlainTaps(in, out, r.Kind == "bicubic")
	case r.Kind == "bicubic" && r.Antialias && r.TorchU8 && dt == U8:
		return torchU8Taps(in, out, pillowCubic, 2)
	case r.Kind == "bicubic" && r.Antialias:
		return pillowTaps(in, out, pillowCubic, 2)
	case r.Kind == "bicubic" && dt == U8:
		return cubicTapsCV(in, out)
	case r.Kind == "bicubic":
		return cubicTapsTorch(in, out)
	case r.Antialias && r.TorchU8 && dt == U8:
		return torchU8Taps(in, out, triangleFilter, 1)
	case r.Antialias:
		return antialiasTaps(in, out)
	case dt == U8:
		return linearTapsCV(in, out, vertical)
	default:
		return linearTapsTorch(in, out)
	}
}
