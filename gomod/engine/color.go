package engine

// Colour adjustments with Pillow's numerics, on one HWC uint8 image in place: what torchvision's
// ColorJitter and RandomGrayscale do to PIL images (ImageEnhance's Image.blend in single precision
// truncated to uint8, convert("L")'s fixed-point luma, adjust_hue's round trip through Pillow's
// 8-bit HSV). The reference is python/goprep/transforms/_color_kernels.py ("pil" numerics), equal to
// Pillow bit for bit; these kernels equal it bit for bit (tests/test_train_color_go.py). They run
// per item of a training batch, each with its own steps (binding ColorBatch), so that a converted
// chain's jitter is one GIL-free call per batch instead of NumPy per image.
//
// Every product that feeds an addition is rounded explicitly (float32(a*b) + c): no fused
// multiply-add may change a result on arm64 (scripts/check_fma.sh).

import "math"

// ColorOp is one colour step's kind.
type ColorOp int

// The colour steps (ColorStep.Op); the codes are the binding's (Python's _random_color.GO_OPS).
const (
	ColorNone       ColorOp = iota // no step (a padding slot)
	ColorBrightness                // ImageEnhance.Brightness: blend with black
	ColorContrast                  // ImageEnhance.Contrast: blend with the luma's rounded mean
	ColorSaturation                // ImageEnhance.Color: blend with each pixel's luma
	ColorHue                       // adjust_hue: the HSV hue shifted by int(factor*255) mod 256
	ColorGray                      // convert("L") over every channel (factor unused)
	NumColorOps
)

// ColorStep is one adjustment and its factor (torchvision's adjust_<op> argument).
type ColorStep struct {
	Op     ColorOp
	Factor float64
}

// ColorPIL applies steps in order to img, an h x w image of c channels (1 or 3), contiguous HWC,
// in place. A 1-channel image is left as it is by saturation, hue and grayscale (torchvision returns
// "L" images unchanged there). Factors must be finite (checked: an error names the step).
func ColorPIL(img []uint8, h, w, c int, steps []ColorStep) error {
	img, err := colorImage(img, h, w, c, steps)
	if err != nil || len(img) == 0 {
		return err
	}
	for _, s := range steps {
		switch s.Op {
		case ColorBrightness:
			blendConst(img, 0, float32(s.Factor))
		case ColorContrast:
			blendConst(img, float32(lumaMean(img, c)), float32(s.Factor))
		case ColorSaturation:
			if c == 3 {
				saturatePIL(img, float32(s.Factor))
			}
		case ColorHue:
			if c == 3 {
				huePIL(img, hueShift(s.Factor))
			}
		case ColorGray:
			if c == 3 {
				grayPIL(img)
			}
		}
	}
	return nil
}

// colorImage checks a colour call's image size and steps (finite factors, known ops) and returns
// the image's h*w*c values (empty: nothing to do).
func colorImage[E uint8 | float32](img []E, h, w, c int, steps []ColorStep) ([]E, error) {
	if h < 0 || w < 0 || (c != 1 && c != 3) || len(img) < h*w*c {
		return nil, errf(CodeBadShape, "img", "%d values for a %dx%dx%d image (1 or 3 channels)", len(img), h, w, c)
	}
	for k, s := range steps {
		if math.IsNaN(s.Factor) || math.IsInf(s.Factor, 0) {
			return nil, errf(CodeInvalidArgument, "factors", "step %d: factor %v is not finite", k, s.Factor)
		}
		if s.Op < ColorNone || s.Op >= NumColorOps {
			return nil, errf(CodeInvalidArgument, "ops", "step %d: unknown colour op %d", k, s.Op)
		}
	}
	return img[:h*w*c], nil
}

// blendPIL is Image.blend's pixel (ImagingBlend) for a C-float alpha: in1 + alpha*(in2 - in1) in
// single precision, clipped to [0, 255] when alpha is outside [0, 1] (inside it the value already
// is), truncated toward zero.
func blendPIL(in1, in2, al float32) uint8 {
	return truncU8(in1 + float32(al*(in2-in1)))
}

// truncU8 is a float32's C cast to uint8 after the clip to [0, 255].
func truncU8(t float32) uint8 {
	if t < 0 {
		t = 0
	} else if t > 255 {
		t = 255
	}
	return uint8(int32(t))
}

// blendConst is Image.blend(constant image in1, img, al) in place: a table of the 256 results.
func blendConst(img []uint8, in1, al float32) {
	var lut [256]uint8
	for v := range lut {
		lut[v] = blendPIL(in1, float32(v), al)
	}
	for i, v := range img {
		img[i] = lut[v]
	}
}

// lumaPIL is convert("L")'s ITU-R 601-2 luma of one RGB pixel, Pillow's fixed point.
func lumaPIL(r, g, b uint8) uint8 {
	return uint8((int32(r)*19595 + int32(g)*38470 + int32(b)*7471 + 0x8000) >> 16)
}

// lumaMean is ImageEnhance.Contrast's mean: ImageStat's mean of the "L" image (the one channel of
// a 1-channel image), int(mean + 0.5) in double precision as Python computes it.
func lumaMean(img []uint8, c int) int {
	n := len(img) / c
	return int(float64(graySum(img, c, numericsPIL))/float64(n) + 0.5)
}

// The numerics whose gray image graySum sums.
const (
	numericsPIL = iota
	numericsV1
	numericsV2
)

// graySum is the sum of the gray image a contrast averages: the one channel of a 1-channel image,
// else each pixel's Pillow luma (numericsPIL) or torchvision's truncated one (v1, v2).
func graySum(img []uint8, c, numerics int) int64 {
	var sum int64
	if c == 1 {
		for _, v := range img {
			sum += int64(v)
		}
		return sum
	}
	for i := 0; i+2 < len(img); i += 3 {
		if numerics == numericsPIL {
			sum += int64(lumaPIL(img[i], img[i+1], img[i+2]))
		} else {
			sum += int64(grayTensor(img[i], img[i+1], img[i+2], numerics == numericsV2))
		}
	}
	return sum
}

