package engine

// Colour adjustments with torchvision's tensor numerics on uint8 images (HWC, in place): v1's
// torchvision.transforms (_functional_tensor: ratio*a + (1 - ratio)*b in float32, clamped,
// truncated) and v2's torchvision.transforms.v2 (a.mul(r).add_(b, alpha=1 - r), which PyTorch fuses
// into one rounding; the luma floored). The reference is _color_kernels.py's "v1" and "v2" numerics
// (tests/test_train_color_go.py: bit for bit). Hue is the float32 HSV round trip of color_hsv.go;
// float32 images are color_float.go's.
//
// Products feeding an addition are rounded explicitly (scripts/check_fma.sh); v2's fused
// multiply-add is float64 arithmetic rounded once to float32: the product of two float32 values is
// exact in float64, so the one rounding is the float64 sum's, as the NumPy reference computes it.

import "math"

const (
	lumR, lumG, lumB = float32(0.2989), float32(0.587), float32(0.114)
)

// lumaTensor is torchvision's float luma of one pixel: v1 0.2989 R + 0.587 G + 0.114 B in float32
// left to right, v2 the same through two fused multiply-adds; each product from a table (lumTab).
func lumaTensor(r, g, b uint8, v2 bool) float32 {
	t := &lumTab
	if !v2 {
		return float32(t.r32[r]+t.g32[g]) + t.b32[b]
	}
	return float32(t.b64[b] + float64(float32(t.g64[g]+float64(t.r32[r]))))
}

// lumTab holds the luma's products of each byte: float32 (rounded, v1 and v2's first) and float64
// (exact, v2's fused ones).
var lumTab = newLumaTables()

type lumaTables struct {
	r32, g32, b32 [256]float32
	g64, b64      [256]float64
}

func newLumaTables() (t lumaTables) {
	for v := range 256 {
		f := float32(v)
		t.r32[v], t.g32[v], t.b32[v] = float32(lumR*f), float32(lumG*f), float32(lumB*f)
		t.g64[v], t.b64[v] = float64(f)*float64(lumG), float64(f)*float64(lumB)
	}
	return t
}

// fmaRound32 is x*y + z of float32 values rounded once (the product is exact in float64).
func fmaRound32(x, y, z float32) float32 {
	return float32(float64(float64(x)*float64(y)) + float64(z))
}

// grayTensor is the luma image torchvision blends with or averages, as an integer-valued float32:
// v1 truncated to uint8, v2 floored (the same for these non-negative values).
func grayTensor(r, g, b uint8, v2 bool) float32 {
	return float32(int32(lumaTensor(r, g, b, v2)))
}

// blendTensor is torchvision's _blend of uint8 x with b at ratio (r = ratio, q = 1 - ratio as
// float32): v1 r*x + q*b, v2 fma(b, q, x*r); clamped to [0, 255], truncated.
func blendTensor(x, b, r, q float32, v2 bool) uint8 {
	var t float32
	if v2 {
		t = fmaRound32(b, q, float32(x*r))
	} else {
		t = float32(r*x) + float32(q*b)
	}
	return truncU8(t)
}

// ColorTensor applies steps in order to img (h x w x c, c 1 or 3, contiguous HWC) with v1's (v2
// false) or v2's numerics. Saturation, hue and grayscale leave a 1-channel image as it is.
func ColorTensor(img []uint8, h, w, c int, v2 bool, steps []ColorStep) error {
	img, err := colorImage(img, h, w, c, steps)
	if err != nil || len(img) == 0 {
		return err
	}
	for _, s := range steps {
		r, q := float32(s.Factor), float32(1.0-s.Factor)
		switch s.Op {
		case ColorBrightness:
			var lut [256]uint8
			for v := range lut {
				if v2 {
					lut[v] = truncU8(float32(v) * r)
				} else {
					lut[v] = blendTensor(float32(v), 0, r, q, false)
				}
			}
			for i, v := range img {
				img[i] = lut[v]
			}
		case ColorContrast:
			// the gray values are integers: their float64 sum is exact in any order (NumPy's pairwise mean)
			num := numericsV1
			if v2 {
				num = numericsV2
			}
			mean := float32(float64(graySum(img, c, num)) / float64(h*w))
			var lut [256]uint8
			for v := range lut {
				lut[v] = blendTensor(float32(v), mean, r, q, v2)
			}
			for i, v := range img {
				img[i] = lut[v]
			}
		case ColorSaturation:
			if c == 3 {
				saturateTensor(img, s.Factor, v2)
			}
		case ColorHue:
			if c == 3 {
				hueTensorU8(img, s.Factor, v2)
			}
		case ColorGray:
			for i := 0; c == 3 && i+2 < len(img); i += 3 {
				l := uint8(lumaTensor(img[i], img[i+1], img[i+2], v2)) // the cast to uint8: truncated
				img[i], img[i+1], img[i+2] = l, l, l
			}
		}
	}
	return nil
}

// saturateTensor is torchvision's adjust_saturation on RGB uint8 (a blend with each pixel's gray g):
// the products of a byte with the ratio and with 1 - ratio from tables of 256, summed as blendTensor
// sums them, and clamped as integers (the sum is inside int32 for factors up to 1e6; beyond,
// blendTensor itself).
func saturateTensor(img []uint8, factor float64, v2 bool) {
	r, q := float32(factor), float32(1.0-factor)
	if math.Abs(factor) > 1e6 {
		for i := 0; i+2 < len(img); i += 3 {
			g := grayTensor(img[i], img[i+1], img[i+2], v2)
			img[i] = blendTensor(float32(img[i]), g, r, q, v2)
			img[i+1] = blendTensor(float32(img[i+1]), g, r, q, v2)
			img[i+2] = blendTensor(float32(img[i+2]), g, r, q, v2)
		}
		return
	}
	var xr, gq [256]float64 // v1: float32(r*x), float32(q*g); v2: float32(x*r), g*q exact
	for v := range 256 {
		f := float32(v)
		xr[v] = float64(float32(f * r))
		if v2 {
			gq[v] = float64(f) * float64(q)
		} else {
			gq[v] = float64(float32(q * f))
		}
	}
	for i := 0; i+2 < len(img); i += 3 {
		g := int32(lumaTensor(img[i], img[i+1], img[i+2], v2)) // truncated: the gray image
		if v2 {
			img[i] = clip255(int32(float32(gq[g] + xr[img[i]])))
			img[i+1] = clip255(int32(float32(gq[g] + xr[img[i+1]])))
			img[i+2] = clip255(int32(float32(gq[g] + xr[img[i+2]])))
		} else {
			img[i] = clip255(int32(float32(xr[img[i]]) + float32(gq[g])))
			img[i+1] = clip255(int32(float32(xr[img[i+1]]) + float32(gq[g])))
			img[i+2] = clip255(int32(float32(xr[img[i+2]]) + float32(gq[g])))
		}
	}
}
