package engine

// torchvision's hue adjustment on tensors: each pixel through its float32 HSV and back, v1's
// (_functional_tensor: _rgb2hsv, (h + factor) % 1.0, _hsv2rgb) and v2's (v2.functional._color:
// _rgb_to_hsv, h.add_(factor).remainder_(1.0), _hsv_to_rgb). The reference is _color_kernels.py's
// "v1" and "v2" _hue, which computes the same float32 operations in the same order (equal bit for
// bit: tests/test_train_color_go.py; against torchvision equal, uint8 and float32, on all 2**24
// colours).
//
// Every operation is float32 and rounded as PyTorch rounds it: each product that feeds an addition
// is converted explicitly (float32(a*b)), so that no fused multiply-add changes a result
// (scripts/check_fma.sh).

import "math"

// rgbToHSVTensor is torchvision's _rgb2hsv of one pixel (float32 channels): h in [0, 1) (fmod of
// h/6 + 1, v1 dividing by 6, v2 multiplying by float32(1/6)), s = (max - min)/max, v = max. Of the
// three masked hue sums only the one whose mask is 1 is computed: the others are finite times 0,
// zeros that change no sum (and a zero h is 0 after the fmod either way); a pixel with a NaN or an
// infinite range takes the literal masked sum (rgbToHSVMasked), where a NaN spreads as there.
func rgbToHSVTensor(r, g, b float32, v2 bool) (h, s, v float32) {
	maxc, minc := max(r, g, b), min(r, g, b) // a NaN wins, as in torch.max and NumPy
	cr := maxc - minc
	if cr-cr != 0 {
		return rgbToHSVMasked(r, g, b, v2)
	}
	sd, crd := maxc, cr
	if maxc == minc {
		sd, crd = 1, 1
	}
	s = cr / sd
	switch {
	case maxc == r:
		h = (maxc-b)/crd - (maxc-g)/crd
	case maxc == g:
		h = (2 + (maxc-r)/crd) - (maxc-b)/crd
	default:
		h = (4 + (maxc-g)/crd) - (maxc-r)/crd
	}
	return hueSixth(h, v2), s, maxc
}

// rgbToHSVMasked is rgbToHSVTensor term for term as _rgb2hsv writes it: the three hue sums, each
// times its mask as a 0/1 float, added.
func rgbToHSVMasked(r, g, b float32, v2 bool) (h, s, v float32) {
	maxc, minc := max(r, g, b), min(r, g, b)
	cr := maxc - minc
	sd, crd := maxc, cr
	if maxc == minc {
		sd, crd = 1, 1
	}
	s = cr / sd
	rc, gc, bc := (maxc-r)/crd, (maxc-g)/crd, (maxc-b)/crd
	hr := float32((bc - gc) * mask(maxc == r))
	hg := float32(((2 + rc) - bc) * mask(maxc == g && maxc != r))
	hb := float32(((4 + gc) - rc) * mask(maxc != g && maxc != r))
	return hueSixth((hr+hg)+hb, v2), s, maxc
}

// hueSixth is fmod(h/6 + 1, 1): v1 divides by 6, v2 multiplies by float32(1/6).
func hueSixth(h float32, v2 bool) float32 {
	if v2 {
		h = float32(h * float32(1.0/6.0))
	} else {
		h = h / 6
	}
	return fmod1(h + 1)
}

