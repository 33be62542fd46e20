package engine

// Colour adjustments with torchvision's tensor numerics (v1, v2) on float32 images (values in
// [0, 1], HWC, in place): what ColorJitter and RandomGrayscale do to float tensors. The reference is
// _color_kernels.py's "v1" and "v2" on float32 arrays (equal bit for bit:
// tests/test_train_color_go.py); it differs from torchvision by the contrast mean's float32
// rounding (within 1.2e-7, docs/perf/2026-12-06-train-color.md). The luma is not rounded (the gray
// image stays float), every blend is clamped to [0, 1], a NaN stays NaN.

// ColorTensorF32 applies steps in order to img (h x w x c float32, c 1 or 3, contiguous HWC) with
// v1's (v2 false) or v2's numerics. Saturation, hue and grayscale leave a 1-channel image as it is.
func ColorTensorF32(img []float32, h, w, c int, v2 bool, steps []ColorStep) error {
	img, err := colorImage(img, h, w, c, steps)
	if err != nil || len(img) == 0 {
		return err
	}
	for _, s := range steps {
		r, q := float32(s.Factor), float32(1.0-s.Factor)
		switch s.Op {
		case ColorBrightness:
			if !v2 {
				blendConstF32(img, 0, r, q, false) // v1: _blend with 0
				break
			}
			for i, x := range img {
				img[i] = clamp01(float32(x * r))
			}
		case ColorContrast:
			blendConstF32(img, grayMeanF32(img, c, v2), r, q, v2)
		case ColorSaturation:
			for i := 0; c == 3 && i+2 < len(img); i += 3 {
				g := lumaF32(img[i], img[i+1], img[i+2], v2)
				img[i], img[i+1], img[i+2] = blendF32(img[i], g, r, q, v2), blendF32(img[i+1], g, r, q, v2),
					blendF32(img[i+2], g, r, q, v2)
			}
		case ColorHue:
			for i := 0; c == 3 && i+2 < len(img); i += 3 {
				img[i], img[i+1], img[i+2] = hueTensor(img[i], img[i+1], img[i+2], r, v2)
			}
		case ColorGray:
			for i := 0; c == 3 && i+2 < len(img); i += 3 {
				l := lumaF32(img[i], img[i+1], img[i+2], v2)
				img[i], img[i+1], img[i+2] = l, l, l
			}
		}
	}
	return nil
}

// lumaF32 is torchvision's float luma of one float32 pixel, unrounded: v1 0.2989 R + 0.587 G +
// 0.114 B left to right, v2 through two fused multiply-adds (fmaRound32).
func lumaF32(r, g, b float32, v2 bool) float32 {
	if v2 {
		return fmaRound32(b, lumB, fmaRound32(g, lumG, float32(r*lumR)))
	}
	return float32(float32(lumR*r)+float32(lumG*g)) + float32(lumB*b)
}

// blendF32 is torchvision's _blend of float32 x with b at ratio (r = ratio, q = 1 - ratio as
// float32): v1 r*x + q*b, v2 fma(b, q, x*r); clamped to [0, 1].
func blendF32(x, b, r, q float32, v2 bool) float32 {
	if v2 {
		return clamp01(fmaRound32(b, q, float32(x*r)))
	}
	return clamp01(float32(r*x) + float32(q*b))
}

// blendConstF32 is blendF32 of every value with the constant b, its product with q taken once (the
// same float32 rounding for v1, the exact float64 product for v2).
func blendConstF32(img []float32, b, r, q float32, v2 bool) {
	if v2 {
		bq := float64(float64(b) * float64(q)) // exact; rounded explicitly so that it is not fused
		for i, x := range img {
			img[i] = clamp01(float32(bq + float64(float32(x*r))))
		}
		return
	}
	bq := float32(q * b)
	for i, x := range img {
		img[i] = clamp01(float32(r*x) + bq)
	}
}

// grayMeanF32 is the contrast's mean of the gray image (the channel of a 1-channel image, else
// each pixel's lumaF32) as the reference computes it, np.mean(g, dtype=float64) rounded to float32:
// NumPy's float64 sum over buffers of 8192 values (its iterator's cast buffer), each summed
// pairwise (numpySum), divided by the count.
func grayMeanF32(img []float32, c int, v2 bool) float32 {
	var buf [8192]float32
	n := len(img) / c
	sum := 0.0
	for k := 0; k < n; k += len(buf) {
		m := min(len(buf), n-k)
		for j := range m {
			if c == 1 {
				buf[j] = img[k+j]
			} else {
				p := 3 * (k + j)
				buf[j] = lumaF32(img[p], img[p+1], img[p+2], v2)
			}
		}
		sum += numpySum(buf[:m])
	}
	return float32(sum / float64(n))
}

// numpySum is NumPy's pairwise_sum of float32 values in float64 (loops_utils.h): under 8 values a
// running sum, up to 128 eight running sums combined as ((0+1)+(2+3))+((4+5)+(6+7)) then the rest,
// beyond that the two halves (split at a multiple of 8) summed apart.
func numpySum(a []float32) float64 {
	n := len(a)
	if n < 8 {
		res := 0.0
		for _, x := range a {
			res += float64(x)
		}
		return res
	}
	if n <= 128 {
		var r [8]float64
		for j := range r {
			r[j] = float64(a[j])
		}
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += float64(a[i+j])
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += float64(a[i])
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return numpySum(a[:n2]) + numpySum(a[n2:])
}