// saturatePIL is ImageEnhance.Color: each pixel blended with its own luma l. The product
// alpha*(v - l) depends on v - l alone: a table of its 511 values, the same float32 roundings,
// each held to [-512, 512] (l + p clips to the same 0 or 255 as l plus the unheld product), so
// that the sum converts to int32 and is clamped there (trunc and clip commute inside int32).
func saturatePIL(img []uint8, al float32) {
	var prod [511]float32
	for d := range prod {
		prod[d] = min(max(float32(al*float32(d-255)), -512), 512)
	}
	for i := 0; i+2 < len(img); i += 3 {
		l := int(lumaPIL(img[i], img[i+1], img[i+2]))
		lf, p := float32(l), prod[255-l:]
		img[i] = clip255(int32(lf + p[img[i]]))
		img[i+1] = clip255(int32(lf + p[img[i+1]]))
		img[i+2] = clip255(int32(lf + p[img[i+2]]))
	}
}

// grayPIL is convert("L") repeated over the three channels.
func grayPIL(img []uint8) {
	for i := 0; i+2 < len(img); i += 3 {
		l := lumaPIL(img[i], img[i+1], img[i+2])
		img[i], img[i+1], img[i+2] = l, l, l
	}
}

// hueShift is adjust_hue's shift of Pillow's 8-bit hue: int32(factor*255) (truncated) mod 256.
func hueShift(factor float64) uint8 {
	return uint8(((int64(int32(factor*255)) % 256) + 256) % 256)
}

// huePIL is adjust_hue on an RGB image: each pixel to Pillow's HSV, its hue plus shift (wrapping),
// and back.
func huePIL(img []uint8, shift uint8) {
	for i := 0; i+2 < len(img); i += 3 {
		h, s, v := rgbToHSVPIL(img[i], img[i+1], img[i+2])
		img[i], img[i+1], img[i+2] = hsvToRGBPIL(h+shift, s, v)
	}
}

// rgbToHSVPIL is Pillow's convert("HSV") of one pixel (Convert.c's rgb2hsv_row): float ratios, the
// hue's sector sum in double stored as a float, fmod(h/6 + 1, 1), each of H and S times 255
// truncated.
func rgbToHSVPIL(r8, g8, b8 uint8) (uint8, uint8, uint8) {
	r, g, b := int32(r8), int32(g8), int32(b8)
	maxc, minc := max(r, g, b), min(r, g, b)
	if maxc == minc {
		return 0, 0, uint8(maxc)
	}
	cr := float32(maxc - minc)
	s := cr / float32(maxc)
	q := func(c int32) float32 { return float32(maxc-c) / cr } // rc, gc, bc: only the two needed
	var hd float64
	switch {
	case r == maxc:
		hd = float64(q(b) - q(g))
	case g == maxc:
		hd = 2.0 + float64(q(r)) - float64(q(b))
	default:
		hd = 4.0 + float64(q(g)) - float64(q(r))
	}
	// fmod(y, 1) of y = h/6 + 1 in [5/6, 11/6] (h in [-1, 5]): y - 1 from 1 on, exact (Sterbenz)
	y := float64(float32(hd))/6.0 + 1.0
	if y >= 1 {
		y--
	}
	h := float32(y)
	return clip255(int64(float64(h) * 255.0)), clip255(int64(float64(s) * 255.0)), uint8(maxc)
}

// hsvToRGBPIL is Pillow's convert("RGB") of one HSV pixel (Convert.c's hsv2rgb): the sector and its
// float fraction, p, q, t rounded half away from zero, the sector table.
func hsvToRGBPIL(h8, s8, v8 uint8) (uint8, uint8, uint8) {
	if s8 == 0 {
		return v8, v8, v8
	}
	v, f, fs := float64(v8), hueFrac[h8], satFrac[s8]
	p := roundHalfAway(float64(v * (1.0 - float64(fs))))
	q := roundHalfAway(float64(v * (1.0 - float64(float32(fs*f)))))
	t := roundHalfAway(float64(v * (1.0 - float64(float64(fs)*(1.0-float64(f))))))
	return hsvSector(hueSector[h8], v8, p, q, t)
}

// Pillow's hsv2rgb steps that depend on one byte, tabled: the hue's sector (floor(h*6/255) mod 6)
// and its float fraction, the saturation as a float (s/255).
var hueSector, hueFrac, satFrac = hsvTables()

func hsvTables() (sec [256]int, frac, sat [256]float32) {
	for k := range 256 {
		h6 := float64(k) * 6.0 / 255.0
		i := int(h6) // floor: h6 >= 0
		sec[k], frac[k] = i%6, float32(h6-float64(i))
		sat[k] = float32(float64(k) / 255.0)
	}
	return sec, frac, sat
}

// hsvSector is HSV's sector table: sector i gives R, G, B among v, p, q, t.
func hsvSector(i int, v, p, q, t uint8) (uint8, uint8, uint8) {
	switch i {
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	}
	return v, p, q
}

// roundHalfAway is C's round of a non-negative double, clipped to [0, 255].
func roundHalfAway(x float64) uint8 {
	f := int64(x) // floor: x >= 0
	if x-float64(f) >= 0.5 {
		f++
	}
	return clip255(f)
}

// clip255 is v held to [0, 255], without branches (random pixels would mispredict them).
func clip255[T int32 | int64](v T) uint8 { return uint8(min(max(v, 0), 255)) }