// hsvToRGBTensor is torchvision's _hsv2rgb of one pixel: the sector floor(h*6) mod 6, its fraction
// f, p, q, t (v1: v*(1 - s), v*(1 - s*f), v*(1 - s*(1 - f)); v2: (1 - s)*v, (1 - s*f)*v,
// (s*f + (1 - s))*v), each clamped to [0, 1] (a NaN kept), picked by the sector table.
func hsvToRGBTensor(h, s, v float32, v2 bool) (float32, float32, float32) {
	h6 := float32(h * 6)
	i := float32(math.Floor(float64(h6)))
	f := h6 - i
	var p, q, t float32
	if v2 {
		sxf, oms := float32(s*f), 1-s
		p, q, t = float32(oms*v), float32((1-sxf)*v), float32((sxf+oms)*v)
	} else {
		p, q, t = float32(v*(1-s)), float32(v*(1-float32(s*f))), float32(v*(1-float32(s*(1-f))))
	}
	p, q, t = clamp01(p), clamp01(q), clamp01(t)
	k := int32(i) % 6 // NumPy's astype(int32) % 6: the floor modulo (an out-of-range float stays in 0..5)
	if k < 0 {
		k += 6
	}
	vpqt, pick := [4]float32{v, p, q, t}, &sectorPick[k]
	return vpqt[pick[0]], vpqt[pick[1]], vpqt[pick[2]]
}

// sectorPick is HSV's sector table (hsvSector) as indices into (v, p, q, t): a lookup, not a
// branch, since neighbouring pixels' sectors do not follow a pattern the CPU predicts.
var sectorPick = [6][3]uint8{{0, 3, 1}, {2, 0, 1}, {1, 0, 3}, {1, 2, 0}, {3, 1, 0}, {0, 1, 2}}

// hueTensor is adjust_hue's float32 round trip of one pixel: HSV, (h + factor) mod 1 (factor the
// float32 hue shift), RGB.
func hueTensor(r, g, b, factor float32, v2 bool) (float32, float32, float32) {
	h, s, v := rgbToHSVTensor(r, g, b, v2)
	return hsvToRGBTensor(mod1(h+factor), s, v, v2)
}

// hueTensorU8 is adjust_hue on an RGB uint8 image in place: each byte to float32 (v1 x/255, v2
// x*float32(1/255), a table), the round trip, back to uint8 as convert_image_dtype does it
// (x*255.999 truncated).
func hueTensorU8(img []uint8, factor float64, v2 bool) {
	tab := &unitV1
	if v2 {
		tab = &unitV2
	}
	f := float32(factor)
	for i := 0; i+2 < len(img); i += 3 {
		r, g, b := hueTensor(tab[img[i]], tab[img[i+1]], tab[img[i+2]], f, v2)
		img[i], img[i+1], img[i+2] = toU8Tensor(r), toU8Tensor(g), toU8Tensor(b)
	}
}

// toU8Tensor is convert_image_dtype's float32 in [0, 1] to uint8: x*255.999 truncated.
func toU8Tensor(x float32) uint8 { return uint8(int32(float32(x * 255.999))) }

// unitV1, unitV2: each byte as torchvision's float image holds it (v1 x/255, v2 x*float32(1/255)).
var unitV1, unitV2 = unitTables()

func unitTables() (v1, v2 [256]float32) {
	for k := range 256 {
		v1[k], v2[k] = float32(k)/255, float32(float32(k)*float32(1.0/255))
	}
	return v1, v2
}

// mask is a comparison as PyTorch multiplies it: 1 or 0.
func mask(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// fmod1 is fmod(x, 1) in float32 (exact): x itself on [0, 1), x - 1 on [1, 2) (Sterbenz).
func fmod1(x float32) float32 {
	switch {
	case x >= 0 && x < 1:
		return x
	case x >= 1 && x < 2:
		return x - 1
	}
	return float32(math.Mod(float64(x), 1))
}

// mod1 is the float32 remainder of x by 1 (NumPy's np.mod, PyTorch's remainder): fmod, plus 1 when
// negative (that sum rounded to float32), a zero as +0.
func mod1(x float32) float32 {
	m := fmod1(x)
	if m < 0 {
		return m + 1
	}
	if m == 0 {
		return 0
	}
	return m
}

// clamp01 is torch.clamp(x, 0, 1) (np.clip): a NaN stays NaN.
func clamp01(x float32) float32 {
	if x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}
