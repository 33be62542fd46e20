package engine

import (
	"math/rand/v2"
	"testing"
)

// One-pixel and small-image cases of ColorPIL with results worked out by hand from Pillow's
// formulas; tests/test_train_color_go.py compares it with the NumPy reference (equal to Pillow)
// bit for bit on random images, factors and orders.
func TestColorPILBlends(t *testing.T) {
	cases := []struct {
		name string
		px   []uint8
		c    int
		step ColorStep
		want []uint8
	}{
		{"brightness 1.5", []uint8{100, 200, 0}, 3, ColorStep{ColorBrightness, 1.5}, []uint8{150, 255, 0}},
		{"brightness 0.5 truncates", []uint8{101, 3, 255}, 3, ColorStep{ColorBrightness, 0.5}, []uint8{50, 1, 127}},
		{"brightness 0", []uint8{101, 3, 255}, 3, ColorStep{ColorBrightness, 0}, []uint8{0, 0, 0}},
		// luma of (255, 0, 0) is (255*19595 + 0x8000) >> 16 = 76; of (0, 0, 0) 0: mean (76 + 0)/2 + 0.5 -> 38
		{"contrast 0", []uint8{255, 0, 0, 0, 0, 0}, 3, ColorStep{ColorContrast, 0}, []uint8{38, 38, 38, 38, 38, 38}},
		// 38 + 2*(255-38) = 472 -> 255; 38 + 2*(0-38) = -38 -> 0
		{"contrast 2 clips", []uint8{255, 0, 0, 0, 0, 0}, 3, ColorStep{ColorContrast, 2}, []uint8{255, 0, 0, 0, 0, 0}},
		{"contrast gray image", []uint8{10, 20}, 1, ColorStep{ColorContrast, 0.5}, []uint8{12, 17}}, // mean int(15 + 0.5) = 15
		{"saturation 0", []uint8{255, 0, 0}, 3, ColorStep{ColorSaturation, 0}, []uint8{76, 76, 76}},
		// 76 + 0.5*(255-76) = 165.5 -> 165; 76 + 0.5*(0-76) = 38
		{"saturation 0.5", []uint8{255, 0, 0}, 3, ColorStep{ColorSaturation, 0.5}, []uint8{165, 38, 38}},
		{"saturation on gray image", []uint8{10, 20}, 1, ColorStep{ColorSaturation, 0}, []uint8{10, 20}},
		{"grayscale", []uint8{0, 255, 0}, 3, ColorStep{ColorGray, 0}, []uint8{150, 150, 150}},
		// red is hue 0; +1/3 of the circle (int(1/3*255) = 85) is Pillow's pure green
		{"hue red to green", []uint8{255, 0, 0}, 3, ColorStep{ColorHue, 1.0 / 3}, []uint8{0, 255, 0}},
		{"hue gray pixel", []uint8{90, 90, 90}, 3, ColorStep{ColorHue, 0.25}, []uint8{90, 90, 90}},
	}
	for _, tc := range cases {
		img := append([]uint8(nil), tc.px...)
		if err := ColorPIL(img, 1, len(img)/tc.c, tc.c, []ColorStep{tc.step}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range img {
			if img[i] != tc.want[i] {
				t.Errorf("%s: got %v, want %v", tc.name, img, tc.want)
				break
			}
		}
	}
}

// Pillow's HSV of the primaries and back: hue 0, 85, 170 at full saturation and value.
func TestColorHSVPrimaries(t *testing.T) {
	for _, tc := range []struct{ r, g, b, h uint8 }{{255, 0, 0, 0}, {0, 255, 0, 85}, {0, 0, 255, 170}} {
		h, s, v := rgbToHSVPIL(tc.r, tc.g, tc.b)
		if h != tc.h || s != 255 || v != 255 {
			t.Errorf("hsv(%d,%d,%d) = %d,%d,%d, want %d,255,255", tc.r, tc.g, tc.b, h, s, v, tc.h)
		}
		r, g, b := hsvToRGBPIL(h, s, v)
		if r != tc.r || g != tc.g || b != tc.b {
			t.Errorf("rgb(hsv(%d,%d,%d)) = %d,%d,%d", tc.r, tc.g, tc.b, r, g, b)
		}
	}
	if hueShift(-0.5) != 129 || hueShift(0.5) != 127 || hueShift(-0.001) != 0 {
		t.Errorf("hueShift: %d %d %d", hueShift(-0.5), hueShift(0.5), hueShift(-0.001))
	}
}

// Steps run in the order given: brightness then grayscale differs from grayscale then brightness
// only by truncation, and each equals running the steps one call at a time.
func TestColorPILOrderAndComposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h, w := 7, 9
	src := make([]uint8, h*w*3)
	for i := range src {
		src[i] = uint8(rng.IntN(256))
	}
	steps := []ColorStep{{ColorHue, -0.21}, {ColorContrast, 1.37}, {ColorNone, 5}, {ColorSaturation, 0.61},
		{ColorBrightness, 1.13}, {ColorGray, 0}}
	all := append([]uint8(nil), src...)
	if err := ColorPIL(all, h, w, 3, steps); err != nil {
		t.Fatal(err)
	}
	one := append([]uint8(nil), src...)
	for _, s := range steps {
		if err := ColorPIL(one, h, w, 3, []ColorStep{s}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range all {
		if all[i] != one[i] {
			t.Fatalf("byte %d: all steps %d, one by one %d", i, all[i], one[i])
		}
	}
	for i := 0; i < len(all); i += 3 {
		if all[i] != all[i+1] || all[i] != all[i+2] {
			t.Fatalf("pixel %d not gray after the last step: %v", i/3, all[i:i+3])
		}
	}
}

func TestColorPILErrors(t *testing.T) {
	img := make([]uint8, 12)
	for _, tc := range []struct {
		name    string
		h, w, c int
		steps   []ColorStep
		code    Code
	}{
		{"short buffer", 2, 3, 3, nil, CodeBadShape},
		{"4 channels", 1, 3, 4, nil, CodeBadShape},
		{"nan factor", 2, 2, 3, []ColorStep{{ColorBrightness, nan()}}, CodeInvalidArgument},
		{"unknown op", 2, 2, 3, []ColorStep{{NumColorOps, 1}}, CodeInvalidArgument},
	} {
		err := ColorPIL(img, tc.h, tc.w, tc.c, tc.steps)
		e, ok := err.(*Error)
		if !ok || e.Code != tc.code {
			t.Errorf("%s: got %v, want code %s", tc.name, err, tc.code)
		}
	}
	if err := ColorPIL(nil, 0, 5, 3, []ColorStep{{ColorContrast, 2}}); err != nil {
		t.Errorf("empty image: %v", err)
	}
}

func nan() float64 {
	z := 0.0
	return z / z
}

// torchvision's tensor numerics on uint8 pixels, worked by hand: v1's luma 0.587*255 = 149.685
// truncated; v2's brightness x*f truncated (hue: color_float_test.go).
func TestColorTensorValues(t *testing.T) {
	for _, tc := range []struct {
		v2   bool
		px   []uint8
		step ColorStep
		want []uint8
	}{
		{false, []uint8{0, 255, 0}, ColorStep{ColorGray, 0}, []uint8{149, 149, 149}},
		{true, []uint8{0, 255, 0}, ColorStep{ColorGray, 0}, []uint8{149, 149, 149}},
		{true, []uint8{100, 201, 255}, ColorStep{ColorBrightness, 1.5}, []uint8{150, 255, 255}},
		{false, []uint8{100, 201, 3}, ColorStep{ColorBrightness, 0.5}, []uint8{50, 100, 1}},
		// gray 149, blended at 0: the gray itself; at 1: the pixel
		{false, []uint8{0, 255, 0}, ColorStep{ColorSaturation, 0}, []uint8{149, 149, 149}},
		{true, []uint8{0, 255, 0}, ColorStep{ColorSaturation, 1}, []uint8{0, 255, 0}},
	} {
		img := append([]uint8(nil), tc.px...)
		if err := ColorTensor(img, 1, 1, 3, tc.v2, []ColorStep{tc.step}); err != nil {
			t.Fatal(err)
		}
		for i := range img {
			if img[i] != tc.want[i] {
				t.Errorf("v2 %v %v: got %v, want %v", tc.v2, tc.step, img, tc.want)
				break
			}
		}
	}
}
