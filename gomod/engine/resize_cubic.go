package engine

import "math"

// Bicubic tables. Three libraries define "bicubic", and each is matched on its own dtype:
//   - antialias=True (both dtypes): Pillow's BICUBIC, a = -0.5 with the support widened by the downscale
//     factor (pillowTaps with pillowCubic). PyTorch's antialiased bicubic uses the same filter.
//   - uint8 without antialias: cv2.resize INTER_CUBIC, a = -0.75, 4 taps, border replicate.
//   - float32 without antialias: torch.nn.functional.interpolate(mode="bicubic", align_corners=False),
//     a = -0.75, 4 taps, border replicate.

// pillowCubic is Pillow's bicubic_filter (Keys' cubic with a = -0.5, support 2).
func pillowCubic(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	if x < 1 {
		return float64((float64((a+2)*x)-(a+3))*x*x) + 1
	}
	if x < 2 {
		return (float64((float64((x-5)*x)+8)*x) - 4) * a
	}
	return 0
}

// cubicTapsCV is cv::resize INTER_CUBIC's coordinate and coefficient tables: fx = (float)((dx+0.5)*scale
// - 0.5) from a double scale, interpolateCubic in float32 (A = -0.75, the last weight 1 - the others),
// and the 4 source indices sx-1 .. sx+2 clamped to the image (OpenCV replicates the border).
// OpenCV 4 rounded these weights to 11-bit integers; OpenCV 5 (the cv2 this is tested against) keeps
// them in float32: with the weights kept as float32 and the sums in float32, goprep matches cv2 5.0
// to within 1 level with > 99.99% of values exact on the test photographs (integer weights gave 96-98%).
func cubicTapsCV(in, out int) taps {
	t := taps{K: 4, Idx: make([]int32, 4*out), WF: make([]float32, 4*out)}
	scale := 1.0 / (float64(out) / float64(in))
	const A = float32(-0.75)
	for o := 0; o < out; o++ {
		fx := float32(float64((float64(o)+0.5)*scale) - 0.5)
		sx := int(math.Floor(float64(fx)))
		x := fx - float32(sx)
		x1, y := x+1, 1-x
		c0 := float32(float32(float32(float32(float32(A*x1)-5*A)*x1)+8*A)*x1) - 4*A
		c1 := float32(float32(float32(float32((A+2)*x)-(A+3))*x)*x) + 1
		c2 := float32(float32(float32(float32((A+2)*y)-(A+3))*y)*y) + 1
		c3 := float32(float32(1-c0)-c1) - c2
		for k, c := range [4]float32{c0, c1, c2, c3} {
			t.Idx[4*o+k] = int32(min(max(sx-1+k, 0), in-1))
			t.WF[4*o+k] = c
		}
	}
	return t
}

// cubicTapsTorch is PyTorch's upsample_bicubic2d (align_corners=False): real = scale*(o+0.5) - 0.5 with
// no clamp (the cubic flag of area_pixel_compute_source_index), t = real - floor(real), weights
// cubic_convolution2(t+1), cubic_convolution1(t), cubic_convolution1(1-t), cubic_convolution2(2-t) with
// A = -0.75, and indices floor-1 .. floor+2 clamped (upsample_get_value_bounded). Coordinates and
// weights are computed in float64 and rounded once to float32, so the result stays within 1e-5 of the
// data range of the float64 formula (PyTorch itself computes them in float32).
func cubicTapsTorch(in, out int) taps {
	t := taps{K: 4, Idx: make([]int32, 4*out), WF: make([]float32, 4*out)}
	scale := float64(in) / float64(out)
	for o := 0; o < out; o++ {
		real := float64(scale*(float64(o)+0.5)) - 0.5
		i0 := math.Floor(real)
		w := torchCubicWeights(real - i0)
		for k := 0; k < 4; k++ {
			t.Idx[4*o+k] = int32(min(max(int(i0)-1+k, 0), in-1))
			t.WF[4*o+k] = float32(w[k])
		}
	}
	return t
}

// torchCubicFilter is PyTorch's HelperInterpCubic::aa_filter with A = -0.75 (its uint8 bicubic without
// antialias), in its operation order: the products rounded to float64 on their own (no fused
// multiply-add), as C++ computes them.
func torchCubicFilter(x float64) float64 {
	const A = -0.75
	x = math.Abs(x)
	if x < 1 {
		a := float64((A+2)*x) - (A + 3)
		return float64(float64(a*x)*x) + 1
	}
	if x < 2 {
		a := float64(A*x) - 5*A
		b := float64(a*x) + 8*A
		return float64(b*x) - 4*A
	}
	return 0
}

// torchCubicWeights is PyTorch's get_cubic_upsample_coefficients with A = -0.75.
func torchCubicWeights(t float64) [4]float64 {
	const A = -0.75
	conv1 := func(x float64) float64 { return float64((float64((A+2)*x)-(A+3))*x*x) + 1 }
	conv2 := func(x float64) float64 { return float64((float64((float64(A*x)-5*A)*x)+8*A)*x) - 4*A }
	return [4]float64{conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)}
}
